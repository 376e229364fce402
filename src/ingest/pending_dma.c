/* SPDX-License-Identifier: MIT
 * pending_dma.c: PendingDma from per-grid-point event counts (see pending_dma.h). */
#include "common/compat.h"
#include "ingest/pending_dma.h"
#include "common/xalloc.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void nx_pending_dma_init(struct nx_pending_dma *p, int64_t first_ns, int64_t last_ns,
			 int64_t pcore)
{
	memset(p, 0, sizeof(*p));
	/* the DmaUsage grid: greatest(100, ceil((last - first + 1) / 2000.0)) wide,
	 * points k = 0 .. (last - first) / w */
	double w = ceil((double)(last_ns - first_ns + 1) / 2000.0);
	p->w = w > 100 ? (int64_t)w : 100;
	p->first = first_ns;
	p->n = (size_t)((last_ns - first_ns) / p->w + 1);
	p->delta = nx_xcalloc(p->n, sizeof(*p->delta));
	p->pcore = pcore;
}

void nx_pending_dma_clear(struct nx_pending_dma *p)
{
	memset(p->delta, 0, p->n * sizeof(*p->delta));
	p->transfers = 0;
}

/* Adds d at the first grid point at or after ts. */
static void event(struct nx_pending_dma *p, int64_t ts, int64_t d)
{
	size_t k = ts <= p->first ? 0 : (size_t)((ts - p->first + p->w - 1) / p->w);

	if (k < p->n)
		p->delta[k] += d;
}

void nx_pending_dma_add(struct nx_pending_dma *p, int64_t queued, int64_t end)
{
	p->transfers++;
	event(p, queued, 1);
	event(p, end, -1);
}

struct pending_src {
	const struct nx_pending_dma *p;
	struct nx_colmap map;
	size_t k;
	int64_t level;
};

static int pending_next(void *self, struct nx_rowbuf *b, struct nx_err *err)
{
	struct pending_src *s = self;
	size_t cap = nx_rowbuf_capacity(b), row = 0;

	(void)err;
	for (; s->k < s->p->n && row < cap; s->k++, row++) {
		s->level += s->p->delta[s->k];
		nx_rowbuf_i64(b, s->map.idx[0], row, s->p->first + (int64_t)s->k * s->p->w);
		nx_rowbuf_i32(b, s->map.idx[1], row, (int32_t)s->level);
		nx_rowbuf_i64(b, s->map.idx[2], row, s->p->pcore);
	}
	return (int)row;
}

int nx_pending_dma_write(const struct nx_pending_dma *p, struct nx_duck *d, const char *dir,
			 uint64_t *rows, struct nx_err *err)
{
	static const char *const names[] = { "timestamp", "value", "pcore_idx", NULL };
	struct pending_src s = { .p = p };
	struct nx_row_source src;
	char *path;
	int rc;

	*rows = 0;
	if (!p->transfers)
		return 0; /* no transfers: no table, like the SQL without DmaPacketAggregated */
	if ((rc = nx_colmap_init(&s.map, "PendingDma", names, err)))
		return rc;
	src = (struct nx_row_source){ .table = s.map.table, .self = &s, .next = pending_next };
	path = nx_xasprintf("%s/PendingDma.parquet", dir);
	rc = nx_duck_write_source(d, &src, path, rows, err);
	if (!rc && *rows == 0)
		remove(path);
	free(path);
	return rc;
}

void nx_pending_dma_release(struct nx_pending_dma *p)
{
	free(p->delta);
	memset(p, 0, sizeof(*p));
}
