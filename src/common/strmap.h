/* SPDX-License-Identifier: MIT
 * strmap.h: the project's hash map: byte-string keys (copied) to fixed-size values.
 * Open addressing with linear probing, FNV-1a (common/hash.h), growth at 50 % load,
 * over a compact index of 8-byte slots (an entry number and the key's hash), so that
 * probing and growth touch little memory; the entries (key, then value) are stored
 * densely in insertion order and a new key costs one allocation (its copy). Iteration
 * goes in slot order, which depends only on the keys inserted and their order, never on
 * addresses.
 *
 * Value pointers stay valid until the next insertion of a new key (the entries may
 * move). Values are zeroed when their key is added; their alignment is that of
 * max_align_t. A map holds fewer than 2^32 keys. */
#ifndef NX_COMMON_STRMAP_H
#define NX_COMMON_STRMAP_H

#include "common/compat.h"

struct nx_strmap {
	uint64_t *index;     /* cap slots: 0 empty, else entry number + 1 | low hash << 32 */
	unsigned char *ents; /* used entries of stride bytes (struct nx_strmap_key, value) */
	size_t cap, used, ents_cap;
	size_t vsize, stride;
};

/* Every map starts with init (a zeroed map is not enough: the value size is needed). */
void nx_strmap_init(struct nx_strmap *m, size_t vsize);
/* The value of key, added (zeroed) when absent; *added (if non-NULL) says which. */
void *nx_strmap_get(struct nx_strmap *m, const char *key, size_t klen, bool *added);
/* The value of key, or NULL. */
void *nx_strmap_find(const struct nx_strmap *m, const char *key, size_t klen);
/* Iteration: the value of the first used slot at or after *pos (start at 0), with its
 * key and key length if asked; *pos moves past it. NULL at the end. */
void *nx_strmap_next(const struct nx_strmap *m, size_t *pos, const char **key, size_t *klen);
/* Frees every key and empties the map; it stays usable with the same value size. Values
 * owning memory must be freed by the caller first (iterate). */
void nx_strmap_clear(struct nx_strmap *m);
void nx_strmap_release(struct nx_strmap *m);

#endif
