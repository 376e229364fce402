/* SPDX-License-Identifier: MIT
 * test_lod_carried_parts.c: the timeline cache `view` builds in two parts, the events
 * beside its derive stage and the rest at the end (server/lod_carried.h), on real
 * profiles, real DuckDB and the real `view`:
 *   - the two parts give the cache the whole build gives, table for table and row for
 *     row (at the same row ids where the build defines an order), and the stamp of the
 *     whole build;
 *   - once `view` waits for the events part (its tables written), the counters (tl.ctr,
 *     tl.ctr_lod) and the per-line summary are built beside the events, before the rest,
 *     whose rows of tl.tracks and tl.meta come in their place: the same cache, also
 *     when a burst's rows move from tl.ctr to tl.ctr_burst before those rows are written;
 *   - the stamp hashes the tables as they are when the rest is built: the split table's
 *     parts joined after the events part, it is the whole build's over the joined files;
 *   - `view` (both parts) and `view` with NX_VIEW_CACHE_SERIAL=1 (one build at the end)
 *     carry the same cache;
 *   - the events part failing (a damaged DmaPacket), the counters beside it failing (a
 *     damaged SbufUsage), an abort while the events part runs or after it: nothing of the cache
 *     is left, and the error names the file; a .timeline that was there before is left
 *     alone. */
#include "common/compat.h"
#include "server/lod_carried.h"
#include "db/duck.h"
#include "db/parquet_concat.h"
#include "helper/asserts.h"
#include "helper/fixture.h"
#include "helper/profile_db.h"
#include "helper/server_fixture.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

static char *root, *profile;

static int setup(void **state)
{
	char *data = NULL;
	int rc;

	(void)state;
	root = nx_sfx_tmpdir("lod-parts");
	if (!root || asprintf(&data, "%s/data", root) < 0 ||
	    asprintf(&profile, "%s/profiles/global/t@latest", data) < 0)
		return -1;
	rc = nx_sfx_make_timeline_profile(data, "t", true);
	free(data);
	return rc;
}

static int teardown(void **state)
{
	(void)state;
	free(root);
	free(profile);
	return 0;
}

/* A fresh copy of the timeline profile, root/<tag>. */
static char *copy_of(const char *tag)
{
	char *dir = NULL;

	assert_true(asprintf(&dir, "%s/%s", root, tag) > 0);
	assert_int_equal(nx_test_sh("rm -rf '%s' && cp -r '%s' '%s'", dir, profile, dir), 0);
	return dir;
}

static int two_parts(const char *dir, uint64_t *events, struct nx_err *err)
{
	struct nx_lod_carried_job *job = nx_lod_carried_start(dir, "p");

	assert_non_null(job);
	return nx_lod_carried_finish(job, events, NULL, err);
}

/* The caches of a and b (profile directories) hold the same tables, row for row at the
 * same row ids, and their stamps differ at most in the file's size; with lines, a's has
 * a per-line summary with rows. */
static void same_caches(const char *a, const char *b, bool lines)
{
	static const char *const tables[] = { "ev0", "ev1", "ev2", "lod", "ctr", "ctr_lod",
					      "ctr_burst", "tracks", "meta", "lines", "stamp" };
	struct nx_err err = { 0 };
	struct nx_duck *d = NULL;

	assert_ok(nx_duck_open(&d, 2, NULL, &err), &err);
	nx_test_exf(d, "ATTACH '%s/.timeline/timeline.duckdb' AS a (READ_ONLY); "
		       "ATTACH '%s/.timeline/timeline.duckdb' AS b (READ_ONLY)", a, b);
	for (size_t i = 0; i < sizeof(tables) / sizeof(tables[0]); i++) {
		const char *t = tables[i];

		if (!nx_test_qi(d, "SELECT count(*) FROM duckdb_tables() WHERE database_name = "
				   "'b' AND table_name = '%s'", t))
			continue;
		assert_int_equal(nx_test_qi(d, "SELECT count(*) FROM a.%s", t),
				 nx_test_qi(d, "SELECT count(*) FROM b.%s", t));
		/* tl.tracks (grouped) and tl.lines (sorted by a time that ties) have no
		 * defined row order: the same rows */
		bool any_order = !strcmp(t, "tracks") || !strcmp(t, "lines");
		const char *id = any_order ? "" : "rowid, ";

		assert_int_equal(nx_test_qi(d, "SELECT count(*) FROM (SELECT %s* FROM a.%s EXCEPT "
					       "ALL SELECT %s* FROM b.%s)", id, t, id, t), 0);
	}
	assert_int_equal(nx_test_qi(d, "SELECT count(*) FROM duckdb_tables() WHERE "
				       "database_name = 'a'"),
			 nx_test_qi(d, "SELECT count(*) FROM duckdb_tables() WHERE "
				       "database_name = 'b'"));
	if (lines)
		assert_true(nx_test_qi(d, "SELECT count(*) FROM a.lines") > 0);
	nx_duck_close(d);
	assert_int_equal(nx_test_sh("[ \"$(grep -v '^bytes' '%s/.timeline/timeline.stamp')\" "
				    "= \"$(grep -v '^bytes' '%s/.timeline/timeline.stamp')\" ]",
				    a, b), 0);
}

static void test_parts_make_the_whole(void **state)
{
	char *whole = copy_of("whole"), *parts = copy_of("parts");
	struct nx_err err = { 0 };
	uint64_t n_whole = 0, n_parts = 0;

	(void)state;
	assert_ok(nx_lod_build_carried(whole, "p", &n_whole, NULL, &err), &err);
	assert_ok(two_parts(parts, &n_parts, &err), &err);
	assert_int_equal(n_whole, n_parts);
	assert_true(n_parts > 0);
	same_caches(whole, parts, false);
	free(whole);
	free(parts);
}

/* The parts of Instruction joined between the two parts, as the ingest joins them: the
 * stamp is the one of the joined files. */
static void test_stamp_of_the_tables_as_finished(void **state)
{
	char *whole = copy_of("joined-whole"), *parts = copy_of("joined-parts");
	struct nx_lod_carried_job *job;
	struct nx_err err = { 0 };
	uint64_t n = 0;

	(void)state;
	assert_ok(nx_parquet_join_split_tables(whole, NULL, NULL, &err), &err);
	assert_ok(nx_lod_build_carried(whole, "p", &n, NULL, &err), &err);
	job = nx_lod_carried_start(parts, "p");
	assert_non_null(job);
	nx_lod_carried_wait(job);
	assert_ok(nx_parquet_join_split_tables(parts, NULL, NULL, &err), &err);
	assert_int_equal(nx_test_sh("test -f '%s/Instruction.parquet' && ! test -e "
				    "'%s/Instruction_0.parquet'", parts, parts), 0);
	assert_ok(nx_lod_carried_finish(job, &n, NULL, &err), &err);
	same_caches(whole, parts, false);
	free(whole);
	free(parts);
}

/* The events part's wait lets it build the counters and the per-line summary beside the
 * events: they are in the cache once the wait returns (the rest built them before), with
 * the counters' rows of tl.tracks and tl.meta not yet (the rest writes them after the
 * events' rows, as the whole build does); then the same cache as the whole build's. */
static void test_counters_beside_the_events(void **state)
{
	char *whole = copy_of("early-whole"), *parts = copy_of("early-parts");
	struct nx_lod_carried_job *job;
	struct nx_err err = { 0 };
	struct nx_duck *d = NULL;
	uint64_t n = 0;

	(void)state;
	assert_ok(nx_lod_build_carried(whole, "p", &n, NULL, &err), &err);
	job = nx_lod_carried_start(parts, "p");
	assert_non_null(job);
	nx_lod_carried_wait(job);
	assert_ok(nx_duck_open(&d, 1, NULL, &err), &err);
	nx_test_exf(d, "ATTACH '%s/.timeline/timeline.duckdb' AS p (READ_ONLY)", parts);
	assert_true(nx_test_qi(d, "SELECT count(*) FROM p.ctr") > 0);
	assert_true(nx_test_qi(d, "SELECT count(*) FROM p.ctr_lod") > 0);
	assert_int_equal(nx_test_qi(d, "SELECT count(*) FROM duckdb_tables() WHERE "
				       "database_name = 'p' AND table_name = 'lines'"), 1);
	assert_int_equal(nx_test_qi(d, "SELECT count(*) FROM p.tracks WHERE kind = 'counter'"), 0);
	assert_int_equal(nx_test_qi(d, "SELECT count(*) FROM p.meta WHERE src = -1"), 0);
	nx_duck_close(d);
	assert_ok(nx_lod_carried_finish(job, &n, NULL, &err), &err);
	same_caches(whole, parts, false);
	free(whole);
	free(parts);
}

/* dir's SemaphoreUpdate replaced by a series whose values crowd into a burst (t5020's):
 * the counters' dense cells move to tl.ctr_burst. */
static void with_burst(const char *dir)
{
	struct nx_err err = { 0 };
	struct nx_duck *d = NULL;

	assert_ok(nx_duck_open(&d, 1, NULL, &err), &err);
	nx_test_exf(d, "COPY (SELECT 0 AS pcore_idx, i * 1000000 AS timestamp, 1 AS id, "
		       "(i %% 7)::DOUBLE AS value FROM range(1000) r(i) UNION ALL SELECT 0, "
		       "300000001 + i * 10, 1, (i %% 13)::DOUBLE FROM range(50000) r(i) ORDER BY "
		       "timestamp) TO '%s/SemaphoreUpdate.parquet' (FORMAT parquet)", dir);
	nx_duck_close(d);
}

/* The same with a burst: the counters' rows of tl.tracks, written after the bursts' rows
 * left tl.ctr, still count them. */
static void test_counters_with_a_burst_beside_the_events(void **state)
{
	char *whole = copy_of("burst-whole"), *parts = copy_of("burst-parts");
	struct nx_err err = { 0 };
	struct nx_duck *d = NULL;
	uint64_t n = 0;

	(void)state;
	with_burst(whole);
	with_burst(parts);
	assert_ok(nx_lod_build_carried(whole, "p", &n, NULL, &err), &err);
	assert_ok(two_parts(parts, &n, &err), &err);
	same_caches(whole, parts, false);
	assert_ok(nx_duck_open(&d, 1, NULL, &err), &err);
	nx_test_exf(d, "ATTACH '%s/.timeline/timeline.duckdb' AS p (READ_ONLY)", parts);
	assert_true(nx_test_qi(d, "SELECT count(*) FROM p.ctr_burst") > 0);
	assert_true(nx_test_qi(d, "SELECT sum(count) FROM p.tracks WHERE kind = 'counter'") >
		    51000);
	nx_duck_close(d);
	free(whole);
	free(parts);
}

/* dir's file is cut to its first 100 bytes, then both parts run: the build fails
 * naming it, and leaves nothing. */
static void damaged_file_fails(const char *tag, const char *file)
{
	char *dir = copy_of(tag);
	struct nx_err err = { 0 };
	uint64_t n = 0;

	assert_int_equal(nx_test_sh("truncate -s 100 '%s/%s'", dir, file), 0);
	assert_int_not_equal(two_parts(dir, &n, &err), 0);
	assert_non_null(strstr(err.msg, file));
	assert_int_equal(nx_test_sh("test -e '%s/.timeline'", dir), 1);
	free(dir);
}

static void test_failed_parts_leave_nothing(void **state)
{
	(void)state;
	damaged_file_fails("bad-events", "DmaPacket.parquet"); /* the events part */
	damaged_file_fails("bad-rest", "SbufUsage.parquet");   /* the counters beside it */
}

static void test_abort_leaves_nothing(void **state)
{
	char *dir = copy_of("abort");
	struct nx_lod_carried_job *job;

	(void)state;
	job = nx_lod_carried_start(dir, "p"); /* while it runs */
	assert_non_null(job);
	nx_lod_carried_abort(job);
	assert_int_equal(nx_test_sh("test -e '%s/.timeline'", dir), 1);
	job = nx_lod_carried_start(dir, "p"); /* once it ran */
	assert_non_null(job);
	nx_lod_carried_wait(job);
	assert_int_equal(nx_test_sh("test -f '%s/.timeline/timeline.duckdb'", dir), 0);
	nx_lod_carried_abort(job);
	assert_int_equal(nx_test_sh("test -e '%s/.timeline'", dir), 1);
	free(dir);
}

static void test_existing_directory_left_alone(void **state)
{
	char *dir = copy_of("existing");
	struct nx_lod_carried_job *job;
	struct nx_err err = { 0 };
	uint64_t n = 0;

	(void)state;
	assert_int_equal(nx_test_sh("mkdir '%s/.timeline' && echo mine > '%s/.timeline/f'", dir,
				    dir), 0);
	assert_int_not_equal(two_parts(dir, &n, &err), 0);
	assert_non_null(strstr(err.msg, "exists already"));
	job = nx_lod_carried_start(dir, "p");
	nx_lod_carried_abort(job);
	assert_int_equal(nx_test_sh("grep -qx mine '%s/.timeline/f'", dir), 0);
	free(dir);
}

/* `view` of the fixture pair, its cache built in two parts and, with
 * NX_VIEW_CACHE_SERIAL=1, at the end: the same cache. */
static void test_view_overlapped_and_serial_agree(void **state)
{
	struct nx_fixture_opts fo;
	struct nx_err err = { 0 };
	char *in = NULL, *a = NULL, *b = NULL;

	(void)state;
	assert_true(asprintf(&in, "%s/in", root) > 0);
	assert_true(asprintf(&a, "%s/view-a/profiles/global/v@latest", root) > 0);
	assert_true(asprintf(&b, "%s/view-b/profiles/global/v@latest", root) > 0);
	nx_fixture_opts_default(&fo);
	fo.with_debug_info = true;
	assert_int_equal(nx_test_sh("mkdir -p '%s'", in), 0);
	assert_ok(nx_fixture_write(in, &fo, &err), &err);
	for (int serial = 0; serial < 2; serial++) {
		char v = (char)('a' + serial);

		assert_int_equal(nx_test_sh("%s '%s' view -n '%s/fixture.neff' -s "
					    "'%s/fixture.ntff' --data-path '%s/view-%c' "
					    "--display-name v --ingest-only > '%s/view-%c.log' "
					    "2>&1 && grep -q '^  timeline_cache ' '%s/view-%c.log'",
					    serial ? "NX_VIEW_CACHE_SERIAL=1" : "", nx_test_bin(),
					    in, in, root, v, root, v, root, v), 0);
	}
	/* with the per-line summary, which the rest builds from the derived Flow */
	same_caches(a, b, true);
	free(in);
	free(a);
	free(b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parts_make_the_whole),
		cmocka_unit_test(test_stamp_of_the_tables_as_finished),
		cmocka_unit_test(test_counters_beside_the_events),
		cmocka_unit_test(test_counters_with_a_burst_beside_the_events),
		cmocka_unit_test(test_failed_parts_leave_nothing),
		cmocka_unit_test(test_abort_leaves_nothing),
		cmocka_unit_test(test_existing_directory_left_alone),
		cmocka_unit_test(test_view_overlapped_and_serial_agree),
	};

	return nx_test_done(cmocka_run_group_tests(tests, setup, teardown));
}
