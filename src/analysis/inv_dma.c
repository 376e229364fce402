/* SPDX-License-Identifier: MIT
 * inv_dma.c: DMA efficiency (gap 1b, docs/recommend.md, "DMA efficiency"). Step 1 sizes the
 * gap between the real DMA time and the same bytes at peak bandwidth; Step 2 groups the
 * transfers by the source line of the instruction that triggered them (attribution.h;
 * the transfers' merge, scan.h) and reports each line's descriptor geometry and its
 * share of the gap. */
#include "common/compat.h"
#include "analysis/rec.h"
#include "common/xalloc.h"

#include <math.h>
#include <stdlib.h>

/* Per-line share of the gap (ours): a line's DMA engine time (sum of its packets'
 * durations, the 16 engines counted separately) minus the time its bytes need at one
 * engine's share of the peak, floored at 0, over the same figure of all lines. The
 * lines' groups (g) come from the transfers' merge (rx_XferLine, scan_xfer.c), or with
 * NX_REC_XFER=sql from JOIN_SQL: the Flow edges into the transfers, with their
 * instruction's line and HBM flags (rx_Edge), joined in DuckDB. */
static const char MERGED_SQL[] =
	", g AS (\n"
	"    SELECT src, xfers, bytes, tensor,\n"
	"        CASE WHEN first_input THEN '[[INPUT]]' END AS first_source, xfer_bytes, wparts,\n"
	"        rparts, busy\n"
	"    FROM rx_XferLine\n"
	"),\n";

static const char JOIN_SQL[] =
	", dpa AS (\n"
	"    SELECT * FROM rx_DmaPacketAggregated\n"
	"    WHERE start_ts >= {T0} AND start_ts < {T1} AND is_transpose_mode IS DISTINCT FROM true\n"
	"),\n"
	"x AS (\n"
	"    SELECT e.src, a.* FROM rx_Edge e JOIN dpa a ON a.id = e.dpa_id\n"
	"    WHERE e.hbm AND e.src IS NOT NULL\n"
	"),\n"
	"pk AS (\n"
	"    SELECT packet_aggregation_id AS id, sum(duration_ns) AS busy FROM rx_DmaPacket\n"
	"    WHERE packet_aggregation_id IN (SELECT id FROM x) GROUP BY 1\n"
	"),\n"
	"g AS (\n"
	"    SELECT src, count(*) AS xfers, sum(transfer_bytes)::DOUBLE AS bytes,\n"
	"        mode(variable) AS tensor, arg_min(source, start_ts) AS first_source,\n"
	"        floor(median(transfer_bytes))::BIGINT AS xfer_bytes,\n"
	"        floor(median(write_num_sbuf_partitions))::BIGINT AS wparts,\n"
	"        floor(median(read_num_sbuf_partitions))::BIGINT AS rparts,\n"
	"        sum(coalesce(pk.busy, 0))::DOUBLE AS busy\n"
	"    FROM x LEFT JOIN pk USING (id) GROUP BY src\n"
	"),\n";

static const char LINES_SQL[] =
	"h AS (\n"
	"    SELECT *, CASE WHEN first_source = '[[INPUT]]' THEN 'load' ELSE 'store' END AS dir,\n"
	"        greatest(busy - bytes * k.engine_ns_per_byte, 0) AS excess_ns\n"
	"    FROM g, k\n"
	"),\n"
	"l AS (\n"
	"    SELECT *, CASE WHEN dir = 'load' THEN wparts ELSE rparts END AS parts FROM h\n"
	")\n"
	"SELECT src AS source, tensor, dir, xfers, round(bytes / 1e6, 3) AS mb,\n"
	"    round(bytes * 100 / nullif(k.kernel_bytes, 0), 1) AS pct_of_bytes,\n"
	"    printf('%dx%dB', parts, CASE WHEN parts > 0 THEN xfer_bytes // parts\n"
	"                                 ELSE xfer_bytes END) AS shape,\n"
	"    CASE WHEN parts > 0 THEN xfer_bytes // parts ELSE xfer_bytes END AS desc_bytes,\n"
	"    CASE WHEN parts > 0 THEN xfer_bytes // parts ELSE xfer_bytes END\n"
	"        < " NX_STRINGIFY(NX_REC_SMALL_DESC_BYTES) " AS small,\n"
	"    round(excess_ns, 0) AS excess_ns,\n"
	"    round(excess_ns * 100 / nullif(sum(excess_ns) OVER (), 0), 1) AS share_pct\n"
	"FROM l, k\n"
	"ORDER BY share_pct DESC NULLS LAST, bytes DESC, source\n"
	"LIMIT 20";

/* NX_REC_XFER=sql: the window's transfer bytes (else a sum of the transfers' merge). */
static const char COVERAGE_SQL[] =
	"SELECT sum(transfer_bytes)::DOUBLE AS b FROM rx_DmaPacketAggregated\n"
	"WHERE start_ts >= {T0} AND start_ts < {T1}";

static const char *unavailable(const struct nx_rec_result *r)
{
	if (!r->q.dma_packets)
		return NX_REC_NO_DMA_PACKETS;
	if (isnan(r->bound[NX_REC_B_MEM_IDEAL]))
		return "no DMA peak bandwidth in Metadata";
	return NULL;
}

static int run(struct nx_duck *d, struct nx_rec_result *r, struct nx_rec_inv *inv,
	       struct nx_err *err)
{
	struct nx_strbuf sql = NX_STRBUF_INIT;
	double mem = r->bound[NX_REC_B_MEM], ideal = r->bound[NX_REC_B_MEM_IDEAL];
	double bytes = r->in.dma_bytes, gap = r->gap[NX_REC_G_DMA_INEFF];
	int rc = 0;

	inv->gap_ns = gap;
	nx__rec_metric(inv, "memory_bound_ns", "memory_bound", "ns", mem);
	nx__rec_metric(inv, "memory_bound_ideal_ns", "memory_bound_ideal", "ns", ideal);
	nx__rec_metric(inv, "efficiency_gap_ns", "efficiency_gap", "ns", gap);
	nx__rec_metric(inv, "dma_transfer_bytes", "dma_transfer_bytes", "bytes", bytes);
	nx__rec_metric(inv, "achieved_bw_gbps", "achieved bandwidth", "GB/s",
		       mem > 0 ? bytes / mem : 0);
	nx__rec_metric(inv, "peak_bw_gbps", "peak bandwidth", "GB/s", r->in.dma_bw / 1e9);

	if (r->q.dpa_rows) {
		static const char *const names[] = { "b" };
		double dpa_bytes;
		bool by_sql = nx__rec_xfers_by_sql();
		if (by_sql) {
			nx__rec_sql(&sql, r, COVERAGE_SQL);
			rc = nx__rec_query_row(d, sql.buf, names, &dpa_bytes, 1, err);
		} else {
			rc = nx__rec_scan_xfers(d, r->scan, r->t0, r->t1, err);
			dpa_bytes = r->scan->xfer_bytes;
		}
		if (rc)
			goto out;
		double cov = bytes > 0 ? (isnan(dpa_bytes) ? 0 : dpa_bytes) * 100 / bytes : NAN;
		nx__rec_metric(inv, "dpa_coverage_pct", "DPA coverage", "%", cov);
		if (cov < 95)
			inv->note = nx_xasprintf("DmaPacketAggregated covers %.1f%% of the kernel DMA "
						 "bytes: %.1f%% has no variable attribution, Step 2 "
						 "is incomplete", cov, 100 - cov);
		nx_strbuf_reset(&sql);
		nx_strbuf_addf(&sql, "WITH k AS (SELECT %.17g AS kernel_bytes, %.17g AS engine_ns_per_byte)\n",
			       bytes, r->in.dma_engines * 1e9 / r->in.dma_bw);
		nx__rec_sql(&sql, r, by_sql ? JOIN_SQL : MERGED_SQL);
		nx__rec_sql(&sql, r, LINES_SQL);
		rc = nx__rec_query_table(d, sql.buf, &inv->lines, err);
		if (rc)
			goto out;
	} else {
		inv->note = nx_xstrdup("Step 2 not computable: DmaPacketAggregated has no rows");
	}

	inv->relevance_ns = nx__rec_pipeline_cut(r, NX_REC_ENG_DMA, gap);
	if (!(gap >= 0.05 * mem)) {
		nx__rec_inv_set(inv, NX_REC_NOTHING, "the efficiency gap is %.1f%% of memory_bound (under "
				"5%%): transfers are already reasonably efficient",
				mem > 0 ? gap * 100 / mem : 0);
		inv->relevance_ns = 0;
	} else if (inv->lines.nrows) {
		nx__rec_inv_set(inv, NX_REC_FOUND, "DMA runs at %.1f GB/s of %.1f GB/s peak; %s moves "
				"%s descriptors and holds %s%% of the gap",
				mem > 0 ? bytes / mem : 0, r->in.dma_bw / 1e9,
				nx__rec_cellq(&inv->lines, 0, "source"),
				nx__rec_cellq(&inv->lines, 0, "shape"),
				nx__rec_cellq(&inv->lines, 0, "share_pct"));
	} else {
		nx__rec_inv_set(inv, NX_REC_FOUND, "DMA runs at %.1f GB/s of %.1f GB/s peak; no source "
				"line could be attributed", mem > 0 ? bytes / mem : 0,
				r->in.dma_bw / 1e9);
	}
out:
	nx_strbuf_release(&sql);
	return rc;
}

/* The top line's descriptor size, or 0 when unknown. */
static long top_desc_bytes(const struct nx_rec_inv *inv)
{
	const char *v = inv->lines.nrows ? nx__rec_cell(&inv->lines, 0, "desc_bytes") : NULL;
	return v ? strtol(v, NULL, 10) : 0;
}

#define SMALL_KIB (NX_REC_SMALL_DESC_BYTES / 1024)

/* What to change in the kernel for a finding (render). */
static void remedies(const struct nx_rec_result *r, const struct nx_rec_inv *inv,
		     struct nx_strbuf *out)
{
	const char *top = inv->lines.nrows ? nx__rec_cell(&inv->lines, 0, "source") : NULL;

	long desc = top_desc_bytes(inv);
	if (top && desc > 0 && desc < NX_REC_SMALL_DESC_BYTES)
		nx_strbuf_addf(out, "%s moves %ld B per partition per descriptor; widen the free "
			       "dimension of that `dma_copy` about %ldx so each descriptor carries "
			       ">= %d KiB per partition (for bf16: [128, %d] tiles instead of "
			       "[128, %ld]). Below %d KiB the fixed cost of each descriptor "
			       "dominates; above it the gain is small and very large tiles can "
			       "hurt the overlap of DMA and compute.\n", top, desc,
			       (NX_REC_SMALL_DESC_BYTES + desc - 1) / desc, SMALL_KIB,
			       NX_REC_SMALL_DESC_BYTES / 2, desc / 2 > 0 ? desc / 2 : 1, SMALL_KIB);
	else
		nx_strbuf_addf(out, "Make each descriptor carry >= %d KiB per partition by "
			       "widening the free dimension of the `dma_copy` tiles; below %d KiB "
			       "per-descriptor overhead dominates.\n", SMALL_KIB, SMALL_KIB);
	nx_strbuf_addstr(out, "Use all 128 partitions per transfer, and merge neighbouring "
			 "tiles of the same tensor into one larger `dma_copy` (fewer, larger "
			 "transfers).\n"
			 "Read HBM contiguously along the free dimension: a strided or "
			 "transposing access pattern splits into many small descriptors (and "
			 "transposed loads are slower than plain ones); store the tensor in the "
			 "layout it is read in.\n");
	if (r->inv[NX_REC_I_REDUNDANT_DMA].status == NX_REC_FOUND)
		nx_strbuf_addstr(out, "The kernel also reloads data (see the redundant-DMA "
				 "finding): removing those transfers first may remove the small "
				 "ones too.\n");
}

const struct nx_rec_inv_def nx__rec_inv_dma = {
	.id = "dma_efficiency", .title = "DMA efficiency", .group = "1b",
	.gap = "DMA inefficiency", .method = "aws", .what = "DMA efficiency",
	.unavailable = unavailable, .run = run, .remedies = remedies,
};
