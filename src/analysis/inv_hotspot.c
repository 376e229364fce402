/* SPDX-License-Identifier: MIT
 * inv_hotspot.c: bottleneck on Vector, Scalar or GpSimd (group 3). The AWS skill has
 * no investigation for these engines; ours localises the bottleneck engine's work:
 * its instructions in the window grouped by source line, each line's summed
 * instruction time and share of the engine's total. The finding's size is the margin
 * by which the engine bounds the kernel (its time minus the next busiest engine). */
#include "common/compat.h"
#include "analysis/rec.h"

#include <math.h>

/* Over the window's rows of the engine, as the pass over Instruction summed them per
 * (line, opcode) in rx_InstAgg: mode(opcode) is the most frequent, the first met of
 * equals, as DuckDB's mode picks. */
static const char LINES_SQL[] =
	"WITH e AS (SELECT * FROM rx_InstAgg WHERE engine = '{ENGINE}'),\n"
	"o AS (\n"
	"    SELECT coalesce(src, '?') AS src, opcode, sum(n) AS n, min(first_row) AS fr\n"
	"    FROM e WHERE opcode IS NOT NULL GROUP BY ALL\n"
	"),\n"
	"m AS (\n"
	"    SELECT src, opcode FROM (\n"
	"        SELECT *, row_number() OVER (PARTITION BY src ORDER BY n DESC, fr) AS k FROM o)\n"
	"    WHERE k = 1\n"
	"),\n"
	"l AS (SELECT coalesce(src, '?') AS src, sum(n) AS n, sum(dur) AS busy FROM e GROUP BY 1)\n"
	"SELECT l.src AS source, l.n::BIGINT AS instructions,\n"
	"    m.opcode AS opcode, busy::BIGINT AS busy_ns,\n"
	"    round(busy * 100 / nullif(sum(busy) OVER (), 0), 1)\n"
	"        AS share_pct\n"
	"FROM l LEFT JOIN m USING (src)\n"
	"ORDER BY busy_ns DESC, source LIMIT 20";

static const char *unavailable(const struct nx_rec_result *r)
{
	return r->bottleneck < 0 ? "no engine time" : NULL;
}

static int run(struct nx_duck *d, struct nx_rec_result *r, struct nx_rec_inv *inv,
	       struct nx_err *err)
{
	static const char *const lower[NX_REC_NENG] = { "tensor", "vector", "scalar", "gpsimd",
							"dma" };
	struct nx_strbuf sql = NX_STRBUF_INIT, tmpl = NX_STRBUF_INIT;
	int bn = r->bottleneck, rc = 0;

	if (bn == NX_REC_ENG_DMA || bn == NX_REC_ENG_TENSOR) {
		nx__rec_inv_set(inv, NX_REC_NOTHING, "not needed: the bottleneck (%s) is covered by the "
				"%s investigations", nx_rec_engine_name[bn], bn == NX_REC_ENG_DMA ? "DMA" : "Tensor");
		return 0;
	}
	double margin = nx__rec_pipeline_cut(r, bn, r->in.eng_ns[bn]);
	inv->gap_ns = margin;
	nx__rec_metric(inv, "engine_active_ns", "engine active time", "ns", r->in.eng_ns[bn]);
	nx__rec_metric(inv, "margin_ns", "margin over the next busiest engine", "ns", margin);
	for (const char *p = LINES_SQL; *p; p++) {
		if (p[0] == '{' && p[1] == 'E') {
			nx_strbuf_addstr(&tmpl, lower[bn]);
			p += 7;
		} else {
			nx_strbuf_addch(&tmpl, *p);
		}
	}
	nx__rec_sql(&sql, r, tmpl.buf);
	rc = nx__rec_query_table(d, sql.buf, &inv->lines, err);
	if (rc)
		goto out;
	inv->relevance_ns = margin;
	nx__rec_inv_set(inv, NX_REC_FOUND, "%s bounds the kernel, %.2f us ahead of the next engine; "
			"%s holds %s%% of its instruction time (support for %s efficiency "
			"analysis is work in progress)",
			nx_rec_engine_name[bn], margin / 1e3, nx__rec_cellq(&inv->lines, 0, "source"),
			nx__rec_cellq(&inv->lines, 0, "share_pct"), nx_rec_engine_name[bn]);
out:
	nx_strbuf_release(&sql);
	nx_strbuf_release(&tmpl);
	return rc;
}

/* What to change in the kernel for a finding (render). */
static void remedies(const struct nx_rec_result *r, const struct nx_rec_inv *inv,
		     struct nx_strbuf *out)
{
	(void)r;
	(void)inv;
	nx_strbuf_addstr(out, "The busiest lines of the bottleneck engine are listed: fuse "
			 "consecutive element-wise operations into one instruction, give each "
			 "instruction a larger free dimension to amortise its fixed cost, or "
			 "move work to an idle engine (e.g. an activation on Scalar instead of "
			 "Vector).\n");
}

const struct nx_rec_inv_def nx__rec_inv_hotspot = {
	.id = "engine_hotspots", .title = "Bottleneck engine hot spots", .group = "3",
	.gap = NULL, .method = "ours", .what = "bottleneck engine hot spots",
	.unavailable = unavailable, .run = run, .remedies = remedies,
};
