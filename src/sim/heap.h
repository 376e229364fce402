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
/* Schedules an event; its seq field is overwritten. */
void nx_sim_heap_push(struct nx_sim_heap *h, uint64_t time, uint32_t kind, uint32_t a, uint64_t b);
/* Removes the earliest event into *out; returns false when the heap is empty. */
bool nx_sim_heap_pop(struct nx_sim_heap *h, struct nx_sim_event *out);

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
