/* SPDX-License-Identifier: MIT
 * test_lod_l0_pass.c: the events copy and the finest level of their pyramid in one pass
 * (server/lod_l0_pass.c), on real DuckDB databases and real parquet profiles:
 *   - the caches of generated profiles built in one pass hold, row for row and at the
 *     same row ids, the tl.ev<s>, tl.lod<s> and tl.meta (and the rows of tl.tracks, whose
 *     GROUP BY order the thread count sets) of the build that copies
 *     first and reads L0 back (NX_LOD_COPY_THEN_L0=1, the reference): the servers'
 *     timeline profile (its DMA in one pass, its Instruction files out of order sorted
 *     by the copy), and one whose rows are out of start order inside their row
 *     groups, with NULL cores, tracks, ids and labels, in slices of 10000 rows so that
 *     several slices are open at once;
 *   - a table whose statistics do not tell its span (NULL start times), and one whose
 *     single row group would keep too many slices open, are copied first and read back,
 *     with the same rows;
 *   - rows that start earlier than the lateness given allows, and a level past 62, are
 *     refused with an error naming the table;
 *   - tl.ev<s>'s track and label are ENUMs holding the rows of the cache with VARCHARs
 *     (NX_LOD_TEXT_COLUMNS=1) at the same row ids, but for a column of more than 65535
 *     distinct values, which stays VARCHAR. */
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

/* Whether the build of a copy of dir (made at dir.phases) ran the one pass for source
 * src (a phase "tl.ev<src> ... and tl.lod L<n>"). */
static bool pass_ran(const char *dir, int src)
{
	struct nx_lod_phases ph = { 0 };
	struct nx_err err = { 0 };
	char *copy = NULL, *want = NULL;
	uint64_t n = 0;
	bool ran = false;

	assert_true(asprintf(&copy, "%s.phases", dir) > 0);
	assert_true(asprintf(&want, "tl.ev%d ", src) > 0);
	assert_int_equal(nx_test_sh("rm -rf '%s' && cp -r '%s' '%s'", copy, dir, copy), 0);
	assert_ok(nx_lod_build_carried(copy, "p", &n, &ph, &err), &err);
	for (size_t i = 0; i < ph.n; i++)
		ran |= !strncmp(ph.ph[i].name, want, strlen(want)) &&
		       strstr(ph.ph[i].name, " and tl.lod L");
	free(copy);
	free(want);
	return ran;
}

/* Builds the cache of a copy of dir (at dir.<tag>) in one pass and of another as the
 * reference (at dir.<tag>.ref) and checks every table of the events part is the same,
 * row for row at the same row ids; returns the database with both attached (a, b). */
static struct nx_duck *compare_with_reference(const char *dir, const char *tag)
{
	static const char *const tables[] = { "lod0",   "lod1", "lod2", "meta",
					       "tracks", "ev0",  "ev1",  "ev2" };
	struct nx_duck *d;
	char *copy = NULL, *ref = NULL;

	assert_true(asprintf(&copy, "%s.%s", dir, tag) > 0);
	assert_true(asprintf(&ref, "%s.%s.ref", dir, tag) > 0);
	assert_int_equal(nx_test_sh("rm -rf '%s' && cp -r '%s' '%s'", copy, dir, copy), 0);
	d = nx_lod_build_pair(copy, ref, "NX_LOD_COPY_THEN_L0", "1", NULL);
	for (size_t i = 0; i < NX_ARRAY_SIZE(tables); i++) {
		const char *t = tables[i];
		/* tl.tracks comes out of a GROUP BY: its order is the thread count's (the
		 * server sorts the tracks) */
		const char *id = strcmp(t, "tracks") ? "rowid, " : "";

		if (!nx_test_qi(d, "SELECT count(*) FROM duckdb_tables() WHERE database_name = "
				   "'b' AND table_name = '%s'", t))
			continue;
		assert_int_equal(nx_test_qi(d, "SELECT count(*) FROM a.%s", t),
				 nx_test_qi(d, "SELECT count(*) FROM b.%s", t));
		assert_int_equal(nx_test_qi(d, "SELECT count(*) FROM (SELECT %s* FROM a.%s EXCEPT "
					       "ALL SELECT %s* FROM b.%s)", id, t, id, t), 0);
		assert_int_equal(nx_test_qi(d, "SELECT count(*) FROM (SELECT %s* FROM b.%s EXCEPT "
					       "ALL SELECT %s* FROM a.%s)", id, t, id, t), 0);
	}
	assert_true(nx_test_qi(d, "SELECT count(*) FROM a_lod l JOIN a.meta m ON l.src = m.src "
				  "AND l.level = m.lo") > 0);
	free(copy);
	free(ref);
	return d;
}

static void test_timeline_profile(void **state)
{
	char *data = NULL, *dir = NULL;

	(void)state;
	assert_true(asprintf(&data, "%s/tl", nx_lod_root) > 0);
	assert_true(asprintf(&dir, "%s/profiles/global/t@latest", data) > 0);
	assert_int_equal(nx_sfx_make_timeline_profile(data, "t", true), 0);
	/* its two Instruction files overlap in time: sorted when copied, no pass */
	assert_false(pass_ran(dir, 0));
	assert_true(pass_ran(dir, 1));
	nx_duck_close(compare_with_reference(dir, "c1"));
	setenv("NX_LOD_CHUNK_ROWS", "10000", 1);
	nx_duck_close(compare_with_reference(dir, "c2"));
	unsetenv("NX_LOD_CHUNK_ROWS");
	free(data);
	free(dir);
}

/* Instruction (n rows in row groups of rg, shuffled inside each, times either side of 0,
 * NULL cores, tracks, ids and labels on some rows; with nulls, some rows without a start)
 * and DmaPacketAggregated (labels from op, else queue_type) in dir. */
static void make_profile(const char *dir, int n, int rg, bool nulls)
{
	int rc;

	assert_int_equal(nx_test_sh("rm -rf '%s' && mkdir -p '%s'", dir, dir), 0);
	rc = nx_sfx_sqlf(
		"COPY (SELECT CASE WHEN i %% 61 = 0 THEN NULL ELSE i END::BIGINT AS id, "
		"CASE WHEN i %% 97 = 0 THEN NULL ELSE i %% 4 END::BIGINT AS pcore_idx, "
		"CASE WHEN i %% 83 = 0 THEN NULL ELSE 'row' || (i %% 6) END AS "
		"timeline_track, CASE WHEN i %% 11 = 0 THEN NULL ELSE 'op' || (i %% 9) END "
		"AS opcode, CASE WHEN %d AND i %% 1000 = 7 THEN NULL ELSE (i * 3 - 60000) "
		"END::BIGINT AS start_ts, (i * 3 - 60000 + (i %% 5) * 40)::BIGINT AS end_ts "
		"FROM range(%d) t(i) ORDER BY i // %d, hash(i)) TO '%s/Instruction.parquet' "
		"(FORMAT parquet, ROW_GROUP_SIZE %d); "
		"COPY (SELECT i AS id, (i %% 2)::BIGINT AS pcore_idx, 'q' || (i %% 3) AS "
		"queue_name, CASE WHEN i %% 4 = 0 THEN NULL ELSE 'op' || (i %% 3) END AS op, "
		"'qt' || (i %% 2) AS queue_type, (i * 20)::BIGINT AS start_ts, "
		"(i * 20 + 15)::BIGINT AS end_ts FROM range(20000) t(i)) TO "
		"'%s/DmaPacketAggregated.parquet' (FORMAT parquet, ROW_GROUP_SIZE 4096)",
		nulls ? 1 : 0, n, rg, dir, rg, dir);

	assert_int_equal(rc, 0);
}

static void test_rows_out_of_order_in_row_groups(void **state)
{
	char *dir = NULL;
	struct nx_duck *d;

	(void)state;
	assert_true(asprintf(&dir, "%s/shuffled", nx_lod_root) > 0);
	make_profile(dir, 60000, 2048, false);
	setenv("NX_LOD_CHUNK_ROWS", "10000", 1);
	assert_true(pass_ran(dir, 0));
	assert_true(pass_ran(dir, 1));
	d = compare_with_reference(dir, "c3");
	/* the copy kept the file's order, out of start order, and has the NULL keys */
	assert_true(nx_test_qi(d, "SELECT count(*) FROM (SELECT start_ts < lag(start_ts) OVER "
				  "(ORDER BY rowid) AS back FROM a.ev0) WHERE back") > 1000);
	assert_true(nx_test_qi(d, "SELECT count(*) FROM a_lod WHERE src = 0 AND (core IS NULL OR "
				  "track IS NULL OR id IS NULL OR label IS NULL)") > 0);
	nx_duck_close(d);
	unsetenv("NX_LOD_CHUNK_ROWS");
	nx_duck_close(compare_with_reference(dir, "c4"));
	free(dir);
}

static void test_fallbacks(void **state)
{
	char *dir = NULL;

	(void)state;
	/* NULL start times: the statistics do not give the count */
	assert_true(asprintf(&dir, "%s/nulls", nx_lod_root) > 0);
	make_profile(dir, 30000, 2048, true);
	assert_false(pass_ran(dir, 0));
	assert_true(pass_ran(dir, 1));
	nx_duck_close(compare_with_reference(dir, "c5"));
	free(dir);
	/* one row group over the whole span, in slices of 10000 rows: 20 and more open */
	assert_true(asprintf(&dir, "%s/onegroup", nx_lod_root) > 0);
	make_profile(dir, 250000, 1000000, false);
	setenv("NX_LOD_CHUNK_ROWS", "10000", 1);
	assert_false(pass_ran(dir, 0));
	nx_duck_close(compare_with_reference(dir, "c6"));
	unsetenv("NX_LOD_CHUNK_ROWS");
	free(dir);
}

/* The number of table t's columns track and label stored as ENUMs in cache db (tl.ev0,
 * tl.lod0). */
static int64_t enum_columns(struct nx_duck *d, const char *db, const char *t)
{
	return nx_test_qi(d, "SELECT count(*) FROM duckdb_columns() WHERE database_name = '%s' "
			     "AND table_name = '%s' AND column_name IN ('track', 'label') AND "
			     "data_type LIKE 'ENUM%%'", db, t);
}

static void test_enum_columns(void **state)
{
	static const char *const tables[] = { "ev0", "ev1", "lod0", "lod1" };
	char *dir = NULL, *ref = NULL;
	struct nx_duck *d;

	(void)state;
	/* the ENUM cache (a) holds the rows of the VARCHAR one (b), at the same row ids */
	assert_true(asprintf(&dir, "%s/shuffled-enum", nx_lod_root) > 0);
	assert_true(asprintf(&ref, "%s.text", dir) > 0);
	make_profile(dir, 30000, 2048, false);
	d = nx_lod_build_pair(dir, ref, "NX_LOD_TEXT_COLUMNS", "1", NULL);
	/* tl.lod<s> has tl.ev<s>'s types */
	assert_int_equal(enum_columns(d, "a", "ev0"), 2);
	assert_int_equal(enum_columns(d, "a", "lod0"), 2);
	assert_int_equal(enum_columns(d, "b", "ev0"), 0);
	assert_int_equal(enum_columns(d, "b", "lod0"), 0);
	for (size_t i = 0; i < NX_ARRAY_SIZE(tables); i++) {
		const char *t = tables[i];

		assert_int_equal(nx_test_qi(d, "SELECT count(*) FROM (SELECT rowid, * FROM a.%s "
					       "EXCEPT ALL SELECT rowid, * FROM b.%s)", t, t), 0);
		assert_int_equal(nx_test_qi(d, "SELECT count(*) FROM (SELECT rowid, * FROM b.%s "
					       "EXCEPT ALL SELECT rowid, * FROM a.%s)", t, t), 0);
	}
	nx_duck_close(d);
	free(dir);
	free(ref);
	/* 70000 distinct labels: the label stays VARCHAR, the track is an ENUM */
	assert_true(asprintf(&dir, "%s/labels", nx_lod_root) > 0);
	assert_int_equal(nx_test_sh("mkdir -p '%s'", dir), 0);
	assert_int_equal(nx_sfx_sqlf("COPY (SELECT i::BIGINT AS id, 0::BIGINT AS pcore_idx, "
				     "'row' || (i %% 3) AS timeline_track, 'op' || i AS opcode, "
				     "(i * 10)::BIGINT AS start_ts, (i * 10 + 5)::BIGINT AS end_ts "
				     "FROM range(70000) t(i)) TO '%s/Instruction.parquet' "
				     "(FORMAT parquet)", dir), 0);
	d = compare_with_reference(dir, "c7");
	assert_int_equal(enum_columns(d, "a", "ev0"), 1);
	assert_int_equal(enum_columns(d, "a", "lod0"), 1);
	assert_int_equal(nx_test_qi(d, "SELECT count(*) FROM duckdb_columns() WHERE "
				       "database_name = 'a' AND table_name IN ('ev0', 'lod0') AND "
				       "column_name = 'label' AND data_type = 'VARCHAR'"), 2);
	nx_duck_close(d);
	free(dir);
}

/* tl.lod0, empty, without tl.ev0. */
static const char tables_sql[] =
	"DROP TABLE IF EXISTS tl.ev0; CREATE OR REPLACE TABLE tl.lod0 ("
	"level UTINYINT, k BIGINT, core BIGINT, track VARCHAR, count BIGINT, busy BIGINT, "
	"first_ts BIGINT, last_ts BIGINT, id BIGINT, start_ts BIGINT, end_ts BIGINT, "
	"label VARCHAR)";

static void test_late_rows_refused(void **state)
{
	static const char *const select_sql =
		"SELECT * FROM (VALUES (0::BIGINT, 'a', 1::BIGINT, 0::BIGINT, 5::BIGINT, 'x'), "
		"(0, 'a', 2, 400, 405, 'y'), (0, 'a', 3, 10, 12, 'z')) "
		"t(core, track, id, start_ts, end_ts, label)";
	struct nx_err err = { 0 };
	struct nx_duck *d = NULL;
	int64_t rows = 0, got[3];

	(void)state;
	/* the pass needs a database of one thread */
	assert_ok(nx_duck_open(&d, 1, NULL, &err), &err);
	nx_test_exf(d, "ATTACH ':memory:' AS tl");
	nx_test_exf(d, "%s", tables_sql);
	/* slices of 4 ns (times 0..11 in 3 rows, chunk 1 row): 400 - 10 is far more than a
	 * lateness of 8 allows */
	assert_int_not_equal(nx__lod_l0_pass(d, 0, select_sql, "*", "Instruction", 2, 0, 11, 3, 1,
					     8, &rows, got, &err),
			     0);
	assert_non_null(strstr(err.msg, "Instruction: the event starting at 10 ns"));
	memset(&err, 0, sizeof(err));
	assert_int_not_equal(nx__lod_l0_pass(d, 0, select_sql, "*", "Instruction", 63, 0, 11, 3,
					     1, 8, &rows, got, &err),
			     0);
	assert_non_null(strstr(err.msg, "Instruction: no pyramid level 63"));
	/* with the true lateness the three rows come through, in three slices */
	nx_test_exf(d, "%s", tables_sql);
	memset(&err, 0, sizeof(err));
	assert_ok(nx__lod_l0_pass(d, 0, select_sql, "*", "Instruction", 2, 0, 11, 3, 1, 390, &rows,
				  got, &err),
		  &err);
	assert_int_equal(got[0], 3);
	assert_int_equal(got[1], 0);
	assert_int_equal(got[2], 405);
	assert_int_equal(rows, 3);
	assert_int_equal(nx_test_qi(d, "SELECT count(*) FROM tl.ev0"), 3);
	assert_int_equal(nx_test_qi(d, "SELECT count(*) FROM (SELECT rowid, * FROM tl.lod0 EXCEPT "
				       "ALL SELECT * FROM (VALUES "
				       "(0, 2, 0, 0, 'a', 1, 5, 0, 5, 1, 0, 5, 'x'), "
				       "(1, 2, 2, 0, 'a', 1, 2, 10, 12, 3, 10, 12, 'z'), "
				       "(2, 2, 100, 0, 'a', 1, 5, 400, 405, 2, 400, 405, "
				       "'y')))"),
			 0);
	nx_duck_close(d);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_timeline_profile),
		cmocka_unit_test(test_rows_out_of_order_in_row_groups),
		cmocka_unit_test(test_fallbacks),
		cmocka_unit_test(test_late_rows_refused),
		cmocka_unit_test(test_enum_columns),
	};

	return nx_test_done(cmocka_run_group_tests(tests, nx_lod_group_setup,
						   nx_lod_group_teardown));
}
