/* SPDX-License-Identifier: MIT
 * inv_reload.c: redundant DMA transfers (gap 1c, docs/recommend.md, "Redundant DMA transfers").
 * Step 1 splits the excess HBM traffic into input reloads (IN tensors moved more than once) and
 * compiler spills ([VIRTUAL] buffers); Step 2 finds the dma_copy lines that reload inputs and the
 * operations whose outputs were spilled. */
#include "common/compat.h"
#include "analysis/rec.h"
#include "common/bytes_text.h"
#include "common/xalloc.h"

#include <math.h>
#include <string.h>

/* Shared CTEs. k holds the excess bytes of Step 1; the bytes moved per tensor come from
 * the transfers' merge (rx_XferMoved, scan_xfer.c), or with NX_REC_XFER=sql from the
 * window's transfers in DuckDB (dpa, which JOIN_SQL joins too). */
static const char MOVED_MERGED_SQL[] =
	", moved AS (SELECT variable, total FROM rx_XferMoved),\n";

static const char MOVED_JOIN_SQL[] =
	", dpa AS NOT MATERIALIZED (\n"
	"    SELECT * FROM rx_DmaPacketAggregated WHERE start_ts >= {T0} AND start_ts < {T1}\n"
	"),\n"
	"moved AS (SELECT variable, sum(transfer_bytes)::DOUBLE AS total FROM dpa GROUP BY 1),\n";

static const char BASE_SQL[] =
	"ti AS (\n"
	"    SELECT variable_name, any_value(type) AS type, max(size)::DOUBLE AS size\n"
	"    FROM rx_TensorInfo GROUP BY 1\n"
	"),\n"
	"tens AS (\n"
	"    SELECT m.variable, ti.type, ti.size, m.total, m.total / nullif(ti.size, 0) AS rep,\n"
	"        CASE WHEN ti.type = 'IN' AND m.total > ti.size THEN m.total - ti.size ELSE 0 END\n"
	"            AS extra\n"
	"    FROM moved m JOIN ti ON ti.variable_name = m.variable\n"
	")\n";

/* Step 1's reload bytes; the spill bytes are a sum of the transfers' merge, or with
 * NX_REC_XFER=sql summed here too. */
static const char STEP1_SQL[] =
	"SELECT coalesce((SELECT sum(extra) FROM tens), 0) AS reload_bytes";

static const char STEP1_JOIN_SQL[] =
	"SELECT coalesce((SELECT sum(extra) FROM tens), 0) AS reload_bytes,\n"
	"    coalesce((SELECT sum(transfer_bytes)::DOUBLE FROM dpa WHERE dest LIKE '%VIRTUAL%'), 0)\n"
	"    + coalesce((SELECT sum(transfer_bytes)::DOUBLE FROM dpa WHERE source LIKE '%VIRTUAL%'), 0)\n"
	"        AS spill_bytes";

static const char TENSORS_SQL[] =
	"SELECT variable AS tensor, type, size::BIGINT AS size_bytes,\n"
	"    total::BIGINT AS transferred_bytes, round(rep, 2) AS repeat,\n"
	"    type = 'IN' AND rep > 1.5 AS reloaded\n"
	"FROM tens ORDER BY total DESC, tensor LIMIT 20";

/* Step 2a: a reload line's excess is its share (by bytes) of its tensor's excess.
 * Step 2b: a spilled operation costs 2 x its reload bytes (save + reload). The input
 * loads by (line, tensor) and the spills by line come from the transfers' merge
 * (rx_XferLoad, rx_XferSpill: scan_xfer.c), or with NX_REC_XFER=sql from JOIN_SQL: the
 * Flow edges from instructions into transfers (rx_Edge) joined in DuckDB. */
static const char MERGED_SQL[] =
	", loads AS (SELECT src, variable, n, bytes FROM rx_XferLoad),\n"
	"spills AS (\n"
	"    SELECT coalesce(src, '?') AS src, 'spill' AS kind, any_value(tensor) AS tensor,\n"
	"        sum(n)::BIGINT AS n, sum(bytes) AS bytes, 2 * sum(bytes) AS excess\n"
	"    FROM rx_XferSpill GROUP BY 1\n"
	"),\n";

static const char JOIN_SQL[] =
	", loads AS (\n"
	"    SELECT e.src, a.variable, count(*) AS n, sum(a.transfer_bytes)::DOUBLE AS bytes\n"
	"    FROM rx_Edge e JOIN dpa a ON a.id = e.dpa_id\n"
	"    WHERE e.rd AND e.src IS NOT NULL AND a.source = '[[INPUT]]' GROUP BY ALL\n"
	"),\n"
	"spills AS (\n"
	"    SELECT coalesce(e.src, '?') AS src, 'spill' AS kind, any_value(s.variable) AS tensor,\n"
	"        count(*) AS n, sum(s.transfer_bytes)::DOUBLE AS bytes,\n"
	"        2 * sum(s.transfer_bytes)::DOUBLE AS excess\n"
	"    FROM rx_Edge e JOIN dpa s ON s.id = e.dpa_id\n"
	"    WHERE s.source LIKE '%VIRTUAL%' GROUP BY 1\n"
	"),\n";

static const char LINES_SQL[] =
	"reloads AS (\n"
	"    SELECT l.src, 'input reload' AS kind, l.variable AS tensor, l.n, l.bytes,\n"
	"        l.bytes / t.total * t.extra AS excess\n"
	"    FROM loads l JOIN tens t ON t.variable = l.variable WHERE t.extra > 0\n"
	")\n"
	"SELECT src AS source, kind, tensor, n AS transfers, round(bytes / 1e6, 3) AS mb,\n"
	"    round(excess / 1e6, 3) AS excess_mb,\n"
	"    least(round(excess * 100 / nullif(k.excess_bytes, 0), 1), 100.0) AS share_pct\n"
	"FROM (SELECT * FROM reloads UNION ALL SELECT * FROM spills), k\n"
	"ORDER BY excess DESC, source LIMIT 20";

static void with_k(struct nx_strbuf *sql, const struct nx_rec_result *r, double excess,
		   bool by_sql, const char *ctes, const char *body)
{
	nx_strbuf_reset(sql);
	nx_strbuf_addf(sql, "WITH k AS (SELECT %.17g AS excess_bytes)\n", excess);
	nx__rec_sql(sql, r, by_sql ? MOVED_JOIN_SQL : MOVED_MERGED_SQL);
	nx__rec_sql(sql, r, BASE_SQL);
	if (ctes)
		nx__rec_sql(sql, r, ctes);
	nx__rec_sql(sql, r, body);
}

static const char *unavailable(const struct nx_rec_result *r)
{
	if (!r->q.dma_packets)
		return NX_REC_NO_DMA_PACKETS;
	if (!r->q.tensors)
		return "TensorInfo lists no IN/OUT tensor";
	return NULL;
}

static int run(struct nx_duck *d, struct nx_rec_result *r, struct nx_rec_inv *inv,
	       struct nx_err *err)
{
	static const char *const names[] = { "reload_bytes", "spill_bytes" };
	struct nx_strbuf sql = NX_STRBUF_INIT, moved_text = NX_STRBUF_INIT;
	struct nx_strbuf needed_text = NX_STRBUF_INIT;
	double moved = r->in.dma_bytes, needed = r->in.necessary_bytes, v[2];
	double excess = moved - needed;
	int rc = 0;

	inv->gap_ns = r->gap[NX_REC_G_EXCESS];
	nx__rec_metric(inv, "dma_transfer_bytes", "dma_transfer_bytes", "bytes", moved);
	nx__rec_metric(inv, "necessary_bytes", "necessary_bytes", "bytes", needed);
	nx__rec_metric(inv, "excess_bytes", "excess_bytes", "bytes", excess);
	nx__rec_metric(inv, "excess_ratio", "excess_ratio", "x", needed > 0 ? moved / needed : NAN);

	if (r->q.dpa_rows) {
		bool by_sql = nx__rec_xfers_by_sql();
		if (!by_sql)
			rc = nx__rec_scan_xfers(d, r->scan, r->t0, r->t1, err);
		if (!rc) {
			with_k(&sql, r, excess, by_sql, NULL, by_sql ? STEP1_JOIN_SQL : STEP1_SQL);
			rc = nx__rec_query_row(d, sql.buf, names, v, 2, err);
		}
		if (!rc && !by_sql)
			v[1] = r->scan->xfer_spill_bytes;
		if (!rc) {
			with_k(&sql, r, excess, by_sql, NULL, TENSORS_SQL);
			rc = nx__rec_query_table(d, sql.buf, &inv->extra, err);
			inv->extra_title = "Per tensor";
		}
		if (!rc) {
			with_k(&sql, r, excess, by_sql, by_sql ? JOIN_SQL : MERGED_SQL, LINES_SQL);
			rc = nx__rec_query_table(d, sql.buf, &inv->lines, err);
		}
		if (rc)
			goto out;
		nx__rec_metric(inv, "reload_excess_bytes", "reload_excess", "bytes", v[0]);
		nx__rec_metric(inv, "spill_bytes", "spill_bytes", "bytes", v[1]);
		nx__rec_metric(inv, "reload_pct_of_excess", "reloads, % of excess", "%",
			       excess > 0 ? fmin(v[0] * 100 / excess, 100) : 0);
		nx__rec_metric(inv, "spill_pct_of_excess", "spills, % of excess", "%",
			       excess > 0 ? fmin(v[1] * 100 / excess, 100) : 0);
	} else {
		inv->note = nx_xstrdup("Step 2 not computable: DmaPacketAggregated has no rows");
	}

	/* at the real bandwidth the excess costs its share of the DMA time */
	if (moved > 0)
		inv->relevance_ns = nx__rec_pipeline_cut(r, NX_REC_ENG_DMA,
							 r->bound[NX_REC_B_MEM] * fmax(excess, 0) / moved);
	/* the bytes in the Summary's units (bytes_text.h) */
	nx_bytes_text(&moved_text, moved);
	nx_bytes_text(&needed_text, needed);
	if (!(excess > 0.01 * moved)) {
		nx__rec_inv_set(inv, NX_REC_NOTHING, "%s moved for %s of IN/OUT tensors: no "
				"excess traffic", moved_text.buf, needed_text.buf);
		inv->relevance_ns = 0;
	} else if (inv->lines.nrows) {
		nx__rec_inv_set(inv, NX_REC_FOUND, "%s moved for %s needed (%.2fx); %s (%s of "
				"%s) holds %s%% of the excess",
				moved_text.buf, needed_text.buf, moved / needed,
				nx__rec_cellq(&inv->lines, 0, "source"),
				nx__rec_cellq(&inv->lines, 0, "kind"),
				nx__rec_cellq(&inv->lines, 0, "tensor"),
				nx__rec_cellq(&inv->lines, 0, "share_pct"));
	} else {
		nx__rec_inv_set(inv, NX_REC_FOUND, "%s moved for %s needed (%.2fx); no reload "
				"or spill could be attributed to a source line",
				moved_text.buf, needed_text.buf, needed > 0 ? moved / needed : NAN);
	}
out:
	nx_strbuf_release(&moved_text);
	nx_strbuf_release(&needed_text);
	nx_strbuf_release(&sql);
	return rc;
}

static bool any_kind(const struct nx_rec_inv *inv, const char *kind)
{
	for (size_t i = 0; i < inv->lines.nrows; i++) {
		const char *k = nx__rec_cell(&inv->lines, i, "kind");
		if (k && !strcmp(k, kind))
			return true;
	}
	return false;
}

/* What to change in the kernel for a finding (render). */
static void remedies(const struct nx_rec_result *r, const struct nx_rec_inv *inv,
		     struct nx_strbuf *out)
{
	const char *top = inv->lines.nrows ? nx__rec_cell(&inv->lines, 0, "source") : NULL;
	const char *tensor = inv->lines.nrows ? nx__rec_cell(&inv->lines, 0, "tensor") : NULL;

	(void)r;
	if (any_kind(inv, "input reload") || !inv->lines.nrows)
		nx_strbuf_addf(out, "Input reloads: %s%s%s loads from HBM data that was "
			       "loaded before (the per-tensor `repeat` is how many times). Keep its "
			       "tile resident in SBUF across the loop that reuses it: hoist the "
			       "load out of the inner loop, or reorder the loop nest so the "
			       "reused operand is indexed by the outer loop (in a matmul, keep "
			       "the rhs tile resident across the k loop instead of loading it "
			       "for every output tile).\n"
			       "If the reused data does not fit in SBUF, block the loops so that "
			       "a block of it does, and reuse each block fully before moving on; "
			       "the target is a repeat of 1.0 for every IN tensor.\n",
			       top ? top : "the listed lines", tensor ? ", tensor " : "",
			       tensor ? tensor : "");
	if (any_kind(inv, "spill"))
		nx_strbuf_addstr(out, "Spills: the compiler saved an intermediate to HBM and "
				 "read it back; the line shown is the operation whose output was "
				 "spilled. Reduce what is live in SBUF there: smaller tiles, fewer "
				 "buffers per pool, or split the loop so the intermediate is used "
				 "soon after it is produced.\n");
}

const struct nx_rec_inv_def nx__rec_inv_reload = {
	.id = "redundant_dma", .title = "Redundant DMA transfers", .group = "1c",
	.gap = "Excess traffic", .method = "aws", .what = "redundant DMA transfers",
	.unavailable = unavailable, .run = run, .remedies = remedies,
};
