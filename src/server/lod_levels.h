/* SPDX-License-Identifier: MIT
 * lod_levels.h: the levels of the timeline cache's pyramids built in C, for the build
 * (lod_build.c): an event source's finest level from its events (lod_l0.c), and the
 * levels above the finest one from the level below (lod_levels.c). */
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
 * value. A level is read in slices of about chunk rows of the level below (all at once
 * when it has no more), each appended before the next is read. */
int nx__lod_levels_up(struct nx_duck *d, int src, int lo, int hi, int64_t chunk,
		      struct nx_err *err);

/* Level `level` of tl.lod for event source src, from its n events (times first..last)
 * in the relation `from` (tl.ev<src>, or the profile's table, nx__lod_events_sql; name
 * names it in errors), in the time slices of about chunk rows the grouping query uses
 * (nx__lod_slice_width): per slice, one row per (bucket start_ts // 2^level, truncated
 * as DuckDB's, core, track) in that order, with the event count, summed duration, first
 * start, last end and the longest event (then the lowest id; the first of equal ones;
 * none when every id is NULL), the rows the grouping query of lod_build.c gives, at the
 * same places. *rows gets the level's row count. */
int nx__lod_l0(struct nx_duck *d, int src, const char *from, const char *name, int level,
	       int64_t first, int64_t last, int64_t n, int64_t chunk, int64_t *rows,
	       struct nx_err *err);

#endif
