/* SPDX-License-Identifier: MIT
 * duck_scan.c: a query's result streamed to C chunk by chunk, the rows a query reads
 * handed to C as it runs (a function of its own), and rows appended to a table, on a
 * database opened by nx_duck_open (see duck.h): the analysis reads the large tables in
 * passes of its own and keeps what they yield in small tables. */
#include "common/compat.h"
#include "db/duck.h"
#include "db/duck_conn.h"
#include "common/xalloc.h"

#include <stdlib.h>
#include <string.h>

#define MAX_COLS 64

struct nx_dchunk {
	size_t rows, ncols;
	duckdb_type type[MAX_COLS];
	void *data[MAX_COLS];
	uint64_t *valid[MAX_COLS];
};

size_t nx_dchunk_rows(const struct nx_dchunk *c)
{
	return c->rows;
}

static bool valid(const struct nx_dchunk *c, size_t col, size_t row)
{
	return !c->valid[col] || duckdb_validity_row_is_valid(c->valid[col], row);
}

bool nx_dchunk_i64(const struct nx_dchunk *c, size_t col, size_t row, int64_t *v)
{
	if (!valid(c, col, row))
		return false;
	switch (c->type[col]) {
	case DUCKDB_TYPE_BIGINT: *v = ((const int64_t *)c->data[col])[row]; return true;
	case DUCKDB_TYPE_INTEGER: *v = ((const int32_t *)c->data[col])[row]; return true;
	case DUCKDB_TYPE_BOOLEAN: *v = ((const bool *)c->data[col])[row]; return true;
	default: return false;
	}
}

const int64_t *nx_dchunk_i64s(const struct nx_dchunk *c, size_t col, const uint64_t **valid)
{
	if (col >= c->ncols || c->type[col] != DUCKDB_TYPE_BIGINT)
		return NULL;
	*valid = c->valid[col];
	return c->data[col];
}

bool nx_dchunk_f64(const struct nx_dchunk *c, size_t col, size_t row, double *v)
{
	if (!valid(c, col, row))
		return false;
	switch (c->type[col]) {
	case DUCKDB_TYPE_DOUBLE: *v = ((const double *)c->data[col])[row]; return true;
	case DUCKDB_TYPE_FLOAT: *v = ((const float *)c->data[col])[row]; return true;
	default: return false;
	}
}

bool nx_dchunk_str(const struct nx_dchunk *c, size_t col, size_t row, const char **s,
		   size_t *len)
{
	duckdb_string_t *str;

	if (!valid(c, col, row) || c->type[col] != DUCKDB_TYPE_VARCHAR)
		return false;
	str = &((duckdb_string_t *)c->data[col])[row];
	*len = duckdb_string_t_length(*str);
	*s = duckdb_string_t_data(str);
	return true;
}

static int check_types(duckdb_result *res, struct nx_dchunk *c, struct nx_err *err)
{
	c->ncols = duckdb_column_count(res);
	if (c->ncols > MAX_COLS)
		return nx_errf(err, NX_EUSAGE, "a scanned query has more than %d columns", MAX_COLS);
	for (size_t i = 0; i < c->ncols; i++) {
		c->type[i] = duckdb_column_type(res, i);
		switch (c->type[i]) {
		case DUCKDB_TYPE_BIGINT: case DUCKDB_TYPE_INTEGER: case DUCKDB_TYPE_BOOLEAN:
		case DUCKDB_TYPE_DOUBLE: case DUCKDB_TYPE_FLOAT: case DUCKDB_TYPE_VARCHAR:
			break;
		default:
			return nx_errf(err, NX_EUSAGE, "scanned column '%s' has a type the scan does "
				       "not read; cast it in SQL", duckdb_column_name(res, i));
		}
	}
	return 0;
}

struct nx_duck_cursor {
	duckdb_prepared_statement st;
	duckdb_pending_result pending;
	duckdb_result res;
	bool have_res;
	duckdb_data_chunk ch;
	struct nx_dchunk c;
};

void nx_duck_cursor_close(struct nx_duck_cursor *c)
{
	if (!c)
		return;
	if (c->ch)
		duckdb_destroy_data_chunk(&c->ch);
	if (c->have_res)
		duckdb_destroy_result(&c->res);
	duckdb_destroy_pending(&c->pending);
	duckdb_destroy_prepare(&c->st);
	free(c);
}

/* Starts sql as a streaming result on con. */
static int cursor_open(duckdb_connection con, const char *sql, struct nx_duck_cursor **out,
		       struct nx_err *err)
{
	struct nx_duck_cursor *c = nx_xcalloc(1, sizeof(*c));
	int rc = 0;

	*out = NULL;
	if (!con) {
		rc = nx_errf(err, NX_EDB, "cannot connect to DuckDB");
	} else if (duckdb_prepare(con, sql, &c->st) != DuckDBSuccess) {
		rc = nx_errf(err, NX_EDB, "%s", duckdb_prepare_error(c->st));
	} else if (duckdb_pending_prepared_streaming(c->st, &c->pending) != DuckDBSuccess) {
		rc = nx_errf(err, NX_EDB, "%s", duckdb_pending_error(c->pending));
	} else {
		c->have_res = true;
		if (nx_duck_execute_pending(c->pending, &c->res) != DuckDBSuccess)
			rc = nx_errf(err, NX_EDB, "%s",
				     nx_duck_error_cause(duckdb_result_error(&c->res)));
		else
			rc = check_types(&c->res, &c->c, err);
	}
	if (rc)
		nx_duck_cursor_close(c);
	else
		*out = c;
	return rc;
}

int nx_duck_cursor_open(struct nx_duck *d, const char *sql, bool second,
			struct nx_duck_cursor **out, struct nx_err *err)
{
	return cursor_open(second ? nx__duck_con2(d) : nx__duck_con(d), sql, out, err);
}

int nx_duck_cursor_next(struct nx_duck_cursor *c, const struct nx_dchunk **chunk,
			struct nx_err *err)
{
	*chunk = NULL;
	if (c->ch)
		duckdb_destroy_data_chunk(&c->ch);
	c->ch = duckdb_fetch_chunk(c->res);
	if (!c->ch) {
		if (duckdb_result_error(&c->res))
			return nx_errf(err, NX_EDB, "%s",
				       nx_duck_error_cause(duckdb_result_error(&c->res)));
		return 0;
	}
	c->c.rows = duckdb_data_chunk_get_size(c->ch);
	for (size_t i = 0; i < c->c.ncols; i++) {
		duckdb_vector v = duckdb_data_chunk_get_vector(c->ch, i);
		c->c.data[i] = duckdb_vector_get_data(v);
		c->c.valid[i] = duckdb_vector_get_validity(v);
	}
	*chunk = &c->c;
	return 0;
}

int nx_duck_scan(struct nx_duck *d, const char *sql, nx_dchunk_fn fn, void *arg,
		 struct nx_err *err)
{
	struct nx_duck_cursor *c;
	const struct nx_dchunk *chunk;
	int rc = cursor_open(nx__duck_con(d), sql, &c, err);

	while (!rc && !(rc = nx_duck_cursor_next(c, &chunk, err)) && chunk)
		rc = fn(arg, chunk, err);
	nx_duck_cursor_close(c);
	return rc;
}

/* A chunk function (nx_duck_chunk_function): its C side. */
struct chunk_fn {
	nx_dchunk_fn fn;
	void *arg;
	size_t ncols;
	duckdb_type type[MAX_COLS];
	struct nx_err err;
};

static void chunk_fn_call(duckdb_function_info info, duckdb_data_chunk input, duckdb_vector output)
{
	struct chunk_fn *f = duckdb_scalar_function_get_extra_info(info);
	bool *out = duckdb_vector_get_data(output);
	struct nx_dchunk c = { .rows = duckdb_data_chunk_get_size(input), .ncols = f->ncols };

	for (size_t i = 0; i < c.ncols; i++) {
		duckdb_vector v = duckdb_data_chunk_get_vector(input, i);

		c.type[i] = f->type[i];
		c.data[i] = duckdb_vector_get_data(v);
		c.valid[i] = duckdb_vector_get_validity(v);
	}
	for (size_t r = 0; r < c.rows; r++)
		out[r] = true;
	if (f->fn(f->arg, &c, &f->err))
		duckdb_scalar_function_set_error(info, f->err.msg);
}

int nx_duck_chunk_function(struct nx_duck *d, const char *name, const enum nx_cell_kind *kinds,
			   size_t n, nx_dchunk_fn fn, void *arg, struct nx_err *err)
{
	static const duckdb_type of_kind[] = {
		[NX_CELL_NULL] = DUCKDB_TYPE_INVALID, [NX_CELL_INT] = DUCKDB_TYPE_BIGINT,
		[NX_CELL_FLOAT] = DUCKDB_TYPE_DOUBLE, [NX_CELL_BOOL] = DUCKDB_TYPE_BOOLEAN,
		[NX_CELL_TEXT] = DUCKDB_TYPE_VARCHAR,
	};
	duckdb_scalar_function sf;
	duckdb_logical_type t;
	struct chunk_fn *f;
	duckdb_state st;

	if (n > MAX_COLS || !nx__duck_con(d))
		return nx_errf(err, NX_EUSAGE, "cannot make the function %s", name);
	f = nx_xcalloc(1, sizeof(*f));
	f->fn = fn;
	f->arg = arg;
	f->ncols = n;
	sf = duckdb_create_scalar_function();
	duckdb_scalar_function_set_name(sf, name);
	for (size_t i = 0; i < n; i++) {
		f->type[i] = (size_t)kinds[i] < NX_ARRAY_SIZE(of_kind) ? of_kind[kinds[i]]
							       : DUCKDB_TYPE_INVALID;
		t = duckdb_create_logical_type(f->type[i]);
		duckdb_scalar_function_add_parameter(sf, t);
		duckdb_destroy_logical_type(&t);
	}
	t = duckdb_create_logical_type(DUCKDB_TYPE_BOOLEAN);
	duckdb_scalar_function_set_return_type(sf, t);
	duckdb_destroy_logical_type(&t);
	/* called on every row, NULLs included, and never folded away */
	duckdb_scalar_function_set_special_handling(sf);
	duckdb_scalar_function_set_volatile(sf);
	duckdb_scalar_function_set_extra_info(sf, f, free);
	duckdb_scalar_function_set_function(sf, chunk_fn_call);
	st = duckdb_register_scalar_function(nx__duck_con(d), sf);
	duckdb_destroy_scalar_function(&sf);
	if (st != DuckDBSuccess)
		return nx_errf(err, NX_EDB, "cannot make the function %s", name);
	return 0;
}

struct nx_duck_appender {
	duckdb_appender app;
	char *table;
	/* typed (nx_duck_appender_open_typed): the rows buffered in chunk */
	duckdb_data_chunk chunk;
	size_t ncols, col, row;
	duckdb_vector *vec;
	void **data;
	uint64_t **validity;
	enum nx_cell_kind *kinds; /* of the chunk's columns */
	size_t fill; /* the chunk is handed to DuckDB at this many rows (nx_duck_appender_align) */
	bool failed; /* a cell past the columns or of another kind: the row's end fails */
};

static int appender_err(struct nx_duck_appender *a, const char *what, struct nx_err *err)
{
	const char *m = duckdb_appender_error(a->app);

	return nx_errf(err, NX_EDB, "%s %s: %s", what, a->table, m ? m : "failed");
}

static void appender_free(struct nx_duck_appender *a)
{
	if (a->chunk)
		duckdb_destroy_data_chunk(&a->chunk);
	free(a->vec);
	free(a->data);
	free(a->validity);
	free(a->kinds);
	free(a->table);
	free(a);
}

int nx_duck_appender_open(struct nx_duck *d, const char *table, struct nx_duck_appender **out,
			  struct nx_err *err)
{
	struct nx_duck_appender *a = nx_xcalloc(1, sizeof(*a));
	const char *dot;
	duckdb_state st;
	int rc = 0;

	a->table = nx_xstrdup(table);
	if (!nx__duck_con_app(d)) {
		appender_free(a);
		*out = NULL;
		return nx_errf(err, NX_EDB, "cannot connect to DuckDB for appending to %s", table);
	}
	dot = strchr(table, '.');
	if (dot) {
		char *catalog = nx_xstrndup(table, (size_t)(dot - table));

		st = duckdb_appender_create_ext(nx__duck_con_app(d), catalog, NULL, dot + 1,
						&a->app);
		free(catalog);
	} else {
		st = duckdb_appender_create(nx__duck_con_app(d), NULL, table, &a->app);
	}
	if (st != DuckDBSuccess) {
		rc = appender_err(a, "cannot append to", err);
		duckdb_appender_destroy(&a->app);
		appender_free(a);
		a = NULL;
	}
	*out = a;
	return rc;
}

/* The chunk's vectors, fresh after a reset. */
static void chunk_vectors(struct nx_duck_appender *a)
{
	for (size_t i = 0; i < a->ncols; i++) {
		a->vec[i] = duckdb_data_chunk_get_vector(a->chunk, i);
		duckdb_vector_ensure_validity_writable(a->vec[i]);
		a->data[i] = duckdb_vector_get_data(a->vec[i]);
		a->validity[i] = duckdb_vector_get_validity(a->vec[i]);
	}
}

int nx_duck_appender_open_typed(struct nx_duck *d, const char *table,
				const enum nx_cell_kind *kinds, size_t n,
				struct nx_duck_appender **out, struct nx_err *err)
{
	static const duckdb_type types[] = {
		[NX_CELL_NULL] = DUCKDB_TYPE_VARCHAR, [NX_CELL_INT] = DUCKDB_TYPE_BIGINT,
		[NX_CELL_FLOAT] = DUCKDB_TYPE_DOUBLE, [NX_CELL_BOOL] = DUCKDB_TYPE_BOOLEAN,
		[NX_CELL_TEXT] = DUCKDB_TYPE_VARCHAR,
	};
	duckdb_logical_type *lt;
	struct nx_duck_appender *a;
	int rc = nx_duck_appender_open(d, table, out, err);

	if (rc)
		return rc;
	a = *out;
	lt = nx_xcalloc(n ? n : 1, sizeof(*lt));
	for (size_t i = 0; i < n; i++)
		lt[i] = duckdb_create_logical_type(types[kinds[i]]);
	a->chunk = duckdb_create_data_chunk(lt, (idx_t)n);
	for (size_t i = 0; i < n; i++)
		duckdb_destroy_logical_type(&lt[i]);
	free(lt);
	a->ncols = n;
	a->vec = nx_xcalloc(n ? n : 1, sizeof(*a->vec));
	a->data = nx_xcalloc(n ? n : 1, sizeof(*a->data));
	a->validity = nx_xcalloc(n ? n : 1, sizeof(*a->validity));
	a->kinds = nx_xcalloc(n ? n : 1, sizeof(*a->kinds));
	memcpy(a->kinds, kinds, n * sizeof(*kinds));
	a->fill = duckdb_vector_size();
	chunk_vectors(a);
	return 0;
}

void nx_duck_appender_align(struct nx_duck_appender *a, uint64_t table_rows)
{
	uint64_t v = duckdb_vector_size();

	if (a->chunk && !a->row)
		a->fill = (size_t)(v - table_rows % v);
}

int nx_duck_appender_commit(struct nx_duck_appender *a, struct nx_err *err)
{
	if (!a->chunk)
		return nx_errf(err, NX_EUSAGE, "appending to %s: only a typed appender commits "
			       "whole chunks", a->table);
	if (a->failed)
		return nx_errf(err, NX_EDB, "cannot append a row to %s: a cell past its columns "
			       "or of another kind than its column's", a->table);
	if (duckdb_appender_flush(a->app) != DuckDBSuccess)
		return appender_err(a, "cannot append rows to", err);
	return 0;
}

/* The typed appender's cell of the current column, moved past; SIZE_MAX when there is no
 * such column or it holds another kind than the cell's (the row then fails). */
static size_t typed_cell(struct nx_duck_appender *a, enum nx_cell_kind kind)
{
	if (a->col >= a->ncols || a->kinds[a->col] != kind) {
		a->failed = true;
		return SIZE_MAX;
	}
	duckdb_validity_set_row_valid(a->validity[a->col], a->row);
	return a->col++;
}

void nx_duck_append_i64(struct nx_duck_appender *a, int64_t v)
{
	size_t c;

	if (!a->chunk) {
		duckdb_append_int64(a->app, v);
	} else if ((c = typed_cell(a, NX_CELL_INT)) != SIZE_MAX) {
		((int64_t *)a->data[c])[a->row] = v;
	}
}

void nx_duck_append_f64(struct nx_duck_appender *a, double v)
{
	size_t c;

	if (!a->chunk) {
		duckdb_append_double(a->app, v);
	} else if ((c = typed_cell(a, NX_CELL_FLOAT)) != SIZE_MAX) {
		((double *)a->data[c])[a->row] = v;
	}
}

void nx_duck_append_bool(struct nx_duck_appender *a, bool v)
{
	size_t c;

	if (!a->chunk) {
		duckdb_append_bool(a->app, v);
	} else if ((c = typed_cell(a, NX_CELL_BOOL)) != SIZE_MAX) {
		((bool *)a->data[c])[a->row] = v;
	}
}

void nx_duck_append_null(struct nx_duck_appender *a)
{
	if (!a->chunk) {
		duckdb_append_null(a->app);
	} else if (a->col >= a->ncols) {
		a->failed = true;
	} else {
		duckdb_validity_set_row_invalid(a->validity[a->col], a->row);
		a->col++;
	}
}

void nx_duck_append_str(struct nx_duck_appender *a, const char *s, size_t len)
{
	size_t c;

	if (!s) {
		nx_duck_append_null(a);
	} else if (!a->chunk) {
		duckdb_append_varchar_length(a->app, s, (idx_t)len);
	} else if ((c = typed_cell(a, NX_CELL_TEXT)) != SIZE_MAX) {
		duckdb_vector_assign_string_element_len(a->vec[c], a->row, s, (idx_t)len);
	}
}

/* Appends the typed appender's buffered rows. */
static int chunk_flush(struct nx_duck_appender *a, struct nx_err *err)
{
	duckdb_state st;

	if (!a->row)
		return 0;
	duckdb_data_chunk_set_size(a->chunk, (idx_t)a->row);
	st = duckdb_append_data_chunk(a->app, a->chunk);
	duckdb_data_chunk_reset(a->chunk);
	a->row = 0;
	chunk_vectors(a);
	return st == DuckDBSuccess ? 0 : appender_err(a, "cannot append rows to", err);
}

int nx_duck_append_end_row(struct nx_duck_appender *a, struct nx_err *err)
{
	if (!a->chunk) {
		if (duckdb_appender_end_row(a->app) != DuckDBSuccess)
			return appender_err(a, "cannot append a row to", err);
		return 0;
	}
	if (a->failed || a->col != a->ncols)
		return nx_errf(err, NX_EDB, "cannot append a row to %s: %s (%zu columns)",
			       a->table, a->failed ? "a cell past its columns or of another kind "
			       "than its column's" : "fewer cells than columns", a->ncols);
	a->col = 0;
	if (++a->row == a->fill) {
		a->fill = duckdb_vector_size();
		return chunk_flush(a, err);
	}
	return 0;
}

int nx_duck_appender_close(struct nx_duck_appender *a, struct nx_err *err)
{
	int rc = 0;

	if (!a)
		return 0;
	if (a->chunk && !a->failed)
		rc = chunk_flush(a, err);
	if (duckdb_appender_close(a->app) != DuckDBSuccess && !rc)
		rc = appender_err(a, "cannot write the rows of", err);
	duckdb_appender_destroy(&a->app);
	appender_free(a);
	return rc;
}
