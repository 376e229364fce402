/* SPDX-License-Identifier: MIT
 * spans.c: interval unions for recommend's passes (see scan.h): runs merged as they
 * arrive in start order, runs kept with their prefix of covered time, and the text
 * precision of DuckDB's DOUBLE cells. */
#include "common/compat.h"
#include "analysis/scan.h"
#include "common/xalloc.h"

#include <stdio.h>
#include <stdlib.h>

bool nx__rec_union_add(struct nx_rec_union *u, int64_t s, int64_t e, int64_t *rs, int64_t *re)
{
	bool closed = false;

	if (u->open && s > u->e) {
		*rs = u->s;
		*re = u->e;
		u->total += u->e - u->s;
		u->open = false;
		closed = true;
	}
	if (!u->open) {
		u->open = true;
		u->s = s;
		u->e = e;
	} else if (e > u->e) {
		u->e = e;
	}
	return closed;
}

bool nx__rec_union_end(struct nx_rec_union *u, int64_t *rs, int64_t *re)
{
	if (!u->open)
		return false;
	*rs = u->s;
	*re = u->e;
	u->total += u->e - u->s;
	u->open = false;
	return true;
}

void nx__rec_stretches_add(struct nx_rec_stretches *st, int64_t s, int64_t e)
{
	if (st->n == st->cap) {
		st->cap = st->cap ? st->cap * 2 : 256;
		st->s = nx_xrealloc(st->s, st->cap * sizeof(*st->s));
		st->e = nx_xrealloc(st->e, st->cap * sizeof(*st->e));
		st->before = nx_xrealloc(st->before, st->cap * sizeof(*st->before));
	}
	st->before[st->n] = st->n ? st->before[st->n - 1] + (st->e[st->n - 1] - st->s[st->n - 1])
				  : 0;
	st->s[st->n] = s;
	st->e[st->n] = e;
	st->n++;
}

/* The covered time before t. */
static int64_t covered_before(const struct nx_rec_stretches *st, int64_t t)
{
	size_t lo = 0, hi = st->n;

	/* the last run starting before t */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (st->s[mid] < t)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo)
		return 0;
	lo--;
	return st->before[lo] + ((t < st->e[lo] ? t : st->e[lo]) - st->s[lo]);
}

int64_t nx__rec_stretches_cover(const struct nx_rec_stretches *st, int64_t a, int64_t b)
{
	return covered_before(st, b) - covered_before(st, a);
}

void nx__rec_stretches_release(struct nx_rec_stretches *st)
{
	free(st->s);
	free(st->e);
	free(st->before);
	st->s = st->e = st->before = NULL;
	st->n = st->cap = 0;
}

double nx__rec_as_cell(double v)
{
	char buf[64];

	if (v != v)
		return v;
	snprintf(buf, sizeof(buf), "%.9g", v);
	return strtod(buf, NULL);
}
