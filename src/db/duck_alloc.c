/* SPDX-License-Identifier: MIT
 * duck_alloc.c: the purger of DuckDB's allocator (duck_alloc.h). DuckDB's jemalloc is
 * reached through its control entry point, duckdb_je_mallctl, which libduckdb exports;
 * it is looked up once. One thread serves every user of the process (the build of
 * `view` beside its ingest, or a server's builds), and it purges every arena at once, so
 * the ingest's DuckDB and a server's query databases give their freed pages back too;
 * then glibc's (malloc_trim: every arena's free pages), which hold DuckDB's other objects.
 * It also reads the allocator's statistics for the ingest's memory notes. */
#include "common/compat.h"
#include "db/duck_alloc.h"

#include <dlfcn.h>
#include <errno.h>
#include <malloc.h>
#include <stdint.h>
#include <pthread.h>
#include <stddef.h>
#include <time.h>

typedef int (*mallctl_fn)(const char *name, void *old, size_t *oldlen, void *new_value,
			  size_t newlen);

/* jemalloc's control name for a purge of every arena (4096: MALLCTL_ARENAS_ALL) */
#define PURGE_ALL "arena.4096.purge"

static pthread_once_t lookup_once = PTHREAD_ONCE_INIT;
static mallctl_fn duck_mallctl;

/* life orders the starts and stops of the thread (a stop joins it before a start can
 * make another); lock guards users and every_ms, which the thread reads */
static pthread_mutex_t life = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t wake = PTHREAD_COND_INITIALIZER;
static unsigned users;
static long every_ms;
static bool running;
static pthread_t thread;

static void lookup(void)
{
	*(void **)&duck_mallctl = dlsym(RTLD_DEFAULT, "duckdb_je_mallctl");
}

static void *purger_run(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&lock);
	while (users) {
		struct timespec t;

		clock_gettime(CLOCK_REALTIME, &t);
		t.tv_sec += every_ms / 1000;
		t.tv_nsec += (every_ms % 1000) * 1000000L;
		t.tv_sec += t.tv_nsec / 1000000000L;
		t.tv_nsec %= 1000000000L;
		pthread_cond_timedwait(&wake, &lock, &t);
		if (!users)
			break;
		pthread_mutex_unlock(&lock);
		duck_mallctl(PURGE_ALL, NULL, NULL, NULL, 0);
		/* and glibc's free pages, in every arena: DuckDB's own objects (not its
		 * buffers) are allocated there */
		malloc_trim(0);
		pthread_mutex_lock(&lock);
	}
	pthread_mutex_unlock(&lock);
	return NULL;
}

/* Whether a purger with this interval can run: a positive interval, and the library's own
 * allocator found. */
static bool can_purge(long interval_ms)
{
	if (interval_ms <= 0)
		return false;
	pthread_once(&lookup_once, lookup);
	return duck_mallctl != NULL;
}

void nx_duck_alloc_purger_start(long interval_ms)
{
	if (!can_purge(interval_ms))
		return;
	pthread_mutex_lock(&life);
	pthread_mutex_lock(&lock);
	every_ms = interval_ms;
	if (!users++)
		running = !pthread_create(&thread, NULL, purger_run, NULL);
	pthread_mutex_unlock(&lock);
	pthread_mutex_unlock(&life);
}

void nx_duck_alloc_purger_stop(long interval_ms)
{
	bool join = false;

	if (!can_purge(interval_ms))
		return;
	pthread_mutex_lock(&life);
	pthread_mutex_lock(&lock);
	if (users && !--users && running) {
		running = false;
		join = true;
		pthread_cond_signal(&wake);
	}
	pthread_mutex_unlock(&lock);
	if (join)
		pthread_join(thread, NULL);
	pthread_mutex_unlock(&life);
}

void nx_duck_alloc_purge(void)
{
	pthread_once(&lookup_once, lookup);
	if (duck_mallctl)
		duck_mallctl(PURGE_ALL, NULL, NULL, NULL, 0);
}

int nx_duck_alloc_stats(struct nx_duck_alloc_stats *s)
{
	static const char *const names[] = { "stats.allocated", "stats.active",
					     "stats.resident", "stats.mapped",
					     "stats.retained" };
	size_t *dst[] = { &s->allocated, &s->active, &s->resident, &s->mapped, &s->retained };
	uint64_t epoch = 1;
	size_t len = sizeof(epoch);

	pthread_once(&lookup_once, lookup);
	if (!duck_mallctl)
		return -ENOENT;
	/* the statistics are a snapshot taken at each new epoch */
	if (duck_mallctl("epoch", &epoch, &len, &epoch, sizeof(epoch)))
		return -ENOENT;
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		len = sizeof(size_t);
		if (duck_mallctl(names[i], dst[i], &len, NULL, 0))
			return -ENOENT;
	}
	return 0;
}
