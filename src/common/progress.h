/* SPDX-License-Identifier: MIT
 * progress.h: how long-running library work (the ingest) reports progress without
 * printing: the caller installs a callback, the library calls it with events. Only the
 * CLI turns events into text (src/cli/cmd_view.c). */
#ifndef NX_COMMON_PROGRESS_H
#define NX_COMMON_PROGRESS_H

#include "common/compat.h"

enum nx_progress_kind {
	NX_PROGRESS_ROWS,   /* a table is being written: rows so far */
	NX_PROGRESS_TABLE,  /* a table is written: rows, seconds */
	NX_PROGRESS_DONE,   /* the whole ingest is published */
	NX_PROGRESS_NOTE,   /* a line for the user (message), e.g. what is being ingested */
	NX_PROGRESS_WARNING, /* something was left out but the work goes on (message); shown
			      * even when progress lines are not */
};

struct nx_progress_event {
	int kind;
	const char *stage;   /* "raw", "staging", "derive" */
	const char *table;   /* table being written (ROWS, TABLE) or the profile dir (DONE) */
	const char *how;     /* TABLE: NULL, "derived", "merged while streaming" or "empty" */
	const char *message; /* NOTE, WARNING */
	uint64_t rows;       /* ROWS, TABLE: rows written; DONE: raw rows in total */
	double seconds;      /* ROWS, TABLE: time spent on the table; DONE: total time */
	double raw_s, derived_s;  /* DONE: the two stages */
	uint64_t peak_rss_kb;     /* peak resident set of the process so far, 0 if unknown */
};

struct nx_progress {
	void (*fn)(void *user, const struct nx_progress_event *ev);
	void *user;
};

/* Calls p->fn when there is one (p may be NULL); fills peak_rss_kb. */
void nx_progress_emit(const struct nx_progress *p, struct nx_progress_event *ev);

#endif
