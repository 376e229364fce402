/* SPDX-License-Identifier: MIT
 * test_trace_tok.c: the streaming JSON tokenizer and the number conversions on tricky
 * inputs: escapes and unicode, invalid UTF-8, huge numbers, nesting limits, the
 * tolerated slips (trailing commas, raw control bytes in strings) and the grammar
 * errors next to them, truncation, tokens across window boundaries and split gzip
 * members. */
#include "common/compat.h"
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "helper/asserts.h"

#include "common/strbuf.h"
#include "common/xalloc.h"
#include "trace/jtok.h"
#include "trace/num.h"

#include <stdlib.h>
#include <string.h>
#include <regex.h>
#include <stdio.h>
#include <zlib.h>

struct tk {
	struct nx_tin in;
	struct nx_jtok t;
	struct nx_err err;
};

static void tk_open(struct tk *k, const void *buf, size_t len)
{
	memset(k, 0, sizeof(*k));
	assert_int_equal(nx_tin_open_mem(&k->in, buf, len, "mem.json", &k->err), 0);
	nx_jtok_init(&k->t, &k->in);
}

static void tk_close(struct tk *k)
{
	nx_jtok_release(&k->t);
	nx_tin_close(&k->in);
}

/* Tokenizes doc to the end; returns the final code and leaves every STR/NUM text,
 * separated by '|', in out. */
static int run(const void *doc, size_t len, struct nx_strbuf *out, struct nx_err *err)
{
	struct tk k;
	int kind;

	tk_open(&k, doc, len);
	while ((kind = nx_jtok_next(&k.t, &k.err)) > 0) {
		if (out && (kind == NX_JT_STR || kind == NX_JT_NUM || kind == NX_JT_KEY)) {
			nx_strbuf_add(out, k.t.text.buf ? k.t.text.buf : "", k.t.text.len);
			nx_strbuf_addch(out, '|');
		}
	}
	if (err)
		*err = k.err;
	tk_close(&k);
	return kind;
}

static void test_escapes_unicode(void **state)
{
	static const char doc[] =
		"[\"a\\\"b\\\\c\\/d\\b\\f\\n\\r\\t\", \"\\u00e9\\u4E2D\", \"\\ud83d\\ude00\", "
		"\"\\ud800x\", \"\\udc00\", \"caf\xc3\xa9\", \"bad\xff\", {\"k\\u0041\": 1}]";
	struct nx_strbuf out = NX_STRBUF_INIT;

	(void)state;
	assert_int_equal(run(doc, strlen(doc), &out, NULL), NX_JT_END);
	assert_string_equal(out.buf, "a\"b\\c/d\b\f\n\r\t|\xc3\xa9\xe4\xb8\xad|\xf0\x9f\x98\x80|"
				     "\xef\xbf\xbdx|\xef\xbf\xbd|caf\xc3\xa9|bad\xef\xbf\xbd|kA|1|");
	nx_strbuf_release(&out);
}

static void test_huge_numbers_exact(void **state)
{
	static const char doc[] = "{\"a\": 10159970886766084423, \"b\": -1.5e300, "
				  "\"c\": 123456789012345678901234567890, \"d\": [0.1, -0]}";
	struct tk k;
	struct nx_strbuf cap = NX_STRBUF_INIT;

	(void)state;
	tk_open(&k, doc, strlen(doc));
	int kind = nx_jtok_next(&k.t, &k.err);
	assert_int_equal(kind, NX_JT_OBJ);
	assert_int_equal(nx_jtok_capture(&k.t, kind, &cap, 1 << 20, &k.err), 0);
	assert_string_equal(cap.buf, "{\"a\":10159970886766084423,\"b\":-1.5e300,"
				     "\"c\":123456789012345678901234567890,\"d\":[0.1,-0]}");
	assert_int_equal(nx_jtok_next(&k.t, &k.err), NX_JT_END);
	tk_close(&k);
	nx_strbuf_release(&cap);
}

/* Every string of up to 5 bytes over the number alphabet, as an array element and as a
 * member value, is accepted exactly when the JSON grammar (here a POSIX regex, written
 * apart from the tokenizer) takes it, and then handed out as written. */
static void test_number_grammar_exhaustive(void **state)
{
	static const char alpha[] = "019-+.eE";
	regex_t re;
	char s[8], doc[32];
	struct nx_strbuf out = NX_STRBUF_INIT;
	size_t tried = 0, valid = 0;

	(void)state;
	assert_int_equal(regcomp(&re, "^-?(0|[1-9][0-9]*)([.][0-9]+)?([eE][+-]?[0-9]+)?$",
				 REG_EXTENDED | REG_NOSUB), 0);
	for (size_t len = 1; len <= 5; len++) {
		size_t total = 1;
		for (size_t i = 0; i < len; i++)
			total *= sizeof(alpha) - 1;
		for (size_t code = 0; code < total; code++) {
			size_t c = code;
			for (size_t i = 0; i < len; i++, c /= sizeof(alpha) - 1)
				s[i] = alpha[c % (sizeof(alpha) - 1)];
			s[len] = '\0';
			bool want = regexec(&re, s, 0, NULL, 0) == 0;
			const char *forms[] = { "[%s]", "[%s,1]", "{\"k\":%s}", "[ %s ]" };
			for (size_t f = 0; f < NX_ARRAY_SIZE(forms); f++) {
				int n = snprintf(doc, sizeof(doc), forms[f], s);
				struct nx_err err = { 0 };
				nx_strbuf_reset(&out);
				int rc = run(doc, (size_t)n, &out, &err);
				if ((rc == NX_JT_END) != want)
					fail_msg("'%s': rc %d (%s), the grammar says %s", doc, rc, err.msg,
						 want ? "valid" : "invalid");
				const char *got = out.buf + (f == 2 ? 2 : 0);
				if (want && (strncmp(got, s, len) || got[len] != '|'))
					fail_msg("'%s' came out as '%s'", doc, out.buf);
				tried++;
			}
			valid += want;
		}
	}
	assert_true(valid > 100 && tried > 100000);
	regfree(&re);
	nx_strbuf_release(&out);
}

static void test_number_conversions(void **state)
{
	int64_t v;
	bool exact;

	(void)state;
	assert_true(nx_num_us_to_ns("1212075548353.304", &v, &exact));
	assert_int_equal(v, 1212075548353304LL);
	assert_true(exact);
	assert_true(nx_num_us_to_ns("1.5", &v, &exact) && v == 1500 && exact);
	assert_true(nx_num_us_to_ns("-2.5", &v, &exact) && v == -2500);
	assert_true(nx_num_us_to_ns("1e3", &v, &exact) && v == 1000000);
	assert_true(nx_num_us_to_ns("0.0005", &v, &exact) && v == 1 && !exact);
	assert_true(nx_num_us_to_ns("0.0004", &v, &exact) && v == 0 && !exact);
	assert_true(nx_num_us_to_ns("0", &v, &exact) && v == 0 && exact);
	assert_false(nx_num_us_to_ns("99999999999999999999", &v, &exact));
	assert_false(nx_num_us_to_ns("abc", &v, &exact));
	/* both sides of the short path's limits: 16 integer digits, 3 fraction digits,
	 * INT64_MAX ns */
	assert_true(nx_num_us_to_ns("1683564901548726", &v, &exact) && exact);
	assert_int_equal(v, 1683564901548726000LL);
	assert_true(nx_num_us_to_ns("-9223372036854775.807", &v, &exact) && exact);
	assert_int_equal(v, -INT64_MAX);
	assert_false(nx_num_us_to_ns("9223372036854776", &v, &exact));
	assert_false(nx_num_us_to_ns("9999999999999999.999", &v, &exact));
	assert_false(nx_num_us_to_ns("12345678901234567", &v, &exact));
	assert_true(nx_num_us_to_ns("00000001234567890", &v, &exact) && exact); /* 17 digits */
	assert_int_equal(v, 1234567890000LL);
	assert_true(nx_num_us_to_ns("999999999999999.999", &v, &exact) && exact);
	assert_int_equal(v, 999999999999999999LL);
	assert_true(nx_num_us_to_ns("9223372036854775.807", &v, &exact) && exact);
	assert_int_equal(v, INT64_MAX);
	assert_false(nx_num_us_to_ns("9223372036854775.808", &v, &exact));
	assert_true(nx_num_us_to_ns("1.2345", &v, &exact) && v == 1235 && !exact);
	assert_true(nx_num_us_to_ns("-0.001", &v, &exact) && v == -1 && exact);
	assert_true(nx_num_us_to_ns("007.", &v, &exact) && v == 7000 && exact);
	assert_true(nx_num_us_to_ns(".5", &v, &exact) && v == 500 && exact);
	assert_false(nx_num_us_to_ns("-", &v, &exact));
	assert_false(nx_num_us_to_ns("1.5x", &v, &exact));
	assert_false(nx_num_us_to_ns("1..5", &v, &exact));
	/* every integer and fraction length the short path takes, against arithmetic */
	for (int digits = 1; digits <= 16; digits++)
		for (int frac = 0; frac <= 3; frac++) {
			char text[40];
			int64_t ip = 1, fp = frac ? 7 : 0, scale = 1;
			for (int i = 1; i < digits; i++)
				ip = ip * 10 + (i % 10);
			for (int i = 1; i < frac; i++)
				fp = fp * 10 + 3;
			for (int i = 0; i < 3 - frac; i++)
				scale *= 10;
			if (frac)
				snprintf(text, sizeof(text), "-%" PRId64 ".%0*" PRId64, ip, frac, fp);
			else
				snprintf(text, sizeof(text), "-%" PRId64, ip);
			assert_true(nx_num_us_to_ns(text, &v, &exact) && exact);
			assert_int_equal(v, -(ip * 1000 + fp * scale));
			assert_true(nx_num_us_to_ns(text + 1, &v, &exact) && exact);
			assert_int_equal(v, ip * 1000 + fp * scale);
		}
	assert_true(nx_num_i64("-9223372036854775808", &v) && v == INT64_MIN);
	assert_false(nx_num_i64("9223372036854775808", &v));
	assert_false(nx_num_i64("1.0", &v));
}

static void test_nesting_limit(void **state)
{
	struct nx_strbuf doc = NX_STRBUF_INIT;
	struct nx_err err;

	(void)state;
	for (int i = 0; i < NX_JTOK_MAX_DEPTH; i++)
		nx_strbuf_addch(&doc, '[');
	for (int i = 0; i < NX_JTOK_MAX_DEPTH; i++)
		nx_strbuf_addch(&doc, ']');
	assert_int_equal(run(doc.buf, doc.len, NULL, &err), NX_JT_END);
	nx_strbuf_reset(&doc);
	for (int i = 0; i < NX_JTOK_MAX_DEPTH + 1; i++)
		nx_strbuf_addch(&doc, '[');
	assert_int_equal(run(doc.buf, doc.len, NULL, &err), NX_ECORRUPT);
	assert_non_null(strstr(err.msg, "nesting deeper than 256"));
	assert_non_null(strstr(err.msg, "at byte 256"));
	nx_strbuf_release(&doc);
}

static void test_grammar_errors(void **state)
{
	static const struct {
		const char *doc;
		int rc;
		const char *msg;
	} cases[] = {
		{ "[1,,]", NX_ECORRUPT, "at byte 3: expected a value in an array, found ','" },
		{ "[,]", NX_ECORRUPT, "at byte 1: expected a value in an array, found ','" },
		/* the single space after ':' and ',' is taken on a short path: same offsets */
		{ "[1, ,2]", NX_ECORRUPT, "at byte 4: expected a value in an array, found ','" },
		{ "{\"a\": }", NX_ECORRUPT, "at byte 6: expected a value in an object, found '}'" },
		{ "{\"a\": \x01}", NX_ECORRUPT, "at byte 6: expected a value in an object, found byte 0x?" },
		{ "[1, 2", NX_ETRUNC, "at byte 5: the JSON ends early, inside an array" },
		{ "{,}", NX_ECORRUPT, "at byte 1: expected a member name in quotes, found ','" },
		{ "{\"a\":1,,}", NX_ECORRUPT, "at byte 7: expected a member name in quotes" },
		{ "[1,2,", NX_ETRUNC, "at byte 5: the JSON ends early, inside an array" },
		{ "[1 2]", NX_ECORRUPT, "at byte 3: expected ',' or ']'" },
		{ "{\"a\" 1}", NX_ECORRUPT, "expected ':'" },
		{ "[01]", NX_ECORRUPT, "not a valid JSON number" },
		{ "[tru]", NX_ECORRUPT, "invalid literal" },
		{ "[\"a\x01" "b\", \"c\\u0000\", 1]x", NX_ECORRUPT, "at byte 21: unexpected 'x'" },
		{ "[\"\\x\"]", NX_ECORRUPT, "unknown escape" },
		{ "[1] [2]", NX_ECORRUPT, "after the end of the JSON document" },
		{ "[1,2", NX_ETRUNC, "at byte 4: the JSON ends early, inside an array" },
		{ "{\"a\": \"abc", NX_ETRUNC, "inside a string" },
		{ "", NX_ECORRUPT, "no JSON value" },
	};
	struct nx_err err;

	(void)state;
	for (size_t i = 0; i < NX_ARRAY_SIZE(cases); i++) {
		int rc = run(cases[i].doc, strlen(cases[i].doc), NULL, &err);
		if (rc != cases[i].rc || !strstr(err.msg, cases[i].msg))
			fail_msg("case %zu '%s': rc %d, message '%s'", i, cases[i].doc, rc, err.msg);
		assert_non_null(strstr(err.msg, "'mem.json'"));
	}
}

/* Trailing commas before ']' or '}' and raw control bytes in strings are tolerated:
 * counted with the offset of the first, and the string keeps the byte as written. */
static void test_tolerated_slips(void **state)
{
	static const char doc[] = "[{\"a\": [1, 2,], \"b\": {\"c\": \"x\ty\n\",},}, \"\r\", ]";
	struct nx_strbuf out = NX_STRBUF_INIT, cap = NX_STRBUF_INIT;
	struct tk k;
	int kind;

	(void)state;
	tk_open(&k, doc, strlen(doc));
	while ((kind = nx_jtok_next(&k.t, &k.err)) > 0)
		if (kind == NX_JT_STR || kind == NX_JT_NUM || kind == NX_JT_KEY) {
			nx_strbuf_add(&out, k.t.text.buf, k.t.text.len);
			nx_strbuf_addch(&out, '|');
		}
	assert_int_equal(kind, NX_JT_END);
	assert_string_equal(out.buf, "a|1|2|b|c|x\ty\n|\r|");
	assert_int_equal(k.t.slips.comma_arr.n, 2);
	assert_int_equal(k.t.slips.comma_arr.first, 13);
	assert_int_equal(k.t.slips.comma_obj.n, 2);
	assert_int_equal(k.t.slips.comma_obj.first, 34);
	assert_int_equal(k.t.slips.ctrl.n, 3);
	assert_int_equal(k.t.slips.ctrl.first, 29);
	tk_close(&k);
	/* Captured again as JSON, the control bytes come out escaped and the commas gone. */
	tk_open(&k, doc, strlen(doc));
	kind = nx_jtok_next(&k.t, &k.err);
	assert_int_equal(nx_jtok_capture(&k.t, kind, &cap, 1 << 20, &k.err), 0);
	assert_string_equal(cap.buf, "[{\"a\":[1,2],\"b\":{\"c\":\"x\\ty\\n\"}},\"\\r\"]");
	tk_close(&k);
	/* A NUL byte cannot be kept in a text column: still an error, with its offset. */
	static const char nul[] = "[\"ab\0c\"]";
	struct nx_err err;
	assert_int_equal(run(nul, sizeof(nul) - 1, NULL, &err), NX_ECORRUPT);
	assert_non_null(strstr(err.msg, "'mem.json': at byte 4: NUL byte inside a string"));
	/* Well-formed input has no slips. */
	tk_open(&k, "[1, {\"a\": \"b\"}]", 15);
	while ((kind = nx_jtok_next(&k.t, &k.err)) > 0)
		;
	assert_int_equal(kind, NX_JT_END);
	assert_int_equal(k.t.slips.comma_arr.n + k.t.slips.comma_obj.n + k.t.slips.ctrl.n, 0);
	tk_close(&k);
	nx_strbuf_release(&out);
	nx_strbuf_release(&cap);
}

/* The slips are found where a window refill splits them: a tab as the first byte of
 * a window, a trailing comma at the end of one window and its ']' in the next. */
static void test_slips_across_windows(void **state)
{
	struct nx_strbuf doc = NX_STRBUF_INIT, out = NX_STRBUF_INIT;
	struct tk k;
	int kind;

	(void)state;
	nx_strbuf_addstr(&doc, "[\"");
	while (doc.len < NX_JTOK_WINDOW)
		nx_strbuf_addch(&doc, 'a');
	nx_strbuf_addstr(&doc, "\tb\"");
	while (doc.len < 2 * NX_JTOK_WINDOW - 1)
		nx_strbuf_addch(&doc, ' ');
	nx_strbuf_addstr(&doc, ",]");
	tk_open(&k, doc.buf, doc.len);
	while ((kind = nx_jtok_next(&k.t, &k.err)) > 0)
		if (kind == NX_JT_STR)
			nx_strbuf_add(&out, k.t.text.buf, k.t.text.len);
	assert_int_equal(kind, NX_JT_END);
	assert_int_equal(out.len, NX_JTOK_WINDOW - 2 + 2);
	assert_memory_equal(out.buf + out.len - 3, "a\tb", 3);
	assert_int_equal(k.t.slips.ctrl.n, 1);
	assert_int_equal(k.t.slips.ctrl.first, NX_JTOK_WINDOW);
	assert_int_equal(k.t.slips.comma_arr.n, 1);
	assert_int_equal(k.t.slips.comma_arr.first, 2 * NX_JTOK_WINDOW);
	tk_close(&k);
	nx_strbuf_release(&doc);
	nx_strbuf_release(&out);
}

/* Strings and numbers are handed out in place in the window; the byte after a number
 * (each kind of delimiter here) is put back before the next token is read, and a
 * capture of the whole document gives back its compact form. */
static void test_in_place_tokens(void **state)
{
	static const char doc[] = "{\"a\":1,\"b\":[2,3],\"c\":{\"d\":4}, \"e\" : 5 ,\"f\":-6.5e+3\n"
				  ",\"g\":\"caf\xc3\xa9\",\"h\":\"x\\ty\",\"i\":[7\t]}";
	struct nx_strbuf out = NX_STRBUF_INIT;
	struct tk k;
	int kind;

	(void)state;
	assert_int_equal(run(doc, sizeof(doc) - 1, &out, NULL), NX_JT_END);
	assert_string_equal(out.buf, "a|1|b|2|3|c|d|4|e|5|f|-6.5e+3|g|caf\xc3\xa9|h|x\ty|i|7|");
	nx_strbuf_reset(&out);
	tk_open(&k, doc, sizeof(doc) - 1);
	kind = nx_jtok_next(&k.t, &k.err);
	assert_int_equal(nx_jtok_capture(&k.t, kind, &out, 1 << 20, &k.err), 0);
	assert_string_equal(out.buf, "{\"a\":1,\"b\":[2,3],\"c\":{\"d\":4},\"e\":5,\"f\":-6.5e+3,"
				     "\"g\":\"caf\xc3\xa9\",\"h\":\"x\\ty\",\"i\":[7]}");
	assert_int_equal(nx_jtok_next(&k.t, &k.err), NX_JT_END);
	tk_close(&k);
	nx_strbuf_release(&out);
}

/* A string and a number longer than the window straddle refills. */
static void test_tokens_across_windows(void **state)
{
	size_t n = NX_JTOK_WINDOW + 1000;
	struct nx_strbuf doc = NX_STRBUF_INIT, out = NX_STRBUF_INIT;

	(void)state;
	nx_strbuf_addstr(&doc, "[\"");
	for (size_t i = 0; i < n; i++)
		nx_strbuf_addch(&doc, (char)('a' + i % 26));
	nx_strbuf_addstr(&doc, "\\u00e9\", ");
	while (doc.len < 2 * NX_JTOK_WINDOW - 2)
		nx_strbuf_addch(&doc, ' ');
	nx_strbuf_addstr(&doc, "12345.678e-2]");
	assert_int_equal(run(doc.buf, doc.len, &out, NULL), NX_JT_END);
	assert_int_equal(out.len, n + 2 + 1 + strlen("12345.678e-2") + 1);
	assert_memory_equal(out.buf + n, "\xc3\xa9|12345.678e-2|", 16);
	nx_strbuf_release(&doc);
	nx_strbuf_release(&out);
}

/* Numbers are read a run of the window at a time: one split by a window's end, one
 * ending exactly at it, one of 4096 bytes (the limit) and one byte more. */
static void test_numbers_across_windows(void **state)
{
	struct nx_strbuf doc = NX_STRBUF_INIT, out = NX_STRBUF_INIT, want = NX_STRBUF_INIT;
	struct nx_err err = { 0 };

	(void)state;
	nx_strbuf_addch(&doc, '[');
	while (doc.len < NX_JTOK_WINDOW - 3)
		nx_strbuf_addch(&doc, ' ');
	nx_strbuf_addstr(&doc, "-12.5e+3, "); /* "-12" | ".5e+3" */
	while (doc.len < 2 * NX_JTOK_WINDOW - 4)
		nx_strbuf_addch(&doc, ' ');
	nx_strbuf_addstr(&doc, "9876, ");     /* ends at the second window's end */
	for (int i = 0; i < 4096; i++)
		nx_strbuf_addch(&want, (char)('1' + i % 9));
	nx_strbuf_add(&doc, want.buf, want.len);
	nx_strbuf_addch(&doc, ']');
	assert_int_equal(run(doc.buf, doc.len, &out, NULL), NX_JT_END);
	assert_memory_equal(out.buf, "-12.5e+3|9876|", 14);
	assert_int_equal(out.len, 14 + 4096 + 1);
	assert_memory_equal(out.buf + 14, want.buf, want.len);
	doc.buf[doc.len - 1] = '7';
	nx_strbuf_addch(&doc, ']');
	assert_true(run(doc.buf, doc.len, NULL, &err) < 0);
	assert_non_null(strstr(err.msg, "a number is longer than 4096 bytes"));
	nx_strbuf_release(&doc);
	nx_strbuf_release(&out);
	nx_strbuf_release(&want);
}

static size_t gz_member(const char *data, size_t len, unsigned char *out, size_t cap)
{
	z_stream z;

	memset(&z, 0, sizeof(z));
	assert_int_equal(deflateInit2(&z, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY), Z_OK);
	z.next_in = (unsigned char *)(uintptr_t)data;
	z.avail_in = (uInt)len;
	z.next_out = out;
	z.avail_out = (uInt)cap;
	assert_int_equal(deflate(&z, Z_FINISH), Z_STREAM_END);
	size_t n = cap - z.avail_out;
	deflateEnd(&z);
	return n;
}

/* Concatenated gzip members form one stream, even when a token spans members. */
static void test_split_gzip_members(void **state)
{
	static const char doc[] = "{\"traceEvents\": [{\"name\": \"split here\", \"ts\": 1.5}]}";
	unsigned char gz[1024];
	struct nx_strbuf out = NX_STRBUF_INIT;
	struct nx_err err;

	(void)state;
	for (size_t cut = 1; cut < sizeof(doc) - 1; cut += 7) {
		size_t a = gz_member(doc, cut, gz, sizeof(gz));
		size_t b = gz_member(doc + cut, strlen(doc) - cut, gz + a, sizeof(gz) - a);
		nx_strbuf_reset(&out);
		assert_int_equal(run(gz, a + b, &out, &err), NX_JT_END);
		assert_string_equal(out.buf, "traceEvents|name|split here|ts|1.5|");
		/* A cut gzip stream is a truncation, reported as such. */
		NX_ASSERT_CMP(run(gz, a + b - 3, NULL, &err), <, 0);
	}
	nx_strbuf_release(&out);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_escapes_unicode),
		cmocka_unit_test(test_huge_numbers_exact),
		cmocka_unit_test(test_number_conversions),
		cmocka_unit_test(test_number_grammar_exhaustive),
		cmocka_unit_test(test_nesting_limit),
		cmocka_unit_test(test_grammar_errors),
		cmocka_unit_test(test_tolerated_slips),
		cmocka_unit_test(test_slips_across_windows),
		cmocka_unit_test(test_in_place_tokens),
		cmocka_unit_test(test_tokens_across_windows),
		cmocka_unit_test(test_numbers_across_windows),
		cmocka_unit_test(test_split_gzip_members),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
