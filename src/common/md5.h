/* SPDX-License-Identifier: MIT
 * md5.h: MD5 (RFC 1321), the hash of pkg_version 2 NEFF payloads. Used only to check
 * file integrity, never for security. */
#ifndef NX_COMMON_MD5_H
#define NX_COMMON_MD5_H

#include "common/compat.h"
#include "common/md_block.h"

#define NX_MD5_SIZE 16u

/* Incremental state: init, any number of updates, then final. */
struct nx_md5 {
	uint32_t s[4];
	struct nx_md_block b; /* the input not yet compressed */
};

void nx_md5_init(struct nx_md5 *c);
void nx_md5_update(struct nx_md5 *c, const void *data, size_t len);
/* Writes the digest; the state must be initialised again before reuse. */
void nx_md5_final(struct nx_md5 *c, uint8_t out[NX_MD5_SIZE]);
/* One-shot digest of a buffer. */
void nx_md5(const void *data, size_t len, uint8_t out[NX_MD5_SIZE]);

#endif
