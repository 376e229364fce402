/* SPDX-License-Identifier: MIT
 * test_common_map.c: the common helpers shared by every stage: the hashes (FNV-1a with the
 * project's seed, its 128-bit form and the integer mixer; values computed independently, so
 * a change of seed, prime or shift is caught), the string map (add, find, growth, keys with
 * NUL bytes, iteration
 * in slot order, clear), the little-endian loads and stores, JSON string quoting and the
 * decimal integers strbuf appends (against printf's). */
#include "common/compat.h"
#include "common/hash.h"
#include "common/json_writer.h"
#include "common/le.h"
#include "common/strmap.h"
#include "common/strbuf.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "helper/asserts.h"

static void test_fnv1a_vectors(void **state)
{
	(void)state;
	assert_int_equal(nx_fnv1a("", 0), 0x14650fb0739d0383ull);
	assert_int_equal(nx_fnv1a("a", 1), 0x44bd8ad473cd9906ull);
	assert_int_equal(nx_fnv1a("foobar", 6), 0x88fad7c0a8ff07f2ull);
}

/* The uuid of an assembled listing is made of these two halves: they must never change. */
static void test_hash128_vectors(void **state)
{
	uint64_t h[2];

	(void)state;
	nx_hash128("", 0, h);
	assert_int_equal(h[0], 0x14650fb0739d0383ull);
	assert_int_equal(h[1], 0x9e3779b97f4a7c15ull);
	nx_hash128("a", 1, h);
	assert_int_equal(h[0], 0x44bd8ad473cd9906ull);
	assert_int_equal(h[1], 0x22c04a383d4d46e7ull);
	nx_hash128("foobar", 6, h);
	assert_int_equal(h[0], 0x88fad7c0a8ff07f2ull);
	assert_int_equal(h[1], 0xff4e05c2eed57466ull);
}

static void test_mix64_vectors(void **state)
{
	(void)state;
	assert_int_equal(nx_mix64(0), 0);
	assert_int_equal(nx_mix64(1), 0xb456bcfc34c2cb2cull);
	assert_int_equal(nx_mix64(UINT64_MAX), 0x64b5720b4b825f21ull);
	/* consecutive ids, as the ingest's are, land apart in a small table */
	unsigned seen[16] = { 0 };
	for (uint64_t id = 0; id < 1600; id++)
		seen[nx_mix64(id) & 15]++;
	for (int i = 0; i < 16; i++)
		assert_in_range(seen[i], 50, 150);
}

struct val {
	int64_t n;
	char tag[24];
};

static void test_strmap_grows_and_finds(void **state)
{
	struct nx_strmap m;
	char key[32];
	bool added;

	(void)state;
	nx_strmap_init(&m, sizeof(struct val));
	assert_null(nx_strmap_find(&m, "x", 1));
	for (int i = 0; i < 5000; i++) {
		int n = snprintf(key, sizeof(key), "key-%d", i);
		struct val *v = nx_strmap_get(&m, key, (size_t)n, &added);
		assert_true(added);
		assert_int_equal(v->n, 0);
		assert_int_equal(((uintptr_t)v) % _Alignof(max_align_t), 0);
		v->n = i;
	}
	assert_int_equal(m.used, 5000);
	for (int i = 0; i < 5000; i++) {
		int n = snprintf(key, sizeof(key), "key-%d", i);
		struct val *v = nx_strmap_get(&m, key, (size_t)n, &added);
		assert_false(added);
		assert_int_equal(v->n, i);
		assert_ptr_equal(nx_strmap_find(&m, key, (size_t)n), v);
	}
	assert_null(nx_strmap_find(&m, "key-5000", 8));
	assert_null(nx_strmap_find(&m, "key-1", 4)); /* a prefix is another key */

	size_t pos = 0, seen = 0, klen;
	const char *k;
	int64_t sum = 0;
	struct val *v;
	while ((v = nx_strmap_next(&m, &pos, &k, &klen))) {
		assert_memory_equal(k, "key-", 4);
		sum += v->n;
		seen++;
	}
	assert_int_equal(seen, 5000);
	assert_int_equal(sum, 4999 * 5000 / 2);

	nx_strmap_clear(&m);
	assert_int_equal(m.used, 0);
	assert_null(nx_strmap_find(&m, "key-7", 5));
	v = nx_strmap_get(&m, "key-7", 5, &added);
	assert_true(added);
	assert_int_equal(v->n, 0);
	nx_strmap_release(&m);
	assert_null(nx_strmap_find(&m, "key-7", 5));
	nx_strmap_release(&m);
}

static void test_strmap_binary_keys(void **state)
{
	struct nx_strmap m;

	(void)state;
	nx_strmap_init(&m, sizeof(int));
	*(int *)nx_strmap_get(&m, "a\0b", 3, NULL) = 1;
	*(int *)nx_strmap_get(&m, "a\0c", 3, NULL) = 2;
	*(int *)nx_strmap_get(&m, "", 0, NULL) = 3;
	assert_int_equal(*(int *)nx_strmap_find(&m, "a\0b", 3), 1);
	assert_int_equal(*(int *)nx_strmap_find(&m, "a\0c", 3), 2);
	assert_int_equal(*(int *)nx_strmap_find(&m, "", 0), 3);
	assert_null(nx_strmap_find(&m, "a", 1));
	nx_strmap_release(&m);
}

/* Iteration goes in slot order: the order of a table of cap slots that places each key at
 * its FNV-1a hash modulo cap with linear probing, grown by doubling at 50 % load and
 * refilled in old slot order (the trace shaper's rows at a file's end depend on it).
 * The reference below is that table, kept naively. */
static void test_strmap_iterates_in_slot_order(void **state)
{
	enum { N = 5000 };
	static char keys[N][16];
	static int ref[16384]; /* key number + 1, 0 empty */
	size_t cap = 64, used = 0, pos = 0, seen = 0;
	struct nx_strmap m;
	const char *key;
	size_t klen;
	int *v;

	(void)state;
	nx_strmap_init(&m, sizeof(int));
	memset(ref, 0, sizeof(ref));
	for (int i = 0; i < N; i++) {
		snprintf(keys[i], sizeof(keys[i]), "cat\x1f%d", 863350 + 5 * i);
		size_t len = strlen(keys[i]);
		*(int *)nx_strmap_get(&m, keys[i], len, NULL) = i;
		if ((used + 1) * 2 > cap) {
			static int old[16384];
			memcpy(old, ref, cap * sizeof(int));
			memset(ref, 0, 2 * cap * sizeof(int));
			for (size_t j = 0; j < cap; j++) {
				if (!old[j])
					continue;
				const char *k = keys[old[j] - 1];
				size_t s = nx_fnv1a(k, strlen(k)) & (2 * cap - 1);
				while (ref[s])
					s = (s + 1) & (2 * cap - 1);
				ref[s] = old[j];
			}
			cap *= 2;
		}
		size_t s = nx_fnv1a(keys[i], len) & (cap - 1);
		while (ref[s])
			s = (s + 1) & (cap - 1);
		ref[s] = i + 1;
		used++;
	}
	for (size_t j = 0; j < cap; j++) {
		if (!ref[j])
			continue;
		v = nx_strmap_next(&m, &pos, &key, &klen);
		assert_non_null(v);
		assert_int_equal(*v, ref[j] - 1);
		assert_int_equal(klen, strlen(keys[*v]));
		assert_memory_equal(key, keys[*v], klen);
		seen++;
	}
	assert_null(nx_strmap_next(&m, &pos, NULL, NULL));
	assert_int_equal(seen, N);
	/* Cleared, the map is empty and takes the same keys again. */
	nx_strmap_clear(&m);
	pos = 0;
	assert_null(nx_strmap_next(&m, &pos, NULL, NULL));
	assert_null(nx_strmap_find(&m, keys[0], strlen(keys[0])));
	*(int *)nx_strmap_get(&m, keys[7], strlen(keys[7]), NULL) = 7;
	assert_int_equal(*(int *)nx_strmap_find(&m, keys[7], strlen(keys[7])), 7);
	nx_strmap_release(&m);
}

static void test_le_round_trip(void **state)
{
	uint8_t b[8];

	(void)state;
	nx_put_le16(b, 0x1234);
	assert_int_equal(b[0], 0x34);
	assert_int_equal(nx_get_le16(b), 0x1234);
	nx_put_le32(b, 0x89abcdefu);
	assert_int_equal(b[0], 0xef);
	assert_int_equal(b[3], 0x89);
	assert_int_equal(nx_get_le32(b), 0x89abcdefu);
	nx_put_le64(b, 0x0102030405060708ull);
	assert_int_equal(b[0], 0x08);
	assert_int_equal(b[7], 0x01);
	assert_int_equal(nx_get_le64(b), 0x0102030405060708ull);
	assert_int_equal(nx_get_le(b, 3), 0x060708);
	memset(b, 0, sizeof(b));
	nx_put_le(b, 0xaabbccddull, 3);
	assert_int_equal(b[2], 0xbb);
	assert_int_equal(b[3], 0);
	nx_put_ledouble(b, -2.5);
	NX_ASSERT_CMP(nx_get_ledouble(b), ==, -2.5);
}

static void test_strbuf_addi64(void **state)
{
	const int64_t v[] = { 0, 7, -7, 10, -10, 1234567890123LL, INT64_MAX, INT64_MIN,
			      INT64_MIN + 1 };
	char want[32];

	(void)state;
	for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
		struct nx_strbuf sb = NX_STRBUF_INIT;

		nx_strbuf_addstr(&sb, "x");
		nx_strbuf_addi64(&sb, v[i]);
		snprintf(want, sizeof(want), "x%" PRId64, v[i]);
		assert_string_equal(sb.buf, want);
		assert_int_equal(sb.len, strlen(want));
		char buf[NX_I64_TEXT];
		assert_string_equal(nx_i64_text(v[i], buf), want + 1);
		nx_strbuf_release(&sb);
	}
}

/* Plain runs are copied whole; every byte that needs it is escaped, at any position. */
static void test_json_quote(void **state)
{
	static const char in[] = "\"a\\b\nc\rd\te\x01\x1f\x7f\xc3\xa9 z\"";
	struct nx_strbuf out = NX_STRBUF_INIT;

	(void)state;
	nx_strbuf_addstr(&out, "x=");
	nx_json_quote(&out, in, sizeof(in) - 1);
	assert_string_equal(out.buf, "x=\"\\\"a\\\\b\\nc\\rd\\te\\u0001\\u001f\x7f\xc3\xa9 z\\\"\"");
	nx_strbuf_reset(&out);
	nx_json_quote(&out, "a\0b", 3);
	assert_int_equal(out.len, 10);
	assert_memory_equal(out.buf, "\"a\\u0000b\"", 10);
	nx_strbuf_reset(&out);
	nx_json_quote(&out, "", 0);
	assert_string_equal(out.buf, "\"\"");
	nx_strbuf_release(&out);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fnv1a_vectors),
		cmocka_unit_test(test_hash128_vectors),
		cmocka_unit_test(test_mix64_vectors),
		cmocka_unit_test(test_strmap_grows_and_finds),
		cmocka_unit_test(test_strmap_binary_keys),
		cmocka_unit_test(test_strmap_iterates_in_slot_order),
		cmocka_unit_test(test_le_round_trip),
		cmocka_unit_test(test_json_quote),
		cmocka_unit_test(test_strbuf_addi64),
	};
	return cmocka_run_group_tests_name("common_map", tests, NULL, NULL);
}
