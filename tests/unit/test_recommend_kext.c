/* SPDX-License-Identifier: MIT
 * test_recommend_kext.c: the kernel's extent of `recommend --window kernel` from the row
 * groups DmaPacket's footer statistics point at (analysis/scan_kext.c), against the pass
 * over every row and DuckDB's SQL over the file: kernel packets in the middle row groups
 * only, packets of queue 'instruction' or of at most 4 bytes at both ends, row groups
 * overlapping in time, NULL starts and queues; kernel packets from the first row group
 * on (two row groups read); no kernel packet; a table split in two files; statistics
 * that do not tell (the pass reads the rows); a damaged footer (an error naming the
 * file). */
#include "common/compat.h"
#include "analysis/scan.h"
#include "common/fsutil.h"
#include "common/xalloc.h"
#include "db/duck.h"
#include "helper/asserts.h"
#include "helper/fixture.h"
#include "helper/profile_db.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

/* 10 row groups of 2048 rows; row group g starts in [B + g*1000 - 500, B + g*1000 + 1500),
 * so that neighbours overlap. Kernel packets (more than 4 bytes, queue not 'instruction',
 * a NULL queue counts) in row groups k0..k1 only, a third of their rows; the others of
 * queue 'instruction' or of 0..4 bytes. Some kernel packets lack a start. */
#define BASE "81985529216486895"
#define ROWS_SQL                                                                             \
	"WITH r AS (SELECT i, i // 2048 AS g, i %% 2048 AS j FROM range(20480) t(i)), "       \
	"k AS (SELECT *, g BETWEEN %d AND %d AND j %% 3 = 0 AS kern FROM r) "                  \
	"SELECT CASE WHEN kern AND j %% 11 = 0 THEN NULL ELSE " BASE " + g * 1000 - 500 + "    \
	"(j * 7919) %% 2000 END::BIGINT AS start_ts, (" BASE " + g * 1000 - 500 + "            \
	"(j * 7919) %% 2000 + 1 + j %% 97)::BIGINT AS end_ts, "                                \
	"CASE WHEN kern THEN 64 + j WHEN j %% 2 = 0 THEN 4096 ELSE j %% 5 END::BIGINT "         \
	"AS transfer_bytes, CASE WHEN kern AND j %% 9 = 0 THEN NULL WHEN kern THEN 'sync' "    \
	"WHEN j %% 2 = 0 THEN 'instruction' ELSE 'sync' END AS queue_type FROM k ORDER BY i"

/* A profile directory dir/name holding DmaPacket.parquet with kernel packets in row
 * groups k0..k1 (k0 > k1: none); returns the directory (caller frees). */
static char *profile(struct nx_duck *d, const char *dir, const char *name, int k0, int k1)
{
	char *p = nx_path_join(dir, name);

	assert_int_equal(nx_mkdirs(p, NULL), 0);
	nx_test_exf(d, "COPY (" ROWS_SQL ") TO '%s/DmaPacket.parquet' (FORMAT parquet, "
		    "ROW_GROUP_SIZE 2048, COMPRESSION 'uncompressed')", k0, k1, p);
	return p;
}

/* What SQL says of the file: 0 with the extent, 1 when there is no kernel packet. */
static int sql_extent(struct nx_duck *d, const char *p, int64_t *t0, int64_t *t1)
{
	const char *kern = "transfer_bytes > 4 AND coalesce(queue_type, '') <> 'instruction'";

	if (!nx_test_qi(d, "SELECT count(*) FROM '%s/DmaPacket*.parquet' WHERE %s", p, kern))
		return 1;
	*t0 = nx_test_qi(d, "SELECT min(start_ts) FROM '%s/DmaPacket*.parquet' WHERE %s", p, kern);
	*t1 = nx_test_qi(d, "SELECT max(end_ts) FROM '%s/DmaPacket*.parquet' WHERE %s", p, kern);
	return 0;
}

/* The pass's extent (NX_REC_KEXT=pass). */
static int pass_extent(struct nx_duck *d, const char *p, int64_t *t0, int64_t *t1)
{
	struct nx_rec_scan sc;
	struct nx_err err = { 0 };
	int rc;

	memset(&sc, 0, sizeof(sc));
	sc.dir = p;
	setenv("NX_REC_KEXT", "pass", 1);
	rc = nx__rec_kernel_extent(d, &sc, t0, t1, &err);
	unsetenv("NX_REC_KEXT");
	if (rc < 0)
		fail_msg("%s", err.msg);
	return rc;
}

/* The footers' extent equals the pass's and SQL's; *nread row groups read. */
static void same_extent(struct nx_duck *d, const char *p, int want_rc, size_t *nread)
{
	int64_t a0 = 1, a1 = 1, b0 = 2, b1 = 2, c0 = 3, c1 = 3;
	struct nx_err err = { 0 };
	int rc = nx__rec_kernel_extent_footers(p, &a0, &a1, nread, &err);

	if (rc < 0)
		fail_msg("%s", err.msg);
	assert_int_equal(rc, want_rc);
	assert_int_equal(pass_extent(d, p, &b0, &b1), want_rc);
	assert_int_equal(sql_extent(d, p, &c0, &c1), want_rc);
	if (want_rc)
		return;
	assert_int_equal(a0, c0);
	assert_int_equal(a1, c1);
	assert_int_equal(b0, c0);
	assert_int_equal(b1, c1);
}

static void test_middle_groups(void **state)
{
	char *dir = nx_test_dir("rec-kext-middle");
	struct nx_duck *d = nx_test_duck();
	size_t nread = 0;

	(void)state;
	char *p = profile(d, dir, "middle", 3, 6);
	assert_int_equal(nx_test_qi(d, "SELECT count(DISTINCT row_group_id) FROM "
				    "parquet_metadata('%s/DmaPacket.parquet')", p), 10);
	same_extent(d, p, 0, &nread);
	/* groups 0..3 by their least start (group 4 starts after the first kernel packet of
	 * group 3), 9..6 by their greatest end: eight of ten */
	assert_int_equal(nread, 8);
	free(p);
	/* kernel packets from the first row group to the last: one group each way */
	p = profile(d, dir, "all", 0, 9);
	same_extent(d, p, 0, &nread);
	assert_int_equal(nread, 2);
	free(p);
	/* a single row group of kernel packets */
	p = profile(d, dir, "one", 5, 5);
	same_extent(d, p, 0, &nread);
	free(p);
	/* none: every row group read, and no extent */
	p = profile(d, dir, "none", 1, 0);
	same_extent(d, p, 1, &nread);
	assert_int_equal(nread, 10);
	/* a split table: none in DmaPacket.parquet, the middle ones in part 1 */
	nx_test_exf(d, "COPY (SELECT * FROM '%s/middle/DmaPacket.parquet') TO "
		    "'%s/DmaPacket_1.parquet' (FORMAT parquet, ROW_GROUP_SIZE 2048)", dir, p);
	same_extent(d, p, 0, &nread);
	NX_ASSERT_CMP(nread, <, 20);
	free(p);
	nx_duck_close(d);
	free(dir);
}

/* The least start of row group 0, its 8 bytes made 0x7f in the file (its statistics and
 * its cells: packets that are no kernel packets): the statistics no longer tell (the least
 * above the greatest), the pass reads the rows and finds the same extent. */
static void test_no_statistics(void **state)
{
	char *dir = nx_test_dir("rec-kext-nostats");
	struct nx_duck *d = nx_test_duck();
	struct nx_err err = { 0 };
	int64_t t0 = 0, t1 = 0, w0, w1;
	size_t nread, len;

	(void)state;
	char *p = profile(d, dir, "p", 3, 6);
	char *file = nx_path_join(p, "DmaPacket.parquet");
	int64_t least = nx_test_qi(d, "SELECT min(start_ts) FROM (SELECT start_ts FROM '%s' "
				   "LIMIT 2048)", file);
	/* only row group 0's packets, no kernel packet, start so early */
	assert_int_equal(nx_test_qi(d, "SELECT count(*) FROM (SELECT start_ts FROM '%s' "
				    "OFFSET 2048) WHERE start_ts <= %" PRId64, file, least), 0);
	assert_int_equal(sql_extent(d, p, &w0, &w1), 0);
	char *data = nx_test_slurp(file, &len);
	unsigned char le[8];
	int patched = 0;
	for (int i = 0; i < 8; i++)
		le[i] = (unsigned char)((uint64_t)least >> (8 * i));
	for (size_t i = 0; i + 8 <= len; i++)
		if (!memcmp(data + i, le, 8)) {
			memset(data + i, 0x7f, 8);
			patched++;
		}
	NX_ASSERT_CMP(patched, >=, 2);
	nx_test_spit(file, data, len);
	assert_int_equal(nx__rec_kernel_extent_footers(p, &t0, &t1, &nread, &err), NX_ENOTFOUND);
	assert_non_null(strstr(err.msg, file));
	struct nx_rec_scan sc;
	memset(&sc, 0, sizeof(sc));
	sc.dir = p;
	assert_int_equal(nx__rec_kernel_extent(d, &sc, &t0, &t1, &err), 0);
	assert_int_equal(t0, w0);
	assert_int_equal(t1, w1);
	/* no DmaPacket at all: no extent */
	char *empty = nx_path_join(dir, "empty");
	assert_int_equal(nx_mkdirs(empty, NULL), 0);
	sc.dir = empty;
	assert_int_equal(nx__rec_kernel_extent(d, &sc, &t0, &t1, &err), 1);
	free(empty);
	free(data);
	free(file);
	free(p);
	nx_duck_close(d);
	free(dir);
}

/* A footer length past the file's start: an error naming the file, no pass. */
static void test_damaged_footer(void **state)
{
	char *dir = nx_test_dir("rec-kext-damaged");
	struct nx_duck *d = nx_test_duck();
	struct nx_err err = { 0 };
	int64_t t0, t1;
	size_t nread, len;

	(void)state;
	char *p = profile(d, dir, "p", 3, 6);
	char *file = nx_path_join(p, "DmaPacket.parquet");
	char *data = nx_test_slurp(file, &len);
	memset(data + len - 8, 0x7f, 4);
	nx_test_spit(file, data, len);
	int rc = nx__rec_kernel_extent_footers(p, &t0, &t1, &nread, &err);
	NX_ASSERT_CMP(rc, <, 0);
	assert_int_not_equal(rc, NX_ENOTFOUND);
	assert_non_null(strstr(err.msg, file));
	struct nx_rec_scan sc;
	memset(&sc, 0, sizeof(sc));
	sc.dir = p;
	nx_err_clear(&err);
	NX_ASSERT_CMP(nx__rec_kernel_extent(d, &sc, &t0, &t1, &err), <, 0);
	assert_non_null(strstr(err.msg, file));
	free(data);
	free(file);
	free(p);
	nx_duck_close(d);
	free(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_middle_groups),
		cmocka_unit_test(test_no_statistics),
		cmocka_unit_test(test_damaged_footer),
	};
	return nx_test_done(cmocka_run_group_tests(tests, NULL, NULL));
}
