/* SPDX-License-Identifier: MIT
 * h_timeline.c: the timeline endpoints of the web UI, with level of detail computed
 * here rather than in the browser (docs/api.md, docs/ui.md).
 *   .../timeline/tracks   the rows of the timeline: instruction tracks per core and
 *                         timeline_track, DMA tracks per core and queue.
 *   .../timeline?t0=&t1=&px=  per track, the events of the window [t0, t1): the raw rows
 *                         when there are few (at most RAW_PER_PX per pixel), else one
 *                         bucket per power-of-two time slice with its longest event
 *                         (ties: the lowest id), event count and busy time.
 * Buckets at least as wide as the finest level of the profile's pyramid (lod.h) are
 * read from it, one level and window only; finer views read the raw rows of their
 * window, which the pyramid's choice of levels keeps small.
 * Window bounds are integers pasted into the SQL as integer literals (a float there
 * stops DuckDB from skipping row groups): start_ts < t1 AND end_ts > t0. With the rows
 * ordered by start time, both columns' row-group statistics skip the groups outside
 * the window, long events included, with no bound on durations. All SQL runs in the
 * profile's sandboxed database under the usual limits and query slots. */
#include "common/compat.h"
#include "server/http.h"
#include "common/json_writer.h"
#include "common/xalloc.h"
#include "server/lod.h"
#include "server/registry.h"
#include "server/timeline.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define RAW_PER_PX 3
#define MAX_PX 16384

/* An event source: its table, track and label SQL are nx__lod_sources[lod]'s. */
struct src {
	const char *kind; /* "instruction", "dma" or "framework" */
	int lod;
};

static const struct src instr_src = { "instruction", 0 };
static const struct src dma_agg_src = { "dma", 1 };
static const struct src dma_pkt_src = { "dma", 2 };
static const struct src fw_src = { "framework", 3 };

#define TABLE(s) (nx__lod_sources[(s)->lod].table)
#define TRACK(s) (nx__lod_sources[(s)->lod].track)
#define LABEL(s) (nx__lod_sources[(s)->lod].label)

enum MHD_Result nx__tl_query_failed(struct nx_req *rq, const struct nx_err *err)
{
	if (err->code == NX_EDB)
		return nx__reply_error(rq, 500, "query_error", "%s", err->msg);
	return nx__reply_nx_err(rq, err);
}

static const struct src *dma_source(struct nx_profile *p, bool packets)
{
	if (!packets && nx__pfiles_find(&p->files, "DmaPacketAggregated"))
		return &dma_agg_src;
	if (nx__pfiles_find(&p->files, "DmaPacket"))
		return &dma_pkt_src;
	return NULL;
}

/* The pyramid of p, built on first use (NULL when it cannot be: the raw tables serve). */
static struct nx_lod *profile_lod(struct nx_req *rq, struct nx_profile *p)
{
	struct nx_registry *r = &rq->s->reg;
	struct nx_err err = { 0 };

	pthread_mutex_lock(&p->lod_lock);
	if (!p->lod && !p->lod_error) {
		struct stat st = { .st_dev = p->dev, .st_ino = p->ino, .st_mtim = p->mtime };

		if (nx__lod_open(r->data_real, p->name, p->dir, &st, &p->files, r->threads,
				 &p->lod, &err))
			p->lod_error = nx_xstrdup(err.msg[0] ? err.msg : "unknown error");
	}
	pthread_mutex_unlock(&p->lod_lock);
	return p->lod;
}

/* nx__query_limited on the pyramid's database. */
static int lod_query(struct nx_req *rq, struct nx_lod *lod, const char *sql,
		     struct nx_strbuf *out, struct nx_err *err)
{
	const struct nx_server_opts *o = &rq->s->o;
	struct nx_query_limits lim = {
		.timeout_ms = o->query_timeout_ms,
		.max_rows = o->max_result_rows,
		.max_bytes = o->max_result_bytes,
		.wd = &rq->s->wd,
	};
	int rc;

	while (sem_wait(&rq->s->query_slots) != 0)
		; /* EINTR */
	rc = nx__pdb_query(lod->db, sql, &lim, out, err);
	sem_post(&rq->s->query_slots);
	return rc;
}

static bool lod_has(const struct nx_lod *lod, const struct src *s)
{
	return lod && lod->src[s->lod].present && lod->src[s->lod].lo <= lod->src[s->lod].hi;
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

/* core, kind (instructions first), engine order, track name */
static int track_cmp(const void *a, const void *b)
{
	json_t *x = *(json_t *const *)a, *y = *(json_t *const *)b;
	json_int_t cx = json_integer_value(json_array_get(x, 1));
	json_int_t cy = json_integer_value(json_array_get(y, 1));
	const char *kx = json_string_value(json_array_get(x, 0));
	const char *ky = json_string_value(json_array_get(y, 0));
	const char *tx = json_string_value(json_array_get(x, 2));
	const char *ty = json_string_value(json_array_get(y, 2));
	int c;

	if (cx != cy)
		return cx < cy ? -1 : 1;
	if ((c = -strcmp(kx ? kx : "", ky ? ky : "")))
		return c;
	if (track_rank(tx) != track_rank(ty))
		return track_rank(tx) - track_rank(ty);
	return strcmp(tx ? tx : "", ty ? ty : "");
}

/* The tracks of one source: from the pyramid's coarsest level, else the raw table. */
static int source_tracks(struct nx_req *rq, struct nx_profile *p, struct nx_lod *lod,
			 const struct src *s, json_t *rows, struct nx_err *err)
{
	struct nx_strbuf sql = NX_STRBUF_INIT, out = NX_STRBUF_INIT;
	json_t *root = NULL, *row;
	size_t i;
	int rc;

	if (lod_has(lod, s))
		nx_strbuf_addf(&sql, "SELECT '%s', core, track, sum(count)::BIGINT, min(first_ts), "
				     "max(last_ts) FROM " NX_LOD_TABLE " WHERE source = '%s' AND "
				     "level = %d GROUP BY ALL",
			       s->kind, TABLE(s), lod->src[s->lod].hi);
	else
		nx_strbuf_addf(&sql, "SELECT '%s', pcore_idx::BIGINT, (%s)::VARCHAR, count(*)::BIGINT, "
				     "min(start_ts), max(end_ts) FROM \"%s\" GROUP BY ALL",
			       s->kind, TRACK(s), TABLE(s));
	rc = lod_has(lod, s) ? lod_query(rq, lod, sql.buf, &out, err)
			     : nx__query_limited(rq, p, sql.buf, &out, err);
	if (!rc && !(root = json_loadb(out.buf, out.len, 0, NULL)))
		rc = nx_errf(err, -EIO, "cannot read the tracks of %s", TABLE(s));
	json_array_foreach(json_object_get(root, "rows"), i, row)
		json_array_append(rows, row);
	json_decref(root);
	nx_strbuf_release(&sql);
	nx_strbuf_release(&out);
	return rc;
}

/* Appends the counter tables' tracks (kind "counter") to rows. */
static int counter_tracks(struct nx_req *rq, struct nx_profile *p, json_t *rows,
			  struct nx_err *err)
{
	struct nx_strbuf out = NX_STRBUF_INIT;
	char *sql = nx__counter_tracks_sql(p);
	json_t *root = NULL, *row;
	size_t i;
	int rc = 0;

	if (!sql)
		return 0;
	rc = nx__query_limited(rq, p, sql, &out, err);
	if (!rc && !(root = json_loadb(out.buf, out.len, 0, NULL)))
		rc = nx_errf(err, -EIO, "cannot read the counter tracks");
	json_array_foreach(json_object_get(root, "rows"), i, row)
		json_array_append(rows, row);
	json_decref(root);
	nx_strbuf_release(&out);
	free(sql);
	return rc;
}

enum MHD_Result nx__h_timeline_tracks(struct nx_req *rq, char **cap)
{
	const char *dma = MHD_lookup_connection_value(rq->conn, MHD_GET_ARGUMENT_KIND, "dma");
	static const char *const names[] = { "kind", "core", "track", "count", "start", "end" };
	static const char *const types[] = { "VARCHAR", "BIGINT", "VARCHAR", "BIGINT", "BIGINT",
					     "BIGINT" };
	struct nx_strbuf sb = NX_STRBUF_INIT;
	struct nx_err err = { 0 };
	enum MHD_Result ret;
	struct nx_profile *p = nx__lookup_profile(rq, cap, true, &ret);
	const struct src *srcs[3];
	json_t *rows, *cols, *reply;
	struct nx_lod *lod;
	json_t **v;
	size_t n = 0, nrows;
	char *txt;
	int rc = 0;

	if (!p)
		return ret;
	if (nx__pfiles_find(&p->files, "Instruction"))
		srcs[n++] = &instr_src;
	if ((srcs[n] = dma_source(p, dma && !strcmp(dma, "packets"))))
		n++;
	if (nx__pfiles_find(&p->files, "SystemProfileEvents"))
		srcs[n++] = &fw_src;
	lod = n ? profile_lod(rq, p) : NULL;
	rows = json_array();
	for (size_t i = 0; i < n && !rc; i++)
		rc = source_tracks(rq, p, lod, srcs[i], rows, &err);
	if (!rc)
		rc = counter_tracks(rq, p, rows, &err);
	if (rc) {
		ret = nx__tl_query_failed(rq, &err);
		json_decref(rows);
		nx__reg_put(&rq->s->reg, p);
		return ret;
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
	reply = json_pack("{s:o,s:o,s:I,s:b}", "columns", cols, "rows", rows, "row_count",
			  (json_int_t)nrows, "truncated", 0);
	txt = json_dumps(reply, JSON_COMPACT);
	nx_strbuf_addstr(&sb, txt);
	free(txt);
	json_decref(reply);
	ret = nx__reply_json(rq, 200, &sb);
	nx_strbuf_release(&sb);
	nx__reg_put(&rq->s->reg, p);
	return ret;
}

bool nx__tl_int_arg(struct nx_req *rq, const char *name, int64_t lo, int64_t hi, int64_t *v)
{
	const char *s = MHD_lookup_connection_value(rq->conn, MHD_GET_ARGUMENT_KIND, name);
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

/* The window predicate of one source, with integer literals only. */
static void window_where(struct nx_strbuf *sql, int64_t t0, int64_t t1)
{
	nx_strbuf_addf(sql, "start_ts < %" PRId64 " AND end_ts > %" PRId64, t1, t0);
}

/* The window query of one source on its raw rows: one row per track, columns as
 * lists. The window's rows are read once (a materialized CTE that also counts them
 * per track); tracks with at most raw_limit of them come back raw, the others in
 * buckets. */
static void window_sql(struct nx_strbuf *sql, const struct src *s, int64_t t0, int64_t t1,
		       int64_t bucket, int64_t raw_limit)
{
	nx_strbuf_addf(sql,
		"WITH w AS MATERIALIZED (SELECT pcore_idx AS core, %s AS track, id, "
		"start_ts AS s, end_ts AS e, %s AS label, count(*) OVER (PARTITION BY "
		"pcore_idx, %s) AS n FROM \"%s\" WHERE ",
		TRACK(s), LABEL(s), TRACK(s), TABLE(s));
	window_where(sql, t0, t1);
	nx_strbuf_addf(sql,
		") SELECT core, track, 'raw' AS mode, list(id ORDER BY s, id) AS id, "
		"list(s ORDER BY s, id) AS start, list(e ORDER BY s, id) AS \"end\", "
		"list(label ORDER BY s, id) AS label, NULL::BIGINT[] AS count, "
		"NULL::BIGINT[] AS busy, NULL::BIGINT[] AS first, NULL::BIGINT[] AS last "
		"FROM w WHERE n <= %" PRId64 " GROUP BY ALL UNION ALL "
		"SELECT core, track, 'bins', list(r.id ORDER BY k), list(r.s ORDER BY k), "
		"list(r.e ORDER BY k), list(r.l ORDER BY k), list(cnt ORDER BY k), "
		"list(busy ORDER BY k), list(fst ORDER BY k), list(lst ORDER BY k) "
		"FROM (SELECT core, track, s // %" PRId64 " AS k, arg_max({'id': id, 's': s, "
		"'e': e, 'l': label}, (e - s, -id)) AS r, count(*) AS cnt, "
		"sum(e - s)::BIGINT AS busy, min(s) AS fst, max(e) AS lst FROM w "
		"WHERE n > %" PRId64 " GROUP BY ALL) GROUP BY ALL ORDER BY core, track",
		raw_limit, bucket, raw_limit);
}

/* The window query of one source from level `level` of the pyramid: every track in
 * buckets, with the same columns as window_sql. */
static void lod_window_sql(struct nx_strbuf *sql, const struct src *s, int level, int64_t t0,
			   int64_t t1, int64_t bucket)
{
	nx_strbuf_addf(sql,
		"SELECT core, track, 'bins' AS mode, list(id ORDER BY k) AS id, "
		"list(start_ts ORDER BY k) AS start, list(end_ts ORDER BY k) AS \"end\", "
		"list(label ORDER BY k) AS label, list(count ORDER BY k) AS count, "
		"list(busy ORDER BY k) AS busy, list(first_ts ORDER BY k) AS first, "
		"list(last_ts ORDER BY k) AS last FROM " NX_LOD_TABLE " WHERE source = '%s' AND "
		"level = %d AND k >= %" PRId64 " AND k < %" PRId64 " GROUP BY ALL ORDER BY core, "
		"track", TABLE(s), level, t0 / bucket, t1 / bucket);
}

enum MHD_Result nx__h_timeline(struct nx_req *rq, char **cap)
{
	const char *dma = MHD_lookup_connection_value(rq->conn, MHD_GET_ARGUMENT_KIND, "dma");
	int64_t t0, t1, px, bucket = 1, span, raw_limit;
	struct nx_lod *lod;
	int level = 0;
	struct nx_strbuf sb = NX_STRBUF_INIT, sql = NX_STRBUF_INIT;
	struct nx_err err = { 0 };
	const struct src *srcs[3];
	struct nx_profile *p;
	enum MHD_Result ret;
	struct nx_jw jw;
	size_t n = 0;

	if (!nx__tl_int_arg(rq, "t0", INT64_MIN / 4, INT64_MAX / 4, &t0) ||
	    !nx__tl_int_arg(rq, "t1", INT64_MIN / 4, INT64_MAX / 4, &t1) || t1 <= t0)
		return nx__reply_error(rq, 400, "bad_request",
				       "t0 and t1 must be integers (profile nanoseconds) with "
				       "t0 < t1");
	if (!nx__tl_int_arg(rq, "px", 1, MAX_PX, &px))
		return nx__reply_error(rq, 400, "bad_request",
				       "px must be the width of the view in pixels, 1 to %d",
				       MAX_PX);
	if (dma && strcmp(dma, "packets") && strcmp(dma, "transfers"))
		return nx__reply_error(rq, 400, "bad_request",
				       "dma must be packets or transfers, not '%.40s'", dma);
	/* bucket: the smallest power of two >= span / px; bounds snapped to it */
	span = t1 - t0;
	while (bucket * px < span)
		bucket <<= 1;
	t0 -= ((t0 % bucket) + bucket) % bucket;
	if (t1 % bucket)
		t1 += bucket - ((t1 % bucket) + bucket) % bucket;
	raw_limit = RAW_PER_PX * px;
	p = nx__lookup_profile(rq, cap, true, &ret);
	if (!p)
		return ret;
	if (nx__pfiles_find(&p->files, "Instruction"))
		srcs[n++] = &instr_src;
	if ((srcs[n] = dma_source(p, dma && !strcmp(dma, "packets"))))
		n++;
	if (nx__pfiles_find(&p->files, "SystemProfileEvents"))
		srcs[n++] = &fw_src;
	nx_jw_init(&jw, &sb, false);
	nx_jw_object_begin(&jw);
	nx_jw_key(&jw, "t0");
	nx_jw_int(&jw, t0);
	nx_jw_key(&jw, "t1");
	nx_jw_int(&jw, t1);
	nx_jw_key(&jw, "px");
	nx_jw_int(&jw, px);
	nx_jw_key(&jw, "bucket");
	nx_jw_int(&jw, bucket);
	nx_jw_key(&jw, "raw_limit");
	nx_jw_int(&jw, raw_limit);
	lod = n ? profile_lod(rq, p) : NULL;
	while (((int64_t)1 << level) < bucket)
		level++;
	for (size_t i = 0; i < n; i++) {
		bool use_lod = lod_has(lod, srcs[i]) && level >= lod->src[srcs[i]->lod].lo &&
			       level <= lod->src[srcs[i]->lod].hi;

		nx_strbuf_reset(&sql);
		if (use_lod)
			lod_window_sql(&sql, srcs[i], level, t0, t1, bucket);
		else
			window_sql(&sql, srcs[i], t0, t1, bucket, raw_limit);
		nx_jw_key(&jw, srcs[i]->kind);
		nx_jw_object_begin(&jw);
		nx_jw_key(&jw, "table");
		nx_jw_string(&jw, TABLE(srcs[i]));
		nx_jw_key(&jw, "lod");
		nx_jw_bool(&jw, use_lod);
		nx_jw_key(&jw, "result");
		nx_jw_raw(&jw, "");
		if (use_lod ? lod_query(rq, lod, sql.buf, &sb, &err)
			    : nx__query_limited(rq, p, sql.buf, &sb, &err))
			goto fail;
		nx_jw_object_end(&jw);
	}
	nx_jw_object_end(&jw);
	ret = nx__reply_json(rq, 200, &sb);
	goto out;
fail:
	ret = nx__tl_query_failed(rq, &err);
out:
	nx_strbuf_release(&sb);
	nx_strbuf_release(&sql);
	nx__reg_put(&rq->s->reg, p);
	return ret;
}
