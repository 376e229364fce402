/* SPDX-License-Identifier: MIT
 * test_parquet_empty.c: zero-row parquet files written without DuckDB
 * (db/parquet_empty.h). For every stored schema table, the bytes equal those DuckDB's
 * own COPY of a zero-row SELECT with the schema's types writes, once created_by is
 * DuckDB's; the file we write reads back in DuckDB with no rows, the schema's column
 * names, order and types, and our created_by. A file that cannot be created is an
 * error naming it, and leaves nothing behind. (test_dump_shape reads whole profiles,
 * these files included, with hyparquet as well.) */
#include "common/compat.h"
#include "common/fsutil.h"
#include "common/strbuf.h"
#include "common/xalloc.h"
#include "db/duck.h"
#include "db/parquet_empty.h"
#include "schema/schema.h"
#include "helper/fixture.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

struct fx {
	char *dir;
	struct nx_duck *d;
};

static int fx_setup(void **state)
{
	struct fx *f = nx_xcalloc(1, sizeof(*f));
	struct nx_err err = { 0 };

	f->dir = nx_test_dir("parquet_empty");
	if (nx_duck_open(&f->d, 1, NULL, &err))
		fail_msg("%s", err.msg);
	*state = f;
	return 0;
}

static int fx_teardown(void **state)
{
	struct fx *f = *state;
	struct nx_err err = { 0 };

	nx_duck_close(f->d);
	nx_remove_tree(f->dir, &err);
	free(f->dir);
	free(f);
	return 0;
}

/* Every cell of a query, "a|b|...;" per row, into the strbuf arg. */
static void cell(void *arg, size_t row, const char *column, int kind, const char *text)
{
	struct nx_strbuf *out = arg;

	(void)row;
	(void)column;
	nx_strbuf_addstr(out, kind == NX_CELL_NULL ? "NULL" : text);
	nx_strbuf_addch(out, '|');
}

static char *cells(struct nx_duck *d, const char *sql)
{
	struct nx_strbuf out = NX_STRBUF_INIT;
	struct nx_err err = { 0 };

	if (nx_duck_query_cells(d, sql, cell, &out, &err))
		fail_msg("%s: %s", sql, err.msg);
	return nx_strbuf_detach(&out, NULL);
}

/* DuckDB's COPY of the table's zero-row SELECT, as the ingest wrote them before. */
static void duck_write(struct nx_duck *d, const struct nx_table *t, const char *path)
{
	struct nx_strbuf sql = NX_STRBUF_INIT;
	struct nx_err err = { 0 };
	uint64_t rows = 1;

	nx_strbuf_addstr(&sql, "SELECT ");
	for (size_t i = 0; i < t->nfields; i++) {
		const char *ty = nx_schema_duck_type(&t->fields[i]);
		nx_strbuf_addf(&sql, "%sCAST(NULL AS %s) AS \"%s\"", i ? ", " : "",
			       ty ? ty : "VARCHAR", t->fields[i].name);
	}
	nx_strbuf_addstr(&sql, " WHERE false");
	if (nx_duck_copy_query(d, sql.buf, path, &rows, &err))
		fail_msg("%s: %s", t->name, err.msg);
	assert_int_equal(rows, 0);
	nx_strbuf_release(&sql);
}

static void test_bytes_match_duckdb(void **state)
{
	struct fx *f = *state;
	size_t tables = 0, lists = 0;

	for (size_t i = 0; i < nx_schema_table_count; i++) {
		const struct nx_table *t = &nx_schema_tables[i];
		if (!t->written)
			continue;
		char *path = nx_xasprintf("%s/duck-%s.parquet", f->dir, t->name);
		char *sql = nx_xasprintf("SELECT created_by FROM parquet_file_metadata('%s')", path);
		struct nx_strbuf ours = NX_STRBUF_INIT;
		struct nx_err err = { 0 };
		size_t len;

		duck_write(f->d, t, path);
		char *by = cells(f->d, sql);
		by[strlen(by) - 1] = '\0'; /* the cell separator */
		assert_true(!strncmp(by, "DuckDB version", 14));
		char *theirs = NULL;
		if (nx_read_file(path, &theirs, &len, &err))
			fail_msg("%s", err.msg);
		nx_parquet_empty_bytes(t, by, &ours);
		if (ours.len != len || memcmp(ours.buf, theirs, len))
			fail_msg("%s: our %zu bytes differ from DuckDB's %zu", t->name, ours.len, len);
		for (size_t k = 0; k < t->nfields; k++) {
			const char *ty = nx_schema_duck_type(&t->fields[k]);
			lists += ty && strchr(ty, '[');
		}
		tables++;
		nx_strbuf_release(&ours);
		free(theirs);
		free(by);
		free(sql);
		free(path);
	}
	assert_true(tables > 40);
	assert_true(lists > 0); /* list columns were compared too */
}

static void test_written_file_reads(void **state)
{
	struct fx *f = *state;
	struct nx_err err = { 0 };
	size_t tables = 0;

	for (size_t i = 0; i < nx_schema_table_count; i++) {
		const struct nx_table *t = &nx_schema_tables[i];
		if (!t->written)
			continue;
		char *path = nx_xasprintf("%s/%s.parquet", f->dir, t->name);
		struct nx_strbuf want = NX_STRBUF_INIT;

		assert_int_equal(nx_parquet_write_empty(t, path, &err), 0);
		char *sql = nx_xasprintf("SELECT count(*) FROM read_parquet('%s')", path);
		char *n = cells(f->d, sql);
		assert_string_equal(n, "0|");
		free(sql);
		sql = nx_xasprintf("SELECT column_name, column_type FROM (DESCRIBE SELECT * FROM "
				   "read_parquet('%s'))", path);
		char *got = cells(f->d, sql);
		for (size_t k = 0; k < t->nfields; k++) {
			const char *ty = nx_schema_duck_type(&t->fields[k]);
			nx_strbuf_addf(&want, "%s|%s|", t->fields[k].name, ty ? ty : "VARCHAR");
		}
		assert_string_equal(got, want.buf);
		free(sql);
		sql = nx_xasprintf("SELECT created_by, num_rows, num_row_groups FROM "
				   "parquet_file_metadata('%s')", path);
		char *meta = cells(f->d, sql);
		assert_string_equal(meta, NX_PARQUET_EMPTY_CREATED_BY "|0|0|");
		tables++;
		free(meta);
		free(got);
		free(n);
		free(sql);
		nx_strbuf_release(&want);
		free(path);
	}
	assert_true(tables > 40);
}

static void test_cannot_create(void **state)
{
	struct fx *f = *state;
	struct nx_err err = { 0 };
	const struct nx_table *t = nx_schema_table("Instruction");
	char *path = nx_xasprintf("%s/no/such/dir/Instruction.parquet", f->dir);

	assert_non_null(t);
	assert_int_equal(nx_parquet_write_empty(t, path, &err), -ENOENT);
	assert_non_null(strstr(err.msg, path));
	assert_false(nx_is_file(path));
	/* a directory in the way */
	free(path);
	path = nx_xasprintf("%s/adir", f->dir);
	assert_int_equal(nx_mkdirs(path, &err), 0);
	assert_int_equal(nx_parquet_write_empty(t, path, &err), -EISDIR);
	assert_non_null(strstr(err.msg, path));
	assert_true(nx_is_dir(path));
	free(path);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_bytes_match_duckdb, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_written_file_reads, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_cannot_create, fx_setup, fx_teardown),
	};
	return nx_test_done(cmocka_run_group_tests(tests, NULL, NULL));
}
