/* SPDX-License-Identifier: MIT
 * lod_carried.h: the timeline cache (lod.h) that `view` builds into a profile before
 * publishing it, so the first open of the timeline reads it at once (docs/ui.md "Level
 * of detail"). */
#ifndef NX_SERVER_LOD_CARRIED_H
#define NX_SERVER_LOD_CARRIED_H

#include "common/compat.h"
#include "common/err.h"

/* DuckDB's memory_limit of a build in the ingest (NX_LOD_MEMORY_LIMIT in the
 * environment overrides it), so the build stays within the ingest's bound
 * (docs/memory.md) */
#define NX_LOD_INGEST_MEMORY "160MB"

/* Builds the timeline cache of the profile name whose tables are written in dir (its
 * temporary directory, not yet published) as dir/.timeline/, stamped as carried by the
 * profile; *events gets the events it summarizes. On failure nothing is left in dir. */
int nx_lod_build_carried(const char *dir, const char *name, uint64_t *events,
			 struct nx_err *err);

#endif
