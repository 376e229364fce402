/* SPDX-License-Identifier: MIT
 * hash.h: the project's hashes, one of each kind. Byte strings, for hash maps and stable
 * ids: 64-bit FNV-1a with the project's seed, and a 128-bit form of it for the NEFF
 * uuids of assembled listings. Integer keys (the ingest's tables of DMA transfer and
 * trigger ids, its bloom filter): one 64-bit mixer. Inline, since the trace shaper hashes
 * a key per event and the ingest mixes an id per DMA packet.
 *
 * The FNV seed is not the published offset basis (14695981039346656037): it lacks that
 * number's last digit. It stays, because ids already stored in profiles (text pids and
 * tids of framework traces) are made from it; the 128-bit hash stays as it is because a
 * listing assembled again must keep its NEFF's uuid (an NTFF names the NEFF it ran). */
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

/* 128 bits of data: out[0] is nx_fnv1a, out[1] a second FNV-style pass from another seed
 * (the golden ratio's 64 bits) that also folds the state's high bits back in, so the two
 * halves are not one function of the other. */
static inline void nx_hash128(const void *data, size_t len, uint64_t out[2])
{
	const unsigned char *p = data;
	uint64_t b = 0x9e3779b97f4a7c15ull;

	for (size_t i = 0; i < len; i++)
		b = (b ^ p[i]) * NX_FNV1A_PRIME + (b >> 29);
	out[0] = nx_fnv1a(data, len);
	out[1] = b;
}

/* An integer key spread over all 64 bits (MurmurHash3's finaliser, fmix64), for tables
 * indexed by its low bits. A bijection: distinct keys stay distinct. */
static inline uint64_t nx_mix64(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdull;
	x ^= x >> 33;
	x *= 0xc4ceb9fe1a85ec53ull;
	x ^= x >> 33;
	return x;
}

#endif
