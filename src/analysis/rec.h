/* SPDX-License-Identifier: MIT
 * rec.h: internals of the recommend analysis: the result model every step fills
 * (inputs, bounds, gaps, investigations) and the steps themselves. Values are kept
 * in nanoseconds, bytes and flops as doubles; NaN means "not computable". */
#ifndef NX_ANALYSIS_REC_H
#define NX_ANALYSIS_REC_H

#include "common/compat.h"
#include "common/err.h"
#include "common/strbuf.h"
#include "analysis/recommend.h"
#include "common/json_writer.h"
#include "db/duck.h"
#include "analysis/scan.h"

/* Engines in the tie-break order of the pipeline bound (first maximum wins). */
enum nx_rec_engine {
	NX_REC_ENG_TENSOR, NX_REC_ENG_VECTOR, NX_REC_ENG_SCALAR, NX_REC_ENG_GPSIMD, NX_REC_ENG_DMA,
	NX_REC_NENG
};

enum nx_rec_bound {
	NX_REC_B_TOTAL, NX_REC_B_MEM, NX_REC_B_MEM_IDEAL, NX_REC_B_MEM_NO_RELOADS,
	NX_REC_B_COMP, NX_REC_B_COMP_IDEAL, NX_REC_B_COMP_USEFUL, NX_REC_B_PIPELINE, NX_REC_NBOUNDS
};

enum nx_rec_gap {
	NX_REC_G_DMA_IDLE, NX_REC_G_DMA_INEFF, NX_REC_G_EXCESS,
	NX_REC_G_TE_IDLE, NX_REC_G_TE_UNDERUTIL, NX_REC_G_TRANSPOSE,
	NX_REC_G_PIPELINE, NX_REC_NGAPS
};

enum nx_rec_status { NX_REC_FOUND, NX_REC_NOTHING, NX_REC_UNAVAILABLE };

/* A result table copied out of DuckDB: a handful of rows (source lines), never a
 * whole profile table. Cells keep their kind so JSON can write numbers as numbers. */
struct nx_rec_cell {
	int kind; /* enum nx_cell_kind */
	char *text;
};

struct nx_rec_table {
	size_t ncols, nrows, cap;
	char **cols;
	struct nx_rec_cell *cells; /* nrows * ncols, row-major */
};

struct nx_rec_metric {
	const char *key;   /* JSON key */
	const char *label; /* Markdown label */
	const char *unit;  /* "ns", "bytes", "flops", "%", "GB/s", "" */
	double v;
};

#define NX_REC_MAX_METRICS 16

struct nx_rec_inv {
	const char *id;     /* "dma_efficiency", ... */
	const char *title;  /* "DMA efficiency" */
	const char *group;  /* docs/recommend.md, "Gap groups": e.g. "1b" */
	const char *gap;    /* label of the gap it explains, NULL when none */
	const char *method; /* "aws" (AWS skill) or "ours" */
	int status;         /* enum nx_rec_status */
	char *summary;      /* one sentence with the result or the reason */
	double gap_ns;      /* size of that gap (NaN when none) */
	double relevance_ns; /* estimated reduction of the kernel time (ordering key) */
	struct nx_rec_metric m[NX_REC_MAX_METRICS];
	size_t nm;
	struct nx_rec_table lines; /* Step 2: first column "source", with a "share_pct" column */
	struct nx_rec_table extra; /* an appendix table (e.g. per tensor), may be empty */
	const char *extra_title;
	char *note;            /* caveat (coverage, missing flow edges), may be NULL */
};

/* The investigations in report order, the one list of them: X(slot, entry) for each.
 * It makes the slots below, the entries' declarations and the table of investigations.c.
 * Adding one: its entry (struct nx_rec_inv_def) in an inv_*.c file, its line here, its
 * section and id in docs/recommend.md (test_recommend_registry checks the ids against
 * the docs and `recommend --help`, which lists them from here). */
#define NX_REC_INVESTIGATIONS(X)                         \
	X(NX_REC_I_DMA_EFF, nx__rec_inv_dma)             \
	X(NX_REC_I_REDUNDANT_DMA, nx__rec_inv_reload)    \
	X(NX_REC_I_TE_INEFF, nx__rec_inv_te_tiles)       \
	X(NX_REC_I_TRANSPOSE, nx__rec_inv_te_transposes) \
	X(NX_REC_I_SERIAL, nx__rec_inv_serial)           \
	X(NX_REC_I_HOTSPOT, nx__rec_inv_hotspot)

#define NX_REC_INV_SLOT(slot, entry) slot,
enum nx_rec_inv_id { NX_REC_INVESTIGATIONS(NX_REC_INV_SLOT) NX_REC_NINV };
#undef NX_REC_INV_SLOT

struct nx_rec_note {
	char *part; /* what cannot be computed (or a warning) */
	char *why;
};

/* Profile features found by the data-quality step. */
struct nx_rec_quality {
	int64_t instructions, dma_packets, dpa_rows, flow_rows, flow_dge, flow_sem, tensors;
	int64_t with_source, with_wait, warnings;
	bool summary, metadata;
	struct nx_rec_note *notes;
	size_t nnotes, cap;
};

struct nx_rec_inputs {
	double total_ns, dma_active_ns, dma_bytes, necessary_bytes;
	double te_active_ns, hw_flops, tp_flops;
	double eng_ns[NX_REC_NENG];
	double dma_bw, te_peak; /* bytes/s, flop/s */
	double dma_engines;     /* DMA engines per NeuronCore */
	const char *flops_source;
};

struct nx_rec_result {
	char *dir;
	char *name;
	const char *source_root; /* --nki-source-root, borrowed; NULL = do not quote code */
	bool details;            /* --details: choices and Step 1 appendix in Markdown */
	bool bounds_only;        /* nx_recommend_opts.bounds_only */
	int window;             /* enum nx_recommend_window */
	int64_t t0, t1;         /* investigation window [t0, t1) */
	int64_t req_t0, req_t1; /* NX_REC_WIN_RANGE: the window asked for, before clipping */
	bool clipped;           /* [req_t0, req_t1) reached past the profile span */
	int64_t span0, span1;   /* the profile's first and last timestamps */
	const char *inputs_source;
	struct nx_rec_quality q;
	struct nx_rec_inputs in;
	double bound[NX_REC_NBOUNDS];
	double speedup[NX_REC_NBOUNDS];
	double gap[NX_REC_NGAPS];
	int bottleneck;         /* enum nx_rec_engine, -1 when unknown */
	struct nx_rec_inv inv[NX_REC_NINV];
	int order[NX_REC_NINV];     /* investigations by decreasing relevance */
	struct nx_rec_scan *scan;   /* what the passes found, while the analysis runs */
	bool no_extent;         /* kernel or dpa window: the table has no rows */
};

extern const char *const nx_rec_engine_name[NX_REC_NENG];
extern const char *const nx_rec_bound_key[NX_REC_NBOUNDS];
extern const char *const nx_rec_gap_key[NX_REC_NGAPS];
extern const char *const nx_rec_gap_label[NX_REC_NGAPS];

/* model.c */
void nx__rec_result_release(struct nx_rec_result *r);
void nx__rec_note(struct nx_rec_quality *q, const char *part, const char *fmt, ...)
	NX_PRINTF(3, 4);
void nx__rec_metric(struct nx_rec_inv *inv, const char *key, const char *label,
		    const char *unit, double v);
double nx__rec_metric_get(const struct nx_rec_inv *inv, const char *key);
void nx__rec_inv_init(struct nx_rec_inv *inv, const char *id, const char *title,
		      const char *group, const char *gap, const char *method);
void nx__rec_inv_set(struct nx_rec_inv *inv, int status, const char *fmt, ...) NX_PRINTF(3, 4);
void nx__rec_table_release(struct nx_rec_table *t);
const char *nx__rec_cell(const struct nx_rec_table *t, size_t row, const char *col);
/* The same for display: "?" when the cell is missing or NULL. */
const char *nx__rec_cellq(const struct nx_rec_table *t, size_t row, const char *col);
/* Runs sql and stores every result row in t (callers LIMIT their queries). */
int nx__rec_query_table(struct nx_duck *d, const char *sql, struct nx_rec_table *t,
			struct nx_err *err);
/* Runs sql (one row) and stores column k in out[k] for each of the n names; a NULL
 * or missing value gives NaN. */
int nx__rec_query_row(struct nx_duck *d, const char *sql, const char *const *names,
		      double *out, size_t n, struct nx_err *err);
/* Appends sql with the window placeholders {T0} and {T1} replaced. */
void nx__rec_sql(struct nx_strbuf *sb, const struct nx_rec_result *r, const char *sql);
/* Time by which the pipeline bound shrinks if `eng` loses `cut_ns`. */
double nx__rec_pipeline_cut(const struct nx_rec_result *r, int eng, double cut_ns);

/* quality.c: normalised rx_* views over the profile tables and the data-quality step
 * (after the passes, whose counts it takes). */
int nx__rec_views(struct nx_duck *d, const char *dir, struct nx_err *err);
int nx__rec_quality(struct nx_duck *d, struct nx_rec_result *r, struct nx_err *err);

/* bounds.c: the window the passes filter by (kernel and dpa windows read their extent
 * first), then, after the passes, the analysed window and the bounds. */
int nx__rec_window_plan(struct nx_duck *d, struct nx_rec_result *r,
			const struct nx_recommend_opts *o, struct nx_err *err);
int nx__rec_window(struct nx_duck *d, struct nx_rec_result *r, const struct nx_recommend_opts *o,
		   struct nx_err *err);
int nx__rec_bounds(struct nx_duck *d, struct nx_rec_result *r, struct nx_err *err);

/* An investigation of recommend. Each inv_*.c defines its entries; investigations.c
 * lists them in the order of enum nx_rec_inv_id (the slot of its result in nx_rec_result.inv). */
struct nx_rec_inv_def {
	const char *id;     /* "dma_efficiency", ...: JSON id */
	const char *title;  /* "DMA efficiency" */
	const char *group;  /* gap group (docs/recommend.md, "Gap groups"), e.g. "1b" */
	const char *gap;    /* label of the gap it explains, NULL when none */
	const char *method; /* "aws" (AWS skill) or "ours" */
	const char *what;   /* context of its errors */
	/* NULL when the profile has what the investigation needs, else the reason */
	const char *(*unavailable)(const struct nx_rec_result *r);
	/* Steps 1 and 2: fills inv (status, summary, metrics, source lines) */
	int (*run)(struct nx_duck *d, struct nx_rec_result *r, struct nx_rec_inv *inv,
		   struct nx_err *err);
	/* What to change in the kernel for a finding: one remedy per line, appended */
	void (*remedies)(const struct nx_rec_result *r, const struct nx_rec_inv *inv,
			 struct nx_strbuf *out);
};

/* DMA efficiency: a descriptor moving fewer bytes per partition than this is small, its
 * fixed cost dominating (docs/recommend.md, "DMA efficiency"); the remedy's target. */
#define NX_REC_SMALL_DESC_BYTES 4096

/* The reason of the investigations that need DMA packet records. */
#define NX_REC_NO_DMA_PACKETS                                                                   \
	"no DmaPacket rows (capture with NEURON_RT_ENABLE_DGE_NOTIFICATIONS=1)"

#define NX_REC_INV_DECLARE(slot, entry) extern const struct nx_rec_inv_def entry;
NX_REC_INVESTIGATIONS(NX_REC_INV_DECLARE)
#undef NX_REC_INV_DECLARE

/* investigations.c: the table, and every investigation run in its order */
extern const struct nx_rec_inv_def *const nx__rec_investigations[NX_REC_NINV];
int nx__rec_investigate(struct nx_duck *d, struct nx_rec_result *r, struct nx_err *err);
/* The entry of an investigation id, NULL when unknown. */
const struct nx_rec_inv_def *nx__rec_investigation(const char *id);

/* analyse.c: one profile, every step. */
int nx__rec_analyse(const struct nx_recommend_opts *o, const char *dir, struct nx_rec_result *r,
		    struct nx_err *err);

/* fmt.c: number formatting shared by the reports. */
void nx__rec_fmt_us(struct nx_strbuf *sb, double ns);
/* The same number without the unit (for table columns whose header says "us"). */
void nx__rec_fmt_us_bare(struct nx_strbuf *sb, double ns);
void nx__rec_fmt_pct(struct nx_strbuf *sb, double frac);
void nx__rec_fmt_delta(struct nx_strbuf *sb, double old_ns, double new_ns);
/* The decisions taken where the reference is ambiguous, printed in every report
 * (docs/recommend.md, "Choices where the reference is ambiguous"). */
extern const char *const nx__rec_choices[][2];
extern const size_t nx__rec_nchoices;

/* report_md.c, report_json.c, compare.c */
void nx__rec_md_bound_name(const struct nx_rec_result *r, int k, struct nx_strbuf *out);
void nx__rec_md_metric(const struct nx_rec_metric *m, struct nx_strbuf *out);
void nx__rec_md_table(const struct nx_rec_table *t, struct nx_strbuf *out);
void nx__rec_md_gaps(const struct nx_rec_result *r, int from, int to, struct nx_strbuf *out);
void nx__rec_md_findings(const struct nx_rec_result *r, struct nx_strbuf *out);
void nx__rec_md_quality(const struct nx_rec_result *r, struct nx_strbuf *out);
void nx__rec_md_choices(struct nx_strbuf *out);
/* "1b" -> "DMA underused: ...", the meaning of an investigation's group. */
const char *nx__rec_group_label(const char *group);
/* What to change in the kernel for a finding: one remedy per line, appended to out. */
void nx__rec_remedies(const struct nx_rec_result *r, const struct nx_rec_inv *inv,
		      struct nx_strbuf *out);
void nx__rec_report_md(const struct nx_rec_result *r, struct nx_strbuf *out);
/* source_text.c: the code of a finding's top source lines, read under root. */
void nx__rec_md_source(const char *root, const struct nx_rec_table *lines, struct nx_strbuf *out);
void nx__rec_report_json(const struct nx_rec_result *r, struct nx_strbuf *out);
void nx__rec_result_json(const struct nx_rec_result *r, struct nx_jw *jw);
void nx__rec_compare_md(const struct nx_rec_result *a, const struct nx_rec_result *b,
			struct nx_strbuf *out);
void nx__rec_compare_json(const struct nx_rec_result *a, const struct nx_rec_result *b,
			  struct nx_strbuf *out);

#endif
