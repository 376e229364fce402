/* SPDX-License-Identifier: MIT
 * active_time.h: ActiveTime and OpcodeSummary computed while the Instruction table
 * streams by. NTFF instruction records arrive in start order (the reader enforces it),
 * so the union of each engine's intervals can be merged on the fly: finished runs go
 * to a spill file (bounded memory), and per (engine, opcode) only running totals are
 * kept. This replaced the SQL window-function versions after measurement (see
 * docs/derived-tables.md). */
#ifndef NX_INGEST_ACTIVE_TIME_H
#define NX_INGEST_ACTIVE_TIME_H

#include "common/compat.h"
#include "common/err.h"
#include "common/progress.h"
#include "db/duck.h"
#include "neff/isa.h"

#include <stdio.h>

struct nx_run {
	int64_t s, e;
	bool open;
};

/* A union of start-ordered intervals: the open run and the length of the closed ones.
 * With a spill file, closed runs are also written there, in start order. */
struct nx_union {
	struct nx_run run;
	int64_t total;
	FILE *spill;
};

/* DMA unions by queue class, for Summary. */
enum nx_dma_class { NX_DMA_ALL, NX_DMA_STATIC, NX_DMA_DYNAMIC, NX_DMA_SOFTWARE, NX_DMA_HARDWARE,
		    NX_DMA_CLASSES };

struct nx_active {
	FILE *spill;                 /* finished engine runs: (engine, start, end) */
	char *spill_path;
	char *inst_path, *dma_path;  /* spills of the any-engine and all-DMA unions */
	uint64_t nruns;
	struct nx_union any_inst;    /* union of every engine's instructions */
	struct nx_union dma[NX_DMA_CLASSES];
	int64_t all_ns;              /* union of instructions and DMA, set by finish_all */
	int pcore;
	struct nx_run engine[NX_ENGINE_COUNT];
	struct nx_op_acc {
		struct nx_run run;
		int64_t active, time;
		uint64_t count;
	} op[NX_ENGINE_COUNT][NX_OP_COUNT + 1]; /* last slot: opcodes not in the NEFF */
	int err;                     /* the first spill write failure (-errno) */
	const char *err_path;        /* ... and its file */
};

int nx_active_init(struct nx_active *a, const char *spill_path, int pcore, struct nx_err *err);
/* One executed instruction; opcode -1 when unknown. Records must come in start order. */
void nx_active_add(struct nx_active *a, int engine, int opcode, int64_t start, int64_t end);
/* One DMA packet of queue type qt (enum nx_queue_type); packets must come in start order. */
void nx_active_add_dma(struct nx_active *a, int qt, int64_t start, int64_t end);
/* Closes the instruction runs and flushes the spill file (end of the Instruction pass). */
int nx_active_finish(struct nx_active *a, struct nx_err *err);
/* Closes the DMA runs and computes all_ns, the union of instruction and DMA activity,
 * by merging the two start-ordered spills (end of the DmaPacket pass). */
int nx_active_finish_all(struct nx_active *a, struct nx_err *err);
/* Writes ActiveTime.parquet and OpcodeSummary.parquet into dir; total_ns divides the
 * OpcodeSummary fractions. */
int nx_active_write(struct nx_active *a, struct nx_duck *d, const char *dir, int64_t total_ns,
		    const struct nx_progress *progress, struct nx_err *err);
void nx_active_release(struct nx_active *a);

#endif
