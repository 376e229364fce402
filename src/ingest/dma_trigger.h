/* SPDX-License-Identifier: MIT
 * dma_trigger.h: the DMA spans of triggering instructions, for the Instruction columns
 * dma_trigger_start_ts, dma_trigger_end_ts and dma_wait_time_ns, and the instruction
 * times DmaPacketAggregated.trigger and completion, in memory that does not grow with
 * the trace.
 *
 * Every DMA packet record names the INST record id of the instruction that triggered
 * its transfer. While the DmaPacket table streams (before the Instruction table), the
 * earliest packet start and the latest packet end are kept per triggering instruction
 * id in a hash table of at most NX_TRIG_RUN (65536) ids; when it is full, its entries
 * are written to disk as a run sorted by id and the table starts empty again. Runs are
 * merged while they come (16 of the same size into one, so at most 16 per size stay
 * open), an id met in several runs taking the union of its spans. nx_trig_seal then
 * merges what is left into one table sorted by id, in a file, which the Instruction
 * and DmaPacketAggregated passes read through a small cache of blocks (4 x 4096 spans,
 * binary search for a block that is not cached). Ids come in roughly increasing order
 * in both passes, so the blocks are read about once, in file order.
 *
 * When the Instruction table streams, each span takes the triggering instruction's own
 * start and end instead (marked; the block is written back when it leaves the cache).
 * Memory: the hash table (4 MB), a 64 KB read buffer per run while runs merge (16, or
 * at the end at most 16) and the cache (512 KB); disk: 32 bytes per distinct triggering
 * instruction and run. Files are unlinked as soon as they are open: nothing is left
 * behind, whatever happens. */
#ifndef NX_INGEST_DMA_TRIGGER_H
#define NX_INGEST_DMA_TRIGGER_H

#include "common/compat.h"
#include "common/err.h"

struct nx_trig_span {
	uint64_t id;     /* UINT64_MAX marks a free hash slot */
	int64_t start, end;
	uint64_t inst;   /* start/end are the instruction's (nx_trig_set_inst) */
};

struct nx_trig_run;
struct nx_trig_block;

struct nx_trig_map {
	char *dir;                   /* where the runs and the table are made */
	/* collecting (DmaPacket pass) */
	struct nx_trig_span *slot;   /* hash table of cap >= 2 * run_cap slots, or NULL */
	size_t cap, run_cap, n;
	struct nx_trig_run *runs;    /* a stack: sizes (levels) decrease towards the top */
	size_t nruns;
	/* sealed: the table, count spans sorted by id in fd */
	bool sealed;
	int fd;
	uint64_t count, nblocks, first_id;
	struct nx_trig_block *cache;
	uint64_t tick;
	uint64_t dup_inst;           /* nx_trig_set_inst on a span already marked */
	/* the first I/O error: later calls do nothing, nx_trig_error reports it */
	int rc;
	struct nx_err err;
};

/* An empty map whose files go into dir (the ingest's staging directory). */
void nx_trig_init(struct nx_trig_map *m, const char *dir);
/* Widens the span of instruction id by one packet [start, end]. */
void nx_trig_add(struct nx_trig_map *m, uint64_t id, int64_t start, int64_t end);
/* Ends the collecting: the spans become the sorted table nx_trig_find reads. */
int nx_trig_seal(struct nx_trig_map *m, struct nx_err *err);
/* The span of instruction id, or NULL when it triggered no DMA (or on an I/O error,
 * which nx_trig_error then reports). The span stays valid until the next call. */
struct nx_trig_span *nx_trig_find(struct nx_trig_map *m, uint64_t id);
/* Replaces the DMA span s (from nx_trig_find, once it has been read) by the
 * instruction's own [start, end]. */
void nx_trig_set_inst(struct nx_trig_map *m, struct nx_trig_span *s, int64_t start,
		      int64_t end);
static inline bool nx_trig_is_inst(const struct nx_trig_span *s)
{
	return s->inst != 0;
}
/* The first I/O error met by add/find (0 when none), copied into err. */
int nx_trig_error(const struct nx_trig_map *m, struct nx_err *err);
void nx_trig_release(struct nx_trig_map *m);

#endif
