/* SPDX-License-Identifier: MIT
 * view_progress.c: the ingest's progress events as lines on stderr (see view_progress.h). */
#include "common/compat.h"
#include "cli/view_progress.h"
#include "cli/commands.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>

void nx_view_progress_clear(struct nx_view_progress *vp)
{
	if (vp->live)
		fputs("\r\033[K", stderr);
	vp->live = false;
}

static void print_event(void *user, const struct nx_progress_event *ev)
{
	struct nx_view_progress *vp = user;
	double mb = (double)ev->peak_rss_kb / 1024;

	if (vp->quiet && ev->kind != NX_PROGRESS_WARNING)
		return;
	switch (ev->kind) {
	case NX_PROGRESS_ROWS:
		if (!vp->tty || ev->seconds < 1)
			return;
		fprintf(stderr, "\r\033[K  [%s] %s: %" PRIu64 " rows, %.2f M rows/s, %.1f s",
			ev->stage ? ev->stage : "ingest", ev->table, ev->rows,
			ev->seconds > 0 ? (double)ev->rows / ev->seconds / 1e6 : 0.0, ev->seconds);
		vp->live = true;
		break;
	case NX_PROGRESS_TABLE:
		nx_view_progress_clear(vp);
		if (ev->how && !strcmp(ev->how, "empty")) {
			fprintf(stderr, "  %-26s %10d rows  (empty)\n", ev->table, 0);
			break;
		}
		if (ev->how && !strncmp(ev->how, "joined: ", 8)) {
			fprintf(stderr, "  %-26s %10" PRIu64 " tables%6.2f s  peak %.0f MB (%s)\n",
				ev->table, ev->rows, ev->seconds, mb, ev->how + 8);
			break;
		}
		fprintf(stderr, "  %-26s %10" PRIu64 " rows  %6.2f s  peak %.0f MB%s%s%s\n", ev->table,
			ev->rows, ev->seconds, mb, ev->how ? " (" : "", ev->how ? ev->how : "",
			ev->how ? ")" : "");
		break;
	case NX_PROGRESS_DONE:
		nx_view_progress_clear(vp);
		fprintf(stderr, "Wrote %" PRIu64 " raw rows to %s: raw tables %.2f s, derived "
			"tables %.2f s, total %.2f s, peak %.0f MB\n", ev->rows, ev->table, ev->raw_s,
			ev->derived_s, ev->seconds, mb);
		break;
	case NX_PROGRESS_NOTE:
		nx_view_progress_clear(vp);
		fprintf(stderr, "%s\n", ev->message);
		break;
	case NX_PROGRESS_WARNING:
		nx_view_progress_clear(vp);
		fprintf(stderr, "%s view: %s\n", nx_cli_prog, ev->message);
		break;
	}
}

void nx_view_progress_init(struct nx_view_progress *vp, bool quiet)
{
	vp->cb.fn = print_event;
	vp->cb.user = vp;
	vp->tty = isatty(STDERR_FILENO) == 1;
	vp->quiet = quiet;
	vp->live = false;
}
