/* SPDX-License-Identifier: MIT
 * lod_carried.h: the timeline cache (lod.h) that `view` builds into a profile before
 * publishing it, so the first open of the timeline reads it at once (docs/ui.md "Level
 * of detail"). */
#ifndef NX_SERVER_LOD_CARRIED_H
#define NX_SERVER_LOD_CARRIED_H

#include "common/compat.h"
#include "common/err.h"

/* Where a build's time goes, phase by phase in the order they ran (the events copy and
 * the pyramid of each source, the counters, the per-line summary, the final checkpoint):
 * the process's CPU seconds (user + system, every thread: meaningful when nothing else
 * runs in the process, as in bench/bench_lod_build) and wall seconds of each. */
#define NX_LOD_MAX_PHASES 24
struct nx_lod_phases {
	size_t n;
	struct {
		char name[48];
		double cpu_s, wall_s;
	} ph[NX_LOD_MAX_PHASES];
};

/* Builds the timeline cache of the profile name whose tables are written in dir (its
 * temporary directory, not yet published) as dir/.timeline/, stamped as carried by the
 * profile; *events gets the events it summarizes, *phases (may be NULL) where its time
 * went. On failure nothing is left in dir. */
int nx_lod_build_carried(const char *dir, const char *name, uint64_t *events,
			 struct nx_lod_phases *phases, struct nx_err *err);

#endif
