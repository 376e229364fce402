/* SPDX-License-Identifier: MIT
 * parquet_rle.c: the RLE/bit-packed hybrid (see parquet_rle.h). One encoder, made for
 * bytes and for 32-bit values by the compiler from the same inline code. It writes
 * into room made once per run, not a byte at a time; a run is found eight bytes at a
 * time among levels (a column without NULLs is one run of a row group's rows). */
#include "common/compat.h"
#include "db/parquet_rle.h"
#include "common/assert.h"
#include "common/le.h"

#include <string.h>

static inline uint32_t get(const void *v, size_t size, size_t i)
{
	return size == 1 ? ((const uint8_t *)v)[i] : ((const uint32_t *)v)[i];
}

/* The length of the run of equal values at i, counted up to lim (> i). */
static inline size_t run_at(const void *v, size_t size, size_t i, size_t lim)
{
	uint32_t x = get(v, size, i);
	size_t j = i + 1;

	if (size == 1) {
		const uint8_t *b = v;
		uint64_t all = 0x0101010101010101ull * x, w;
		for (; j + 8 <= lim; j += 8) {
			memcpy(&w, b + j, 8);
			if (w != all) /* little-endian: the lowest differing byte is the first */
				return j + (size_t)__builtin_ctzll(w ^ all) / 8 - i;
		}
	}
	while (j < lim && get(v, size, j) == x)
		j++;
	return j - i;
}

/* Whether the 8 values at i (all before the end) are equal: the run an RLE run needs. */
static inline bool eight_equal(const void *v, size_t size, size_t i)
{
	if (size == 1) {
		uint64_t w;
		memcpy(&w, (const uint8_t *)v + i, 8);
		return w == 0x0101010101010101ull * (w & 0xff);
	}
	const uint32_t *x = (const uint32_t *)v + i;
	return ((x[1] ^ x[0]) | (x[2] ^ x[0]) | (x[3] ^ x[0]) | (x[4] ^ x[0]) | (x[5] ^ x[0]) |
		(x[6] ^ x[0]) | (x[7] ^ x[0])) == 0;
}

/* A varint (ULEB128) at o; where it ends. */
static inline uint8_t *varint(uint8_t *o, uint64_t x)
{
	for (; x >= 0x80; x >>= 7)
		*o++ = (uint8_t)(x | 0x80);
	*o++ = (uint8_t)x;
	return o;
}

/* Eight values at v (fewer than eight: the rest zero) bit-packed at o, bw bytes. */
static inline uint8_t *pack8(uint8_t *o, const void *v, size_t size, size_t i, size_t have,
			     int bw)
{
	uint64_t acc = 0;
	int nb = 0;

	if (size == 1 && bw == 1 && have == 8) { /* levels of a scalar: a bit from each byte */
		memcpy(&acc, (const uint8_t *)v + i, 8);
		/* byte k's bit lands at bit 56 + k of the product, nothing carried into it */
		*o++ = (uint8_t)((acc * 0x0102040810204080ull) >> 56);
		return o;
	}
	for (size_t k = 0; k < 8; k++) {
		acc |= (uint64_t)(k < have ? get(v, size, i + k) : 0) << nb;
		nb += bw;
		if (nb >= 32) {
			nx_put_le32(o, (uint32_t)acc);
			o += 4;
			acc >>= 32;
			nb -= 32;
		}
	}
	for (; nb > 0; nb -= 8, acc >>= 8) /* 8 * bw bits in all: whole bytes */
		*o++ = (uint8_t)acc;
	return o;
}

static inline __attribute__((always_inline)) void put(struct nx_strbuf *out, const void *v,
						      size_t size, size_t n, int bw)
{
	size_t i = 0;

	NX_ASSERT(bw >= 1 && bw <= (size == 1 ? 8 : 32));
	while (i < n) {
		size_t r = run_at(v, size, i, n);
		if (r >= 8) {
			nx_strbuf_grow(out, 10 + 4);
			uint8_t *o = varint((uint8_t *)out->buf + out->len, (uint64_t)r << 1);
			for (int b = 0; b < (bw + 7) / 8; b++)
				*o++ = (uint8_t)(get(v, size, i) >> (8 * b));
			out->len = (size_t)((char *)o - out->buf);
			i += r;
			continue;
		}
		/* groups of 8 until one starts a run of 8 or more */
		size_t j = i;
		do
			j += 8;
		while (j < n && (j + 8 > n || !eight_equal(v, size, j)));
		size_t groups = (j - i) / 8;
		nx_strbuf_grow(out, 10 + groups * (size_t)bw);
		uint8_t *o = varint((uint8_t *)out->buf + out->len, (uint64_t)groups << 1 | 1);
		for (; i + 8 <= j && i + 8 <= n; i += 8)
			o = pack8(o, v, size, i, 8, bw);
		if (i < j) /* the last group, past n */
			o = pack8(o, v, size, i, n - i, bw);
		out->len = (size_t)((char *)o - out->buf);
		i = j < n ? j : n;
	}
	if (out->buf)
		out->buf[out->len] = '\0';
}

void nx_pq_rle_put8(struct nx_strbuf *out, const uint8_t *v, size_t n, int bw)
{
	put(out, v, 1, n, bw);
}

void nx_pq_rle_put32(struct nx_strbuf *out, const uint32_t *v, size_t n, int bw)
{
	put(out, v, 4, n, bw);
}
