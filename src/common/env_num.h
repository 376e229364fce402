/* SPDX-License-Identifier: MIT
 * env_num.h: a whole number or a memory size read from an environment variable, with a
 * usage error that names the variable and what it counts. */
#ifndef NX_COMMON_ENV_NUM_H
#define NX_COMMON_ENV_NUM_H

#include "common/err.h"

#include <stdbool.h>

/* Stores the variable name's value, from 0 to max, in *out (left as it is when the
 * variable is unset or empty); otherwise an NX_EUSAGE error naming the variable and the
 * value, saying what it counts (unit). */
int nx_env_whole(const char *name, long long max, const char *unit, long long *out,
		 struct nx_err *err);
/* nx_env_whole for the range min..max. */
int nx_env_range(const char *name, long long min, long long max, const char *unit,
		 long long *out, struct nx_err *err);
/* nx_env_whole for a setting whose reader has no error to return (a test's knob deep in
 * a stage): the value, or dflt when the variable is unset, empty or bad; a bad value is
 * logged as a warning with nx_env_whole's message, naming the variable. */
long long nx_env_whole_or(const char *name, long long max, const char *unit, long long dflt);

/* The longest size text taken ("160MB", "1.5 GiB"). */
#define NX_SIZE_TEXT_MAX 31
/* Whether s is a memory size as DuckDB's memory_limit takes it: a number above zero
 * (digits, an optional fraction), optional spaces, and a unit (B, KB, MB, GB, TB, KiB,
 * MiB, GiB, TiB, any case), at most NX_SIZE_TEXT_MAX characters. */
bool nx_size_text_ok(const char *s);
/* Points *out at the variable name's value when it is such a size (left as it is when
 * the variable is unset or empty); otherwise an NX_EUSAGE error naming the variable and
 * the value. */
int nx_env_size(const char *name, const char **out, struct nx_err *err);
/* nx_env_size for a reader with no error to return: the value, or dflt when the variable
 * is unset, empty or not a size (then with a warning naming the variable). */
const char *nx_env_size_or(const char *name, const char *dflt);

#endif
