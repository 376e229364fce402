/* SPDX-License-Identifier: MIT
 * tmap.h: a string-keyed open-addressing hash map for the event shaper: per-thread
 * B/E stacks, async b/e stacks and flow ids. Keys are copied; each slot carries the
 * few fields those uses need, so no per-use value type is required. */
#ifndef NX_TRACE_TMAP_H
#define NX_TRACE_TMAP_H

#include "common/compat.h"

/* An open begin event (B or b) waiting for its end. */
struct nx_open {
	char *name;
	char *extra;
	int64_t start;
	uint64_t offset;
};

struct nx_tslot {
	char *key;            /* NULL: empty slot */
	size_t klen;
	uint64_t hash;
	int64_t num;          /* flows: profile-wide flow number */
	uint64_t starts, ends; /* flows: s and f events seen */
	int64_t pid, tid;     /* stacks: the ids rows get */
	struct nx_open *open; /* stacks: open begins, innermost last */
	size_t nopen, capopen;
};

struct nx_tmap {
	struct nx_tslot *slots;
	size_t cap, used;
};

/* Finds the slot of key, creating it (zeroed) when absent. */
struct nx_tslot *nx_tmap_get(struct nx_tmap *m, const char *key, size_t klen);
/* Frees every key and open begin and empties the map (it stays usable). */
void nx_tmap_clear(struct nx_tmap *m);
void nx_tmap_release(struct nx_tmap *m);

void nx_open_push(struct nx_tslot *s, const char *name, size_t nlen, const char *extra,
		  size_t elen, int64_t start, uint64_t offset);

#endif
