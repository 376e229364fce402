/* SPDX-License-Identifier: MIT
 * num.h: exact conversions of JSON number lexemes. Chrome traces give times in
 * microseconds as decimal text ("1212075548353.304"); converting that text digit by
 * digit gives exact nanoseconds where a double would round above 2^53 ns. */
#ifndef NX_TRACE_NUM_H
#define NX_TRACE_NUM_H

#include "common/compat.h"

/* True when s is an integer lexeme (no fraction, no exponent) that fits int64. */
bool nx_num_i64(const char *s, int64_t *out);
/* Converts a decimal number of microseconds to nanoseconds, rounding half away from
 * zero below 1 ns. *exact tells whether no digit was dropped. False when s is not a
 * number or the result does not fit int64. Leading/trailing blanks are not allowed. */
bool nx_num_us_to_ns(const char *s, int64_t *ns, bool *exact);

#endif
