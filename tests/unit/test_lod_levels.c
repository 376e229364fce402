/* SPDX-License-Identifier: MIT
 * test_lod_levels.c: the pyramid levels above the finest one, built in C from the level
 * below (server/lod_levels.c), on real DuckDB databases and real parquet profiles:
 *   - the timeline caches of generated profiles (the servers' timeline profile, and one
 *     with times either side of zero, NULL cores, tracks and labels, equal durations,
 *     many tracks, counters with NULL and NaN values) hold, row for row and in the same
 *     order, the levels the grouping queries build (NX_LOD_SQL_LEVELS=1, the reference);
 *   - a small level gives the rows worked out by hand (bucket 0 takes -1, 0 and 1, as
 *     DuckDB's truncating k // 2 does; the longest event, then the lowest id; NaN above
 *     every number, NULLs left out);
 *   - the last value of tied times (buckets of the level below whose last values share
 *     their time, which a real build cannot give, to reach the rule) is the greatest,
 *     NULL above NaN above every number, as DuckDB's max of (time, value) gives;
 *   - a level below out of bucket order, or with a NULL count, is refused with an error
 *     naming the level (the build then fails, and leaves no cache);
 *   - levels are built into a cache file that checkpoints every few KB of its log, in
 *     slices of 100,000 rows of the level below (and the small level in slices of 2). */
#include "common/compat.h"
#include "server/lod_carried.h"
#include "server/lod.h"
#include "server/lod_levels.h"
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

/* "edge": Instruction with times from -50000 to 50000 ns, NULL cores, tracks and labels
 * on some rows, equal durations, 40 tracks; DmaPacket on 3 queues; SemaphoreUpdate with
 * NULL and NaN values. */
static int make_edge_profile(const char *dir)
{
	if (nx_test_sh("mkdir -p '%s'", dir))
		return -1;
	return nx_sfx_sqlf(
		"COPY (SELECT i AS id, CASE WHEN i %% 101 = 0 THEN NULL ELSE i %% 3 END::BIGINT "
		"AS pcore_idx, CASE WHEN i %% 89 = 0 THEN NULL ELSE 'tr' || (i %% 40) END AS "
		"timeline_track, CASE WHEN i %% 7 = 0 THEN NULL ELSE 'op' || (i %% 5) END AS "
		"opcode, (i * 5 - 50000)::BIGINT AS start_ts, (i * 5 - 50000 + (i %% 4) * 30)"
		"::BIGINT AS end_ts FROM range(20000) t(i) ORDER BY start_ts, id) TO "
		"'%s/Instruction.parquet' (FORMAT parquet, ROW_GROUP_SIZE 2048); "
		"COPY (SELECT i AS id, 0::BIGINT AS pcore_idx, 'q' || (i %% 3) AS queue_name, "
		"(i * 40 - 7000)::BIGINT AS start_ts, (i * 40 - 7000 + 25)::BIGINT AS end_ts "
		"FROM range(3000) t(i)) TO '%s/DmaPacket.parquet' (FORMAT parquet); "
		"COPY (SELECT (i %% 2)::BIGINT AS pcore_idx, (i * 11 - 30000)::BIGINT AS "
		"timestamp, (i %% 4)::BIGINT AS id, CASE WHEN i %% 13 = 0 THEN NULL WHEN "
		"i %% 29 = 0 THEN 'nan'::DOUBLE ELSE ((i * 7919) %% 101)::DOUBLE END AS value "
		"FROM range(8000) t(i)) TO '%s/SemaphoreUpdate.parquet' (FORMAT parquet)",
		dir, dir, dir);
}

/* Copies profile dir to dir.ref, builds the cache of both, dir's with the levels in C and
 * dir.ref's with the grouping queries, and checks the pyramids match row for row. */
static void compare_builds(const char *dir, int64_t min_up_rows)
{
	struct nx_duck *d;
	char *ref = NULL;

	assert_true(asprintf(&ref, "%s.ref", dir) > 0);
	d = nx_lod_build_pair(dir, ref, "NX_LOD_SQL_LEVELS", "1", NULL);
	/* the same rows at the same places (rowid), either way */
	nx_test_same_rows(d, "a", "b", "lod", true);
	nx_test_same_rows(d, "a", "b", "ctr_lod", true);
	/* levels above the finest were built, for events and counters */
	assert_true(nx_test_qi(d, "SELECT count(*) FROM a_lod l JOIN a.meta m ON l.src = m.src "
				  "AND l.level > m.lo") >= min_up_rows);
	assert_true(nx_test_qi(d, "SELECT count(*) FROM a.ctr_lod l JOIN a.meta m ON m.src = -1 "
				  "AND l.level > m.lo") > 0);
	nx_duck_close(d);
	free(ref);
}

static void test_timeline_profile_matches_reference(void **state)
{
	char *data = NULL, *dir = NULL;

	(void)state;
	assert_true(asprintf(&data, "%s/t", nx_lod_root) > 0);
	assert_true(asprintf(&dir, "%s/profiles/global/t@latest", data) > 0);
	assert_int_equal(nx_sfx_make_timeline_profile(data, "t", true), 0);
	compare_builds(dir, 100);
	free(data);
	free(dir);
}

static void test_edge_profile_matches_reference(void **state)
{
	char *dir = NULL;

	(void)state;
	assert_true(asprintf(&dir, "%s/edge", nx_lod_root) > 0);
	assert_int_equal(make_edge_profile(dir), 0);
	compare_builds(dir, 100);
	free(dir);
}

/* A database with empty tl.lod0, tl.lod1 (its track and label ENUMs, as the build makes
 * them), tl.lod2 and tl.ctr_lod (the cache's schema), tl in memory or in the file path. */
static struct nx_duck *open_levels_db_at(const char *path)
{
	struct nx_err err = { 0 };
	struct nx_duck *d = NULL;

	assert_ok(nx_duck_open(&d, 2, NULL, &err), &err);
	nx_test_exf(d, "ATTACH '%s' AS tl; "
		       "CREATE TABLE tl.lod0 (level UTINYINT, k BIGINT, core BIGINT, "
		       "track VARCHAR, count BIGINT, busy BIGINT, first_ts BIGINT, last_ts BIGINT, "
		       "id BIGINT, start_ts BIGINT, end_ts BIGINT, label VARCHAR); "
		       "CREATE TABLE tl.lod2 AS FROM tl.lod0; "
		       "CREATE TYPE tl.ev1_track AS ENUM ('a', 'b'); "
		       "CREATE TYPE tl.ev1_label AS ENUM ('u', 'v', 'x', 'y', 'z'); "
		       "CREATE TABLE tl.lod1 AS SELECT * REPLACE (track::tl.ev1_track AS track, "
		       "label::tl.ev1_label AS label) FROM tl.lod0; "
		       "CREATE TABLE tl.ctr_lod (level UTINYINT, k BIGINT, core BIGINT, track "
		       "VARCHAR, lo DOUBLE, hi DOUBLE, last DOUBLE, last_ts BIGINT)", path);
	return d;
}

static struct nx_duck *open_levels_db(void)
{
	return open_levels_db_at(":memory:");
}

/* Levels built into a cache file that checkpoints after every few KB of log (the
 * build's commits then checkpoint while the level below is read). */
static void test_levels_while_the_file_checkpoints(void **state)
{
	struct nx_err err = { 0 };
	struct nx_duck *d;
	char *path = NULL;

	(void)state;
	assert_true(asprintf(&path, "%s/checkpoints.duckdb", nx_lod_root) > 0);
	d = open_levels_db_at(path);
	nx_test_exf(d, "SET checkpoint_threshold = '4KB'; INSERT INTO tl.lod0 SELECT 3, i // 4, 0, "
		       "'t' || (i %% 4), 2, 10, i * 8, i * 8 + 5, i, i * 8, i * 8 + 5, 'x' FROM "
		       "range(1000000) t(i) ORDER BY i // 4, 't' || (i %% 4)");
	assert_ok(nx__lod_levels_up(d, 0, 3, 21, 100000, &err), &err);
	assert_int_equal(nx_test_qi(d, "SELECT count(*) FROM tl.lod0 WHERE level = 4"), 500000);
	assert_int_equal(nx_test_qi(d, "SELECT sum(count) FROM tl.lod0 WHERE level = 21"), 2000000);
	assert_int_equal(nx_test_qi(d, "SELECT count(*) FROM tl.lod0 WHERE level = 21"), 4);
	nx_duck_close(d);
	free(path);
}

static void test_small_level_by_hand(void **state)
{
	struct nx_err err = { 0 };
	struct nx_duck *d = open_levels_db();

	(void)state;
	/* level 3 in (k, core, track) order: buckets -1, 0, 1 make bucket 0 of level 4,
	 * 2 and 3 make bucket 1 */
	nx_test_exf(d, "INSERT INTO tl.lod1 VALUES "
		       "(3, -1, 0, 'a', 2, 10, -8, -1, 5, -8, -3, 'x'), "
		       "(3, 0, 0, 'a', 1, 5, 0, 5, 4, 0, 5, 'y'), "
		       "(3, 0, NULL, 'a', 1, 1, 1, 2, 9, 1, 2, NULL), "
		       "(3, 1, 0, 'a', 3, 7, 8, 15, 3, 10, 15, 'z'), "
		       "(3, 1, 0, NULL, 1, 2, 9, 11, NULL, NULL, NULL, NULL), "
		       "(3, 2, 0, 'b', 1, 4, 16, 20, 1, 16, 20, 'u'), "
		       "(3, 3, 0, 'b', 1, 6, 24, 30, 2, 24, 30, 'v'); "
		       "INSERT INTO tl.ctr_lod VALUES "
		       "(3, 0, 0, 's', 1.0, 2.0, 2.0, 7), (3, 1, 0, 's', 'nan', 'nan', 'nan', 9), "
		       "(3, 1, 0, 't', NULL, NULL, NULL, 12), (3, 2, 0, 't', 4.0, 6.0, 5.0, 20), "
		       "(3, 3, 0, 't', -3.0, 1.0, 0.5, 30)");
	/* in slices of one row of the level below (the bound of 2 rows over 8, at least 1):
	 * cut before bucket 2 only, for -1, 0 and 1 share their parent */
	assert_ok(nx__lod_levels_up(d, 1, 3, 5, 2, &err), &err);
	assert_ok(nx__lod_levels_up(d, -1, 3, 4, 2, &err), &err);
	/* level 4: bucket 0 has (0, 'a') from -1, 0 and 1 (the longest: ids 5, 4 and 3 all
	 * last 5 ns, id 3 is the lowest), (0, NULL) and (NULL, 'a'); bucket 1 has (0, 'b') */
	assert_int_equal(nx_test_qi(d, "SELECT count(*) FROM (SELECT rowid, * FROM tl.lod1 WHERE "
				       "level = 4 EXCEPT ALL SELECT * FROM (VALUES "
				       "(7, 4, 0, 0, 'a', 6, 22, -8, 15, 3, 10, 15, 'z'), "
				       "(8, 4, 0, 0, NULL, 1, 2, 9, 11, NULL, NULL, NULL, NULL), "
				       "(9, 4, 0, NULL, 'a', 1, 1, 1, 2, 9, 1, 2, NULL), "
				       "(10, 4, 1, 0, 'b', 2, 10, 16, 30, 2, 24, 30, 'v')))"),
			 0);
	assert_int_equal(nx_test_qi(d, "SELECT count(*) FROM tl.lod1 WHERE level = 4"), 4);
	/* level 5 from level 4: one bucket, 0 */
	assert_int_equal(nx_test_qi(d, "SELECT count(*) FROM tl.lod1 WHERE level = 5 AND k = 0"),
			 4);
	/* counters: (0, 's') least 1, greatest NaN, last NaN at 9; (0, 't') from 1 only
	 * (bucket 0 of level 4): NULLs; bucket 1: least -3, greatest 6, last 0.5 at 30 */
	assert_int_equal(nx_test_qi(d, "SELECT count(*) FROM tl.ctr_lod WHERE level = 4 AND ("
				       "(k = 0 AND track = 's' AND lo = 1 AND isnan(hi) AND "
				       "isnan(last) AND last_ts = 9) OR (k = 0 AND track = 't' AND "
				       "lo IS NULL AND hi IS NULL AND last IS NULL AND last_ts = 12) "
				       "OR (k = 1 AND track = 't' AND lo = -3 AND hi = 6 AND "
				       "last = 0.5 AND last_ts = 30))"),
			 3);
	assert_int_equal(nx_test_qi(d, "SELECT count(*) FROM tl.ctr_lod WHERE level = 4"), 3);
	nx_duck_close(d);
}

static void test_last_of_tied_times(void **state)
{
	struct nx_err err = { 0 };
	struct nx_duck *d = open_levels_db();

	(void)state;
	/* per pair of buckets of level 3 (one bucket of level 4), the lasts at one time, the
	 * lesser first: 2 then 5; NaN then NULL; 9 then NaN; -1 then -0.5 */
	nx_test_exf(d, "INSERT INTO tl.ctr_lod VALUES "
		       "(3, 0, 0, 's', 1.0, 2.0, 2.0, 7), (3, 1, 0, 's', 0.0, 5.0, 5.0, 7), "
		       "(3, 2, 0, 's', 1.0, 1.0, 'nan', 20), (3, 2, 0, 't', 9.0, 9.0, 9.0, 20), "
		       "(3, 3, 0, 's', NULL, NULL, NULL, 20), (3, 3, 0, 't', 'nan', 'nan', 'nan', 20), "
		       "(3, 4, 0, 's', -1.0, -1.0, -1.0, 40), (3, 5, 0, 's', -0.5, -0.5, -0.5, 40)");
	assert_ok(nx__lod_levels_up(d, -1, 3, 4, 2, &err), &err);
	assert_int_equal(nx_test_qi(d, "SELECT count(*) FROM tl.ctr_lod WHERE level = 4 AND ("
				       "(k = 0 AND track = 's' AND last = 5 AND last_ts = 7) OR "
				       "(k = 1 AND track = 's' AND last IS NULL AND last_ts = 20) OR "
				       "(k = 1 AND track = 't' AND isnan(last) AND last_ts = 20) OR "
				       "(k = 2 AND track = 's' AND last = -0.5 AND last_ts = 40))"),
			 4);
	/* the same as the SQL rule over level 3 */
	assert_int_equal(nx_test_qi(d, "SELECT count(*) FROM (SELECT k // 2 AS k, core, track, "
				       NX_LOD_LAST_SQL("last_ts", "last") " AS r FROM tl.ctr_lod "
				       "WHERE level = 3 GROUP BY ALL) q FULL JOIN (SELECT * FROM "
				       "tl.ctr_lod WHERE level = 4) l USING (k, core, track) WHERE "
				       "l.last IS DISTINCT FROM q.r.v OR l.last_ts IS DISTINCT FROM "
				       "q.r.ts"),
			 0);
	nx_duck_close(d);
}

static void test_bad_levels_refused(void **state)
{
	struct nx_err err = { 0 };
	struct nx_duck *d = open_levels_db();

	(void)state;
	nx_test_exf(d, "INSERT INTO tl.lod0 VALUES "
		       "(2, 4, 0, 'a', 1, 1, 8, 9, 1, 8, 9, 'x'), "
		       "(2, 1, 0, 'a', 1, 1, 2, 3, 2, 2, 3, 'y'); "
		       "INSERT INTO tl.lod2 VALUES (2, 1, 0, 'a', NULL, 1, 2, 3, 2, 2, 3, 'y')");
	assert_int_not_equal(nx__lod_levels_up(d, 0, 2, 3, 1000, &err), 0);
	assert_non_null(strstr(err.msg, "level 2 of the events' pyramid is not in bucket order"));
	memset(&err, 0, sizeof(err));
	assert_int_not_equal(nx__lod_levels_up(d, 2, 2, 3, 1000, &err), 0);
	assert_non_null(strstr(err.msg, "level 2 of the events' pyramid: NULL"));
	assert_int_equal(nx_test_qi(d, "SELECT count(*) FROM tl.lod0 WHERE level = 3"), 0);
	assert_int_equal(nx_test_qi(d, "SELECT count(*) FROM tl.lod2 WHERE level = 3"), 0);
	nx_duck_close(d);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_timeline_profile_matches_reference),
		cmocka_unit_test(test_edge_profile_matches_reference),
		cmocka_unit_test(test_small_level_by_hand),
		cmocka_unit_test(test_last_of_tied_times),
		cmocka_unit_test(test_bad_levels_refused),
		cmocka_unit_test(test_levels_while_the_file_checkpoints),
	};

	return nx_test_done(cmocka_run_group_tests(tests, nx_lod_group_setup,
						   nx_lod_group_teardown));
}
