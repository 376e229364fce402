/* SPDX-License-Identifier: MIT
 * bench_lod_build.c: builds the timeline cache of a profile as `view` does at the end of
 * its ingest (server/lod_carried.h), into PROFILE_DIR/.timeline, and prints the events
 * it summarizes, its time, CPU time and the process's peak RSS, then one line per phase
 * of the build (the events copy and pyramid of each source, the counters, the per-line
 * summary, the checkpoint) with its CPU and wall seconds: on a loaded machine the CPU
 * seconds are the figure to compare. The profile must not carry one yet.
 * NX_LOD_MEMORY_LIMIT and NX_LOD_CHUNK_ROWS set its bounds (server/lod.h); NX_LOD_SQL_LEVELS=1
 * builds the pyramids' levels above the finest by grouping queries (the build before they
 * were built in C), and NX_LOD_SLICE_GROUPS=0 reads every table file whole (the build
 * before it read large files as slices of row groups), for a before/after on one profile;
 * NX_LOD_EVENTS_IN_PLACE=1 leaves the events of a table in start order in the profile's
 * parquet rather than copying them (docs/memory.md, "Events read in place").
 * usage: bench_lod_build PROFILE_DIR NAME */
#include "common/compat.h"
#include "server/lod_carried.h"

#include <stdio.h>
#include <sys/resource.h>
#include <time.h>

int main(int argc, char **argv)
{
	struct nx_lod_phases ph = { 0 };
	struct nx_err err = { 0 };
	struct timespec a, b;
	struct rusage ru;
	uint64_t events = 0;
	double cpu = 0;

	if (argc != 3) {
		fprintf(stderr, "usage: bench_lod_build PROFILE_DIR NAME\n");
		return 2;
	}
	clock_gettime(CLOCK_MONOTONIC, &a);
	if (nx_lod_build_carried(argv[1], argv[2], &events, &ph, &err)) {
		fprintf(stderr, "bench_lod_build: %s\n", err.msg);
		return 1;
	}
	clock_gettime(CLOCK_MONOTONIC, &b);
	getrusage(RUSAGE_SELF, &ru);
	for (size_t i = 0; i < ph.n; i++)
		cpu += ph.ph[i].cpu_s;
	printf("timeline cache of %s: %llu events, %.2f s, CPU %.2f s, peak RSS %.0f MB\n",
	       argv[1], (unsigned long long)events,
	       (double)(b.tv_sec - a.tv_sec) + (double)(b.tv_nsec - a.tv_nsec) / 1e9, cpu,
	       (double)ru.ru_maxrss / 1024);
	for (size_t i = 0; i < ph.n; i++)
		printf("  %-40s CPU %7.2f s  wall %7.2f s\n", ph.ph[i].name, ph.ph[i].cpu_s,
		       ph.ph[i].wall_s);
	return 0;
}
