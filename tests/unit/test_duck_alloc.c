/* SPDX-License-Identifier: MIT
 * test_duck_alloc.c: DuckDB's allocator's statistics and its purger (db/duck_alloc.h).
 * nx_duck_alloc_stats reads jemalloc's figures, ordered as jemalloc defines them
 * (allocated <= active <= resident, active <= mapped), and they follow a DuckDB query's
 * buffers; with the purger running (which also trims glibc's arenas) a query's rows are
 * the same, and stopping it as often as it was started ends it. Without a library
 * allocator of its own the statistics are -ENOENT and the test skips. */
#include "common/compat.h"
#include "db/duck.h"
#include "db/duck_alloc.h"

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <cmocka.h>

static void check_order(const struct nx_duck_alloc_stats *s)
{
	assert_true(s->allocated <= s->active);
	assert_true(s->active <= s->resident);
	assert_true(s->active <= s->mapped);
}

static void test_stats_and_purger(void **state)
{
	struct nx_duck_alloc_stats before, during;
	struct nx_err err = { 0 };
	struct nx_duck *d = NULL;
	int64_t n = 0;

	(void)state;
	if (nx_duck_alloc_stats(&before) == -ENOENT)
		skip();
	check_order(&before);
	assert_int_equal(nx_duck_open(&d, 1, "64MB", &err), 0);
	nx_duck_alloc_purger_start(5);
	nx_duck_alloc_purger_start(5); /* a second user */
	/* a table of 2M rows held in DuckDB's buffers while the statistics are read */
	assert_int_equal(nx_duck_exec(d, "CREATE TABLE t AS SELECT range AS i, range % 7 AS j "
				      "FROM range(2000000)", &err), 0);
	assert_int_equal(nx_duck_alloc_stats(&during), 0);
	check_order(&during);
	assert_true(during.allocated > before.allocated);
	nx_duck_alloc_purger_stop(5);
	assert_int_equal(nx_duck_query_i64(d, "SELECT sum(j) FROM t", &n, &err), 0);
	assert_int_equal(n, 5999995); /* 285714 full cycles of 0..6 (21 each) and 0, 1 */
	nx_duck_alloc_purger_stop(5);
	nx_duck_alloc_purger_stop(5); /* one stop too many: harmless */
	nx_duck_close(d);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_stats_and_purger),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
