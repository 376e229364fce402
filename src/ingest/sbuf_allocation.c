/* SPDX-License-Identifier: MIT
 * sbuf_allocation.c: SbufAllocation through an external sort (see sbuf_allocation.h). */
#include "common/compat.h"
#include "common/env_num.h"
#include "ingest/sbuf_allocation.h"
#include "ingest/context.h"
#include "ingest/dma_block.h"
#include "common/xalloc.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

/* The sort's buffer: 87381 rows of 48 bytes. */
#define SORT_BYTES ((size_t)4 << 20)

struct sa_rec {
	int64_t start, end;
	uint64_t lo, hi;
	uint32_t unit;
	uint32_t ref;    /* pc, or the DMA block */
	uint8_t dma;
	uint8_t engine;
	uint8_t pad[6];
};

/* The table's order, (start_ts, partition, start_address) (pcore_idx is one value
 * per profile), then every other field so that equal keys come out the same way on
 * every run. */
static int sa_cmp(const void *pa, const void *pb)
{
	const struct sa_rec *a = pa, *b = pb;
#define CMP(f) if (a->f != b->f) return a->f < b->f ? -1 : 1
	CMP(start);
	CMP(unit);
	CMP(lo);
	CMP(end);
	CMP(hi);
	CMP(dma);
	CMP(engine);
	CMP(ref);
#undef CMP
	return 0;
}

void nx_sbuf_alloc_init(struct nx_sbuf_alloc *a, const char *staging_dir)
{
	/* NX_SBUF_SORT_BYTES: a smaller buffer, for tests of the spill path */
	long long n = nx_env_whole_or("NX_SBUF_SORT_BYTES", LONG_MAX, "bytes (0: the default)", 0);

	nx_xsort_init(&a->sort, staging_dir, sizeof(struct sa_rec), sa_cmp,
		      n > 0 ? (size_t)n : SORT_BYTES);
}

void nx_sbuf_alloc_add(struct nx_sbuf_alloc *a, int64_t start, int64_t end, uint64_t lo,
		       uint64_t hi, unsigned unit, bool dma, int engine, uint32_t pc,
		       uint32_t block)
{
	struct sa_rec r = { .start = start, .end = end, .lo = lo, .hi = hi, .unit = unit,
			    .ref = dma ? block : pc, .dma = dma, .engine = (uint8_t)engine };

	/* a disk error stays in the sort and is reported by nx_sbuf_alloc_write */
	nx_xsort_add(&a->sort, &r, NULL);
}

static const char *const names[] = {
	"start_ts", "end_ts", "start_address", "end_address", "partition", "op_source_type",
	"opcode", "operands", "queue_name", "block_id", "tensor_name", "pcore_idx", NULL,
};

/* The block facts a row takes, once per block. */
struct sa_block {
	const char *queue_name, *tensor_name;
	int64_t block_id;
};

struct sa_src {
	struct nx_sbuf_alloc *a;
	struct nx_ingest_ctx *c;
	struct nx_colmap map;
	struct sa_block *blocks;
};

static int sa_next(void *self, struct nx_rowbuf *b, struct nx_err *err)
{
	struct sa_src *s = self;
	const struct nx_neff *n = nx_ctx_neff(s->c);
	const int *ix = s->map.idx;
	size_t cap = nx_rowbuf_capacity(b), row = 0;
	struct sa_rec r;
	int rc;

	for (; row < cap && (rc = nx_xsort_next(&s->a->sort, &r, err)) == 1; row++) {
		nx_rowbuf_i64(b, ix[0], row, r.start);
		nx_rowbuf_i64(b, ix[1], row, r.end);
		nx_rowbuf_i64(b, ix[2], row, (int64_t)r.lo);
		nx_rowbuf_i64(b, ix[3], row, (int64_t)r.hi);
		nx_rowbuf_i64(b, ix[4], row, r.unit);
		nx_rowbuf_str(b, ix[5], row, r.dma ? "dma" : "instruction");
		if (!r.dma && r.engine < NX_ENGINE_COUNT && r.ref < n->ninst[r.engine]) {
			nx_rowbuf_str(b, ix[6], row, nx_opcode_name(n->inst[r.engine][r.ref].opcode));
			if (nx_ctx_operands(s->c, r.engine))
				nx_rowbuf_str(b, ix[7], row, nx_ctx_operands(s->c, r.engine)[r.ref]);
		} else if (r.dma && r.ref < n->nblocks) {
			const struct sa_block *k = &s->blocks[r.ref];
			nx_rowbuf_str(b, ix[8], row, k->queue_name);
			nx_rowbuf_i64(b, ix[9], row, k->block_id);
			nx_rowbuf_str(b, ix[10], row, k->tensor_name);
		}
		nx_rowbuf_i64(b, ix[11], row, s->c->info->pcore_idx);
	}
	return rc < 0 ? rc : (int)row;
}

int nx_sbuf_alloc_write(struct nx_sbuf_alloc *a, struct nx_ingest_ctx *c, struct nx_duck *d,
			const char *dir, uint64_t *rows, struct nx_err *err)
{
	struct sa_src s = { .a = a, .c = c };
	const struct nx_neff *n = nx_ctx_neff(c);
	size_t nb = n->nblocks;
	char *path = nx_xasprintf("%s/SbufAllocation.parquet", dir);
	int rc = nx_colmap_init(&s.map, "SbufAllocation", names, err);

	if (!rc)
		rc = nx_xsort_finish(&a->sort, err);
	if (!rc) {
		s.blocks = nx_xcalloc(nb ? nb : 1, sizeof(*s.blocks));
		for (size_t i = 0; i < nb; i++) { /* the names it keeps are the NEFF's */
			const struct nx_dma_block *blk = &n->blocks[i];
			const char *var = nx_dma_desc_variable(n, blk, 0);
			s.blocks[i].block_id = blk->id;
			if (blk->queue >= 0 && (size_t)blk->queue < n->nqueues)
				s.blocks[i].queue_name = n->queues[blk->queue].name;
			/* nullif(variable, ''): no tensor name rather than an empty one */
			if (var && *var)
				s.blocks[i].tensor_name = var;
		}
		struct nx_row_source src = { .table = s.map.table, .self = &s, .next = sa_next };
		rc = nx_ctx_copy(c, d, &src, path, NULL, "derived in C", rows, err);
	}
	free(s.blocks);
	free(path);
	return rc;
}

void nx_sbuf_alloc_release(struct nx_sbuf_alloc *a)
{
	nx_xsort_release(&a->sort);
}
