/* SPDX-License-Identifier: MIT
 * scan.h: internals of recommend's passes over the large tables (docs/recommend.md,
 * "Memory and time"). Instruction and DmaPacket are read once each, as streams, in C;
 * what the investigations need of them is kept small: counts and extremes, interval
 * unions as totals, per-line aggregates in the table rx_InstAgg, the instructions at
 * the start of the DGE_TRIGGER edges into DmaPacketAggregated and the packets' busy time
 * per transfer in external sorts by transfer id (merged with DmaPacketAggregated by
 * scan_xfer.c), and the semaphore waits in an external sort. Everything that reads the
 * rest of a table runs as SQL over those, as before, so every figure comes out as it
 * did. */
#ifndef NX_ANALYSIS_SCAN_H
#define NX_ANALYSIS_SCAN_H

#include "common/compat.h"
#include "common/err.h"
#include "common/ext_sort.h"
#include "common/strmap.h"
#include "db/duck.h"
#include "db/parquet_read.h"

#include <pthread.h>
#include <string.h>

/* ---- spans.c: unions of intervals ------------------------------------------------- */

/* The union of intervals that arrive in start order, merged as the SQL it replaced
 * merged them: an interval that starts after the reach of those before it starts a new
 * run, one that touches or overlaps it joins the run. */
struct nx_rec_union {
	bool open;
	int64_t s, e;  /* the open run */
	int64_t total; /* the closed runs' summed length */
};

/* Adds [s, e) (callers keep only e > s); returns true with the run just closed in
 * *rs, *re when this interval starts a new one. */
bool nx__rec_union_add(struct nx_rec_union *u, int64_t s, int64_t e, int64_t *rs, int64_t *re);
/* Closes the open run (true with it in *rs, *re) and leaves the union's total. */
bool nx__rec_union_end(struct nx_rec_union *u, int64_t *rs, int64_t *re);

/* Disjoint runs in order, with the covered time before each, for the time of them
 * inside any interval. Memory: 24 bytes per run. */
struct nx_rec_stretches {
	int64_t *s, *e, *before;
	size_t n, cap;
};

void nx__rec_stretches_add(struct nx_rec_stretches *st, int64_t s, int64_t e);
/* The time of the runs inside [a, b) (a < b). */
int64_t nx__rec_stretches_cover(const struct nx_rec_stretches *st, int64_t a, int64_t b);
void nx__rec_stretches_release(struct nx_rec_stretches *st);

/* A double as DuckDB's DOUBLE cells reached the analysis through their text ("%.9g"):
 * the figures the passes compute instead keep the same precision. */
double nx__rec_as_cell(double v);

/* ---- scan_read.c: the rows a pass reads --------------------------------------------- */

/* The type a column has in its rx_ view (quality.c). */
enum nx_rec_want { NX_REC_BIGINT, NX_REC_DOUBLE, NX_REC_VARCHAR };

struct nx_rec_colspec {
	const char *name;
	enum nx_rec_want want;
};

/* Columns of a profile table of dir, batch by batch: by the C parquet reader, or by
 * DuckDB when duck is set, when order_by (SQL over the columns' names) is given, or
 * when the reader does not read the files. A batch's columns are kind I64 (BIGINT), F64
 * (DOUBLE), STR (VARCHAR) or NULL (the table lacks the column). The C reader may still
 * refuse a later row group with NX_EVERSION: the pass then runs again with duck set. */
struct nx_rec_read;
int nx__rec_read_open(struct nx_duck *d, const char *dir, const char *table,
		      const struct nx_rec_colspec *cols, size_t ncols, const char *order_by,
		      bool duck, struct nx_rec_read **out, struct nx_err *err);
/* The next batch into *b, NULL at the end. */
int nx__rec_read_next(struct nx_rec_read *r, const struct nx_pqr_batch **b, struct nx_err *err);
void nx__rec_read_close(struct nx_rec_read *r);
/* Threads of the passes: 2 (the default), or 1 with NX_REC_THREADS=1. */
int nx__rec_threads(void);
/* The rows of dir's table and the range of each of its integer columns cols (out[k]),
 * from its files' footers alone (db/parquet_read.h, nx_pqr_ranges): an error (NX_ENOTFOUND
 * when the statistics do not tell) means the rows must be read instead. */
int nx__rec_read_ranges(const char *dir, const char *table, const struct nx_rec_colspec *cols,
			size_t ncols, int64_t *rows, struct nx_pqr_range *out, struct nx_err *err);
/* The C reader over dir's table for cols (their kinds those the view's types take), for
 * a caller that picks its row groups by their statistics (nx_pqr_group_range,
 * nx_pqr_seek): NX_ENOTFOUND when the table has no file or the C reader does not read
 * it (a pass must read it instead), another error (a damaged footer) naming the file. */
int nx__rec_read_groups(const char *dir, const char *table, const struct nx_rec_colspec *cols,
			size_t ncols, struct nx_pqr **out, struct nx_err *err);
/* A pass over a table with nx__rec_read_*: reset (NULL: none) readies it for a new
 * start; fn takes each batch and returns 0, NX_REC_UNSORTED when it needs the rows sorted by
 * order_by (it then starts again, sorted by DuckDB), or an error. */
#define NX_REC_UNSORTED 1
typedef int (*nx_rec_batch_fn)(void *arg, const struct nx_pqr_batch *b, struct nx_err *err);
int nx__rec_read_pass(struct nx_duck *d, const char *dir, const char *table,
		      const struct nx_rec_colspec *cols, size_t ncols, const char *order_by,
		      void (*reset)(void *arg), nx_rec_batch_fn fn, void *arg, struct nx_err *err);
/* A cell: true with its value, false when NULL. Inline: the passes ask for every cell
 * of every row (a call each cost about a tenth of the Instruction pass). */
static inline bool nx__rec_null(const struct nx_pqr_col *c, size_t row)
{
	return c->kind == NX_PQR_NULL || (c->valid && !c->valid[row]);
}

/* Column c's cell at row (for a pass that holds a batch's columns in locals). */
static inline bool nx__rec_col_i64(const struct nx_pqr_col *c, size_t row, int64_t *v)
{
	if (nx__rec_null(c, row))
		return false;
	*v = c->i64[row];
	return true;
}

static inline bool nx__rec_i64(const struct nx_pqr_batch *b, size_t k, size_t row, int64_t *v)
{
	return nx__rec_col_i64(&b->col[k], row, v);
}

static inline bool nx__rec_f64(const struct nx_pqr_batch *b, size_t k, size_t row, double *v)
{
	const struct nx_pqr_col *c = &b->col[k];

	if (nx__rec_null(c, row))
		return false;
	*v = c->f64[row];
	return true;
}

static inline bool nx__rec_str(const struct nx_pqr_batch *b, size_t k, size_t row,
			       const char **s, size_t *len)
{
	const struct nx_pqr_col *c = &b->col[k];

	if (nx__rec_null(c, row))
		return false;
	*s = c->str[row];
	*len = c->len[row];
	return true;
}

/* A kernel packet: coalesce(queue_type, '') <> 'instruction' AND transfer_bytes > 4, with
 * transfer_bytes in column k and queue_type in column k + 1 of b; its bytes in *bytes. */
static inline bool nx__rec_kernel_packet(const struct nx_pqr_batch *b, size_t k, size_t r,
					 int64_t *bytes)
{
	const char *q;
	size_t len;

	if (!nx__rec_i64(b, k, r, bytes) || *bytes <= 4)
		return false;
	return !nx__rec_str(b, k + 1, r, &q, &len) || len != 11 || memcmp(q, "instruction", 11);
}

/* ---- what the passes learn ------------------------------------------------------- */

/* The window the passes filter by: whole-kernel runs take every row with a start. */
struct nx_rec_scan_window {
	bool whole;
	int64_t t0, t1;
};

/* A semaphore wait of an instruction, kept for the serialisation investigation in an
 * external sort by its start (start_ts - evt_wait_time_ns). */
struct nx_rec_wait {
	int64_t from;   /* start - wait */
	int64_t start, row, id;
	int32_t line;   /* index in the scan's source lines, -1 for none */
	int16_t engine; /* index in the scan's engines */
	uint8_t feeds_dma; /* HBM bytes or a DGE_TRIGGER edge */
	uint8_t has_id;
};

/* scan_waits.c: the waits handed to their sort (sc->waits) on a helper thread, a block
 * of 2 MiB at a time while the pass fills the next (NX_REC_THREADS=1: added by the pass
 * itself); the sort must not be touched between start and flush or stop. */
struct nx_rec_waits_ahead {
	struct nx_xsort *sort;
	bool ahead;
	struct nx_rec_wait *fill, *other; /* the pass's block, the helper's */
	size_t n, n_other;
	pthread_t thread;
	bool running;
	int rc; /* the helper's */
	struct nx_err err;
};

void nx__rec_waits_start(struct nx_rec_waits_ahead *w, struct nx_xsort *sort);
int nx__rec_waits_add(struct nx_rec_waits_ahead *w, const struct nx_rec_wait *x,
		      struct nx_err *err);
/* Every wait in the sort, the helper done: 0 or the first error of the adds. */
int nx__rec_waits_flush(struct nx_rec_waits_ahead *w, struct nx_err *err);
/* Waits for the helper and drops the waits not handed yet (an error, a new start). */
void nx__rec_waits_stop(struct nx_rec_waits_ahead *w);

/* A Flow edge that attributes a transfer to an instruction (attribution.h), kept in an
 * external sort by transfer id (then by the order the pass met it) for scan_xfer.c. */
struct nx_rec_edge {
	int64_t dpa_id;
	int64_t seq;
	int32_t line;  /* index in the scan's source lines, -1 for none */
	uint8_t rd;    /* the instruction reads HBM */
	uint8_t hbm;   /* it reads or writes HBM */
	uint8_t pad[2];
};

/* The summed duration of some packets of a transfer (DmaPacket.packet_aggregation_id),
 * in an external sort by id; a transfer may come in several parts. */
struct nx_rec_busy {
	int64_t id, ns;
};

#define NX_REC_BUSY_CACHE_BITS 12
#define NX_REC_BUSY_CACHE ((size_t)1 << NX_REC_BUSY_CACHE_BITS)
struct nx_rec_busy_slot {
	struct nx_rec_busy b;
	bool used;
};

/* A string column's distinct values, numbered in the order they first come. */
struct nx_rec_dict {
	struct nx_strmap map; /* text -> int32 number */
	char **text;
	size_t n, cap;
};

struct nx_rec_scan {
	struct nx_rec_scan_window win;
	const char *dir;        /* the profile */
	char *spill;            /* the private directory DuckDB and the sorts spill into */
	/* DmaPacket */
	int64_t packets;
	bool pk_lo_set, pk_hi_set;
	int64_t pk_lo, pk_hi;   /* min start_ts, max end_ts */
	int64_t dma_union;      /* union of the packets clipped to the window */
	double dma_bytes;       /* kernel packets' bytes by start in the window */
	bool dma_bytes_set;
	/* Instruction */
	int64_t insts, with_source, with_wait;
	bool in_lo_set, in_hi_set;
	int64_t in_lo, in_hi;
	struct nx_rec_dict src, engine, opcode, tti;
	struct nx_strmap groups; /* per (src, engine, opcode, type) in the window */
	struct nx_xsort waits;
	bool waits_open;
	/* the transfers' merge (scan_xfer.c): its two sorted inputs, then done */
	struct nx_xsort edges, busy;
	bool edges_open, busy_open, edges_done, busy_done, xfers_done;
	int64_t edge_seq;
	int64_t edges_to_lines; /* edges DMA efficiency groups (HBM, with a line) */
	struct nx_rec_busy_slot *busy_cache; /* NX_REC_BUSY_CACHE slots */
	/* and its sums over DmaPacketAggregated's rows in the window: their bytes (NAN when
	 * none is known), and those with VIRTUAL in the destination plus in the source */
	double xfer_bytes, xfer_spill_bytes;
	/* the union runs of all packets, unclipped: what the serialisation investigation
	 * sweeps beside when DMA is the bottleneck, kept by the DmaPacket pass so that it
	 * need not read the table again (dropped beyond NX_REC_DMA_RUNS_MAX runs) */
	struct nx_rec_stretches dma_runs;
	bool dma_runs_kept;
	bool passes_done;      /* the two passes ran (else only nx__rec_scan_extents) */
};

void nx__rec_dict_init(struct nx_rec_dict *d);
/* The number of s (len bytes), added when new. */
int32_t nx__rec_dict_id(struct nx_rec_dict *d, const char *s, size_t len);
void nx__rec_dict_release(struct nx_rec_dict *d);

/* The most union runs of DmaPacket the pass keeps (24 bytes each). */
#define NX_REC_DMA_RUNS_MAX ((size_t)1 << 18)

/* scan_packets.c: the DmaPacket pass (count, extremes, the union and kernel bytes in the
 * window, the union's runs over the whole profile), the engines' unions over ActiveTime in the window, and the busy runs of the
 * bottleneck for the serialisation investigation. */
int nx__rec_scan_packets(struct nx_duck *d, struct nx_rec_scan *sc, struct nx_err *err);
/* scan_kext.c: the first start and last end of the kernel's packets (queue_type not
 * 'instruction', more than 4 bytes; bounds.c's window=kernel): 1 when there is none. */
int nx__rec_kernel_extent(struct nx_duck *d, const struct nx_rec_scan *sc, int64_t *t0,
			  int64_t *t1, struct nx_err *err);
/* The same from the footers' statistics of DmaPacket and the row groups they point at
 * (*nread of them): NX_ENOTFOUND when they do not tell (no file, no statistics, a file
 * the C reader does not read: the pass must read the table), another error for a
 * damaged file, naming it. */
int nx__rec_kernel_extent_footers(const char *dir, int64_t *t0, int64_t *t1, size_t *nread,
				  struct nx_err *err);
int nx__rec_engine_unions(struct nx_duck *d, const struct nx_rec_scan *sc, int64_t t0, int64_t t1,
			  int64_t out[4], struct nx_err *err);
/* The union runs of DmaPacket (engine NULL: those the DmaPacket pass kept, handed over,
 * else read again) or of the engine's ActiveTime rows. */
int nx__rec_busy_runs(struct nx_duck *d, struct nx_rec_scan *sc, const char *engine,
		      struct nx_rec_stretches *st, struct nx_err *err);

/* scan_inst.c: the Instruction pass; it writes rx_InstAgg and sorts the attributed
 * edges (sc->edges, by transfer id) and the waits. */
int nx__rec_scan_instructions(struct nx_duck *d, struct nx_rec_scan *sc, struct nx_err *err);
/* Over the window's Tensor MATMULs: their number, their flops (0 when none is known),
 * the numbers of TRANSPOSE and REGULAR ones and the TRANSPOSE ones' flops (any
 * pointer may be NULL). */
void nx__rec_scan_matmuls(const struct nx_rec_scan *sc, int64_t *n, double *flops, int64_t *n_tp,
			  int64_t *n_reg, double *tp_flops);
void nx__rec_scan_release(struct nx_rec_scan *sc);

/* scan_xfer.c: the transfers of DmaPacketAggregated in [t0, t1) merged with the edges
 * and the busy time by transfer id, grouped as DMA efficiency and redundant DMA group
 * them: the tables rx_XferLine, rx_XferLoad, rx_XferSpill and rx_XferMoved, and the
 * sums xfer_bytes and xfer_spill_bytes (once per analysis; the sorted inputs are used
 * up). NX_REC_XFER=sql keeps the joins in DuckDB instead (the
 * tests compare both): the edges then go to rx_Edge. */
int nx__rec_scan_xfers(struct nx_duck *d, struct nx_rec_scan *sc, int64_t t0, int64_t t1,
		       struct nx_err *err);
bool nx__rec_xfers_by_sql(void);
/* Empties a sort (released first when *open) for a new start of its pass. */
void nx__rec_xsort_restart(struct nx_xsort *s, bool *open, const char *dir, size_t size,
			   nx_xsort_cmp cmp, size_t mem_bytes);
int nx__rec_edge_cmp(const void *a, const void *b);
int nx__rec_busy_cmp(const void *a, const void *b);
/* The DmaPacket pass's side: a new start, one packet's duration, the end. */
void nx__rec_busy_reset(struct nx_rec_scan *sc);
int nx__rec_busy_add(struct nx_rec_scan *sc, int64_t id, int64_t ns, struct nx_err *err);
int nx__rec_busy_finish(struct nx_rec_scan *sc, struct nx_err *err);

/* scan_extent.c: the bounds-only analysis reads only the counts, first starts and last
 * ends of the two tables (in SQL); with_source and with_wait are then the count. */
int nx__rec_scan_extents(struct nx_duck *d, struct nx_rec_scan *sc, struct nx_err *err);
/* Both passes, unless they ran already. */
int nx__rec_scan_passes(struct nx_duck *d, struct nx_rec_scan *sc, struct nx_err *err);

#endif
