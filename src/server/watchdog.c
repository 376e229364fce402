/* SPDX-License-Identifier: MIT
 * watchdog.c: deadline thread for query timeouts (see watchdog.h). The list of
 * armed entries is short (one per running query), so a linear scan is enough. */
#include "common/compat.h"
#include "server/watchdog.h"

#include <string.h>

static bool before(const struct timespec *a, const struct timespec *b)
{
	return a->tv_sec < b->tv_sec || (a->tv_sec == b->tv_sec && a->tv_nsec < b->tv_nsec);
}

static void add_ms(struct timespec *t, unsigned ms)
{
	t->tv_sec += ms / 1000;
	t->tv_nsec += (long)(ms % 1000) * 1000000L;
	if (t->tv_nsec >= 1000000000L) {
		t->tv_sec++;
		t->tv_nsec -= 1000000000L;
	}
}

static void *wd_main(void *arg)
{
	struct nx_watchdog *wd = arg;

	pthread_mutex_lock(&wd->lock);
	while (!wd->stop) {
		struct timespec now, next;

		clock_gettime(CLOCK_MONOTONIC, &now);
		next = now;
		add_ms(&next, NX_WD_TICK_MS);
		for (struct nx_wd_entry *e = wd->armed; e; e = e->next) {
			if (e->fired)
				continue;
			if (!before(&now, &e->deadline)) {
				e->fired = true;
				e->fn(e->arg);
			} else if (before(&e->deadline, &next)) {
				next = e->deadline;
			}
		}
		wd->wake_at = next;
		pthread_cond_timedwait(&wd->cond, &wd->lock, &next);
	}
	pthread_mutex_unlock(&wd->lock);
	return NULL;
}

int nx__wd_start(struct nx_watchdog *wd, struct nx_err *err)
{
	pthread_condattr_t ca;
	int rc;

	memset(wd, 0, sizeof(*wd));
	pthread_mutex_init(&wd->lock, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&wd->cond, &ca);
	pthread_condattr_destroy(&ca);
	rc = pthread_create(&wd->thread, NULL, wd_main, wd);
	if (rc) {
		pthread_cond_destroy(&wd->cond);
		pthread_mutex_destroy(&wd->lock);
		return nx_errf(err, -rc, "cannot start the query watchdog: %s", strerror(rc));
	}
	wd->running = true;
	return 0;
}

void nx__wd_stop(struct nx_watchdog *wd)
{
	if (!wd->running)
		return;
	pthread_mutex_lock(&wd->lock);
	wd->stop = true;
	pthread_cond_signal(&wd->cond);
	pthread_mutex_unlock(&wd->lock);
	pthread_join(wd->thread, NULL);
	pthread_cond_destroy(&wd->cond);
	pthread_mutex_destroy(&wd->lock);
	wd->running = false;
}

void nx__wd_arm(struct nx_watchdog *wd, struct nx_wd_entry *e, unsigned timeout_ms, nx_wd_fn fn,
		void *arg)
{
	clock_gettime(CLOCK_MONOTONIC, &e->deadline);
	add_ms(&e->deadline, timeout_ms);
	e->fn = fn;
	e->arg = arg;
	e->fired = false;
	pthread_mutex_lock(&wd->lock);
	e->next = wd->armed;
	wd->armed = e;
	/* A thread that wakes before this deadline will see the entry then; one that has
	 * not waited yet (wake_at zero) or whose wake-up passed is about to scan. */
	if (before(&e->deadline, &wd->wake_at))
		pthread_cond_signal(&wd->cond);
	pthread_mutex_unlock(&wd->lock);
}

bool nx__wd_disarm(struct nx_watchdog *wd, struct nx_wd_entry *e)
{
	bool fired;

	pthread_mutex_lock(&wd->lock);
	for (struct nx_wd_entry **p = &wd->armed; *p; p = &(*p)->next) {
		if (*p == e) {
			*p = e->next;
			break;
		}
	}
	fired = e->fired;
	pthread_mutex_unlock(&wd->lock);
	return fired;
}
