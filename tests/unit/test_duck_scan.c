/* SPDX-License-Identifier: MIT
 * test_duck_scan.c: a query's result streamed to C (db/duck.h, nx_duck_scan and the
 * cursors) and rows appended to a table, on a real DuckDB: every cell of a result of
 * several chunks with NULLs of each read type, in order; two cursors read in step on
 * the database's two connections while an appender writes; the appended rows read back.
 * Bad input: bad SQL, a column of a type the scan does not read, a callback that stops
 * the scan, an appender on a missing table and a row of the wrong shape each give an
 * error naming what failed, never a crash, and the table keeps only whole rows. The typed
 * appender (rows buffered in chunks DuckDB casts): several chunks of every kind, NULLs
 * and an ENUM column read back as appended; a cell of another kind than its column's, a
 * cell too many, a cell too few and a text that is no value of the ENUM each fail with
 * the table named. Its commits: after an alignment to the rows a table holds, each commit
 * makes visible the rows up to the table's last whole vector, in order, the rest at the
 * close; a plain appender refuses to commit so. */
#include "common/compat.h"
#include "db/duck.h"
#include "helper/asserts.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#define ROWS 5000 /* several of DuckDB's 2048-row chunks (the table below has 5000) */

static const char MAKE_T[] =
	"CREATE TABLE t AS SELECT range AS i, (range * 0.5)::DOUBLE AS f,\n"
	"    CASE WHEN range % 3 = 0 THEN NULL ELSE 'v' || range END AS s,\n"
	"    range % 2 = 0 AS b,\n"
	"    CASE WHEN range % 7 = 0 THEN NULL ELSE range::INTEGER END AS i32,\n"
	"    (range * 0.25)::FLOAT AS r\n"
	"FROM range(5000)";

static struct nx_duck *open_db(void)
{
	struct nx_duck *d = NULL;
	struct nx_err err = { 0 };

	if (nx_duck_open(&d, 1, NULL, &err) || nx_duck_exec(d, MAKE_T, &err))
		fail_msg("%s", err.msg);
	return d;
}

struct seen {
	int64_t rows;
	int64_t chunks;
};

static int check_chunk(void *arg, const struct nx_dchunk *c, struct nx_err *err)
{
	struct seen *s = arg;

	(void)err;
	s->chunks++;
	for (size_t r = 0; r < nx_dchunk_rows(c); r++, s->rows++) {
		int64_t i, b, i32;
		double f, fl;
		const char *str;
		size_t len;
		char want[32];

		assert_true(nx_dchunk_i64(c, 0, r, &i));
		assert_int_equal(i, s->rows); /* in order */
		assert_true(nx_dchunk_f64(c, 1, r, &f));
		NX_ASSERT_CMP(f, ==, i * 0.5);
		if (i % 3 == 0) {
			assert_false(nx_dchunk_str(c, 2, r, &str, &len));
		} else {
			assert_true(nx_dchunk_str(c, 2, r, &str, &len));
			snprintf(want, sizeof(want), "v%lld", (long long)i);
			assert_int_equal(len, strlen(want));
			assert_memory_equal(str, want, len);
		}
		assert_true(nx_dchunk_i64(c, 3, r, &b));
		assert_int_equal(b, i % 2 == 0);
		assert_int_equal(nx_dchunk_i64(c, 4, r, &i32), i % 7 != 0);
		if (i % 7)
			assert_int_equal(i32, i);
		assert_true(nx_dchunk_f64(c, 5, r, &fl));
		NX_ASSERT_CMP(fl, ==, i * 0.25);
		/* the wrong accessor for a column reads nothing */
		assert_false(nx_dchunk_str(c, 0, r, &str, &len));
		assert_false(nx_dchunk_f64(c, 0, r, &f));
		assert_false(nx_dchunk_i64(c, 1, r, &i));
	}
	return 0;
}

static void test_scan_reads_every_cell(void **state)
{
	struct nx_duck *d = open_db();
	struct seen s = { 0 };
	struct nx_err err = { 0 };

	(void)state;
	if (nx_duck_scan(d, "SELECT i, f, s, b, i32, r FROM t ORDER BY i", check_chunk, &s, &err))
		fail_msg("%s", err.msg);
	assert_int_equal(s.rows, ROWS);
	NX_ASSERT_CMP(s.chunks, >=, 3);
	nx_duck_close(d);
}

/* Two cursors in step and an appender writing meanwhile: the pass of the analysis that
 * reads Instruction beside Flow and writes rx_Edge as it goes. */
static void test_cursors_in_step_with_appender(void **state)
{
	struct nx_duck *d = open_db();
	struct nx_duck_cursor *a = NULL, *b = NULL;
	struct nx_duck_appender *app = NULL;
	const struct nx_dchunk *ca = NULL, *cb = NULL;
	struct nx_err err = { 0 };
	int64_t n = 0, sum = 0, v;

	(void)state;
	if (nx_duck_exec(d, "CREATE TABLE out (i BIGINT, s VARCHAR, b BOOLEAN, f DOUBLE)", &err) ||
	    nx_duck_cursor_open(d, "SELECT i FROM t ORDER BY i", false, &a, &err) ||
	    nx_duck_cursor_open(d, "SELECT i * 2 FROM t ORDER BY i", true, &b, &err) ||
	    nx_duck_appender_open(d, "out", &app, &err))
		fail_msg("%s", err.msg);
	for (;;) {
		if (nx_duck_cursor_next(a, &ca, &err) || nx_duck_cursor_next(b, &cb, &err))
			fail_msg("%s", err.msg);
		if (!ca || !cb)
			break;
		assert_int_equal(nx_dchunk_rows(ca), nx_dchunk_rows(cb));
		for (size_t r = 0; r < nx_dchunk_rows(ca); r++, n++) {
			int64_t x, y;
			assert_true(nx_dchunk_i64(ca, 0, r, &x));
			assert_true(nx_dchunk_i64(cb, 0, r, &y));
			assert_int_equal(y, 2 * x);
			nx_duck_append_i64(app, x);
			nx_duck_append_str(app, x % 2 ? "odd" : NULL, 3);
			nx_duck_append_bool(app, x % 2);
			if (x % 5)
				nx_duck_append_f64(app, (double)x);
			else
				nx_duck_append_null(app);
			if (nx_duck_append_end_row(app, &err))
				fail_msg("%s", err.msg);
		}
	}
	assert_null(ca);
	assert_null(cb);
	assert_int_equal(n, ROWS);
	nx_duck_cursor_close(a);
	nx_duck_cursor_close(b);
	if (nx_duck_appender_close(app, &err))
		fail_msg("%s", err.msg);
	if (nx_duck_query_i64(d, "SELECT count(*) FROM out WHERE s IS NULL", &v, &err))
		fail_msg("%s", err.msg);
	assert_int_equal(v, ROWS / 2);
	if (nx_duck_query_i64(d, "SELECT count(f) FROM out", &v, &err))
		fail_msg("%s", err.msg);
	assert_int_equal(v, ROWS - ROWS / 5);
	if (nx_duck_query_i64(d, "SELECT sum(i) FROM out WHERE b AND s = 'odd'", &sum, &err))
		fail_msg("%s", err.msg);
	assert_int_equal(sum, (int64_t)(ROWS / 2) * (ROWS / 2)); /* 1 + 3 + ... */
	nx_duck_close(d);
}

static int stop_at_second(void *arg, const struct nx_dchunk *c, struct nx_err *err)
{
	int *calls = arg;

	(void)c;
	if (++*calls == 2)
		return nx_errf(err, NX_EUSAGE, "stopped by the callback");
	return 0;
}

static void test_bad_input(void **state)
{
	struct nx_duck *d = open_db();
	struct nx_duck_appender *app = NULL;
	struct nx_duck_cursor *c = NULL;
	struct nx_err err = { 0 };
	struct seen s = { 0 };
	int calls = 0;
	int64_t v;

	(void)state;
	assert_int_not_equal(nx_duck_scan(d, "SELEC i FROM t", check_chunk, &s, &err), 0);
	assert_non_null(strstr(err.msg, "syntax error"));
	memset(&err, 0, sizeof(err));
	assert_int_not_equal(nx_duck_cursor_open(d, "SELECT nope FROM t", false, &c, &err), 0);
	assert_null(c);
	assert_non_null(strstr(err.msg, "nope"));
	memset(&err, 0, sizeof(err));
	assert_int_not_equal(nx_duck_scan(d, "SELECT DATE '2026-01-01' AS day FROM t",
					  check_chunk, &s, &err), 0);
	assert_non_null(strstr(err.msg, "'day'"));
	assert_int_equal(s.rows, 0);
	memset(&err, 0, sizeof(err));
	assert_int_equal(nx_duck_scan(d, "SELECT i FROM t", stop_at_second, &calls, &err),
			 NX_EUSAGE);
	assert_int_equal(calls, 2);
	assert_string_equal(err.msg, "stopped by the callback");
	/* the connection still works after a stopped scan */
	if (nx_duck_query_i64(d, "SELECT count(*) FROM t", &v, &err))
		fail_msg("%s", err.msg);
	assert_int_equal(v, ROWS);

	memset(&err, 0, sizeof(err));
	assert_int_not_equal(nx_duck_appender_open(d, "missing", &app, &err), 0);
	assert_null(app);
	assert_non_null(strstr(err.msg, "missing"));
	/* a row with too few cells is refused at its end; the whole rows before it stay */
	memset(&err, 0, sizeof(err));
	if (nx_duck_exec(d, "CREATE TABLE two (a BIGINT, b BIGINT)", &err) ||
	    nx_duck_appender_open(d, "two", &app, &err))
		fail_msg("%s", err.msg);
	nx_duck_append_i64(app, 1);
	nx_duck_append_i64(app, 2);
	if (nx_duck_append_end_row(app, &err))
		fail_msg("%s", err.msg);
	nx_duck_append_i64(app, 3);
	assert_int_not_equal(nx_duck_append_end_row(app, &err), 0);
	assert_non_null(strstr(err.msg, "two"));
	memset(&err, 0, sizeof(err));
	nx_duck_appender_close(app, &err);
	if (nx_duck_query_i64(d, "SELECT count(*) FROM two WHERE b IS NOT NULL", &v, &err))
		fail_msg("%s", err.msg);
	NX_ASSERT_CMP(v, <=, 1);
	if (nx_duck_query_i64(d, "SELECT count(*) FROM two WHERE b IS NULL", &v, &err))
		fail_msg("%s", err.msg);
	assert_int_equal(v, 0);
	nx_duck_close(d);
}

/* A table of every kind the typed appender takes, an ENUM among them. */
static struct nx_duck *typed_db(struct nx_duck_appender **app)
{
	static const enum nx_cell_kind kinds[] = { NX_CELL_INT, NX_CELL_TEXT, NX_CELL_FLOAT,
						   NX_CELL_BOOL, NX_CELL_TEXT };
	struct nx_err err = { 0 };
	struct nx_duck *d = NULL;

	if (nx_duck_open(&d, 1, "64MB", &err) ||
	    nx_duck_exec(d, "CREATE TYPE abc AS ENUM ('a', 'b', 'c'); CREATE TABLE k (i BIGINT, "
			    "e abc, f DOUBLE, b BOOLEAN, s VARCHAR)", &err) ||
	    nx_duck_appender_open_typed(d, "k", kinds, NX_ARRAY_SIZE(kinds), app, &err))
		fail_msg("%s", err.msg);
	return d;
}

static void test_typed_appender(void **state)
{
	static const char *const abc[] = { "a", "b", "c" };
	struct nx_duck_appender *app = NULL;
	struct nx_err err = { 0 };
	struct nx_duck *d = typed_db(&app);
	char text[32];
	int64_t v = 0;

	(void)state;
	for (int i = 0; i < ROWS; i++) {
		nx_duck_append_i64(app, i);
		if (i % 7 == 0)
			nx_duck_append_null(app);
		else
			nx_duck_append_str(app, abc[i % 3], 1);
		nx_duck_append_f64(app, i / 4.0);
		nx_duck_append_bool(app, i % 2);
		snprintf(text, sizeof(text), "row %d", i);
		nx_duck_append_str(app, i % 5 ? text : NULL, strlen(text));
		if (nx_duck_append_end_row(app, &err))
			fail_msg("%s", err.msg);
	}
	if (nx_duck_appender_close(app, &err))
		fail_msg("%s", err.msg);
	/* every cell as appended, in order */
	if (nx_duck_query_i64(d, "SELECT count(*) FROM (SELECT rowid AS r, * FROM k) WHERE i = r "
			      "AND (e IS NULL) = (i % 7 = 0) AND (i % 7 = 0 OR e::VARCHAR = "
			      "['a', 'b', 'c'][i % 3 + 1]) AND f = i / 4 AND b = (i % 2 = 1) AND "
			      "(s IS NULL) = (i % 5 = 0) AND (i % 5 = 0 OR s = 'row ' || i)", &v, &err))
		fail_msg("%s", err.msg);
	assert_int_equal(v, ROWS);
	nx_duck_close(d);
}

static void test_typed_appender_bad_rows(void **state)
{
	struct nx_duck_appender *app = NULL;
	struct nx_err err = { 0 };
	struct nx_duck *d;

	(void)state;
	for (int k = 0; k < 4; k++) {
		d = typed_db(&app);
		memset(&err, 0, sizeof(err));
		nx_duck_append_i64(app, 1);
		nx_duck_append_str(app, k == 3 ? "z" : "a", 1); /* z: no value of abc */
		if (k == 0)
			nx_duck_append_i64(app, 2); /* a BIGINT where a DOUBLE goes */
		else
			nx_duck_append_f64(app, 2.0);
		nx_duck_append_bool(app, true);
		if (k != 2) /* 2: a cell too few */
			nx_duck_append_str(app, "x", 1);
		if (k == 1) /* a cell too many */
			nx_duck_append_str(app, "y", 1);
		if (k < 3) {
			assert_int_not_equal(nx_duck_append_end_row(app, &err), 0);
			assert_non_null(strstr(err.msg, "cannot append a row to k"));
			memset(&err, 0, sizeof(err));
			nx_duck_appender_close(app, &err);
		} else {
			/* the cast fails when the chunk is appended: at close here */
			if (nx_duck_append_end_row(app, &err))
				fail_msg("%s", err.msg);
			assert_int_not_equal(nx_duck_appender_close(app, &err), 0);
			assert_non_null(strstr(err.msg, "k"));
		}
		nx_duck_close(d);
	}
}

static int64_t count_of(struct nx_duck *d, const char *sql)
{
	struct nx_err err = { 0 };
	int64_t n = -1;

	if (nx_duck_query_i64(d, sql, &n, &err))
		fail_msg("%s", err.msg);
	return n;
}

static void append_range(struct nx_duck_appender *app, int64_t from, int64_t to)
{
	struct nx_err err = { 0 };

	for (int64_t i = from; i < to; i++) {
		nx_duck_append_i64(app, i);
		if (nx_duck_append_end_row(app, &err))
			fail_msg("%s", err.msg);
	}
}

static void test_typed_appender_commits(void **state)
{
	static const enum nx_cell_kind kinds[] = { NX_CELL_INT };
	struct nx_duck_appender *app = NULL;
	struct nx_err err = { 0 };
	struct nx_duck *d = NULL;

	(void)state;
	if (nx_duck_open(&d, 1, NULL, &err) ||
	    nx_duck_exec(d, "CREATE TABLE c AS SELECT range - 100 AS i FROM range(100)", &err) ||
	    nx_duck_appender_open_typed(d, "c", kinds, 1, &app, &err))
		fail_msg("%s", err.msg);
	nx_duck_appender_align(app, 100);
	append_range(app, 0, 3000);
	if (nx_duck_appender_commit(app, &err))
		fail_msg("%s", err.msg);
	/* 100 rows, then a first chunk of 1948 to the vector's end: 2048 in the table */
	assert_int_equal(count_of(d, "SELECT count(*) FROM c"), 2048);
	append_range(app, 3000, 5000);
	if (nx_duck_appender_commit(app, &err))
		fail_msg("%s", err.msg);
	assert_int_equal(count_of(d, "SELECT count(*) FROM c"), 4096);
	if (nx_duck_appender_close(app, &err))
		fail_msg("%s", err.msg);
	assert_int_equal(count_of(d, "SELECT count(*) FROM c"), 5100);
	/* in order: row id r holds r - 100 */
	assert_int_equal(count_of(d, "SELECT count(*) FROM c WHERE i <> rowid - 100"), 0);

	if (nx_duck_appender_open(d, "c", &app, &err))
		fail_msg("%s", err.msg);
	assert_int_not_equal(nx_duck_appender_commit(app, &err), 0);
	assert_non_null(strstr(err.msg, "appending to c"));
	memset(&err, 0, sizeof(err));
	if (nx_duck_appender_close(app, &err))
		fail_msg("%s", err.msg);
	nx_duck_close(d);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_scan_reads_every_cell),
		cmocka_unit_test(test_cursors_in_step_with_appender),
		cmocka_unit_test(test_bad_input),
		cmocka_unit_test(test_typed_appender),
		cmocka_unit_test(test_typed_appender_bad_rows),
		cmocka_unit_test(test_typed_appender_commits),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
