/* SPDX-License-Identifier: MIT
 * h_timeline_query.c: the timeline's questions about events beyond the view
 * (docs/api.md).
 *   .../timeline/search?table=&field=&value=[&op=]   every event of the profile whose
 *        field compares with value (op: eq, ne, lt, le, gt, ge, or contains, a
 *        case-insensitive substring): the count and the first SEARCH_LIMIT matches by
 *        start time. Numeric fields compare as numbers. Field source_location is, on
 *        Instruction, the instruction's source line as the UI's pages name it
 *        (NX_LINE_SQL), and on DmaPacketAggregated the line of the instruction that
 *        triggered the transfer (attribution.h); it equals value or ends in '/' value.
 *   .../timeline/aggregate?t0=&t1=   the events overlapping [t0, t1) per kind, core,
 *        track and label: count, summed duration within the window, first start, last
 *        end (the box selection's aggregate).
 *   .../timeline/flows?table=&id=   the Flow edges of one event (instruction -> the DMA
 *        transfer it triggered, semaphore producer -> waiter), both ends with times.
 *   .../timeline/lines[?t0=&t1=]   per source line of the instructions (the source view; in
 *        a window, the timeline's operator table, durations clipped to it): count,
 *        summed duration, first start, last end, and the DMA transfers the line's
 *        instructions triggered (count, bytes, summed duration, first start, last end);
 *        from the timeline cache's tl.lines.
 * Only tables and fields the profile has are accepted; values reach SQL as quoted
 * literals or integers, bounds as integer literals. */
#include "common/compat.h"
#include "server/http.h"
#include "server/lod.h"
#include "server/registry.h"
#include "server/timeline.h"
#include "common/strbuf.h"
#include "common/xalloc.h"
#include "db/duck.h"
#include "analysis/attribution.h"

#include <stdlib.h>
#include <string.h>

#define SEARCH_LIMIT 500

/* The event source of table name (case as in nx__lod_sources), or -1. */
static int source_of(const char *name)
{
	for (int i = 0; name && i < NX_LOD_NSRC; i++)
		if (!strcmp(name, nx__lod_sources[i].table))
			return i;
	return -1;
}

static enum MHD_Result run(struct nx_req *rq, struct nx_profile *p, const char *sql,
			   struct nx_strbuf *sb)
{
	struct nx_err err = { 0 };

	if (nx__query_limited(rq, p, sql, sb, &err))
		return nx__tl_query_failed(rq, &err);
	nx_strbuf_addch(sb, '}');
	return nx__reply_json(rq, 200, sb);
}

static bool is_integer_type(const char *t)
{
	static const char *const ints[] = { "BIGINT", "INTEGER", "SMALLINT", "TINYINT", "UBIGINT",
					    "UINTEGER", "USMALLINT", "UTINYINT", "HUGEINT" };

	for (size_t i = 0; i < NX_ARRAY_SIZE(ints); i++)
		if (!strcmp(t, ints[i]))
			return true;
	return false;
}

static bool is_float_type(const char *t)
{
	return !strcmp(t, "DOUBLE") || !strcmp(t, "FLOAT") || !strncmp(t, "DECIMAL", 7);
}

static bool is_integer_text(const char *v)
{
	char *end;

	if (!*v)
		return false;
	errno = 0;
	(void)strtoll(v, &end, 10);
	return !*end && !errno;
}

/* A finite decimal number written plainly (no hex, inf or nan): safe to paste into SQL. */
static bool is_number_text(const char *v)
{
	char *end;
	double d;

	if (!*v || strspn(v, "+-0123456789.eE") != strlen(v))
		return false;
	errno = 0;
	d = strtod(v, &end);
	return !*end && !errno && d == d;
}

/* The comparisons of .../timeline/search (op=), with their SQL. */
static const struct search_op {
	const char *name, *sql;
} search_ops[] = {
	{ "eq", "=" }, { "ne", "<>" }, { "lt", "<" }, { "le", "<=" }, { "gt", ">" }, { "ge", ">=" },
	{ "contains", NULL },
};

static const struct search_op *search_op(const char *name)
{
	for (size_t i = 0; i < NX_ARRAY_SIZE(search_ops); i++)
		if (!strcmp(name, search_ops[i].name))
			return &search_ops[i];
	return NULL;
}

/* "<expr> <op> <value>" for a column of SQL type `type` (NULL: text), or the error of
 * a value that does not fit the comparison. */
static const char *compare_sql(struct nx_strbuf *sql, const char *expr, const char *type,
			       const struct search_op *op, const char *value)
{
	if (!op->sql) { /* substring, case-insensitive */
		nx_strbuf_addf(sql, "contains(lower((%s)::VARCHAR), lower(", expr);
		nx_sql_quote(sql, value);
		nx_strbuf_addstr(sql, "))");
		return NULL;
	}
	if (type && is_integer_type(type) && is_integer_text(value)) {
		nx_strbuf_addf(sql, "%s %s %lld", expr, op->sql, strtoll(value, NULL, 10));
		return NULL;
	}
	if (type && (is_integer_type(type) || is_float_type(type))) {
		if (is_number_text(value)) {
			nx_strbuf_addf(sql, "%s %s %s::DOUBLE", expr, op->sql, value);
			return NULL;
		}
		if (strcmp(op->name, "eq") && strcmp(op->name, "ne"))
			return "a number to compare with";
	}
	nx_strbuf_addf(sql, "(%s)::VARCHAR %s ", expr, op->sql);
	nx_sql_quote(sql, value);
	return NULL;
}

/* A source line as the pages name it: equal to value, or a path ending in "/" value. */
static void line_match_sql(struct nx_strbuf *sql, const char *expr, const char *value,
			   bool contains)
{
	if (contains) {
		nx_strbuf_addf(sql, "contains(lower(%s), lower(", expr);
		nx_sql_quote(sql, value);
		nx_strbuf_addstr(sql, "))");
		return;
	}
	nx_strbuf_addf(sql, "(%s = ", expr);
	nx_sql_quote(sql, value);
	nx_strbuf_addf(sql, " OR ends_with(%s, '/' || ", expr);
	nx_sql_quote(sql, value);
	nx_strbuf_addstr(sql, "))");
}

static bool has_column(const struct nx_pdb_column *cols, size_t n, const char *name)
{
	for (size_t i = 0; i < n; i++)
		if (!strcasecmp(cols[i].name, name))
			return true;
	return false;
}

enum MHD_Result nx__h_timeline_search(struct nx_req *rq, char **cap)
{
	const char *table = nx__tl_arg(rq, "table"), *field = nx__tl_arg(rq, "field");
	const char *value = nx__tl_arg(rq, "value"), *opname = nx__tl_arg(rq, "op");
	struct nx_strbuf sql = NX_STRBUF_INIT, sb = NX_STRBUF_INIT;
	struct nx_pdb_column *cols = NULL;
	const struct search_op *op;
	struct nx_err err = { 0 };
	const char *type = NULL, *bad;
	struct nx_profile *p;
	enum MHD_Result ret;
	size_t ncols = 0;
	bool loc = false;
	int s;

	if (!table || !*table)
		table = "Instruction";
	s = source_of(table);
	if (s < 0)
		return nx__reply_error(rq, 400, "bad_request", "table must be one of Instruction, "
				       "DmaPacketAggregated, DmaPacket, SystemProfileEvents");
	if (!field || !*field || !value)
		return nx__reply_error(rq, 400, "bad_request", "field and value are required");
	op = search_op(opname && *opname ? opname : "eq");
	if (!op)
		return nx__reply_error(rq, 400, "bad_request", "op must be one of eq, ne, lt, le, gt, "
				       "ge, contains, not '%.20s'", opname);
	p = nx__lookup_profile(rq, cap, true, &ret);
	if (!p)
		return ret;
	if (!nx__tl_has_table(rq, p, table, &ret))
		goto out;
	if (nx__pdb_describe(p->db, table, &cols, &ncols, &err)) {
		ret = nx__tl_query_failed(rq, &err);
		goto out;
	}
	for (size_t i = 0; i < ncols; i++)
		if (!strcasecmp(cols[i].name, field))
			type = cols[i].type;
	if (!type && !strcasecmp(field, "source_location") &&
	    (s == 0 || (s == 1 && nx__pfiles_find(&p->files, "Flow") &&
			nx__pfiles_find(&p->files, "Instruction")))) {
		/* Instruction: its line; DmaPacketAggregated: its triggering instruction's */
		struct nx_pdb_column *ic = NULL;
		size_t nic = 0;

		if (s == 0 || !nx__pdb_describe(p->db, "Instruction", &ic, &nic, &err))
			loc = has_column(s == 0 ? cols : ic, s == 0 ? ncols : nic,
					 "bir_debug_info_source_location") &&
			      has_column(s == 0 ? cols : ic, s == 0 ? ncols : nic,
					 "nki_source_location");
		nx__pdb_columns_free(ic, nic);
		if (loc && strcmp(op->name, "eq") && strcmp(op->name, "contains")) {
			ret = nx__reply_error(rq, 400, "bad_request", "source_location compares "
					      "with = or contains only");
			goto out;
		}
		type = loc ? "VARCHAR" : NULL;
	}
	if (!type) {
		ret = nx__reply_error(rq, 400, "bad_request", "table %s has no field '%.80s'", table,
				      field);
		goto out;
	}
	nx_strbuf_addf(&sql, "SELECT id, pcore_idx::BIGINT AS core, (%s)::VARCHAR AS track, "
			     "start_ts AS start, end_ts AS \"end\", (%s)::VARCHAR AS label, "
			     "count(*) OVER () AS total FROM \"%s\" WHERE ",
		       nx__lod_sources[s].track, nx__lod_sources[s].label, table);
	if (loc && s == 0) {
		/* as the profile spells it, or a path suffix of it ("mm.py:28" finds
		 * "kernels/mm.py:28", as a finding names its lines) */
		line_match_sql(&sql, NX_LINE_SQL, value, !strcmp(op->name, "contains"));
	} else if (loc) {
		nx_strbuf_addstr(&sql, "id IN (SELECT dma_id FROM (");
		nx_dma_line_sql(&sql, "Flow", "Instruction", NX_LINE_SQL);
		nx_strbuf_addstr(&sql, ") WHERE ");
		line_match_sql(&sql, "src", value, !strcmp(op->name, "contains"));
		nx_strbuf_addch(&sql, ')');
	} else {
		struct nx_strbuf col = NX_STRBUF_INIT;

		nx_sql_quote_ident(&col, field);
		bad = compare_sql(&sql, col.buf, type, op, value);
		nx_strbuf_release(&col);
		if (bad) {
			ret = nx__reply_error(rq, 400, "bad_request", "%s.%s is a number: '%.40s' is "
					      "not %s", table, field, value, bad);
			goto out;
		}
	}
	if (s == NX_LOD_SRC_FW)
		nx_strbuf_addstr(&sql, " AND " NX_LOD_FW_DRAWN);
	nx_strbuf_addf(&sql, " ORDER BY start_ts, id LIMIT %d", SEARCH_LIMIT);
	nx_strbuf_addstr(&sb, "{\"table\":");
	nx_strbuf_addf(&sb, "\"%s\",\"kind\":\"%s\",\"limit\":%d,\"result\":", table,
		       nx__lod_sources[s].kind, SEARCH_LIMIT);
	ret = run(rq, p, sql.buf, &sb);
out:
	nx__pdb_columns_free(cols, ncols);
	nx_strbuf_release(&sql);
	nx_strbuf_release(&sb);
	nx__reg_put(&rq->s->reg, p);
	return ret;
}

/* The sources and window of an aggregate. */
struct aggregate {
	int srcs[NX_LOD_NSRC];
	size_t n;
	int64_t t0, t1;
};

/* The reply of .../timeline/aggregate (nx__tl_body). */
static int aggregate_body(struct nx_req *rq, struct nx_profile *p, struct nx_lod *lod, void *arg,
			  struct nx_strbuf *out, struct nx_err *err)
{
	const struct aggregate *a = arg;
	struct nx_strbuf sql = NX_STRBUF_INIT;
	bool use_cache = a->n > 0;
	int rc;

	for (size_t i = 0; i < a->n; i++)
		use_cache = use_cache && lod && lod->src[a->srcs[i]].copied;
	/* the cache's event rows when it copied every source's, else the profile's tables */
	for (size_t i = 0; i < a->n; i++) {
		const struct nx_lod_source *src = &nx__lod_sources[a->srcs[i]];

		nx_strbuf_addf(&sql, "%sSELECT '%s' AS kind, ", i ? " UNION ALL " : "", src->kind);
		/* busy: the durations clipped to the window; the cache's text as VARCHAR, for
		 * tl.ev<s> may hold ENUMs (lod_build.c) */
		if (use_cache)
			nx_strbuf_addf(&sql, "core, track::VARCHAR AS track, label::VARCHAR AS "
					     "label, count(*)::BIGINT AS count, "
					     "sum(least(end_ts, %" PRId64 ") - greatest(start_ts, %"
					     PRId64 "))::BIGINT AS busy, min(start_ts) AS first, "
					     "max(end_ts) AS last FROM tl.ev%d", a->t1, a->t0, a->srcs[i]);
		else
			nx_strbuf_addf(&sql, "pcore_idx::BIGINT AS core, (%s)::VARCHAR AS track, "
					     "(%s)::VARCHAR AS label, count(*)::BIGINT AS count, "
					     "sum(least(end_ts, %" PRId64 ") - greatest(start_ts, %" PRId64
					     "))::BIGINT AS busy, min(start_ts) AS first, max(end_ts) AS "
					     "last FROM \"%s\"",
				       src->track, src->label, a->t1, a->t0, src->table);
		nx_strbuf_addf(&sql, " WHERE start_ts < %" PRId64 " AND end_ts > %" PRId64 "%s"
				     " GROUP BY ALL", a->t1, a->t0,
			       use_cache ? "" : a->srcs[i] == NX_LOD_SRC_FW ? " AND " NX_LOD_FW_DRAWN
			       : " AND " NX_TL_IN_BOUNDS_SQL);
	}
	if (!a->n)
		nx_strbuf_addstr(&sql, "SELECT NULL::VARCHAR AS kind WHERE false");
	else
		nx_strbuf_addstr(&sql, " ORDER BY busy DESC, kind, core, track, label");
	nx__tl_put_window(out, a->t0, a->t1);
	nx_strbuf_addstr(out, ",\"result\":");
	if (use_cache)
		rc = nx__tl_lod_query(rq, lod, sql.buf, out, err);
	else
		rc = nx__query_limited(rq, p, sql.buf, out, err);
	if (!rc)
		nx_strbuf_addch(out, '}');
	nx_strbuf_release(&sql);
	return rc;
}

enum MHD_Result nx__h_timeline_aggregate(struct nx_req *rq, char **cap)
{
	struct aggregate a = { .n = 0 };
	struct nx__tl_window w;
	struct nx_profile *p;
	enum MHD_Result ret;
	bool packets;

	if (!nx__tl_window_arg(rq, false, &w, &ret) || !nx__tl_dma_arg(rq, &packets, &ret))
		return ret;
	a.t0 = w.t0;
	a.t1 = w.t1;
	p = nx__lookup_profile(rq, cap, true, &ret);
	if (!p)
		return ret;
	for (int s = 0; s < NX_LOD_NSRC; s++) {
		if (!nx__pfiles_find(&p->files, nx__lod_sources[s].table))
			continue;
		/* one DMA table: transfers unless packets are asked for or the only ones */
		if (s == 1 && packets && nx__pfiles_find(&p->files, "DmaPacket"))
			continue;
		if (s == 2 && nx__pfiles_find(&p->files, "DmaPacketAggregated") && !packets)
			continue;
		a.srcs[a.n++] = s;
	}
	return nx__tl_serve(rq, p, a.n > 0, aggregate_body, &a);
}

/* SELECT of the events of table t (Instruction or DmaPacketAggregated) that are an
 * end of edges in f, as (tbl, id, core, track, start, end, label). */
static void ends_sql(struct nx_strbuf *sql, int s)
{
	const struct nx_lod_source *src = &nx__lod_sources[s];

	nx_strbuf_addf(sql, "SELECT '%s' AS tbl, id, pcore_idx::BIGINT AS core, "
			    "(%s)::VARCHAR AS track, start_ts AS s, end_ts AS e, "
			    "(%s)::VARCHAR AS label FROM \"%s\" WHERE id IN (SELECT in_id FROM f "
			    "WHERE in_table = '%s' UNION SELECT out_id FROM f WHERE out_table = '%s')",
		       src->table, src->track, src->label, src->table, src->table, src->table);
}

enum MHD_Result nx__h_timeline_flows(struct nx_req *rq, char **cap)
{
	struct nx_strbuf sql = NX_STRBUF_INIT, sb = NX_STRBUF_INIT;
	struct nx_profile *p;
	const char *table;
	enum MHD_Result ret;
	int64_t id;
	int s;

	if (!nx__tl_event_arg(rq, &s, &id, &ret))
		return ret;
	table = nx__lod_sources[s].table;
	p = nx__lookup_profile(rq, cap, true, &ret);
	if (!p)
		return ret;
	if (!nx__pfiles_find(&p->files, "Flow") || !nx__pfiles_find(&p->files, table)) {
		nx_strbuf_addstr(&sb, "{\"result\":null}");
		ret = nx__reply_json(rq, 200, &sb);
		goto out;
	}
	nx_strbuf_addf(&sql, "WITH f AS MATERIALIZED (SELECT * FROM Flow WHERE (out_table = '%s' "
			     "AND out_id = %" PRId64 ") OR (in_table = '%s' AND in_id = %" PRId64
			     ") LIMIT 1000), ends AS (",
		       table, id, table, id);
	ends_sql(&sql, 0);
	if (nx__pfiles_find(&p->files, "DmaPacketAggregated")) {
		nx_strbuf_addstr(&sql, " UNION ALL ");
		ends_sql(&sql, 1);
	}
	nx_strbuf_addstr(&sql, ") SELECT f.dependency_type AS type, f.gap_time AS gap, "
			       "a.tbl AS from_table, a.id AS from_id, a.core AS from_core, "
			       "a.track AS from_track, a.s AS from_start, a.e AS from_end, "
			       "a.label AS from_label, b.tbl AS to_table, b.id AS to_id, "
			       "b.core AS to_core, b.track AS to_track, b.s AS to_start, "
			       "b.e AS to_end, b.label AS to_label FROM f "
			       "JOIN ends a ON a.tbl = f.in_table AND a.id = f.in_id "
			       "JOIN ends b ON b.tbl = f.out_table AND b.id = f.out_id "
			       "ORDER BY a.s, b.s");
	nx_strbuf_addstr(&sb, "{\"result\":");
	ret = run(rq, p, sql.buf, &sb);
out:
	nx_strbuf_release(&sql);
	nx_strbuf_release(&sb);
	nx__reg_put(&rq->s->reg, p);
	return ret;
}

/* LINES_LIMIT source locations at most, the busiest first. */
#define LINES_LIMIT 20000

/* The reply of .../timeline/lines (nx__tl_body); arg: the window (NULL: the profile). */
static int lines_body(struct nx_req *rq, struct nx_profile *p, struct nx_lod *lod, void *arg,
		      struct nx_strbuf *out, struct nx_err *err)
{
	const struct nx__tl_window *w = arg;
	char *sql;
	int rc;

	nx_strbuf_addf(out, "{\"limit\":%d,\"result\":", LINES_LIMIT);
	if (!nx__pfiles_find(&p->files, "Instruction")) {
		nx_strbuf_addstr(out, "null}");
		return 0;
	}
	if (!w && lod && lod->lines) {
		sql = nx_xasprintf("SELECT loc, n, dur, t0, t1, dma_n, dma_bytes, dma_ns, dma_t0, "
				   "dma_t1 FROM tl.lines ORDER BY dur + dma_ns DESC, loc LIMIT %d",
				   LINES_LIMIT);
		rc = nx__tl_lod_query(rq, lod, sql, out, err);
	} else {
		/* a window, or no cache: the summary from the profile's tables */
		struct nx_strbuf q = NX_STRBUF_INIT;
		int64_t win[2] = { w ? w->t0 : 0, w ? w->t1 : 0 };

		nx__lines_sql(&q, nx__pfiles_find(&p->files, "Flow") &&
					  nx__pfiles_find(&p->files, "DmaPacketAggregated"),
			      w ? win : NULL);
		nx_strbuf_addf(&q, " ORDER BY dur + dma_ns DESC, loc LIMIT %d", LINES_LIMIT);
		sql = nx_strbuf_detach(&q, NULL);
		rc = nx__query_limited(rq, p, sql, out, err);
	}
	if (!rc)
		nx_strbuf_addch(out, '}');
	free(sql);
	return rc;
}

enum MHD_Result nx__h_timeline_lines(struct nx_req *rq, char **cap)
{
	bool windowed = nx__tl_arg(rq, "t0") || nx__tl_arg(rq, "t1");
	struct nx__tl_window w;
	struct nx_profile *p;
	enum MHD_Result ret;

	if (windowed && !nx__tl_window_arg(rq, false, &w, &ret))
		return ret;
	p = nx__lookup_profile(rq, cap, true, &ret);
	if (!p)
		return ret;
	return nx__tl_serve(rq, p, !windowed && nx__pfiles_find(&p->files, "Instruction") != NULL,
			    lines_body, windowed ? &w : NULL);
}
