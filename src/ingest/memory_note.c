/* SPDX-License-Identifier: MIT
 * memory_note.c: with NX_INGEST_MEMORY_LOG=1, a progress note at each of the ingest's
 * phase ends saying what the process and its DuckDB database hold then: VmRSS and VmHWM
 * from /proc/self/status, anonymous and file-backed resident memory from
 * /proc/self/smaps_rollup, glibc's heaps (mallinfo2, and its arenas counted in
 * malloc_info), DuckDB's jemalloc (its stats.*), and duckdb_memory()'s non-empty tags
 * (docs/memory.md, "The peak at 100M" and "The peak at 100M, again"); and a watcher
 * thread that keeps the same figures (but duckdb_memory()'s) as of the process's highest
 * VmRSS, for a note at the end. A debugging aid: off, it costs one getenv per phase. */
#include "common/compat.h"
#include "ingest/memory_note.h"
#include "common/strbuf.h"
#include "db/duck_alloc.h"

#include <malloc.h>
#include <pthread.h>
#include <stdio.h>
#include <time.h>
#include <stdlib.h>
#include <string.h>

bool nx_memory_note_on(void)
{
	const char *v = getenv("NX_INGEST_MEMORY_LOG");
	return v && !strcmp(v, "1");
}

/* VmRSS and VmHWM in MB, from /proc/self/status; nothing where it cannot be read. */
static void add_status(struct nx_strbuf *out)
{
	FILE *f = fopen("/proc/self/status", "r");
	char line[256];
	long kb;

	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "VmRSS: %ld", &kb) == 1)
			nx_strbuf_addf(out, " VmRSS %ld MB", kb / 1024);
		else if (sscanf(line, "VmHWM: %ld", &kb) == 1)
			nx_strbuf_addf(out, " VmHWM %ld MB", kb / 1024);
	}
	fclose(f);
}

/* Anonymous and file-backed resident memory in MB, from /proc/self/smaps_rollup. */
static void add_rollup(struct nx_strbuf *out)
{
	FILE *f = fopen("/proc/self/smaps_rollup", "r");
	char line[256];
	long kb;

	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "Anonymous: %ld", &kb) == 1)
			nx_strbuf_addf(out, " anon %ld MB", kb / 1024);
		else if (sscanf(line, "Rss: %ld", &kb) == 1)
			nx_strbuf_addf(out, " (rss %ld MB)", kb / 1024);
	}
	fclose(f);
}

/* glibc's arenas, counted in malloc_info()'s XML (one <heap> each). */
static int glibc_arenas(void)
{
	char *xml = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&xml, &len);
	int n = 0;

	if (!f)
		return -1;
	if (malloc_info(0, f))
		n = -1;
	fclose(f);
	for (const char *p = xml; n >= 0 && p && (p = strstr(p, "<heap nr=")); p++)
		n++;
	free(xml);
	return n;
}

#define MB(x) ((double)(x) / 1048576.0)

/* glibc's heaps (every arena) and DuckDB's jemalloc, in MB. */
static void add_heaps(struct nx_strbuf *out)
{
	struct mallinfo2 mi = mallinfo2();
	struct nx_duck_alloc_stats js;

	nx_strbuf_addf(out, "; glibc: %d arenas, %.1f MB mapped in them (%.1f MB in use, "
		       "%.1f MB free), %.1f MB in mmaps",
		       glibc_arenas(), MB(mi.arena), MB(mi.uordblks), MB(mi.fordblks),
		       MB(mi.hblkhd));
	if (!nx_duck_alloc_stats(&js))
		nx_strbuf_addf(out, "; jemalloc: %.1f MB allocated, %.1f MB active, %.1f MB "
			       "resident, %.1f MB mapped",
			       MB(js.allocated), MB(js.active), MB(js.resident), MB(js.mapped));
}

/* One cell of the duckdb_memory() query below: "tag MB" pairs. */
static void add_cell(void *arg, size_t row, const char *column, int kind, const char *text)
{
	struct nx_strbuf *out = arg;

	(void)row;
	(void)kind;
	if (!strcmp(column, "tag"))
		nx_strbuf_addf(out, " %s", text ? text : "?");
	else
		nx_strbuf_addf(out, " %s MB", text ? text : "?");
}

void nx_memory_note(struct nx_duck *d, const struct nx_progress *p, const char *when)
{
	struct nx_strbuf msg = NX_STRBUF_INIT;
	struct nx_err ignored = { 0 };

	nx_strbuf_addf(&msg, "memory after %s:", when);
	add_status(&msg);
	add_rollup(&msg);
	add_heaps(&msg);
	if (d) {
		nx_strbuf_addstr(&msg, "; duckdb_memory():");
		/* a failure leaves the note shorter: it only informs */
		(void)nx_duck_query_cells(d, "SELECT tag, round(memory_usage_bytes / 1048576, 1) "
					  "AS mb FROM duckdb_memory() WHERE memory_usage_bytes > 0 "
					  "ORDER BY memory_usage_bytes DESC", add_cell, &msg, &ignored);
	}
	struct nx_progress_event ev = { .kind = NX_PROGRESS_NOTE, .message = msg.buf };
	nx_progress_emit(p, &ev);
	nx_strbuf_release(&msg);
}

/* The watcher: every WATCH_MS, VmRSS; at a new high (by 1 MB or more) the figures above. */
#define WATCH_MS 100

static struct {
	pthread_mutex_t lock;
	pthread_cond_t wake;
	pthread_t thread;
	bool running, stop;
	long best_kb;
	struct nx_strbuf text;
} watch = { .lock = PTHREAD_MUTEX_INITIALIZER, .wake = PTHREAD_COND_INITIALIZER };

static long rss_kb(void)
{
	FILE *f = fopen("/proc/self/status", "r");
	char line[256];
	long kb = 0;

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "VmRSS: %ld", &kb) == 1)
			break;
	fclose(f);
	return kb;
}

static void *watch_run(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&watch.lock);
	while (!watch.stop) {
		struct timespec t;
		long kb;

		pthread_mutex_unlock(&watch.lock);
		kb = rss_kb();
		if (kb >= watch.best_kb + 1024) {
			struct nx_strbuf msg = NX_STRBUF_INIT;

			add_status(&msg);
			add_rollup(&msg);
			add_heaps(&msg);
			pthread_mutex_lock(&watch.lock);
			watch.best_kb = kb;
			nx_strbuf_release(&watch.text);
			watch.text = msg;
		} else {
			pthread_mutex_lock(&watch.lock);
		}
		clock_gettime(CLOCK_REALTIME, &t);
		t.tv_nsec += WATCH_MS * 1000000L;
		t.tv_sec += t.tv_nsec / 1000000000L;
		t.tv_nsec %= 1000000000L;
		if (!watch.stop)
			pthread_cond_timedwait(&watch.wake, &watch.lock, &t);
	}
	pthread_mutex_unlock(&watch.lock);
	return NULL;
}

void nx_memory_watch_start(void)
{
	if (watch.running)
		return;
	watch.stop = false;
	watch.best_kb = 0;
	watch.running = !pthread_create(&watch.thread, NULL, watch_run, NULL);
}

void nx_memory_watch_stop(const struct nx_progress *p)
{
	struct nx_strbuf msg = NX_STRBUF_INIT;

	if (!watch.running)
		return;
	pthread_mutex_lock(&watch.lock);
	watch.stop = true;
	pthread_cond_signal(&watch.wake);
	pthread_mutex_unlock(&watch.lock);
	pthread_join(watch.thread, NULL);
	watch.running = false;
	nx_strbuf_addf(&msg, "memory at the highest VmRSS seen:%s",
		       watch.text.buf ? watch.text.buf : " (none)");
	struct nx_progress_event ev = { .kind = NX_PROGRESS_NOTE, .message = msg.buf };
	nx_progress_emit(p, &ev);
	nx_strbuf_release(&msg);
	nx_strbuf_release(&watch.text);
}
