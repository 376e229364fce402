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
 * the CPU seconds (user + system) and wall seconds of each. The CPU is the process's
 * (every thread: meaningful when nothing else runs in the process, as in
 * bench/bench_lod_build), but for the phases of the events part on two threads
 * (NX_LOD_EVENTS_THREADS, lod_build.c): those are the CPU of the thread that ran them
 * (RUSAGE_THREAD; DuckDB runs each of their statements on that thread), the first
 * thread's (Instruction) listed before the second's (the other sources), and their wall
 * times overlap. */
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

/* The same build in two parts, the first beside the ingest's derive stage: start, once
 * the event tables (Instruction, DmaPacketAggregated, DmaPacket, SystemProfileEvents) are
 * written in dir, builds their events and pyramids on a thread of its own (NULL: the
 * thread could not start, or dir's file system has less than twice the tables' bytes
 * and 64 MB free, so the cache could take space the ingest needs; the caller then builds
 * the whole at the end); wait, once every table but the last few rows' (Warning,
 * SchemaFields, the zero-row files) is written, lets the part build the per-line summary
 * and the counters beside its events (lod.h, struct nx_lod_early) and joins it, before those
 * tables' files change (the ingest joins the parts of a split table); finish, once every
 * table is written, checks what the first part gave and builds the rest (the per-line
 * summary, the counters), then the stamp over the tables as they are then, last, and
 * frees job. On any failure nothing of the cache is left in dir. abort, when the ingest
 * fails instead, interrupts the first part, waits for it, removes what it made and frees
 * job. */
/* DuckDB's memory_limit of the first part (lod.h's NX_LOD_MEMORY is the rest's): with
 * the ingest's own database beside it, 128 MB took `view` to 299 MiB at 100M records
 * (docs/memory.md, "The cache beside the ingest"), 96 MB to 250 MiB, where the ingest's
 * SbufAllocation met the part's full pool ("The peak at 100M"), 64 MB to 241 MiB once the
 * part ran on two threads ("The events part on two threads"); NX_LOD_MEMORY_LIMIT sets
 * both. */
#define NX_LOD_CARRIED_OVERLAP_MEMORY "48MB"

struct nx_lod_carried_job;
struct nx_lod_carried_job *nx_lod_carried_start(const char *dir, const char *name);
void nx_lod_carried_wait(struct nx_lod_carried_job *job);
int nx_lod_carried_finish(struct nx_lod_carried_job *job, uint64_t *events,
			  struct nx_lod_phases *phases, struct nx_err *err);
void nx_lod_carried_abort(struct nx_lod_carried_job *job);

#endif
