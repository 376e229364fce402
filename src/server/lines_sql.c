/* SPDX-License-Identifier: MIT
 * lines_sql.c: the per-source-line summary of a profile (lod.h, tl.lines; the source
 * view's numbers), as one SELECT over the profile's tables by their names: per line of
 * Instruction (NX_LINE_SQL) its instruction count, summed duration, first start and last
 * end, and, with Flow and DmaPacketAggregated, the DMA transfers the line triggered
 * (attribution.h): their count, bytes, summed durations, first start and last end. The
 * timeline cache stores it; without a cache the server runs it on the profile. For a
 * window (the timeline's operator table) the events overlapping it, their durations
 * clipped to it; a line whose only events in the window are its transfers is kept. */
#include "common/compat.h"
#include "server/lod.h"
#include "analysis/attribution.h"
#include "common/strbuf.h"

#include <stdio.h>

void nx__lines_sql(struct nx_strbuf *sql, bool dma, const int64_t *win)
{
	char dur[160] = "duration_ns", where[96] = "", span[160] = "a.end_ts - a.start_ts";

	if (win) { /* events overlapping [t0, t1), their time clipped to it */
		snprintf(dur, sizeof(dur), "least(end_ts, %" PRId64 ") - greatest(start_ts, %" PRId64
			 ") AS duration_ns", win[1], win[0]);
		snprintf(where, sizeof(where), " WHERE start_ts < %" PRId64 " AND end_ts > %" PRId64,
			 win[1], win[0]);
		snprintf(span, sizeof(span), "least(a.end_ts, %" PRId64 ") - greatest(a.start_ts, %"
			 PRId64 ")", win[1], win[0]);
	}
	nx_strbuf_addf(sql, "WITH ins AS (SELECT loc, count(*)::BIGINT AS n, "
			    "sum(duration_ns)::BIGINT AS dur, min(start_ts) AS t0, max(end_ts) AS t1 "
			    "FROM (SELECT " NX_LINE_SQL " AS loc, %s, start_ts, end_ts "
			    "FROM \"Instruction\"%s) WHERE loc IS NOT NULL GROUP BY loc)",
		       dur, where);
	if (!dma) {
		nx_strbuf_addstr(sql, " SELECT loc, n, dur, t0, t1, 0::BIGINT AS dma_n, "
				      "0::BIGINT AS dma_bytes, 0::BIGINT AS dma_ns, NULL::BIGINT AS "
				      "dma_t0, NULL::BIGINT AS dma_t1 FROM ins");
		return;
	}
	nx_strbuf_addf(sql, ", dma AS (SELECT l.src AS loc, count(*)::BIGINT AS dma_n, "
			    "coalesce(sum(a.transfer_bytes), 0)::BIGINT AS dma_bytes, "
			    "sum(%s)::BIGINT AS dma_ns, min(a.start_ts) AS dma_t0, "
			    "max(a.end_ts) AS dma_t1 FROM (", span);
	nx_dma_line_sql(sql, "\"Flow\"", "\"Instruction\"", NX_LINE_SQL);
	nx_strbuf_addf(sql, ") l JOIN (SELECT * FROM \"DmaPacketAggregated\"%s) a ON a.id = l.dma_id "
			    "WHERE l.src IS NOT NULL GROUP BY 1) "
			    "SELECT loc, coalesce(n, 0)::BIGINT AS n, coalesce(dur, 0)::BIGINT AS dur, "
			    "t0, t1, coalesce(dma_n, 0)::BIGINT AS dma_n, "
			    "coalesce(dma_bytes, 0)::BIGINT AS dma_bytes, coalesce(dma_ns, 0)::BIGINT "
			    "AS dma_ns, dma_t0, dma_t1 FROM ins %s JOIN dma USING (loc)",
		       where, win ? "FULL" : "LEFT");
}
