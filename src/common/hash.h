/* SPDX-License-Identifier: MIT
 * hash.h: the project's hash of byte strings for hash maps and stable ids: 64-bit
 * FNV-1a with the project's seed. The seed is not the published offset basis
 * (14695981039346656037): it lacks that number's last digit. It stays, because ids
 * already stored in profiles (text pids and tids of framework traces) are made from it.
 * Inline, since the trace shaper hashes a key per event. */
#ifndef NX_COMMON_HASH_H
#define NX_COMMON_HASH_H

#include "common/compat.h"

#define NX_FNV1A_SEED 1469598103934665603ull /* see above */
#define NX_FNV1A_PRIME 1099511628211ull

static inline uint64_t nx_fnv1a(const void *data, size_t len)
{
	const unsigned char *p = data;
	uint64_t h = NX_FNV1A_SEED;

	for (size_t i = 0; i < len; i++) {
		h ^= p[i];
		h *= NX_FNV1A_PRIME;
	}
	return h;
}

#endif
