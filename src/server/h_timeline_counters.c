/* SPDX-License-Identifier: MIT
 * h_timeline_counters.c: the value tracks of the web UI's timeline (docs/api.md).
 *   .../timeline/counters?t0=&t1=&px=  per series (SbufUsage, PsumUsage, HbmUsage,
 *       DmaUsage, PendingDma per core, and SemaphoreUpdate per core and semaphore),
 *       per power-of-two bucket of the window: minimum, maximum and last value (of
 *       samples at one time the greatest, NX_LOD_LAST_SQL), plus the last value before
 *       the window (looked for one window width back), so the
 *       browser draws a step line with at most px points per series. Values are
 *       sent with 6 significant digits (they are drawn, not computed with).
 * The values come from the timeline cache (lod.h): the level of its counters' pyramid
 * tl.ctr_lod whose buckets are the window's or finer, or tl.ctr itself for windows
 * finer than the pyramid, with the bursts' cells (tl.ctr_burst) from their own level
 * or, finer than those, raw (lod_build.c, build_counter_levels); or from the profile's
 * tables when there is no cache. The
 * bounds are integer literals on the time or bucket (all are ordered by it), so DuckDB
 * skips the row groups outside the window. One streaming aggregate over the rows makes
 * both the value before the window and the buckets: its groups are the series' buckets,
 * not its rows (a materialised CTE of the rows took 8 to 20 MB of the cache's 32 MB pool
 * at 100k NKI instructions and failed beside the timeline's other queries, docs/memory.md,
 * "A real NKI kernel through the product"). The series list is part of
 * .../timeline/tracks (kind "counter"). */
#include "common/compat.h"
#include "server/duck_vec.h"
#include "server/http.h"
#include "server/lod.h"
#include "server/registry.h"
#include "server/timeline.h"
#include "common/json_writer.h"
#include "common/strbuf.h"
#include "common/xalloc.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* UNION ALL of the present counter tables as (core, track, ts, v) with where_fmt's
 * bounds (two int64 arguments); false when the profile has none. */
static bool union_sql(struct nx_strbuf *sql, const struct nx_profile *p, const char *where_fmt,
		      int64_t a, int64_t b)
{
	size_t n = 0;

	for (size_t i = 0; i < nx__lod_ncounters; i++) {
		const struct nx_lod_counter *c = &nx__lod_counters[i];

		if (!nx__pfiles_find(&p->files, c->table))
			continue;
		nx_strbuf_addf(sql, "%sSELECT pcore_idx::BIGINT AS core, (%s)::VARCHAR AS track, "
				    "timestamp AS ts, (%s)::DOUBLE AS lo, (%s)::DOUBLE AS hi, "
				    "(%s)::DOUBLE AS last, timestamp AS last_ts FROM \"%s\" WHERE ",
			       n++ ? " UNION ALL " : "", c->series, c->value, c->value, c->value,
			       c->table);
		nx_strbuf_addf(sql, where_fmt, a, b);
	}
	return n > 0;
}

/* The level of the counters' pyramid (tl.ctr_lod) that answers a window of buckets
 * of 2^b ns: the coarsest one not coarser than the bucket, or -1 when the bucket is
 * finer than the finest level (tl.ctr answers). The window's bounds are multiples of
 * the bucket, so the level's buckets lie wholly inside or outside it and in one window
 * bucket each: the reply is the one tl.ctr gives. */
static int pyramid_level(const struct nx_lod *lod, int b)
{
	if (lod->ctr_lo > lod->ctr_hi || b < lod->ctr_lo)
		return -1;
	return b < lod->ctr_hi ? b : lod->ctr_hi;
}

/* The rows of level `level` of tl.ctr_lod in the times t0..t1 (multiples of its bucket)
 * as the window's query reads them: core, track, ts, lo, hi, last, last_ts. */
static void level_sql(struct nx_strbuf *sql, int level, int64_t t0, int64_t t1)
{
	nx_strbuf_addf(sql, "SELECT core, track, k * %" PRId64 " AS ts, lo, hi, last, last_ts "
			    "FROM tl.ctr_lod WHERE level = %d AND k >= %" PRId64 " AND k < %" PRId64,
		       (int64_t)1 << level, level, t0 / ((int64_t)1 << level),
		       t1 / ((int64_t)1 << level));
}

/* The rows of `table` (tl.ctr or tl.ctr_burst) in the times t0..t1, likewise. */
static void raw_sql(struct nx_strbuf *sql, const char *table, int64_t t0, int64_t t1)
{
	nx_strbuf_addf(sql, "SELECT core, track, ts, coalesce(lo, last) AS lo, coalesce(hi, last) "
			    "AS hi, last, ts AS last_ts FROM %s WHERE ts >= %" PRId64 " AND ts < %"
			    PRId64, table, t0, t1);
}

/* The tracks of the counter tables: one SELECT for .../timeline/tracks, or NULL. */
char *nx__counter_tracks_sql(const struct nx_profile *p)
{
	struct nx_strbuf sql = NX_STRBUF_INIT;

	nx_strbuf_addstr(&sql, "SELECT 'counter', core, track, count(*)::BIGINT, min(ts), max(ts), "
			       "track, 0 FROM (");
	if (!union_sql(&sql, p, "%" PRId64 " = %" PRId64, 0, 0)) {
		nx_strbuf_release(&sql);
		return NULL;
	}
	nx_strbuf_addstr(&sql, ") GROUP BY ALL");
	return nx_strbuf_detach(&sql, NULL);
}

/* The series being written (series_chunk): rows come ordered by core, track, the value
 * before the window first, then by bucket. */
struct series {
	struct nx_strbuf *out;
	uint64_t max_bytes;
	int64_t bucket;
	bool open, core_null, any;
	int64_t core;
	char *track;
	struct nx_strbuf before, arr[4]; /* ts, lo, hi, last */
	size_t n;
};

static void put_num(struct nx_strbuf *sb, duckdb_vector v, idx_t row)
{
	double d;

	if (!nx__vec_valid(v, row) || !isfinite(d = ((double *)duckdb_vector_get_data(v))[row])) {
		nx_strbuf_addstr(sb, "null");
		return;
	}
	if (d == (double)(int64_t)d && fabs(d) < 1e15)
		nx_strbuf_addf(sb, "%" PRId64, (int64_t)d);
	else
		nx_strbuf_addf(sb, "%.6g", d);
}

static void series_flush(struct series *s)
{
	static const char *const names[] = { "ts", "lo", "hi", "last" };
	struct nx_strbuf *o = s->out;

	if (!s->open)
		return;
	nx_strbuf_addstr(o, s->any ? ",{\"core\":" : "{\"core\":");
	s->any = true;
	if (s->core_null)
		nx_strbuf_addstr(o, "null");
	else
		nx_strbuf_addf(o, "%" PRId64, s->core);
	nx_strbuf_addstr(o, ",\"track\":");
	if (s->track)
		nx_json_quote(o, s->track, strlen(s->track));
	else
		nx_strbuf_addstr(o, "null");
	nx_strbuf_addstr(o, ",\"before\":");
	nx_strbuf_addstr(o, s->before.len ? s->before.buf : "null");
	for (size_t i = 0; i < 4; i++) {
		nx_strbuf_addf(o, ",\"%s\":[", names[i]);
		nx_strbuf_add(o, s->arr[i].buf ? s->arr[i].buf : "", s->arr[i].len);
		nx_strbuf_addch(o, ']');
		nx_strbuf_reset(&s->arr[i]);
	}
	nx_strbuf_addch(o, '}');
	nx_strbuf_reset(&s->before);
	free(s->track);
	s->track = NULL;
	s->open = false;
	s->n = 0;
}

/* Columns: core BIGINT, track VARCHAR, before BOOLEAN, k BIGINT, lo, hi, last DOUBLE. */
static int series_chunk(void *arg, duckdb_data_chunk chunk, struct nx_err *err)
{
	struct series *s = arg;
	duckdb_vector v[7];

	if (duckdb_data_chunk_get_column_count(chunk) != 7)
		return nx_errf(err, -EINVAL, "counter query: wrong columns");
	for (idx_t c = 0; c < 7; c++)
		v[c] = duckdb_data_chunk_get_vector(chunk, c);
	for (idx_t row = 0; row < duckdb_data_chunk_get_size(chunk); row++) {
		bool cv = nx__vec_valid(v[0], row), tv = nx__vec_valid(v[1], row);
		int64_t core = cv ? ((int64_t *)duckdb_vector_get_data(v[0]))[row] : 0;
		duckdb_string_t *t = &((duckdb_string_t *)duckdb_vector_get_data(v[1]))[row];
		bool same = s->open && cv == !s->core_null && (!cv || core == s->core) &&
			    tv == !!s->track &&
			    (!tv || (duckdb_string_t_length(*t) == strlen(s->track) &&
				     !memcmp(duckdb_string_t_data(t), s->track,
					     duckdb_string_t_length(*t))));

		if (!same) {
			series_flush(s);
			if (s->out->len > s->max_bytes)
				return nx_errf(err, -E2BIG, "the counter reply exceeds %llu bytes",
					       (unsigned long long)s->max_bytes);
			s->open = true;
			s->core_null = !cv;
			s->core = core;
			if (tv)
				s->track = nx_xstrndup(duckdb_string_t_data(t),
						       duckdb_string_t_length(*t));
		}
		if (((bool *)duckdb_vector_get_data(v[2]))[row]) {
			put_num(&s->before, v[6], row);
			continue;
		}
		for (size_t i = 0; i < 4; i++)
			if (s->n)
				nx_strbuf_addch(&s->arr[i], ',');
		nx__tl_put_time(&s->arr[0], ((int64_t *)duckdb_vector_get_data(v[3]))[row] * s->bucket);
		put_num(&s->arr[1], v[4], row);
		put_num(&s->arr[2], v[5], row);
		put_num(&s->arr[3], v[6], row);
		s->n++;
	}
	return 0;
}

/* The reply of .../timeline/counters for window w (nx__tl_body). */
static int counters_body(struct nx_req *rq, struct nx_profile *p, struct nx_lod *lod, void *arg,
			 struct nx_strbuf *out, struct nx_err *err)
{
	const struct nx__tl_window *w = arg;
	const struct nx_server_opts *o = &rq->s->o;
	struct nx_query_limits lim = nx__query_limits(rq);
	struct nx_strbuf sql = NX_STRBUF_INIT;
	struct series ser = { 0 };
	/* the value before the window: looked for one window width back (the snapped
	 * window may be wider than int64 holds: saturated) */
	int64_t back = nx__tl_sub(w->t0, nx__tl_sub(w->t1, w->t0));
	int rc = 0, level;

	nx__tl_put_window(out, w->t0, w->t1);
	nx_strbuf_addf(out, ",\"bucket\":%" PRId64 ",\"series\":", w->bucket);
	/* rows before the window are one group per series (before, k NULL): its last value;
	 * the cache's rows of a series (a level's, or tl.ctr's, one per time with its
	 * samples' last, NX_LOD_LAST_TIED_SQL) have distinct times, a profile table's
	 * samples may share one */
	level = lod ? pyramid_level(lod, w->level) : -1;
	nx_strbuf_addf(&sql,
		"SELECT core, track, before, k, CASE WHEN NOT before THEN min(lo) END AS lo, "
		"CASE WHEN NOT before THEN max(hi) END AS hi, %s AS last "
		"FROM (SELECT core, track, ts < %" PRId64 " AS before, CASE WHEN ts >= %" PRId64
		" THEN ts // %" PRId64 " END AS k, lo, hi, last, last_ts FROM (",
		lod ? NX_LOD_LAST_DISTINCT_SQL("last_ts", "last")
			   : NX_LOD_LAST_SQL("last_ts", "last") ".v",
		w->t0, w->t0, w->bucket);
	if (lod ? !lod->counters
		: !union_sql(&sql, p, "timestamp >= %" PRId64 " AND timestamp < %" PRId64, back,
			     w->t1)) {
		nx_strbuf_addstr(out, "null}");
		goto out;
	}
	if (level >= 0) {
		level_sql(&sql, level, back, w->t1);
	} else if (lod) {
		raw_sql(&sql, "tl.ctr", back, w->t1);
		/* finer than L0: the bursts' cells from their level, or below it raw */
		if (w->level >= lod->ctr_burst_lo && w->level < lod->ctr_lo) {
			nx_strbuf_addstr(&sql, " UNION ALL ");
			level_sql(&sql, w->level, back, w->t1);
		} else if (lod->ctr_burst_lo < lod->ctr_lo) {
			nx_strbuf_addstr(&sql, " UNION ALL ");
			raw_sql(&sql, "tl.ctr_burst", back, w->t1);
		}
	}
	nx_strbuf_addstr(&sql, ")) GROUP BY core, track, before, k "
			       "ORDER BY core, track, before DESC, k");
	ser.out = out;
	ser.max_bytes = o->max_result_bytes;
	ser.bucket = w->bucket;
	nx_strbuf_addch(out, '[');
	nx__query_slot_take(rq->s);
	rc = nx__pdb_query_chunks(lod ? lod->db : p->db, sql.buf, &lim, series_chunk, &ser, err);
	nx__query_slot_give(rq->s);
	series_flush(&ser);
	if (!rc)
		nx_strbuf_addstr(out, "]}");
out:
	nx_strbuf_release(&ser.before);
	for (size_t i = 0; i < 4; i++)
		nx_strbuf_release(&ser.arr[i]);
	free(ser.track);
	nx_strbuf_release(&sql);
	return rc;
}

enum MHD_Result nx__h_timeline_counters(struct nx_req *rq, char **cap)
{
	return nx__tl_serve_window(rq, cap, true, counters_body);
}
