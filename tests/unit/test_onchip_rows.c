/* SPDX-License-Identifier: MIT
 * test_onchip_rows.c: the occupancy rows logged until the usage grid is known
 * (src/ingest/onchip_rows.c): a few rows that stay in the buffer and a million that
 * spill to the staging directory, times and bytes of every sign and size, replayed into
 * a grid, give the same prefix sums as the rows added to it directly; the spill file
 * leaves nothing behind; a spill that cannot be written (a full disk: here a directory
 * that does not exist) is an error naming it at the replay, and nothing overruns. */
#include "common/compat.h"
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "common/xalloc.h"
#include "helper/fixture.h"
#include "helper/test_dirs.h"
#include "ingest/onchip_rows.h"
#include "ingest/onchip_usage.h"

#include <stdlib.h>
#include <string.h>

static uint64_t rng_state;

static uint64_t rnd64(void)
{
	rng_state = rng_state * 6364136223846793005ull + 1442695040888963407ull;
	return rng_state >> 11;
}

static void check(const char *dir, size_t nrows, uint64_t seed)
{
	const int64_t first = 1000, last = 5000000;
	struct nx_onchip_usage want, got;
	struct nx_onchip_rows q;
	struct nx_err err = { 0 };

	rng_state = seed;
	nx_onchip_usage_init(&want, first, last, 3);
	nx_onchip_usage_init(&got, first, last, 3);
	nx_onchip_rows_init(&q, dir);
	for (size_t i = 0; i < nrows; i++) {
		int mem = (int)(rnd64() % 2);
		unsigned unit = mem ? (unsigned)(rnd64() % 9) : 32 * (unsigned)(rnd64() % 5);
		/* mostly in order and inside the grid, some before it, after it, long or
		 * empty; bytes up to 2^40 either sign */
		int64_t start = (int64_t)(rnd64() % 6000000) - 500000;
		int64_t end = start + (rnd64() % 8 ? (int64_t)(rnd64() % 20000)
						    : -(int64_t)(rnd64() % 100));
		int64_t bytes = (int64_t)(rnd64() % (1ull << 40)) - (int64_t)(1ull << 39);
		int64_t cap = mem ? 262144 : 7340032;
		nx_onchip_usage_add(&want, mem, unit, start, end, bytes, cap);
		nx_onchip_rows_add(&q, mem, unit, start, end, bytes, cap);
	}
	assert_int_equal(q.rows, nrows);
	assert_int_equal(nx_onchip_rows_replay(&q, &got, &err), 0);
	assert_true(nrows < 1000 ? q.fd < 0 : q.fd >= 0);
	nx_onchip_rows_release(&q);
	assert_int_equal(nx_test_entries(dir), 0);
	for (int m = 0; m < NX_USAGE_NMEM; m++) {
		assert_int_equal(got.seen[m], want.seen[m]);
		assert_int_equal(got.capacity[m], want.capacity[m]);
		for (unsigned k = 0; k < NX_USAGE_UNITS; k++) {
			if (!want.dsum[m][k])
				continue;
			assert_memory_equal(got.dsum[m][k], want.dsum[m][k],
					    want.nedges * sizeof(__int128));
			assert_memory_equal(got.msum[m][k], want.msum[m][k],
					    want.nedges * sizeof(__int128));
		}
	}
	nx_onchip_usage_release(&want);
	nx_onchip_usage_release(&got);
}

static void test_replay(void **state)
{
	(void)state;
	char *dir = nx_test_dir("onchip-rows");

	check(dir, 0, 1);
	check(dir, 7, 2);
	check(dir, 1000000, 3);
	free(dir);
}

static void test_spill_fails(void **state)
{
	(void)state;
	char *dir = nx_test_dir("onchip-rows-fail");
	char *missing = nx_xasprintf("%s/missing", dir);
	struct nx_onchip_usage u;
	struct nx_onchip_rows q;
	struct nx_err err = { 0 };

	nx_onchip_usage_init(&u, 0, 1000, 0);
	nx_onchip_rows_init(&q, missing);
	for (int i = 0; i < 100000; i++)
		nx_onchip_rows_add(&q, i % 2, 0, i, i + 5, 1000000007LL * i, 100);
	assert_true(nx_onchip_rows_replay(&q, &u, &err) < 0);
	assert_non_null(strstr(err.msg, missing));
	assert_non_null(strstr(err.msg, "cannot create the file"));
	nx_onchip_rows_release(&q);
	nx_onchip_usage_release(&u);
	free(missing);
	free(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_replay),
		cmocka_unit_test(test_spill_fails),
	};
	return nx_test_done(cmocka_run_group_tests(tests, NULL, NULL));
}
