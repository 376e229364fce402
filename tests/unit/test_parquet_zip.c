/* SPDX-License-Identifier: MIT
 * test_parquet_zip.c: joining two parquet files of the same rows side by side
 * (db/parquet_zip.h). The two files are written by DuckDB, each with some of the
 * columns, in the same row groups, as the raw stage's two writers write them; the
 * joined file is read back by DuckDB: every column in order, every row where it was,
 * NULLs, lists and booleans intact, the right file's bloom filters still excluding row
 * groups. Files whose row groups differ are found by the check and refused by the join
 * with the left file unchanged; a right file with any footer byte flipped or cut short
 * is refused or joined, never a crash, and a refusal names the file. */
#include "common/compat.h"
#include "db/duck.h"
#include "db/parquet_zip.h"
#include "common/fsutil.h"
#include "common/xalloc.h"
#include "helper/asserts.h"
#include "helper/fixture.h"
#include "helper/profile_db.h"

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

/* The rows both halves come from: 30000 of them, with NULLs, a list and a boolean. */
#define ROWS "SELECT range AS id, 'n' || (range % 7) AS name, range / 3.0 AS val, " \
	     "range % 2 = 0 AS flag, CASE WHEN range % 5 = 0 THEN NULL ELSE range * 1000 " \
	     "END AS maybe, CASE WHEN range % 3 = 0 THEN NULL ELSE ['a' || range, 'b'] END " \
	     "AS tags, 'v' || (range % 11) AS kind FROM range(30000)"

/* The row groups of a file. */
#define GROUPS_SQL "SELECT count(DISTINCT row_group_id) FROM parquet_metadata('%s')"

/* Columns cols of ROWS into path in row groups of group rows. */
static void write_half(struct nx_duck *d, const char *path, const char *cols, int group)
{
	nx_test_exf(d, "COPY (SELECT %s FROM (%s)) TO '%s' (FORMAT parquet, COMPRESSION zstd, "
	      "ROW_GROUP_SIZE %d)", cols, ROWS, path, group);
}

static void test_zipped_file_reads_like_both(void **state)
{
	char *dir = nx_test_dir("pq-zip");
	char *left = nx_path_join(dir, "left.parquet"), *right = nx_path_join(dir, "right.parquet");
	char *whole = nx_path_join(dir, "whole.parquet");
	struct nx_duck *d = NULL;
	struct nx_err err = { 0 };
	bool same = false;

	(void)state;
	assert_int_equal(nx_duck_open(&d, 1, NULL, &err), 0);
	write_half(d, left, "id, name, val", 4096);
	write_half(d, right, "flag, maybe, tags, kind", 4096);
	write_half(d, whole, "*", 4096);
	int64_t groups = nx_test_qi(d, GROUPS_SQL, left);
	NX_ASSERT_CMP(groups, >=, 3);
	size_t rlen;
	char *rbefore = nx_test_slurp(right, &rlen);
	if (nx_parquet_zip_check(left, right, &same, &err))
		fail_msg("%s", err.msg);
	assert_true(same);
	if (nx_parquet_zip(left, right, &err))
		fail_msg("%s", err.msg);
	/* the columns of both, in order, with the whole file's types */
	NX_ASSERT_CMP(nx_test_qi(d, "SELECT count(*) FROM (SELECT column_name, column_type FROM "
				 "(DESCRIBE SELECT * FROM '%s') EXCEPT ALL SELECT column_name, "
				 "column_type FROM (DESCRIBE SELECT * FROM '%s'))", left, whole),
		      ==, 0);
	NX_ASSERT_CMP(nx_test_qi(d, "SELECT count(*) FROM (DESCRIBE SELECT * FROM '%s')", left),
		      ==, 7);
	NX_ASSERT_CMP(nx_test_qi(d, "SELECT count(*) FROM (SELECT column_name FROM (DESCRIBE "
				 "SELECT * FROM '%s') LIMIT 1) WHERE column_name = 'id'", left),
		      ==, 1);
	/* every row where it was, as the whole file has it */
	NX_ASSERT_CMP(nx_test_qi(d, "SELECT count(*) FROM '%s'", left), ==, 30000);
	NX_ASSERT_CMP(nx_test_qi(d, "SELECT count(*) FROM (SELECT hash(x) AS h, row_number() "
				 "OVER () AS r FROM '%s' x) p JOIN (SELECT hash(y) AS h, "
				 "row_number() OVER () AS r FROM '%s' y) w USING (r) WHERE "
				 "p.h <> w.h", left, whole),
		      ==, 0);
	NX_ASSERT_CMP(nx_test_qi(d, "SELECT count(*) FROM '%s' WHERE maybe IS NULL AND tags IS "
				 "NULL", left),
		      ==, 2000);
	NX_ASSERT_CMP(nx_test_qi(d, "SELECT count(*) FROM '%s' WHERE flag AND tags[2] = 'b'",
				 left),
		      ==, 10000);
	NX_ASSERT_CMP(nx_test_qi(d, "SELECT count(*) FROM '%s' WHERE kind = 'v3' AND name = "
				 "'n3'", left),
		      ==, 390);
	/* the same row groups, each listing all seven column chunks */
	NX_ASSERT_CMP(nx_test_qi(d, GROUPS_SQL, left), ==, groups);
	NX_ASSERT_CMP(nx_test_qi(d, "SELECT min(n) FROM (SELECT count(*) AS n FROM "
				 "parquet_metadata('%s') GROUP BY row_group_id)", left),
		      ==, 7);
	/* the right file's bloom filters moved with its chunks */
	NX_ASSERT_CMP(nx_test_qi(d, "SELECT count(*) FILTER (bloom_filter_excludes) FROM "
				 "parquet_bloom_probe('%s', 'kind', 'nowhere')", left),
		      ==, groups);
	NX_ASSERT_CMP(nx_test_qi(d, "SELECT count(*) FILTER (bloom_filter_excludes) FROM "
				 "parquet_bloom_probe('%s', 'kind', 'v3')", left),
		      ==, 0);
	/* the right file is as it was */
	size_t rnow_len;
	char *rnow = nx_test_slurp(right, &rnow_len);
	assert_true(rnow_len == rlen && !memcmp(rnow, rbefore, rlen));
	free(rnow);
	free(rbefore);
	nx_duck_close(d);
	free(left);
	free(right);
	free(whole);
	free(dir);
}

/* Joins left with bad and expects a refusal naming bad that leaves left unchanged, or a
 * join; returns the code. */
static int zip_bad(const char *left, const char *bad, const char *orig, size_t len)
{
	struct nx_err err = { 0 };
	bool same = false;
	int rc;

	nx_test_spit(left, orig, len);
	rc = nx_parquet_zip_check(left, bad, &same, &err);
	if (rc) {
		if (!strstr(err.msg, bad))
			fail_msg("check: the error does not name the file: %s", err.msg);
		assert_false(same);
	}
	rc = nx_parquet_zip(left, bad, &err);
	if (rc) {
		size_t now_len;
		char *now = nx_test_slurp(left, &now_len);
		if (!strstr(err.msg, bad) && !strstr(err.msg, left))
			fail_msg("the error does not name a file: %s", err.msg);
		if (rc != -ENOSPC && rc != -EIO)
			assert_true(now_len == len && !memcmp(now, orig, len));
		free(now);
	}
	return rc;
}

static void test_mismatches_and_bad_files_are_refused(void **state)
{
	char *dir = nx_test_dir("pq-zip-bad");
	char *left = nx_path_join(dir, "left.parquet"), *right = nx_path_join(dir, "right.parquet");
	char *other = nx_path_join(dir, "other.parquet"), *bad = nx_path_join(dir, "bad.parquet");
	struct nx_duck *d = NULL;
	struct nx_err err = { 0 };
	bool same = true;
	size_t len, rlen;

	(void)state;
	assert_int_equal(nx_duck_open(&d, 1, NULL, &err), 0);
	write_half(d, left, "id, name", 4096);
	write_half(d, right, "val, tags", 4096);
	write_half(d, other, "val, tags", 8192); /* the same rows, other row groups */
	char *orig = nx_test_slurp(left, &len), *rdata = nx_test_slurp(right, &rlen);

	/* row groups of other sizes: found by the check, refused by the join */
	if (nx_parquet_zip_check(left, other, &same, &err))
		fail_msg("%s", err.msg);
	assert_false(same);
	assert_int_equal(zip_bad(left, other, orig, len), NX_EMISMATCH);
	/* cut short anywhere in its last 200 bytes, or every 997th length before */
	uint32_t flen = (uint8_t)rdata[rlen - 8] | (uint8_t)rdata[rlen - 7] << 8 |
			(uint8_t)rdata[rlen - 6] << 16 | (uint32_t)(uint8_t)rdata[rlen - 5] << 24;
	for (size_t cut = 0; cut < rlen; cut += cut + 200 >= rlen ? 1 : 997) {
		nx_test_spit(bad, rdata, cut);
		assert_int_not_equal(zip_bad(left, bad, orig, len), 0);
	}
	/* every footer byte flipped, one at a time: refused or joined, never a crash */
	char *copy = nx_xmalloc(rlen);
	int refused = 0, flips = 0;
	for (size_t i = rlen - 8 - flen; i < rlen - 8; i++) {
		memcpy(copy, rdata, rlen);
		copy[i] ^= 0x5a;
		nx_test_spit(bad, copy, rlen);
		flips++;
		refused += zip_bad(left, bad, orig, len) != 0;
	}
	NX_ASSERT_CMP(refused, >, flips / 4);
	/* the left file damaged instead: named in the refusal too */
	nx_test_spit(bad, orig, len - 3);
	struct nx_err e2 = { 0 };
	assert_int_not_equal(nx_parquet_zip_check(bad, right, &same, &e2), 0);
	assert_non_null(strstr(e2.msg, bad));
	assert_int_not_equal(nx_parquet_zip(bad, right, &e2), 0);
	assert_non_null(strstr(e2.msg, bad));
	/* a missing file */
	assert_int_equal(nx_parquet_zip(left, "/nonexistent/x.parquet", &e2), -ENOENT);
	assert_non_null(strstr(e2.msg, "/nonexistent/x.parquet"));
	nx_duck_close(d);
	free(copy);
	free(orig);
	free(rdata);
	free(left);
	free(right);
	free(other);
	free(bad);
	free(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_zipped_file_reads_like_both),
		cmocka_unit_test(test_mismatches_and_bad_files_are_refused),
	};
	return nx_test_done(cmocka_run_group_tests(tests, NULL, NULL));
}
