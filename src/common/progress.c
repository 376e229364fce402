/* SPDX-License-Identifier: MIT
 * progress.c: progress events to the caller's callback (see progress.h). */
#include "common/compat.h"
#include "common/progress.h"

#include <sys/resource.h>

void nx_progress_emit(const struct nx_progress *p, struct nx_progress_event *ev)
{
	struct rusage ru;

	if (!p || !p->fn)
		return;
	ev->peak_rss_kb = getrusage(RUSAGE_SELF, &ru) == 0 ? (uint64_t)ru.ru_maxrss : 0;
	p->fn(p->user, ev);
}
