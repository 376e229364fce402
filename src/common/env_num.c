/* SPDX-License-Identifier: MIT
 * env_num.c: a whole number or a memory size read from an environment variable
 * (env_num.h). */
#include "common/compat.h"
#include "common/env_num.h"
#include "common/log.h"

#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

int nx_env_whole(const char *name, long long max, const char *unit, long long *out,
		 struct nx_err *err)
{
	return nx_env_range(name, 0, max, unit, out, err);
}

int nx_env_range(const char *name, long long min, long long max, const char *unit,
		 long long *out, struct nx_err *err)
{
	const char *v = getenv(name);
	char *end = NULL;
	long long n;

	if (!v || !*v)
		return 0;
	errno = 0;
	n = strtoll(v, &end, 10);
	if (errno || *end || end == v || *v == '+' || isspace((unsigned char)*v) || n < min ||
	    n > max)
		return nx_errf(err, NX_EUSAGE, "%s is '%.40s'; give a whole number of %s from "
			       "%lld to %lld", name, v, unit, min, max);
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

bool nx_size_text_ok(const char *s)
{
	static const char *const units[] = { "B", "KB", "MB", "GB", "TB", "KiB", "MiB", "GiB",
					     "TiB" };
	const char *p = s;
	bool nonzero = false;

	if (!s || strlen(s) > NX_SIZE_TEXT_MAX || !isdigit((unsigned char)*p))
		return false;
	for (; isdigit((unsigned char)*p); p++)
		nonzero |= *p != '0';
	if (p - s > 12) /* past any memory */
		return false;
	if (*p == '.') {
		if (!isdigit((unsigned char)*++p))
			return false;
		for (; isdigit((unsigned char)*p); p++)
			nonzero |= *p != '0';
	}
	while (*p == ' ')
		p++;
	for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++)
		if (!strcasecmp(p, units[i]))
			return nonzero;
	return false;
}

int nx_env_size(const char *name, const char **out, struct nx_err *err)
{
	const char *v = getenv(name);

	if (!v || !*v)
		return 0;
	if (!nx_size_text_ok(v))
		return nx_errf(err, NX_EUSAGE, "%s is '%.40s'; give a size such as 160MB or "
			       "1.5GiB (a number and B, KB, MB, GB, TB, KiB, MiB, GiB or TiB)",
			       name, v);
	*out = v;
	return 0;
}

const char *nx_env_size_or(const char *name, const char *dflt)
{
	struct nx_err err = { 0 };
	const char *v = dflt;

	if (nx_env_size(name, &v, &err)) {
		nx_log(NX_LOG_WARN, "%s; using %s", err.msg, dflt);
		v = dflt;
	}
	return v;
}
