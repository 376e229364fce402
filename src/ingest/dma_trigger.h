/* SPDX-License-Identifier: MIT
 * dma_trigger.h: the DMA spans of triggering instructions, for the Instruction columns
 * dma_trigger_start_ts, dma_trigger_end_ts and dma_wait_time_ns. Every DMA packet
 * record names the INST record id of the instruction that triggered its transfer;
 * while the DmaPacket table streams (before the Instruction table), the earliest
 * packet start and the latest packet end are kept per triggering instruction id in an
 * open-addressing hash table (24 bytes per entry, at most 50% full). When the
 * Instruction table streams, each entry takes the triggering instruction's own start
 * and end instead (DmaPacketAggregated.trigger and completion, written after it),
 * marked in a bitmap of one bit per slot. */
#ifndef NX_INGEST_DMA_TRIGGER_H
#define NX_INGEST_DMA_TRIGGER_H

#include "common/compat.h"

struct nx_trig_span {
	uint64_t id;   /* UINT64_MAX marks a free slot */
	int64_t start, end;
};

struct nx_trig_map {
	struct nx_trig_span *slot;
	size_t cap, n;   /* cap is 0 or a power of two */
	uint8_t *inst;   /* bit per slot: start/end are the instruction's (nx_trig_set_inst) */
};

/* Widens the span of instruction id by one packet [start, end]. */
void nx_trig_add(struct nx_trig_map *m, uint64_t id, int64_t start, int64_t end);
/* The span of instruction id, or NULL when it triggered no DMA. */
const struct nx_trig_span *nx_trig_find(const struct nx_trig_map *m, uint64_t id);
/* Replaces the DMA span of instruction id, once it has been read, by the instruction's
 * own [start, end]; ids that triggered no DMA are not added. */
void nx_trig_set_inst(struct nx_trig_map *m, uint64_t id, int64_t start, int64_t end);
/* Whether span s (from nx_trig_find) holds its instruction's times. */
bool nx_trig_is_inst(const struct nx_trig_map *m, const struct nx_trig_span *s);
void nx_trig_release(struct nx_trig_map *m);

#endif
