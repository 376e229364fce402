/* SPDX-License-Identifier: MIT
 * heap.c: binary min-heap of simulator events keyed by (time, seq) (see heap.h). */
#include "common/compat.h"
#include "common/xalloc.h"
#include "sim/heap.h"

#include <stdlib.h>

static bool less(const struct nx_sim_event *x, const struct nx_sim_event *y)
{
	if (x->time != y->time)
		return x->time < y->time;
	return x->seq < y->seq;
}

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

void nx_sim_heap_push(struct nx_sim_heap *h, uint64_t time, uint32_t kind, uint32_t a, uint64_t b)
{
	struct nx_sim_event e = { time, h->next_seq++, kind, a, b };
	size_t i;

	NX_GROW(h->ev, h->len + 1, h->cap);
	i = h->len++;
	while (i > 0) {
		size_t parent = (i - 1) / 2;

		if (!less(&e, &h->ev[parent]))
			break;
		h->ev[i] = h->ev[parent];
		i = parent;
	}
	h->ev[i] = e;
}

bool nx_sim_heap_pop(struct nx_sim_heap *h, struct nx_sim_event *out)
{
	struct nx_sim_event last;
	size_t i = 0;

	if (!h->len)
		return false;
	*out = h->ev[0];
	last = h->ev[--h->len];
	for (;;) {
		size_t c = 2 * i + 1;

		if (c >= h->len)
			break;
		if (c + 1 < h->len && less(&h->ev[c + 1], &h->ev[c]))
			c++;
		if (!less(&h->ev[c], &last))
			break;
		h->ev[i] = h->ev[c];
		i = c;
	}
	if (h->len)
		h->ev[i] = last;
	return true;
}
