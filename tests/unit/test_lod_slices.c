/* SPDX-License-Identifier: MIT
 * test_lod_slices.c: the timeline cache build reads a large table file as slices of its
 * row groups (server/lod_slices.c, db/parquet_slice.h), on real DuckDB and real parquet:
 *   - a profile whose Instruction.parquet has 200 row groups, built with slices of 16
 *     of them (13 slices) and with every file read whole (NX_LOD_SLICE_GROUPS=0): every
 *     table of the two caches holds the same rows in the same order (EXCEPT ALL both
 *     ways, rowid included; tl.tracks, a GROUP BY without an order, in any order), and
 *     the build leaves no slice behind;
 *   - the same without a source location in Instruction: tl.lines is empty either way
 *     (the build reads the slices' statistics instead of scanning);
 *   - the same for a table of two files whose row groups overlap (the events are then
 *     sorted);
 *   - a large file with a damaged footer: the build fails with an error naming the file,
 *     leaves no cache and no slice, and the profile's file is untouched;
 *   - nx_pq_each_slice: the pieces it passes, kept or removed, and a slice file already
 *     there (not ours) is neither overwritten nor removed. */
#include "common/compat.h"
#include "server/lod_carried.h"
#include "db/duck.h"
#include "db/parquet_slice.h"
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
#include <sys/stat.h>
#include <cmocka.h>

/* Rows per row group of the big table, and its row groups */
#define GROUP_ROWS 2048
#define GROUPS 200

/* Instruction of GROUPS row groups (in start order, on 3 cores and 6 tracks, with source
 * lines on a third of the rows when located, else none), DmaPacket, and SbufUsage. */
static int make_many_groups_profile(const char *dir, bool located)
{
	if (nx_test_sh("mkdir -p '%s'", dir))
		return -1;
	return nx_sfx_sqlf(
		"COPY (SELECT i AS id, (i %% 3)::BIGINT AS pcore_idx, 'tr' || (i %% 6) AS "
		"timeline_track, 'op' || (i %% 5) AS opcode, (i * 7)::BIGINT AS start_ts, "
		"(i * 7 + 3 + hash(i) %% 40)::BIGINT AS end_ts, "
		"(3 + hash(i) %% 40)::BIGINT AS duration_ns, NULL::VARCHAR AS "
		"nki_source_location, CASE WHEN i %% 3 = 0 AND %s THEN 'k.py:' || (i %% 11) "
		"END AS bir_debug_info_source_location FROM range(%d) t(i) ORDER BY "
		"start_ts, id) TO '%s/Instruction.parquet' (FORMAT parquet, ROW_GROUP_SIZE "
		"%d); "
		"COPY (SELECT i AS id, 0::BIGINT AS pcore_idx, 'q' || (i %% 3) AS queue_name, "
		"(i * 90)::BIGINT AS start_ts, (i * 90 + 60)::BIGINT AS end_ts "
		"FROM range(5000) t(i)) TO '%s/DmaPacket.parquet' (FORMAT parquet); "
		"COPY (SELECT (i %% 2)::BIGINT AS pcore_idx, (i * 500)::BIGINT AS timestamp, "
		"(i %% 10) / 10.0 AS avg_util_percent FROM range(3000) t(i)) TO "
		"'%s/SbufUsage.parquet' (FORMAT parquet)",
		located ? "true" : "false", GROUPS * GROUP_ROWS, dir, GROUP_ROWS, dir,
		dir);
}

static uint32_t row_groups(const char *path)
{
	struct nx_pq_slicer *s = NULL;
	struct nx_err err = { 0 };
	uint32_t n;

	assert_ok(nx_pq_slicer_open(&s, path, &err), &err);
	n = nx_pq_slicer_row_groups(s);
	nx_pq_slicer_close(s);
	return n;
}

/* Builds the cache of profile dir with slices of `groups` row groups, and of a copy of it
 * (dir.whole) with every file read whole, and checks that every table of the two holds
 * the same rows in the same order; returns the events. *lines gets tl.lines' rows. */
static uint64_t compare_builds(const char *dir, const char *groups, int64_t *lines)
{
	struct nx_duck *d;
	uint64_t events = 0;
	static const char *const tables[] = { "ev0",  "ev1",  "ev2",  "ev3",    "lod0",
					       "lod1", "lod2", "lod3", "ctr",    "ctr_burst", "ctr_lod",
					       "tracks", "meta", "lines" };
	char *whole = NULL;
	int64_t n, found = 0;

	assert_true(asprintf(&whole, "%s.whole", dir) > 0);
	setenv("NX_LOD_SLICE_GROUPS", groups, 1);
	d = nx_lod_build_pair(dir, whole, "NX_LOD_SLICE_GROUPS", "0", &events);
	/* no slice (nor anything else) left beside the cache */
	assert_int_equal(nx_test_sh("test -z \"$(ls -A '%s/.timeline' | grep -v '^timeline\\.')\"",
				    dir), 0);
	for (size_t i = 0; i < sizeof(tables) / sizeof(tables[0]); i++) {
		const char *t = tables[i];

		if (!nx_test_qi(d, "SELECT count(*) FROM duckdb_tables() WHERE database_name = 'a' "
				   "AND table_name = '%s'", t))
			continue;
		found++;
		/* tl.tracks is a GROUP BY without an order: its rows in any order */
		nx_test_same_rows(d, "a", "b", t, strcmp(t, "tracks") != 0);
	}
	/* every table but the stamp was compared, and both caches have the same ones */
	n = nx_test_qi(d, "SELECT count(*) FROM duckdb_tables() WHERE database_name = 'a' AND "
			  "table_name <> 'stamp'");
	assert_int_equal(n, found);
	assert_int_equal(n, nx_test_qi(d, "SELECT count(*) FROM duckdb_tables() WHERE "
					  "database_name = 'b' AND table_name <> 'stamp'"));
	*lines = nx_test_qi(d, "SELECT count(*) FROM a.lines");
	nx_duck_close(d);
	free(whole);
	return events;
}

static void many_row_groups(bool located)
{
	char *dir = NULL, *path = NULL;
	struct nx_err err = { 0 };
	struct nx_duck *d = NULL;
	int64_t lines = 0;

	assert_true(asprintf(&dir, "%s/many-%d", nx_lod_root, located) > 0);
	assert_int_equal(make_many_groups_profile(dir, located), 0);
	assert_true(asprintf(&path, "%s/Instruction.parquet", dir) > 0);
	assert_true(row_groups(path) >= GROUPS);
	assert_true(compare_builds(dir, "16", &lines) >= (uint64_t)GROUPS * GROUP_ROWS);
	/* 11 lines; none when no row has a location (the scan is skipped, as a single
	 * file's statistics let DuckDB skip it) */
	assert_int_equal(lines, located ? 11 : 0);
	/* in start order, as the row groups' statistics in the slices' footers say */
	assert_ok(nx_duck_open(&d, 1, NULL, &err), &err);
	nx_test_exf(d, "ATTACH '%s/.timeline/timeline.duckdb' AS a (READ_ONLY)", dir);
	assert_int_equal(nx_test_qi(d, "SELECT ordered::INT FROM a.meta WHERE src = 0"), 1);
	nx_duck_close(d);
	free(path);
	free(dir);
}

static void test_many_row_groups_read_in_slices(void **state)
{
	(void)state;
	many_row_groups(true);
}

static void test_many_row_groups_without_locations(void **state)
{
	(void)state;
	many_row_groups(false);
}

/* Instruction in two files, each in start order or not (the row groups of the second
 * overlap the first's either way, so the events are sorted): slices of 2 of their
 * 4096-row groups. */
static void two_files(bool ordered)
{
	char *data = NULL, *dir = NULL;
	int64_t lines = 0;

	assert_true(asprintf(&data, "%s/two-%d", nx_lod_root, ordered) > 0);
	assert_true(asprintf(&dir, "%s/profiles/global/t@latest", data) > 0);
	assert_int_equal(nx_sfx_make_timeline_profile(data, "t", ordered), 0);
	compare_builds(dir, "2", &lines);
	assert_true(lines > 0);
	free(data);
	free(dir);
}

static void test_two_files_in_start_order(void **state)
{
	(void)state;
	two_files(true);
}

static void test_two_files_out_of_order(void **state)
{
	(void)state;
	two_files(false);
}

/* A large file whose footer is damaged: the error names it; no cache, no slice left. */
static void test_damaged_large_file_refused(void **state)
{
	char *dir = NULL, *path = NULL;
	struct nx_err err = { 0 };
	uint64_t events = 0;
	struct stat st;
	off_t size;

	(void)state;
	assert_true(asprintf(&dir, "%s/bad", nx_lod_root) > 0);
	assert_int_equal(make_many_groups_profile(dir, true), 0);
	assert_true(asprintf(&path, "%s/Instruction.parquet", dir) > 0);
	assert_int_equal(stat(path, &st), 0);
	size = st.st_size;
	/* overwrite 64 bytes in the middle of the footer with 0xff */
	assert_int_equal(nx_test_sh("f='%s'; n=$(stat -c %%s \"$f\"); len=$(tail -c 8 \"$f\" | "
				    "head -c 4 | od -An -tu4 | tr -d ' '); printf '\\377%%.0s' "
				    "$(seq 64) | dd of=\"$f\" bs=1 seek=$((n - 8 - len / 2)) "
				    "conv=notrunc status=none", path), 0);
	setenv("NX_LOD_SLICE_GROUPS", "16", 1);
	assert_int_not_equal(nx_lod_build_carried(dir, "p", &events, NULL, &err), 0);
	unsetenv("NX_LOD_SLICE_GROUPS");
	assert_non_null(strstr(err.msg, path));
	assert_int_not_equal(nx_test_sh("test -e '%s/.timeline'", dir), 0);
	assert_int_equal(nx_test_sh("test -z \"$(ls -A '%s' | grep -v '\\.parquet$')\"", dir), 0);
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_size, size);
	free(path);
	free(dir);
}

struct pieces {
	char paths[16][512];
	uint32_t n;
};

static int keep_piece(void *arg, const char *path, uint32_t index, struct nx_err *err)
{
	struct pieces *p = arg;

	(void)err;
	assert_int_equal(index, p->n);
	assert_true(p->n < 16);
	snprintf(p->paths[p->n++], sizeof(p->paths[0]), "%s", path);
	return 0;
}

static int fail_third(void *arg, const char *path, uint32_t index, struct nx_err *err)
{
	keep_piece(arg, path, index, err);
	return index == 2 ? nx_errf(err, NX_EDB, "stopped at piece %u", index) : 0;
}

static void test_each_slice(void **state)
{
	char *dir = NULL, *path = NULL, *out = NULL, *taken = NULL;
	struct nx_err err = { 0 };
	struct pieces p = { 0 };
	uint32_t n = 0;

	(void)state;
	assert_true(asprintf(&dir, "%s/each", nx_lod_root) > 0);
	assert_true(asprintf(&out, "%s/out", dir) > 0);
	assert_int_equal(make_many_groups_profile(dir, true), 0);
	assert_int_equal(nx_test_sh("mkdir -p '%s'", out), 0);
	assert_true(asprintf(&path, "%s/Instruction.parquet", dir) > 0);
	/* kept: 4 slices of 64, 64, 64 and 8 or more row groups, read back whole */
	assert_ok(nx_pq_each_slice(path, 64, out, "s", true, keep_piece, &p, &n, &err), &err);
	assert_int_equal(n, 4);
	assert_int_equal(p.n, 4);
	uint32_t sum = 0;
	for (uint32_t i = 0; i < p.n; i++)
		sum += row_groups(p.paths[i]);
	assert_int_equal(sum, row_groups(path));
	assert_int_equal(nx_test_sh("rm '%s'/s-*.parquet", out), 0);
	/* not kept: nothing left; a file of few row groups is passed whole */
	memset(&p, 0, sizeof(p));
	assert_ok(nx_pq_each_slice(path, 64, out, "s", false, keep_piece, &p, &n, &err), &err);
	assert_int_equal(nx_test_sh("test -z \"$(ls -A '%s')\"", out), 0);
	memset(&p, 0, sizeof(p));
	assert_ok(nx_pq_each_slice(path, 1000, out, "s", true, keep_piece, &p, &n, &err), &err);
	assert_int_equal(n, 1);
	assert_string_equal(p.paths[0], path);
	/* a failure at the third piece removes the two kept before it */
	memset(&p, 0, sizeof(p));
	assert_int_equal(nx_pq_each_slice(path, 64, out, "s", true, fail_third, &p, &n, &err),
			 NX_EDB);
	assert_int_equal(n, 0);
	assert_int_equal(nx_test_sh("test -z \"$(ls -A '%s')\"", out), 0);
	/* a file already where a slice goes is not ours: refused, kept as it was */
	assert_true(asprintf(&taken, "%s/s-1.parquet", out) > 0);
	assert_int_equal(nx_test_sh("echo mine > '%s'", taken), 0);
	memset(&p, 0, sizeof(p));
	memset(&err, 0, sizeof(err));
	assert_int_not_equal(nx_pq_each_slice(path, 64, out, "s", true, keep_piece, &p, &n, &err),
			     0);
	assert_non_null(strstr(err.msg, taken));
	assert_int_equal(nx_test_sh("test \"$(cat '%s')\" = mine && test -z \"$(ls -A '%s' | "
				    "grep -v '^s-1\\.parquet$')\"", taken, out), 0);
	assert_int_equal(nx_pq_each_slice(path, 0, out, "s", true, keep_piece, &p, &n, &err),
			 NX_EUSAGE);
	free(taken);
	free(path);
	free(out);
	free(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_many_row_groups_read_in_slices),
		cmocka_unit_test(test_many_row_groups_without_locations),
		cmocka_unit_test(test_two_files_in_start_order),
		cmocka_unit_test(test_two_files_out_of_order),
		cmocka_unit_test(test_damaged_large_file_refused),
		cmocka_unit_test(test_each_slice),
	};

	return nx_test_done(cmocka_run_group_tests(tests, nx_lod_group_setup,
						   nx_lod_group_teardown));
}
