/* SPDX-License-Identifier: MIT
 * json_run.h: finds how many bytes of a JSON string's text need no escape, eight bytes
 * at a time (a word-wide test, portable C), for the trace tokenizer, which reads
 * strings, and the JSON writer, which quotes them. */
#ifndef NX_COMMON_JSON_RUN_H
#define NX_COMMON_JSON_RUN_H

#include "common/compat.h"

#include <stdint.h>
#include <string.h>

#define NX_JR_ONES 0x0101010101010101ull
#define NX_JR_HIGHS 0x8080808080808080ull

/* Bit 7 of each byte of v that is zero, and no other bit: adding 0x7f to the low seven
 * bits of a byte cannot carry into the next one, so the lanes stay apart. */
static inline uint64_t nx_jr_zero_lanes(uint64_t v)
{
	const uint64_t low7 = ~NX_JR_HIGHS;

	return ~(((v & low7) + low7) | v | low7);
}

/* Bit 7 of each byte of w that is '"', '\\' or below 0x20, exactly (a byte below 0x20
 * is one whose high bit is clear and whose low seven bits plus 0x60 stay below 0x80). */
static inline uint64_t nx_jr_special_lanes(uint64_t w)
{
	const uint64_t low7 = ~NX_JR_HIGHS;
	uint64_t ctrl = ~((w & low7) + NX_JR_ONES * 0x60) & ~w & NX_JR_HIGHS;

	return nx_jr_zero_lanes(w ^ (NX_JR_ONES * '"')) |
	       nx_jr_zero_lanes(w ^ (NX_JR_ONES * '\\')) | ctrl;
}

/* Length of the leading run of s[0..n) that holds no '"', no '\\' and no byte below
 * 0x20; *high is set when the run holds a byte of 0x80 or more (and left alone when
 * not). On a little-endian machine the first special byte of a word is found from its
 * lane mask; elsewhere that word's bytes are looked at one by one. */
static inline size_t nx_json_plain_run(const unsigned char *s, size_t n, bool *high)
{
	uint64_t seen = 0;
	size_t i = 0;

	for (; n - i >= 8; i += 8) {
		uint64_t w, m;

		memcpy(&w, s + i, 8);
		m = nx_jr_special_lanes(w);
		if (m) {
#if defined(__GNUC__) && defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
			unsigned k = (unsigned)__builtin_ctzll(m) / 8; /* bytes before it */
			seen |= w & ((1ull << (8 * k)) - 1);
			i += k;
			goto done;
#else
			break;
#endif
		}
		seen |= w;
	}
	for (; i < n && s[i] != '"' && s[i] != '\\' && s[i] >= 0x20; i++)
		seen |= s[i];
#if defined(__GNUC__) && defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
done:
#endif
	if (seen & NX_JR_HIGHS)
		*high = true;
	return i;
}

#endif
