/* SPDX-License-Identifier: MIT
 * test_lod_threads.c: the timeline cache's events part on two threads (Instruction on
 * one, the other event sources on a second connection to the same DuckDB database;
 * server/lod_build.c), on real parquet profiles and real DuckDB:
 *   - the caches built with NX_LOD_EVENTS_THREADS=1 (one thread, the reference) and with
 *     the default two threads hold the same tables, every one with the same rows at the
 *     same row ids, tl.tracks and tl.meta included (their rows in source order);
 *   - NX_LOD_EVENTS_THREADS other than 1 or 2 is a usage error naming it, and nothing
 *     of the cache is left;
 *   - a damaged table of either thread's sources fails the build with an error naming
 *     the source and the file, and leaves nothing;
 *   - Instruction's events shared by both threads (its first files on the first, the
 *     files after them on the second, L0's time slices of both halves merged): the same
 *     tables, row ids included, as with Instruction on one thread (NX_LOD_EVENTS_SPLIT=0)
 *     and as the one-thread build, on a table in start order but for a small lateness
 *     whose split falls inside a time slice; damaged rows in either half fail the build
 *     naming Instruction, and leave nothing;
 *   - Instruction's levels above L0 on both threads (every level split,
 *     NX_LOD_LEVELS_SPLIT_ROWS=1, the first thread waiting for the second by a test hook):
 *     the same tables, row ids included, as with the levels on the first thread
 *     (NX_LOD_LEVELS_SPLIT_ROWS=0) and as the one-thread build; a failure of the second
 *     thread's part of a level fails the build naming the table and the level, and
 *     leaves nothing; NX_LOD_LEVELS_SPLIT_ROWS not a whole number of rows is refused. */
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

static void test_two_threads_match_one(void **state)
{
	char *dir = nx_lod_timeline_profile("pair"), *ref = NULL;
	struct nx_duck *d;
	int64_t n, found;

	(void)state;
	assert_true(asprintf(&ref, "%s.one", dir) > 0);
	d = nx_lod_build_pair(dir, ref, "NX_LOD_EVENTS_THREADS", "1", NULL);
	/* both threads had sources: Instruction, and the DMA tables */
	assert_int_equal(nx_test_qi(d, "SELECT count(*) FROM a.meta WHERE src = 0"), 1);
	assert_true(nx_test_qi(d, "SELECT count(*) FROM a.meta WHERE src IN (1, 2)") > 0);
	n = nx_test_qi(d, "SELECT count(*) FROM duckdb_tables() WHERE database_name = 'a'");
	/* every table, row ids included: tl.tracks and tl.meta in the same order too */
	found = nx_lod_same_tables(d, false);
	assert_int_equal(found, n);
	assert_true(found >= 8); /* ev0..2, lod0..2, tracks, meta, ... */
	assert_true(nx_test_qi(d, "SELECT count(*) FROM a.tracks") > 0);
	nx_duck_close(d);
	free(dir);
	free(ref);
}

/* Each malformed value of the variable var is refused: the build fails naming var, and
 * leaves nothing. */
static void malformed_refused(const char *var, const char *tag, const char *const *bad,
			      size_t nbad)
{
	char *dir = nx_lod_timeline_profile(tag);
	struct nx_err err = { 0 };
	uint64_t n = 0;

	for (size_t i = 0; i < nbad; i++) {
		nx_err_clear(&err);
		assert_int_equal(setenv(var, bad[i], 1), 0);
		assert_int_equal(nx_lod_build_carried(dir, "t", &n, NULL, &err), NX_EUSAGE);
		unsetenv(var);
		if (!strstr(err.msg, var))
			fail_msg("%s=%s: %s", var, bad[i], err.msg);
		assert_int_equal(nx_test_sh("test -e '%s/.timeline'", dir), 1);
	}
	free(dir);
}

static void test_bad_thread_counts_refused(void **state)
{
	static const char *const bad[] = { "0", "3", "two", "-1" };

	(void)state;
	malformed_refused("NX_LOD_EVENTS_THREADS", "bad-count", bad, NX_ARRAY_SIZE(bad));
}

/* file of a copy of the profile cut to 100 bytes: the two-thread build fails naming the
 * source and the file, and leaves nothing. */
static void damaged_source_fails(const char *tag, const char *table)
{
	char *dir = nx_lod_timeline_profile(tag), *want = NULL;
	struct nx_err err = { 0 };
	uint64_t n = 0;

	assert_int_equal(nx_test_sh("truncate -s 100 '%s/%s.parquet'", dir, table), 0);
	assert_int_not_equal(nx_lod_build_carried(dir, "t", &n, NULL, &err), 0);
	assert_true(asprintf(&want, "the events of %s", table) > 0);
	if (!strstr(err.msg, want) || !strstr(err.msg, ".parquet"))
		fail_msg("%s: %s", table, err.msg);
	assert_int_equal(nx_test_sh("test -e '%s/.timeline'", dir), 1);
	free(want);
	free(dir);
}

static void test_either_thread_fails_naming_its_source(void **state)
{
	(void)state;
	damaged_source_fails("bad-inst", "Instruction"); /* the first thread */
	damaged_source_fails("bad-dma", "DmaPacket");    /* the second */
}

/* The timeline profile with an Instruction of 60,000 rows in start order but for a
 * lateness of a few ns (so the events are copied and L0 folded in one pass), in row
 * groups of 2048 rows, read as slices of 4 of them (NX_LOD_SLICE_GROUPS, set by the
 * caller): the split falls at a slice file's boundary, inside a time slice of L0. */
static char *split_profile(const char *tag)
{
	char *dir = nx_lod_timeline_profile(tag);

	assert_int_equal(nx_test_sh("rm -f '%s'/Instruction_*.parquet", dir), 0);
	assert_int_equal(
		nx_sfx_sqlf("COPY (SELECT i AS id, CASE WHEN i %% 13 = 0 THEN 1 ELSE 0 END::BIGINT "
			    "AS pcore_idx, (['Tensor','Vector','Sync'])[i %% 3 + 1] AS timeline_track, "
			    "(['MATMUL','LDWEIGHTS','ACTIVATE'])[(i // 3) %% 3 + 1] AS opcode, "
			    "(i * 10 + (i %% 5) * 3)::BIGINT AS start_ts, (i * 10 + (i %% 5) * 3 + "
			    "CASE WHEN i %% 997 = 0 THEN 5000 ELSE 1 + hash(i) %% 40 END)::BIGINT "
			    "AS end_ts FROM range(60000) t(i) ORDER BY i) TO '%s/Instruction.parquet' "
			    "(FORMAT parquet, ROW_GROUP_SIZE 2048)", dir),
		0);
	return dir;
}

static void split_env(bool on)
{
	setenv("NX_LOD_SLICE_GROUPS", "4", 1);
	setenv("NX_LOD_CHUNK_ROWS", "10000", 1);
	if (!on)
		setenv("NX_LOD_EVENTS_SPLIT", "0", 1);
}

static void split_env_clear(void)
{
	unsetenv("NX_LOD_SLICE_GROUPS");
	unsetenv("NX_LOD_CHUNK_ROWS");
	unsetenv("NX_LOD_EVENTS_SPLIT");
}

/* Every table of the caches a and b (attached to d) holds the same rows at the same row
 * ids; the count of tables compared. */

static void test_split_matches_one_pass(void **state)
{
	static const char *const ref_var[] = { "NX_LOD_EVENTS_SPLIT", "NX_LOD_EVENTS_THREADS" };
	char *dir = split_profile("split"), *ref = NULL, *probe = NULL;
	struct nx_lod_phases ph = { 0 };
	struct nx_err err = { 0 };
	bool second = false;
	uint64_t n = 0;

	(void)state;
	/* the split happens: the second thread has a phase of Instruction's second half */
	assert_true(asprintf(&probe, "%s.probe", dir) > 0);
	assert_int_equal(nx_test_sh("cp -r '%s' '%s'", dir, probe), 0);
	split_env(true);
	assert_ok(nx_lod_build_carried(probe, "p", &n, &ph, &err), &err);
	for (size_t i = 0; i < ph.n; i++)
		second |= strstr(ph.ph[i].name, "Instruction, second half") != NULL;
	assert_true(second);
	assert_int_equal(n, 60000 + 1000); /* Instruction and DmaPacketAggregated */
	for (size_t k = 0; k < NX_ARRAY_SIZE(ref_var); k++) {
		struct nx_duck *d;

		assert_true(asprintf(&ref, "%s.ref%zu", dir, k) > 0);
		assert_int_equal(nx_test_sh("rm -rf '%s/.timeline'", dir), 0);
		split_env(true);
		d = nx_lod_build_pair(dir, ref, ref_var[k], k ? "1" : "0", NULL);
		assert_true(nx_lod_same_tables(d, false) >= 8);
		/* the pass folded L0: the table was in start order, and the level has rows of
		 * time slices on both sides of the split */
		assert_int_equal(nx_test_qi(d, "SELECT count(*) FROM a.meta WHERE src = 0 AND "
					       "ordered"), 1);
		assert_int_equal(nx_test_qi(d, "SELECT count(*) FROM a.ev0"), 60000);
		assert_true(nx_test_qi(d, "SELECT count(*) FROM a.lod0 WHERE k > 0") > 100);
		nx_duck_close(d);
		free(ref);
	}
	split_env_clear();
	free(probe);
	free(dir);
}

/* The profile of split_profile with the start_ts page of row group rg of Instruction
 * overwritten: the split build fails naming Instruction, and leaves nothing. */
static void split_half_fails(const char *tag, int rg)
{
	char *dir = split_profile(tag);
	struct nx_err err = { 0 };
	struct nx_duck *d = NULL;
	int64_t at;
	uint64_t n = 0;

	assert_ok(nx_duck_open(&d, 1, NULL, &err), &err);
	at = nx_test_qi(d, "SELECT data_page_offset FROM parquet_metadata('%s/Instruction.parquet') "
			   "WHERE path_in_schema = 'start_ts' AND row_group_id = %d", dir, rg);
	nx_duck_close(d);
	assert_true(at > 4);
	assert_int_equal(nx_test_sh("head -c 64 /dev/zero | tr '\\0' '\\377' | dd "
				    "of='%s/Instruction.parquet' bs=1 seek=%lld conv=notrunc "
				    "2>/dev/null", dir, (long long)at), 0);
	split_env(true);
	assert_int_not_equal(nx_lod_build_carried(dir, "t", &n, NULL, &err), 0);
	split_env_clear();
	/* the half that read the rows says why, not the other's wait for it */
	if (!strstr(err.msg, "the events of Instruction") || strstr(err.msg, "second half"))
		fail_msg("row group %d: %s", rg, err.msg);
	assert_int_equal(nx_test_sh("test -e '%s/.timeline'", dir), 1);
	free(dir);
}

static void test_either_half_fails(void **state)
{
	(void)state;
	split_half_fails("split-bad-first", 1);   /* of the first files */
	split_half_fails("split-bad-second", 28); /* of the last */
}

/* Every level of Instruction's pyramid split between the two threads. */
static void levels_env(int mode)
{
	split_env(true);
	setenv("NX_LOD_LEVELS_SPLIT_ROWS", "1", 1);
	nx__lod_levels_test_hook(mode, 0);
}

static void levels_env_clear(void)
{
	split_env_clear();
	unsetenv("NX_LOD_LEVELS_SPLIT_ROWS");
	nx__lod_levels_test_hook(0, 0);
}

/* Instruction's levels split (mode: nx__lod_levels_test_hook's, the parts offered at each
 * level's start, or after its first slice) match the levels on the first thread and the
 * one-thread build. */
static void levels_split_match(const char *tag, int mode)
{
	static const char *const ref_var[] = { "NX_LOD_LEVELS_SPLIT_ROWS",
					       "NX_LOD_EVENTS_THREADS" };
	char *dir = split_profile(tag), *ref = NULL, *probe = NULL;
	struct nx_lod_phases ph = { 0 };
	struct nx_err err = { 0 };
	bool second = false;
	uint64_t n = 0;

	/* the second thread built parts of the levels */
	assert_true(asprintf(&probe, "%s.probe", dir) > 0);
	assert_int_equal(nx_test_sh("cp -r '%s' '%s'", dir, probe), 0);
	levels_env(mode);
	assert_ok(nx_lod_build_carried(probe, "p", &n, &ph, &err), &err);
	for (size_t i = 0; i < ph.n; i++)
		second |= strstr(ph.ph[i].name, "tl.lod Instruction L") &&
			  strstr(ph.ph[i].name, ", second thread");
	assert_true(second);
	for (size_t k = 0; k < NX_ARRAY_SIZE(ref_var); k++) {
		struct nx_duck *d;

		assert_true(asprintf(&ref, "%s.lref%zu", dir, k) > 0);
		assert_int_equal(nx_test_sh("rm -rf '%s/.timeline'", dir), 0);
		levels_env(mode);
		d = nx_lod_build_pair(dir, ref, ref_var[k], k ? "1" : "0", NULL);
		assert_true(nx_lod_same_tables(d, false) >= 8);
		/* levels above L0, several of them with buckets on both sides of a cut */
		assert_true(nx_test_qi(d, "SELECT count(DISTINCT level) FROM a.lod0") > 5);
		assert_int_equal(nx_test_qi(d, "SELECT count(*) FROM a.lod0"),
				 nx_test_qi(d, "SELECT count(*) FROM b.lod0"));
		nx_duck_close(d);
		free(ref);
	}
	levels_env_clear();
	free(probe);
	free(dir);
}

static void test_levels_split_match_one_thread(void **state)
{
	(void)state;
	levels_split_match("levels", 1);
	levels_split_match("levels-mid", 2);
}

static void test_levels_second_part_fails(void **state)
{
	char *dir = split_profile("levels-bad");
	struct nx_err err = { 0 };
	uint64_t n = 0;
	int lo;
	struct nx_duck *d = NULL;

	(void)state;
	/* L0 of Instruction in a build without the hook, then a build whose second part of
	 * the level above L0 + 2 fails */
	levels_env(1);
	assert_ok(nx_lod_build_carried(dir, "p", &n, NULL, &err), &err);
	assert_ok(nx_duck_open(&d, 1, NULL, &err), &err);
	nx_test_exf(d, "ATTACH '%s/.timeline/timeline.duckdb' AS c (READ_ONLY)", dir);
	lo = (int)nx_test_qi(d, "SELECT lo FROM c.meta WHERE src = 0");
	nx_duck_close(d);
	assert_int_equal(nx_test_sh("rm -rf '%s/.timeline'", dir), 0);
	nx__lod_levels_test_hook(1, lo + 2);
	assert_int_not_equal(nx_lod_build_carried(dir, "t", &n, NULL, &err), 0);
	levels_env_clear();
	{
		char want[64];

		snprintf(want, sizeof(want), "level %d of tl.lod0", lo + 2);
		if (!strstr(err.msg, want) || !strstr(err.msg, "Instruction") ||
		    !strstr(err.msg, "a test's failure"))
			fail_msg("%s", err.msg);
	}
	assert_int_equal(nx_test_sh("test -e '%s/.timeline'", dir), 1);
	free(dir);
}

static void test_levels_split_rows_refused(void **state)
{
	static const char *const bad[] = { "-1", "x", "1000000001", "1e6" };

	(void)state;
	malformed_refused("NX_LOD_LEVELS_SPLIT_ROWS", "levels-env", bad, NX_ARRAY_SIZE(bad));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_two_threads_match_one),
		cmocka_unit_test(test_bad_thread_counts_refused),
		cmocka_unit_test(test_either_thread_fails_naming_its_source),
		cmocka_unit_test(test_split_matches_one_pass),
		cmocka_unit_test(test_either_half_fails),
		cmocka_unit_test(test_levels_split_match_one_thread),
		cmocka_unit_test(test_levels_second_part_fails),
		cmocka_unit_test(test_levels_split_rows_refused),
	};

	return nx_test_done(cmocka_run_group_tests(tests, nx_lod_group_setup,
						   nx_lod_group_teardown));
}
