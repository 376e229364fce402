/* SPDX-License-Identifier: MIT
 * bounds.c: the analysed window, the bound inputs (from Summary for the whole kernel, recomputed
 * from the raw tables for a window), and the three bound families with their gaps, the bottleneck
 * engine and bn_speedup (docs/recommend.md, "Bounds" and "Gaps"). */
#include "common/compat.h"
#include "analysis/rec.h"
#include "analysis/scan.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static const char DPA_EXTENT_SQL[] =
	"SELECT min(start_ts) AS s, max(end_ts) AS e FROM rx_DmaPacketAggregated";

static const char NECESSARY_SQL[] =
	"SELECT sum(size)::DOUBLE AS n FROM rx_TensorInfo WHERE type IN ('IN', 'OUT')";

/* Whole-kernel inputs from Summary (times in seconds there). NaN reads as missing. */
static const char SUMMARY_INPUTS_SQL[] =
	"SELECT total_time * 1e9 AS total_ns, dma_active_time * 1e9 AS dma_active_ns,\n"
	"    dma_transfer_total_bytes AS dma_bytes,\n"
	"    inputs_outputs_weights_size_bytes AS necessary_bytes,\n"
	"    tensor_engine_active_time * 1e9 AS te_ns, vector_engine_active_time * 1e9 AS ve_ns,\n"
	"    scalar_engine_active_time * 1e9 AS se_ns, gpsimd_engine_active_time * 1e9 AS gp_ns,\n"
	"    adjusted_hardware_flops AS adj_flops, adjusted_transpose_flops AS adj_tp_flops,\n"
	"    hardware_flops AS raw_flops, transpose_flops AS raw_tp_flops\n"
	"FROM rx_Summary LIMIT 1";

static const char CONSTANTS_SQL[] =
	"SELECT dma_ddr_bandwidth AS dma_bw,\n"
	"    tensor_engine_num_rows * tensor_engine_num_cols * 2.0 * tensor_engine_clock_freq * 1e9\n"
	"        AS te_peak,\n"
	"    num_dma_engines_per_neuroncore AS dma_engines\n"
	"FROM rx_Metadata LIMIT 1";

enum { I_TOTAL, I_DMA, I_BYTES, I_NEEDED, I_TE, I_VE, I_SE, I_GP, I_FLOPS, I_TP, I_N };

struct extent_cells {
	int64_t v[2];
	bool set[2];
};

/* Timestamps are read as exact integers, not through doubles. */
static void extent_cell(void *arg, size_t row, const char *column, int kind, const char *text)
{
	struct extent_cells *x = arg;
	int i = column[0] == 's' ? 0 : 1;

	if (row || kind != NX_CELL_INT || !text)
		return;
	x->v[i] = strtoll(text, NULL, 10);
	x->set[i] = true;
}

static int extent(struct nx_duck *d, const char *sql, int64_t *t0, int64_t *t1,
		  struct nx_err *err)
{
	struct extent_cells x = { { 0, 0 }, { false, false } };
	int rc = nx_duck_query_cells(d, sql, extent_cell, &x, err);

	if (rc)
		return rc;
	if (!x.set[0] || !x.set[1])
		return 1;
	*t0 = x.v[0];
	*t1 = x.v[1];
	return 0;
}

int nx__rec_window_plan(struct nx_duck *d, struct nx_rec_result *r,
			const struct nx_recommend_opts *o, struct nx_err *err)
{
	struct nx_rec_scan_window *w = &r->scan->win;
	int rc = 0;

	w->whole = o->window == NX_REC_WIN_WHOLE;
	w->t0 = o->t0_ns;
	w->t1 = o->t1_ns;
	if (o->window == NX_REC_WIN_KERNEL) /* a pass over DmaPacket, in C */
		rc = nx__rec_kernel_extent(d, r->scan, &w->t0, &w->t1, err);
	else if (o->window == NX_REC_WIN_DPA)
		rc = extent(d, DPA_EXTENT_SQL, &w->t0, &w->t1, err);
	if (rc < 0)
		return nx_err_wrap(err, "window extent");
	/* no rows for the extent: a usage error once the span is checked (nx__rec_window) */
	r->no_extent = rc > 0;
	w->whole |= r->no_extent;
	return 0;
}

/* The profile span from the passes: first start and last end over instructions and DMA
 * packets. 1 when either has none. */
static int span(const struct nx_rec_scan *sc, int64_t *t0, int64_t *t1)
{
	if (!sc->in_lo_set && !sc->pk_lo_set)
		return 1;
	if (!sc->in_hi_set && !sc->pk_hi_set)
		return 1;
	*t0 = !sc->pk_lo_set || (sc->in_lo_set && sc->in_lo < sc->pk_lo) ? sc->in_lo : sc->pk_lo;
	*t1 = !sc->pk_hi_set || (sc->in_hi_set && sc->in_hi > sc->pk_hi) ? sc->in_hi : sc->pk_hi;
	return 0;
}

int nx__rec_window(struct nx_duck *d, struct nx_rec_result *r, const struct nx_recommend_opts *o,
		   struct nx_err *err)
{
	int64_t end;

	if (span(r->scan, &r->span0, &r->span1))
		return nx_errf(err, NX_ENOTFOUND, "the profile has no instructions and no DMA packets");
	r->window = o->window;
	switch (o->window) {
	case NX_REC_WIN_WHOLE:
		r->t0 = r->span0;
		r->t1 = r->span1 + 1;
		return 0;
	case NX_REC_WIN_RANGE:
		/* a window reaching past the end of the kernel (its last event, or its first
		 * event plus Summary.total_time) is clipped there and the report says so; one
		 * that misses the profile entirely would only report made-up idle time */
		r->req_t0 = o->t0_ns;
		r->req_t1 = o->t1_ns;
		if (o->t1_ns <= o->t0_ns)
			return nx_errf(err, NX_EUSAGE, "empty window %" PRId64 ":%" PRId64, o->t0_ns,
				       o->t1_ns);
		end = r->span1 + 1;
		if (r->q.summary) {
			/* the kernel may last longer than its last event (Summary.total_time) */
			static const char *const names[] = { "t" };
			double total_ns;
			if (nx__rec_query_row(d, "SELECT total_time * 1e9 AS t FROM rx_Summary LIMIT 1",
					      names, &total_ns, 1, err))
				return nx_err_wrap(err, "kernel duration");
			if (total_ns > 0 && r->span0 + (int64_t)llround(total_ns) > end)
				end = r->span0 + (int64_t)llround(total_ns);
		}
		if (o->t1_ns <= r->span0 || o->t0_ns >= end)
			return nx_errf(err, NX_EUSAGE, "window %" PRId64 ":%" PRId64 " lies outside "
				       "the profile, which spans %" PRId64 ":%" PRId64 " ns",
				       o->t0_ns, o->t1_ns, r->span0, end);
		/* the start is kept: a kernel may begin before its first recorded event */
		r->t0 = o->t0_ns;
		r->t1 = o->t1_ns > end ? end : o->t1_ns;
		r->clipped = r->t0 != o->t0_ns || r->t1 != o->t1_ns;
		return 0;
	case NX_REC_WIN_KERNEL:
	case NX_REC_WIN_DPA:
		break;
	}
	if (r->no_extent)
		return nx_errf(err, NX_EUSAGE, "window '%s' needs %s rows, and the profile has none",
			       o->window == NX_REC_WIN_KERNEL ? "kernel" : "dpa",
			       o->window == NX_REC_WIN_KERNEL ? "DmaPacket" : "DmaPacketAggregated");
	r->t0 = r->scan->win.t0;
	r->t1 = r->scan->win.t1;
	return 0;
}

/* Bound inputs over [T0, T1) from the passes (docs/recommend.md, "Window"): durations
 * clipped to the window and merged, bytes and flops counted by start_ts. Figures that
 * SQL gave as DOUBLE keep the precision its cells had. */
static int window_inputs(struct nx_duck *d, const struct nx_rec_result *r, double *v,
			 struct nx_err *err)
{
	static const char *const names[] = { "n" };
	const struct nx_rec_scan *sc = r->scan;
	int64_t eng[4];
	double flops, tp_flops;
	int rc;

	if ((rc = nx__rec_scan_passes(d, r->scan, err)) ||
	    (rc = nx__rec_query_row(d, NECESSARY_SQL, names, &v[I_NEEDED], 1, err)) ||
	    (rc = nx__rec_engine_unions(d, sc, r->t0, r->t1, eng, err)))
		return nx_err_wrap(err, "bound inputs in the window");
	nx__rec_scan_matmuls(sc, NULL, &flops, NULL, NULL, &tp_flops);
	v[I_TOTAL] = nx__rec_as_cell((double)(r->t1 - r->t0));
	v[I_DMA] = sc->packets ? nx__rec_as_cell((double)sc->dma_union) : NAN;
	v[I_BYTES] = sc->packets ? nx__rec_as_cell(sc->dma_bytes) : NAN;
	v[I_TE] = nx__rec_as_cell((double)eng[0]);
	v[I_VE] = nx__rec_as_cell((double)eng[1]);
	v[I_SE] = nx__rec_as_cell((double)eng[2]);
	v[I_GP] = nx__rec_as_cell((double)eng[3]);
	v[I_FLOPS] = nx__rec_as_cell(flops);
	v[I_TP] = nx__rec_as_cell(tp_flops);
	return 0;
}

/* Whole kernel: Summary first, each missing field recomputed from the raw tables. */
static int summary_inputs(struct nx_duck *d, struct nx_rec_result *r, double *v,
			  struct nx_err *err)
{
	static const char *const names[] = {
		"total_ns", "dma_active_ns", "dma_bytes", "necessary_bytes", "te_ns", "ve_ns",
		"se_ns", "gp_ns", "adj_flops", "adj_tp_flops", "raw_flops", "raw_tp_flops",
	};
	double s[12], raw[I_N];
	bool missing = false;
	int rc = nx__rec_query_row(d, SUMMARY_INPUTS_SQL, names, s, 12, err);

	if (rc)
		return nx_err_wrap(err, "reading Summary");
	for (int i = 0; i < I_FLOPS; i++)
		v[i] = s[i];
	if (!isnan(s[8])) {
		v[I_FLOPS] = s[8];
		v[I_TP] = isnan(s[9]) ? 0 : s[9]; /* NaN when there are no transposes */
		r->in.flops_source = "Summary.adjusted_hardware_flops (bf16-equivalent)";
	} else if (!isnan(s[10])) {
		v[I_FLOPS] = s[10];
		v[I_TP] = isnan(s[11]) ? 0 : s[11];
		r->in.flops_source = "Summary.hardware_flops (raw; no adjusted field)";
	} else {
		v[I_FLOPS] = v[I_TP] = NAN;
	}
	r->inputs_source = "Summary";
	for (int i = 0; i < I_N; i++)
		missing |= isnan(v[i]) && (i != I_DMA && i != I_BYTES);
	missing |= r->q.dma_packets > 0 && (isnan(v[I_DMA]) || isnan(v[I_BYTES]));
	if (!missing)
		return 0;
	rc = window_inputs(d, r, raw, err);
	if (rc)
		return rc;
	for (int i = 0; i < I_N; i++)
		if (isnan(v[i]) && !isnan(raw[i]))
			v[i] = raw[i];
	if (isnan(s[8]) && isnan(s[10]))
		r->in.flops_source = "Instruction.adjusted_flops (bf16-equivalent)";
	r->inputs_source = r->q.summary ? "Summary, missing fields recomputed from the raw tables"
					: "raw tables over the whole profile span (no Summary)";
	return 0;
}

static double ratio(double a, double b)
{
	return b > 0 ? a / b : NAN;
}

static void bounds_from_inputs(struct nx_rec_result *r)
{
	struct nx_rec_inputs *in = &r->in;
	double *b = r->bound, *g = r->gap;
	double ns_per_byte = in->dma_bw > 0 ? 1e9 / in->dma_bw : NAN;
	double ns_per_flop = in->te_peak > 0 ? 1e9 / in->te_peak : NAN;

	b[NX_REC_B_TOTAL] = in->total_ns;
	b[NX_REC_B_MEM] = in->dma_active_ns;
	b[NX_REC_B_MEM_IDEAL] = in->dma_bytes * ns_per_byte;
	b[NX_REC_B_MEM_NO_RELOADS] = in->necessary_bytes * ns_per_byte;
	b[NX_REC_B_COMP] = in->te_active_ns;
	b[NX_REC_B_COMP_IDEAL] = in->hw_flops * ns_per_flop;
	b[NX_REC_B_COMP_USEFUL] = (in->hw_flops - in->tp_flops) * ns_per_flop;

	/* pipeline: the busiest engine, first maximum in engine order */
	r->bottleneck = -1;
	b[NX_REC_B_PIPELINE] = NAN;
	for (int e = 0; e < NX_REC_NENG; e++) {
		if (isnan(in->eng_ns[e]))
			continue;
		if (r->bottleneck < 0 || in->eng_ns[e] > b[NX_REC_B_PIPELINE]) {
			r->bottleneck = e;
			b[NX_REC_B_PIPELINE] = in->eng_ns[e];
		}
	}

	/* bn_speedup: a memory bound only shortens DMA, a compute bound only Tensor */
	for (int k = 0; k < NX_REC_NBOUNDS; k++) {
		int impacted = -1;
		if (k >= NX_REC_B_MEM && k <= NX_REC_B_MEM_NO_RELOADS)
			impacted = NX_REC_ENG_DMA;
		else if (k >= NX_REC_B_COMP && k <= NX_REC_B_COMP_USEFUL)
			impacted = NX_REC_ENG_TENSOR;
		double floor_ns = 0;
		if (k == NX_REC_B_TOTAL) {
			r->speedup[k] = isnan(b[k]) ? NAN : 1.0;
			continue;
		}
		if (k == NX_REC_B_PIPELINE) {
			r->speedup[k] = ratio(b[NX_REC_B_TOTAL], b[k]);
			continue;
		}
		for (int e = 0; e < NX_REC_NENG; e++)
			if (e != impacted && !isnan(in->eng_ns[e]))
				floor_ns = fmax(floor_ns, in->eng_ns[e]);
		r->speedup[k] = isnan(b[k]) ? NAN : ratio(b[NX_REC_B_TOTAL], fmax(b[k], floor_ns));
	}

	g[NX_REC_G_DMA_IDLE] = b[NX_REC_B_TOTAL] - b[NX_REC_B_MEM];
	g[NX_REC_G_DMA_INEFF] = b[NX_REC_B_MEM] - b[NX_REC_B_MEM_IDEAL];
	g[NX_REC_G_EXCESS] = b[NX_REC_B_MEM_IDEAL] - b[NX_REC_B_MEM_NO_RELOADS];
	g[NX_REC_G_TE_IDLE] = b[NX_REC_B_TOTAL] - b[NX_REC_B_COMP];
	g[NX_REC_G_TE_UNDERUTIL] = b[NX_REC_B_COMP] - b[NX_REC_B_COMP_IDEAL];
	g[NX_REC_G_TRANSPOSE] = b[NX_REC_B_COMP_IDEAL] - b[NX_REC_B_COMP_USEFUL];
	g[NX_REC_G_PIPELINE] = b[NX_REC_B_TOTAL] - b[NX_REC_B_PIPELINE];
}

int nx__rec_bounds(struct nx_duck *d, struct nx_rec_result *r, struct nx_err *err)
{
	static const char *const cnames[] = { "dma_bw", "te_peak", "dma_engines" };
	double v[I_N], c[3];
	struct nx_rec_inputs *in = &r->in;
	int rc = nx__rec_query_row(d, CONSTANTS_SQL, cnames, c, 3, err);

	if (rc)
		return nx_err_wrap(err, "reading Metadata");
	in->dma_bw = c[0];
	in->te_peak = c[1];
	in->dma_engines = isnan(c[2]) || c[2] <= 0 ? 16 : c[2];

	if (r->window == NX_REC_WIN_WHOLE && r->q.summary) {
		rc = summary_inputs(d, r, v, err);
	} else {
		rc = window_inputs(d, r, v, err);
		in->flops_source = "Instruction.adjusted_flops (bf16-equivalent)";
		r->inputs_source = r->window == NX_REC_WIN_WHOLE
			? "raw tables over the whole profile span (no Summary)"
			: "raw tables clipped to the window";
	}
	if (rc)
		return rc;
	in->total_ns = v[I_TOTAL];
	in->dma_active_ns = r->q.dma_packets ? v[I_DMA] : NAN;
	in->dma_bytes = r->q.dma_packets ? v[I_BYTES] : NAN;
	in->necessary_bytes = r->q.tensors ? v[I_NEEDED] : NAN;
	in->te_active_ns = v[I_TE];
	in->hw_flops = v[I_FLOPS];
	in->tp_flops = v[I_TP];
	in->eng_ns[NX_REC_ENG_TENSOR] = v[I_TE];
	in->eng_ns[NX_REC_ENG_VECTOR] = v[I_VE];
	in->eng_ns[NX_REC_ENG_SCALAR] = v[I_SE];
	in->eng_ns[NX_REC_ENG_GPSIMD] = v[I_GP];
	in->eng_ns[NX_REC_ENG_DMA] = in->dma_active_ns;
	bounds_from_inputs(r);
	return 0;
}
