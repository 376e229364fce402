/* SPDX-License-Identifier: MIT
 * duck_alloc.h: gives back to the system the pages DuckDB's allocator keeps after they
 * were freed (docs/memory.md, "Where the build's memory is"). DuckDB 1.4 on Linux
 * allocates through a jemalloc of its own, which returns a freed page only as allocation
 * goes on, after about a second: a query that frees and allocates a lot (the timeline
 * cache's build) kept 40 to 90 MiB of such pages resident beside its buffer pool. While a
 * caller wants it, a thread purges them every interval_ms, and glibc's free pages too
 * (malloc_trim): DuckDB's objects other than its buffers (row groups' version info and
 * segments, our own L0 slices) are allocated there, and its arenas kept 15 to 30 MiB of
 * freed pages at 100M records (docs/memory.md, "The peak at 100M, again"). */
#ifndef NX_DB_DUCK_ALLOC_H
#define NX_DB_DUCK_ALLOC_H

#include "common/compat.h"

/* Starts the purger (or, when it runs, sets its interval to interval_ms, at least 1) and
 * counts the caller as one of its users. Nothing when interval_ms is 0 or the library has
 * no allocator of its own; never fails (without the thread the pages stay as before). */
void nx_duck_alloc_purger_start(long interval_ms);
/* Ends one nx_duck_alloc_purger_start's use; the last user's stop ends the thread. */
void nx_duck_alloc_purger_stop(long interval_ms);

/* Gives back, once and now, the pages DuckDB's allocator keeps after they were freed (what
 * the purger does every interval); nothing when the library has no allocator of its own. */
void nx_duck_alloc_purge(void);

/* DuckDB's allocator's own figures in bytes (jemalloc's stats.*): allocated to objects,
 * in active pages, resident, mapped, and retained (unmapped but kept as address space). */
struct nx_duck_alloc_stats {
	size_t allocated, active, resident, mapped, retained;
};
/* Fills s; -ENOENT when the library has no allocator of its own or no statistics. */
int nx_duck_alloc_stats(struct nx_duck_alloc_stats *s);

#endif
