/* SPDX-License-Identifier: MIT
 * onchip_map.h: the ownership map of the on-chip occupancy pass (occupancy.c): every
 * (partition group of 32, 64-byte column) cell of SBUF and PSUM names the allocation
 * whose data it holds; reads, writes and a DMA transfer's later packets update it and
 * the allocations, and each allocation's rows are handed to a callback when it ends.
 * The model is described in occupancy.c and docs/derived-tables.md. The cells are walked
 * a row of columns at a time, in runs of cells of the same owner, with each run's bytes
 * computed at once (tests/unit/test_onchip_map.c checks it against the per-cell model):
 * beside each row of owners a bitmap marks where a run may start, so a read or a DMA
 * packet visits a run per owner rather than every cell. */
#ifndef NX_INGEST_ONCHIP_MAP_H
#define NX_INGEST_ONCHIP_MAP_H

#include "common/compat.h"

#define NX_OC_CELL_BYTES 64u
#define NX_OC_GROUP_PARTS 32u

enum { NX_OC_SBUF = 0, NX_OC_PSUM = 1, NX_OC_NMEM = 2 };

/* A range of one memory: partitions p0..p1 and bytes lo..hi of each, inclusive. */
struct nx_oc_range {
	int mem;
	unsigned p0, p1;
	uint64_t lo, hi;
};

static inline bool nx_oc_range_eq(const struct nx_oc_range *a, const struct nx_oc_range *b)
{
	return a->mem == b->mem && a->p0 == b->p0 && a->p1 == b->p1 && a->lo == b->lo &&
	       a->hi == b->hi;
}

struct nx_oc_loss {
	int64_t ts, bytes;
};

struct nx_oc_alloc {
	/* first what the walks of the cells read, in one 64-byte line's worth */
	int64_t rend, wend;      /* last read end, write end */
	struct nx_oc_range r;
	uint64_t transfer;
	uint32_t cells;          /* cells still owned */
	bool dma;
	unsigned unit;           /* SBUF: first partition of the group; PSUM: bank */
	int64_t start, kill;
	int64_t bytes;
	int engine;
	uint32_t pc, block, desc;
	struct nx_oc_loss *loss; /* bytes overwritten while other cells stayed live */
	size_t nloss, loss_cap;
	int32_t next_free;
};

/* Who writes, over [start, end): an instruction (engine, pc) or a DMA transfer. */
struct nx_oc_writer {
	int64_t start, end;
	bool in_place, dma;
	int engine;
	uint32_t pc, block, desc;
	uint64_t transfer;
};

/* One row of an ending allocation a: `bytes` (negative for a part overwritten while the
 * rest stayed live) over [start, end). */
typedef void nx_oc_emit_fn(void *arg, const struct nx_oc_alloc *a, int64_t start,
			   int64_t end, int64_t bytes);

struct nx_oc_map {
	uint64_t cap_bytes[NX_OC_NMEM];  /* bytes per partition */
	uint64_t bank_bytes;             /* PSUM bank size per partition */
	size_t ncols[NX_OC_NMEM];
	int32_t *owner[NX_OC_NMEM];      /* [group * ncols + col], -1 = free */
	/* [group * nwords + col / 64], bit col % 64: a run may start at col, i.e. every
	 * cell from an unmarked column up to the next marked one has the same owner */
	uint64_t *edge[NX_OC_NMEM];
	size_t nwords[NX_OC_NMEM];
	struct nx_oc_alloc *pool;
	size_t npool, pool_cap;
	int32_t free_head;
	nx_oc_emit_fn *emit;
	void *arg;
};

void nx_oc_map_init(struct nx_oc_map *m, uint64_t sbuf_partition_bytes,
		    uint64_t psum_partition_bytes, uint64_t psum_bank_bytes,
		    nx_oc_emit_fn *emit, void *arg);
void nx_oc_map_release(struct nx_oc_map *m);
/* Clips r to its memory; false when nothing of it is inside. */
bool nx_oc_clip(const struct nx_oc_map *m, struct nx_oc_range *r);
/* Bytes of one allocation unit: a partition group of SBUF, a PSUM bank. */
int64_t nx_oc_unit_capacity(const struct nx_oc_map *m, int mem);
/* A read of (clipped) r ending at `end`: its owners' read ends reach `end`. */
void nx_oc_read(struct nx_oc_map *m, const struct nx_oc_range *r, int64_t end);
/* A write of (clipped) r by w: an allocation per SBUF group or PSUM bank it touches. */
void nx_oc_write(struct nx_oc_map *m, const struct nx_oc_range *r, const struct nx_oc_writer *w);
/* A later packet of DMA transfer `transfer` ending at `end` into (clipped) r: extends
 * the write end of what the transfer wrote and still holds. */
void nx_oc_extend(struct nx_oc_map *m, const struct nx_oc_range *r, uint64_t transfer,
		  int64_t end);
/* The trace's end: every allocation still live ends with its last access. */
void nx_oc_close_all(struct nx_oc_map *m);

#endif
