/* SPDX-License-Identifier: MIT
 * test_lod_l0.c: the finest level of the events' pyramids, built in C from the events
 * (server/lod_l0.c), on real DuckDB databases and real parquet profiles:
 *   - the timeline caches of generated profiles (the servers' timeline profile, in start
 *     order and not; one with times either side of zero, NULL cores, tracks, ids and
 *     labels, equal durations, and rows out of order inside row groups, so tl.ev keeps
 *     them out of order; the same with 600 tracks of 1 to 19 bytes) hold, row for row
 *     and at the same row ids, the finest level the grouping query builds
 *     (NX_LOD_SQL_L0=1, the reference), and the one built from the events read in place
 *     (NX_LOD_EVENTS_IN_PLACE=1), in one slice and in many (NX_LOD_CHUNK_ROWS), where
 *     bucket 0 is split between the slices either side of 0 as the query splits it;
 *   - a small level gives the rows worked out by hand (bucket 0 takes -3 and 3, as
 *     DuckDB's truncating start_ts // 4 does; the longest event, then the lowest id; a
 *     group whose ids are all NULL has no longest event);
 *   - events without a start, and a level past 62, are refused with an error naming the
 *     table, and nothing is appended. */
#include "common/compat.h"
#include "server/lod_carried.h"
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

/* "edge": Instruction with times from -75000 to 75000 ns, out of order inside each row
 * group of 2048 (the row groups themselves in start order), NULL cores, tracks, ids and
 * labels on some rows, equal durations, its tracks `track` of i (NULL on some rows);
 * DmaPacket on 3 queues in order. */
static int make_edge_profile(const char *dir, const char *track)
{
	if (nx_test_sh("mkdir -p '%s'", dir))
		return -1;
	return nx_sfx_sqlf(
		"COPY (SELECT CASE WHEN i %% 53 = 0 THEN NULL ELSE (i * 7) %% 1000 END"
		"::BIGINT AS id, CASE WHEN i %% 101 = 0 THEN NULL ELSE i %% 3 END::BIGINT AS "
		"pcore_idx, CASE WHEN i %% 89 = 0 THEN NULL ELSE %s END AS "
		"timeline_track, CASE WHEN i %% 7 = 0 THEN NULL ELSE 'op' || (i %% 5) END AS "
		"opcode, (i * 5 - 75000)::BIGINT AS start_ts, (i * 5 - 75000 + (i %% 4) * 30)"
		"::BIGINT AS end_ts FROM range(30000) t(i) ORDER BY i // 2048, hash(i)) TO "
		"'%s/Instruction.parquet' (FORMAT parquet, ROW_GROUP_SIZE 2048); "
		"COPY (SELECT i AS id, 0::BIGINT AS pcore_idx, 'q' || (i %% 3) AS queue_name, "
		"(i * 40 - 7000)::BIGINT AS start_ts, (i * 40 - 7000 + 25)::BIGINT AS end_ts "
		"FROM range(3000) t(i)) TO '%s/DmaPacket.parquet' (FORMAT parquet)",
		track, dir, dir);
}

/* Copies profile dir to dir.<tag> three times, builds the cache of each (chunk:
 * NX_LOD_CHUNK_ROWS, or NULL): the first with the finest level in C from the events
 * copied into tl.ev<s>, the second with the grouping query, the third in C from the
 * events read in place from the profile's files (NX_LOD_EVENTS_IN_PLACE=1), and checks
 * the pyramids match row for row; returns a database with the first two attached as a
 * and b. */
static struct nx_duck *compare_builds(const char *dir, const char *tag, const char *chunk)
{
	struct nx_err err = { 0 };
	struct nx_duck *d = NULL;
	uint64_t events = 0, ref_events = 0;
	char *ref = NULL, *copy = NULL, *copied = NULL;

	assert_true(asprintf(&copy, "%s.%s", dir, tag) > 0);
	assert_true(asprintf(&ref, "%s.%s.ref", dir, tag) > 0);
	assert_true(asprintf(&copied, "%s.%s.copied", dir, tag) > 0);
	assert_int_equal(nx_test_sh("cp -r '%s' '%s' && cp -r '%s' '%s' && cp -r '%s' '%s'", dir,
				    copy, dir, ref, dir, copied), 0);
	if (chunk)
		setenv("NX_LOD_CHUNK_ROWS", chunk, 1);
	assert_ok(nx_lod_build_carried(copy, "p", &events, NULL, &err), &err);
	setenv("NX_LOD_SQL_L0", "1", 1);
	assert_ok(nx_lod_build_carried(ref, "p", &ref_events, NULL, &err), &err);
	unsetenv("NX_LOD_SQL_L0");
	setenv("NX_LOD_EVENTS_IN_PLACE", "1", 1);
	assert_ok(nx_lod_build_carried(copied, "p", &ref_events, NULL, &err), &err);
	unsetenv("NX_LOD_EVENTS_IN_PLACE");
	unsetenv("NX_LOD_CHUNK_ROWS");
	assert_true(events > 0);
	assert_int_equal(events, ref_events);

	assert_ok(nx_duck_open(&d, 2, NULL, &err), &err);
	nx_test_exf(d, "ATTACH '%s/.timeline/timeline.duckdb' AS a (READ_ONLY); "
		       "ATTACH '%s/.timeline/timeline.duckdb' AS b (READ_ONLY); "
		       "ATTACH '%s/.timeline/timeline.duckdb' AS c (READ_ONLY)", copy, ref, copied);
	nx_lod_pyramid_view(d, "a");
	/* the same rows at the same places (rowid), either way, for both references */
	for (int r = 0; r < 2; r++) {
		const char *b = r ? "c" : "b";

		nx_test_same_rows(d, "a", b, "lod", true);
		assert_int_equal(nx_test_qi(d, "SELECT count(*) FROM (SELECT * FROM a.meta EXCEPT "
					       "ALL SELECT * FROM %s.meta)", b), 0);
	}
	/* the default build copied the events; the one that read them in place copied those
	 * of the sources in start order not */
	assert_int_equal(nx_test_qi(d, "SELECT count(*) FROM duckdb_tables() WHERE database_name "
				       "= 'a' AND table_name = 'ev0'"), 1);
	assert_int_equal(nx_test_qi(d, "SELECT count(*) FROM duckdb_tables() t JOIN c.meta m ON "
				       "t.table_name = 'ev' || m.src WHERE t.database_name = 'c' "
				       "AND m.ordered AND m.src < 3"), 0);
	/* a finest level was built */
	assert_true(nx_test_qi(d, "SELECT count(*) FROM a_lod l JOIN a.meta m ON l.src = m.src "
				  "AND l.level = m.lo") > 0);
	free(copy);
	free(ref);
	free(copied);
	return d;
}

static void timeline_profile(bool ordered, const char *chunk)
{
	char *data = NULL, *dir = NULL;

	assert_true(asprintf(&data, "%s/t%d%s", nx_lod_root, ordered, chunk ? chunk : "") > 0);
	assert_true(asprintf(&dir, "%s/profiles/global/t@latest", data) > 0);
	assert_int_equal(nx_sfx_make_timeline_profile(data, "t", ordered), 0);
	nx_duck_close(compare_builds(dir, "c", chunk));
	free(data);
	free(dir);
}

static void test_timeline_profile_matches_reference(void **state)
{
	(void)state;
	timeline_profile(true, NULL);
	timeline_profile(false, NULL);
	timeline_profile(true, "10000");
}

static void test_edge_profile_matches_reference(void **state)
{
	struct nx_duck *d;
	char *dir = NULL;

	(void)state;
	assert_true(asprintf(&dir, "%s/edge", nx_lod_root) > 0);
	assert_int_equal(make_edge_profile(dir, "'tr' || (i % 8)"), 0);
	d = compare_builds(dir, "whole", NULL);
	/* the events were copied in file order, out of start order */
	assert_int_equal(nx_test_qi(d, "SELECT ordered::INT FROM a.meta WHERE src = 0"), 1);
	assert_true(nx_test_qi(d, "SELECT count(*) FROM (SELECT start_ts < lag(start_ts) OVER "
				  "(ORDER BY rowid) AS back FROM a.ev0) WHERE back") > 1000);
	/* groups without a longest event (every id NULL) and with NULL keys are there */
	assert_true(nx_test_qi(d, "SELECT count(*) FROM a_lod l JOIN a.meta m ON l.src = m.src "
				  "AND l.level = m.lo WHERE l.id IS NULL") > 0);
	assert_true(nx_test_qi(d, "SELECT count(*) FROM a_lod l JOIN a.meta m ON l.src = "
				  "m.src AND l.level = m.lo WHERE l.core IS NULL OR l.track IS "
				  "NULL") > 0);
	nx_duck_close(d);
	d = compare_builds(dir, "sliced", "10000");
	/* in slices, bucket 0 of the finest level has rows from either side of 0 */
	assert_true(nx_test_qi(d, "SELECT count(*) FROM (SELECT l.core, l.track FROM a_lod l "
				  "JOIN a.meta m ON l.src = m.src AND l.level = m.lo WHERE "
				  "l.src = 0 AND l.k = 0 GROUP BY ALL HAVING count(*) > 1)") > 0);
	nx_duck_close(d);
	free(dir);
}

/* 600 tracks of 1 to 19 bytes, each with runs of 4 events in a row: more (core, track)
 * than the fold's table of latest groups has entries, so they share entries, and rows
 * that find their group there as well as ones that do not (lod_l0.c). */
static void test_many_tracks_match_reference(void **state)
{
	struct nx_duck *d;
	char *dir = NULL;

	(void)state;
	assert_true(asprintf(&dir, "%s/many", nx_lod_root) > 0);
	assert_int_equal(make_edge_profile(dir, "repeat('t', (i // 4) % 17) || ((i // 4) % 600)"),
			 0);
	d = compare_builds(dir, "whole", NULL);
	assert_true(nx_test_qi(d, "SELECT count(DISTINCT track) FROM a_lod l JOIN a.meta m ON "
				  "l.src = m.src AND l.level = m.lo WHERE l.src = 0") > 500);
	nx_duck_close(d);
	d = compare_builds(dir, "sliced", "10000");
	nx_duck_close(d);
	free(dir);
}

/* A database with tl.ev0 (the cache's columns) and an empty tl.lod0 whose track and label
 * are ENUMs (as the build makes them, from tl.ev0's values), and tl.lod1 of VARCHARs. */
static struct nx_duck *open_events_db(void)
{
	struct nx_err err = { 0 };
	struct nx_duck *d = NULL;

	assert_ok(nx_duck_open(&d, 2, NULL, &err), &err);
	nx_test_exf(d, "ATTACH ':memory:' AS tl; "
		       "CREATE TABLE tl.ev0 (core BIGINT, track VARCHAR, id BIGINT, "
		       "start_ts BIGINT, end_ts BIGINT, label VARCHAR); "
		       "CREATE TYPE tl.ev0_track AS ENUM ('a', 'b'); "
		       "CREATE TYPE tl.ev0_label AS ENUM ('four', 'nil', 'short', 'two', 'x'); "
		       "CREATE TABLE tl.lod0 (level UTINYINT, k BIGINT, core BIGINT, "
		       "track tl.ev0_track, count BIGINT, busy BIGINT, first_ts BIGINT, "
		       "last_ts BIGINT, id BIGINT, start_ts BIGINT, end_ts BIGINT, "
		       "label tl.ev0_label); "
		       "CREATE TABLE tl.lod1 AS SELECT * REPLACE (track::VARCHAR AS track, "
		       "label::VARCHAR AS label) FROM tl.lod0");
	return d;
}

static void test_small_level_by_hand(void **state)
{
	struct nx_err err = { 0 };
	struct nx_duck *d = open_events_db();
	int64_t rows = 0;

	(void)state;
	/* level 2 (buckets of 4 ns): -3 and 3 both fall in bucket 0, -5 in bucket -1, 9 in
	 * bucket 2; ids 4 and 2 last 5 ns each (2 is kept), id 7 only 1 ns; the 'b' track's
	 * ids are all NULL */
	nx_test_exf(d, "INSERT INTO tl.ev0 VALUES "
		       "(0, 'a', 7, 3, 4, 'short'), (0, 'a', 4, -3, 2, 'four'), "
		       "(0, 'a', 2, 1, 6, 'two'), (0, 'b', NULL, 0, 9, 'nil'), "
		       "(NULL, 'a', 5, -5, -1, NULL), (0, NULL, 6, 9, 10, 'x'), "
		       "(0, 'b', NULL, 2, 3, 'nil')");
	assert_ok(nx__lod_l0(d, 0, "tl.ev0", "tl.ev0", 2, -5, 10, 7, 500000, &rows, &err), &err);
	assert_int_equal(rows, 4);
	assert_int_equal(nx_test_qi(d, "SELECT count(*) FROM (SELECT rowid, * FROM tl.lod0 EXCEPT "
				       "ALL SELECT * FROM (VALUES "
				       "(0, 2, -1, NULL, 'a', 1, 4, -5, -1, 5, -5, -1, NULL), "
				       "(1, 2, 0, 0, 'a', 3, 11, -3, 6, 2, 1, 6, 'two'), "
				       "(2, 2, 0, 0, 'b', 2, 10, 0, 9, NULL, NULL, NULL, NULL), "
				       "(3, 2, 2, 0, NULL, 1, 1, 9, 10, 6, 9, 10, 'x')))"),
			 0);
	assert_int_equal(nx_test_qi(d, "SELECT count(*) FROM tl.lod0"), 4);
	nx_duck_close(d);
}

static void test_bad_events_refused(void **state)
{
	struct nx_err err = { 0 };
	struct nx_duck *d = open_events_db();
	int64_t rows = 0;

	(void)state;
	nx_test_exf(d, "INSERT INTO tl.ev0 VALUES (0, 'a', 1, 3, 4, 'x'), "
		       "(0, 'a', 2, NULL, 4, 'y')");
	assert_int_not_equal(nx__lod_l0(d, 0, "tl.ev0", "tl.ev0", 2, 3, 4, 2, 500000, &rows, &err), 0);
	assert_non_null(strstr(err.msg, "tl.ev0: an event without a start or an end"));
	memset(&err, 0, sizeof(err));
	assert_int_not_equal(nx__lod_l0(d, 0, "tl.ev0", "tl.ev0", 63, 3, 4, 2, 500000, &rows, &err), 0);
	assert_non_null(strstr(err.msg, "tl.ev0: no pyramid level 63"));
	memset(&err, 0, sizeof(err));
	assert_int_not_equal(nx__lod_l0(d, 1, "tl.ev1", "tl.ev1", 2, 3, 4, 2, 500000, &rows, &err), 0);
	assert_non_null(strstr(err.msg, "ev1"));
	assert_int_equal(nx_test_qi(d, "SELECT count(*) FROM tl.lod0"), 0);
	assert_int_equal(nx_test_qi(d, "SELECT count(*) FROM tl.lod1"), 0);
	nx_duck_close(d);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_timeline_profile_matches_reference),
		cmocka_unit_test(test_edge_profile_matches_reference),
		cmocka_unit_test(test_many_tracks_match_reference),
		cmocka_unit_test(test_small_level_by_hand),
		cmocka_unit_test(test_bad_events_refused),
	};

	return nx_test_done(cmocka_run_group_tests(tests, nx_lod_group_setup,
						   nx_lod_group_teardown));
}
