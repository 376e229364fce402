/* SPDX-License-Identifier: MIT
 * context.h: state shared by the ingest stage's row sources: the parsed NEFF, the
 * NTFF reader, tick conversion, the time bounds seen so far, and the warnings that
 * become the Warning table. */
#ifndef NX_INGEST_CONTEXT_H
#define NX_INGEST_CONTEXT_H

#include "common/compat.h"
#include "common/arena.h"
#include "common/assert.h"
#include "common/err.h"
#include "common/progress.h"
#include "db/duck.h"
#include "ingest/active_time.h"
#include "ingest/dma_trigger.h"
#include "ingest/summary_sums.h"
#include "neff/neff.h"
#include "ntff/ntff.h"

struct nx_warning {
	char *category;
	char *message;
};

/* Per static instruction facts, computed once and reused by every executed instance of
 * the Instruction table. The strings are the context's (static_text, operand_text, one
 * copy of each distinct location and HLO attributes text) or the NEFF's debug info's. The
 * ids that are a number in a fixed text (bir_id, penguin_id, stack_frame_ids, and the
 * BIR name the debug info does not give) are made when a row is written, from the
 * instruction and the numbers kept here. */
struct nx_static_inst {
	const char *nki_loc; /* "file:line" or NULL */
	const char *bir_loc; /* "file:line" or NULL */
	const char *kernel_name;
	/* IR hierarchy (docs/derived-tables.md, "IR hierarchy"): the BIR name (NULL: none in
	 * the debug info, "I-<bir_id>_sg0000" then), the penguin (debug instruction,
	 * "sg0000:<raw_penguin>") and the kernel's framework op / HLO custom call (outermost
	 * stack frame); raw ids are -1 and strings NULL when unknown. */
	const char *bir_name;
	int64_t raw_penguin, raw_hlo, raw_framework;
	const char *framework_name;  /* borrowed from the NEFF */
	const char *hlo_attrs;
	uint32_t stack_frame;        /* N of stack_frame_ids' "[N]", the innermost frame's
				      * place in the debug info's list from 1; 0: none (NULL) */
	struct nx_inst_work work;
	int64_t hbm_read, hbm_write, spill_save, spill_reload;
	int64_t input_q, output_q, weight_q;
	/* The lengths of its strings (0 for NULL) and of its c->operands, made once: every
	 * Instruction row of the instruction points at them (nx_rowbuf_str_kept_len), each a
	 * strlen() per row before. */
	struct {
		uint32_t operands, nki_loc, bir_loc, kernel_name, bir_name, framework_name,
			hlo_attrs;
	} len;
};

struct nx_ingest_ctx {
	const char *neff_path, *ntff_path, *display_name;
	struct nx_neff neff;
	struct nx_ntff_reader *ntff;
	const struct nx_ntff_info *info;
	uint64_t tpn;               /* ticks per ns */
	bool skip_buf_usage;        /* skip SbufAllocation/SbufUsage/PsumUsage */
	bool keep_staging;          /* tests: every nx_OnchipAlloc row, not only SBUF ones */
	bool target_v3;
	/* The statics, until the tables that read them are written (nx_ctx_drop_statics) */
	struct nx_static_inst *statics[NX_ENGINE_COUNT];
	struct nx_arena static_text; /* their strings, but the operands */
	/* Each instruction's operand text, also read after the statics are gone (nx_StaticInst,
	 * SbufAllocation), until nx_ctx_drop_neff */
	const char **operands[NX_ENGINE_COUNT];
	struct nx_arena operand_text;
	bool statics_dropped, neff_dropped; /* by nx_ctx_drop_statics, nx_ctx_drop_neff */
	/* Bounds over every record read, in ns; first > last means nothing seen yet. */
	int64_t first_ns, last_ns;
	/* Execution windows found in EXEC records and instructions per execution. */
	size_t nexec;
	struct nx_exec_window { int64_t start, stop; uint64_t rows; bool has_start, has_stop; } *exec;
	struct nx_active active;     /* ActiveTime / OpcodeSummary, merged while streaming */
	struct nx_trig_map trig;     /* DMA span per triggering instruction (DmaPacket pass) */
	struct nx_inst_sums isums;   /* Summary's Instruction aggregates, likewise */
	struct nx_dma_sums dsums;    /* Summary's DmaPacket aggregates */
	uint64_t unknown_inst, unknown_queue, unknown_block;
	uint64_t rows_total;
	uint64_t trace_rows;        /* the trace tables' rows (Summary's event_count) */
	uint64_t dpa_rows;          /* DmaPacketAggregated's rows and their summed duration */
	unsigned __int128 dpa_dur_ns; /* (Summary's dma_transfer_*): nx_write_dma_aggregated */
	const struct nx_progress *progress; /* may be NULL */
	const char *stage;                  /* "raw", "staging", "derive": for progress */
	size_t nwarn, warn_cap;
	struct nx_warning *warn;
};

static inline int64_t nx_ticks_to_ns(const struct nx_ingest_ctx *c, uint64_t ticks)
{
	return (int64_t)(ticks / c->tpn);
}

/* Widens the bounds *first..*last (first > last: nothing yet) to take in a..b. */
static inline void nx_bounds_see(int64_t *first, int64_t *last, int64_t a, int64_t b)
{
	if (*first > *last) {
		*first = a;
		*last = b;
		return;
	}
	if (a < *first)
		*first = a;
	if (b > *last)
		*last = b;
}

static inline void nx_ctx_see(struct nx_ingest_ctx *c, int64_t a, int64_t b)
{
	nx_bounds_see(&c->first_ns, &c->last_ns, a, b);
}

/* Streams src into the parquet file at path like nx_duck_copy_source, reporting rows
 * while it goes and the finished table (named `name`, or src's table) through
 * c->progress; `how` qualifies the table line (NULL, "derived", ...). */
int nx_ctx_copy(struct nx_ingest_ctx *c, struct nx_duck *d, struct nx_row_source *src,
		const char *path, const char *name, const char *how, uint64_t *rows,
		struct nx_err *err);
/* The same with src run ahead on a thread of its own (nx_duck_write_ahead): src must
 * share no state with the calling thread meanwhile; its progress is reported from there. */
int nx_ctx_copy_ahead(struct nx_ingest_ctx *c, struct nx_duck *d, struct nx_row_source *src,
		      const char *path, const char *name, const char *how, uint64_t *rows,
		      struct nx_err *err);
/* The same into the parts of a split table in dir (nx_duck_copy_source_parts). */
int nx_ctx_copy_parts(struct nx_ingest_ctx *c, struct nx_duck *d, struct nx_row_source *src,
		      const char *dir, uint64_t *rows, struct nx_err *err);
/* Reports a finished table through c->progress. */
void nx_ctx_table_done(struct nx_ingest_ctx *c, const char *table, const char *how,
		       uint64_t rows, double seconds);
double nx_now_s(void);

/* Total profile time in ns: summed execution windows, or the span of all records. */
int64_t nx_ctx_total_ns(const struct nx_ingest_ctx *c);

void nx_ctx_warn(struct nx_ingest_ctx *c, const char *category, const char *fmt, ...)
	NX_PRINTF(3, 4);
/* nx_ctx_warn with a ready message, in the shape of a warning callback (arg: the context). */
void nx_ctx_warning(void *ctx, const char *category, const char *msg);
struct nx_exec_window *nx_ctx_exec(struct nx_ingest_ctx *c, uint32_t index);

/* Builds the static-instruction cache (operand text, locations, byte figures). */
void nx_ctx_prepare_statics(struct nx_ingest_ctx *c);
/* Frees the statics and the NEFF's debug info once the tables that read them are written
 * (Instruction, the NEFF's tables): the operands and the rest of the NEFF stay. */
void nx_ctx_drop_statics(struct nx_ingest_ctx *c);
/* Frees the parsed NEFF and the operands once the last table that reads them is written
 * (SbufAllocation); the statics too if still there. Their pages go back to the system. */
void nx_ctx_drop_neff(struct nx_ingest_ctx *c);
void nx_ctx_release(struct nx_ingest_ctx *c);

/* What the drops free, read through these: after its drop, a read fails loudly in builds
 * with NX_ASSERTS, so a later reorder of the stages cannot read freed (or emptied) data
 * unseen. The NEFF and each instruction's operand text until nx_ctx_drop_neff; the
 * statics and the NEFF's debug info until nx_ctx_drop_statics. */
static inline const struct nx_neff *nx_ctx_neff(const struct nx_ingest_ctx *c)
{
	NX_ASSERT(!c->neff_dropped);
	return &c->neff;
}

static inline const char *const *nx_ctx_operands(const struct nx_ingest_ctx *c, int engine)
{
	NX_ASSERT(!c->neff_dropped);
	return c->operands[engine];
}

static inline const struct nx_debug_info *nx_ctx_dbg(const struct nx_ingest_ctx *c)
{
	NX_ASSERT(!c->statics_dropped);
	return &nx_ctx_neff(c)->dbg;
}

static inline const struct nx_static_inst *nx_ctx_statics(const struct nx_ingest_ctx *c,
							   int engine)
{
	NX_ASSERT(!c->statics_dropped);
	return c->statics[engine];
}

/* Row sources. Each writes one table; *_init prepares the source over ctx. */
struct nx_src_trace;
struct nx_rec;
/* Fills row `row` of b from one NTFF record. */
typedef void (*nx_trace_fill_fn)(struct nx_src_trace *s, struct nx_rowbuf *b, size_t row,
				 const struct nx_rec *r);
struct nx_src_trace {
	struct nx_ingest_ctx *ctx;
	int kind;               /* NTFF record kind read */
	struct nx_colmap map;
	nx_trace_fill_fn fill;
	bool done;
	/* Instruction's columns of the static instruction, keyed by it (db/duck.h,
	 * struct nx_row_keys): engine e's instruction i is key key_base[e] + i */
	struct nx_row_keys keys;
	uint32_t key_base[NX_ENGINE_COUNT];
	uint32_t *row_keys; /* the batch's keys being filled (NULL: none wanted) */
};
/* A source streaming the records of one kind into `table` (columns `names`, in the
 * order the fill function indexes them). Rewinds the NTFF. */
int nx_src_trace_init(struct nx_src_trace *s, struct nx_ingest_ctx *c, int kind,
		      const char *table, const char *const *names, nx_trace_fill_fn fill,
		      struct nx_row_source *src, struct nx_err *err);
int nx_src_instruction_init(struct nx_src_trace *s, struct nx_ingest_ctx *c,
			    struct nx_row_source *src, struct nx_err *err);
int nx_src_dma_init(struct nx_src_trace *s, struct nx_ingest_ctx *c, struct nx_row_source *src,
		    struct nx_err *err);
int nx_src_sem_init(struct nx_src_trace *s, struct nx_ingest_ctx *c, struct nx_row_source *src,
		    struct nx_err *err);
int nx_src_throttle_init(struct nx_src_trace *s, struct nx_ingest_ctx *c,
			 struct nx_row_source *src, struct nx_err *err);
int nx_src_error_init(struct nx_src_trace *s, struct nx_ingest_ctx *c, struct nx_row_source *src,
		      struct nx_err *err);
/* Reads the EXEC records into ctx->exec (no table written). */
int nx_read_exec_records(struct nx_ingest_ctx *c, struct nx_err *err);

/* Internal tables for the derive SQL, written into dir (a staging directory): src_staging.c. */
int nx_write_staging(struct nx_ingest_ctx *c, struct nx_duck *d, const char *dir,
		     struct nx_err *err);
/* nx_DmaTransfer into dir, from a pass over the NTFF's DMA records (src_staging.c): only
 * for its readers, Flow's trigger edges by SQL and the tests' staging tables. */
int nx_write_dma_transfers(struct nx_ingest_ctx *c, struct nx_duck *d, const char *dir,
			   struct nx_err *err);
/* occupancy.c: the on-chip occupancy pass (nx_OnchipAlloc into staging_dir, with keep_staging) and
 * the tables it feeds, SbufAllocation, SbufUsage and PsumUsage; nothing with
 * -F ignore-nc-buf-usage=true (*job NULL). nx_onchip_start starts the pass on a thread
 * of its own before the raw stage (with keep_staging it only notes it);
 * nx_onchip_finish, once the raw stage is done, waits for it, reporting progress,
 * writes the tables into profile_dir through d and frees the job; nx_onchip_abort
 * stops and frees one (both take NULL). */
struct nx_onchip_job;
int nx_onchip_start(struct nx_ingest_ctx *c, const char *staging_dir,
		    struct nx_onchip_job **job, struct nx_err *err);
int nx_onchip_finish(struct nx_onchip_job *job, struct nx_duck *d, const char *profile_dir,
		     struct nx_err *err);
void nx_onchip_abort(struct nx_onchip_job *job);

/* Static tables (NEFF facts, metadata): a source that emits rows [0, count). */
struct nx_src_static {
	struct nx_ingest_ctx *ctx;
	struct nx_colmap map;
	size_t count, pos;
	/* Fills one row. */
	void (*row)(struct nx_src_static *s, struct nx_rowbuf *b, size_t row, size_t i);
	/* KernelInstructions: the debug info's frames and iteration variables sorted by id,
	 * so that a depth walks its parents by binary search (NULL for other tables) */
	struct nx_dbg_by_id *frames_by_id, *itervars_by_id;
};
int nx_src_static_init(struct nx_src_static *s, struct nx_ingest_ctx *c, const char *table,
		       struct nx_row_source *src, struct nx_err *err);
/* Frees what init allocated (the source is spent or unused). */
void nx_src_static_release(struct nx_src_static *s);

#endif
