/* SPDX-License-Identifier: MIT
 * test_json_run.c: the word-wide scan of JSON string text (common/json_run.h) against
 * the plain byte-by-byte rule: every pair of byte values in every pair of lanes of a
 * word, then runs over random buffers of every length up to 64 with the high-byte flag,
 * and the writer's quoting of text that holds each kind of byte. */
#include "common/compat.h"
#include "common/json_run.h"
#include "common/json_writer.h"
#include "common/strbuf.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

static bool special(unsigned char c)
{
	return c == '"' || c == '\\' || c < 0x20;
}

static uint64_t word_of(const unsigned char *b)
{
	uint64_t w;

	memcpy(&w, b, 8);
	return w;
}

/* The mask marks exactly the special lanes. Lanes are independent, so two bytes at a time in any two lanes
 * cover every borrow or carry that could leak from one lane into another. */
static void test_every_byte_pair_in_every_lane_pair(void **state)
{
	(void)state;
	for (int i = 0; i < 8; i++) {
		for (int j = 0; j < 8; j++) {
			if (i == j)
				continue;
			for (int a = 0; a < 256; a++) {
				for (int b = 0; b < 256; b++) {
					unsigned char w[8];

					memset(w, 'x', sizeof(w));
					w[i] = (unsigned char)a;
					w[j] = (unsigned char)b;
					unsigned char mk[8];
					for (int k = 0; k < 8; k++)
						mk[k] = special(w[k]) ? 0x80 : 0;
					uint64_t want = word_of(mk);
					if (nx_jr_special_lanes(word_of(w)) != want)
						fail_msg("lanes %d,%d bytes 0x%02x,0x%02x: mask %016llx, "
							 "wanted %016llx", i, j, a, b,
							 (unsigned long long)nx_jr_special_lanes(word_of(w)),
							 (unsigned long long)want);
				}
			}
		}
	}
}

static void test_runs_match_the_byte_rule(void **state)
{
	/* Mostly plain text, with now and then a special or a high byte. */
	static const unsigned char pick[] = { 'a', 'Z', ' ', '~', '0', '"', '\\', '\n', 0x01,
					      0x1f, 0x20, 0x7f, 0x80, 0xc3, 0xa9, 0xff };
	unsigned char buf[64];

	(void)state;
	srand(7);
	for (int round = 0; round < 20000; round++) {
		size_t n = (size_t)(rand() % 65);
		for (size_t k = 0; k < n; k++)
			buf[k] = rand() % 4 ? (unsigned char)('a' + rand() % 26)
					    : pick[rand() % (int)sizeof(pick)];
		size_t want = 0;
		bool want_high = false, high = false;
		while (want < n && !special(buf[want]))
			want_high |= buf[want++] >= 0x80;
		size_t got = nx_json_plain_run(buf, n, &high);
		if (got != want || high != want_high)
			fail_msg("round %d (n %zu): run %zu high %d, wanted %zu and %d", round, n, got,
				 high, want, want_high);
	}
}

/* Every byte value at every place of a 48-byte text (three SSE2 blocks, or six words),
 * and every length up to it: the run ends exactly at the first special byte, and the
 * high flag tells a byte of 0x80 or more before it. */
static void test_every_byte_at_every_place(void **state)
{
	unsigned char buf[48];

	(void)state;
	for (size_t n = 0; n <= sizeof(buf); n++)
		for (size_t at = 0; at < sizeof(buf); at++)
			for (unsigned b = 0; b < 256; b++) {
				bool high = false;
				memset(buf, 'a', sizeof(buf));
				buf[at] = (unsigned char)b;
				size_t want = at < n && special((unsigned char)b) ? at : n;
				bool want_high = at < want && b >= 0x80;
				size_t got = nx_json_plain_run(buf, n, &high);
				if (got != want || high != want_high)
					fail_msg("n %zu, byte 0x%02x at %zu: run %zu high %d, wanted %zu "
						 "and %d", n, b, at, got, high, want, want_high);
			}
}

/* Quoting plain text appends exactly '"' text '"' and keeps the buffer terminated,
 * whatever room the buffer had left (every fill level around its growth steps). */
static void test_quote_plain_at_every_fill(void **state)
{
	char text[200], want[512];

	(void)state;
	for (size_t i = 0; i < sizeof(text); i++)
		text[i] = (char)('a' + i % 26);
	for (size_t before = 0; before < 140; before++)
		for (size_t len = 0; len < sizeof(text); len += 7) {
			struct nx_strbuf out = NX_STRBUF_INIT;
			for (size_t i = 0; i < before; i++)
				nx_strbuf_addch(&out, 'x');
			nx_json_quote_plain(&out, text, len);
			memset(want, 'x', before);
			want[before] = '"';
			memcpy(want + before + 1, text, len);
			want[before + 1 + len] = '"';
			want[before + 2 + len] = '\0';
			assert_int_equal(out.len, before + len + 2);
			assert_string_equal(out.buf, want);
			nx_strbuf_release(&out);
		}
}

static void test_quote_escapes_each_kind(void **state)
{
	static const char in[] = "plain text, long enough for words \"q\" \\ \x01\n\t\xc3\xa9 end";
	struct nx_strbuf out = NX_STRBUF_INIT;

	(void)state;
	nx_json_quote(&out, in, sizeof(in) - 1);
	assert_string_equal(out.buf, "\"plain text, long enough for words \\\"q\\\" \\\\ \\u0001"
				     "\\n\\t\xc3\xa9 end\"");
	nx_strbuf_release(&out);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_every_byte_pair_in_every_lane_pair),
		cmocka_unit_test(test_runs_match_the_byte_rule),
		cmocka_unit_test(test_every_byte_at_every_place),
		cmocka_unit_test(test_quote_plain_at_every_fill),
		cmocka_unit_test(test_quote_escapes_each_kind),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
