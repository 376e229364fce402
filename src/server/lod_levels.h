/* SPDX-License-Identifier: MIT
 * lod_levels.h: the levels of the timeline cache's pyramids above their finest one,
 * built in C from the level below (lod_levels.c), for the build (lod_build.c). */
#ifndef NX_SERVER_LOD_LEVELS_H
#define NX_SERVER_LOD_LEVELS_H

#include "common/compat.h"
#include "common/err.h"

struct nx_duck;

/* Levels lo+1..hi of tl.lod for source src (src >= 0) or of tl.ctr_lod (src < 0), each
 * from the level below, which must be in the table already in (k, core, track) order, as
 * the finest level's grouping queries insert it; each level is appended in that order
 * too. The rows are the ones the grouping query over the level below gives (lod_build.c):
 * bucket k / 2 (truncated, as DuckDB's integer division), counts and busy times summed,
 * first and last times, the longest event (then the lowest id), least, greatest and last
 * value. */
int nx__lod_levels_up(struct nx_duck *d, int src, int lo, int hi, struct nx_err *err);

#endif
