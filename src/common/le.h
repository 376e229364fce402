/* SPDX-License-Identifier: MIT
 * le.h: little-endian fixed-width loads and stores, independent of host byte order:
 * the one set of byte-order helpers for the NEFF, NTFF and ISA encoders and decoders. */
#ifndef NX_COMMON_LE_H
#define NX_COMMON_LE_H

#include "common/compat.h"

#include <string.h>

static inline void nx_put_le16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
}

static inline void nx_put_le32(uint8_t *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

static inline void nx_put_le64(uint8_t *p, uint64_t v)
{
	for (int i = 0; i < 8; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

static inline uint16_t nx_get_le16(const uint8_t *p)
{
	return (uint16_t)(p[0] | (unsigned)p[1] << 8);
}

static inline uint32_t nx_get_le32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static inline uint64_t nx_get_le64(const uint8_t *p)
{
	return (uint64_t)nx_get_le32(p) | (uint64_t)nx_get_le32(p + 4) << 32;
}

/* An n-byte field (n = 1..8), for layouts described by tables. */
static inline void nx_put_le(uint8_t *p, uint64_t v, unsigned n)
{
	for (unsigned i = 0; i < n; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

static inline uint64_t nx_get_le(const uint8_t *p, unsigned n)
{
	uint64_t v = 0;

	for (unsigned i = n; i-- > 0;)
		v = v << 8 | p[i];
	return v;
}

/* IEEE-754 binary64, stored as the little-endian image of its bit pattern. */
static inline void nx_put_ledouble(uint8_t *p, double d)
{
	uint64_t bits;

	memcpy(&bits, &d, sizeof(bits));
	nx_put_le64(p, bits);
}

static inline double nx_get_ledouble(const uint8_t *p)
{
	uint64_t bits = nx_get_le64(p);
	double d;

	memcpy(&d, &bits, sizeof(d));
	return d;
}

#endif
