/* SPDX-License-Identifier: MIT
 * pending_dma.h: PendingDma (DMA transfers queued or in flight, sampled on the 2000-bucket
 * grid of DmaUsage) counted while DmaPacketAggregated's rows are written, in memory that
 * depends on the grid only. It replaced the derive SQL 52_pending_dma.sql (kept as the
 * reference in tests/unit/reference/), whose window over every transfer's two events
 * took DuckDB to 1.9 GB at 100M records.
 *
 * A transfer counts +1 from its queue time (the triggering instruction's end when that
 * is known and earlier than the first packet, else the first packet's start) and -1 from
 * its last packet's end. The value at grid point g = first + k * w is the sum over the
 * events at or before g: an event at ts is added to the first grid point at or after
 * it, and the values are the prefix sums. */
#ifndef NX_INGEST_PENDING_DMA_H
#define NX_INGEST_PENDING_DMA_H

#include "common/compat.h"
#include "common/err.h"
#include "db/duck.h"

struct nx_pending_dma {
	int64_t first, w;   /* the grid: first + k * w, k < n */
	size_t n;
	int64_t *delta;     /* events added at grid point k */
	int64_t pcore;
	uint64_t transfers;
};

void nx_pending_dma_init(struct nx_pending_dma *p, int64_t first_ns, int64_t last_ns,
			 int64_t pcore);
/* Forgets every transfer (DmaPacketAggregated's pass is run again). */
void nx_pending_dma_clear(struct nx_pending_dma *p);
void nx_pending_dma_add(struct nx_pending_dma *p, int64_t queued, int64_t end);
/* Writes dir/PendingDma.parquet (no file without transfers); *rows gets its rows. */
int nx_pending_dma_write(const struct nx_pending_dma *p, struct nx_duck *d, const char *dir,
			 uint64_t *rows, struct nx_err *err);
void nx_pending_dma_release(struct nx_pending_dma *p);

#endif
