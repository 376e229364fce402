/* SPDX-License-Identifier: MIT
 * lod_pair.h: what the timeline cache's build tests (test_lod_l0, test_lod_levels,
 * test_lod_slices, test_lod_threads, test_lod_encoding) share: the group's directory, a
 * test profile, and a profile's cache built two ways, the second under one environment
 * variable, attached side by side and compared table by table.
 * Every failure is a cmocka test failure with the message (include after cmocka.h). */
#ifndef NX_TEST_LOD_PAIR_H
#define NX_TEST_LOD_PAIR_H

#include "common/compat.h"
#include "db/duck.h"

/* The group's directory, made by nx_lod_group_setup (nx_sfx_tmpdir("lod")). */
extern char *nx_lod_root;
/* cmocka group setup and teardown making and freeing nx_lod_root (removed with the other
 * test directories by nx_test_done). */
int nx_lod_group_setup(void **state);
int nx_lod_group_teardown(void **state);

/* Copies profile directory dir to ref (what was at ref first is removed: a name inside
 * the test's own directory), builds the cache of dir with the environment as it is and
 * of ref with var=value (unset afterwards), checks both count the same events, more than
 * none, and returns a database with dir's cache attached as a and ref's as b (READ_ONLY),
 * with the views a_lod and b_lod (nx_lod_pyramid_view).
 * *events (if non-NULL) gets the events. */
/* A temporary view <db>_lod over the pyramid tables lod0..lod3 of attached cache db, as
 * the single table of the caches before format 8: its source as src, track and label as
 * VARCHAR (no rowid: compare row places table by table, nx_test_same_rows "lod"). */
void nx_lod_pyramid_view(struct nx_duck *d, const char *db);
struct nx_duck *nx_lod_build_pair(const char *dir, const char *ref, const char *var,
				  const char *value, uint64_t *events);

/* The timeline profile of the servers' tests (Instruction, DmaPacketAggregated,
 * DmaPacket, counters) made in nx_lod_root/<tag>: its directory (caller frees). */
char *nx_lod_timeline_profile(const char *tag);
/* Every cache table of a and b (attached to d, as nx_lod_build_pair does): the same rows
 * at the same row ids, and with types, the same column types; b has no other table.
 * Returns the count of tables. */
int64_t nx_lod_same_tables(struct nx_duck *d, bool types);

#endif
