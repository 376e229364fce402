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
 *     the source and the file, and leaves nothing. */
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

/* The timeline profile of the servers' tests (Instruction, DmaPacketAggregated,
 * DmaPacket, counters) in nx_lod_root/<tag>: its directory (caller frees). */
static char *timeline_profile(const char *tag)
{
	char *data = NULL, *dir = NULL;

	assert_true(asprintf(&data, "%s/%s", nx_lod_root, tag) > 0);
	assert_true(asprintf(&dir, "%s/profiles/global/t@latest", data) > 0);
	assert_int_equal(nx_sfx_make_timeline_profile(data, "t", true), 0);
	free(data);
	return dir;
}

static void test_two_threads_match_one(void **state)
{
	static const char *const tables[] = { "ev0", "ev1",    "ev2",  "ev3",   "lod0",
					       "lod1", "lod2",   "lod3", "tracks", "meta",
					       "ctr", "ctr_lod", "lines", "stamp" };
	char *dir = timeline_profile("pair"), *ref = NULL;
	struct nx_duck *d;
	int64_t n, found = 0;

	(void)state;
	assert_true(asprintf(&ref, "%s.one", dir) > 0);
	d = nx_lod_build_pair(dir, ref, "NX_LOD_EVENTS_THREADS", "1", NULL);
	/* both threads had sources: Instruction, and the DMA tables */
	assert_int_equal(nx_test_qi(d, "SELECT count(*) FROM a.meta WHERE src = 0"), 1);
	assert_true(nx_test_qi(d, "SELECT count(*) FROM a.meta WHERE src IN (1, 2)") > 0);
	n = nx_test_qi(d, "SELECT count(*) FROM duckdb_tables() WHERE database_name = 'a'");
	assert_int_equal(n, nx_test_qi(d, "SELECT count(*) FROM duckdb_tables() WHERE "
					  "database_name = 'b'"));
	/* every table, row ids included: tl.tracks and tl.meta in the same order too */
	for (size_t i = 0; i < NX_ARRAY_SIZE(tables); i++) {
		if (!nx_test_qi(d, "SELECT count(*) FROM duckdb_tables() WHERE database_name = "
				   "'a' AND table_name = '%s'", tables[i]))
			continue;
		nx_test_same_rows(d, "a", "b", tables[i], true);
		found++;
	}
	assert_int_equal(found, n);
	assert_true(found >= 8); /* ev0..2, lod0..2, tracks, meta, ... */
	assert_true(nx_test_qi(d, "SELECT count(*) FROM a.tracks") > 0);
	nx_duck_close(d);
	free(dir);
	free(ref);
}

static void test_bad_thread_counts_refused(void **state)
{
	static const char *const bad[] = { "0", "3", "two", "-1" };
	char *dir = timeline_profile("bad-count");
	struct nx_err err = { 0 };
	uint64_t n = 0;

	(void)state;
	for (size_t i = 0; i < NX_ARRAY_SIZE(bad); i++) {
		nx_err_clear(&err);
		assert_int_equal(setenv("NX_LOD_EVENTS_THREADS", bad[i], 1), 0);
		assert_int_equal(nx_lod_build_carried(dir, "t", &n, NULL, &err), NX_EUSAGE);
		unsetenv("NX_LOD_EVENTS_THREADS");
		if (!strstr(err.msg, "NX_LOD_EVENTS_THREADS"))
			fail_msg("NX_LOD_EVENTS_THREADS=%s: %s", bad[i], err.msg);
		assert_int_equal(nx_test_sh("test -e '%s/.timeline'", dir), 1);
	}
	free(dir);
}

/* file of a copy of the profile cut to 100 bytes: the two-thread build fails naming the
 * source and the file, and leaves nothing. */
static void damaged_source_fails(const char *tag, const char *table)
{
	char *dir = timeline_profile(tag), *want = NULL;
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

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_two_threads_match_one),
		cmocka_unit_test(test_bad_thread_counts_refused),
		cmocka_unit_test(test_either_thread_fails_naming_its_source),
	};

	return nx_test_done(cmocka_run_group_tests(tests, nx_lod_group_setup,
						   nx_lod_group_teardown));
}
