/* SPDX-License-Identifier: MIT
 * memory_note.h: the ingest's memory at its phase ends, as progress notes, when
 * NX_INGEST_MEMORY_LOG=1 asks for them (memory_note.c). */
#ifndef NX_INGEST_MEMORY_NOTE_H
#define NX_INGEST_MEMORY_NOTE_H

#include "common/compat.h"
#include "common/progress.h"
#include "db/duck.h"

#include <stdbool.h>

/* Whether NX_INGEST_MEMORY_LOG is "1". */
bool nx_memory_note_on(void);
/* Emits a NOTE "memory after WHEN: VmRSS .. VmHWM ..; duckdb_memory(): tag MB ..." on p
 * (d may be NULL: the process's figures only). Never fails. */
void nx_memory_note(struct nx_duck *d, const struct nx_progress *p, const char *when);

/* Starts a thread that samples VmRSS every 100 ms and keeps the figures of the note above
 * (but duckdb_memory()'s) at its highest; nx_memory_watch_stop ends it and emits them as
 * a NOTE "memory at the highest VmRSS seen: ..." on p. One watch at a time. */
void nx_memory_watch_start(void);
void nx_memory_watch_stop(const struct nx_progress *p);

#endif
