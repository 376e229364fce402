/* SPDX-License-Identifier: MIT
 * duck_stream.c: row streaming over a DuckDB streaming result (see duck_stream.h). */
#include "common/compat.h"
#include "db/duck_stream.h"
#include "db/duck_conn.h"
#include "common/xalloc.h"

#include <stdlib.h>
#include <string.h>

#define MAX_COLS 128

static void cell(duckdb_vector v, duckdb_type t, idx_t r, struct nx_dcell *c)
{
	uint64_t *valid = duckdb_vector_get_validity(v);
	void *data = duckdb_vector_get_data(v);

	memset(c, 0, sizeof(*c));
	if (valid && !duckdb_validity_row_is_valid(valid, r))
		return;
	switch (t) {
	case DUCKDB_TYPE_BIGINT: c->kind = NX_D_INT; c->i = ((int64_t *)data)[r]; break;
	case DUCKDB_TYPE_INTEGER: c->kind = NX_D_INT; c->i = ((int32_t *)data)[r]; break;
	case DUCKDB_TYPE_BOOLEAN: c->kind = NX_D_BOOL; c->i = ((bool *)data)[r]; break;
	case DUCKDB_TYPE_DOUBLE: c->kind = NX_D_FLOAT; c->f = ((double *)data)[r]; break;
	case DUCKDB_TYPE_FLOAT: c->kind = NX_D_FLOAT; c->f = ((float *)data)[r]; break;
	case DUCKDB_TYPE_VARCHAR: {
		duckdb_string_t *s = &((duckdb_string_t *)data)[r];
		c->kind = NX_D_TEXT;
		c->len = duckdb_string_t_length(*s);
		c->s = duckdb_string_t_data(s);
		break;
	}
	default: break;
	}
}

static int check_types(duckdb_result *res, duckdb_type *types, idx_t ncols, struct nx_err *err)
{
	if (ncols > MAX_COLS)
		return nx_errf(err, NX_EUSAGE, "a streamed query has more than %d columns", MAX_COLS);
	for (idx_t c = 0; c < ncols; c++) {
		types[c] = duckdb_column_type(res, c);
		switch (types[c]) {
		case DUCKDB_TYPE_BIGINT: case DUCKDB_TYPE_INTEGER: case DUCKDB_TYPE_BOOLEAN:
		case DUCKDB_TYPE_DOUBLE: case DUCKDB_TYPE_FLOAT: case DUCKDB_TYPE_VARCHAR:
			break;
		default:
			return nx_errf(err, NX_EUSAGE, "streamed column '%s' has a type the stream "
				       "does not read; cast it in SQL", duckdb_column_name(res, c));
		}
	}
	return 0;
}

static int pump(duckdb_result *res, nx_dstream_head_fn head, nx_dstream_fn fn, void *arg,
		struct nx_err *err)
{
	idx_t ncols = duckdb_column_count(res);
	duckdb_type types[MAX_COLS];
	struct nx_dcell cells[MAX_COLS];
	const char *names[MAX_COLS];
	int rc = check_types(res, types, ncols, err);

	if (!rc && head) {
		for (idx_t c = 0; c < ncols; c++)
			names[c] = duckdb_column_name(res, c);
		head(arg, names, ncols);
	}

	while (!rc) {
		duckdb_data_chunk ch = duckdb_fetch_chunk(*res);
		if (!ch)
			break;
		idx_t n = duckdb_data_chunk_get_size(ch);
		duckdb_vector vecs[MAX_COLS];
		for (idx_t c = 0; c < ncols; c++)
			vecs[c] = duckdb_data_chunk_get_vector(ch, c);
		for (idx_t r = 0; r < n && !rc; r++) {
			for (idx_t c = 0; c < ncols; c++)
				cell(vecs[c], types[c], r, &cells[c]);
			rc = fn(arg, cells, ncols);
		}
		duckdb_destroy_data_chunk(&ch);
	}
	if (!rc && duckdb_result_error(res))
		rc = nx_errf(err, NX_EDB, "%s", duckdb_result_error(res));
	return rc;
}

int nx_duck_stream(const char *sql, nx_dstream_fn fn, void *arg, struct nx_err *err)
{
	return nx_duck_stream_named(sql, NULL, fn, arg, err);
}

int nx_duck_stream_named(const char *sql, nx_dstream_head_fn head, nx_dstream_fn fn, void *arg,
			 struct nx_err *err)
{
	duckdb_database db = NULL;
	duckdb_connection con = NULL;
	duckdb_prepared_statement st = NULL;
	duckdb_pending_result pending = NULL;
	duckdb_result res;
	bool have_res = false;
	int rc = 0;

	rc = nx_duck_db_open(&db, NULL, err);
	if (rc)
		goto out;
	if (duckdb_connect(db, &con) != DuckDBSuccess) {
		rc = nx_errf(err, NX_EDB, "cannot connect to DuckDB");
		goto out;
	}
	/* a scan read once keeps none of the file in memory: DuckDB's external file cache
	 * would otherwise hold the bytes it read until memory runs short, so the export's
	 * memory would grow with the table */
	if ((rc = nx_duck_con_exec(con, "SET enable_external_file_cache = false", err)))
		goto out;
	if (duckdb_prepare(con, sql, &st) != DuckDBSuccess) {
		rc = nx_errf(err, NX_EDB, "%s", duckdb_prepare_error(st));
		goto out;
	}
	if (duckdb_pending_prepared_streaming(st, &pending) != DuckDBSuccess) {
		rc = nx_errf(err, NX_EDB, "%s", duckdb_pending_error(pending));
		goto out;
	}
	have_res = true;
	if (duckdb_execute_pending(pending, &res) != DuckDBSuccess) {
		rc = nx_errf(err, NX_EDB, "%s", nx_duck_exec_error(pending, &res));
		goto out;
	}
	rc = pump(&res, head, fn, arg, err);
out:
	if (have_res)
		duckdb_destroy_result(&res);
	if (pending)
		duckdb_destroy_pending(&pending);
	if (st)
		duckdb_destroy_prepare(&st);
	if (con)
		duckdb_disconnect(&con);
	if (db)
		duckdb_close(&db);
	return rc;
}
