/* SPDX-License-Identifier: MIT
 * attribution.h: which source line a DMA transfer belongs to, defined once for
 * `recommend`'s findings (inv_dma.c, inv_reload.c) and the server's per-line summary and
 * search (the web UI's source view and timeline highlight): a transfer belongs to the
 * line of the instruction that triggered it, the DGE_TRIGGER edge of Flow from that
 * Instruction row to the DmaPacketAggregated row (docs/derived-tables.md, "Flow"). */
#ifndef NX_ANALYSIS_ATTRIBUTION_H
#define NX_ANALYSIS_ATTRIBUTION_H

#include "common/compat.h"
#include "common/strbuf.h"

/* The source line of an Instruction row as the web UI names it. */
#define NX_LINE_SQL "coalesce(bir_debug_info_source_location, nki_source_location)"

/* The Flow edges that attribute a transfer to an instruction, over Flow's columns
 * (in_id: the instruction, out_id: the DmaPacketAggregated row): the SQL below and
 * `recommend`'s pass over Instruction (scan_inst.c), which reads these edges in step
 * with the instructions instead of joining them, both test this. */
#define NX_DMA_TRIGGER_SQL \
	"dependency_type = 'DGE_TRIGGER' AND in_table = 'Instruction' " \
	"AND out_table = 'DmaPacketAggregated'"

/* Appends a SELECT of (dma_id, inst_id, src): per DMA transfer with a triggering
 * instruction, that instruction's id and source line (src_sql over the instruction
 * relation `inst`, NULL when it has none), from the relation `flow` (Flow's columns).
 * The relation names are pasted as they are (quoted by the caller if need be). */
void nx_dma_line_sql(struct nx_strbuf *sql, const char *flow, const char *inst,
		     const char *src_sql);

#endif
