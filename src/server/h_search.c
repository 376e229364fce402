/* SPDX-License-Identifier: MIT
 * h_search.c: POST /api/v1/db/<name>/_search, the query endpoint of the seeds.
 * The JSON body's "type" selects the operation: databaseExplorerQuery (one
 * sandboxed SELECT), tableSchema (fields of a table) or listDbFiles (the tables
 * and files of the profile, each table's rows from its footers). */
#include "common/compat.h"
#include "server/http.h"
#include "server/user_query.h"
#include "common/fsutil.h"
#include "common/json_writer.h"
#include "db/parquet_footer.h"
#include "common/xalloc.h"

#include <jansson.h>
#include <stdlib.h>
#include <string.h>

static enum MHD_Result query_error(struct nx_req *rq, const struct nx_err *err)
{
	switch (err->code) {
	case -EACCES:
		return nx__reply_error(rq, 403, "query_not_allowed", "%s", err->msg);
	case -ETIMEDOUT:
		return nx__reply_error(rq, 504, "query_timeout", "%s", err->msg);
	case -EBUSY:
		return nx__reply_error(rq, 503, "busy", "%s", err->msg);
	case -ENOTSUP:
		return nx__reply_error(rq, 400, "unsupported_type", "%s", err->msg);
	case NX_EDB:
		return nx__reply_error(rq, 400, "query_error", "%s", err->msg);
	default:
		return nx__reply_nx_err(rq, err);
	}
}

/* The rows of table t of the profile in dir as its files' footers declare them; -1 for a
 * fleet run's union table, or when a file cannot be read as parquet (its queries then say
 * what is wrong). */
static int64_t table_rows(const char *dir, const struct nx_ptable *t)
{
	int64_t sum = 0;

	for (size_t j = 0; !t->members && j < t->nfiles; j++) {
		struct nx_pq_file f;
		struct nx_err ignored = { 0 };
		char *path = nx_path_join(dir, t->files[j]);
		int64_t rows = -1;
		int rc = nx_pq_open(&f, path, &ignored) || nx_pq_num_rows(&f, &rows, &ignored);

		nx_pq_close(&f);
		free(path);
		if (rc)
			return -1;
		sum += rows;
	}
	return t->members ? -1 : sum;
}

/* File j of t, as a JSON string. */
static void put_file(struct nx_jw *jw, const struct nx_ptable *t, size_t j)
{
	char *file = nx__ptable_file(t, j);

	nx_jw_string(jw, file);
	free(file);
}

static enum MHD_Result list_files(struct nx_req *rq, struct nx_profile *p)
{
	struct nx_strbuf sb = NX_STRBUF_INIT;
	struct nx_jw jw;

	nx_jw_init(&jw, &sb, false);
	nx_jw_object_begin(&jw);
	nx_jw_key(&jw, "profile");
	nx_jw_string(&jw, p->name);
	nx_jw_key(&jw, "tables");
	nx_jw_array_begin(&jw);
	for (size_t i = 0; i < p->files.n; i++) {
		const struct nx_ptable *t = &p->files.t[i];

		nx_jw_object_begin(&jw);
		nx_jw_key(&jw, "name");
		nx_jw_string(&jw, t->name);
		nx_jw_key(&jw, "files");
		nx_jw_array_begin(&jw);
		for (size_t j = 0; j < t->nfiles; j++)
			put_file(&jw, t, j);
		nx_jw_array_end(&jw);
		nx_jw_key(&jw, "size_bytes");
		nx_jw_uint(&jw, t->bytes);
		nx_jw_key(&jw, "rows");
		int64_t rows = table_rows(p->dir, t);
		if (rows < 0)
			nx_jw_null(&jw);
		else
			nx_jw_uint(&jw, (uint64_t)rows);
		nx_jw_object_end(&jw);
	}
	nx_jw_array_end(&jw);
	nx_jw_key(&jw, "files");
	nx_jw_array_begin(&jw);
	for (size_t i = 0; i < p->files.n; i++)
		for (size_t j = 0; j < p->files.t[i].nfiles; j++)
			put_file(&jw, &p->files.t[i], j);
	if (p->files.has_source)
		nx_jw_string(&jw, NX_SOURCE_ARCHIVE);
	nx_jw_array_end(&jw);
	nx_jw_object_end(&jw);
	return nx__reply_json(rq, 200, &sb);
}

void nx__query_slot_take(struct nx_server *s)
{
	while (sem_wait(&s->query_slots) != 0)
		; /* EINTR */
}

void nx__query_slot_give(struct nx_server *s)
{
	sem_post(&s->query_slots);
}

struct nx_query_limits nx__query_limits(struct nx_req *rq)
{
	const struct nx_server_opts *o = &rq->s->o;
	return (struct nx_query_limits){
		.timeout_ms = o->query_timeout_ms,
		.max_rows = o->max_result_rows,
		.max_bytes = o->max_result_bytes,
		.wd = &rq->s->wd,
	};
}

int nx__query_db_limited(struct nx_req *rq, struct nx_pdb *db, const char *sql,
			 struct nx_strbuf *out, struct nx_err *err)
{
	struct nx_query_limits lim = nx__query_limits(rq);
	int rc;

	nx__query_slot_take(rq->s);
	rc = nx__pdb_query(db, sql, &lim, out, err);
	nx__query_slot_give(rq->s);
	return rc;
}

int nx__query_limited(struct nx_req *rq, struct nx_profile *p, const char *sql,
		      struct nx_strbuf *out, struct nx_err *err)
{
	return nx__query_db_limited(rq, p->db, sql, out, err);
}

int nx__query_chunks_limited(struct nx_req *rq, struct nx_pdb *db, const char *sql,
			     nx__pdb_chunk_fn fn, void *arg, struct nx_err *err)
{
	struct nx_query_limits lim = nx__query_limits(rq);
	int rc;

	nx__query_slot_take(rq->s);
	rc = nx__pdb_query_chunks(db, sql, &lim, fn, arg, err);
	nx__query_slot_give(rq->s);
	return rc;
}

/* A query result larger than STREAM_AFTER bytes of JSON is not built whole: it goes
 * to the client as it is read from DuckDB, STREAM_PIECE bytes at a time, so a large
 * result costs about that much memory. Smaller ones are replied as one buffer. The
 * body is the same either way. Each piece is read on a worker with the connection
 * suspended (MHD's thread serves every connection and must not wait for DuckDB), and
 * a query slot is held only while a piece is read, so a slow client does not keep
 * other queries waiting; the deadline still covers the whole reply. An error met
 * after the reply started cannot change its status any more: the connection is then
 * closed before the end of the body, which the client sees as an incomplete reply. */
#define STREAM_AFTER ((size_t)256 << 10)
#define STREAM_PIECE ((size_t)64 << 10)

struct search_stream {
	struct nx_req *rq;
	struct nx_server *s;
	struct nx_profile *p;    /* registry reference, put when the reply is released */
	struct nx_user_query *q;
	struct nx_strbuf buf;    /* text not yet handed to MHD starts at off */
	size_t off;
	bool done;               /* the last piece is in buf */
	bool failed;             /* reading a piece failed: the reply ends early */
	struct nx_job job;
};

/* On a worker, with the connection suspended: the next piece into buf. */
static void read_piece(void *arg)
{
	struct search_stream *st = arg;
	struct nx_err err = { 0 };
	int rc;

	nx_strbuf_reset(&st->buf);
	st->off = 0;
	nx__query_slot_take(st->s);
	rc = nx__uq_fill(st->q, &st->buf, STREAM_PIECE, &err);
	nx__query_slot_give(st->s);
	if (rc < 0) {
		st->failed = true;
	} else if (rc == 0) {
		nx_strbuf_addch(&st->buf, '\n');
		st->done = true;
	}
	MHD_resume_connection(st->rq->conn);
}

static ssize_t stream_read(void *cls, uint64_t pos, char *out, size_t max)
{
	struct search_stream *st = cls;
	size_t n;

	(void)pos;
	if (st->off == st->buf.len) {
		if (st->failed)
			return MHD_CONTENT_READER_END_WITH_ERROR;
		if (st->done)
			return MHD_CONTENT_READER_END_OF_STREAM;
		/* MHD calls again once the worker has resumed the connection. */
		MHD_suspend_connection(st->rq->conn);
		nx__workers_post(&st->s->workers, &st->job, read_piece, st);
		return 0;
	}
	n = st->buf.len - st->off < max ? st->buf.len - st->off : max;
	memcpy(out, st->buf.buf + st->off, n);
	st->off += n;
	st->rq->bytes += n;
	return (ssize_t)n;
}

static void stream_release(void *cls)
{
	struct search_stream *st = cls;

	nx__uq_close(st->q);
	nx__reg_put(&st->s->reg, st->p);
	nx_strbuf_release(&st->buf);
	free(st);
}

/* Replies to a query; *kept is set when the reply streams and took over p. */
static enum MHD_Result run_query(struct nx_req *rq, struct nx_profile *p, const char *table,
				 const char *sql, bool *kept)
{
	struct nx_query_limits lim = nx__query_limits(rq);
	struct nx_strbuf sb = NX_STRBUF_INIT;
	struct nx_user_query *q = NULL;
	struct nx_err err = { 0 };
	int rc;

	if (table && !nx__pfiles_find(&p->files, table))
		return nx__reply_error(rq, 404, "table_not_found",
				       "profile '%s' has no table '%.100s' (listDbFiles lists its "
				       "tables; a table exists only when the profile has that kind "
				       "of data)", p->name, table);
	/* a query beyond the profile's memory limit runs again under a larger one
	 * (user_query.h) */
	nx__query_slot_take(rq->s);
	rc = nx__uq_open(p->db, sql, &lim, STREAM_AFTER, &q, &sb, &err);
	nx__query_slot_give(rq->s);
	if (rc <= 0) {
		nx__uq_close(q);
		if (rc < 0) {
			nx_strbuf_release(&sb);
			return query_error(rq, &err);
		}
		return nx__reply_json(rq, 200, &sb);
	}
	struct search_stream *st = nx_xcalloc(1, sizeof(*st));
	*st = (struct search_stream){ .rq = rq, .s = rq->s, .p = p, .q = q, .buf = sb };
	*kept = true;
	return nx__reply_stream(rq, 200, "application/json", stream_read, st, stream_release);
}

/* Shell-quoted curl bodies often carry a raw line break inside the "query"
 * string (one of the seed workflows does), which strict JSON forbids. Control
 * bytes inside string literals are therefore escaped before parsing; nothing
 * else about the JSON is relaxed. */
static void escape_raw_controls(const struct nx_strbuf *in, struct nx_strbuf *out)
{
	bool in_str = false, esc = false;

	for (size_t i = 0; i < in->len; i++) {
		unsigned char c = (unsigned char)in->buf[i];

		if (in_str && c < 0x20) {
			if (c == '\n')
				nx_strbuf_addstr(out, "\\n");
			else if (c == '\r')
				nx_strbuf_addstr(out, "\\r");
			else if (c == '\t')
				nx_strbuf_addstr(out, "\\t");
			else
				nx_strbuf_addf(out, "\\u%04x", c);
			esc = false;
			continue;
		}
		nx_strbuf_addch(out, (char)c);
		if (esc)
			esc = false;
		else if (in_str && c == '\\')
			esc = true;
		else if (c == '"')
			in_str = !in_str;
	}
}

/* Returns a string member, NULL when absent; *bad when present but not a string
 * (or holding a NUL byte). */
static const char *str_member(json_t *obj, const char *key, bool *bad)
{
	json_t *v = json_object_get(obj, key);

	*bad = false;
	if (!v || json_is_null(v))
		return NULL;
	if (!json_is_string(v) || strlen(json_string_value(v)) != json_string_length(v)) {
		*bad = true;
		return NULL;
	}
	return json_string_value(v);
}

int nx_search_body_parse(const char *buf, size_t len, struct nx_search_body *b,
			 struct nx_err *err)
{
	static const char types[] = "databaseExplorerQuery, tableSchema or listDbFiles";
	struct nx_strbuf body = NX_STRBUF_INIT;
	struct nx_strbuf in = { .buf = (char *)buf, .len = len };
	json_error_t je;
	bool bad;

	memset(b, 0, sizeof(*b));
	b->error = "bad_request";
	if (!len)
		return nx_errf(err, NX_EUSAGE, "the request needs a JSON body such as "
			       "{\"type\":\"listDbFiles\"}");
	escape_raw_controls(&in, &body);
	b->root = json_loadb(body.buf, body.len, 0, &je);
	nx_strbuf_release(&body);
	if (!b->root) {
		b->error = "invalid_json";
		return nx_errf(err, NX_EUSAGE, "the body is not valid JSON (line %d, column %d: %s)",
			       je.line, je.column, je.text);
	}
	if (!json_is_object(b->root))
		return nx_errf(err, NX_EUSAGE, "the body must be a JSON object");
	b->type = str_member(b->root, "type", &bad);
	if (!b->type)
		return nx_errf(err, NX_EUSAGE, "the body needs a string member \"type\": %s", types);
	b->table = str_member(b->root, "tableName", &bad);
	if (bad)
		return nx_errf(err, NX_EUSAGE, "\"tableName\" must be a string");
	if (strcmp(b->type, "databaseExplorerQuery") && strcmp(b->type, "tableSchema") &&
	    strcmp(b->type, "listDbFiles")) {
		b->error = "unknown_type";
		return nx_errf(err, NX_EUSAGE, "unknown request type '%.100s': use %s", b->type,
			       types);
	}
	if (!strcmp(b->type, "tableSchema") && !b->table)
		return nx_errf(err, NX_EUSAGE,
			       "tableSchema needs \"tableName\", e.g. \"Instruction\"");
	b->sql = str_member(b->root, "query", &bad);
	if (!strcmp(b->type, "databaseExplorerQuery") && !b->sql)
		return nx_errf(err, NX_EUSAGE, "databaseExplorerQuery needs a string member "
			       "\"query\" holding one SELECT statement");
	b->error = NULL;
	return 0;
}

void nx_search_body_release(struct nx_search_body *b)
{
	json_decref(b->root);
	memset(b, 0, sizeof(*b));
}

enum MHD_Result nx__h_search(struct nx_req *rq, char **cap)
{
	struct nx_profile *p = NULL;
	struct nx_err err = { 0 };
	struct nx_search_body b;
	enum MHD_Result ret;
	bool kept = false;

	if (nx_search_body_parse(rq->body.buf, rq->body.len, &b, &err)) {
		ret = nx__reply_error(rq, 400, b.error, "%s", err.msg);
		goto out;
	}
	if (nx__reg_get(&rq->s->reg, cap[0], strcmp(b.type, "listDbFiles") != 0, &p, &err)) {
		ret = nx__reply_nx_err(rq, &err);
		goto out;
	}
	if (!strcmp(b.type, "listDbFiles"))
		ret = list_files(rq, p);
	else if (!strcmp(b.type, "tableSchema"))
		ret = nx__search_table_schema(rq, p, b.table);
	else
		ret = run_query(rq, p, b.table, b.sql, &kept);
out:
	if (!kept)
		nx__reg_put(&rq->s->reg, p);
	nx_search_body_release(&b);
	return ret;
}
