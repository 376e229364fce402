/* SPDX-License-Identifier: MIT
 * env_num.c: a whole number read from an environment variable (env_num.h). */
#include "common/compat.h"
#include "common/env_num.h"
#include "common/log.h"

#include <errno.h>
#include <stdlib.h>

int nx_env_whole(const char *name, long long max, const char *unit, long long *out,
		 struct nx_err *err)
{
	const char *v = getenv(name);
	char *end = NULL;
	long long n;

	if (!v || !*v)
		return 0;
	errno = 0;
	n = strtoll(v, &end, 10);
	if (errno || *end || n < 0 || n > max)
		return nx_errf(err, NX_EUSAGE, "%s is '%.40s'; give a whole number of %s from 0 "
			       "to %lld", name, v, unit, max);
	*out = n;
	return 0;
}

long long nx_env_whole_or(const char *name, long long max, const char *unit, long long dflt)
{
	struct nx_err err = { 0 };
	long long n = dflt;

	if (nx_env_whole(name, max, unit, &n, &err)) {
		nx_log(NX_LOG_WARN, "%s; using %lld", err.msg, dflt);
		n = dflt;
	}
	return n;
}
