/* SPDX-License-Identifier: MIT
 * test_server_stmt_cache.c: a connection's prepared statements (server/stmt_cache.h) on
 * a real DuckDB connection: a statement comes back for its exact text only and runs
 * again with the same result, until it is retired after NX_STMT_CACHE_USES lookups; a
 * ninth statement evicts the least recently used; a
 * dropped entry is gone; a statement too long to keep stays the caller's; the process
 * keeps no more than NX_STMT_CACHE_TOTAL statements over all caches. Then through
 * the real server: repeated queries, a query that fails while running (its statement
 * leaves the cache) and refused statements (never cached) answer the same every time. */
#include "common/compat.h"
#include "server/stmt_cache.h"
#include "server/server.h"
#include "helper/server_fixture.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include <jansson.h>

static duckdb_database db;
static duckdb_connection con;

static duckdb_prepared_statement prep(const char *sql)
{
	duckdb_prepared_statement ps;

	assert_int_equal(duckdb_prepare(con, sql, &ps), DuckDBSuccess);
	return ps;
}

/* Runs ps and returns its single BIGINT value. */
static int64_t run(duckdb_prepared_statement ps)
{
	duckdb_result res;
	int64_t v;

	assert_int_equal(duckdb_execute_prepared(ps, &res), DuckDBSuccess);
	v = duckdb_value_int64(&res, 0, 0);
	duckdb_destroy_result(&res);
	return v;
}

static int db_setup(void **state)
{
	(void)state;
	if (duckdb_open(NULL, &db) == DuckDBError || duckdb_connect(db, &con) == DuckDBError)
		return -1;
	return 0;
}

static int db_teardown(void **state)
{
	(void)state;
	duckdb_disconnect(&con);
	duckdb_close(&db);
	return 0;
}

static struct nx_stmt_tag tag; /* what a lookup returns */
static const struct nx_stmt_tag none;

static void test_get_put(void **state)
{
	struct nx_stmt_cache c = { 0 };
	duckdb_prepared_statement ps = prep("SELECT 41 + 1");

	(void)state;
	assert_null(nx__stmt_cache_get(&c, "SELECT 41 + 1", &tag));
	assert_true(nx__stmt_cache_put(&c, "SELECT 41 + 1", ps,
				       (struct nx_stmt_tag){ .reads = 0x5, .copies = 2 }));
	assert_ptr_equal(nx__stmt_cache_get(&c, "SELECT 41 + 1", &tag), ps);
	assert_int_equal(tag.reads, 0x5); /* the tag it was kept with */
	assert_int_equal(tag.copies, 2);
	assert_null(nx__stmt_cache_get(&c, "SELECT 41 + 1 ", &tag)); /* exact text only */
	assert_null(nx__stmt_cache_get(&c, "select 41 + 1", &tag));
	assert_int_equal(run(nx__stmt_cache_get(&c, "SELECT 41 + 1", &tag)), 42);
	assert_int_equal(run(nx__stmt_cache_get(&c, "SELECT 41 + 1", &tag)), 42);
	nx__stmt_cache_clear(&c);
	assert_null(nx__stmt_cache_get(&c, "SELECT 41 + 1", &tag));
}

/* A statement is retired after NX_STMT_CACHE_USES lookups, and can be kept again. */
static void test_retired_after_uses(void **state)
{
	struct nx_stmt_cache c = { 0 };
	int before = nx__stmt_cache_total();

	(void)state;
	assert_true(nx__stmt_cache_put(&c, "SELECT 5", prep("SELECT 5"), none));
	for (int i = 0; i < NX_STMT_CACHE_USES; i++)
		assert_int_equal(run(nx__stmt_cache_get(&c, "SELECT 5", &tag)), 5);
	assert_null(nx__stmt_cache_get(&c, "SELECT 5", &tag));
	assert_int_equal(nx__stmt_cache_total(), before);
	assert_true(nx__stmt_cache_put(&c, "SELECT 5", prep("SELECT 5"), none));
	assert_int_equal(run(nx__stmt_cache_get(&c, "SELECT 5", &tag)), 5);
	nx__stmt_cache_clear(&c);
	assert_int_equal(nx__stmt_cache_total(), before);
}

static void test_evicts_least_recent(void **state)
{
	struct nx_stmt_cache c = { 0 };
	char sql[64];

	(void)state;
	for (int i = 0; i < NX_STMT_CACHE_SIZE; i++) {
		snprintf(sql, sizeof(sql), "SELECT %d", i);
		assert_true(nx__stmt_cache_put(&c, sql, prep(sql), none));
	}
	/* 0 is used again, so 1 is now the least recent and goes for the ninth. */
	assert_non_null(nx__stmt_cache_get(&c, "SELECT 0", &tag));
	assert_true(nx__stmt_cache_put(&c, "SELECT 100", prep("SELECT 100"), none));
	assert_null(nx__stmt_cache_get(&c, "SELECT 1", &tag));
	for (int i = 0; i < NX_STMT_CACHE_SIZE; i++) {
		snprintf(sql, sizeof(sql), "SELECT %d", i);
		if (i != 1)
			assert_int_equal(run(nx__stmt_cache_get(&c, sql, &tag)), i);
	}
	assert_int_equal(run(nx__stmt_cache_get(&c, "SELECT 100", &tag)), 100);
	nx__stmt_cache_clear(&c);
}

static void test_drop_and_too_long(void **state)
{
	struct nx_stmt_cache c = { 0 };
	duckdb_prepared_statement a = prep("SELECT 1"), b = prep("SELECT 2");
	size_t n = NX_STMT_CACHE_SQL_MAX + 100;
	char *big = malloc(n + 1);

	(void)state;
	assert_true(nx__stmt_cache_put(&c, "SELECT 1", a, none));
	assert_true(nx__stmt_cache_put(&c, "SELECT 2", b, none));
	nx__stmt_cache_drop(&c, a);
	assert_null(nx__stmt_cache_get(&c, "SELECT 1", &tag));
	assert_ptr_equal(nx__stmt_cache_get(&c, "SELECT 2", &tag), b);
	/* SELECT 3 followed by spaces: valid SQL, longer than the cache keeps. */
	memset(big, ' ', n);
	memcpy(big, "SELECT 3", 8);
	big[n] = '\0';
	duckdb_prepared_statement p = prep(big);
	assert_false(nx__stmt_cache_put(&c, big, p, none));
	assert_null(nx__stmt_cache_get(&c, big, &tag));
	assert_int_equal(run(p), 3);
	duckdb_destroy_prepare(&p);
	free(big);
	nx__stmt_cache_clear(&c);
}

static void test_process_cap(void **state)
{
	enum { NCACHE = NX_STMT_CACHE_TOTAL / NX_STMT_CACHE_SIZE + 2 };
	static struct nx_stmt_cache c[NCACHE];
	int kept = 0, refused = 0;
	char sql[64];

	(void)state;
	assert_int_equal(nx__stmt_cache_total(), 0);
	for (int k = 0; k < NCACHE; k++) {
		for (int i = 0; i < NX_STMT_CACHE_SIZE; i++) {
			duckdb_prepared_statement ps;

			snprintf(sql, sizeof(sql), "SELECT %d", k * 100 + i);
			ps = prep(sql);
			if (nx__stmt_cache_put(&c[k], sql, ps, none)) {
				kept++;
			} else {
				refused++;
				duckdb_destroy_prepare(&ps);
			}
		}
	}
	assert_int_equal(kept, NX_STMT_CACHE_TOTAL);
	assert_int_equal(refused, NCACHE * NX_STMT_CACHE_SIZE - NX_STMT_CACHE_TOTAL);
	assert_int_equal(nx__stmt_cache_total(), NX_STMT_CACHE_TOTAL);
	/* A full cache still swaps its oldest entry for a new one. */
	assert_true(nx__stmt_cache_put(&c[0], "SELECT 7777", prep("SELECT 7777"), none));
	assert_int_equal(run(nx__stmt_cache_get(&c[0], "SELECT 7777", &tag)), 7777);
	assert_int_equal(nx__stmt_cache_total(), NX_STMT_CACHE_TOTAL);
	nx__stmt_cache_clear(&c[1]);
	assert_int_equal(nx__stmt_cache_total(), NX_STMT_CACHE_TOTAL - NX_STMT_CACHE_SIZE);
	for (int k = 0; k < NCACHE; k++)
		nx__stmt_cache_clear(&c[k]);
	assert_int_equal(nx__stmt_cache_total(), 0);
}

/* The same through the server. */
static json_t *query(unsigned port, const char *sql, int *status)
{
	json_t *j = nx_sfx_query(port, "k", sql, status);

	assert_non_null(j);
	return j;
}

static void test_through_server(void **state)
{
	char *dir = nx_sfx_tmpdir("stmtcache");
	struct nx_server_opts o;
	struct nx_server *srv;
	unsigned port;
	int status;
	json_t *first = NULL, *j;
	char sql[128];

	(void)state;
	assert_non_null(dir);
	assert_int_equal(nx_sfx_make_profile(dir, "k", 500), 0);
	nx_sfx_opts(&o, dir);
	assert_non_null(srv = nx_sfx_start(&o, &port));
	for (int i = 0; i < 4; i++) {
		j = query(port, "SELECT opcode, COUNT(*) AS n FROM Instruction GROUP BY opcode "
				"ORDER BY opcode", &status);
		assert_int_equal(status, 200);
		if (!first)
			first = json_incref(json_object_get(j, "rows"));
		else
			assert_true(json_equal(first, json_object_get(j, "rows")));
		json_decref(j);
	}
	assert_true(nx__stmt_cache_total() > 0); /* the server kept it */
	/* More distinct statements than a connection keeps, then the first again. */
	for (int i = 0; i < 2 * NX_STMT_CACHE_SIZE; i++) {
		snprintf(sql, sizeof(sql), "SELECT COUNT(*) + %d AS n FROM Instruction", i);
		j = query(port, sql, &status);
		assert_int_equal(status, 200);
		json_decref(j);
	}
	j = query(port, "SELECT opcode, COUNT(*) AS n FROM Instruction GROUP BY opcode "
			"ORDER BY opcode", &status);
	assert_true(json_equal(first, json_object_get(j, "rows")));
	json_decref(j);
	/* Prepared fine, fails while running: the same error each time. */
	for (int i = 0; i < 3; i++) {
		j = query(port, "SELECT error('boom ' || range) FROM range(3)", &status);
		char *text = json_dumps(j, 0);
		assert_int_equal(status, 400);
		assert_non_null(strstr(text, "boom"));
		free(text);
		json_decref(j);
	}
	/* Refused every time: a refused statement is never kept. */
	for (int i = 0; i < 3; i++) {
		j = query(port, "CREATE TABLE t AS SELECT 1", &status);
		assert_int_equal(status, 403);
		json_decref(j);
	}
	j = query(port, "SELECT 42 AS n", &status);
	assert_int_equal(status, 200);
	json_decref(j);
	json_decref(first);
	nx_server_stop(srv);
	assert_int_equal(nx__stmt_cache_total(), 0); /* all released with their connections */
	free(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_get_put, db_setup, db_teardown),
		cmocka_unit_test_setup_teardown(test_retired_after_uses, db_setup, db_teardown),
		cmocka_unit_test_setup_teardown(test_evicts_least_recent, db_setup, db_teardown),
		cmocka_unit_test_setup_teardown(test_drop_and_too_long, db_setup, db_teardown),
		cmocka_unit_test_setup_teardown(test_process_cap, db_setup, db_teardown),
		cmocka_unit_test(test_through_server),
	};

	return nx_test_done(cmocka_run_group_tests(tests, NULL, NULL));
}
