/* SPDX-License-Identifier: MIT
 * h_timeline.c: the timeline endpoints of the web UI, with level of detail computed
 * here rather than in the browser (docs/api.md, docs/ui.md).
 *   .../timeline/tracks   the rows of the timeline: instruction tracks per core and
 *                         timeline_track, DMA tracks per core and queue.
 *   .../timeline?t0=&t1=&px=  per track, the events of the window [t0, t1): the raw rows
 *                         when there are few (at most RAW_PER_PX per pixel), else one
 *                         bucket per power-of-two time slice with its longest event
 *                         (ties: the lowest id), event count and busy time.
 * Window bounds are integers pasted into the SQL as integer literals (a float there
 * stops DuckDB from skipping row groups): start_ts < t1 AND end_ts > t0. With the rows
 * ordered by start time, both columns' row-group statistics skip the groups outside
 * the window, long events included, with no bound on durations. All SQL runs in the
 * profile's sandboxed database under the usual limits and query slots. */
#include "common/compat.h"
#include "server/http.h"
#include "common/json_writer.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define RAW_PER_PX 3
#define MAX_PX 16384

struct src {
	const char *kind;  /* "instruction" or "dma" */
	const char *table;
	const char *track; /* SQL of the track name */
	const char *label; /* SQL of the label */
};

static const struct src instr_src = { "instruction", "Instruction", "timeline_track", "opcode" };
static const struct src dma_agg_src = { "dma", "DmaPacketAggregated", "queue_name",
					"COALESCE(op, queue_type)" };
static const struct src dma_pkt_src = { "dma", "DmaPacket", "queue_name", "'packet'" };

static enum MHD_Result query_failed(struct nx_req *rq, const struct nx_err *err)
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

enum MHD_Result nx__h_timeline_tracks(struct nx_req *rq, char **cap)
{
	const char *dma = MHD_lookup_connection_value(rq->conn, MHD_GET_ARGUMENT_KIND, "dma");
	struct nx_strbuf sql = NX_STRBUF_INIT, sb = NX_STRBUF_INIT;
	struct nx_err err = { 0 };
	enum MHD_Result ret;
	struct nx_profile *p = nx__lookup_profile(rq, cap, true, &ret);
	const struct src *srcs[2];
	size_t n = 0;

	if (!p)
		return ret;
	if (nx__pfiles_find(&p->files, "Instruction"))
		srcs[n++] = &instr_src;
	if ((srcs[n] = dma_source(p, dma && !strcmp(dma, "packets"))))
		n++;
	nx_strbuf_addstr(&sql, "SELECT * FROM (");
	for (size_t i = 0; i < n; i++)
		nx_strbuf_addf(&sql,
			       "%sSELECT '%s' AS kind, pcore_idx AS core, %s AS track, "
			       "count(*) AS count, min(start_ts) AS start, max(end_ts) AS \"end\" "
			       "FROM \"%s\" GROUP BY ALL",
			       i ? " UNION ALL " : "", srcs[i]->kind, srcs[i]->track,
			       srcs[i]->table);
	if (!n)
		nx_strbuf_addstr(&sql, "SELECT NULL::VARCHAR AS kind, NULL::BIGINT AS core, "
				       "NULL::VARCHAR AS track, 0::BIGINT AS count, "
				       "NULL::BIGINT AS start, NULL::BIGINT AS \"end\" WHERE false");
	nx_strbuf_addstr(&sql, ") ORDER BY core, kind DESC, CASE track WHEN 'Tensor' THEN 0 "
			       "WHEN 'TensorMatrix' THEN 1 WHEN 'Vector' THEN 2 WHEN 'Scalar' "
			       "THEN 3 WHEN 'GpSimd' THEN 4 WHEN 'Sync' THEN 5 ELSE 6 END, track");
	if (nx__query_limited(rq, p, sql.buf, &sb, &err))
		ret = query_failed(rq, &err);
	else
		ret = nx__reply_json(rq, 200, &sb);
	nx_strbuf_release(&sql);
	nx_strbuf_release(&sb);
	nx__reg_put(&rq->s->reg, p);
	return ret;
}

static bool int_arg(struct nx_req *rq, const char *name, int64_t lo, int64_t hi, int64_t *v)
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

static void sql_string(struct nx_strbuf *sql, const char *v)
{
	nx_strbuf_addch(sql, '\'');
	for (; *v; v++) {
		if (*v == '\'')
			nx_strbuf_addch(sql, '\'');
		nx_strbuf_addch(sql, *v);
	}
	nx_strbuf_addch(sql, '\'');
}

/* Appends "(pcore_idx = C AND track = 'T') OR ..." for the tracks of counts whose event
 * count is (raw) at most, or (!raw) above, the limit; "false" when there are none. */
static void track_filter(struct nx_strbuf *sql, const struct src *s, json_t *rows, bool raw,
			 int64_t raw_limit)
{
	size_t i, n = 0;
	json_t *r;

	json_array_foreach(rows, i, r) {
		json_t *core = json_array_get(r, 0), *track = json_array_get(r, 1);
		json_int_t cnt = json_integer_value(json_array_get(r, 2));

		if ((cnt <= raw_limit) != raw || !json_is_integer(core))
			continue;
		nx_strbuf_addf(sql, "%s(pcore_idx = %" JSON_INTEGER_FORMAT " AND ", n++ ? " OR " : "",
			       json_integer_value(core));
		if (json_is_string(track)) {
			nx_strbuf_addf(sql, "%s = ", s->track);
			sql_string(sql, json_string_value(track));
		} else {
			nx_strbuf_addf(sql, "%s IS NULL", s->track);
		}
		nx_strbuf_addch(sql, ')');
	}
	if (!n)
		nx_strbuf_addstr(sql, "false");
}

/* The window query of one source: one row per track, columns as lists. The tracks were
 * counted first (counts: rows of [core, track, count]), so that each is read either raw
 * or bucketed without the window being scanned three times. */
static void window_sql(struct nx_strbuf *sql, const struct src *s, int64_t t0, int64_t t1,
		       int64_t bucket, int64_t raw_limit, json_t *counts)
{
	nx_strbuf_addf(sql,
		"SELECT core, track, 'raw' AS mode, list(id ORDER BY s, id) AS id, "
		"list(s ORDER BY s, id) AS start, list(e ORDER BY s, id) AS \"end\", "
		"list(label ORDER BY s, id) AS label, NULL::BIGINT[] AS count, "
		"NULL::BIGINT[] AS busy FROM (SELECT pcore_idx AS core, %s AS track, id, "
		"start_ts AS s, end_ts AS e, %s AS label FROM \"%s\" WHERE ",
		s->track, s->label, s->table);
	window_where(sql, t0, t1);
	nx_strbuf_addstr(sql, " AND (");
	track_filter(sql, s, counts, true, raw_limit);
	nx_strbuf_addf(sql,
		")) GROUP BY ALL UNION ALL "
		"SELECT core, track, 'bins', list(r.id ORDER BY k), list(r.s ORDER BY k), "
		"list(r.e ORDER BY k), list(r.l ORDER BY k), list(cnt ORDER BY k), "
		"list(busy ORDER BY k) FROM (SELECT pcore_idx AS core, %s AS track, "
		"start_ts // %" PRId64 " AS k, arg_max({'id': id, 's': start_ts, 'e': end_ts, "
		"'l': %s}, (end_ts - start_ts, -id)) AS r, count(*) AS cnt, "
		"sum(end_ts - start_ts)::BIGINT AS busy FROM \"%s\" WHERE ",
		s->track, bucket, s->label, s->table);
	window_where(sql, t0, t1);
	nx_strbuf_addstr(sql, " AND (");
	track_filter(sql, s, counts, false, raw_limit);
	nx_strbuf_addstr(sql, ") GROUP BY ALL) GROUP BY ALL ORDER BY core, track");
}

/* Rows [core, track, count] of the tracks with events in the window; NULL on error. */
static json_t *count_tracks(struct nx_req *rq, struct nx_profile *p, const struct src *s,
			    int64_t t0, int64_t t1, struct nx_err *err)
{
	struct nx_strbuf sql = NX_STRBUF_INIT, out = NX_STRBUF_INIT;
	json_t *root = NULL, *rows;

	nx_strbuf_addf(&sql, "SELECT pcore_idx, %s, count(*) FROM \"%s\" WHERE ", s->track,
		       s->table);
	window_where(&sql, t0, t1);
	nx_strbuf_addstr(&sql, " GROUP BY ALL");
	if (!nx__query_limited(rq, p, sql.buf, &out, err)) {
		root = json_loadb(out.buf, out.len, 0, NULL);
		if (!root)
			nx_errf(err, -EIO, "cannot read the track counts of %s", s->table);
	}
	nx_strbuf_release(&sql);
	nx_strbuf_release(&out);
	if (!root)
		return NULL;
	rows = json_incref(json_object_get(root, "rows"));
	json_decref(root);
	if (!json_is_array(rows)) {
		json_decref(rows);
		nx_errf(err, -EIO, "cannot read the track counts of %s", s->table);
		return NULL;
	}
	return rows;
}

enum MHD_Result nx__h_timeline(struct nx_req *rq, char **cap)
{
	const char *dma = MHD_lookup_connection_value(rq->conn, MHD_GET_ARGUMENT_KIND, "dma");
	int64_t t0, t1, px, bucket = 1, span, raw_limit;
	struct nx_strbuf sb = NX_STRBUF_INIT, sql = NX_STRBUF_INIT;
	struct nx_err err = { 0 };
	const struct src *srcs[2];
	struct nx_profile *p;
	enum MHD_Result ret;
	struct nx_jw jw;
	size_t n = 0;

	if (!int_arg(rq, "t0", INT64_MIN / 4, INT64_MAX / 4, &t0) ||
	    !int_arg(rq, "t1", INT64_MIN / 4, INT64_MAX / 4, &t1) || t1 <= t0)
		return nx__reply_error(rq, 400, "bad_request",
				       "t0 and t1 must be integers (profile nanoseconds) with "
				       "t0 < t1");
	if (!int_arg(rq, "px", 1, MAX_PX, &px))
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
	for (size_t i = 0; i < n; i++) {
		json_t *counts = count_tracks(rq, p, srcs[i], t0, t1, &err);

		if (!counts)
			goto fail;
		nx_strbuf_reset(&sql);
		window_sql(&sql, srcs[i], t0, t1, bucket, raw_limit, counts);
		json_decref(counts);
		nx_jw_key(&jw, srcs[i]->kind);
		nx_jw_object_begin(&jw);
		nx_jw_key(&jw, "table");
		nx_jw_string(&jw, srcs[i]->table);
		nx_jw_key(&jw, "result");
		nx_jw_raw(&jw, "");
		if (nx__query_limited(rq, p, sql.buf, &sb, &err))
			goto fail;
		nx_jw_object_end(&jw);
	}
	nx_jw_object_end(&jw);
	ret = nx__reply_json(rq, 200, &sb);
	goto out;
fail:
	ret = query_failed(rq, &err);
out:
	nx_strbuf_release(&sb);
	nx_strbuf_release(&sql);
	nx__reg_put(&rq->s->reg, p);
	return ret;
}
