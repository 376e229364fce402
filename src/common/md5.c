/* SPDX-License-Identifier: MIT
 * md5.c: MD5 written from RFC 1321 (section 3). Words are little-endian; the table
 * T[i] is floor(2^32 * |sin(i + 1)|) and each round rotates by its own four amounts. */
#include "common/compat.h"
#include "common/md5.h"

#include <string.h>

static const uint32_t tab[64] = {
	0xd76aa478, 0xe8c7b756, 0x242070db, 0xc1bdceee, 0xf57c0faf, 0x4787c62a, 0xa8304613,
	0xfd469501, 0x698098d8, 0x8b44f7af, 0xffff5bb1, 0x895cd7be, 0x6b901122, 0xfd987193,
	0xa679438e, 0x49b40821, 0xf61e2562, 0xc040b340, 0x265e5a51, 0xe9b6c7aa, 0xd62f105d,
	0x02441453, 0xd8a1e681, 0xe7d3fbc8, 0x21e1cde6, 0xc33707d6, 0xf4d50d87, 0x455a14ed,
	0xa9e3e905, 0xfcefa3f8, 0x676f02d9, 0x8d2a4c8a, 0xfffa3942, 0x8771f681, 0x6d9d6122,
	0xfde5380c, 0xa4beea44, 0x4bdecfa9, 0xf6bb4b60, 0xbebfbc70, 0x289b7ec6, 0xeaa127fa,
	0xd4ef3085, 0x04881d05, 0xd9d4d039, 0xe6db99e5, 0x1fa27cf8, 0xc4ac5665, 0xf4292244,
	0x432aff97, 0xab9423a7, 0xfc93a039, 0x655b59c3, 0x8f0ccc92, 0xffeff47d, 0x85845dd1,
	0x6fa87e4f, 0xfe2ce6e0, 0xa3014314, 0x4e0811a1, 0xf7537e82, 0xbd3af235, 0x2ad7d2bb,
	0xeb86d391,
};

/* Left-rotation amounts, four per round. */
static const uint8_t rot[4][4] = {
	{ 7, 12, 17, 22 }, { 5, 9, 14, 20 }, { 4, 11, 16, 23 }, { 6, 10, 15, 21 },
};

static inline uint32_t rol(uint32_t x, unsigned n)
{
	return (x << n) | (x >> (32 - n));
}

/* Processes one 64-byte block (RFC 1321 3.4). */
static void compress(uint32_t s[4], const uint8_t *p)
{
	uint32_t x[16], a = s[0], b = s[1], c = s[2], d = s[3];

	for (int i = 0; i < 16; i++)
		x[i] = (uint32_t)p[4 * i] | (uint32_t)p[4 * i + 1] << 8 |
		       (uint32_t)p[4 * i + 2] << 16 | (uint32_t)p[4 * i + 3] << 24;
	for (int i = 0; i < 64; i++) {
		int round = i / 16;
		uint32_t f;
		int k;

		switch (round) {
		case 0:
			f = (b & c) | (~b & d);
			k = i;
			break;
		case 1:
			f = (b & d) | (c & ~d);
			k = (5 * i + 1) % 16;
			break;
		case 2:
			f = b ^ c ^ d;
			k = (3 * i + 5) % 16;
			break;
		default:
			f = c ^ (b | ~d);
			k = (7 * i) % 16;
			break;
		}
		uint32_t t = d;
		d = c;
		c = b;
		b = b + rol(a + f + x[k] + tab[i], rot[round][i % 4]);
		a = t;
	}
	s[0] += a, s[1] += b, s[2] += c, s[3] += d;
}

void nx_md5_init(struct nx_md5 *c)
{
	c->s[0] = 0x67452301;
	c->s[1] = 0xefcdab89;
	c->s[2] = 0x98badcfe;
	c->s[3] = 0x10325476;
	nx_md_block_init(&c->b);
}

void nx_md5_update(struct nx_md5 *c, const void *data, size_t len)
{
	nx_md_block_update(&c->b, c->s, compress, data, len);
}

void nx_md5_final(struct nx_md5 *c, uint8_t out[NX_MD5_SIZE])
{
	/* padding (3.1, 3.2): the bit length little-endian */
	nx_md_block_final(&c->b, c->s, compress, false);
	for (int i = 0; i < 4; i++)
		for (int j = 0; j < 4; j++)
			out[4 * i + j] = (uint8_t)(c->s[i] >> (8 * j));
}

void nx_md5(const void *data, size_t len, uint8_t out[NX_MD5_SIZE])
{
	struct nx_md5 c;

	nx_md5_init(&c);
	nx_md5_update(&c, data, len);
	nx_md5_final(&c, out);
}
