/* SPDX-License-Identifier: MIT
 * bounds.c: the analysed window, the bound inputs (from Summary for the whole kernel, recomputed
 * from the raw tables for a window), and the three bound families with their gaps, the bottleneck
 * engine and bn_speedup (docs/recommend.md, "Bounds" and "Gaps"). */
#include "common/compat.h"
#include "analysis/rec.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Profile span: first start and last end over instructions and DMA packets. */
static const char SPAN_SQL[] =
	"SELECT min(s) AS s, max(e) AS e FROM (\n"
	"    SELECT min(start_ts) AS s, max(end_ts) AS e FROM rx_Instruction\n"
	"    UNION ALL SELECT min(start_ts), max(end_ts) FROM rx_DmaPacket)";

static const char KERNEL_EXTENT_SQL[] =
	"SELECT min(start_ts) AS s, max(end_ts) AS e FROM rx_DmaPacket\n"
	"WHERE coalesce(queue_type, '') <> 'instruction' AND transfer_bytes > 4";

static const char DPA_EXTENT_SQL[] =
	"SELECT min(start_ts) AS s, max(end_ts) AS e FROM rx_DmaPacketAggregated";

/* Bound inputs over [T0, T1): durations clipped to the window and interval-merged
 * (docs/recommend.md, "Window"), bytes and flops attributed by start_ts. */
static const char WINDOW_INPUTS_SQL[] =
	"WITH iv AS (\n"
	"    SELECT 'dma' AS k, greatest(start_ts, {T0}) AS s, least(end_ts, {T1}) AS e\n"
	"    FROM rx_DmaPacket\n"
	"    UNION ALL\n"
	"    SELECT engine, greatest(start_ts, {T0}), least(end_ts, {T1}) FROM rx_ActiveTime\n"
	"    WHERE engine IN ('tensor', 'vector', 'scalar', 'gpsimd')\n"
	"),\n"
	"ord AS (\n"
	"    SELECT k, s, e, max(e) OVER (PARTITION BY k ORDER BY s, e\n"
	"                                 ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING) AS reach\n"
	"    FROM iv WHERE e > s\n"
	"),\n"
	"runs AS (\n"
	"    SELECT k, s, e, sum(CASE WHEN reach IS NULL OR s > reach THEN 1 ELSE 0 END)\n"
	"                    OVER (PARTITION BY k ORDER BY s, e ROWS UNBOUNDED PRECEDING) AS run\n"
	"    FROM ord\n"
	"),\n"
	"merged AS (\n"
	"    SELECT k, sum(len)::DOUBLE AS ns\n"
	"    FROM (SELECT k, max(e) - min(s) AS len FROM runs GROUP BY k, run) GROUP BY k\n"
	"),\n"
	"has AS (SELECT (SELECT count(*) FROM rx_DmaPacket) > 0 AS dma)\n"
	"SELECT ({T1} - {T0})::DOUBLE AS total_ns,\n"
	"    CASE WHEN has.dma THEN coalesce((SELECT ns FROM merged WHERE k = 'dma'), 0) END\n"
	"        AS dma_active_ns,\n"
	"    CASE WHEN has.dma THEN coalesce((\n"
	"        SELECT sum(transfer_bytes)::DOUBLE FROM rx_DmaPacket\n"
	"        WHERE coalesce(queue_type, '') <> 'instruction' AND transfer_bytes > 4\n"
	"          AND start_ts >= {T0} AND start_ts < {T1}), 0) END AS dma_bytes,\n"
	"    (SELECT sum(size)::DOUBLE FROM rx_TensorInfo WHERE type IN ('IN', 'OUT'))\n"
	"        AS necessary_bytes,\n"
	"    coalesce((SELECT ns FROM merged WHERE k = 'tensor'), 0) AS te_ns,\n"
	"    coalesce((SELECT ns FROM merged WHERE k = 'vector'), 0) AS ve_ns,\n"
	"    coalesce((SELECT ns FROM merged WHERE k = 'scalar'), 0) AS se_ns,\n"
	"    coalesce((SELECT ns FROM merged WHERE k = 'gpsimd'), 0) AS gp_ns,\n"
	"    coalesce((SELECT sum(adjusted_flops) FROM rx_Instruction\n"
	"              WHERE engine = 'tensor' AND opcode = 'MATMUL'\n"
	"                AND start_ts >= {T0} AND start_ts < {T1}), 0) AS hw_flops,\n"
	"    coalesce((SELECT sum(adjusted_flops) FROM rx_Instruction\n"
	"              WHERE engine = 'tensor' AND opcode = 'MATMUL'\n"
	"                AND tensor_instruction_type = 'TRANSPOSE'\n"
	"                AND start_ts >= {T0} AND start_ts < {T1}), 0) AS tp_flops\n"
	"FROM has";

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

static const char *const input_names[] = {
	"total_ns", "dma_active_ns", "dma_bytes", "necessary_bytes", "te_ns", "ve_ns", "se_ns",
	"gp_ns", "hw_flops", "tp_flops",
};
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

int nx__rec_window(struct nx_duck *d, struct rx_result *r, const struct nx_recommend_opts *o,
		   struct nx_err *err)
{
	int rc = extent(d, SPAN_SQL, &r->span0, &r->span1, err);
	int64_t end;

	if (rc < 0)
		return nx_err_wrap(err, "profile span");
	if (rc > 0)
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
		rc = extent(d, KERNEL_EXTENT_SQL, &r->t0, &r->t1, err);
		break;
	case NX_REC_WIN_DPA:
		rc = extent(d, DPA_EXTENT_SQL, &r->t0, &r->t1, err);
		break;
	}
	if (rc < 0)
		return nx_err_wrap(err, "window extent");
	if (rc > 0)
		return nx_errf(err, NX_EUSAGE, "window '%s' needs %s rows, and the profile has none",
			       o->window == NX_REC_WIN_KERNEL ? "kernel" : "dpa",
			       o->window == NX_REC_WIN_KERNEL ? "DmaPacket" : "DmaPacketAggregated");
	return 0;
}

static int window_inputs(struct nx_duck *d, const struct rx_result *r, double *v,
			 struct nx_err *err)
{
	struct nx_strbuf sql = NX_STRBUF_INIT;
	int rc;

	nx__rec_sql(&sql, r, WINDOW_INPUTS_SQL);
	rc = nx__rec_query_row(d, sql.buf, input_names, v, I_N, err);
	nx_strbuf_release(&sql);
	return rc ? nx_err_wrap(err, "bound inputs in the window") : 0;
}

/* Whole kernel: Summary first, each missing field recomputed from the raw tables. */
static int summary_inputs(struct nx_duck *d, struct rx_result *r, double *v,
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

static void bounds_from_inputs(struct rx_result *r)
{
	struct rx_inputs *in = &r->in;
	double *b = r->bound, *g = r->gap;
	double ns_per_byte = in->dma_bw > 0 ? 1e9 / in->dma_bw : NAN;
	double ns_per_flop = in->te_peak > 0 ? 1e9 / in->te_peak : NAN;

	b[RX_B_TOTAL] = in->total_ns;
	b[RX_B_MEM] = in->dma_active_ns;
	b[RX_B_MEM_IDEAL] = in->dma_bytes * ns_per_byte;
	b[RX_B_MEM_NO_RELOADS] = in->necessary_bytes * ns_per_byte;
	b[RX_B_COMP] = in->te_active_ns;
	b[RX_B_COMP_IDEAL] = in->hw_flops * ns_per_flop;
	b[RX_B_COMP_USEFUL] = (in->hw_flops - in->tp_flops) * ns_per_flop;

	/* pipeline: the busiest engine, first maximum in engine order */
	r->bottleneck = -1;
	b[RX_B_PIPELINE] = NAN;
	for (int e = 0; e < RX_NENG; e++) {
		if (isnan(in->eng_ns[e]))
			continue;
		if (r->bottleneck < 0 || in->eng_ns[e] > b[RX_B_PIPELINE]) {
			r->bottleneck = e;
			b[RX_B_PIPELINE] = in->eng_ns[e];
		}
	}

	/* bn_speedup: a memory bound only shortens DMA, a compute bound only Tensor */
	for (int k = 0; k < RX_NBOUNDS; k++) {
		int impacted = k >= RX_B_MEM && k <= RX_B_MEM_NO_RELOADS ? RX_DMA
			     : k >= RX_B_COMP && k <= RX_B_COMP_USEFUL ? RX_TENSOR : -1;
		double floor_ns = 0;
		if (k == RX_B_TOTAL) {
			r->speedup[k] = isnan(b[k]) ? NAN : 1.0;
			continue;
		}
		if (k == RX_B_PIPELINE) {
			r->speedup[k] = ratio(b[RX_B_TOTAL], b[k]);
			continue;
		}
		for (int e = 0; e < RX_NENG; e++)
			if (e != impacted && !isnan(in->eng_ns[e]))
				floor_ns = fmax(floor_ns, in->eng_ns[e]);
		r->speedup[k] = isnan(b[k]) ? NAN : ratio(b[RX_B_TOTAL], fmax(b[k], floor_ns));
	}

	g[RX_G_DMA_IDLE] = b[RX_B_TOTAL] - b[RX_B_MEM];
	g[RX_G_DMA_INEFF] = b[RX_B_MEM] - b[RX_B_MEM_IDEAL];
	g[RX_G_EXCESS] = b[RX_B_MEM_IDEAL] - b[RX_B_MEM_NO_RELOADS];
	g[RX_G_TE_IDLE] = b[RX_B_TOTAL] - b[RX_B_COMP];
	g[RX_G_TE_UNDERUTIL] = b[RX_B_COMP] - b[RX_B_COMP_IDEAL];
	g[RX_G_TRANSPOSE] = b[RX_B_COMP_IDEAL] - b[RX_B_COMP_USEFUL];
	g[RX_G_PIPELINE] = b[RX_B_TOTAL] - b[RX_B_PIPELINE];
}

int nx__rec_bounds(struct nx_duck *d, struct rx_result *r, struct nx_err *err)
{
	static const char *const cnames[] = { "dma_bw", "te_peak", "dma_engines" };
	double v[I_N], c[3];
	struct rx_inputs *in = &r->in;
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
	in->eng_ns[RX_TENSOR] = v[I_TE];
	in->eng_ns[RX_VECTOR] = v[I_VE];
	in->eng_ns[RX_SCALAR] = v[I_SE];
	in->eng_ns[RX_GPSIMD] = v[I_GP];
	in->eng_ns[RX_DMA] = in->dma_active_ns;
	bounds_from_inputs(r);
	return 0;
}
