/* SPDX-License-Identifier: MIT
 * test_pathlist.c: the locked list of paths (common/pathlist.c) that the temporary
 * directories and the output writer's temporary files share:
 *   - paths are copied in, each visited once, and dropped one copy at a time; dropping
 *     a path not listed changes nothing;
 *   - an emptied list holds no memory;
 *   - a thread that walks the list and keeps the lock (as the signal thread does) leaves
 *     it held, so nobody else can add or drop. */
#include "common/compat.h"
#include "common/pathlist.h"

#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

static char seen[8][32];
static size_t n_seen;

static void record(const char *path)
{
	if (n_seen < 8)
		snprintf(seen[n_seen++], sizeof(seen[0]), "%s", path);
}

static bool was_seen(const char *path)
{
	for (size_t i = 0; i < n_seen; i++)
		if (!strcmp(seen[i], path))
			return true;
	return false;
}

static void walk(struct nx_path_list *l)
{
	n_seen = 0;
	nx_path_list_lock(l);
	nx_path_list_each(l, record);
	nx_path_list_unlock(l);
}

static void test_add_drop_each(void **state)
{
	(void)state;
	struct nx_path_list l = NX_PATH_LIST_INIT;
	char name[16];

	walk(&l);
	assert_int_equal(n_seen, 0);
	nx_path_list_lock(&l);
	for (int i = 0; i < 6; i++) { /* past the first capacity (4) */
		snprintf(name, sizeof(name), "/t/p%d", i);
		nx_path_list_add(&l, name);
	}
	nx_path_list_add(&l, "/t/p2"); /* a second copy */
	name[0] = 'x'; /* the list kept its own copy */
	nx_path_list_unlock(&l);
	walk(&l);
	assert_int_equal(n_seen, 7);
	assert_true(was_seen("/t/p0") && was_seen("/t/p5"));

	nx_path_list_lock(&l);
	nx_path_list_drop(&l, "/t/p0");
	nx_path_list_drop(&l, "/t/absent");
	nx_path_list_drop(&l, "/t/p2");
	nx_path_list_unlock(&l);
	walk(&l);
	assert_int_equal(n_seen, 5);
	assert_false(was_seen("/t/p0"));
	assert_true(was_seen("/t/p2")); /* one copy of two dropped */
	assert_true(was_seen("/t/p1") && was_seen("/t/p3") && was_seen("/t/p4") &&
		    was_seen("/t/p5"));

	nx_path_list_lock(&l);
	for (int i = 1; i < 6; i++) {
		snprintf(name, sizeof(name), "/t/p%d", i);
		nx_path_list_drop(&l, name);
	}
	/* empty again: no memory held */
	assert_int_equal(l.n, 0);
	assert_int_equal(l.cap, 0);
	assert_null(l.paths);
	nx_path_list_drop(&l, "/t/p1"); /* dropping from an empty list */
	nx_path_list_unlock(&l);
	walk(&l);
	assert_int_equal(n_seen, 0);
}

static struct nx_path_list held = NX_PATH_LIST_INIT;

static void *walk_and_keep(void *arg)
{
	(void)arg;
	nx_path_list_lock(&held);
	nx_path_list_each(&held, record);
	return NULL;
}

static void test_walk_keeps_lock(void **state)
{
	(void)state;
	pthread_t th;

	nx_path_list_lock(&held);
	nx_path_list_add(&held, "/t/dir");
	nx_path_list_unlock(&held);
	n_seen = 0;
	assert_int_equal(pthread_create(&th, NULL, walk_and_keep, NULL), 0);
	assert_int_equal(pthread_join(th, NULL), 0);
	assert_int_equal(n_seen, 1);
	assert_string_equal(seen[0], "/t/dir");
	/* the walker ended with the lock held: nobody else may take it */
	assert_int_equal(pthread_mutex_trylock(&held.lock), EBUSY);
	/* (a test only: undo what the ending process would never undo) */
	held.lock = (pthread_mutex_t)PTHREAD_MUTEX_INITIALIZER;
	nx_path_list_lock(&held);
	nx_path_list_drop(&held, "/t/dir");
	nx_path_list_unlock(&held);
	assert_null(held.paths);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_add_drop_each),
		cmocka_unit_test(test_walk_keeps_lock),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
