/* SPDX-License-Identifier: MIT
 * heap.h: the simulator's event queue, a binary min-heap ordered by (time, seq).
 *
 * seq comes from a per-heap counter that grows with every push, so events due at the
 * same time pop in the order they were scheduled. That makes a run a pure function of
 * its inputs: no pointer values, hash orders or clocks take part in the order. */
#ifndef NX_SIM_HEAP_H
#define NX_SIM_HEAP_H

#include "common/compat.h"

struct nx_sim_event {
	uint64_t time;  /* picoseconds of simulated time */
	uint64_t seq;   /* tie-breaker, assigned by nx_sim_heap_push */
	uint32_t kind;  /* owner-defined */
	uint32_t a;     /* owner-defined arguments */
	uint64_t b;
};

struct nx_sim_heap {
	struct nx_sim_event *ev;
	size_t len, cap;
	uint64_t next_seq;
};

void nx_sim_heap_init(struct nx_sim_heap *h);
void nx_sim_heap_release(struct nx_sim_heap *h);
/* Makes room for one more event (heap.c). */
void nx__sim_heap_grow(struct nx_sim_heap *h);

/* Push and pop run once or twice per simulated instruction or DMA packet: they are
 * inline. */
static inline bool nx__sim_heap_less(const struct nx_sim_event *x, const struct nx_sim_event *y)
{
	if (x->time != y->time)
		return x->time < y->time;
	return x->seq < y->seq;
}

/* Schedules an event; its seq field is overwritten. */
static inline void nx_sim_heap_push(struct nx_sim_heap *h, uint64_t time, uint32_t kind,
				    uint32_t a, uint64_t b)
{
	struct nx_sim_event e = { time, h->next_seq++, kind, a, b };
	size_t i;

	if (h->len == h->cap)
		nx__sim_heap_grow(h);
	i = h->len++;
	while (i > 0) {
		size_t parent = (i - 1) / 2;

		if (!nx__sim_heap_less(&e, &h->ev[parent]))
			break;
		h->ev[i] = h->ev[parent];
		i = parent;
	}
	h->ev[i] = e;
}

/* Removes the earliest event into *out; returns false when the heap is empty. */
static inline bool nx_sim_heap_pop(struct nx_sim_heap *h, struct nx_sim_event *out)
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
		if (c + 1 < h->len && nx__sim_heap_less(&h->ev[c + 1], &h->ev[c]))
			c++;
		if (!nx__sim_heap_less(&h->ev[c], &last))
			break;
		h->ev[i] = h->ev[c];
		i = c;
	}
	if (h->len)
		h->ev[i] = last;
	return true;
}

/* The earliest event, NULL when the heap is empty. */
static inline const struct nx_sim_event *nx_sim_heap_top(const struct nx_sim_heap *h)
{
	return h->len ? &h->ev[0] : NULL;
}

/* Takes the next seq for an event kept outside the heap (the DMA engines keep their
 * one pending completion each), so it orders with the heap's events as if pushed. */
static inline uint64_t nx_sim_heap_take_seq(struct nx_sim_heap *h)
{
	return h->next_seq++;
}

#endif
