/* SPDX-License-Identifier: MIT
 * duck.c: DuckDB connection, SQL helpers and the nx_source() table function that
 * streams C row sources into parquet (see duck.h). */
#include "common/compat.h"
#include "db/duck.h"
#include "db/duck_conn.h"
#include "db/parquet_write.h"
#include "db/parquet_zip.h"
#include "db/rowbuf.h"
#include "db/source_ahead.h"
#include "common/fsutil.h"
#include "common/xalloc.h"

#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

/* What nx_source(k) reads: a source, inline or run ahead (as reader `reader` of it),
 * and the source's own error once the scan met it. */
struct source_slot {
	struct nx_row_source *src;
	struct nx_duck_ahead *ahead;
	unsigned reader;
	struct nx_err err;
	int rc;
};

struct nx_duck {
	duckdb_database db;
	duckdb_connection con;
	duckdb_connection con2;       /* a second connection (a split copy's second writer, a
				       * second cursor), made when needed */
	duckdb_connection con_app;    /* appenders' (an appender's flush on a connection ends
				       * the streaming result it is reading) */
	struct source_slot slot[NX_AHEAD_READERS]; /* what the running COPYs read */
};

/* ---- the nx_source() table function ---------------------------------------------- */

/* nx_source(k) reads slot k, which the copy running it filled. */
static void source_bind(duckdb_bind_info info)
{
	struct nx_duck *d = duckdb_bind_get_extra_info(info);
	duckdb_value v = duckdb_bind_get_parameter(info, 0);
	int64_t k = v ? duckdb_get_int64(v) : -1;
	const struct nx_table *t;

	duckdb_destroy_value(&v);
	if (k < 0 || k >= NX_AHEAD_READERS || !d->slot[k].src) {
		duckdb_bind_set_error(info, "nx_source() is internal to neuron-explorer ingest");
		return;
	}
	t = d->slot[k].src->table;
	for (size_t i = 0; i < t->nfields; i++) {
		duckdb_logical_type lt = nx_rowbuf_logical_type(&t->fields[i]);
		duckdb_bind_add_result_column(info, t->fields[i].name, lt);
		duckdb_destroy_logical_type(&lt);
	}
	duckdb_bind_set_bind_data(info, &d->slot[k], NULL);
}

static void source_init(duckdb_init_info info)
{
	duckdb_init_set_max_threads(info, 1);
}

int nx_duck_drain_source(struct nx_row_source *src, uint64_t *rows, struct nx_err *err)
{
	const struct nx_table *t = src->table;
	duckdb_logical_type types[128];
	duckdb_data_chunk chunk;
	struct nx_rowbuf b;
	int n, rc = 0;

	*rows = 0;
	if (t->nfields > NX_ARRAY_SIZE(types))
		return nx_errf(err, NX_EUSAGE, "table %s has too many fields", t->name);
	for (size_t c = 0; c < t->nfields; c++) {
		types[c] = nx_rowbuf_logical_type(&t->fields[c]);
	}
	chunk = duckdb_create_data_chunk(types, t->nfields);
	for (size_t c = 0; c < t->nfields; c++)
		duckdb_destroy_logical_type(&types[c]);
	for (;;) {
		struct nx_arena arena = NX_ARENA_INIT;
		duckdb_data_chunk_reset(chunk);
		nx_rowbuf_bind(&b, chunk, t);
		b.arena = &arena; /* as the batches bound for our writer */
		n = src->next(src->self, &b, err);
		nx_arena_free(&arena);
		if (n <= 0) {
			rc = n;
			break;
		}
		duckdb_data_chunk_set_size(chunk, (idx_t)n);
		*rows += (uint64_t)n;
	}
	duckdb_destroy_data_chunk(&chunk);
	return rc;
}

/* The scan of a source run ahead: the next ready chunk's vectors become output's. */
static int ahead_scan(struct source_slot *s, duckdb_data_chunk output)
{
	struct nx_ahead_batch batch;
	int rc = nx__ahead_take(s->ahead, s->reader, &batch, &s->err);
	duckdb_data_chunk chunk = batch.chunk;

	if (!chunk) {
		duckdb_data_chunk_set_size(output, 0);
		return rc;
	}
	for (size_t c = 0; c < s->src->table->nfields; c++)
		duckdb_vector_reference_vector(duckdb_data_chunk_get_vector(output, c),
					       duckdb_data_chunk_get_vector(chunk, c));
	/* output shares the chunk's buffers; the chunk is refilled only once DuckDB asks
	 * for the next, when it is done with these (every reader of a split copy reads
	 * them, none writes them) */
	duckdb_data_chunk_set_size(output, duckdb_data_chunk_get_size(chunk));
	return 0;
}

static void source_scan(duckdb_function_info info, duckdb_data_chunk output)
{
	struct source_slot *s = duckdb_function_get_bind_data(info);
	struct nx_rowbuf b;
	int n;

	if (s->rc) {
		duckdb_data_chunk_set_size(output, 0);
		return;
	}
	if (s->ahead) {
		n = ahead_scan(s, output);
	} else {
		nx_rowbuf_bind(&b, output, s->src->table);
		n = s->src->next(s->src->self, &b, &s->err);
	}
	if (n < 0) {
		s->rc = n;
		duckdb_function_set_error(info, s->err.msg[0] ? s->err.msg : nx_strerror(n));
		return;
	}
	if (!s->ahead)
		duckdb_data_chunk_set_size(output, (idx_t)n);
}

static int register_source_function(struct nx_duck *d, struct nx_err *err)
{
	duckdb_table_function f = duckdb_create_table_function();
	duckdb_logical_type bigint = duckdb_create_logical_type(DUCKDB_TYPE_BIGINT);
	duckdb_state st;

	duckdb_table_function_set_name(f, "nx_source");
	duckdb_table_function_add_parameter(f, bigint);
	duckdb_destroy_logical_type(&bigint);
	duckdb_table_function_set_extra_info(f, d, NULL);
	duckdb_table_function_set_bind(f, source_bind);
	duckdb_table_function_set_init(f, source_init);
	duckdb_table_function_set_function(f, source_scan);
	st = duckdb_register_table_function(d->con, f);
	duckdb_destroy_table_function(&f);
	if (st != DuckDBSuccess)
		return nx_errf(err, NX_EDB, "cannot register the nx_source table function");
	return 0;
}

/* ---- connection and SQL ------------------------------------------------------------ */

int nx_duck_open(struct nx_duck **out, unsigned threads, const char *memory_limit,
		 struct nx_err *err)
{
	struct nx_duck *d = nx_xcalloc(1, sizeof(*d));
	struct nx_duck_config cfg = { .threads = threads, .memory_limit = memory_limit };
	int rc = nx_duck_db_open(&d->db, &cfg, err);

	if (rc)
		goto fail;
	if (duckdb_connect(d->db, &d->con) != DuckDBSuccess) {
		rc = nx_errf(err, NX_EDB, "cannot connect to DuckDB");
		goto fail;
	}
	rc = register_source_function(d, err);
	if (rc)
		goto fail;
	*out = d;
	return 0;
fail:
	nx_duck_close(d);
	return rc;
}

duckdb_connection nx__duck_con(struct nx_duck *d)
{
	return d->con;
}

duckdb_connection nx__duck_con2(struct nx_duck *d)
{
	if (!d->con2 && duckdb_connect(d->db, &d->con2) != DuckDBSuccess)
		d->con2 = NULL;
	return d->con2;
}

duckdb_connection nx__duck_con_app(struct nx_duck *d)
{
	if (!d->con_app && duckdb_connect(d->db, &d->con_app) != DuckDBSuccess)
		d->con_app = NULL;
	return d->con_app;
}

/* Set by a test thread while server threads may be closing databases. */
static nx_duck_close_hook close_hook;
static void *close_hook_arg;

void nx__duck_set_close_hook(nx_duck_close_hook fn, void *arg)
{
	__atomic_store_n(&close_hook_arg, arg, __ATOMIC_RELAXED);
	__atomic_store_n(&close_hook, fn, __ATOMIC_RELEASE);
}

void nx_duck_interrupt(struct nx_duck *d)
{
	if (d && d->con)
		duckdb_interrupt(d->con);
	if (d && d->con2)
		duckdb_interrupt(d->con2);
}

void nx_duck_close(struct nx_duck *d)
{
	nx_duck_close_hook hook = __atomic_load_n(&close_hook, __ATOMIC_ACQUIRE);

	if (!d)
		return;
	if (hook && d->con)
		hook(__atomic_load_n(&close_hook_arg, __ATOMIC_RELAXED), d);
	if (d->con)
		duckdb_disconnect(&d->con);
	if (d->con2)
		duckdb_disconnect(&d->con2);
	if (d->con_app)
		duckdb_disconnect(&d->con_app);
	if (d->db)
		duckdb_close(&d->db);
	free(d);
}

static int run(struct nx_duck *d, const char *sql, duckdb_result *res, struct nx_err *err)
{
	return nx_duck_con_run(d->con, sql, res, err);
}

int nx_duck_exec(struct nx_duck *d, const char *sql, struct nx_err *err)
{
	return nx_duck_con_exec(d->con, sql, err);
}

int nx_duck_query_i64(struct nx_duck *d, const char *sql, int64_t *out, struct nx_err *err)
{
	return nx_duck_con_query_i64(d->con, sql, out, err);
}

int nx_duck_query_f64(struct nx_duck *d, const char *sql, double *out, struct nx_err *err)
{
	duckdb_result res;
	int rc = run(d, sql, &res, err);

	if (rc)
		return rc;
	*out = NAN;
	if (duckdb_row_count(&res) > 0 && duckdb_column_count(&res) > 0 &&
	    !duckdb_value_is_null(&res, 0, 0))
		*out = duckdb_value_double(&res, 0, 0);
	duckdb_destroy_result(&res);
	return 0;
}

int nx_duck_columns(struct nx_duck *d, const char *select_sql, char ***names, size_t *n,
		    struct nx_err *err)
{
	duckdb_result res;
	char *sql = nx_xasprintf("SELECT * FROM (%s) LIMIT 0", select_sql);
	int rc = run(d, sql, &res, err);

	free(sql);
	if (rc)
		return rc;
	*n = duckdb_column_count(&res);
	*names = nx_xcalloc(*n ? *n : 1, sizeof(char *));
	for (size_t i = 0; i < *n; i++)
		(*names)[i] = nx_xstrdup(duckdb_column_name(&res, i));
	duckdb_destroy_result(&res);
	return 0;
}

/* Hands every cell of res to fn as text. */
static void cells(duckdb_result *res, nx_duck_row_fn fn, void *arg)
{
	idx_t rows = duckdb_row_count(res), cols = duckdb_column_count(res);
	for (idx_t r = 0; r < rows; r++) {
		for (idx_t c = 0; c < cols; c++) {
			const char *name = duckdb_column_name(res, c);
			char buf[64];
			if (duckdb_value_is_null(res, c, r)) {
				fn(arg, r, name, NX_CELL_NULL, NULL);
				continue;
			}
			switch (duckdb_column_type(res, c)) {
			case DUCKDB_TYPE_BOOLEAN:
				fn(arg, r, name, NX_CELL_BOOL,
				   duckdb_value_boolean(res, c, r) ? "true" : "false");
				break;
			case DUCKDB_TYPE_TINYINT: case DUCKDB_TYPE_SMALLINT: case DUCKDB_TYPE_INTEGER:
			case DUCKDB_TYPE_BIGINT: case DUCKDB_TYPE_UTINYINT: case DUCKDB_TYPE_USMALLINT:
			case DUCKDB_TYPE_UINTEGER:
				snprintf(buf, sizeof(buf), "%" PRId64, duckdb_value_int64(res, c, r));
				fn(arg, r, name, NX_CELL_INT, buf);
				break;
			case DUCKDB_TYPE_FLOAT: case DUCKDB_TYPE_DOUBLE: case DUCKDB_TYPE_DECIMAL: {
				double v = duckdb_value_double(res, c, r);
				if (isnan(v) || isinf(v)) {
					fn(arg, r, name, NX_CELL_NULL, NULL);
					break;
				}
				snprintf(buf, sizeof(buf), "%.9g", v);
				fn(arg, r, name, NX_CELL_FLOAT, buf);
				break;
			}
			default: {
				char *text = duckdb_value_varchar(res, c, r);
				fn(arg, r, name, NX_CELL_TEXT, text ? text : "");
				duckdb_free(text);
				break;
			}
			}
		}
	}
}

int nx_duck_query_cells(struct nx_duck *d, const char *sql, nx_duck_row_fn fn, void *arg,
			struct nx_err *err)
{
	duckdb_result res;
	int rc = run(d, sql, &res, err);

	if (rc)
		return rc;
	cells(&res, fn, arg);
	duckdb_destroy_result(&res);
	return 0;
}

int nx_duck_query_cells_plain(struct nx_duck *d, const char *sql, nx_duck_row_fn fn,
			      void *arg, struct nx_err *err)
{
	duckdb_result res;

	if (duckdb_query(d->con, sql, &res) != DuckDBSuccess) {
		const char *m = duckdb_result_error(&res);
		int rc = nx_errf(err, NX_EDB, "%s", m ? m : "query failed");
		duckdb_destroy_result(&res);
		return rc;
	}
	cells(&res, fn, arg);
	duckdb_destroy_result(&res);
	return 0;
}


void nx_sql_quote(struct nx_strbuf *out, const char *s)
{
	nx_strbuf_addch(out, '\'');
	for (; *s; s++) {
		if (*s == '\'')
			nx_strbuf_addch(out, '\'');
		nx_strbuf_addch(out, *s);
	}
	nx_strbuf_addch(out, '\'');
}

void nx_sql_quote_ident(struct nx_strbuf *out, const char *s)
{
	nx_strbuf_addch(out, '"');
	for (; *s; s++) {
		if (*s == '"')
			nx_strbuf_addch(out, '"');
		nx_strbuf_addch(out, *s);
	}
	nx_strbuf_addch(out, '"');
}

int nx_duck_sandbox(struct nx_duck *d, const char *const *dirs, size_t n, const char *temp_dir,
		    struct nx_err *err)
{
	if (nx_duck_con_sandbox(d->con, dirs, n, temp_dir, err))
		return nx_err_wrap(err, "cannot sandbox DuckDB to '%s'", n ? dirs[0] : "");
	return 0;
}

/* The COPY statement of copy_to into sql. */
static void copy_sql(struct nx_strbuf *sql, const char *select_sql, const char *path,
		     unsigned long row_group, const char *part, unsigned long part_groups)
{
	nx_strbuf_addf(sql, "COPY (%s) TO ", select_sql);
	nx_sql_quote(sql, path);
	nx_strbuf_addstr(sql, " (FORMAT parquet, COMPRESSION zstd");
	if (row_group)
		nx_strbuf_addf(sql, ", ROW_GROUP_SIZE %lu", row_group);
	if (part) {
		nx_strbuf_addf(sql, ", ROW_GROUPS_PER_FILE %lu, FILENAME_PATTERN ", part_groups);
		nx_sql_quote(sql, part);
	}
	nx_strbuf_addch(sql, ')');
}

/* COPY ... TO path as zstd parquet, in row groups of row_group rows (0: DuckDB's);
 * with part (a file name pattern) path is a directory that gets files of
 * part_groups row groups each. */
static int copy_to(duckdb_connection con, const char *select_sql, const char *path,
		   unsigned long row_group, const char *part, unsigned long part_groups,
		   uint64_t *rows, struct nx_err *err)
{
	struct nx_strbuf sql = NX_STRBUF_INIT;
	int64_t n = 0;
	int rc;

	copy_sql(&sql, select_sql, path, row_group, part, part_groups);
	rc = nx_duck_con_query_i64(con, sql.buf, &n, err);
	nx_strbuf_release(&sql);
	if (!rc && rows)
		*rows = (uint64_t)n;
	return rc;
}

int nx_duck_copy_query(struct nx_duck *d, const char *select_sql, const char *path,
		       uint64_t *rows, struct nx_err *err)
{
	return copy_to(d->con, select_sql, path, 0, NULL, 0, rows, err);
}

/* Row groups of the tables written from row sources: NX_INGEST_ROW_GROUP rows, else
 * the caller's choice, else 32768. DuckDB's parquet writer holds a row group whole
 * before compressing it, and at its default of 122880 rows a row group of the 39-column
 * Instruction table is what set the raw stage's peak (docs/memory.md). */
static unsigned long source_row_group(unsigned long wanted)
{
	const char *v = getenv("NX_INGEST_ROW_GROUP");
	long n = v && *v ? atol(v) : 0;
	return n > 0 ? (unsigned long)n : wanted ? wanted : 32768UL;
}

/* Row groups per part of a split table: NX_INGEST_PART_GROUPS, else 64 (2M rows). */
static unsigned long part_row_groups(void)
{
	const char *v = getenv("NX_INGEST_PART_GROUPS");
	long n = v && *v ? atol(v) : 0;
	return n > 0 ? (unsigned long)n : 64UL;
}

/* Points slot k at src (run ahead on a as its reader k, or inline without a). */
static void slot_set(struct nx_duck *d, unsigned k, struct nx_row_source *src,
		     struct nx_duck_ahead *a)
{
	struct source_slot *s = &d->slot[k];

	s->src = src;
	s->ahead = a;
	s->reader = k;
	s->rc = 0;
	nx_err_clear(&s->err);
}

/* The error of a copy through slot k: the source's own when it failed (DuckDB only wraps
 * it), else DuckDB's rc; the slot is emptied. */
static int slot_end(struct nx_duck *d, unsigned k, int rc, struct nx_err *copy_err,
		    struct nx_err *err)
{
	struct source_slot *s = &d->slot[k];

	if (s->rc) {
		rc = s->rc;
		if (err)
			*err = s->err;
	} else if (rc && err && copy_err != err) {
		*err = *copy_err;
	}
	s->src = NULL;
	s->ahead = NULL;
	return rc;
}

/* Copies src to path; with a, src already runs on a's thread (a is stopped and freed
 * whichever way the copy ends). */
static int copy_source(struct nx_duck *d, struct nx_row_source *src, struct nx_duck_ahead *a,
		       const char *path, const char *part, unsigned long row_group,
		       uint64_t *rows, struct nx_err *err)
{
	int rc;

	slot_set(d, 0, src, a);
	rc = copy_to(d->con, "SELECT * FROM nx_source(0)", path, source_row_group(row_group),
		     part, part_row_groups(), rows, err);
	nx_duck_ahead_stop(a);
	return slot_end(d, 0, rc, err, err);
}

int nx_duck_copy_source(struct nx_duck *d, struct nx_row_source *src, const char *path,
			uint64_t *rows, struct nx_err *err)
{
	return copy_source(d, src, NULL, path, NULL, 0, rows, err);
}

int nx_duck_copy_ahead(struct nx_duck *d, struct nx_duck_ahead *a, const char *path,
		       unsigned long row_group, uint64_t *rows, struct nx_err *err)
{
	if (a->own_strings) {
		nx_duck_ahead_stop(a);
		return nx_errf(err, NX_EUSAGE, "a source run ahead for our writer cannot be "
			       "copied by DuckDB's");
	}
	return copy_source(d, a->src, a, path, NULL, row_group, rows, err);
}

int nx_duck_write_ahead(struct nx_duck_ahead *a, const char *path, unsigned long row_group,
			uint64_t *rows, struct nx_err *err)
{
	const struct nx_table *t = a->src->table;
	struct nx_pqw *w = NULL;
	int rc = nx_pqw_open(&w, t, path, source_row_group(row_group), err);

	while (!rc) {
		struct nx_ahead_batch batch;
		struct nx_rowbuf b;
		if ((rc = nx__ahead_take(a, 0, &batch, err)) || !batch.chunk)
			break;
		duckdb_data_chunk chunk = batch.chunk;
		b.ncols = t->nfields;
		b.capacity = duckdb_vector_size();
		for (size_t c = 0; c < t->nfields; c++) {
			b.type[c] = nx_rowbuf_coltype(&t->fields[c]);
			b.vec[c] = duckdb_data_chunk_get_vector(chunk, c);
			b.data[c] = duckdb_vector_get_data(b.vec[c]);
			b.validity[c] = duckdb_vector_get_validity(b.vec[c]);
		}
		rc = nx_pqw_add(w, &b, (size_t)duckdb_data_chunk_get_size(chunk), err);
		/* the batch is freed for the producer by the next take */
	}
	nx_duck_ahead_stop(a);
	if (rc) {
		nx_pqw_abort(w);
		return rc;
	}
	return nx_pqw_close(w, rows, err);
}

int nx_duck_write_source(struct nx_row_source *src, const char *path, uint64_t *rows,
			 struct nx_err *err)
{
	const struct nx_table *t = src->table;
	duckdb_logical_type types[128];
	duckdb_data_chunk chunk;
	struct nx_pqw *w = NULL;
	struct nx_rowbuf b;
	int n, rc;

	if (t->nfields > NX_ARRAY_SIZE(types))
		return nx_errf(err, NX_EUSAGE, "table %s has too many fields", t->name);
	if ((rc = nx_pqw_open(&w, t, path, source_row_group(0), err)))
		return rc;
	for (size_t c = 0; c < t->nfields; c++)
		types[c] = nx_rowbuf_logical_type(&t->fields[c]);
	chunk = duckdb_create_data_chunk(types, t->nfields);
	for (size_t c = 0; c < t->nfields; c++)
		duckdb_destroy_logical_type(&types[c]);
	for (;;) {
		struct nx_arena arena = NX_ARENA_INIT;
		duckdb_data_chunk_reset(chunk);
		nx_rowbuf_bind(&b, chunk, t);
		b.arena = &arena;
		n = src->next(src->self, &b, err);
		if (n > 0)
			rc = nx_pqw_add(w, &b, (size_t)n, err);
		nx_arena_free(&arena);
		if (n <= 0 || rc)
			break;
	}
	duckdb_destroy_data_chunk(&chunk);
	if (n < 0 || rc) {
		nx_pqw_abort(w);
		return n < 0 ? n : rc;
	}
	return nx_pqw_close(w, rows, err);
}

/* Writers of a table written in parts: NX_INGEST_WRITERS (1 or 2), else 2. */
static unsigned part_writers(void)
{
	const char *v = getenv("NX_INGEST_WRITERS");

	return v && !strcmp(v, "1") ? 1 : 2;
}

/* The first column of a split copy's second writer: the columns before it and those
 * from it on cost about the same to encode. A column's weight is a guess from its type
 * (a string or list column costs DuckDB's writer about twice a number's: dictionary
 * analysis and copies); NX_INGEST_SPLIT_AT overrides it. 0: no split. */
static size_t split_column(const struct nx_table *t)
{
	const char *v = getenv("NX_INGEST_SPLIT_AT");
	size_t total = 0, sum = 0, at;

	if (v && *v) {
		long n = atol(v);
		return n > 0 && (size_t)n < t->nfields ? (size_t)n : 0;
	}
	if (t->nfields < 2)
		return 0;
	for (size_t i = 0; i < t->nfields; i++)
		total += nx_rowbuf_coltype(&t->fields[i]) >= NX_COL_VARCHAR ? 2 : 1;
	for (at = 0; at + 1 < t->nfields && 2 * sum < total; at++)
		sum += nx_rowbuf_coltype(&t->fields[at]) >= NX_COL_VARCHAR ? 2 : 1;
	return at ? at : 1;
}

/* SELECT of columns [from, to) of the source in slot k. */
static char *columns_sql(const struct nx_table *t, size_t from, size_t to, unsigned k)
{
	struct nx_strbuf sql = NX_STRBUF_INIT;

	nx_strbuf_addstr(&sql, "SELECT ");
	for (size_t i = from; i < to; i++) {
		if (i > from)
			nx_strbuf_addstr(&sql, ", ");
		nx_sql_quote_ident(&sql, t->fields[i].name);
	}
	nx_strbuf_addf(&sql, " FROM nx_source(%u)", k);
	return nx_strbuf_detach(&sql, NULL);
}

/* One writer of a copy in parts: its COPY into a directory of its own. */
struct part_writer {
	duckdb_connection con;
	char *sql, *tmp;
	const char *pattern;
	duckdb_prepared_statement ps;
	duckdb_pending_result pending;
	bool done;
	uint64_t rows;
	int rc;
	struct nx_err err;
};

/* Prepares w's COPY as a pending query. */
static int part_start(struct part_writer *w)
{
	struct nx_strbuf sql = NX_STRBUF_INIT;
	int rc = 0;

	copy_sql(&sql, w->sql, w->tmp, source_row_group(0), w->pattern, part_row_groups());
	if (duckdb_prepare(w->con, sql.buf, &w->ps) != DuckDBSuccess)
		rc = nx_errf(&w->err, NX_EDB, "%s", duckdb_prepare_error(w->ps));
	else if (duckdb_pending_prepared(w->ps, &w->pending) != DuckDBSuccess)
		rc = nx_errf(&w->err, NX_EDB, "%s", duckdb_pending_error(w->pending));
	nx_strbuf_release(&sql);
	return w->rc = rc;
}

/* w's COPY has ended: its row count or its error. */
static void part_end(struct part_writer *w)
{
	duckdb_result res;

	w->done = true;
	if (w->rc)
		return;
	if (duckdb_execute_pending(w->pending, &res) != DuckDBSuccess) {
		const char *m = duckdb_result_error(&res);
		w->rc = nx_errf(&w->err, NX_EDB, "%s", nx_duck_error_cause(m ? m : "query failed"));
	} else if (duckdb_row_count(&res) > 0 && !duckdb_value_is_null(&res, 0, 0)) {
		w->rows = (uint64_t)duckdb_value_int64(&res, 0, 0);
	}
	duckdb_destroy_result(&res);
}

/* Runs both writers' COPYs to their ends. DuckDB's pipelines are its tasks, and this
 * thread and DuckDB's worker run whichever task is ready, of either COPY: two threads
 * for two writers, and no thread of our own (a thread that ends leaves what DuckDB's
 * allocator gave it mapped: 30 MB more at the next table's peak at 10M records). When
 * one COPY fails, the source stops, so the other ends too. */
static void part_write_both(struct part_writer w[2], struct nx_duck_ahead *a)
{
	long wait_ns = 10000;

	for (int k = 0; k < 2; k++)
		if (part_start(&w[k]))
			w[k].done = true;
	if (w[0].rc || w[1].rc)
		nx__ahead_cancel(a);
	while (!w[0].done || !w[1].done) {
		bool progress = false;
		for (int k = 0; k < 2; k++) {
			if (w[k].done)
				continue;
			duckdb_pending_state st = duckdb_pending_execute_task(w[k].pending);
			if (duckdb_pending_execution_is_finished(st)) {
				part_end(&w[k]);
				if (w[k].rc) /* the other must not wait for batches no one frees */
					nx__ahead_cancel(a);
				progress = true;
			} else if (st != DUCKDB_PENDING_NO_TASKS_AVAILABLE) {
				progress = true;
			}
		}
		if (progress) {
			wait_ns = 10000;
			continue;
		}
		nx_duck_idle_wait(&wait_ns);
	}
	for (int k = 0; k < 2; k++) {
		duckdb_destroy_pending(&w[k].pending);
		duckdb_destroy_prepare(&w[k].ps);
	}
}

/* The number of parts "<t>_<i>.parquet" in dir: DuckDB numbers them from 0 in write
 * order. */
static size_t count_parts(const char *dir, const char *t)
{
	size_t n = 0;

	for (;; n++) {
		char *name = nx_xasprintf("%s/%s_%zu.parquet", dir, t, n);
		bool have = nx_is_file(name);
		free(name);
		if (!have)
			return n;
	}
}

/* Part i of table t in dir (the caller frees it). */
static char *part_path(const char *dir, const char *t, size_t i)
{
	return nx_xasprintf("%s/%s_%zu.parquet", dir, t, i);
}

/* Moves the n parts of t from `from` to dir. */
static int move_parts(const char *from, const char *dir, const char *t, size_t n,
		      struct nx_err *err)
{
	int rc = 0;

	for (size_t i = 0; !rc && i < n; i++) {
		char *a = part_path(from, t, i), *b = part_path(dir, t, i);
		if (rename(a, b))
			rc = nx_errf(err, -errno, "cannot rename '%s': %s", a, strerror(errno));
		free(a);
		free(b);
	}
	return rc;
}

/* Joins part i of the left writer's columns with part i of the right's, every i,
 * into the left's files; *zipped is false, and nothing changed, when some row group
 * differs in size between the two (DuckDB also ends a row group at 1 KB per row of
 * its buffered data, which two writers of different columns may reach apart). */
static int zip_parts(const char *left, const char *right, const char *t, size_t n,
		     bool *zipped, struct nx_err *err)
{
	int rc = 0;

	*zipped = true;
	for (size_t i = 0; !rc && *zipped && i < n; i++) {
		char *a = part_path(left, t, i), *b = part_path(right, t, i);
		rc = nx_parquet_zip_check(a, b, zipped, err);
		free(a);
		free(b);
	}
	for (size_t i = 0; !rc && *zipped && i < n; i++) {
		char *a = part_path(left, t, i), *b = part_path(right, t, i);
		rc = nx_parquet_zip(a, b, err);
		free(a);
		free(b);
	}
	return rc;
}

/* The slow way to the same parts, for files that zip_parts cannot join: DuckDB reads
 * both writers' parts row by row side by side and writes them again into out. */
static int rewrite_parts(struct nx_duck *d, const char *left, size_t nl, const char *right,
			 size_t nr, const char *out, const char *pattern, const char *t,
			 uint64_t *rows, struct nx_err *err)
{
	struct nx_strbuf sql = NX_STRBUF_INIT;
	const char *dirs[2] = { left, right };
	size_t n[2] = { nl, nr };
	int rc;

	nx_strbuf_addstr(&sql, "SELECT * FROM ");
	for (int s = 0; s < 2; s++) {
		nx_strbuf_addstr(&sql, s ? " POSITIONAL JOIN read_parquet([" : "read_parquet([");
		for (size_t i = 0; i < n[s]; i++) {
			char *p = part_path(dirs[s], t, i);
			if (i)
				nx_strbuf_addstr(&sql, ", ");
			nx_sql_quote(&sql, p);
			free(p);
		}
		nx_strbuf_addstr(&sql, "])");
	}
	rc = copy_to(d->con, sql.buf, out, source_row_group(0), pattern, part_row_groups(), rows,
		     err);
	nx_strbuf_release(&sql);
	return rc;
}

/* The split copy of nx_duck_copy_source_parts: columns [0, at) on the calling thread,
 * [at, n) on a thread of its own with the database's second connection, both reading
 * the batches of a, into tmp[0] and tmp[1]; then each part's two files are joined into
 * tmp[0]'s, or written again into tmp[2]. *from says which holds the *nparts parts. */
static int copy_split(struct nx_duck *d, struct nx_row_source *src, struct nx_duck_ahead *a,
		      size_t at, char *const tmp[3], uint64_t *rows, size_t *nparts, int *from,
		      struct nx_err *err)
{
	const struct nx_table *t = src->table;
	char *pattern = nx_xasprintf("%s_{i}", t->name);
	struct part_writer w[2];
	bool zipped = false;
	int rc = 0;

	if (!nx__duck_con2(d)) {
		nx_duck_ahead_stop(a);
		free(pattern);
		return nx_errf(err, NX_EDB, "cannot connect to DuckDB a second time");
	}
	memset(w, 0, sizeof(w));
	for (unsigned k = 0; k < 2; k++) {
		slot_set(d, k, src, a);
		w[k].con = k ? d->con2 : d->con;
		w[k].sql = columns_sql(t, k ? at : 0, k ? t->nfields : at, k);
		w[k].tmp = tmp[k];
		w[k].pattern = pattern;
	}
	part_write_both(w, a);
	nx_duck_ahead_stop(a);
	rc = slot_end(d, 0, w[0].rc, &w[0].err, err);
	rc = slot_end(d, 1, rc ? rc : w[1].rc, rc ? err : &w[1].err, err);
	if (!rc && w[0].rows != w[1].rows)
		rc = nx_errf(err, NX_EDB, "the two writers of %s wrote %" PRIu64 " and %" PRIu64
			     " rows", t->name, w[0].rows, w[1].rows);
	size_t nl = rc ? 0 : count_parts(tmp[0], t->name), nr = rc ? 0 : count_parts(tmp[1], t->name);
	/* NX_TEST_SPLIT_REWRITE=1 takes the slow way, for the tests: DuckDB 1.4.4 has not
	 * been seen to end the two writers' row groups apart */
	const char *test = getenv("NX_TEST_SPLIT_REWRITE");
	if (!rc && nl == nr && !(test && !strcmp(test, "1")))
		rc = zip_parts(tmp[0], tmp[1], t->name, nl, &zipped, err);
	*nparts = nl;
	*rows = w[0].rows;
	*from = 0;
	if (!rc && !zipped) {
		rc = rewrite_parts(d, tmp[0], nl, tmp[1], nr, tmp[2], pattern, t->name, rows, err);
		*nparts = rc ? 0 : count_parts(tmp[2], t->name);
		*from = 2;
	}
	for (unsigned k = 0; k < 2; k++)
		free(w[k].sql);
	free(pattern);
	return rc;
}

int nx_duck_copy_source_parts(struct nx_duck *d, struct nx_row_source *src, const char *dir,
			      uint64_t *rows, struct nx_err *err)
{
	const char *t = src->table->name;
	size_t at = part_writers() > 1 ? split_column(src->table) : 0, nparts = 0;
	char *tmp[3], *pattern = nx_xasprintf("%s_{i}", t);
	struct nx_err ignored = { 0 };
	struct nx_duck_ahead *a = NULL;
	uint64_t n = 0;
	int from = 0, rc;

	for (int k = 0; k < 3; k++) {
		char *name = nx_xasprintf(".%s.parts%d.tmp", t, k);
		tmp[k] = nx_path_join(dir, name);
		free(name);
		nx_remove_tree(tmp[k], &ignored);
	}
	/* The trace tables are the bulk of an ingest: their source decodes the trace on a
	 * thread of its own while DuckDB encodes, on one thread, or on two that each write
	 * some of the columns (docs/memory.md, "Both cores"). */
	/* two writers need two threads to run their COPYs: one blocked on the source waits
	 * for the other to take its batch (part_write_both) */
	int64_t threads = 0;
	if (at && (nx_duck_con_query_i64(d->con, "SELECT current_setting('threads')::BIGINT", &threads,
				&ignored) || threads < 2))
		at = 0;
	rc = nx__ahead_begin(src, false, at ? 2 : 1, &a, err);
	if (!rc && at) {
		rc = copy_split(d, src, a, at, tmp, &n, &nparts, &from, err);
	} else if (!rc) {
		rc = copy_source(d, src, a, tmp[0], pattern, 0, &n, err);
		nparts = rc ? 0 : count_parts(tmp[0], t);
	}
	if (!rc)
		rc = move_parts(tmp[from], dir, t, nparts, err);
	for (int k = 0; k < 3; k++) {
		nx_remove_tree(tmp[k], &ignored);
		free(tmp[k]);
	}
	free(pattern);
	if (rows)
		*rows = n;
	return rc;
}
