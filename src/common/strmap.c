/* SPDX-License-Identifier: MIT
 * strmap.c: the hash map (see strmap.h). An index slot holds its entry's number plus
 * one in the low 32 bits and the low 32 bits of the key's hash in the high ones, so
 * probing compares hashes without touching the entries and growth rehashes from the
 * index alone. Each entry holds the key's copy, its length and hash, then the value at
 * the next max_align_t boundary. */
#include "common/compat.h"
#include "common/strmap.h"
#include "common/assert.h"
#include "common/hash.h"
#include "common/xalloc.h"

#include <stdalign.h>
#include <stdlib.h>
#include <string.h>

struct nx_strmap_key {
	char *key;
	size_t klen;
	uint64_t hash;
};

#define ALIGN_UP(n, a) (((n) + (a) - 1) / (a) * (a))
#define VALUE_OFF ALIGN_UP(sizeof(struct nx_strmap_key), alignof(max_align_t))

static inline struct nx_strmap_key *ent_at(const struct nx_strmap *m, uint64_t slot)
{
	return (struct nx_strmap_key *)(void *)(m->ents + ((slot & 0xffffffffu) - 1) * m->stride);
}

static inline void *value_of(struct nx_strmap_key *k)
{
	return (unsigned char *)k + VALUE_OFF;
}

void nx_strmap_init(struct nx_strmap *m, size_t vsize)
{
	memset(m, 0, sizeof(*m));
	m->vsize = vsize;
	m->stride = ALIGN_UP(VALUE_OFF + vsize, alignof(max_align_t));
}

/* Doubles the index, reinserting its slots in slot order (where the low 32 bits of the
 * hash place them: the same slots as placing by the whole hash while cap <= 2^32). */
static void grow(struct nx_strmap *m)
{
	size_t ncap = m->cap ? m->cap * 2 : 64;
	uint64_t *ni = nx_xcalloc(ncap, sizeof(*ni));

	NX_ASSERT((ncap & (ncap - 1)) == 0); /* slots are found by masking */

	for (size_t i = 0; i < m->cap; i++) {
		uint64_t s = m->index[i];
		if (!s)
			continue;
		size_t j = (s >> 32) & (ncap - 1);
		while (ni[j])
			j = (j + 1) & (ncap - 1);
		ni[j] = s;
	}
	free(m->index);
	m->index = ni;
	m->cap = ncap;
}

void *nx_strmap_get(struct nx_strmap *m, const char *key, size_t klen, bool *added)
{
	uint64_t h = nx_fnv1a(key, klen), tag = h << 32;

	if ((m->used + 1) * 2 > m->cap)
		grow(m);
	NX_ASSERT((m->used + 1) * 2 <= m->cap); /* a free slot ends every probe */
	for (size_t j = h & (m->cap - 1);; j = (j + 1) & (m->cap - 1)) {
		uint64_t s = m->index[j];
		if (!s) {
			if (m->used >= 0xffffffffu)
				abort(); /* more keys than an index slot can number */
			if (m->used == m->ents_cap) {
				m->ents_cap = m->ents_cap ? m->ents_cap * 2 : 32;
				m->ents = nx_xrealloc(m->ents, m->ents_cap * m->stride);
			}
			struct nx_strmap_key *k = (void *)(m->ents + m->used * m->stride);
			memset(k, 0, m->stride);
			k->key = nx_xstrndup(key, klen);
			k->klen = klen;
			k->hash = h;
			m->index[j] = tag | ++m->used;
			if (added)
				*added = true;
			return value_of(k);
		}
		if ((s >> 32) != (h & 0xffffffffu))
			continue;
		struct nx_strmap_key *k = ent_at(m, s);
		if (k->hash == h && k->klen == klen && !memcmp(k->key, key, klen)) {
			if (added)
				*added = false;
			return value_of(k);
		}
	}
}

void *nx_strmap_find(const struct nx_strmap *m, const char *key, size_t klen)
{
	uint64_t h;

	if (!m->used)
		return NULL;
	h = nx_fnv1a(key, klen);
	for (size_t j = h & (m->cap - 1);; j = (j + 1) & (m->cap - 1)) {
		uint64_t s = m->index[j];
		if (!s)
			return NULL;
		if ((s >> 32) != (h & 0xffffffffu))
			continue;
		struct nx_strmap_key *k = ent_at(m, s);
		if (k->hash == h && k->klen == klen && !memcmp(k->key, key, klen))
			return value_of(k);
	}
}

void *nx_strmap_next(const struct nx_strmap *m, size_t *pos, const char **key, size_t *klen)
{
	for (size_t i = *pos; i < m->cap; i++) {
		if (!m->index[i])
			continue;
		struct nx_strmap_key *k = ent_at(m, m->index[i]);
		*pos = i + 1;
		if (key)
			*key = k->key;
		if (klen)
			*klen = k->klen;
		return value_of(k);
	}
	*pos = m->cap;
	return NULL;
}

void nx_strmap_clear(struct nx_strmap *m)
{
	for (size_t i = 0; i < m->used; i++)
		free(((struct nx_strmap_key *)(void *)(m->ents + i * m->stride))->key);
	if (m->cap)
		memset(m->index, 0, m->cap * sizeof(*m->index));
	m->used = 0;
}

void nx_strmap_release(struct nx_strmap *m)
{
	size_t vsize = m->vsize;

	nx_strmap_clear(m);
	free(m->index);
	free(m->ents);
	nx_strmap_init(m, vsize);
}
