/* SPDX-License-Identifier: MIT
 * dma_aggregated.h: DmaPacketAggregated (one row per DMA transfer) in one streaming pass
 * over the DMA packet records, in bounded memory. It replaced the derive SQL
 * 20_dma_packet_aggregated.sql (kept as the reference in tests/unit/reference/), whose
 * GROUP BY of every packet and joins with the Instruction table ran out of DuckDB's
 * buffer pool at 100M records.
 *
 * Packets come in start order (the NTFF keeps each record kind sorted by start), so a
 * transfer's start is its first packet's and transfers appear in the order of the
 * output (start_ts, id). The transfers still open sit in a FIFO with a hash index; once
 * more than NX_DMA_AGG_OPEN (65536) are open, the oldest is taken as finished and
 * written, so memory is bounded by that count, not by the trace. A packet of a transfer
 * already written would make that wrong: it is detected (a transfer id smaller than the
 * largest seen that a Bloom filter of the written ids may contain), as is a packet out
 * of start order, and the pass is then run again with every transfer held open until
 * the end (memory then grows with the transfers, for such traces only). trigger and
 * completion come from the triggering instructions' times kept in ctx->trig. */
#ifndef NX_INGEST_DMA_AGGREGATED_H
#define NX_INGEST_DMA_AGGREGATED_H

#include "common/compat.h"
#include "common/err.h"
#include "db/duck.h"

struct nx_ingest_ctx;

/* Writes dir/DmaPacketAggregated.parquet (no file when the trace has no DMA packets),
 * dir/PendingDma.parquet and Flow's DGE_TRIGGER edges as staging/nx_FlowEdges_0.parquet
 * (flow_trigger.h). Run after the Instruction table streamed (it fills ctx->trig with
 * instruction times) and the staging tables were written; rewinds the NTFF. */
int nx_write_dma_aggregated(struct nx_ingest_ctx *c, struct nx_duck *d, const char *dir,
			    const char *staging, struct nx_err *err);

#endif
