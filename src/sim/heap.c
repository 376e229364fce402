/* SPDX-License-Identifier: MIT
 * heap.c: binary min-heap of simulator events keyed by (time, seq): set-up and growth (push
 * and pop are inline in heap.h). */
#include "common/compat.h"
#include "common/xalloc.h"
#include "sim/heap.h"

#include <stdlib.h>

void nx_sim_heap_init(struct nx_sim_heap *h)
{
	h->ev = NULL;
	h->len = h->cap = 0;
	h->next_seq = 0;
}

void nx_sim_heap_release(struct nx_sim_heap *h)
{
	free(h->ev);
	nx_sim_heap_init(h);
}

void nx__sim_heap_grow(struct nx_sim_heap *h)
{
	NX_GROW(h->ev, h->len + 1, h->cap);
}
