/* SPDX-License-Identifier: MIT
 * watchdog.h: one background thread that fires a callback when a deadline passes.
 * The query path arms an entry before running SQL and disarms it afterwards; the
 * callback interrupts the DuckDB connection so a runaway query stops promptly. Every
 * request arms twice (its query, then its connection's wait for the next request), so
 * arming wakes the thread only when the new deadline comes before the thread's next
 * wake-up, which is never more than NX_WD_TICK_MS away. */
#ifndef NX_SERVER_WATCHDOG_H
#define NX_SERVER_WATCHDOG_H

#include "common/compat.h"
#include "common/err.h"

#include <pthread.h>
#include <stdatomic.h>
#include <time.h>

typedef void (*nx_wd_fn)(void *arg);

/* Caller-allocated (usually on the stack of the request thread). */
struct nx_wd_entry {
	struct timespec deadline; /* CLOCK_MONOTONIC */
	nx_wd_fn fn;
	void *arg;
	atomic_bool fired;  /* atomic: the query path reads it without the lock */
	struct nx_wd_entry *next;
};

#define NX_WD_TICK_MS 1000

struct nx_watchdog {
	pthread_t thread;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	struct nx_wd_entry *armed;
	struct timespec wake_at; /* when the thread wakes next; zero before it first waits */
	bool stop;
	bool running;
};

int nx__wd_start(struct nx_watchdog *wd, struct nx_err *err);
/* Joins the thread; every entry must be disarmed before. */
void nx__wd_stop(struct nx_watchdog *wd);

/* Calls fn(arg) from the watchdog thread once timeout_ms have passed, unless the
 * entry is disarmed first. fn runs with the watchdog lock held: keep it short. */
void nx__wd_arm(struct nx_watchdog *wd, struct nx_wd_entry *e, unsigned timeout_ms, nx_wd_fn fn,
		void *arg);

/* Removes the entry. After it returns fn is not running and will not run. Returns
 * whether the deadline fired. */
bool nx__wd_disarm(struct nx_watchdog *wd, struct nx_wd_entry *e);

#endif
