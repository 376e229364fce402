/* SPDX-License-Identifier: MIT
 * test_parquet_rle.c: the RLE/bit-packed hybrid of our parquet writer (db/parquet_rle.h).
 * For bytes (widths 1..8) and 32-bit values (widths 1..32), over patterns that put runs
 * at and across the 8-value groups' boundaries, runs of exactly 7, 8 and 9, random
 * values, the widest values, no value and one: a decoder written here from the parquet
 * spec reads back every value, and the bytes are those of the two encoders it replaced
 * (put_levels and nx_pq_dict_put_indices before, kept below as the reference), so the
 * files our writer makes are unchanged. Values read back through DuckDB and our reader
 * from whole files: test_parquet_write. */
#include "common/compat.h"
#include "db/parquet_rle.h"
#include "common/strbuf.h"
#include "common/xalloc.h"
#include "db/thrift_compact.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

/* ---- the reference: the encoders before parquet_rle.c, one generalised over width ---- */

static size_t ref_run_at(const uint32_t *v, size_t i, size_t n)
{
	size_t j = i + 1;

	while (j < n && v[j] == v[i])
		j++;
	return j - i;
}

static void ref_put(struct nx_strbuf *out, const uint32_t *v, size_t n, int bw)
{
	size_t i = 0;

	while (i < n) {
		size_t r = ref_run_at(v, i, n);
		if (r >= 8) {
			nx_tc_write_varint(out, (uint64_t)r << 1);
			for (int b = 0; b < (bw + 7) / 8; b++)
				nx_strbuf_addch(out, (char)(v[i] >> (8 * b)));
			i += r;
			continue;
		}
		size_t j = i;
		do
			j += 8;
		while (j < n && ref_run_at(v, j, n) < 8);
		nx_tc_write_varint(out, (uint64_t)((j - i) / 8) << 1 | 1);
		for (; i < j; i += 8) {
			uint64_t acc = 0;
			int bits = 0;
			for (size_t k = 0; k < 8; k++) {
				acc |= (uint64_t)(i + k < n ? v[i + k] : 0) << bits;
				for (bits += bw; bits >= 8; bits -= 8, acc >>= 8)
					nx_strbuf_addch(out, (char)acc);
			}
		}
		i = j < n ? j : n;
	}
}

/* ---- a decoder, from the spec ---------------------------------------------------------- */

/* Decodes n values of width bw from p[0, len) into out; 0, or -1 when malformed or
 * short. Whatever follows the n values must be the padding of their last group. */
static int decode(const uint8_t *p, size_t len, int bw, uint32_t *out, size_t n)
{
	size_t at = 0, got = 0;

	while (got < n) {
		uint64_t hdr = 0;
		for (int shift = 0;; shift += 7) {
			if (at >= len || shift > 63)
				return -1;
			hdr |= (uint64_t)(p[at] & 0x7f) << shift;
			if (!(p[at++] & 0x80))
				break;
		}
		if (hdr & 1) {
			size_t vals = (size_t)(hdr >> 1) * 8, bit = 0;
			if (!vals || at + vals / 8 * (size_t)bw > len)
				return -1;
			for (size_t k = 0; k < vals; k++) {
				uint64_t x = 0;
				for (int b = 0; b < bw; b++, bit++)
					x |= (uint64_t)((p[at + bit / 8] >> (bit % 8)) & 1) << b;
				if (got < n)
					out[got++] = (uint32_t)x;
				else if (x)
					return -1; /* padding is zeros */
			}
			at += vals / 8 * (size_t)bw;
		} else {
			size_t r = (size_t)(hdr >> 1);
			uint32_t x = 0;
			if (!r || got + r > n || at + (size_t)(bw + 7) / 8 > len)
				return -1;
			for (int b = 0; b < (bw + 7) / 8; b++)
				x |= (uint32_t)p[at++] << (8 * b);
			while (r--)
				out[got++] = x;
		}
	}
	return at == len ? 0 : -1;
}

/* ---- patterns -------------------------------------------------------------------------- */

static uint64_t rng = 0x2545f4914f6cdd1dull;

static uint32_t next(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return (uint32_t)rng;
}

enum { NPAT = 9 };

/* Pattern k of n values below 1 << bw (all of 32 bits at 32). */
static void pattern(int k, uint32_t *v, size_t n, int bw)
{
	uint32_t mask = bw == 32 ? UINT32_MAX : ((uint32_t)1 << bw) - 1;

	for (size_t i = 0; i < n; i++) {
		switch (k) {
		case 0: v[i] = mask; break;                          /* one run, the widest value */
		case 1: v[i] = next() & mask; break;                 /* random */
		case 2: v[i] = (uint32_t)(i / 8) & mask; break;      /* runs of 8 on the groups */
		case 3: v[i] = (uint32_t)((i + 3) / 8) & mask; break; /* runs of 8 across them */
		case 4: v[i] = (uint32_t)(i / 7) & mask; break;      /* runs of 7: bit-packed */
		case 5: v[i] = (uint32_t)(i / 9) & mask; break;      /* runs of 9 */
		case 6: v[i] = (i % 37 < 20 ? 0 : (uint32_t)i) & mask; break; /* long runs, mixed */
		case 7: v[i] = (i >= 5 && i < 13) ? mask : (uint32_t)(i & 1); break; /* a run mid-group */
		default: v[i] = (next() % 16 == 0 ? next() : 1) & mask; break; /* mostly one value */
		}
	}
}

static void check(const uint32_t *v, size_t n, int bw, bool bytes)
{
	struct nx_strbuf got = NX_STRBUF_INIT, want = NX_STRBUF_INIT;
	uint32_t *back = nx_xcalloc(n + 1, sizeof(*back));

	nx_strbuf_addstr(&got, "x"); /* appended after what is there */
	nx_strbuf_addstr(&want, "x");
	if (bytes) {
		uint8_t *b = nx_xcalloc(n + 1, 1);
		for (size_t i = 0; i < n; i++)
			b[i] = (uint8_t)v[i];
		nx_pq_rle_put8(&got, b, n, bw);
		free(b);
	} else {
		nx_pq_rle_put32(&got, v, n, bw);
	}
	ref_put(&want, v, n, bw);
	assert_int_equal(got.len, want.len);
	assert_memory_equal(got.buf, want.buf, got.len);
	assert_int_equal(got.buf[got.len], '\0');
	assert_int_equal(decode((const uint8_t *)got.buf + 1, got.len - 1, bw, back, n), 0);
	if (n)
		assert_memory_equal(back, v, n * sizeof(*v));
	free(back);
	nx_strbuf_release(&got);
	nx_strbuf_release(&want);
}

static void test_widths(void **state)
{
	static const size_t sizes[] = { 0, 1, 7, 8, 9, 15, 16, 17, 64, 1000, 32768 };
	uint32_t *v = nx_xcalloc(32768, sizeof(*v));

	(void)state;
	for (int bw = 1; bw <= 32; bw++)
		for (int k = 0; k < NPAT; k++)
			for (size_t s = 0; s < NX_ARRAY_SIZE(sizes); s++) {
				pattern(k, v, sizes[s], bw);
				check(v, sizes[s], bw, false);
				if (bw <= 8)
					check(v, sizes[s], bw, true);
			}
	free(v);
}

/* Levels as a page has them: a column without NULLs is one run; NULLs every so often,
 * the run between them at every offset from a group's start. */
static void test_levels(void **state)
{
	uint32_t v[300];

	(void)state;
	for (size_t gap = 1; gap < 40; gap++)
		for (size_t off = 0; off < 8; off++) {
			for (size_t i = 0; i < NX_ARRAY_SIZE(v); i++)
				v[i] = (i + off) % gap != 0;
			check(v, NX_ARRAY_SIZE(v), 1, true);
			for (size_t i = 0; i < NX_ARRAY_SIZE(v); i++)
				v[i] = (i + off) % gap == 0 ? 2 : 3;
			check(v, NX_ARRAY_SIZE(v), 2, true);
		}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_widths),
		cmocka_unit_test(test_levels),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
