/* SPDX-License-Identifier: MIT
 * lod_levels.h: the levels of the timeline cache's pyramids built in C, for the build
 * (lod_build.c): an event source's finest level from its events (lod_l0.c), and the
 * levels above the finest one from the level below (lod_levels.c). */
#ifndef NX_SERVER_LOD_LEVELS_H
#define NX_SERVER_LOD_LEVELS_H

#include "common/compat.h"
#include "common/err.h"
#include "db/duck.h"

struct nx_duck;

/* The columns of tl.lod<s> as the appenders write them (level, k, core, track, count,
 * busy, first_ts, last_ts, id, start_ts, end_ts, label): track and label as text, which
 * DuckDB casts a chunk at a time to the table's ENUM types where it has them. */
#define NX_LOD_ROW_COLUMNS 12
extern const enum nx_cell_kind nx__lod_row_kinds[NX_LOD_ROW_COLUMNS];

/* Levels lo+1..hi of tl.lod<src> for source src (src >= 0) or of tl.ctr_lod (src < 0), each
 * from the level below, which must be in the table already in (k, core, track) order, as
 * the finest level's grouping queries insert it; each level is appended in that order
 * too. The rows are the ones the grouping query over the level below gives (lod_build.c):
 * bucket k / 2 (truncated, as DuckDB's integer division), counts and busy times summed,
 * first and last times, the longest event (then the lowest id), least, greatest and last
 * value. A level is read in slices of about chunk / 8 rows of the level below (all at
 * once when it has no more), each slice's rows kept in C until its read has ended, then
 * appended to the table (no staging table) before the next is read. */
int nx__lod_levels_up(struct nx_duck *d, int src, int lo, int hi, int64_t chunk,
		      struct nx_err *err);

/* The same levels of an event source's pyramid (src >= 0) shared with a second thread
 * (lod_build.c's events part; docs/memory.md, "The levels on both threads"), two NULL:
 * all on this one. Before each slice of a level whose level below holds two->min_rows
 * rows or more (the rest of it, too), when the second thread waits for work
 * (nx__lod_levels_second), the rest of the level below is cut at the first bucket of a
 * parent at or after the one of its median row: this thread builds the buckets before
 * the cut, on d, the second the others, on its own connection, in a transaction of its
 * appenders that it commits once this part has committed (a committed transaction's
 * rows go at the table's end), so the table gets the rows at the row ids of one thread;
 * the next level starts once both parts are in. The table must hold the level lo only
 * when it is called. A failure of the second's part fails the build naming the table
 * and level. */
struct nx_lod_levels_two;
int nx__lod_levels_up_two(struct nx_duck *d, int src, int lo, int hi, int64_t chunk,
			  struct nx_lod_levels_two *two, struct nx_err *err);
/* The state the two threads share; levels of fewer than min_rows input rows stay on one
 * (at least 2 for a split). */
struct nx_lod_levels_two *nx__lod_levels_two_new(int64_t min_rows);
void nx__lod_levels_two_free(struct nx_lod_levels_two *two);
/* The first thread, at its end: no more parts are offered (the second returns). */
void nx__lod_levels_two_end(struct nx_lod_levels_two *two);
/* The second thread, once its own work is done (on its own connection d): builds the
 * parts offered until the first ends (two NULL: nothing); gone (it failed): it takes
 * none. Returns the count of parts it built, levels[0] and [1] the first and last level
 * of them (when it built any); a failed part is the first's error. */
int nx__lod_levels_second(struct nx_duck *d, struct nx_lod_levels_two *two, bool gone,
			  int levels[2]);
/* Test hook: with wait_join 1 the first thread waits, before each level large enough to
 * split, for the second to join or to leave, so a test's levels are split whatever the
 * timing; with 2 it offers no part before a level's first slice, and waits before its
 * second (a part offered in the middle of a level); the second's part of level
 * fail_level (0: none) fails. */
void nx__lod_levels_test_hook(int wait_join, int fail_level);

/* Level `level` of tl.lod<src> for event source src, from its n events (times first..last)
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

/* The groups of one time slice of the finest level (nx__lod_l0's), for a pass that reads
 * the events itself (lod_l0_pass.c): fold adds row `row` of chunk c, whose columns are
 * tl.ev<src>'s (core, track, id, start_ts, end_ts, label), to its group; flush_to (below)
 * appends the groups as nx__lod_l0 appends a slice's, adds their count to *rows and
 * empties the slice. */
struct nx_dchunk;
struct nx_lod_l0_slice;
struct nx_lod_l0_slice *nx__lod_l0_slice_new(int src, int level, const char *name);
int nx__lod_l0_fold(struct nx_lod_l0_slice *sl, const struct nx_dchunk *c, size_t row,
		    struct nx_err *err);
/* The same fold with the chunk's BIGINT columns read once per chunk (nx__lod_l0_cols_of;
 * fails when core, id, start_ts or end_ts is of another type) instead of a call per cell,
 * the row's start and end (not NULL) already read by the caller. */
struct nx_lod_l0_cols {
	const struct nx_dchunk *c;
	const int64_t *core, *id;
	const uint64_t *core_valid, *id_valid;
};
int nx__lod_l0_cols_of(struct nx_lod_l0_cols *cols, const struct nx_dchunk *c, const int64_t **s,
		       const int64_t **e, const uint64_t **s_valid, const uint64_t **e_valid,
		       const char *name, struct nx_err *err);
void nx__lod_l0_fold_cols(struct nx_lod_l0_slice *sl, const struct nx_lod_l0_cols *cols, size_t row,
			  int64_t s, int64_t e);
void nx__lod_l0_slice_free(struct nx_lod_l0_slice *sl);
/* flush_to appends to the table `to` (NULL: tl.lod<src>), which has tl.lod<src>'s columns
 * and no rows before the first flush, through *app (opened by the first flush with rows;
 * the caller closes it once the table's last slice is flushed): each flush commits the
 * rows that fill whole vectors of the table, the rest (fewer than 2048) wait in the
 * appender for the next flush or its close (nx_duck_appender_commit, db/duck.h); merge adds the groups of slice `from` (of the same source, level and time slice, its
 * rows read after to's) to slice `to`: the groups the rows of both give folded in one. */
struct nx_duck_appender;
int nx__lod_l0_flush_to(struct nx_lod_l0_slice *sl, struct nx_duck *d, const char *to,
			struct nx_duck_appender **app, int64_t *rows, struct nx_err *err);
void nx__lod_l0_merge(struct nx_lod_l0_slice *to, const struct nx_lod_l0_slice *from);
/* The groups a slice holds. */
size_t nx__lod_l0_count(const struct nx_lod_l0_slice *sl);

/* The events of source src copied into tl.ev<src> and its finest level folded in the same
 * pass (lod_l0_pass.c), on a database d of one thread (else an error): tl.ev<src> made
 * (CREATE TABLE ... AS) as the columns `cols` over the rows of `select` (core, track, id,
 * start_ts, end_ts, label, the text as VARCHAR, in the order of the profile's files),
 * each row also going into the group of its time slice (the slices of nx__lod_l0 for
 * level, first, last, n, chunk), and a slice appended to tl.lod<src> once no row to come can
 * fall into it: `late` bounds how far a row's start may lie before one read before it
 * (the row groups' start_ts statistics give it). The slices kept open are those within
 * late of the last start (at most late / width + 2 of them). *rows gets the level's rows,
 * got (count, first start, last end) those of the events read. */
int nx__lod_l0_pass(struct nx_duck *d, int src, const char *select, const char *cols,
		    const char *name, int level, int64_t first, int64_t last, int64_t n,
		    int64_t chunk, int64_t late, int64_t *rows, int64_t got[3],
		    struct nx_err *err);

/* The same pass over the rows of a table in two halves, each on a connection of its
 * own, so that two threads share it (lod_build.c's events split): the first half the
 * rows of the first files, the second the rows of the files after them. Each appends
 * its rows to tl.ev<src> (INSERT: the table is made before), and the caller commits
 * the second's after the first's, so tl.ev<src> holds the rows at the row ids of one
 * pass. The time slices of the first half's rows go to tl.lod<src> as the pass flushes
 * them, but for the ones still open at its end (kept in the half); the second half's
 * slices up to c_aside (the last the first half's rows can fall in) are kept in its half
 * too, the later ones appended to the table `stage`. nx__lod_l0_half_join then merges
 * the second's kept slices into the first's and appends them to tl.lod<src> in slice
 * order (the caller then appends `stage`'s rows after them): tl.lod<src> gets the rows
 * of one pass, in its order. A slice the second half keeps that the first has flushed
 * already is an error (the statistics' lateness did not hold). */
struct nx_lod_l0_half {
	bool second;
	int64_t c_first;   /* second: the least slice its rows can fall in */
	int64_t c_aside;   /* second: its slices up to this one are kept */
	const char *stage; /* second: where its later slices go */
	/* filled by the pass: */
	struct nx_lod_l0_run *pass; /* first: the pass, its open slices */
	struct nx_lod_l0_slice **kept; /* second: its kept slices, of slices kept_c[] */
	int64_t *kept_c;
	size_t nkept;
	int64_t rows, got[3];
};
int nx__lod_l0_half(struct nx_duck *d, int src, const char *select, const char *cols,
		    const char *name, int level, int64_t first, int64_t last, int64_t n,
		    int64_t chunk, int64_t late, struct nx_lod_l0_half *half, struct nx_err *err);
/* Joins two halves on d (the first's connection): see above; *rows gets both halves'
 * level rows, got what both read. Frees what the halves hold (also on failure, and when
 * called with err set by the caller's failure: rc != 0 then only frees). */
int nx__lod_l0_half_join(struct nx_duck *d, int rc, struct nx_lod_l0_half *first,
			 struct nx_lod_l0_half *second, int64_t *rows, int64_t got[3],
			 struct nx_err *err);

#endif
