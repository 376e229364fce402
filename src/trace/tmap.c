/* SPDX-License-Identifier: MIT
 * tmap.c: the shaper's hash map (see tmap.h): FNV-1a hashing, linear probing, growth
 * at 50 % load. */
#include "common/compat.h"
#include "trace/tmap.h"
#include "common/xalloc.h"
#include "trace/num.h"

#include <stdlib.h>
#include <string.h>

static void grow(struct nx_tmap *m)
{
	size_t ncap = m->cap ? m->cap * 2 : 64;
	struct nx_tslot *ns = nx_xcalloc(ncap, sizeof(*ns));

	for (size_t i = 0; i < m->cap; i++) {
		struct nx_tslot *s = &m->slots[i];
		if (!s->key)
			continue;
		size_t j = s->hash & (ncap - 1);
		while (ns[j].key)
			j = (j + 1) & (ncap - 1);
		ns[j] = *s;
	}
	free(m->slots);
	m->slots = ns;
	m->cap = ncap;
}

struct nx_tslot *nx_tmap_get(struct nx_tmap *m, const char *key, size_t klen)
{
	uint64_t h = nx_num_fnv1a(key, klen);

	if ((m->used + 1) * 2 > m->cap)
		grow(m);
	size_t j = h & (m->cap - 1);
	for (;; j = (j + 1) & (m->cap - 1)) {
		struct nx_tslot *s = &m->slots[j];
		if (!s->key) {
			s->key = nx_xstrndup(key, klen);
			s->klen = klen;
			s->hash = h;
			m->used++;
			return s;
		}
		if (s->hash == h && s->klen == klen && !memcmp(s->key, key, klen))
			return s;
	}
}

static void free_slot(struct nx_tslot *s)
{
	for (size_t i = 0; i < s->nopen; i++) {
		free(s->open[i].name);
		free(s->open[i].extra);
	}
	free(s->open);
	free(s->key);
}

void nx_tmap_clear(struct nx_tmap *m)
{
	for (size_t i = 0; i < m->cap; i++)
		if (m->slots[i].key)
			free_slot(&m->slots[i]);
	if (m->cap)
		memset(m->slots, 0, m->cap * sizeof(*m->slots));
	m->used = 0;
}

void nx_tmap_release(struct nx_tmap *m)
{
	nx_tmap_clear(m);
	free(m->slots);
	memset(m, 0, sizeof(*m));
}

void nx_open_push(struct nx_tslot *s, const char *name, size_t nlen, const char *extra,
		  size_t elen, int64_t start, uint64_t offset)
{
	NX_GROW(s->open, s->nopen + 1, s->capopen);
	struct nx_open *o = &s->open[s->nopen++];
	o->name = nx_xstrndup(name, nlen);
	o->extra = elen ? nx_xstrndup(extra, elen) : NULL;
	o->start = start;
	o->offset = offset;
}
