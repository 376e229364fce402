/* SPDX-License-Identifier: MIT
 * sha256.h: SHA-256 (FIPS 180-4), the hash of pkg_version 1 NEFF payloads. */
#ifndef NX_COMMON_SHA256_H
#define NX_COMMON_SHA256_H

#include "common/compat.h"
#include "common/md_block.h"

#define NX_SHA256_SIZE 32u

/* Incremental state: init, any number of updates, then final. */
struct nx_sha256 {
	uint32_t h[8];
	struct nx_md_block b; /* the input not yet compressed */
};

void nx_sha256_init(struct nx_sha256 *c);
void nx_sha256_update(struct nx_sha256 *c, const void *data, size_t len);
/* Writes the digest; the state must be initialised again before reuse. */
void nx_sha256_final(struct nx_sha256 *c, uint8_t out[NX_SHA256_SIZE]);
/* One-shot digest of a buffer. */
void nx_sha256(const void *data, size_t len, uint8_t out[NX_SHA256_SIZE]);

#endif
