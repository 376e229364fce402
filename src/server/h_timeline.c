/* SPDX-License-Identifier: MIT
 * h_timeline.c: the timeline endpoints of the web UI, with level of detail computed
 * here rather than in the browser (docs/api.md, docs/ui.md).
 *   .../timeline/tracks   the rows of the timeline: instruction tracks per core and
 *                         timeline_track, DMA tracks per core and queue, framework
 *                         streams, counter and semaphore series.
 *   .../timeline?t0=&t1=&px=  per track, the events of the window [t0, t1): the raw rows
 *                         when there are few (at most RAW_PER_PX per pixel), else one
 *                         bucket per power-of-two time slice with its longest event
 *                         (ties: the lowest id), event count and busy time.
 * Everything is read from the profile's timeline cache (lod.h), built on first use:
 * buckets at least as wide as a source's finest pyramid level come from that level of
 * tl.lod<s>, one level and window only; finer views read the window's rows of tl.ev<s> (or,
 * for a source whose events the cache did not copy, of the profile's own table),
 * and tracks with many are bucketed here (timeline_reply.c), or by DuckDB when the
 * window holds more than RAW_QUERY_PER_PX rows per pixel. Without a cache (it could not
 * be built, or a fleet run's union tables) the profile's own tables serve the same
 * queries. Window bounds are integers pasted into the SQL as
 * integer literals (a float there stops DuckDB from skipping row groups): start_ts < t1
 * AND end_ts > t0. With the rows in start order, both columns' statistics skip the
 * groups outside the window, long events included. All SQL runs in sandboxed databases
 * under the usual limits and query slots. */
#include "common/compat.h"
#include "server/duck_vec.h"
#include "server/http.h"
#include "common/xalloc.h"
#include "db/duck.h"
#include "server/lod.h"
#include "server/registry.h"
#include "server/timeline.h"

#include <ctype.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define RAW_PER_PX 3
/* a window's rows are read and bucketed here up to this many per pixel; beyond, DuckDB
 * buckets them (the pyramid keeps windows finer than its levels below about 32) */
#define RAW_QUERY_PER_PX 64

#define SRC_INSTR 0
#define SRC_DMA_AGG 1
#define SRC_DMA_PKT 2
#define SRC_FW 3

enum MHD_Result nx__tl_query_failed(struct nx_req *rq, const struct nx_err *err)
{
	if (err->code == NX_EDB)
		return nx__reply_error(rq, 500, "query_error", "%s", err->msg);
	return nx__reply_nx_err(rq, err);
}

/* The event sources of a view of p: instructions, one DMA table, framework events. */
static size_t view_sources(struct nx_profile *p, bool packets, int srcs[3])
{
	size_t n = 0;

	if (nx__pfiles_find(&p->files, "Instruction"))
		srcs[n++] = SRC_INSTR;
	if (!packets && nx__pfiles_find(&p->files, "DmaPacketAggregated"))
		srcs[n++] = SRC_DMA_AGG;
	else if (nx__pfiles_find(&p->files, "DmaPacket"))
		srcs[n++] = SRC_DMA_PKT;
	else if (nx__pfiles_find(&p->files, "DmaPacketAggregated"))
		srcs[n++] = SRC_DMA_AGG;
	if (nx__pfiles_find(&p->files, "SystemProfileEvents"))
		srcs[n++] = SRC_FW;
	return n;
}

bool nx__tl_dma_arg(struct nx_req *rq, bool *packets, enum MHD_Result *ret)
{
	const char *dma = nx__tl_arg(rq, "dma");

	*packets = dma && !strcmp(dma, "packets");
	if (!dma || *packets || !strcmp(dma, "transfers"))
		return true;
	*ret = nx__reply_error(rq, 400, "bad_request",
			       "dma must be packets or transfers, not '%.40s'", dma);
	return false;
}

int nx__tl_lod_query(struct nx_req *rq, struct nx_lod *lod, const char *sql,
		     struct nx_strbuf *out, struct nx_err *err)
{
	return nx__query_db_limited(rq, lod->db, sql, out, err);
}

bool nx__tl_has_table(struct nx_req *rq, struct nx_profile *p, const char *table,
		      enum MHD_Result *ret)
{
	if (nx__pfiles_find(&p->files, table))
		return true;
	*ret = nx__reply_error(rq, 404, "table_not_found", "profile '%s' has no table '%s'",
			       p->name, table);
	return false;
}

static bool cached(const struct nx_lod *lod, int s)
{
	return lod && lod->src[s].present;
}

static int track_rank(const char *t)
{
	static const char *const order[] = { "Tensor", "TensorMatrix", "Vector", "Scalar",
					     "GpSimd", "Sync" };

	for (int i = 0; t && i < (int)NX_ARRAY_SIZE(order); i++)
		if (!strcmp(t, order[i]))
			return i;
	return 6;
}

static int kind_rank(const char *k)
{
	static const char *const order[] = { "instruction", "framework", "dma", "counter" };

	for (int i = 0; k && i < (int)NX_ARRAY_SIZE(order); i++)
		if (!strcmp(k, order[i]))
			return i;
	return 4;
}

/* strcmp with runs of digits compared as numbers ("sem 2" before "sem 10"). */
static int natural_cmp(const char *a, const char *b)
{
	while (*a && *b) {
		if (isdigit((unsigned char)*a) && isdigit((unsigned char)*b)) {
			const char *x = a, *y = b;

			while (*x == '0')
				x++;
			while (*y == '0')
				y++;
			a = x;
			b = y;
			while (isdigit((unsigned char)*a))
				a++;
			while (isdigit((unsigned char)*b))
				b++;
			if (a - x != b - y)
				return (a - x) < (b - y) ? -1 : 1;
			if (strncmp(x, y, (size_t)(a - x)))
				return strncmp(x, y, (size_t)(a - x));
			continue;
		}
		if (*a != *b)
			return (unsigned char)*a < (unsigned char)*b ? -1 : 1;
		a++;
		b++;
	}
	return *a ? 1 : *b ? -1 : 0;
}

/* core, kind (instructions, framework streams, DMA, counters), engine order, stream name
 * (numbers in names by value), depth lane */
static int track_cmp(const void *a, const void *b)
{
	json_t *x = *(json_t *const *)a, *y = *(json_t *const *)b;
	json_int_t cx = json_integer_value(json_array_get(x, 1));
	json_int_t cy = json_integer_value(json_array_get(y, 1));
	const char *kx = json_string_value(json_array_get(x, 0));
	const char *ky = json_string_value(json_array_get(y, 0));
	const char *tx = json_string_value(json_array_get(x, 2));
	const char *ty = json_string_value(json_array_get(y, 2));

	if (cx != cy)
		return cx < cy ? -1 : 1;
	if (kind_rank(kx) != kind_rank(ky))
		return kind_rank(kx) - kind_rank(ky);
	const char *sx = json_string_value(json_array_get(x, 6));
	const char *sy = json_string_value(json_array_get(y, 6));
	json_int_t lx = json_integer_value(json_array_get(x, 7));
	json_int_t ly = json_integer_value(json_array_get(y, 7));
	int c;

	if (track_rank(tx) != track_rank(ty))
		return track_rank(tx) - track_rank(ty);
	if ((c = natural_cmp(sx ? sx : "", sy ? sy : "")))
		return c;
	if (lx != ly)
		return lx < ly ? -1 : 1;
	return natural_cmp(tx ? tx : "", ty ? ty : "");
}

/* Appends the rows of a {"columns","rows"} reply to rows. */
static int append_rows(const struct nx_strbuf *out, json_t *rows, struct nx_err *err)
{
	json_t *root = json_loadb(out->buf, out->len, 0, NULL), *row;
	size_t i;

	if (!root)
		return nx_errf(err, -EIO, "cannot read the timeline tracks");
	json_array_foreach(json_object_get(root, "rows"), i, row)
		json_array_append(rows, row);
	json_decref(root);
	return 0;
}

/* The tracks of source src (nx__lod_sources) from the profile's own table, appended to
 * rows. */
static int source_tracks(struct nx_req *rq, struct nx_profile *p, int src, json_t *rows,
			 struct nx_err *err)
{
	const struct nx_lod_source *s = &nx__lod_sources[src];
	struct nx_strbuf sql = NX_STRBUF_INIT, out = NX_STRBUF_INIT;
	int rc;

	nx_strbuf_addf(&sql, "SELECT '%s', pcore_idx::BIGINT, (%s)::VARCHAR AS t, "
			     "count(*)::BIGINT, min(start_ts), max(end_ts), t, 0 FROM \"%s\"%s "
			     "GROUP BY ALL",
		       s->kind, s->track, s->table,
		       src == NX_LOD_SRC_FW ? " WHERE " NX_LOD_FW_DRAWN : "");
	rc = nx__query_limited(rq, p, sql.buf, &out, err);
	if (!rc)
		rc = append_rows(&out, rows, err);
	nx_strbuf_release(&sql);
	nx_strbuf_release(&out);
	return rc;
}

/* The tracks of a view from the profile's own tables (no cache). */
static int table_tracks(struct nx_req *rq, struct nx_profile *p, const int *srcs, size_t n,
			json_t *rows, struct nx_err *err)
{
	struct nx_strbuf out = NX_STRBUF_INIT;
	char *csql = nx__counter_tracks_sql(p);
	int rc = 0;

	for (size_t i = 0; i < n && !rc; i++)
		rc = source_tracks(rq, p, srcs[i], rows, err);
	if (!rc && csql) {
		rc = nx__query_limited(rq, p, csql, &out, err);
		if (!rc)
			rc = append_rows(&out, rows, err);
	}
	free(csql);
	nx_strbuf_release(&out);
	return rc;
}

/* The tracks of a view from the cache; sources it lacks from the profile's tables. */
static int cache_tracks(struct nx_req *rq, struct nx_profile *p, struct nx_lod *lod,
			const int *srcs, size_t n, json_t *rows, struct nx_err *err)
{
	struct nx_strbuf sql = NX_STRBUF_INIT, out = NX_STRBUF_INIT;
	int missing[3];
	size_t nm = 0;
	int rc;

	nx_strbuf_addstr(&sql, "SELECT kind, core, track, count, \"start\", \"end\", stream, lane "
			       "FROM tl.tracks WHERE kind = 'counter'");
	for (size_t i = 0; i < n; i++) {
		if (cached(lod, srcs[i]))
			nx_strbuf_addf(&sql, " OR src = %d", srcs[i]);
		else
			missing[nm++] = srcs[i];
	}
	rc = nx__tl_lod_query(rq, lod, sql.buf, &out, err);
	if (!rc)
		rc = append_rows(&out, rows, err);
	if (!rc && nm) {
		/* the counters came from the cache: only the missing sources' events here */
		for (size_t i = 0; i < nm && !rc; i++)
			rc = source_tracks(rq, p, missing[i], rows, err);
	}
	nx_strbuf_release(&sql);
	nx_strbuf_release(&out);
	return rc;
}

/* The sources of a tracks or window request. */
struct view {
	int srcs[3];
	size_t n;
	struct nx__tl_window w; /* a window request's */
};

/* The reply of .../timeline/tracks (nx__tl_body). */
static int tracks_body(struct nx_req *rq, struct nx_profile *p, struct nx_lod *lod, void *arg,
		       struct nx_strbuf *out, struct nx_err *err)
{
	static const char *const names[] = { "kind",  "core", "track",	 "count",
					     "start", "end",  "stream", "lane" };
	static const char *const types[] = { "VARCHAR", "BIGINT", "VARCHAR", "BIGINT",
					     "BIGINT",	"BIGINT", "VARCHAR", "INTEGER" };
	const struct view *vw = arg;
	json_t *rows = json_array(), *cols, *reply;
	json_t **v;
	size_t nrows;
	char *txt;
	int rc;

	rc = lod ? cache_tracks(rq, p, lod, vw->srcs, vw->n, rows, err)
		 : table_tracks(rq, p, vw->srcs, vw->n, rows, err);
	if (rc) {
		json_decref(rows);
		return rc;
	}
	nrows = json_array_size(rows);
	v = nx_xcalloc(nrows ? nrows : 1, sizeof(*v));
	for (size_t i = 0; i < nrows; i++)
		v[i] = json_incref(json_array_get(rows, i));
	qsort(v, nrows, sizeof(*v), track_cmp);
	json_array_clear(rows);
	for (size_t i = 0; i < nrows; i++)
		json_array_append_new(rows, v[i]);
	free(v);
	cols = json_array();
	for (size_t i = 0; i < NX_ARRAY_SIZE(names); i++)
		json_array_append_new(cols, json_pack("{s:s,s:s}", "name", names[i], "type", types[i]));
	reply = json_pack("{s:o,s:o,s:I,s:b,s:b}", "columns", cols, "rows", rows, "row_count",
			  (json_int_t)nrows, "truncated", 0, "cached", lod != NULL);
	txt = json_dumps(reply, JSON_COMPACT);
	nx_strbuf_addstr(out, txt);
	free(txt);
	json_decref(reply);
	return 0;
}

enum MHD_Result nx__h_timeline_tracks(struct nx_req *rq, char **cap)
{
	enum MHD_Result ret;
	struct nx_profile *p;
	struct view vw;
	bool packets;

	if (!nx__tl_dma_arg(rq, &packets, &ret) || !(p = nx__lookup_profile(rq, cap, true, &ret)))
		return ret;
	vw.n = view_sources(p, packets, vw.srcs);
	return nx__tl_serve(rq, p, true, tracks_body, &vw);
}

/* s as a decimal integer in [lo, hi] into *v; false when absent or invalid. */
static bool parse_int(const char *s, int64_t lo, int64_t hi, int64_t *v)
{
	char *end;
	long long x;

	if (!s || !*s)
		return false;
	errno = 0;
	x = strtoll(s, &end, 10);
	if (*end || errno || x < lo || x > hi)
		return false;
	*v = x;
	return true;
}

const char *nx__tl_arg(struct nx_req *rq, const char *name)
{
	return MHD_lookup_connection_value(rq->conn, MHD_GET_ARGUMENT_KIND, name);
}

bool nx__tl_int_arg(struct nx_req *rq, const char *name, int64_t lo, int64_t hi, int64_t *v)
{
	return parse_int(nx__tl_arg(rq, name), lo, hi, v);
}

bool nx__tl_int_opt_arg(struct nx_req *rq, const char *name, int64_t lo, int64_t hi,
			int64_t *v, enum MHD_Result *ret)
{
	if (!nx__tl_arg(rq, name) || nx__tl_int_arg(rq, name, lo, hi, v))
		return true;
	*ret = nx__reply_error(rq, 400, "bad_request",
			       "%s must be an integer from %" PRId64 " to %" PRId64, name, lo, hi);
	return false;
}

bool nx__tl_event_arg(struct nx_req *rq, int *s, int64_t *id, enum MHD_Result *ret)
{
	const char *table = nx__tl_arg(rq, "table");

	*s = -1;
	for (int i = 0; table && i <= 1; i++) /* Instruction, DmaPacketAggregated */
		if (!strcmp(table, nx__lod_sources[i].table))
			*s = i;
	if (*s < 0) {
		*ret = nx__reply_error(rq, 400, "bad_request",
				       "table must be Instruction or DmaPacketAggregated");
		return false;
	}
	if (!nx__tl_int_arg(rq, "id", INT64_MIN, INT64_MAX, id)) {
		*ret = nx__reply_error(rq, 400, "bad_request", "id must be an integer");
		return false;
	}
	return true;
}

enum nx__tl_window_error nx__tl_window_parse(const char *t0, const char *t1, const char *px,
					     bool with_px, struct nx__tl_window *w)
{
	int64_t span;

	memset(w, 0, sizeof(*w));
	w->bucket = 1;
	if (!parse_int(t0, -NX_TL_TIME_BOUND, NX_TL_TIME_BOUND, &w->t0) ||
	    !parse_int(t1, -NX_TL_TIME_BOUND, NX_TL_TIME_BOUND, &w->t1) || w->t1 <= w->t0)
		return NX_TL_BAD_TIMES;
	if (!with_px)
		return NX_TL_WINDOW_OK;
	if (!parse_int(px, 1, NX_TL_MAX_PX, &w->px))
		return NX_TL_BAD_PX;
	/* span <= 2^62, so bucket <= 2^62 and bucket * px < 2 * span stay in range, and
	 * the snapped bounds within +-(2^61 + 2^62) */
	span = w->t1 - w->t0;
	while (w->bucket * w->px < span) {
		w->bucket <<= 1;
		w->level++;
	}
	w->t0 -= ((w->t0 % w->bucket) + w->bucket) % w->bucket;
	if (w->t1 % w->bucket)
		w->t1 += w->bucket - ((w->t1 % w->bucket) + w->bucket) % w->bucket;
	return NX_TL_WINDOW_OK;
}

bool nx__tl_window_arg(struct nx_req *rq, bool with_px, struct nx__tl_window *w,
		       enum MHD_Result *ret)
{
	switch (nx__tl_window_parse(nx__tl_arg(rq, "t0"), nx__tl_arg(rq, "t1"),
				    nx__tl_arg(rq, "px"), with_px, w)) {
	case NX_TL_BAD_TIMES:
		*ret = nx__reply_error(rq, 400, "bad_request",
				       "t0 and t1 must be integers (profile nanoseconds) between "
				       NX_TL_TIME_BOUND_TEXT " with t0 < t1");
		return false;
	case NX_TL_BAD_PX:
		*ret = nx__reply_error(rq, 400, "bad_request",
				       "px must be the width of the view in pixels, 1 to %d",
				       NX_TL_MAX_PX);
		return false;
	default:
		return true;
	}
}

/* A track's event count in a window (count_chunk). */
struct wcount {
	bool core_null;
	int64_t core;
	char *track;
	int64_t n;
};
struct wcounts {
	struct wcount *v;
	size_t n, cap;
};

static int count_chunk(void *arg, duckdb_data_chunk chunk, struct nx_err *err)
{
	struct wcounts *c = arg;
	duckdb_vector core = duckdb_data_chunk_get_vector(chunk, 0);
	duckdb_vector track = duckdb_data_chunk_get_vector(chunk, 1);
	duckdb_vector cnt = duckdb_data_chunk_get_vector(chunk, 2);

	(void)err;
	for (idx_t row = 0; row < duckdb_data_chunk_get_size(chunk); row++) {
		struct wcount *w;

		NX_GROW(c->v, c->n + 1, c->cap);
		w = &c->v[c->n++];
		w->core = nx__vec_i64(core, row, &w->core_null);
		w->track = nx__vec_text(track, row);
		w->n = ((int64_t *)duckdb_vector_get_data(cnt))[row];
	}
	return 0;
}

static void wcounts_release(struct wcounts *c)
{
	for (size_t i = 0; i < c->n; i++)
		free(c->v[i].track);
	free(c->v);
}

/* "(core, track) is one of the tracks with more than raw_limit events", as SQL. */
static void binned_cond(struct nx_strbuf *sql, const struct wcounts *c, int64_t raw_limit)
{
	size_t k = 0;

	nx_strbuf_addch(sql, '(');
	for (size_t i = 0; i < c->n; i++) {
		if (c->v[i].n <= raw_limit)
			continue;
		nx_strbuf_addstr(sql, k++ ? " OR (core IS NOT DISTINCT FROM " :
				       "(core IS NOT DISTINCT FROM ");
		if (c->v[i].core_null)
			nx_strbuf_addstr(sql, "NULL");
		else
			nx_strbuf_addf(sql, "%" PRId64, c->v[i].core);
		nx_strbuf_addstr(sql, " AND track IS NOT DISTINCT FROM ");
		if (c->v[i].track)
			nx_sql_quote(sql, c->v[i].track);
		else
			nx_strbuf_addstr(sql, "NULL");
		nx_strbuf_addch(sql, ')');
	}
	nx_strbuf_addch(sql, ')');
}

/* The buckets of the tracks with many rows (bucket width, from, t1, t0; then the tracks'
 * condition); the longest event by duration * 2^64 - id, as in lod_build.c. */
static const char binned_sql[] =
	"SELECT core, track, true, r.id, r.s, r.e, r.l, cnt, busy, lst FROM (SELECT core, track, "
	"start_ts // %" PRId64 " AS k, arg_max({'id': id, 's': start_ts, 'e': end_ts, "
	"'l': label}, ((end_ts - start_ts)::HUGEINT << 64) - id) AS r, count(*)::BIGINT AS cnt, "
	"sum(end_ts - start_ts)::BIGINT AS busy, max(end_ts) AS lst FROM %s "
	"WHERE start_ts < %" PRId64 " AND end_ts > %" PRId64 " AND ";

/* The window query on event rows, once the tracks' counts in the window are known:
 * `from` yields (core, track, id, start_ts, end_ts, label). Tracks with at most
 * raw_limit events come back raw, the others in buckets. Columns as timeline.h says. */
static void window_sql(struct nx_strbuf *sql, const char *from, int64_t t0, int64_t t1,
		       int64_t bucket, int64_t raw_limit, const struct wcounts *c)
{
	size_t raw = 0, binned = 0;

	for (size_t i = 0; i < c->n; i++)
		c->v[i].n <= raw_limit ? raw++ : binned++;
	if (raw) {
		nx_strbuf_addf(sql, "SELECT core, track, false AS bins, id, start_ts, end_ts, label, "
				    "NULL::BIGINT AS cnt, NULL::BIGINT AS busy, NULL::BIGINT AS lst "
				    "FROM %s WHERE start_ts < %" PRId64 " AND end_ts > %" PRId64,
			       from, t1, t0);
		if (binned) {
			nx_strbuf_addstr(sql, " AND NOT ");
			binned_cond(sql, c, raw_limit);
			nx_strbuf_addstr(sql, " UNION ALL ");
		}
	}
	if (binned) {
		nx_strbuf_addf(sql, binned_sql, bucket, from, t1, t0);
		binned_cond(sql, c, raw_limit);
		nx_strbuf_addstr(sql, " GROUP BY ALL)");
	}
}

/* The window query of source s from level `level` of its pyramid, tl.lod<s> (its text
 * columns may be ENUMs, lod_build.c: read as VARCHAR). */
static void lod_window_sql(struct nx_strbuf *sql, int s, int level, int64_t t0, int64_t t1,
			   int64_t bucket)
{
	nx_strbuf_addf(sql,
		"SELECT core, track::VARCHAR AS track, true AS bins, id, start_ts, end_ts, "
		"label::VARCHAR AS label, count, busy, last_ts FROM tl.lod%d WHERE level = %d "
		"AND k >= %" PRId64 " AND k < %" PRId64,
		s, level, t0 / bucket, t1 / bucket);
}

/* nx__pdb_query_chunks under the server's limits and query slots. */
static int run_chunks(struct nx_req *rq, struct nx_pdb *db, const char *sql, nx__pdb_chunk_fn fn,
		      void *arg, struct nx_err *err)
{
	struct nx_query_limits lim = nx__query_limits(rq);
	int rc;

	nx__query_slot_take(rq->s);
	rc = nx__pdb_query_chunks(db, sql, &lim, fn, arg, err);
	nx__query_slot_give(rq->s);
	return rc;
}

/* Writes "<kind>":{...} of source s for the window into the reply. */
static int source_reply(struct nx_req *rq, struct nx_profile *p, struct nx_lod *lod, int s,
			int level, int64_t t0, int64_t t1, int64_t px, int64_t bucket,
			struct nx__tl_reply *rep, struct nx_err *err)
{
	int64_t raw_limit = RAW_PER_PX * px;
	struct nx_strbuf sql = NX_STRBUF_INIT, f = NX_STRBUF_INIT;
	bool use_lod = cached(lod, s) && level >= lod->src[s].lo && level <= lod->src[s].hi;
	const char *from = use_lod ? "lod" : cached(lod, s) ? "events" : "table";
	bool empty = cached(lod, s) && lod->src[s].n == 0;
	/* the events of a source the cache has not copied come from the profile's table */
	bool copied = cached(lod, s) && lod->src[s].copied;
	struct nx_pdb *db = use_lod || copied ? lod->db : p->db;
	int rc = 0;

	nx_strbuf_addf(rep->out, "\"%s\":{\"table\":\"%s\",\"lod\":%s,\"from\":\"%s\",\"level\":",
		       nx__lod_sources[s].kind, nx__lod_sources[s].table, use_lod ? "true" : "false",
		       from);
	if (use_lod)
		nx_strbuf_addf(rep->out, "%d,", level);
	else
		nx_strbuf_addstr(rep->out, "null,");
	if (use_lod) {
		nx__tl_reply_begin_source(rep, 0, 0, 0);
		lod_window_sql(&sql, s, level, t0, t1, bucket);
		rc = run_chunks(rq, db, sql.buf, nx__tl_reply_chunk, rep, err);
	} else if (!empty) {
		/* the text columns as VARCHAR: tl.ev<s> may hold ENUMs (lod_build.c) */
		if (copied)
			nx_strbuf_addf(&f, "(SELECT core, track::VARCHAR AS track, id, start_ts, "
					   "end_ts, label::VARCHAR AS label FROM tl.ev%d)", s);
		else
			nx__lod_events_sql(&f, s);
		/* the window's rows, bucketed here for tracks with many: one query, unless
		 * the window holds more than RAW_QUERY_PER_PX rows per pixel */
		nx__tl_reply_begin_source(rep, bucket, raw_limit, (uint64_t)(RAW_QUERY_PER_PX * px));
		nx_strbuf_addf(&sql, "SELECT core, track, false AS bins, id, start_ts, end_ts, label, "
				     "NULL::BIGINT AS cnt, NULL::BIGINT AS busy, NULL::BIGINT AS lst "
				     "FROM %s WHERE start_ts < %" PRId64 " AND end_ts > %" PRId64,
			       f.buf, t1, t0);
		rc = run_chunks(rq, db, sql.buf, nx__tl_reply_chunk, rep, err);
		if (rc == -E2BIG) {
			/* the tracks' counts first: they say which come back raw */
			struct wcounts c = { 0 };

			nx__tl_reply_begin_source(rep, 0, 0, 0);
			nx_strbuf_reset(&sql);
			nx_strbuf_addf(&sql, "SELECT core, track, count(*)::BIGINT FROM %s "
					     "WHERE start_ts < %" PRId64 " AND end_ts > %" PRId64
					     " GROUP BY ALL", f.buf, t1, t0);
			rc = run_chunks(rq, db, sql.buf, count_chunk, &c, err);
			if (!rc && c.n) {
				nx_strbuf_reset(&sql);
				window_sql(&sql, f.buf, t0, t1, bucket, raw_limit, &c);
				rc = run_chunks(rq, db, sql.buf, nx__tl_reply_chunk, rep, err);
			}
			wcounts_release(&c);
		}
	}
	if (!rc)
		rc = nx__tl_reply_end_source(rep, err);
	nx_strbuf_addch(rep->out, '}');
	nx_strbuf_release(&sql);
	nx_strbuf_release(&f);
	return rc;
}

/* The reply of .../timeline (nx__tl_body). */
static int window_body(struct nx_req *rq, struct nx_profile *p, struct nx_lod *lod, void *arg,
		       struct nx_strbuf *out, struct nx_err *err)
{
	const struct view *vw = arg;
	const struct nx__tl_window *w = &vw->w;
	int64_t raw_limit = RAW_PER_PX * w->px;
	struct nx__tl_reply rep;
	int rc = 0;

	nx__tl_reply_init(&rep, out, rq->s->o.max_result_bytes, w->t0);
	nx__tl_put_window(out, w->t0, w->t1); /* beyond 2^53 as strings */
	nx_strbuf_addf(out, ",\"px\":%" PRId64 ",\"bucket\":%" PRId64 ",\"raw_limit\":%" PRId64 ",",
		       w->px, w->bucket, raw_limit);
	for (size_t i = 0; i < vw->n && !rc; i++) {
		rc = source_reply(rq, p, lod, vw->srcs[i], w->level, w->t0, w->t1, w->px, w->bucket,
				  &rep, err);
		nx_strbuf_addch(out, ',');
	}
	if (!rc) {
		nx__tl_reply_labels(&rep);
		nx_strbuf_addch(out, '}');
	}
	nx__tl_reply_release(&rep);
	return rc;
}

enum MHD_Result nx__h_timeline(struct nx_req *rq, char **cap)
{
	struct nx_profile *p;
	enum MHD_Result ret;
	struct view vw;
	bool packets;

	if (!nx__tl_window_arg(rq, true, &vw.w, &ret) || !nx__tl_dma_arg(rq, &packets, &ret))
		return ret;
	p = nx__lookup_profile(rq, cap, true, &ret);
	if (!p)
		return ret;
	vw.n = view_sources(p, packets, vw.srcs);
	return nx__tl_serve(rq, p, vw.n > 0, window_body, &vw);
}
