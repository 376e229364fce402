/* SPDX-License-Identifier: MIT
 * view_progress.h: how `view` shows the ingest's progress events on stderr: one line per
 * table written, notes ("Ingesting ...", "Wrote ..."), the closing summary line, and, on a
 * terminal, a live line with the table being written and its rows/s. With quiet only
 * warnings are shown. */
#ifndef NX_CLI_VIEW_PROGRESS_H
#define NX_CLI_VIEW_PROGRESS_H

#include "common/compat.h"
#include "common/progress.h"

struct nx_view_progress {
	struct nx_progress cb; /* hand &cb to the library */
	bool tty, quiet;
	bool live; /* a live line is on screen */
};

void nx_view_progress_init(struct nx_view_progress *vp, bool quiet);
/* Clears the live line, before an error message is printed. */
void nx_view_progress_clear(struct nx_view_progress *vp);

#endif
