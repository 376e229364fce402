/* SPDX-License-Identifier: MIT
 * test_lod_encoding.c: how the timeline cache's events part turns the events' text into
 * its ENUM types (server/lod_build.c, db/duck_enum.c), on real parquet and real DuckDB:
 *   - nx_duck_enum_function gives what the cast to its ENUM gives, on a parquet column
 *     read through its dictionary pages, on plain text, on NULLs, on an ENUM of more
 *     than 255 values (two-byte codes); text that is none of the values fails the query;
 *     a type that is no ENUM is refused;
 *   - the cache built with the function (the default) and with the cast
 *     (NX_LOD_ENUM_CAST=1) holds the same tables, every row at the same row id, with the
 *     same column types;
 *   - NX_LOD_ENUM_CAST other than 0 or 1 is a usage error naming it, and leaves nothing. */
#include "common/compat.h"
#include "server/lod_carried.h"
#include "db/duck.h"
#include "helper/asserts.h"
#include "helper/fixture.h"
#include "helper/lod_pair.h"
#include "helper/profile_db.h"
#include "helper/server_fixture.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

static void test_enum_function_is_the_cast(void **state)
{
	struct nx_duck *d = NULL;
	struct nx_err err = { 0 };
	char *pq = NULL;

	(void)state;
	assert_true(asprintf(&pq, "%s/text.parquet", nx_lod_root) > 0);
	assert_ok(nx_duck_open(&d, 1, NULL, &err), &err);
	/* a column of 300 values in dictionary pages, NULLs among them */
	nx_test_exf(d, "COPY (SELECT CASE WHEN i %% 17 = 0 THEN NULL ELSE 'v' || (i * 7 %% 300) "
		       "END AS s, i FROM range(50000) t(i)) TO '%s' (FORMAT parquet, "
		       "ROW_GROUP_SIZE 4096)", pq);
	assert_true(nx_test_qi(d, "SELECT count(*) FROM parquet_metadata('%s') WHERE "
				  "path_in_schema = 's' AND dictionary_page_offset IS NOT NULL", pq) > 1);
	nx_test_exf(d, "CREATE TYPE wide AS ENUM (SELECT DISTINCT s FROM '%s' WHERE s IS NOT "
		       "NULL ORDER BY 1)", pq);
	nx_test_exf(d, "CREATE TYPE narrow AS ENUM ('a', 'bb', 'a longer value than twelve')");
	assert_ok(nx_duck_enum_function(d, "to_wide", "wide", &err), &err);
	assert_ok(nx_duck_enum_function(d, "to_narrow", "narrow", &err), &err);
	/* through the dictionary, and flat (the text made by an expression) */
	nx_test_exf(d, "CREATE TABLE f AS SELECT i, to_wide(s) AS e, to_wide(s || '') AS g "
		       "FROM '%s'", pq);
	nx_test_exf(d, "CREATE TABLE c AS SELECT i, s::wide AS e, s::wide AS g FROM '%s'", pq);
	assert_int_equal(nx_test_qi(d, "SELECT count(*) FROM (SELECT * FROM f EXCEPT ALL "
				       "SELECT * FROM c)"), 0);
	assert_int_equal(nx_test_qi(d, "SELECT count(*) FROM (SELECT * FROM c EXCEPT ALL "
				       "SELECT * FROM f)"), 0);
	assert_int_equal(nx_test_qi(d, "SELECT count(*) FROM f WHERE e IS NULL"),
			 nx_test_qi(d, "SELECT count(*) FROM range(50000) t(i) WHERE i %% 17 = 0"));
	assert_int_equal(nx_test_qi(d, "SELECT count(*) FROM f WHERE e::VARCHAR = 'v' || "
				       "(i * 7 %% 300)"),
			 nx_test_qi(d, "SELECT count(*) FROM f WHERE e IS NOT NULL"));
	assert_int_equal(nx_test_qi(d, "SELECT count(*) FROM (SELECT typeof(to_wide('v1')) = "
				       "typeof('v1'::wide) AS same) WHERE same"), 1);
	assert_int_equal(nx_test_qi(d, "SELECT enum_code(to_narrow('a longer value than "
				       "twelve'))"), 2);
	assert_int_equal(nx_test_qi(d, "SELECT enum_code(to_narrow(x)) FROM (VALUES ('bb')) "
				       "t(x)"), 1);
	/* text that is none of the values fails, as the cast does */
	assert_int_not_equal(nx_duck_exec(d, "SELECT to_narrow(x) FROM (VALUES ('a'), ('c')) t(x)",
					  &err), 0);
	nx_err_clear(&err);
	assert_int_not_equal(nx_duck_enum_function(d, "to_text", "VARCHAR", &err), 0);
	assert_non_null(strstr(err.msg, "no ENUM"));
	nx_duck_close(d);
	free(pq);
}

static void pair_same(const char *tag, const char *var)
{
	char *dir = nx_lod_timeline_profile(tag), *ref = NULL;
	struct nx_duck *d;

	assert_true(asprintf(&ref, "%s.ref", dir) > 0);
	d = nx_lod_build_pair(dir, ref, var, "1", NULL);
	assert_true(nx_lod_same_tables(d, true) >= 8);
	/* the ENUMs were made: the text columns of Instruction's tables are none */
	assert_true(nx_test_qi(d, "SELECT count(*) FROM duckdb_columns() WHERE database_name = "
				  "'a' AND table_name = 'ev0' AND data_type LIKE 'ENUM%%'") == 2);
	nx_duck_close(d);
	free(ref);
	free(dir);
}

static void test_enum_function_cache_matches_cast(void **state)
{
	(void)state;
	pair_same("enum", "NX_LOD_ENUM_CAST");
}

static void test_bad_values_refused(void **state)
{
	static const char *const var[] = { "NX_LOD_ENUM_CAST" };
	static const char *const bad[] = { "2", "yes", "-1" };
	char *dir = nx_lod_timeline_profile("bad");
	struct nx_err err = { 0 };
	uint64_t n = 0;

	(void)state;
	for (size_t v = 0; v < NX_ARRAY_SIZE(var); v++)
		for (size_t i = 0; i < NX_ARRAY_SIZE(bad); i++) {
			nx_err_clear(&err);
			assert_int_equal(setenv(var[v], bad[i], 1), 0);
			assert_int_equal(nx_lod_build_carried(dir, "t", &n, NULL, &err), NX_EUSAGE);
			unsetenv(var[v]);
			if (!strstr(err.msg, var[v]))
				fail_msg("%s=%s: %s", var[v], bad[i], err.msg);
			assert_int_equal(nx_test_sh("test -e '%s/.timeline'", dir), 1);
		}
	free(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_enum_function_is_the_cast),
		cmocka_unit_test(test_enum_function_cache_matches_cast),
		cmocka_unit_test(test_bad_values_refused),
	};

	return nx_test_done(cmocka_run_group_tests(tests, nx_lod_group_setup,
						   nx_lod_group_teardown));
}
