/* SPDX-License-Identifier: MIT
 * h_timeline_counters.c: the value tracks of the web UI's timeline (docs/api.md).
 *   .../timeline/counters?t0=&t1=&px=  per series (SbufUsage, PsumUsage, HbmUsage,
 *       DmaUsage, PendingDma per core, and SemaphoreUpdate per core and semaphore),
 *       per power-of-two bucket of the window: minimum, maximum and last value, plus
 *       the last value before the window (looked for one window width back), so the
 *       browser draws a step line with at most px points per series.
 * The bounds are integer literals on `timestamp` (the tables are ordered by it), so
 * DuckDB skips the row groups outside the window. The series list is part of
 * .../timeline/tracks (kind "counter"). */
#include "common/compat.h"
#include "server/http.h"
#include "server/registry.h"
#include "server/timeline.h"
#include "common/strbuf.h"

#include <stdlib.h>
#include <string.h>

#define MAX_PX 16384

struct counter {
	const char *table;
	const char *series; /* SQL of the series name */
	const char *value;  /* SQL of the value */
};

static const struct counter counters[] = {
	{ "SbufUsage", "'SbufUsage'", "avg_util_percent" },
	{ "PsumUsage", "'PsumUsage'", "avg_util_percent" },
	{ "HbmUsage", "'HbmUsage'", "current_throughput" },
	{ "DmaUsage", "'DmaUsage'", "current_throughput" },
	{ "PendingDma", "'PendingDma'", "value" },
	{ "SemaphoreUpdate", "'sem ' || id", "value" },
};

/* UNION ALL of the present counter tables as (core, track, ts, v) with where_fmt's
 * bounds (two int64 arguments); false when the profile has none. */
static bool union_sql(struct nx_strbuf *sql, const struct nx_profile *p, const char *where_fmt,
		      int64_t a, int64_t b)
{
	size_t n = 0;

	for (size_t i = 0; i < NX_ARRAY_SIZE(counters); i++) {
		const struct counter *c = &counters[i];

		if (!nx__pfiles_find(&p->files, c->table))
			continue;
		nx_strbuf_addf(sql, "%sSELECT pcore_idx::BIGINT AS core, (%s)::VARCHAR AS track, "
				    "timestamp AS ts, (%s)::DOUBLE AS v FROM \"%s\" WHERE ",
			       n++ ? " UNION ALL " : "", c->series, c->value, c->table);
		nx_strbuf_addf(sql, where_fmt, a, b);
	}
	return n > 0;
}

/* The tracks of the counter tables: one SELECT for .../timeline/tracks, or NULL. */
char *nx__counter_tracks_sql(const struct nx_profile *p)
{
	struct nx_strbuf sql = NX_STRBUF_INIT;

	nx_strbuf_addstr(&sql, "SELECT 'counter', core, track, count(*)::BIGINT, min(ts), max(ts) "
			       "FROM (");
	if (!union_sql(&sql, p, "%" PRId64 " = %" PRId64, 0, 0)) {
		nx_strbuf_release(&sql);
		return NULL;
	}
	nx_strbuf_addstr(&sql, ") GROUP BY ALL");
	return nx_strbuf_detach(&sql, NULL);
}

enum MHD_Result nx__h_timeline_counters(struct nx_req *rq, char **cap)
{
	struct nx_strbuf sql = NX_STRBUF_INIT, sb = NX_STRBUF_INIT;
	int64_t t0, t1, px, bucket = 1;
	struct nx_err err = { 0 };
	struct nx_profile *p;
	enum MHD_Result ret;

	if (!nx__tl_int_arg(rq, "t0", INT64_MIN / 4, INT64_MAX / 4, &t0) ||
	    !nx__tl_int_arg(rq, "t1", INT64_MIN / 4, INT64_MAX / 4, &t1) || t1 <= t0)
		return nx__reply_error(rq, 400, "bad_request",
				       "t0 and t1 must be integers (profile nanoseconds) with "
				       "t0 < t1");
	if (!nx__tl_int_arg(rq, "px", 1, MAX_PX, &px))
		return nx__reply_error(rq, 400, "bad_request",
				       "px must be the width of the view in pixels, 1 to %d",
				       MAX_PX);
	while (bucket * px < t1 - t0)
		bucket <<= 1;
	t0 -= ((t0 % bucket) + bucket) % bucket;
	if (t1 % bucket)
		t1 += bucket - ((t1 % bucket) + bucket) % bucket;
	p = nx__lookup_profile(rq, cap, true, &ret);
	if (!p)
		return ret;
	nx_strbuf_addf(&sb, "{\"t0\":%" PRId64 ",\"t1\":%" PRId64 ",\"bucket\":%" PRId64
			    ",\"result\":", t0, t1, bucket);
	nx_strbuf_addstr(&sql, "WITH u AS MATERIALIZED (");
	if (!union_sql(&sql, p, "timestamp >= %" PRId64 " AND timestamp < %" PRId64,
		       t0 - (t1 - t0), t1)) {
		nx_strbuf_addstr(&sb, "null}");
		ret = nx__reply_json(rq, 200, &sb);
		goto out;
	}
	nx_strbuf_addf(&sql,
		"), b AS (SELECT core, track, arg_max(v, ts) AS v FROM u WHERE ts < %" PRId64
		" GROUP BY ALL), w AS (SELECT core, track, ts // %" PRId64 " AS k, min(v) AS lo, "
		"max(v) AS hi, arg_max(v, ts) AS last FROM u WHERE ts >= %" PRId64
		" GROUP BY ALL), l AS (SELECT core, track, list(k * %" PRId64 " ORDER BY k) AS ts, "
		"list(lo ORDER BY k) AS lo, list(hi ORDER BY k) AS hi, list(last ORDER BY k) AS last "
		"FROM w GROUP BY ALL) SELECT core, track, b.v AS before, l.ts, l.lo, l.hi, l.last "
		"FROM l FULL JOIN b USING (core, track) ORDER BY core, track",
		t0, bucket, t0, bucket);
	if (nx__query_limited(rq, p, sql.buf, &sb, &err)) {
		ret = nx__tl_query_failed(rq, &err);
		goto out;
	}
	nx_strbuf_addch(&sb, '}');
	ret = nx__reply_json(rq, 200, &sb);
out:
	nx_strbuf_release(&sql);
	nx_strbuf_release(&sb);
	nx__reg_put(&rq->s->reg, p);
	return ret;
}
