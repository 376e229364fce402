/* SPDX-License-Identifier: MIT
 * md_block.c: the block buffering and padding of MD5 and SHA-256 (see md_block.h;
 * RFC 1321 3.1-3.2, FIPS 180-4 5.1.1). */
#include "common/compat.h"
#include "common/md_block.h"

#include <string.h>

void nx_md_block_init(struct nx_md_block *b)
{
	b->total = 0;
	b->fill = 0;
}

void nx_md_block_update(struct nx_md_block *b, uint32_t *state, nx_md_compress_fn *fn,
			const void *data, size_t len)
{
	const uint8_t *p = data;

	b->total += len;
	if (b->fill) {
		size_t take = NX_MD_BLOCK - b->fill < len ? NX_MD_BLOCK - b->fill : len;
		memcpy(b->block + b->fill, p, take);
		b->fill += take;
		p += take;
		len -= take;
		if (b->fill < NX_MD_BLOCK)
			return;
		fn(state, b->block);
		b->fill = 0;
	}
	for (; len >= NX_MD_BLOCK; p += NX_MD_BLOCK, len -= NX_MD_BLOCK)
		fn(state, p);
	memcpy(b->block, p, len);
	b->fill = len;
}

void nx_md_block_final(struct nx_md_block *b, uint32_t *state, nx_md_compress_fn *fn,
		       bool big_endian)
{
	uint64_t bits = b->total * 8;

	b->block[b->fill++] = 0x80;
	if (b->fill > 56) {
		memset(b->block + b->fill, 0, NX_MD_BLOCK - b->fill);
		fn(state, b->block);
		b->fill = 0;
	}
	memset(b->block + b->fill, 0, 56 - b->fill);
	for (int i = 0; i < 8; i++)
		b->block[56 + i] = (uint8_t)(bits >> (big_endian ? 56 - 8 * i : 8 * i));
	fn(state, b->block);
}
