/* SPDX-License-Identifier: MIT
 * lod.h: the timeline's level-of-detail pyramid (docs/ui.md "Level of detail"). Per
 * source table (Instruction, DmaPacketAggregated, DmaPacket) and track, one row per
 * power-of-two time bucket and level: event count, busy time, first start, last end and
 * the longest event. Built once per profile version into a cache directory outside the
 * profile (<data>/.cache/timeline/), read through its own sandboxed database. */
#ifndef NX_SERVER_LOD_H
#define NX_SERVER_LOD_H

#include "common/compat.h"
#include "common/err.h"
#include "server/profile_db.h"
#include "server/profile_files.h"

#include <sys/stat.h>

#define NX_LOD_TABLE "TimelineLod"
#define NX_LOD_NSRC 4

/* The sources of the pyramid, in the order of nx_lod.src[]. */
struct nx_lod_source {
	const char *table;
	const char *track; /* SQL of the track name */
	const char *label; /* SQL of the label */
};
extern const struct nx_lod_source nx__lod_sources[NX_LOD_NSRC];

struct nx_lod {
	char *dir;        /* the cache directory (resolved) */
	struct nx_pdb *db; /* sandboxed to dir; one view, TimelineLod */
	struct {
		bool present;
		int lo, hi; /* levels lo..hi (bucket 2^level ns) exist; lo > hi: none */
	} src[NX_LOD_NSRC];
	uint64_t rows, bytes;
	double build_s; /* 0 when it was found in the cache */
};

/* Writes the pyramid of the profile in dir (tables files) into out_dir/TimelineLod.parquet,
 * through a private scratch folder in out_dir. *levels gets, per source, the levels
 * written (lo > hi when none). */
int nx__lod_build(const char *dir, const struct nx_pfiles *files, const char *out_dir,
		  int levels[NX_LOD_NSRC][2], uint64_t *rows, struct nx_err *err);

/* The pyramid of a profile version (its directory's identity st) from the cache under
 * data_real, built first when absent. Safe against other processes doing the same: a
 * build goes to a private directory renamed into place. */
int nx__lod_open(const char *data_real, const char *name, const char *dir,
		 const struct stat *st, const struct nx_pfiles *files, unsigned threads,
		 struct nx_lod **out, struct nx_err *err);
void nx__lod_free(struct nx_lod *lod);

#endif
