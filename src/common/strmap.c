/* SPDX-License-Identifier: MIT
 * strmap.c: the hash map (see strmap.h). Each slot holds the key's copy, its length and
 * hash, then the value at the next max_align_t boundary. */
#include "common/compat.h"
#include "common/strmap.h"
#include "common/hash.h"
#include "common/xalloc.h"

#include <stdalign.h>
#include <stdlib.h>
#include <string.h>

struct nx_strmap_key {
	char *key; /* NULL: empty slot */
	size_t klen;
	uint64_t hash;
};

#define ALIGN_UP(n, a) (((n) + (a) - 1) / (a) * (a))
#define VALUE_OFF ALIGN_UP(sizeof(struct nx_strmap_key), alignof(max_align_t))

static inline struct nx_strmap_key *slot_at(const unsigned char *slots, size_t stride,
					    size_t i)
{
	return (struct nx_strmap_key *)(void *)(slots + i * stride);
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

static void grow(struct nx_strmap *m)
{
	size_t ncap = m->cap ? m->cap * 2 : 64;
	unsigned char *ns = nx_xcalloc(ncap, m->stride);

	for (size_t i = 0; i < m->cap; i++) {
		struct nx_strmap_key *k = slot_at(m->slots, m->stride, i);
		if (!k->key)
			continue;
		size_t j = k->hash & (ncap - 1);
		while (slot_at(ns, m->stride, j)->key)
			j = (j + 1) & (ncap - 1);
		memcpy(slot_at(ns, m->stride, j), k, m->stride);
	}
	free(m->slots);
	m->slots = ns;
	m->cap = ncap;
}

void *nx_strmap_get(struct nx_strmap *m, const char *key, size_t klen, bool *added)
{
	uint64_t h = nx_fnv1a(key, klen);

	if ((m->used + 1) * 2 > m->cap)
		grow(m);
	for (size_t j = h & (m->cap - 1);; j = (j + 1) & (m->cap - 1)) {
		struct nx_strmap_key *k = slot_at(m->slots, m->stride, j);
		if (!k->key) {
			k->key = nx_xstrndup(key, klen);
			k->klen = klen;
			k->hash = h;
			m->used++;
			if (added)
				*added = true;
			return value_of(k);
		}
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
		struct nx_strmap_key *k = slot_at(m->slots, m->stride, j);
		if (!k->key)
			return NULL;
		if (k->hash == h && k->klen == klen && !memcmp(k->key, key, klen))
			return value_of(k);
	}
}

void *nx_strmap_next(const struct nx_strmap *m, size_t *pos, const char **key, size_t *klen)
{
	for (size_t i = *pos; i < m->cap; i++) {
		struct nx_strmap_key *k = slot_at(m->slots, m->stride, i);
		if (!k->key)
			continue;
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
	for (size_t i = 0; i < m->cap; i++)
		free(slot_at(m->slots, m->stride, i)->key);
	if (m->cap)
		memset(m->slots, 0, m->cap * m->stride);
	m->used = 0;
}

void nx_strmap_release(struct nx_strmap *m)
{
	size_t vsize = m->vsize;

	nx_strmap_clear(m);
	free(m->slots);
	nx_strmap_init(m, vsize);
}
