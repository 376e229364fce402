/* SPDX-License-Identifier: MIT
 * dma_usage.h: DmaUsage and HbmUsage (DMA throughput on the profile's grid of at most
 * 2000 buckets) counted while DmaPacketAggregated's pass reads every packet, in memory
 * that depends on the grid only. They replaced the derive SQL 49_throughput_grid.sql,
 * 50_dma_usage.sql and 51_hbm_usage.sql (kept as the reference in tests/unit/reference/),
 * whose HBM join of every packet with its transfer grew faster than the trace (0.7 s at
 * 30M records, 4.0 s and 228 MB at 100M in DuckDB alone).
 *
 * The grid: buckets of w = greatest(100, ceil((last - first + 1) / 2000.0)) ns from the
 * profile's first record; a packet's bytes count in the bucket of its start.
 * current_throughput = bucket bytes * 1e9 / w, total_transfer_bytes the running sum.
 * HbmUsage counts the packets of transfers with an HBM side (DmaPacketAggregated's
 * source not [[SB]]/[[PSUM]] or dest not [SB]/[PSUM]). Either table has its grid's rows
 * when it counted a packet, else none. */
#ifndef NX_INGEST_DMA_USAGE_H
#define NX_INGEST_DMA_USAGE_H

#include "common/compat.h"
#include "common/err.h"
#include "db/duck.h"

enum { NX_USAGE_DMA, NX_USAGE_HBM, NX_USAGE_N };

struct nx_dma_usage {
	int64_t first, w;    /* bucket k is [first + k * w, first + (k + 1) * w) */
	size_t n;
	int64_t *bytes[NX_USAGE_N];
	uint64_t packets[NX_USAGE_N];
	int64_t pcore;
};

void nx_dma_usage_init(struct nx_dma_usage *u, int64_t first_ns, int64_t last_ns, int64_t pcore);
/* Forgets every packet (DmaPacketAggregated's pass runs again). */
void nx_dma_usage_clear(struct nx_dma_usage *u);
/* The bucket of a packet starting at start; SIZE_MAX outside the grid (a packet
 * outside the profile's first and last record, which cannot happen, would not count). */
static inline size_t nx_dma_usage_bucket(const struct nx_dma_usage *u, int64_t start)
{
	size_t k = start < u->first ? SIZE_MAX : (size_t)((start - u->first) / u->w);
	return k < u->n ? k : SIZE_MAX;
}
static inline void nx_dma_usage_add(struct nx_dma_usage *u, int which, size_t bucket,
				    int64_t bytes)
{
	if (bucket != SIZE_MAX)
		u->bytes[which][bucket] += bytes;
	u->packets[which]++;
}
/* Writes dir/DmaUsage.parquet and dir/HbmUsage.parquet (a table without packets gets no
 * file); rows[which] gets each table's rows. */
int nx_dma_usage_write(const struct nx_dma_usage *u, struct nx_duck *d, const char *dir,
		       uint64_t rows[NX_USAGE_N], struct nx_err *err);
void nx_dma_usage_release(struct nx_dma_usage *u);

#endif
