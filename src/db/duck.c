/* SPDX-License-Identifier: MIT
 * duck.c: a database of our own (struct nx_duck): its connections, SQL helpers, and the
 * nx_source() table function that hands C row sources to DuckDB's COPY (duck_copy.c);
 * see duck.h. */
#include "common/compat.h"
#include "db/duck.h"
#include "db/duck_conn.h"
#include "db/duck_copy.h"
#include "db/rowbuf.h"
#include "db/source_ahead.h"
#include "common/xalloc.h"

#include <math.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

/* What nx_source(k) reads: a source, inline or run ahead (as reader `reader` of it),
 * and the source's own error once the scan met it. */
struct source_slot {
	struct nx_row_source *src;
	struct nx_duck_ahead *ahead;
	unsigned reader;
	atomic_uint copy;	/* counts the copies that used this slot */
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
	bool sibling;                 /* db is another handle's (nx_duck_open_sibling) */
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

/* A scan's local state: the slot and the copy it reads. */
struct source_local {
	struct source_slot *s;
	unsigned copy;
};

/* DuckDB drops a scan's local state with the task that ran it, also when its COPY
 * failed on DuckDB's own thread, which nothing of ours waits on: the reader then leaves
 * the source run ahead, so that a second writer's COPY blocked on the shared batches
 * ends instead of waiting forever (nx__ahead_leave). */
static void source_local_end(void *p)
{
	struct source_local *l = p;
	struct source_slot *s = l->s;

	if (atomic_load(&s->copy) == l->copy && s->ahead)
		nx__ahead_leave(s->ahead, s->reader);
	free(l);
}

static void source_local_init(duckdb_init_info info)
{
	struct source_local *l = nx_xcalloc(1, sizeof(*l));

	l->s = duckdb_init_get_bind_data(info);
	l->copy = atomic_load(&l->s->copy);
	duckdb_init_set_init_data(info, l, source_local_end);
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
	duckdb_table_function_set_local_init(f, source_local_init);
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

int nx_duck_open_sibling(struct nx_duck *d, struct nx_duck **out, struct nx_err *err)
{
	struct nx_duck *s = nx_xcalloc(1, sizeof(*s));

	s->db = d->db;
	s->sibling = true;
	if (duckdb_connect(s->db, &s->con) != DuckDBSuccess) {
		free(s);
		*out = NULL;
		return nx_errf(err, NX_EDB, "cannot connect to DuckDB");
	}
	*out = s;
	return 0;
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
	if (d->db && !d->sibling)
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

int nx_duck_appends_exec(struct nx_duck *d, const char *sql, struct nx_err *err)
{
	if (!nx__duck_con_app(d))
		return nx_errf(err, NX_EDB, "cannot connect to DuckDB for appending");
	return nx_duck_con_exec(d->con_app, sql, err);
}

int nx_duck_query_i64(struct nx_duck *d, const char *sql, int64_t *out, struct nx_err *err)
{
	return nx_duck_con_query_i64(d->con, sql, out, err);
}

int nx_duck_query_f64(struct nx_duck *d, const char *sql, double *out, struct nx_err *err)
{
	return nx_duck_con_query_f64(d->con, sql, out, err);
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

void nx__duck_source_set(struct nx_duck *d, unsigned k, struct nx_row_source *src,
			 struct nx_duck_ahead *a)
{
	struct source_slot *s = &d->slot[k];

	atomic_fetch_add(&s->copy, 1);
	s->src = src;
	s->ahead = a;
	s->reader = k;
	s->rc = 0;
	nx_err_clear(&s->err);
}

int nx__duck_source_end(struct nx_duck *d, unsigned k, int rc, struct nx_err *copy_err,
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
	atomic_fetch_add(&s->copy, 1);
	s->src = NULL;
	s->ahead = NULL;
	return rc;
}
