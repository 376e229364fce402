/* SPDX-License-Identifier: MIT
 * arena.h: bytes copied into blocks that never move, all freed at once. A batch of rows
 * bound for our parquet writer keeps its strings here (db/rowbuf.h) instead of in
 * DuckDB's string heap, whose bookkeeping per string cost more than the copy. */
#ifndef NX_COMMON_ARENA_H
#define NX_COMMON_ARENA_H

#include "common/compat.h"

struct nx_arena_block;

struct nx_arena {
	struct nx_arena_block *head; /* the block being filled; older ones follow */
	size_t used, cap;            /* of head's bytes */
};

#define NX_ARENA_INIT { NULL, 0, 0 }

/* A copy of len bytes of s that stays where it is until nx_arena_free. */
char *nx_arena_copy(struct nx_arena *a, const void *s, size_t len);
/* Frees every block; a is empty again. */
void nx_arena_free(struct nx_arena *a);

#endif
