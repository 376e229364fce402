/* SPDX-License-Identifier: MIT
 * test_flow_semaphore.c: Flow's SEMAPHORE edges (src/derive/39_flow_semaphore.sql, run
 * by nx_derive_run_files on a real DuckDB) against the query it replaced, kept in
 * tests/unit/reference/39_flow_semaphore.sql, over tables made to hold what its integer
 * keys and distinct updates must treat as before: a semaphore updated several times in
 * one ns by one source, updates and transfers whose id text is not an integer's own
 * ("05", " 5", "x", "07"), updates without a source, waits released by an engine, by
 * AXI (a transfer) and by none, a producer that also waits. The same rows in the same
 * order, and the edges expected by hand. */
#include "common/compat.h"
#include "common/fsutil.h"
#include "common/strbuf.h"
#include "common/xalloc.h"
#include "derive/derive.h"
#include "derive/sql_files.h"
#include "db/duck.h"
#include "helper/fixture.h"
#include "helper/profile_db.h"
#include "helper/test_dirs.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#define N 200 /* rounds of 100 ns: producers, updates, waiters */

static const struct nx_sql_file *flow_semaphore_file(void)
{
	for (size_t i = 0; i < nx_sql_file_count; i++)
		if (!strcmp(nx_sql_files[i].name, "39_flow_semaphore.sql"))
			return &nx_sql_files[i];
	fail_msg("39_flow_semaphore.sql is not among the derive files");
	return NULL;
}

/* The tables the file reads, as parquet files in dir and staging. Round i (0..N-1),
 * times from i*100:
 *   Pool pc1 (signals sem 5) +0..+10, id 1000+i; Act pc1 (signals 5) +20..+30, 2000+i;
 *   Pool pc2 waits on 5 at +50, 3000+i; Act pc2 waits on 7 at +60, 4000+i;
 *   Sync pc1 waits on 9 at +70, 5000+i; Act pc3 waits on 5 and signals 9, +80..+90.
 *   Updates: "5" by Pool at +10 three times; "5" by Act at +30 when i % 3 == 0; "7" by
 *   AXI at +40 twice; "05" by Pool at +45, " 5" by Act at +47, "x" at +48 (none is sem
 *   5's); "9" without a source at +65 when i is even, by Act at +90.
 *   Transfers: on "7" ending at +35 (7000+i), on "07" at +38 (8000+i), on "5" at +5
 *   (9000+i). */
static void make_tables(struct nx_duck *d, const char *dir, const char *staging)
{
	nx_test_exf(d, "COPY (SELECT * FROM (VALUES ('Pool', 1, NULL, 5), ('Act', 1, NULL, 5), "
		       "('Pool', 2, 5, NULL), ('Act', 2, 7, NULL), ('Sync', 1, 9, NULL), "
		       "('Act', 3, 5, 9)) t(engine, pc, wait_sem, sig_sem)) TO "
		       "'%s/nx_StaticInst.parquet' (FORMAT parquet)", staging);
	nx_test_exf(d, "COPY (SELECT (base + i)::BIGINT AS id, (i * 100 + s)::BIGINT AS start_ts, "
		       "(i * 100 + e)::BIGINT AS end_ts, engine, pc::BIGINT AS pc "
		       "FROM range(%d) r(i), (VALUES (1000, 0, 10, 'Pool', 1), "
		       "(2000, 20, 30, 'Act', 1), (3000, 50, 52, 'Pool', 2), (4000, 60, 62, 'Act', 2), "
		       "(5000, 70, 72, 'Sync', 1), (6000, 80, 90, 'Act', 3)) k(base, s, e, engine, pc) "
		       "ORDER BY start_ts, id) TO '%s/Instruction.parquet' (FORMAT parquet)", N, dir);
	nx_test_exf(d, "COPY (SELECT (i * 100 + t)::BIGINT AS timestamp, id, src AS update_source "
		       "FROM range(%d) r(i), (VALUES (10, '5', 'Pool', 0), (10, '5', 'Pool', 0), "
		       "(10, '5', 'Pool', 0), (30, '5', 'Act', 3), (40, '7', 'AXI', 0), "
		       "(40, '7', 'AXI', 0), (45, '05', 'Pool', 0), (47, ' 5', 'Act', 0), "
		       "(48, 'x', 'Act', 0), (65, '9', NULL, 2), (90, '9', 'Act', 0)) "
		       "k(t, id, src, every) WHERE every = 0 OR i %% every = 0 "
		       "ORDER BY timestamp) TO '%s/SemaphoreUpdate.parquet' (FORMAT parquet)", N, dir);
	nx_test_exf(d, "COPY (SELECT (base + i)::BIGINT AS id, (i * 100 + e)::BIGINT AS end_ts, "
		       "sem AS semaphore_id FROM range(%d) r(i), (VALUES (7000, 35, '7'), "
		       "(8000, 38, '07'), (9000, 5, '5')) k(base, e, sem) ORDER BY end_ts) TO "
		       "'%s/DmaPacketAggregated.parquet' (FORMAT parquet)", N, dir);
}

static void test_same_edges_as_before(void **state)
{
	(void)state;
	char *dir = nx_test_dir("flow-semaphore");
	char *staging = nx_path_join(dir, "staging");
	struct nx_duck *d = NULL;
	struct nx_err err = { 0 };
	char *ref = nx_test_reference("39_flow_semaphore.sql");
	const char *now = "read_parquet('%s/nx_FlowEdges_1.parquet', file_row_number = true)";
	char *cur;

	assert_int_equal(nx_mkdirs(staging, &err), 0);
	assert_int_equal(nx_duck_open(&d, 2, nx_derive_memory_limit(), &err), 0);
	make_tables(d, dir, staging);
	if (nx_derive_run_files(d, dir, staging, flow_semaphore_file(), 1, NULL, NULL, NULL, &err))
		fail_msg("%s", err.msg);
	cur = nx_xasprintf(now, staging);
	nx_test_exf(d, "CREATE TABLE got AS SELECT * FROM %s", cur);
	nx_test_exf(d, "CREATE TABLE want AS SELECT *, row_number() OVER (ORDER BY out_id, in_table, "
		       "in_id) - 1 AS file_row_number FROM (%s)", ref);

	/* the same rows, in the same order */
	assert_int_equal(nx_test_qi(d, "SELECT count(*) FROM want"), 3 * N + N / 2);
	assert_int_equal(nx_test_qi(d, "SELECT count(*) FROM got"), 3 * N + N / 2);
	assert_int_equal(nx_test_qi(d, "SELECT count(*) FROM (SELECT * FROM got EXCEPT ALL "
				    "SELECT * FROM want)"), 0);
	assert_int_equal(nx_test_qi(d, "SELECT count(*) FROM (SELECT * FROM want EXCEPT ALL "
				    "SELECT * FROM got)"), 0);

	/* by hand: Pool's waiter at +50 by Act's producer when Act updated last (i % 3 == 0),
	 * else by Pool's; Act's waiter on 7 by the transfer on "7" (never "07"); Act pc3 at +80
	 * as Pool's waiter; Sync's waiter by Act pc3 of the round before when i is odd (an
	 * update without a source releases it at +65 when i is even: no edge) */
	assert_int_equal(nx_test_qi(d, "SELECT count(*) FROM got WHERE out_id BETWEEN 3000 AND %d "
				    "AND in_id = CASE WHEN (out_id - 3000) %% 3 = 0 THEN out_id - 1000 "
				    "ELSE out_id - 2000 END AND gap_time = CASE WHEN (out_id - 3000) "
				    "%% 3 = 0 THEN 20 ELSE 40 END", 3000 + N - 1), N);
	assert_int_equal(nx_test_qi(d, "SELECT count(*) FROM got WHERE out_id BETWEEN 4000 AND %d "
				    "AND in_table = 'DmaPacketAggregated' AND in_id = out_id + 3000 "
				    "AND gap_time = 25", 4000 + N - 1), N);
	assert_int_equal(nx_test_qi(d, "SELECT count(*) FROM got WHERE out_id BETWEEN 6000 AND %d",
				    6000 + N - 1), N);
	assert_int_equal(nx_test_qi(d, "SELECT count(*) FROM got WHERE out_id BETWEEN 5000 AND %d "
				    "AND (out_id - 5000) %% 2 = 1 AND in_id = out_id + 999 AND "
				    "gap_time = 80", 5000 + N - 1), N / 2);
	assert_int_equal(nx_test_qi(d, "SELECT count(*) FROM got WHERE in_id >= 8000"), 0);
	nx_duck_close(d);
	free(cur);
	free(ref);
	free(staging);
	free(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_same_edges_as_before),
	};

	return nx_test_done(cmocka_run_group_tests(tests, NULL, NULL));
}
