/* SPDX-License-Identifier: MIT
 * env_num.h: a whole number read from an environment variable, with a usage error that
 * names the variable and what it counts. */
#ifndef NX_COMMON_ENV_NUM_H
#define NX_COMMON_ENV_NUM_H

#include "common/err.h"

/* Stores the variable name's value, from 0 to max, in *out (left as it is when the
 * variable is unset or empty); otherwise an NX_EUSAGE error naming the variable and the
 * value, saying what it counts (unit). */
int nx_env_whole(const char *name, long long max, const char *unit, long long *out,
		 struct nx_err *err);
/* nx_env_whole for a setting whose reader has no error to return (a test's knob deep in
 * a stage): the value, or dflt when the variable is unset, empty or bad; a bad value is
 * logged as a warning with nx_env_whole's message, naming the variable. */
long long nx_env_whole_or(const char *name, long long max, const char *unit, long long dflt);

#endif
