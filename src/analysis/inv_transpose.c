/* SPDX-License-Identifier: MIT
 * inv_transpose.c: redundant Tensor engine transposes (gap 2c, analysis.md §2.4):
 * the flops of TRANSPOSE matmuls (identity matmuls of nc_transpose), their minimum TE
 * time at peak, and the source lines issuing them. */
#include "common/compat.h"
#include "analysis/rec.h"
#include "common/xalloc.h"

#include <math.h>

static const char STEP1_SQL[] =
	"SELECT count(*) FILTER (WHERE tensor_instruction_type = 'TRANSPOSE') AS n_tp,\n"
	"    count(*) FILTER (WHERE tensor_instruction_type = 'REGULAR') AS n_reg,\n"
	"    coalesce(sum(adjusted_flops), 0) AS flops,\n"
	"    coalesce(sum(adjusted_flops) FILTER (WHERE tensor_instruction_type = 'TRANSPOSE'), 0)\n"
	"        AS tp_flops\n"
	"FROM rx_Inst\n"
	"WHERE engine = 'tensor' AND opcode = 'MATMUL' AND start_ts >= {T0} AND start_ts < {T1}";

static const char LINES_SQL[] =
	"SELECT coalesce(src, '?') AS source, count(*) AS count,\n"
	"    round(sum(adjusted_flops) / 1e9, 3) AS gflops,\n"
	"    round(sum(adjusted_flops) * k.ns_per_flop, 0) AS gap_ns,\n"
	"    round(sum(adjusted_flops) * 100 / nullif(sum(sum(adjusted_flops)) OVER (), 0), 1)\n"
	"        AS share_pct\n"
	"FROM rx_Inst, k\n"
	"WHERE engine = 'tensor' AND opcode = 'MATMUL' AND tensor_instruction_type = 'TRANSPOSE'\n"
	"  AND start_ts >= {T0} AND start_ts < {T1}\n"
	"GROUP BY 1, k.ns_per_flop ORDER BY share_pct DESC, source LIMIT 20";

int nx__rec_inv_transpose(struct nx_duck *d, struct rx_result *r, struct nx_err *err)
{
	static const char *const names[] = { "n_tp", "n_reg", "flops", "tp_flops" };
	struct rx_inv *inv = &r->inv[RX_I_TRANSPOSE];
	struct nx_strbuf sql = NX_STRBUF_INIT;
	double v[4], peak = r->in.te_peak;
	int rc;

	nx__rec_inv_init(inv, "te_transposes", "Redundant Tensor engine transposes", "2c",
			 "Transpose", "aws");
	if (nx__rec_te_unavailable(r, inv))
		return 0;
	nx__rec_sql(&sql, r, STEP1_SQL);
	rc = nx__rec_query_row(d, sql.buf, names, v, 4, err);
	if (rc)
		goto out;
	inv->gap_ns = r->gap[RX_G_TRANSPOSE];
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
		nx__rec_inv_set(inv, RX_NOTHING, "no TRANSPOSE matmul: no on-device transposes");
		goto out;
	}
	nx_strbuf_reset(&sql);
	nx_strbuf_addf(&sql, "WITH k AS (SELECT %.17g AS ns_per_flop)\n", 1e9 / peak);
	nx__rec_sql(&sql, r, LINES_SQL);
	rc = nx__rec_query_table(d, sql.buf, &inv->lines, err);
	if (rc)
		goto out;
	/* transposes take their flop share of the TE active time */
	inv->relevance_ns = nx__rec_pipeline_cut(r, RX_TENSOR, r->bound[RX_B_COMP] * v[3] / v[2]);
	nx__rec_inv_set(inv, RX_FOUND, "%.0f TRANSPOSE matmuls are %.1f%% of the TE flops "
			"(%.2f us at peak); first line %s",
			v[0], v[3] * 100 / v[2], v[3] / peak * 1e6,
			nx__rec_cellq(&inv->lines, 0, "source"));
out:
	nx_strbuf_release(&sql);
	return rc ? nx_err_wrap(err, "Tensor engine transposes") : 0;
}
