/* SPDX-License-Identifier: MIT
 * sbuf_allocation.h: the SbufAllocation table, written in C from the on-chip occupancy
 * pass (occupancy.c) in bounded memory.
 *
 * The pass finds each SBUF allocation when it ends, but the table is ordered by
 * (pcore_idx, start_ts, partition, start_address). The rows go into an external sort
 * (common/ext_sort.h: a 4 MB buffer, sorted runs in the staging directory) and come back
 * in that order, each given its instruction's opcode and operands or its DMA block's
 * queue, block id and tensor, as the SQL this replaces did
 * (tests/unit/reference/53_sbuf_allocation.sql, compared row for row by
 * tests/unit/test_derive_ref.c). That SQL sorted every row in DuckDB, whose memory
 * outside its pool grew with the table (docs/memory.md). */
#ifndef NX_INGEST_SBUF_ALLOCATION_H
#define NX_INGEST_SBUF_ALLOCATION_H

#include "common/compat.h"
#include "common/err.h"
#include "common/ext_sort.h"

struct nx_ingest_ctx;
struct nx_duck;

struct nx_sbuf_alloc {
	struct nx_xsort sort;
};

/* An empty table whose sort spills into staging_dir. */
void nx_sbuf_alloc_init(struct nx_sbuf_alloc *a, const char *staging_dir);
/* One allocation: bytes [lo, hi] of partition group `unit` live over [start, end),
 * written by instruction pc of engine, or by DMA block `block` when dma. */
void nx_sbuf_alloc_add(struct nx_sbuf_alloc *a, int64_t start, int64_t end, uint64_t lo,
		       uint64_t hi, unsigned unit, bool dma, int engine, uint32_t pc,
		       uint32_t block);
/* Writes dir/SbufAllocation.parquet; *rows gets its row count. */
int nx_sbuf_alloc_write(struct nx_sbuf_alloc *a, struct nx_ingest_ctx *c, struct nx_duck *d,
			const char *dir, uint64_t *rows, struct nx_err *err);
void nx_sbuf_alloc_release(struct nx_sbuf_alloc *a);

#endif
