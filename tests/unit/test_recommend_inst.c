/* SPDX-License-Identifier: MIT
 * test_recommend_inst.c: the Instruction pass's counts and extremes (analysis/scan_inst.c,
 * folded per batch) against DuckDB's SQL over the same file: row groups without NULLs
 * (the pass then skips the valid bytes), with NULLs scattered, with every start or end
 * NULL; a file whose starts and ends are all NULL; a file without the waits' column. */
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

/* 8 row groups of 1024 rows (g the row group, j the row in it): starts NULL every 7th
 * row of groups 2 and 5 and in all of group 4, ends NULL every 5th row of group 3 and in
 * all of group 6; the extremes in groups with NULLs (the least start 5, the others from
 * 10); waits NULL in group 1 only; source lines NULL every 3rd row of group 7. %s: the
 * start's expression. */
#define ROWS_SQL                                                                             \
	"WITH r AS (SELECT i, i // 1024 AS g, i %% 1024 AS j FROM range(8192) t(i)) "         \
	"SELECT i::BIGINT AS id, 'Tensor' AS engine, 'MATMUL' AS opcode, "                      \
	"'REGULAR' AS tensor_instruction_type, %s AS start_ts, "                               \
	"CASE WHEN g = 6 OR (g = 3 AND j %% 5 = 0) THEN NULL WHEN g = 3 AND j = 77 "           \
	"THEN 9000000 ELSE 1000 + (j * 7919) %% 50000 + g END::BIGINT AS end_ts, "              \
	"(j %% 13)::BIGINT AS duration_ns, "                                                    \
	"CASE WHEN g = 1 AND j %% 4 = 0 THEN NULL ELSE j %% 3 END::BIGINT AS evt_wait_time_ns, " \
	"1.5::DOUBLE AS adjusted_flops, 'op' AS operands, "                                     \
	"CASE WHEN g = 7 AND j %% 3 = 0 THEN NULL ELSE 'k.py:' || (j %% 9) END "                \
	"AS bir_debug_info_source_location, 0::BIGINT AS hbm_read_bytes, "                      \
	"0::BIGINT AS hbm_write_bytes FROM r ORDER BY i"

#define START_SQL                                                                            \
	"CASE WHEN g = 4 OR (g IN (2, 5) AND j % 7 = 0) THEN NULL WHEN g = 5 AND j = 500 "     \
	"THEN 5 ELSE 10 + (j * 104729) % 40000 + g END::BIGINT"

/* A profile directory dir/name with Instruction.parquet (start_ts as start) and a Flow of
 * one edge; returns the directory (caller frees). */
static char *profile(struct nx_duck *d, const char *dir, const char *name, const char *start)
{
	char *p = nx_path_join(dir, name);
	char *sql = nx_xasprintf(ROWS_SQL, start);

	assert_int_equal(nx_mkdirs(p, NULL), 0);
	nx_test_exf(d, "COPY (%s) TO '%s/Instruction.parquet' (FORMAT parquet, "
		    "ROW_GROUP_SIZE 1024)", sql, p);
	nx_test_exf(d, "COPY (SELECT 'Instruction' AS in_table, 'DmaPacketAggregated' AS "
		    "out_table, 5::BIGINT AS in_id, 1::BIGINT AS out_id, 'DGE_TRIGGER' AS "
		    "dependency_type) TO '%s/Flow.parquet' (FORMAT parquet)", p);
	free(sql);
	return p;
}

/* file in p rewritten as SELECT sel FROM it, in row groups of 1024 rows. */
static void rewrite(struct nx_duck *d, const char *p, const char *sel)
{
	char *a = nx_path_join(p, "Instruction.parquet"), *b = nx_path_join(p, "rewritten.parquet");

	nx_test_exf(d, "COPY (SELECT %s FROM '%s') TO '%s' (FORMAT parquet, ROW_GROUP_SIZE 1024)",
		    sel, a, b);
	assert_int_equal(rename(b, a), 0);
	free(a);
	free(b);
}

/* The pass's counts and extremes equal SQL's over the file (with_wait: wait, or -1 for
 * SQL's). */
static void same_counts(struct nx_duck *d, const char *dir, const char *p, int64_t wait)
{
	const char *f = "Instruction.parquet";
	struct nx_rec_scan sc;
	struct nx_err err = { 0 };

	memset(&sc, 0, sizeof(sc));
	sc.dir = p;
	sc.spill = nx_path_join(dir, "spill");
	sc.win.whole = true;
	assert_int_equal(nx_mkdirs(sc.spill, NULL), 0);
	if (nx__rec_scan_instructions(d, &sc, &err))
		fail_msg("%s", err.msg);
	assert_int_equal(sc.insts, nx_test_qi(d, "SELECT count(*) FROM '%s/%s'", p, f));
	if (wait < 0)
		wait = nx_test_qi(d, "SELECT count(evt_wait_time_ns) FROM '%s/%s'", p, f);
	assert_int_equal(sc.with_wait, wait);
	assert_int_equal(sc.with_source, nx_test_qi(d, "SELECT count(bir_debug_info_source_"
						     "location) FROM '%s/%s'", p, f));
	bool lo_set = nx_test_qi(d, "SELECT count(start_ts) FROM '%s/%s'", p, f) > 0;
	bool hi_set = nx_test_qi(d, "SELECT count(end_ts) FROM '%s/%s'", p, f) > 0;
	assert_int_equal(sc.in_lo_set, lo_set);
	assert_int_equal(sc.in_hi_set, hi_set);
	if (lo_set)
		assert_int_equal(sc.in_lo,
				 nx_test_qi(d, "SELECT min(start_ts) FROM '%s/%s'", p, f));
	if (hi_set)
		assert_int_equal(sc.in_hi, nx_test_qi(d, "SELECT max(end_ts) FROM '%s/%s'", p, f));
	nx__rec_scan_release(&sc);
	free(sc.spill);
}

static void test_nulls_by_group(void **state)
{
	char *dir = nx_test_dir("rec-inst-nulls");
	struct nx_duck *d = nx_test_duck();

	(void)state;
	char *p = profile(d, dir, "p", START_SQL);
	assert_int_equal(nx_test_qi(d, "SELECT min(start_ts) FROM '%s/Instruction.parquet'", p),
			 5);
	assert_int_equal(nx_test_qi(d, "SELECT max(end_ts) FROM '%s/Instruction.parquet'", p),
			 9000000);
	same_counts(d, dir, p, -1);
	free(p);
	nx_duck_close(d);
	free(dir);
}

static void test_all_null(void **state)
{
	char *dir = nx_test_dir("rec-inst-all-null");
	struct nx_duck *d = nx_test_duck();

	(void)state;
	char *p = profile(d, dir, "p", "NULL::BIGINT");
	rewrite(d, p, "* REPLACE (NULL::BIGINT AS end_ts)");
	same_counts(d, dir, p, -1);
	free(p);
	nx_duck_close(d);
	free(dir);
}

static void test_no_wait_column(void **state)
{
	char *dir = nx_test_dir("rec-inst-no-wait");
	struct nx_duck *d = nx_test_duck();

	(void)state;
	char *p = profile(d, dir, "p", START_SQL);
	rewrite(d, p, "* EXCLUDE (evt_wait_time_ns)");
	same_counts(d, dir, p, 0);
	free(p);
	nx_duck_close(d);
	free(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_nulls_by_group),
		cmocka_unit_test(test_all_null),
		cmocka_unit_test(test_no_wait_column),
	};
	return nx_test_done(cmocka_run_group_tests(tests, NULL, NULL));
}
