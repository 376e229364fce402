/* SPDX-License-Identifier: MIT
 * arena.c: a list of blocks filled in turn (see arena.h). Blocks grow from 64 KiB to
 * 1 MiB; a copy larger than that gets a block of its own. */
#include "common/compat.h"
#include "common/arena.h"
#include "common/assert.h"
#include "common/xalloc.h"

#include <stdlib.h>
#include <string.h>

struct nx_arena_block {
	struct nx_arena_block *next;
	char bytes[];
};

#define FIRST_BLOCK ((size_t)64 << 10)
#define LAST_BLOCK ((size_t)1 << 20)

char *nx_arena_copy(struct nx_arena *a, const void *s, size_t len)
{
	if (!a->head || a->cap - a->used < len) {
		size_t cap = a->cap ? a->cap * 2 : FIRST_BLOCK;
		if (cap > LAST_BLOCK)
			cap = LAST_BLOCK;
		if (cap < len)
			cap = len;
		struct nx_arena_block *b = nx_xmalloc(sizeof(*b) + cap);
		b->next = a->head;
		a->head = b;
		a->used = 0;
		a->cap = cap;
	}
	NX_ASSERT(a->cap - a->used >= len && a->used <= a->cap);
	char *p = a->head->bytes + a->used;
	if (len)
		memcpy(p, s, len);
	a->used += len;
	return p;
}

void nx_arena_free(struct nx_arena *a)
{
	while (a->head) {
		struct nx_arena_block *next = a->head->next;
		free(a->head);
		a->head = next;
	}
	a->used = a->cap = 0;
}
