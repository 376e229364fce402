/* SPDX-License-Identifier: MIT
 * memory_note.c: with NX_INGEST_MEMORY_LOG=1, a progress note at each of the ingest's
 * phase ends saying what the process and its DuckDB database hold then: VmRSS and VmHWM
 * from /proc/self/status, and duckdb_memory()'s non-empty tags (docs/memory.md, "The
 * peak at 100M"). A debugging aid: off, it costs one getenv per phase. */
#include "common/compat.h"
#include "ingest/memory_note.h"
#include "common/strbuf.h"

#include <stdio.h>
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
