/* SPDX-License-Identifier: MIT
 * inv_tensor.c: Tensor engine inefficiency (gap 2b, analysis.md §2.3). Step 1 gives
 * the achieved throughput inside the TE active time; Step 2 reads each source line's
 * matmul tile (K, M from the trailing "K*M" of the operands, N from the second
 * bracket after src=) and flags dimensions below the maxima K=128, M=128, N=512. */
#include "common/compat.h"
#include "analysis/rec.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static const char STEP1_SQL[] =
	"SELECT count(*) AS n, coalesce(sum(adjusted_flops), 0) AS flops FROM rx_Inst\n"
	"WHERE engine = 'tensor' AND opcode = 'MATMUL' AND start_ts >= {T0} AND start_ts < {T1}";

/* A line's share of the gap (ours): its matmuls' summed duration minus the time their
 * flops need at peak, floored at 0, over the same figure of all lines. */
static const char LINES_SQL[] =
	", mm AS (\n"
	"    SELECT * FROM rx_Inst\n"
	"    WHERE engine = 'tensor' AND opcode = 'MATMUL' AND start_ts >= {T0} AND start_ts < {T1}\n"
	"),\n"
	"g AS (\n"
	"    SELECT coalesce(src, '?') AS src, count(*) AS tiles,\n"
	"        coalesce(sum(adjusted_flops), 0) AS flops, sum(duration_ns)::DOUBLE AS busy,\n"
	"        arg_min(operands, start_ts) AS op\n"
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

int nx__rec_inv_tensor(struct nx_duck *d, struct rx_result *r, struct nx_err *err)
{
	static const char *const names[] = { "n", "flops" };
	struct rx_inv *inv = &r->inv[RX_I_TE_INEFF];
	struct nx_strbuf sql = NX_STRBUF_INIT;
	double v[2], te = r->bound[RX_B_COMP], peak = r->in.te_peak;
	double gap = r->gap[RX_G_TE_UNDERUTIL];
	int rc;

	nx__rec_inv_init(inv, "te_inefficiency", "Tensor engine inefficiency (tile sizes)", "2b",
			 "TE underutil", "aws");
	if (nx__rec_te_unavailable(r, inv))
		return 0;
	nx__rec_sql(&sql, r, STEP1_SQL);
	rc = nx__rec_query_row(d, sql.buf, names, v, 2, err);
	if (rc)
		goto out;
	inv->gap_ns = gap;
	double tflops = te > 0 ? v[1] / te / 1e3 : 0;
	nx__rec_metric(inv, "te_peak_tflops", "TE peak", "TFLOPS", peak / 1e12);
	nx__rec_metric(inv, "achieved_tflops", "achieved", "TFLOPS", tflops);
	nx__rec_metric(inv, "utilization_pct", "utilisation", "%", tflops * 1e14 / peak);
	nx__rec_metric(inv, "matmul_count", "MATMUL count", "", v[0]);
	nx__rec_metric(inv, "underutil_gap_ns", "TE underutil gap", "ns", gap);
	if (!(v[0] > 0)) {
		nx__rec_inv_set(inv, RX_NOTHING, "no MATMUL instruction in the window");
		goto out;
	}
	nx_strbuf_reset(&sql);
	nx_strbuf_addf(&sql, "WITH k AS (SELECT %.17g AS ns_per_flop)\n", 1e9 / peak);
	nx__rec_sql(&sql, r, LINES_SQL);
	rc = nx__rec_query_table(d, sql.buf, &inv->lines, err);
	if (rc)
		goto out;

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
		nx__rec_inv_set(inv, RX_NOTHING, "TE reaches %.1f%% of peak and every matmul tile is "
				"full size (K=128, M=128, N=512): the %.2f us gap is not explained by "
				"tiles (throttling, pipelining, placement)",
				tflops * 1e14 / peak, gap / 1e3);
		goto out;
	}
	inv->relevance_ns = nx__rec_pipeline_cut(r, RX_TENSOR, gap * share / 100);
	nx__rec_inv_set(inv, RX_FOUND, "TE reaches %.1f%% of peak; undersized tiles at %s "
			"(lines with undersized tiles hold %.1f%% of the gap)",
			tflops * 1e14 / peak, first, share);
out:
	nx_strbuf_release(&sql);
	return rc ? nx_err_wrap(err, "Tensor engine inefficiency") : 0;
}
