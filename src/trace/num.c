/* SPDX-License-Identifier: MIT
 * num.c: exact number-lexeme conversions (see num.h). */
#include "common/compat.h"
#include "trace/num.h"

#include <stdlib.h>
#include <string.h>

bool nx_num_i64(const char *s, int64_t *out)
{
	bool neg = *s == '-';
	uint64_t v = 0, lim;

	if (neg)
		s++;
	if (!*s)
		return false;
	lim = neg ? (uint64_t)INT64_MAX + 1 : (uint64_t)INT64_MAX;
	for (; *s; s++) {
		if (*s < '0' || *s > '9')
			return false;
		unsigned d = (unsigned)(*s - '0');
		if (v > (lim - d) / 10)
			return false;
		v = v * 10 + d;
	}
	*out = neg ? (int64_t)(0 - v) : (int64_t)v;
	return true;
}

/* The common lexeme, [-]d...d[.ddd] with at most 16 integer digits (a microsecond
 * epoch time has 16) and 3 fraction digits: read straight into nanoseconds, exact (19
 * digits fit uint64). False for anything else, and for a value past INT64_MAX, which
 * the general path below decides. */
static bool us_to_ns_short(const char *s, int64_t *ns)
{
	bool neg = *s == '-';
	uint64_t v = 0;
	int n = 0, f = 0;

	if (neg)
		s++;
	for (; *s >= '0' && *s <= '9'; s++) {
		if (++n > 16)
			return false;
		v = v * 10 + (uint64_t)(*s - '0');
	}
	if (!n)
		return false;
	if (*s == '.')
		for (s++; *s >= '0' && *s <= '9'; s++) {
			if (++f > 3)
				return false;
			v = v * 10 + (uint64_t)(*s - '0');
		}
	if (*s)
		return false;
	for (; f < 3; f++)
		v *= 10;
	if (v > (uint64_t)INT64_MAX)
		return false;
	*ns = neg ? -(int64_t)v : (int64_t)v;
	return true;
}

bool nx_num_us_to_ns(const char *s, int64_t *ns, bool *exact)
{
	char digits[64];
	size_t nd = 0;
	long point, exp10 = 0;
	bool neg = *s == '-', seen = false, lost = false;

	if (us_to_ns_short(s, ns)) {
		*exact = true;
		return true;
	}
	if (neg)
		s++;
	/* Collect the significant digits and where the decimal point falls. */
	for (; *s >= '0' && *s <= '9'; s++, seen = true)
		if (nd || *s != '0') {
			if (nd >= sizeof(digits) - 1)
				return false;
			digits[nd++] = *s;
		}
	point = (long)nd;
	if (*s == '.') {
		s++;
		for (; *s >= '0' && *s <= '9'; s++, seen = true) {
			if (!nd && *s == '0') {
				point--;
				continue;
			}
			if (nd >= sizeof(digits) - 1) {
				if (*s != '0')
					lost = true; /* beyond any useful precision */
				continue;
			}
			digits[nd++] = *s;
		}
	}
	if (!seen)
		return false;
	if (*s == 'e' || *s == 'E') {
		char *end;
		exp10 = strtol(s + 1, &end, 10);
		if (end == s + 1 || *end || exp10 > 100 || exp10 < -100)
			return false;
		s = end;
	}
	if (*s)
		return false;
	/* The value is 0.digits * 10^(point + exp10) us = ... * 10^(point + exp10 + 3) ns. */
	long ip = point + exp10 + 3; /* digits before the nanosecond point */
	uint64_t v = 0;
	*exact = !lost;
	if (ip > 19)
		return false;
	for (long i = 0; i < ip; i++) {
		unsigned d = i < (long)nd ? (unsigned)(digits[i] - '0') : 0;
		if (v > (UINT64_MAX - d) / 10)
			return false;
		v = v * 10 + d;
	}
	long first_dropped = ip < 0 ? 0 : ip;
	if (first_dropped < (long)nd) {
		*exact = false;
		if (ip >= 0 && digits[ip] >= '5')
			v++;
	}
	if (v > (uint64_t)INT64_MAX)
		return false;
	*ns = neg ? -(int64_t)v : (int64_t)v;
	return true;
}
