/* SPDX-License-Identifier: MIT
 * test_server_sandbox.c: the query sandbox seen from a client. A corpus of
 * hostile statements must all be refused while the server keeps serving; a
 * runaway query must hit the timeout; oversized results must be cut. The server
 * runs with small limits so the tests are quick. */
#include "common/compat.h"
#include "server/server.h"
#include "db/duck.h"
#include "helper/http_client.h"
#include "helper/server_fixture.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

#include "helper/asserts.h"
#include <jansson.h>
#include <pthread.h>

static char *data_dir;
static struct nx_server *srv;
static unsigned port;

static int setup(void **state)
{
	struct nx_server_opts o;

	(void)state;
	data_dir = nx_sfx_tmpdir("sandbox");
	if (!data_dir || nx_sfx_make_profile(data_dir, "k", 2000) ||
	    nx_sfx_make_profile(data_dir, "other", 10))
		return -1;
	nx_sfx_opts(&o, data_dir);
	o.query_timeout_ms = 1500;
	o.max_result_rows = 500;
	o.max_result_bytes = 20000;
	if (!(srv = nx_sfx_start(&o, &port)))
		return -1;
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	nx_server_stop(srv);
	free(data_dir);
	return 0;
}

/* Sends one query for profile k; returns the parsed reply and its status. */
static json_t *query(const char *sql, int *status)
{
	json_t *j = nx_sfx_query(port, "k", sql, status);

	assert_non_null(j);
	return j;
}

static const char *error_code(json_t *j)
{
	return json_string_value(json_object_get(json_object_get(j, "error"), "code"));
}

static void test_hostile_corpus(void **state)
{
	char *sibling = NULL;
	static const char *const corpus[] = {
		"COPY (SELECT * FROM Instruction) TO '/tmp/nx-stolen.csv'",
		"COPY Summary TO 'Summary_copy.parquet' (FORMAT parquet)",
		"SELECT * FROM read_csv('/etc/passwd')",
		"SELECT * FROM read_csv_auto('/etc/passwd')",
		"SELECT * FROM read_text('/etc/hostname')",
		"SELECT * FROM read_blob('/etc/passwd')",
		"SELECT * FROM read_parquet('../other@latest/Summary.parquet')",
		"SELECT * FROM read_json('/proc/self/environ')",
		"SELECT * FROM glob('/*')",
		"SELECT * FROM sniff_csv('/etc/passwd')",
		"SELECT * FROM '/etc/passwd'",
		"ATTACH '/tmp/nx-evil.db' AS evil",
		"ATTACH ':memory:' AS m",
		"DETACH memory",
		"INSTALL httpfs",
		"LOAD httpfs",
		"FORCE INSTALL httpfs FROM 'http://example.invalid'",
		"PRAGMA enable_profiling",
		"PRAGMA threads=1",
		"SET enable_external_access = true",
		"SET allowed_directories = ['/']",
		"RESET lock_configuration",
		"SELECT 1; DROP VIEW Summary",
		"SELECT 1; SELECT 2",
		"DROP VIEW Summary",
		"CREATE TABLE t AS SELECT 1",
		"CREATE VIEW v AS SELECT 1",
		"CREATE MACRO m(x) AS x",
		"CREATE SECRET s (TYPE s3, KEY_ID 'a', SECRET 'b')",
		"INSERT INTO Summary VALUES (1)",
		"EXPORT DATABASE '/tmp/nx-export'",
		"CALL pragma_version()",
		"EXPLAIN ANALYZE SELECT 1",
		"CHECKPOINT",
		"BEGIN TRANSACTION",
		"USE memory",
		"SELECT * FROM query('DROP VIEW Summary')",
		"SELECT * FROM query_table('/etc/passwd')",
	};
	int status;
	json_t *j;

	(void)state;
	NX_ASSERT_CMP(asprintf(&sibling, "SELECT * FROM read_parquet('%s/profiles/global/other@latest/"
				       "Summary.parquet')", data_dir), >, 0);
	for (size_t i = 0; i <= NX_ARRAY_SIZE(corpus); i++) {
		const char *sql = i < NX_ARRAY_SIZE(corpus) ? corpus[i] : sibling;

		j = query(sql, &status);
		if (status < 400 || !error_code(j))
			fail_msg("'%s' was not refused (status %d)", sql, status);
		json_decref(j);
	}
	free(sibling);
	/* Nothing was written and the views are all still there. */
	assert_int_not_equal(access("/tmp/nx-stolen.csv", F_OK), 0);
	j = query("SELECT COUNT(*) FROM Summary", &status);
	assert_int_equal(status, 200);
	json_decref(j);
	j = query("SELECT current_setting('enable_external_access')", &status);
	assert_int_equal(status, 200);
	assert_true(json_is_false(json_array_get(json_array_get(json_object_get(j, "rows"), 0), 0)));
	json_decref(j);
}

static void test_refusal_codes(void **state)
{
	int status;
	json_t *j;

	(void)state;
	j = query("SELECT 1; DROP VIEW Summary", &status);
	assert_int_equal(status, 403);
	assert_string_equal(error_code(j), "query_not_allowed");
	json_decref(j);
	j = query("SELECT * FROM read_csv('/etc/passwd')", &status);
	assert_int_equal(status, 403);
	assert_string_equal(error_code(j), "query_not_allowed");
	json_decref(j);
	j = query("SET threads = 1", &status);
	assert_int_equal(status, 403);
	json_decref(j);
	j = query("   ", &status);
	assert_int_equal(status, 400);
	json_decref(j);
	j = query("SELECT '1'::BIT", &status);
	assert_int_equal(status, 400);
	assert_string_equal(error_code(j), "unsupported_type");
	json_decref(j);
}

static void test_timeout(void **state)
{
	struct timespec t0, t1;
	int status;
	json_t *j;

	(void)state;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	j = query("SELECT COUNT(*) FROM range(1000000000) a, range(1000000000) b", &status);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	assert_int_equal(status, 504);
	assert_string_equal(error_code(j), "query_timeout");
	json_decref(j);
	NX_ASSERT_CMP(t1.tv_sec - t0.tv_sec, <, 20);
	/* Also a query that is still streaming rows when the deadline passes. */
	j = query("SELECT a.range FROM range(100000000) a WHERE a.range * 7 % 1000003 = 0 "
		  "AND hash(a.range) % 2 = 5", &status);
	assert_true(status == 504 || status == 200);
	json_decref(j);
	j = query("SELECT 42", &status);
	assert_int_equal(status, 200);
	json_decref(j);
}

/* What the close hook saw in each DuckDB database the analysis opened. */
static struct {
	pthread_mutex_t lock;
	char *outside; /* a readable file outside every profile directory */
	int closed, external_on, outside_read;
} seen = { .lock = PTHREAD_MUTEX_INITIALIZER };

static void on_duck_close(void *arg, struct nx_duck *d)
{
	struct nx_strbuf sql = NX_STRBUF_INIT;
	struct nx_err err = { 0 };
	int64_t ext = 1, n = 0;
	bool read_ok;

	(void)arg;
	if (nx_duck_query_i64(d, "SELECT current_setting('enable_external_access')::INT", &ext,
			      &err))
		ext = 1;
	nx_strbuf_addstr(&sql, "SELECT count(*) FROM read_text(");
	nx_sql_quote(&sql, seen.outside);
	nx_strbuf_addstr(&sql, ")");
	read_ok = !nx_duck_query_i64(d, sql.buf, &n, &err);
	nx_strbuf_release(&sql);
	pthread_mutex_lock(&seen.lock);
	seen.closed++;
	seen.external_on += ext != 0;
	seen.outside_read += read_ok;
	pthread_mutex_unlock(&seen.lock);
}

/* GET .../analysis runs our own SQL, yet in the same sandbox as _search: the databases
 * it opens have external access off and cannot read a file outside the profile. */
static void test_analysis_sandboxed(void **state)
{
	struct nx_http_resp r;
	json_t *j;
	FILE *f;

	(void)state;
	NX_ASSERT_CMP(asprintf(&seen.outside, "%s/outside.txt", data_dir), >, 0);
	f = fopen(seen.outside, "w");
	assert_non_null(f);
	fputs("secret\n", f);
	fclose(f);
	nx__duck_set_close_hook(on_duck_close, NULL);
	assert_int_equal(nx_http_get(port, "/api/v1/profiles/namespace/global/profile_name/k/"
				     "analysis?compare=other", &r), 0);
	nx__duck_set_close_hook(NULL, NULL);
	if (r.status != 200)
		fail_msg("analysis answered %d: %.300s", r.status, r.body);
	j = json_loads(r.body, 0, NULL);
	assert_non_null(j);
	assert_string_equal(json_string_value(json_object_get(j, "kind")), "recommend_compare");
	json_decref(j);
	nx_http_resp_free(&r);
	assert_int_equal(seen.closed, 2); /* one database per compared profile */
	assert_int_equal(seen.external_on, 0);
	assert_int_equal(seen.outside_read, 0);
	free(seen.outside);
}

static void test_caps(void **state)
{
	int status;
	json_t *j;

	(void)state;
	j = query("SELECT * FROM range(100000)", &status);
	assert_int_equal(status, 200);
	assert_true(json_is_true(json_object_get(j, "truncated")));
	assert_int_equal(json_integer_value(json_object_get(j, "row_count")), 500);
	assert_int_equal(json_array_size(json_object_get(j, "rows")), 500);
	assert_non_null(strstr(json_string_value(json_object_get(j, "message")), "500-row"));
	json_decref(j);
	j = query("SELECT repeat('x', 1000) FROM range(100)", &status);
	assert_int_equal(status, 200);
	assert_true(json_is_true(json_object_get(j, "truncated")));
	NX_ASSERT_CMP(json_array_size(json_object_get(j, "rows")), <, 20);
	assert_non_null(strstr(json_string_value(json_object_get(j, "message")), "byte"));
	json_decref(j);
	j = query("SELECT * FROM range(500)", &status);
	assert_false(json_is_true(json_object_get(j, "truncated")));
	assert_int_equal(json_integer_value(json_object_get(j, "row_count")), 500);
	json_decref(j);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_hostile_corpus),
		cmocka_unit_test(test_refusal_codes),
		cmocka_unit_test(test_timeout),
		cmocka_unit_test(test_caps),
		cmocka_unit_test(test_analysis_sandboxed),
	};

	return cmocka_run_group_tests_name("server_sandbox", tests, setup, teardown);
}
