/* SPDX-License-Identifier: MIT
 * onchip_usage.c: SbufUsage / PsumUsage from prefix sums of occupancy events on the
 * bucket grid (see onchip_usage.h). */
#include "common/compat.h"
#include "ingest/onchip_usage.h"
#include "common/xalloc.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const unsigned nunits[NX_USAGE_NMEM] = { 4, 8 };

void nx_onchip_usage_init(struct nx_onchip_usage *u, int64_t first_ns, int64_t last_ns,
			  int64_t pcore)
{
	memset(u, 0, sizeof(*u));
	/* as in the SQL grid: greatest(100, ceil((last - first + 1) / 2000.0)) */
	double w = ceil((double)(last_ns - first_ns + 1) / 2000.0);
	u->w = w > 100 ? (int64_t)w : 100;
	u->first = first_ns;
	/* edges k = 0 .. (last - first) / w + 1: one bucket per edge but the last */
	u->nedges = (size_t)((last_ns - first_ns) / u->w + 2);
	u->pcore = pcore;
	for (int m = 0; m < NX_USAGE_NMEM; m++)
		for (unsigned k = 0; k < nunits[m]; k++) {
			u->dsum[m][k] = nx_xcalloc(u->nedges, sizeof(__int128));
			u->msum[m][k] = nx_xcalloc(u->nedges, sizeof(__int128));
		}
}

/* Adds delta at ts to the first edge after ts (edges at or before ts see it as 0). */
static void event(struct nx_onchip_usage *u, int m, unsigned k, int64_t ts, int64_t delta)
{
	size_t j = ts < u->first ? 0 : (size_t)((ts - u->first) / u->w) + 1;

	if (j >= u->nedges)
		return;
	u->dsum[m][k][j] += delta;
	u->msum[m][k][j] += (__int128)delta * ts;
}

void nx_onchip_usage_add(struct nx_onchip_usage *u, int mem, unsigned unit, int64_t start,
			 int64_t end, int64_t bytes, int64_t capacity)
{
	if (mem < 0 || mem >= NX_USAGE_NMEM)
		return;
	u->seen[mem] = true;
	if (capacity > u->capacity[mem])
		u->capacity[mem] = capacity;
	unsigned k = mem == NX_USAGE_SBUF ? unit / 32 : unit;
	if (end <= start || (mem == NX_USAGE_SBUF && unit % 32) || k >= nunits[mem])
		return;
	event(u, mem, k, start, bytes);
	event(u, mem, k, end, -bytes);
}

struct usage_src {
	struct nx_onchip_usage *u;
	struct nx_colmap map;
	int mem;
	size_t k;
	__int128 d[NX_USAGE_UNITS], m[NX_USAGE_UNITS]; /* prefix sums up to edge k */
	__int128 area[NX_USAGE_UNITS];                 /* A(edge k) */
};

/* Advances the prefix sums to edge k and returns A at it for every unit. */
static void advance(struct usage_src *s, size_t k)
{
	const struct nx_onchip_usage *u = s->u;
	__int128 t = (__int128)u->first + (__int128)k * u->w;

	for (unsigned x = 0; x < nunits[s->mem]; x++) {
		s->d[x] += u->dsum[s->mem][x][k];
		s->m[x] += u->msum[s->mem][x][k];
		s->area[x] = t * s->d[x] - s->m[x];
	}
}

static int usage_next(void *self, struct nx_rowbuf *b, struct nx_err *err)
{
	struct usage_src *s = self;
	const struct nx_onchip_usage *u = s->u;
	size_t cap = nx_rowbuf_capacity(b), row = 0;
	unsigned n = nunits[s->mem];
	double denom = (double)(u->w * u->capacity[s->mem]);

	(void)err;
	if (s->k == 0 && u->nedges)
		advance(s, 0);
	for (; s->k + 1 < u->nedges && row < cap; row++) {
		__int128 prev[NX_USAGE_UNITS];
		double sum = 0;

		memcpy(prev, s->area, sizeof(prev));
		advance(s, s->k + 1);
		nx_rowbuf_i64(b, s->map.idx[0], row, u->first + (int64_t)s->k * u->w);
		for (unsigned x = 0; x < n; x++) {
			double f = (double)(s->area[x] - prev[x]) / denom;
			sum += f;
			nx_rowbuf_f32(b, s->map.idx[2 + x], row, (float)f);
		}
		nx_rowbuf_f32(b, s->map.idx[1], row, (float)(sum / n));
		nx_rowbuf_i64(b, s->map.idx[2 + n], row, u->pcore);
		s->k++;
	}
	return (int)row;
}

int nx_onchip_usage_write(struct nx_onchip_usage *u, struct nx_duck *d, const char *dir,
			  uint64_t rows[NX_USAGE_NMEM], struct nx_err *err)
{
	static const char *const sbuf_names[] = { "timestamp", "avg_util_percent",
		"partition_0_util_percent", "partition_32_util_percent",
		"partition_64_util_percent", "partition_96_util_percent", "pcore_idx", NULL };
	static const char *const psum_names[] = { "timestamp", "avg_util_percent",
		"bank_0_util_percent", "bank_1_util_percent", "bank_2_util_percent",
		"bank_3_util_percent", "bank_4_util_percent", "bank_5_util_percent",
		"bank_6_util_percent", "bank_7_util_percent", "pcore_idx", NULL };
	static const char *const tables[] = { "SbufUsage", "PsumUsage" };

	for (int m = 0; m < NX_USAGE_NMEM; m++) {
		struct usage_src s = { .u = u, .mem = m };
		struct nx_row_source src;
		int rc;

		rows[m] = 0;
		if (!u->seen[m] || u->capacity[m] <= 0)
			continue; /* no rows of this memory: no table, like the SQL's NULL capacity */
		if ((rc = nx_colmap_init(&s.map, tables[m], m ? psum_names : sbuf_names, err)))
			return rc;
		src = (struct nx_row_source){ .table = s.map.table, .self = &s, .next = usage_next };
		char *path = nx_xasprintf("%s/%s.parquet", dir, tables[m]);
		rc = nx_duck_write_source(d, &src, path, &rows[m], err);
		if (!rc && rows[m] == 0)
			remove(path);
		free(path);
		if (rc)
			return rc;
	}
	return 0;
}

void nx_onchip_usage_release(struct nx_onchip_usage *u)
{
	for (int m = 0; m < NX_USAGE_NMEM; m++)
		for (unsigned k = 0; k < NX_USAGE_UNITS; k++) {
			free(u->dsum[m][k]);
			free(u->msum[m][k]);
		}
	memset(u, 0, sizeof(*u));
}
