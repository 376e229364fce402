/* SPDX-License-Identifier: MIT
 * dma_trigger.c: per triggering instruction, the span of the DMA packets it started
 * (see dma_trigger.h). */
#include "common/compat.h"
#include "ingest/dma_trigger.h"
#include "common/xalloc.h"

#include <stdlib.h>
#include <string.h>

static size_t hash(uint64_t id, size_t cap)
{
	id ^= id >> 33;
	id *= 0xff51afd7ed558ccdULL;
	id ^= id >> 33;
	return (size_t)id & (cap - 1);
}

static struct nx_trig_span *slot_of(struct nx_trig_span *s, size_t cap, uint64_t id)
{
	size_t i = hash(id, cap);
	while (s[i].id != UINT64_MAX && s[i].id != id)
		i = (i + 1) & (cap - 1);
	return &s[i];
}

static void grow(struct nx_trig_map *m)
{
	size_t cap = m->cap ? m->cap * 2 : 1024;
	struct nx_trig_span *s = nx_xmalloc(cap * sizeof(*s));
	uint8_t *inst = nx_xcalloc(cap / 8, 1);

	memset(s, 0xff, cap * sizeof(*s));
	for (size_t i = 0; i < m->cap; i++) {
		if (m->slot[i].id == UINT64_MAX)
			continue;
		struct nx_trig_span *to = slot_of(s, cap, m->slot[i].id);
		size_t j = (size_t)(to - s);
		*to = m->slot[i];
		if ((m->inst[i / 8] >> (i % 8)) & 1)
			inst[j / 8] |= (uint8_t)(1u << (j % 8));
	}
	free(m->slot);
	free(m->inst);
	m->slot = s;
	m->inst = inst;
	m->cap = cap;
}

void nx_trig_add(struct nx_trig_map *m, uint64_t id, int64_t start, int64_t end)
{
	if (id == UINT64_MAX)
		return;
	if (2 * (m->n + 1) > m->cap)
		grow(m);
	struct nx_trig_span *s = slot_of(m->slot, m->cap, id);
	if (s->id == UINT64_MAX) {
		s->id = id;
		s->start = start;
		s->end = end;
		m->n++;
		return;
	}
	if (start < s->start)
		s->start = start;
	if (end > s->end)
		s->end = end;
}

const struct nx_trig_span *nx_trig_find(const struct nx_trig_map *m, uint64_t id)
{
	if (!m->cap || id == UINT64_MAX)
		return NULL;
	const struct nx_trig_span *s = slot_of(m->slot, m->cap, id);
	return s->id == id ? s : NULL;
}

void nx_trig_set_inst(struct nx_trig_map *m, uint64_t id, int64_t start, int64_t end)
{
	struct nx_trig_span *s;

	if (!m->cap || id == UINT64_MAX)
		return;
	s = slot_of(m->slot, m->cap, id);
	if (s->id == id && !nx_trig_is_inst(m, s)) {
		size_t i = (size_t)(s - m->slot);
		s->start = start;
		s->end = end;
		m->inst[i / 8] |= (uint8_t)(1u << (i % 8));
	}
}

bool nx_trig_is_inst(const struct nx_trig_map *m, const struct nx_trig_span *s)
{
	size_t i = (size_t)(s - m->slot);
	return (m->inst[i / 8] >> (i % 8)) & 1;
}

void nx_trig_release(struct nx_trig_map *m)
{
	free(m->slot);
	free(m->inst);
	memset(m, 0, sizeof(*m));
}
