/* SPDX-License-Identifier: MIT
 * test_parquet_concat.c: joining parquet parts into one file (db/parquet_concat.h), and
 * cutting a file into slices of row groups (db/parquet_slice.h). Parts are written by
 * DuckDB's own file rotation, as the ingest writes them; the joined file is read back by
 * DuckDB: same rows in the same order, every row group, working bloom filters. Slices of
 * the joined file read back as exactly the rows of their row groups. Bad parts and bad
 * files (truncated, wrong magic, encrypted, huge footer length, a flipped byte anywhere
 * in the footer, another schema) give an error that names the file and the byte, leave
 * no output, and leave the inputs as they were. */
#include "common/compat.h"
#include "db/duck.h"
#include "db/parquet_concat.h"
#include "db/parquet_slice.h"
#include "db/profile_views.h"
#include "common/fsutil.h"
#include "common/xalloc.h"
#include "helper/asserts.h"
#include "helper/fixture.h"
#include "helper/profile_db.h"

#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

/* rows rows of (id, name, val, flag, maybe) into dir/<table>_<i>.parquet, 3 row groups
 * per file, as DuckDB's rotation writes them (500 rows asked per row group: DuckDB
 * makes them a vector, 2048 rows). Returns the number of parts. */
static int write_parts(struct nx_duck *d, const char *dir, const char *table, int rows,
		       const char *extra)
{
	char *sub = nx_xasprintf("%s/.%s.rot", dir, table);
	int n = 0;

	nx_test_exf(d,
	  "COPY (SELECT range AS id, 'n' || (range %% 7) AS name, "
	  "range / 3.0 AS val, range %% 2 = 0 AS flag, CASE WHEN range %% 5 = 0 THEN NULL "
	  "ELSE range * 1000 END AS maybe%s FROM range(%d)) TO '%s' (FORMAT parquet, "
	  "COMPRESSION zstd, ROW_GROUP_SIZE 500, ROW_GROUPS_PER_FILE 3, "
	  "FILENAME_PATTERN '%s_{i}')",
	  extra, rows, sub, table);
	for (;; n++) {
		char *from = nx_xasprintf("%s/%s_%d.parquet", sub, table, n);
		char *to = nx_xasprintf("%s/%s_%d.parquet", dir, table, n);
		bool have = nx_is_file(from);
		if (have && rename(from, to))
			fail_msg("rename %s", from);
		free(from);
		free(to);
		if (!have)
			break;
	}
	rmdir(sub);
	free(sub);
	return n;
}

static char **part_paths(const char *dir, const char *table, int n)
{
	char **p = nx_xcalloc((size_t)n, sizeof(*p));

	for (int i = 0; i < n; i++)
		p[i] = nx_xasprintf("%s/%s_%d.parquet", dir, table, i);
	return p;
}

static void free_paths(char **p, int n)
{
	for (int i = 0; i < n; i++)
		free(p[i]);
	free(p);
}

static void test_joined_file_reads_like_the_parts(void **state)
{
	char *dir = nx_test_dir("pq-join");
	struct nx_duck *d = NULL;
	struct nx_err err = { 0 };
	int n;

	(void)state;
	assert_int_equal(nx_duck_open(&d, 1, NULL, &err), 0);
	n = write_parts(d, dir, "T", 30000, "");
	NX_ASSERT_CMP(n, >=, 3); /* row groups of at least a vector (2048 rows), 3 per file */
	int64_t groups = nx_test_qi(d, "SELECT count(*) FROM (SELECT DISTINCT file_name, row_group_id "
			      "FROM parquet_metadata('%s/T_*.parquet'))", dir);
	char **parts = part_paths(dir, "T", n);
	char *out = nx_path_join(dir, "joined.parquet");
	if (nx_parquet_concat((const char *const *)parts, (size_t)n, out, &err))
		fail_msg("%s", err.msg);
	/* every row, in order, with NULLs and booleans intact */
	NX_ASSERT_CMP(nx_test_qi(d, "SELECT count(*) FROM '%s'", out), ==, 30000);
	NX_ASSERT_CMP(nx_test_qi(d, "SELECT count(*) FROM (SELECT id, row_number() OVER () - 1 AS rn "
			   "FROM '%s') WHERE id <> rn", out), ==, 0);
	NX_ASSERT_CMP(nx_test_qi(d, "SELECT count(*) FROM (SELECT * FROM '%s' EXCEPT ALL SELECT * FROM "
			   "read_parquet('%s/T_*.parquet'))", out, dir), ==, 0);
	NX_ASSERT_CMP(nx_test_qi(d, "SELECT count(*) FROM '%s' WHERE maybe IS NULL", out), ==, 6000);
	NX_ASSERT_CMP(nx_test_qi(d, "SELECT count(*) FROM '%s' WHERE flag", out), ==, 15000);
	NX_ASSERT_CMP(nx_test_qi(d, "SELECT count(*) FROM '%s' WHERE name = 'n3'", out), ==, 4286);
	/* the footer lists every part's row groups, each pointing at its own pages */
	NX_ASSERT_CMP(nx_test_qi(d, "SELECT count(DISTINCT row_group_id) FROM "
				 "parquet_metadata('%s')", out),
		      ==, groups);
	NX_ASSERT_CMP(nx_test_qi(d, "SELECT sum(row_group_num_rows) FROM (SELECT DISTINCT row_group_id, "
			   "row_group_num_rows FROM parquet_metadata('%s'))", out), ==, 30000);
	NX_ASSERT_CMP(nx_test_qi(d, "SELECT min(id) FROM (SELECT id FROM '%s' LIMIT 1 OFFSET 29999)", out),
		      ==, 29999);
	/* bloom filters moved with their row groups: a name that is nowhere is excluded
	 * from every row group, one that is everywhere from none */
	NX_ASSERT_CMP(nx_test_qi(d, "SELECT count(*) FILTER (bloom_filter_excludes) FROM "
			   "parquet_bloom_probe('%s', 'name', 'nowhere')", out), ==, groups);
	NX_ASSERT_CMP(nx_test_qi(d, "SELECT count(*) FILTER (bloom_filter_excludes) FROM "
			   "parquet_bloom_probe('%s', 'name', 'n3')", out), ==, 0);
	/* the output must not exist already */
	assert_int_not_equal(nx_parquet_concat((const char *const *)parts, (size_t)n, out, &err),
			     0);
	nx_duck_close(d);
	free_paths(parts, n);
	free(out);
	free(dir);
}

/* The rows of row groups [first, first + n) of the joined file, read from a slice. */
static void check_slice(struct nx_duck *d, struct nx_pq_slicer *s, const char *whole,
			const char *out, uint32_t first, uint32_t n)
{
	struct nx_err err = { 0 };

	remove(out);
	if (nx_pq_slice_write(s, first, n, out, &err))
		fail_msg("slice %u+%u: %s", first, n, err.msg);
	int64_t start = nx_test_qi(d, "SELECT coalesce(sum(row_group_num_rows), 0) FROM (SELECT DISTINCT "
			     "row_group_id, row_group_num_rows FROM parquet_metadata('%s')) WHERE "
			     "row_group_id < %u", whole, first);
	int64_t rows = nx_test_qi(d, "SELECT sum(row_group_num_rows) FROM (SELECT DISTINCT row_group_id, "
			    "row_group_num_rows FROM parquet_metadata('%s')) WHERE row_group_id "
			    ">= %u AND row_group_id < %u", whole, first, first + n);
	NX_ASSERT_CMP(nx_test_qi(d, "SELECT count(*) FROM '%s'", out), ==, rows);
	NX_ASSERT_CMP(nx_test_qi(d, "SELECT count(DISTINCT row_group_id) FROM "
				 "parquet_metadata('%s')", out),
		      ==, n);
	/* the same rows, in order, NULLs and booleans intact */
	NX_ASSERT_CMP(nx_test_qi(d, "SELECT count(*) FROM (SELECT id, row_number() OVER () - 1 + %" PRId64
			   " AS rn FROM '%s') WHERE id <> rn", start, out), ==, 0);
	NX_ASSERT_CMP(nx_test_qi(d, "SELECT count(*) FROM ((SELECT * FROM '%s' EXCEPT ALL SELECT * FROM "
			   "'%s' WHERE id >= %" PRId64 " AND id < %" PRId64 ") UNION ALL (SELECT * "
			   "FROM '%s' WHERE id >= %" PRId64 " AND id < %" PRId64 " EXCEPT ALL SELECT "
			   "* FROM '%s'))", out, whole, start, start + rows, whole, start,
			   start + rows, out), ==, 0);
}

static void test_slices_read_like_their_row_groups(void **state)
{
	char *dir = nx_test_dir("pq-slice");
	struct nx_duck *d = NULL;
	struct nx_pq_slicer *s = NULL;
	struct nx_err err = { 0 };

	(void)state;
	assert_int_equal(nx_duck_open(&d, 1, NULL, &err), 0);
	int n = write_parts(d, dir, "T", 30000, "");
	char **parts = part_paths(dir, "T", n);
	char *whole = nx_path_join(dir, "joined.parquet"), *out = nx_path_join(dir, "slice.parquet");
	if (nx_parquet_concat((const char *const *)parts, (size_t)n, whole, &err))
		fail_msg("%s", err.msg);
	if (nx_pq_slicer_open(&s, whole, &err))
		fail_msg("%s", err.msg);
	uint32_t groups = nx_pq_slicer_row_groups(s);
	NX_ASSERT_CMP(groups, ==, nx_test_qi(d, "SELECT count(DISTINCT row_group_id) FROM "
				       "parquet_metadata('%s')", whole));
	NX_ASSERT_CMP(groups, >=, 9);
	/* one row group, all of them, slices across the parts' boundaries (where a part's
	 * bloom filters and page indexes lie between row groups), the last one */
	const uint32_t cuts[][2] = { { 0, 1 }, { 0, groups }, { 2, 5 }, { 1, 3 },
				     { groups - 1, 1 }, { 3, groups - 3 } };
	for (size_t i = 0; i < NX_ARRAY_SIZE(cuts); i++)
		check_slice(d, s, whole, out, cuts[i][0], cuts[i][1]);
	/* a slice of one of DuckDB's own files, not joined */
	struct nx_pq_slicer *p0 = NULL;
	if (nx_pq_slicer_open(&p0, parts[0], &err))
		fail_msg("%s", err.msg);
	remove(out);
	assert_int_equal(nx_pq_slice_write(p0, 1, 2, out, &err), 0);
	NX_ASSERT_CMP(nx_test_qi(d, "SELECT min(id) FROM '%s'", out), ==, 2048);
	nx_pq_slicer_close(p0);
	/* no row groups out of range; the output must not exist already */
	assert_int_equal(nx_pq_slice_write(s, groups, 1, out, &err), NX_EUSAGE);
	assert_int_equal(nx_pq_slice_write(s, 1, groups, out, &err), NX_EUSAGE);
	assert_int_not_equal(nx_pq_slice_write(s, 0, 1, out, &err), 0);
	assert_non_null(strstr(err.msg, "File exists"));
	nx_pq_slicer_close(s);
	nx_duck_close(d);
	free_paths(parts, n);
	free(whole);
	free(out);
	free(dir);
}

static void test_split_tables_become_one_file(void **state)
{
	char *dir = nx_test_dir("pq-split");
	struct nx_duck *d = NULL;
	struct nx_err err = { 0 };
	uint64_t bytes = 0;
	size_t tables = 0;

	(void)state;
	assert_int_equal(nx_duck_open(&d, 1, NULL, &err), 0);
	NX_ASSERT_CMP(write_parts(d, dir, "Big", 20000, ""), >=, 3);
	NX_ASSERT_CMP(write_parts(d, dir, "One", 700, ""), ==, 1);
	nx_test_exf(d, "COPY (SELECT 42 AS x) TO '%s/Whole.parquet' "
	     "(FORMAT parquet)", dir);
	if (nx_parquet_join_split_tables(dir, &bytes, &tables, &err))
		fail_msg("%s", err.msg);
	NX_ASSERT_CMP(bytes, >, 0);
	NX_ASSERT_CMP(tables, ==, 1); /* Big; One had one part, Whole none */
	char *big0 = nx_xasprintf("%s/Big_0.parquet", dir), *one0 = nx_xasprintf("%s/One_0.parquet", dir);
	assert_false(nx_is_file(big0));
	assert_false(nx_is_file(one0));
	if (nx_db_create_views(d, dir, &err))
		fail_msg("%s", err.msg);
	NX_ASSERT_CMP(nx_test_qi(d, "SELECT count(*) FROM Big"), ==, 20000);
	NX_ASSERT_CMP(nx_test_qi(d, "SELECT count(*) FROM One"), ==, 700);
	NX_ASSERT_CMP(nx_test_qi(d, "SELECT x FROM Whole"), ==, 42);
	NX_ASSERT_CMP(nx_test_qi(d, "SELECT count(*) FROM read_parquet('%s/Big.parquet')", dir), ==,
		      20000);
	nx_duck_close(d);
	free(big0);
	free(one0);
	free(dir);
}

static char *slurp(const char *path, size_t *len)
{
	char *data;
	struct nx_err err = { 0 };

	if (nx_read_file(path, &data, len, &err))
		fail_msg("%s", err.msg);
	return data;
}

static void spit(const char *path, const void *data, size_t len)
{
	FILE *f = fopen(path, "wb");

	if (!f || (len && fwrite(data, 1, len, f) != len) || fclose(f))
		fail_msg("write %s", path);
}

/* Joins [good part, bad] and expects a clean refusal that names bad; returns the code. */
static int refuse(const char *dir, const char *good, const char *bad, const char *good_copy,
		  size_t good_len)
{
	const char *parts[] = { good, bad };
	char *out = nx_path_join(dir, "out.parquet");
	struct nx_err err = { 0 };
	int rc = nx_parquet_concat(parts, 2, out, &err);

	if (rc) {
		if (!strstr(err.msg, bad))
			fail_msg("error does not name the part: %s", err.msg);
		assert_false(nx_is_file(out));
	} else {
		remove(out);
	}
	size_t len;
	char *now = slurp(good, &len);
	assert_true(len == good_len && !memcmp(now, good_copy, len));
	free(now);
	free(out);
	return rc;
}

/* The footer length a parquet file of len bytes states before its closing magic. */
static uint32_t footer_len(const char *data, size_t len)
{
	return (uint8_t)data[len - 8] | (uint8_t)data[len - 7] << 8 |
	       (uint8_t)data[len - 6] << 16 | (uint32_t)(uint8_t)data[len - 5] << 24;
}

static void test_bad_parts_are_refused(void **state)
{
	char *dir = nx_test_dir("pq-bad");
	struct nx_duck *d = NULL;
	struct nx_err err = { 0 };
	size_t len;

	(void)state;
	assert_int_equal(nx_duck_open(&d, 1, NULL, &err), 0);
	NX_ASSERT_CMP(write_parts(d, dir, "T", 1500, ""), ==, 1);
	NX_ASSERT_CMP(write_parts(d, dir, "U", 1500, ", 'x' AS more"), ==, 1);
	char *good = nx_path_join(dir, "T_0.parquet");
	char *other = nx_path_join(dir, "U_0.parquet");
	char *bad = nx_path_join(dir, "bad.parquet");
	char *data = slurp(good, &len);
	uint32_t flen = footer_len(data, len);
	size_t fstart = len - 8 - flen;
	char *copy = nx_xmalloc(len);
	struct nx_err e2 = { 0 };
	const char *mismatch[] = { good, other };
	char *out = nx_path_join(dir, "out.parquet");

	/* another schema */
	assert_int_equal(nx_parquet_concat(mismatch, 2, out, &e2), NX_EMISMATCH);
	assert_false(nx_is_file(out));

	/* truncated anywhere: at every 61st length and at each of the last 40 bytes */
	for (size_t cut = 0; cut < len; cut += cut + 40 >= len ? 1 : 61) {
		spit(bad, data, cut);
		assert_int_not_equal(refuse(dir, good, bad, data, len), 0);
	}
	/* wrong magics, an encrypted footer, a footer longer than the file */
	memcpy(copy, data, len);
	memcpy(copy, "PAR2", 4);
	spit(bad, copy, len);
	assert_int_equal(refuse(dir, good, bad, data, len), NX_ECORRUPT);
	memcpy(copy, data, len);
	memcpy(copy + len - 4, "PARE", 4);
	spit(bad, copy, len);
	assert_int_equal(refuse(dir, good, bad, data, len), NX_EVERSION);
	memcpy(copy, data, len);
	memset(copy + len - 8, 0xff, 4);
	spit(bad, copy, len);
	assert_int_equal(refuse(dir, good, bad, data, len), NX_ECORRUPT);
	int refused = 0, flips = 0;
	for (size_t i = fstart; i < len - 8; i++) {
		/* every footer byte flipped, one at a time: refused or joined, never a crash;
		 * a refusal names the part and a byte offset */
		memcpy(copy, data, len);
		copy[i] ^= 0x5a;
		spit(bad, copy, len);
		const char *parts[] = { good, bad };
		struct nx_err fe = { 0 };
		int rc = nx_parquet_concat(parts, 2, out, &fe);
		flips++;
		if (rc) {
			refused++;
			if (!strstr(fe.msg, bad) || (!strstr(fe.msg, "byte") && rc != NX_EMISMATCH))
				fail_msg("flip at %zu: %s", i, fe.msg);
			assert_false(nx_is_file(out));
		} else {
			remove(out);
		}
	}
	NX_ASSERT_CMP(refused, >, flips / 4);
	/* hand-made footers: a row-group list that claims 2^31 elements, and lists of
	 * structs nested 100 deep */
	static const uint8_t huge[] = { 0x49, 0xfc, 0x80, 0x80, 0x80, 0x80, 0x08 };
	uint8_t deep[2 + 100 + 101];
	size_t nd = 0;
	deep[nd++] = 0x59; /* field 5: a list */
	deep[nd++] = 0x1c; /* of one struct */
	for (int i = 0; i < 100; i++)
		deep[nd++] = 0x1c; /* whose field 1 is a struct, ... */
	for (int i = 0; i < 101; i++)
		deep[nd++] = 0x00;
	const struct { const uint8_t *b; size_t n; const char *what; } made[] = {
		{ huge, sizeof(huge), "list longer than the footer" },
		{ deep, nd, "nested more than 64 deep" },
	};
	for (size_t m = 0; m < NX_ARRAY_SIZE(made); m++) {
		size_t n = 4 + made[m].n + 8;
		uint8_t *f = nx_xmalloc(n);
		memcpy(f, "PAR1", 4);
		memcpy(f + 4, made[m].b, made[m].n);
		f[4 + made[m].n] = (uint8_t)made[m].n;
		memset(f + 5 + made[m].n, 0, 3);
		memcpy(f + n - 4, "PAR1", 4);
		spit(bad, f, n);
		const char *parts[] = { good, bad };
		struct nx_err me = { 0 };
		assert_int_equal(nx_parquet_concat(parts, 2, out, &me), NX_ECORRUPT);
		if (!strstr(me.msg, made[m].what) || !strstr(me.msg, "at byte "))
			fail_msg("%s", me.msg);
		free(f);
	}
	nx_duck_close(d);
	free(out);
	free(copy);
	free(data);
	free(good);
	free(other);
	free(bad);
	free(dir);
}

/* Every truncation and every flipped footer byte of a file: the slicer refuses it with an
 * error naming the file, or reads it; a slice it writes is whole or absent. */
static void test_bad_files_are_refused_by_the_slicer(void **state)
{
	char *dir = nx_test_dir("pq-slice-bad");
	struct nx_duck *d = NULL;
	struct nx_err err = { 0 };
	size_t len;

	(void)state;
	assert_int_equal(nx_duck_open(&d, 1, NULL, &err), 0);
	NX_ASSERT_CMP(write_parts(d, dir, "T", 4000, ""), ==, 1);
	char *good = nx_path_join(dir, "T_0.parquet"), *bad = nx_path_join(dir, "bad.parquet");
	char *out = nx_path_join(dir, "out.parquet");
	char *data = slurp(good, &len);
	uint32_t flen = footer_len(data, len);
	char *copy = nx_xmalloc(len);
	int refused = 0, tries = 0;

	for (size_t i = 0; i < len + flen; i++) {
		bool cut = i < len;
		size_t at = cut ? i : len - 8 - flen + (i - len);
		if (cut && i % 37 && i + 40 < len)
			continue; /* every 37th length and each of the last 40 */
		memcpy(copy, data, len);
		if (!cut)
			copy[at] ^= 0x5a;
		spit(bad, copy, cut ? at : len);
		struct nx_pq_slicer *s = NULL;
		struct nx_err e = { 0 };
		int rc = nx_pq_slicer_open(&s, bad, &e);
		tries++;
		if (!rc && nx_pq_slicer_row_groups(s) > 0) {
			remove(out);
			rc = nx_pq_slice_write(s, 0, nx_pq_slicer_row_groups(s), out, &e);
			if (rc)
				assert_false(nx_is_file(out));
		}
		nx_pq_slicer_close(s);
		if (rc) {
			refused++;
			if (!strstr(e.msg, bad) || !strstr(e.msg, "byte"))
				fail_msg("at %zu (%s): %s", at, cut ? "cut" : "flip", e.msg);
		}
	}
	NX_ASSERT_CMP(refused, >, tries / 4);
	nx_duck_close(d);
	free(copy);
	free(data);
	free(good);
	free(bad);
	free(out);
	free(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_joined_file_reads_like_the_parts),
		cmocka_unit_test(test_split_tables_become_one_file),
		cmocka_unit_test(test_bad_parts_are_refused),
		cmocka_unit_test(test_slices_read_like_their_row_groups),
		cmocka_unit_test(test_bad_files_are_refused_by_the_slicer),
	};
	return nx_test_done(cmocka_run_group_tests(tests, NULL, NULL));
}
