/* SPDX-License-Identifier: MIT
 * md_block.h: what MD5 and SHA-256 share (both Merkle-Damgard over 64-byte blocks): the
 * buffering of the input into whole blocks for the hash's compression function, and the
 * final padding, a 1 bit, zeros up to 56 mod 64 and the message's length in bits. */
#ifndef NX_COMMON_MD_BLOCK_H
#define NX_COMMON_MD_BLOCK_H

#include "common/compat.h"

#define NX_MD_BLOCK 64u

/* A hash's compression function: one 64-byte block into its state words. */
typedef void nx_md_compress_fn(uint32_t *state, const uint8_t *block);

struct nx_md_block {
	uint64_t total;              /* bytes hashed so far */
	uint8_t block[NX_MD_BLOCK];  /* pending partial block */
	size_t fill;                 /* bytes used in block */
};

void nx_md_block_init(struct nx_md_block *b);
/* Feeds len bytes: every whole block goes through fn into state, the rest waits in b. */
void nx_md_block_update(struct nx_md_block *b, uint32_t *state, nx_md_compress_fn *fn,
			const void *data, size_t len);
/* Pads and compresses the last block(s); the bit length is big-endian when big_endian
 * (SHA-256), else little-endian (MD5). */
void nx_md_block_final(struct nx_md_block *b, uint32_t *state, nx_md_compress_fn *fn,
		       bool big_endian);

#endif
