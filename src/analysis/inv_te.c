/* SPDX-License-Identifier: MIT
 * inv_te.c: the two Tensor engine investigations, which share their availability check,
 * their Step 1 query shape and their per-line query:
 *  - inefficiency (gap 2b, docs/recommend.md, "Tensor engine inefficiency"): the achieved
 *    throughput inside the TE active time; Step 2 reads each source line's matmul tile
 *    (K, M from the trailing "K*M" of the operands, N from the second bracket after
 *    src=) and flags dimensions below the maxima K=128, M=128, N=512;
 *  - transposes (gap 2c, docs/recommend.md, "Redundant TE transposes"): the flops of
 *    TRANSPOSE matmuls (identity matmuls of nc_transpose), their minimum TE time at
 *    peak, and the source lines issuing them. */
#include "common/compat.h"
#include "analysis/rec.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* A line's share of the gap (ours): its matmuls' summed duration minus the time their
 * flops need at peak, floored at 0, over the same figure of all lines. */
static const char TILE_LINES_SQL[] =
	", mm AS (SELECT * FROM rx_InstAgg WHERE engine = 'tensor' AND opcode = 'MATMUL'),\n"
	"g AS (\n"
	"    SELECT coalesce(src, '?') AS src, sum(n)::BIGINT AS tiles,\n"
	"        coalesce(sum(flops), 0) AS flops, sum(dur)::DOUBLE AS busy,\n"
	"        arg_min(op, op_start) AS op\n"
	"    FROM mm GROUP BY 1\n"
	"),\n"
	"t AS (\n"
	"    SELECT *,\n"
	"        TRY_CAST(regexp_extract(op, '(\\d+)\\*(\\d+)\\s*$', 1) AS BIGINT) AS kd,\n"
	"        TRY_CAST(regexp_extract(op, '(\\d+)\\*(\\d+)\\s*$', 2) AS BIGINT) AS md,\n"
	"        TRY_CAST(regexp_extract(op, 'src=\\S+\\[[\\d,\\-]+\\]\\[(\\d+),', 1) AS BIGINT) AS nd,\n"
	"        greatest(busy - flops * k.ns_per_flop, 0) AS excess\n"
	"    FROM g, k\n"
	")\n"
	"SELECT src AS source, tiles,\n"
	"    round(flops * 100 / nullif(sum(flops) OVER (), 0), 1) AS pct_of_flops,\n"
	"    kd AS k, md AS m, nd AS n,\n"
	"    round(kd / 128, 2) AS k_of_128, round(md / 128, 2) AS m_of_128,\n"
	"    round(nd / 512, 2) AS n_of_512,\n"
	"    concat_ws(',', CASE WHEN kd < 128 THEN 'K' END, CASE WHEN md < 128 THEN 'M' END,\n"
	"              CASE WHEN nd < 512 THEN 'N' END) AS undersized,\n"
	"    round(excess, 0) AS excess_ns,\n"
	"    round(excess * 100 / nullif(sum(excess) OVER (), 0), 1) AS share_pct\n"
	"FROM t\n"
	"ORDER BY share_pct DESC NULLS LAST, flops DESC, source LIMIT 20";

static const char TP_LINES_SQL[] =
	"SELECT coalesce(src, '?') AS source, sum(n)::BIGINT AS count,\n"
	"    round(sum(flops) / 1e9, 3) AS gflops,\n"
	"    round(sum(flops) * k.ns_per_flop, 0) AS gap_ns,\n"
	"    round(sum(flops) * 100 / nullif(sum(sum(flops)) OVER (), 0), 1) AS share_pct\n"
	"FROM rx_InstAgg, k\n"
	"WHERE engine = 'tensor' AND opcode = 'MATMUL' AND tti = 'TRANSPOSE'\n"
	"GROUP BY 1, k.ns_per_flop ORDER BY share_pct DESC, source LIMIT 20";

/* The Tensor engine investigations need instructions and the TE geometry. */
static const char *te_unavailable(const struct nx_rec_result *r)
{
	if (!r->q.instructions)
		return "no Instruction rows";
	if (isnan(r->in.te_peak))
		return "no Tensor engine geometry in Metadata";
	return NULL;
}

/* Step 2: the source lines, with k.ns_per_flop (the time of one flop at peak). */
static int te_lines(struct nx_duck *d, const struct nx_rec_result *r, const char *tmpl,
		    struct nx_rec_inv *inv, struct nx_err *err)
{
	struct nx_strbuf sql = NX_STRBUF_INIT;
	int rc;

	nx_strbuf_addf(&sql, "WITH k AS (SELECT %.17g AS ns_per_flop)\n", 1e9 / r->in.te_peak);
	nx__rec_sql(&sql, r, tmpl);
	rc = nx__rec_query_table(d, sql.buf, &inv->lines, err);
	nx_strbuf_release(&sql);
	return rc;
}

static int run_tiles(struct nx_duck *d, struct nx_rec_result *r, struct nx_rec_inv *inv,
		     struct nx_err *err)
{
	double v[2], te = r->bound[NX_REC_B_COMP], peak = r->in.te_peak;
	double gap = r->gap[NX_REC_G_TE_UNDERUTIL];
	int64_t n;
	int rc;

	/* Step 1 over the window's matmuls, from the pass over Instruction */
	nx__rec_scan_matmuls(r->scan, &n, &v[1], NULL, NULL, NULL);
	v[0] = (double)n;
	v[1] = nx__rec_as_cell(v[1]);
	inv->gap_ns = gap;
	double tflops = te > 0 ? v[1] / te / 1e3 : 0;
	nx__rec_metric(inv, "te_peak_tflops", "TE peak", "TFLOPS", peak / 1e12);
	nx__rec_metric(inv, "achieved_tflops", "achieved", "TFLOPS", tflops);
	nx__rec_metric(inv, "utilization_pct", "utilisation", "%", tflops * 1e14 / peak);
	nx__rec_metric(inv, "matmul_count", "MATMUL count", "", v[0]);
	nx__rec_metric(inv, "underutil_gap_ns", "TE underutil gap", "ns", gap);
	if (!(v[0] > 0)) {
		nx__rec_inv_set(inv, NX_REC_NOTHING, "no MATMUL instruction in the window");
		return 0;
	}
	rc = te_lines(d, r, TILE_LINES_SQL, inv, err);
	if (rc)
		return rc;

	/* the part of the gap held by lines with an undersized K or M (or N) */
	double share = 0;
	const char *first = NULL;
	for (size_t i = 0; i < inv->lines.nrows; i++) {
		const char *u = nx__rec_cell(&inv->lines, i, "undersized");
		const char *s = nx__rec_cell(&inv->lines, i, "share_pct");
		if (u && *u) {
			share += s ? strtod(s, NULL) : 0;
			if (!first)
				first = nx__rec_cell(&inv->lines, i, "source");
		}
	}
	if (!first) {
		nx__rec_inv_set(inv, NX_REC_NOTHING, "TE reaches %.1f%% of peak and every matmul tile is "
				"full size (K=128, M=128, N=512): the %.2f us gap is not explained by "
				"tiles (throttling, pipelining, placement)",
				tflops * 1e14 / peak, gap / 1e3);
		return 0;
	}
	inv->relevance_ns = nx__rec_pipeline_cut(r, NX_REC_ENG_TENSOR, gap * share / 100);
	nx__rec_inv_set(inv, NX_REC_FOUND, "TE reaches %.1f%% of peak; undersized tiles at %s "
			"(lines with undersized tiles hold %.1f%% of the gap)",
			tflops * 1e14 / peak, first, share);
	return 0;
}

static int run_transposes(struct nx_duck *d, struct nx_rec_result *r, struct nx_rec_inv *inv,
			  struct nx_err *err)
{
	double v[4], peak = r->in.te_peak;
	int64_t n_tp, n_reg;
	int rc;

	/* Step 1 over the window's matmuls, from the pass over Instruction */
	nx__rec_scan_matmuls(r->scan, NULL, &v[2], &n_tp, &n_reg, &v[3]);
	v[0] = (double)n_tp;
	v[1] = (double)n_reg;
	v[2] = nx__rec_as_cell(v[2]);
	v[3] = nx__rec_as_cell(v[3]);
	inv->gap_ns = r->gap[NX_REC_G_TRANSPOSE];
	nx__rec_metric(inv, "hw_flops", "hw_flops", "flops", v[2]);
	nx__rec_metric(inv, "transpose_flops", "transpose_flops", "flops", v[3]);
	nx__rec_metric(inv, "useful_flops", "useful_flops", "flops", v[2] - v[3]);
	nx__rec_metric(inv, "transpose_pct", "transpose share of flops", "%",
		       v[2] > 0 ? v[3] * 100 / v[2] : 0);
	nx__rec_metric(inv, "transpose_gap_ns", "minimum TE time of transposes", "ns",
		       v[3] * 1e9 / peak);
	nx__rec_metric(inv, "transpose_matmuls", "TRANSPOSE matmuls", "", v[0]);
	nx__rec_metric(inv, "regular_matmuls", "REGULAR matmuls", "", v[1]);
	if (!(v[3] > 0)) {
		nx__rec_inv_set(inv, NX_REC_NOTHING, "no TRANSPOSE matmul: no on-device transposes");
		return 0;
	}
	rc = te_lines(d, r, TP_LINES_SQL, inv, err);
	if (rc)
		return rc;
	/* transposes take their flop share of the TE active time */
	inv->relevance_ns = nx__rec_pipeline_cut(r, NX_REC_ENG_TENSOR,
						 r->bound[NX_REC_B_COMP] * v[3] / v[2]);
	nx__rec_inv_set(inv, NX_REC_FOUND, "%.0f TRANSPOSE matmuls are %.1f%% of the TE flops "
			"(%.2f us at peak); first line %s",
			v[0], v[3] * 100 / v[2], v[3] / peak * 1e6,
			nx__rec_cellq(&inv->lines, 0, "source"));
	return 0;
}

/* What to change in the kernel for a finding (render). */
static void tiles_remedies(const struct nx_rec_result *r, const struct nx_rec_inv *inv,
			   struct nx_strbuf *out)
{
	(void)r;
	(void)inv;
	nx_strbuf_addstr(out, "Fill the Tensor engine: K (contraction, on partitions) and M "
			 "(stationary free size) up to 128, N (moving free size) up to 512. An "
			 "undersized K or M cuts throughput in proportion; a small N costs "
			 "little. Merge or pad small matmuls, or re-tile so the contraction uses "
			 "128 partitions.\n"
			 "Where tiles are already full, the time is lost to stalls: "
			 "double-buffer the operand loads (two or more buffers per tile pool) so "
			 "the next tile arrives while the current matmul runs, and issue "
			 "matmuls back to back into the same PSUM accumulation.\n");
}

static void transposes_remedies(const struct nx_rec_result *r, const struct nx_rec_inv *inv,
				struct nx_strbuf *out)
{
	(void)r;
	(void)inv;
	nx_strbuf_addstr(out, "Every `nc_transpose` is an identity matmul that adds nothing "
			 "to the result. Produce or store the operand in the layout the "
			 "matmul wants (e.g. an lhsT tensor written transposed upstream), or "
			 "transpose once and reuse the result across the loop instead of "
			 "transposing in every iteration.\n");
}

const struct nx_rec_inv_def nx__rec_inv_te_tiles = {
	.id = "te_inefficiency", .title = "Tensor engine inefficiency (tile sizes)", .group = "2b",
	.gap = "TE underutil", .method = "aws", .what = "Tensor engine inefficiency",
	.unavailable = te_unavailable, .run = run_tiles, .remedies = tiles_remedies,
};

const struct nx_rec_inv_def nx__rec_inv_te_transposes = {
	.id = "te_transposes", .title = "Redundant Tensor engine transposes", .group = "2c",
	.gap = "Transpose", .method = "aws", .what = "Tensor engine transposes",
	.unavailable = te_unavailable, .run = run_transposes, .remedies = transposes_remedies,
};
