/* SPDX-License-Identifier: MIT
 * test_ext_sort.c: the external merge sort (common/ext_sort.h): in memory, with
 * thousands of runs merged over several levels, with equal keys, and on a directory
 * it cannot write (an error naming it, then every later call fails). No run file is
 * left behind. */
#include "common/compat.h"
#include "common/ext_sort.h"
#include "common/fsutil.h"
#include "helper/asserts.h"
#include "helper/fixture.h"
#include "helper/test_dirs.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

struct rec {
	uint64_t key, val;
};

static int cmp_key(const void *pa, const void *pb)
{
	const struct rec *a = pa, *b = pb;
	return a->key < b->key ? -1 : a->key > b->key;
}

static uint64_t next_rand(uint64_t *x)
{
	*x ^= *x << 13;
	*x ^= *x >> 7;
	*x ^= *x << 17;
	return *x;
}

/* Sorts n records (keys below key_range) with a buffer of mem bytes and checks that
 * they come back in order, all of them, each once. */
static void sort_and_check(const char *dir, size_t n, uint64_t key_range, size_t mem,
			   bool expect_spill)
{
	struct nx_xsort s;
	struct nx_err err = { 0 };
	struct rec r;
	uint64_t x = 88172645463325252ull, sum_in = 0, sum_out = 0, prev = 0;
	size_t got = 0;
	int rc;

	nx_xsort_init(&s, dir, sizeof(struct rec), cmp_key, mem);
	for (size_t i = 0; i < n; i++) {
		r.key = next_rand(&x) % key_range;
		r.val = i;
		sum_in += r.key * 1000003u + r.val;
		if (nx_xsort_add(&s, &r, &err))
			fail_msg("%s", err.msg);
	}
	if (nx_xsort_finish(&s, &err))
		fail_msg("%s", err.msg);
	while ((rc = nx_xsort_next(&s, &r, &err)) == 1) {
		NX_ASSERT_CMP(r.key, >=, prev);
		prev = r.key;
		sum_out += r.key * 1000003u + r.val;
		got++;
	}
	assert_int_equal(rc, 0);
	NX_ASSERT_CMP(got, ==, n);
	NX_ASSERT_CMP(sum_out, ==, sum_in);
	assert_true(expect_spill ? s.spilled > n : s.spilled == 0);
	NX_ASSERT_CMP(nx_test_entries(dir), ==, 0); /* run files are unlinked while open */
	nx_xsort_release(&s);
}

static void test_in_memory(void **state)
{
	char *dir = nx_test_dir("xsort-mem");

	(void)state;
	sort_and_check(dir, 1000, UINT64_MAX, 1 << 20, false);
	sort_and_check(dir, 0, 10, 1 << 20, false);
	free(dir);
}

static void test_many_runs(void **state)
{
	char *dir = nx_test_dir("xsort-runs");

	(void)state;
	/* 50-record runs: 2000 of them, merged 64 at a time while they come */
	sort_and_check(dir, 100000, UINT64_MAX, 50 * sizeof(struct rec), true);
	/* few distinct keys: equal records across many runs */
	sort_and_check(dir, 20000, 3, 7 * sizeof(struct rec), true);
	/* a buffer smaller than a record holds one */
	sort_and_check(dir, 300, 1000, 1, true);
	free(dir);
}

static void test_unwritable_dir(void **state)
{
	char *dir = nx_test_dir("xsort-bad");
	char *missing = nx_path_join(dir, "no/such/dir");
	struct nx_xsort s;
	struct nx_err err = { 0 };
	struct rec r = { 1, 2 };
	int rc = 0;

	(void)state;
	nx_xsort_init(&s, missing, sizeof(r), cmp_key, 4 * sizeof(r));
	for (int i = 0; i < 10 && !rc; i++)
		rc = nx_xsort_add(&s, &r, &err);
	assert_int_not_equal(rc, 0);
	assert_non_null(strstr(err.msg, missing));
	struct nx_err again = { 0 };
	assert_int_equal(nx_xsort_add(&s, &r, &again), rc);
	assert_int_equal(nx_xsort_finish(&s, &again), rc);
	assert_int_equal(nx_xsort_next(&s, &r, &again), rc);
	assert_non_null(strstr(again.msg, missing));
	nx_xsort_release(&s);
	free(missing);
	free(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_in_memory),
		cmocka_unit_test(test_many_runs),
		cmocka_unit_test(test_unwritable_dir),
	};
	return nx_test_done(cmocka_run_group_tests(tests, NULL, NULL));
}
