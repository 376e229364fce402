/* SPDX-License-Identifier: MIT
 * flow_trigger.h: Flow's DGE_TRIGGER edges (triggering instruction -> DMA transfer,
 * gap_time = transfer start - instruction end), one per transfer whose first packet
 * names an instruction of the trace, collected while DmaPacketAggregated's rows are
 * written and kept in a file (24 bytes an edge), then written as the staging table
 * nx_FlowEdges_0, the first part of the edges Flow reads (src/derive/40_flow.sql), in
 * Flow's order (out_id, in_id); or, for a trace without SemaphoreUpdate rows (Flow
 * without its SEMAPHORE part, 39_flow_semaphore.sql), as Flow itself, and 40_flow.sql
 * is skipped (it requires nx_FlowEdges): DuckDB no longer copies the edges again. Transfers come in (start, id) order, which is that
 * order when transfer ids grow with their start (they do in the traces we write);
 * otherwise DuckDB sorts the edges. The SQL join this replaced
 * (tests/unit/reference/40_flow.sql) gives one edge per instruction record with the
 * trigger's id and per first packet of a transfer: when an id was seen twice
 * (nx_trig_map.dup_inst) or a transfer had two first packets, that SQL writes the
 * edges instead. */
#ifndef NX_INGEST_FLOW_TRIGGER_H
#define NX_INGEST_FLOW_TRIGGER_H

#include "common/compat.h"
#include "common/err.h"
#include "db/duck.h"

struct nx_flow_edge {
	uint64_t in_id, out_id;
	int64_t gap;
};

struct nx_flow_trig {
	int fd;                 /* the edges, unlinked temporary file; -1 before open */
	struct nx_flow_edge buf[1024];
	size_t n;
	uint64_t edges, last_out;
	bool sorted;            /* out_id strictly increasing so far */
	int rc;                 /* the first write error */
	struct nx_err err;
};

/* Starts an empty edge list kept in a file in dir. */
int nx_flow_trig_open(struct nx_flow_trig *f, const char *dir, struct nx_err *err);
/* Forgets every edge (DmaPacketAggregated's pass runs again). */
void nx_flow_trig_reset(struct nx_flow_trig *f);
void nx_flow_trig_add(struct nx_flow_trig *f, uint64_t in_id, uint64_t out_id, int64_t gap);
/* Writes the edges to path (zero rows included): staging/nx_FlowEdges_0.parquet, or
 * dir/Flow.parquet when they are the whole of Flow (no SEMAPHORE part); with !exact,
 * from the SQL join over nx_DmaTransfer (in staging), DmaPacketAggregated and
 * Instruction (in dir). *rows gets the edges written. */
int nx_flow_trig_write(struct nx_flow_trig *f, struct nx_duck *d, const char *dir,
		       const char *staging, const char *path, bool exact, uint64_t *rows,
		       struct nx_err *err);
void nx_flow_trig_release(struct nx_flow_trig *f);

#endif
