/* SPDX-License-Identifier: MIT
 * test_server_watchdog.c: the deadline thread (server/watchdog.h). Entries fire in the
 * order of their deadlines, also when a shorter one is armed while the thread sleeps
 * towards a longer one (arming then has to wake it); a disarmed entry never fires; an
 * entry armed before the thread first waits fires; stopping returns with nothing armed.
 * Runs under TSan with the other server tests. */
#include "common/compat.h"
#include "server/watchdog.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <string.h>
#include <time.h>
#include <cmocka.h>

/* The order in which entries fired: their tags, appended by the callback. */
static char order[16];
static atomic_int nfired;

static void on_fire(void *arg)
{
	int n = atomic_load(&nfired);

	if (n < (int)sizeof(order) - 1)
		order[n] = *(const char *)arg;
	atomic_store(&nfired, n + 1);
}

static void wait_fired(int n)
{
	struct timespec ms10 = { 0, 10000000L };

	for (int i = 0; i < 3000 && atomic_load(&nfired) < n; i++) /* up to 30 s */
		nanosleep(&ms10, NULL);
}

static void test_fire_in_deadline_order(void **state)
{
	struct nx_watchdog wd;
	struct nx_wd_entry a, b, c;
	struct nx_err err = { 0 };
	static const char ta = 'a', tb = 'b', tc = 'c';

	(void)state;
	memset(order, 0, sizeof(order));
	atomic_store(&nfired, 0);
	assert_int_equal(nx__wd_start(&wd, &err), 0);
	nx__wd_arm(&wd, &a, 60000, on_fire, (void *)&ta);
	/* Let the thread go to sleep towards its next wake-up before the short ones come. */
	nanosleep(&(struct timespec){ 0, 50000000L }, NULL);
	nx__wd_arm(&wd, &b, 150, on_fire, (void *)&tb);
	nx__wd_arm(&wd, &c, 800, on_fire, (void *)&tc);
	wait_fired(2);
	assert_int_equal(atomic_load(&nfired), 2);
	/* Both are due before the thread's next tick (NX_WD_TICK_MS): had arming b not
	 * woken it, they would fire together at the tick, in list order (the last armed
	 * first): c, b. */
	assert_string_equal(order, "bc");
	assert_true(b.fired);
	assert_true(c.fired);
	assert_false(nx__wd_disarm(&wd, &a));
	assert_true(nx__wd_disarm(&wd, &b));
	assert_true(nx__wd_disarm(&wd, &c));
	nx__wd_stop(&wd);
	assert_int_equal(atomic_load(&nfired), 2);
}

static void test_disarmed_never_fires(void **state)
{
	struct nx_watchdog wd;
	struct nx_wd_entry a, b;
	struct nx_err err = { 0 };
	static const char ta = 'a', tb = 'b';

	(void)state;
	memset(order, 0, sizeof(order));
	atomic_store(&nfired, 0);
	assert_int_equal(nx__wd_start(&wd, &err), 0);
	/* Armed at once: possibly before the thread first waits. */
	nx__wd_arm(&wd, &a, 200, on_fire, (void *)&ta);
	nx__wd_arm(&wd, &b, 100, on_fire, (void *)&tb);
	assert_false(nx__wd_disarm(&wd, &a));
	wait_fired(1);
	assert_string_equal(order, "b");
	nanosleep(&(struct timespec){ 0, 300000000L }, NULL); /* past a's deadline */
	assert_int_equal(atomic_load(&nfired), 1);
	assert_true(nx__wd_disarm(&wd, &b));
	nx__wd_stop(&wd);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fire_in_deadline_order),
		cmocka_unit_test(test_disarmed_never_fires),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
