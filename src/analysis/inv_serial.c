/* SPDX-License-Identifier: MIT
 * inv_serial.c: serialisation between engines (pipeline gap). Our own method; the AWS
 * skill publishes none (docs/recommend.md, "Gap groups" and
 * "Serialisation between engines"):
 *
 *   a semaphore wait is the stretch [start_ts - evt_wait_time_ns, start_ts) before an
 *   instruction issues. Only the waits of instructions that feed the bottleneck count:
 *   its own instructions for a compute engine, the instructions that trigger DMA
 *   (HBM bytes or a DGE_TRIGGER edge) for DMA. The part of such a wait during which the
 *   bottleneck is idle is "exposed": the busiest engine has nothing to do because its
 *   next work is blocked on a semaphore, i.e. serialisation on the critical path. The
 *   finding's size is the union of the exposed stretches; each waiting source line
 *   gets its exposed time and share, and the Flow SEMAPHORE edge into the waiter names
 *   what it waited on (the producing engine and line, or the DMA variable). */
#include "common/compat.h"
#include "analysis/rec.h"
#include "common/xalloc.h"

#include <math.h>
#include <string.h>

/* {BUSY} is replaced by the bottleneck's busy intervals (s, e), {FEEDS} by the test
 * that an instruction feeds the bottleneck. */
static const char BASE_SQL[] =
	"WITH raw_busy AS ({BUSY}),\n"
	"bo AS (\n"
	"    SELECT s, e, max(e) OVER (ORDER BY s, e ROWS BETWEEN UNBOUNDED PRECEDING\n"
	"                              AND 1 PRECEDING) AS reach FROM raw_busy WHERE e > s\n"
	"),\n"
	"bz AS (\n"
	"    SELECT min(s) AS s, max(e) AS e FROM (\n"
	"        SELECT s, e, sum(CASE WHEN reach IS NULL OR s > reach THEN 1 ELSE 0 END)\n"
	"                     OVER (ORDER BY s, e ROWS UNBOUNDED PRECEDING) AS run FROM bo)\n"
	"    GROUP BY run\n"
	"),\n"
	"w AS (\n"
	"    SELECT id, src, engine, greatest(start_ts - evt_wait_time_ns, {T0}) AS s,\n"
	"        least(start_ts, {T1}) AS e\n"
	"    FROM rx_Inst\n"
	"    WHERE evt_wait_time_ns > 0 AND start_ts > {T0} AND start_ts - evt_wait_time_ns < {T1}\n"
	"      AND {FEEDS}\n"
	"),\n"
	"cov AS (\n"
	"    SELECT w.id, sum(least(w.e, bz.e) - greatest(w.s, bz.s)) AS covered\n"
	"    FROM w JOIN bz ON bz.s < w.e AND bz.e > w.s GROUP BY w.id\n"
	"),\n"
	"ex AS (\n"
	"    SELECT w.*, (w.e - w.s) - coalesce(cov.covered, 0) AS exposed\n"
	"    FROM w LEFT JOIN cov USING (id)\n"
	")\n";

/* Union of the waits, minus its overlap with the bottleneck's busy time. */
static const char TOTAL_SQL[] =
	", wo AS (\n"
	"    SELECT s, e, max(e) OVER (ORDER BY s, e ROWS BETWEEN UNBOUNDED PRECEDING\n"
	"                              AND 1 PRECEDING) AS reach FROM w\n"
	"),\n"
	"wm AS (\n"
	"    SELECT min(s) AS s, max(e) AS e FROM (\n"
	"        SELECT s, e, sum(CASE WHEN reach IS NULL OR s > reach THEN 1 ELSE 0 END)\n"
	"                     OVER (ORDER BY s, e ROWS UNBOUNDED PRECEDING) AS run FROM wo)\n"
	"    GROUP BY run\n"
	")\n"
	"SELECT (SELECT coalesce(sum(e - s), 0) FROM wm)\n"
	"     - (SELECT coalesce(sum(least(wm.e, bz.e) - greatest(wm.s, bz.s)), 0)\n"
	"        FROM wm JOIN bz ON bz.s < wm.e AND bz.e > wm.s) AS exposed,\n"
	"    (SELECT coalesce(sum(e - s), 0) FROM w) AS waits,\n"
	"    (SELECT count(*) FROM w) AS n";

#define ENGINE_LABEL(x) \
	"CASE " x " WHEN 'tensor' THEN 'Tensor' WHEN 'vector' THEN 'Vector' " \
	"WHEN 'scalar' THEN 'Scalar' WHEN 'gpsimd' THEN 'GpSimd' WHEN 'sync' THEN 'Sync' " \
	"ELSE " x " END"

static const char LINES_SQL[] =
	", prod AS (\n"
	"    SELECT f.out_id AS id,\n"
	"        min(CASE WHEN f.in_table = 'Instruction'\n"
	"                 THEN concat(" ENGINE_LABEL("p.engine") ", ' ', coalesce(p.src, '?'))\n"
	"                 ELSE concat('DMA ', coalesce(nullif(a.variable, ''), '?')) END) AS producer\n"
	"    FROM rx_Flow f\n"
	"    LEFT JOIN rx_Inst p ON f.in_table = 'Instruction' AND p.id = f.in_id\n"
	"    LEFT JOIN rx_DmaPacketAggregated a\n"
	"        ON f.in_table = 'DmaPacketAggregated' AND a.id = f.in_id\n"
	"    WHERE f.dependency_type = 'SEMAPHORE' AND f.out_table = 'Instruction'\n"
	"      AND f.out_id IN (SELECT id FROM ex WHERE exposed > 0)\n"
	"    GROUP BY 1\n"
	"),\n"
	"l AS (\n"
	"    SELECT coalesce(src, '?') AS src, " ENGINE_LABEL("mode(engine)") " AS engine,\n"
	"        count(*) AS waits, sum(e - s) AS wait_ns, sum(exposed) AS exposed_ns,\n"
	"        arg_max(coalesce(producer, '?'), exposed) AS waits_on\n"
	"    FROM ex LEFT JOIN prod USING (id) WHERE exposed > 0 GROUP BY 1\n"
	")\n"
	"SELECT src AS source, engine, waits, wait_ns::BIGINT AS wait_ns,\n"
	"    exposed_ns::BIGINT AS exposed_ns, waits_on,\n"
	"    round(exposed_ns * 100 / nullif(sum(exposed_ns) OVER (), 0), 1) AS share_pct\n"
	"FROM l ORDER BY exposed_ns DESC, source LIMIT 20";

static void build(struct nx_strbuf *sql, const struct rx_result *r, const char *tail)
{
	struct nx_strbuf busy = NX_STRBUF_INIT, base = NX_STRBUF_INIT, feeds = NX_STRBUF_INIT;
	const char *p = BASE_SQL, *mark = strstr(p, "{BUSY}");

	if (r->bottleneck == RX_DMA) {
		nx_strbuf_addstr(&busy, "SELECT start_ts AS s, end_ts AS e FROM rx_DmaPacket");
		nx_strbuf_addstr(&feeds, "(coalesce(hbm_read_bytes, 0) + coalesce(hbm_write_bytes, 0) > 0"
				 " OR id IN (SELECT in_id FROM rx_Flow WHERE dependency_type = "
				 "'DGE_TRIGGER' AND in_table = 'Instruction'))");
	} else {
		char lower[16];
		size_t i;
		for (i = 0; rx_engine_name[r->bottleneck][i] && i + 1 < sizeof(lower); i++) {
			char c = rx_engine_name[r->bottleneck][i];
			lower[i] = c >= 'A' && c <= 'Z' ? (char)(c - 'A' + 'a') : c;
		}
		lower[i] = '\0';
		nx_strbuf_addf(&busy, "SELECT start_ts AS s, end_ts AS e FROM rx_ActiveTime "
			       "WHERE engine = '%s'", lower);
		nx_strbuf_addf(&feeds, "engine = '%s'", lower);
	}
	nx_strbuf_add(&base, p, (size_t)(mark - p));
	nx_strbuf_addstr(&base, busy.buf);
	p = mark + 6;
	mark = strstr(p, "{FEEDS}");
	nx_strbuf_add(&base, p, (size_t)(mark - p));
	nx_strbuf_addstr(&base, feeds.buf);
	nx_strbuf_addstr(&base, mark + 7);
	nx_strbuf_reset(sql);
	nx__rec_sql(sql, r, base.buf);
	nx__rec_sql(sql, r, tail);
	nx_strbuf_release(&busy);
	nx_strbuf_release(&base);
	nx_strbuf_release(&feeds);
}

static const char *unavailable(const struct rx_result *r)
{
	if (!r->q.instructions)
		return "no Instruction rows";
	if (!r->q.with_wait)
		return "Instruction.evt_wait_time_ns is not populated";
	if (r->bottleneck < 0)
		return "no engine time";
	return NULL;
}

static int run(struct nx_duck *d, struct rx_result *r, struct rx_inv *inv,
	       struct nx_err *err)
{
	static const char *const names[] = { "exposed", "waits", "n" };
	struct nx_strbuf sql = NX_STRBUF_INIT;
	double v[3], total = r->bound[RX_B_TOTAL], gap = r->gap[RX_G_PIPELINE];
	int rc;

	inv->gap_ns = gap;
	build(&sql, r, TOTAL_SQL);
	rc = nx__rec_query_row(d, sql.buf, names, v, 3, err);
	if (rc)
		goto out;
	nx__rec_metric(inv, "pipeline_gap_ns", "pipeline gap", "ns", gap);
	nx__rec_metric(inv, "semaphore_waits", "semaphore waits of the bottleneck's feeders", "", v[2]);
	nx__rec_metric(inv, "wait_ns", "summed wait time", "ns", v[1]);
	nx__rec_metric(inv, "exposed_ns", "bottleneck idle while its feeders wait (union)", "ns",
		       v[0]);
	nx__rec_metric(inv, "exposed_pct_of_total", "exposed, % of total", "%",
		       total > 0 ? v[0] * 100 / total : NAN);
	if (!r->q.flow_sem)
		inv->note = nx_xasprintf("Flow has no SEMAPHORE edges: the producers waited on "
					 "are unknown");
	if (!(v[0] >= 0.01 * total)) {
		nx__rec_inv_set(inv, RX_NOTHING, "the bottleneck (%s) is idle while its next work "
				"waits on a semaphore for %.2f us, under 1%% of the total",
				rx_engine_name[r->bottleneck], v[0] / 1e3);
		goto out;
	}
	build(&sql, r, LINES_SQL);
	rc = nx__rec_query_table(d, sql.buf, &inv->lines, err);
	if (rc)
		goto out;
	inv->relevance_ns = isnan(gap) ? v[0] : fmin(v[0], fmax(gap, 0));
	nx__rec_inv_set(inv, RX_FOUND, "for %.2f us (%.1f%% of the total) the bottleneck (%s) is idle "
			"while its next work waits on a semaphore; %s waits most (%s%%), on %s",
			v[0] / 1e3, v[0] * 100 / total, rx_engine_name[r->bottleneck],
			nx__rec_cellq(&inv->lines, 0, "source"),
			nx__rec_cellq(&inv->lines, 0, "share_pct"),
			nx__rec_cellq(&inv->lines, 0, "waits_on"));
out:
	nx_strbuf_release(&sql);
	return rc;
}

/* What to change in the kernel for a finding (render). */
static void remedies(const struct rx_result *r, const struct rx_inv *inv, struct nx_strbuf *out)
{
	(void)r;
	(void)inv;
	nx_strbuf_addstr(out, "The bottleneck engine waits on a semaphore for work from "
			 "another engine. Overlap them: double-buffer the tiles (two or more "
			 "buffers per pool) so the producer fills buffer i+1 while the "
			 "consumer works on buffer i, and issue the loads of the next "
			 "iteration before the compute of this one.\n"
			 "Split large dependencies: a consumer that needs a whole tile "
			 "waits for its last byte; smaller tiles in a deeper pipeline let it "
			 "start earlier.\n");
}

const struct rx_inv_def nx__rec_inv_serial = {
	.id = "serialisation", .title = "Serialisation between engines (semaphore waits)",
	.group = "pipeline", .gap = "Pipeline (serialisation)", .method = "ours",
	.what = "serialisation", .unavailable = unavailable, .run = run, .remedies = remedies,
};
