/* SPDX-License-Identifier: MIT
 * dma_usage.c: DmaUsage and HbmUsage from per-bucket byte counts (see dma_usage.h). */
#include "common/compat.h"
#include "ingest/dma_usage.h"
#include "common/xalloc.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void nx_dma_usage_init(struct nx_dma_usage *u, int64_t first_ns, int64_t last_ns, int64_t pcore)
{
	double w = ceil((double)(last_ns - first_ns + 1) / 2000.0);

	memset(u, 0, sizeof(*u));
	u->w = w > 100 ? (int64_t)w : 100;
	u->first = first_ns;
	u->n = (size_t)((last_ns - first_ns) / u->w + 1);
	for (int i = 0; i < NX_USAGE_N; i++)
		u->bytes[i] = nx_xcalloc(u->n, sizeof(*u->bytes[i]));
	u->pcore = pcore;
}

void nx_dma_usage_clear(struct nx_dma_usage *u)
{
	for (int i = 0; i < NX_USAGE_N; i++) {
		memset(u->bytes[i], 0, u->n * sizeof(*u->bytes[i]));
		u->packets[i] = 0;
	}
}

struct usage_src {
	const struct nx_dma_usage *u;
	const int64_t *bytes;
	struct nx_colmap map;
	size_t k;
	int64_t total;
};

static int usage_next(void *self, struct nx_rowbuf *b, struct nx_err *err)
{
	struct usage_src *s = self;
	size_t cap = nx_rowbuf_capacity(b), row = 0;

	(void)err;
	for (; s->k < s->u->n && row < cap; s->k++, row++) {
		int64_t v = s->bytes[s->k];
		s->total += v;
		nx_rowbuf_i64(b, s->map.idx[0], row, s->u->first + (int64_t)s->k * s->u->w);
		nx_rowbuf_f64(b, s->map.idx[1], row, (double)v * 1e9 / (double)s->u->w);
		nx_rowbuf_i64(b, s->map.idx[2], row, s->total);
		nx_rowbuf_i64(b, s->map.idx[3], row, s->u->pcore);
	}
	return (int)row;
}

int nx_dma_usage_write(const struct nx_dma_usage *u, struct nx_duck *d, const char *dir,
		       uint64_t rows[NX_USAGE_N], struct nx_err *err)
{
	static const char *const tables[NX_USAGE_N] = { "DmaUsage", "HbmUsage" };
	static const char *const names[] = { "timestamp", "current_throughput",
					      "total_transfer_bytes", "pcore_idx", NULL };
	int rc = 0;

	for (int i = 0; i < NX_USAGE_N && !rc; i++) {
		struct usage_src s = { .u = u, .bytes = u->bytes[i] };
		struct nx_row_source src;
		char *path;

		rows[i] = 0;
		if (!u->packets[i])
			continue; /* no packet: no core, so no rows, like the SQL */
		if ((rc = nx_colmap_init(&s.map, tables[i], names, err)))
			break;
		src = (struct nx_row_source){ .table = s.map.table, .self = &s, .next = usage_next };
		path = nx_xasprintf("%s/%s.parquet", dir, tables[i]);
		rc = nx_duck_write_source(d, &src, path, &rows[i], err);
		free(path);
	}
	return rc;
}

void nx_dma_usage_release(struct nx_dma_usage *u)
{
	for (int i = 0; i < NX_USAGE_N; i++)
		free(u->bytes[i]);
	memset(u, 0, sizeof(*u));
}
