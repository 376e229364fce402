/* SPDX-License-Identifier: MIT
 * test_neff_json.c: the NEFF reader's piecewise JSON (src/neff/neff_json.c and the
 * scanner under it, json_scan.c) against jansson parsing the whole text: the same trees
 * for valid text (big streamed arrays, escaped keys, whitespace everywhere), the same
 * verdict for thousands of damaged texts, and faults placed by line and column in the
 * whole member, as a whole-text json_loadb places them. */
#include "common/compat.h"
#include "neff/json_scan.h"
#include "neff/neff_json.h"
#include "common/strbuf.h"
#include "helper/damage.h"

#include <jansson.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#define assert_contains(hay, needle)                                                        \
	do {                                                                               \
		if (!strstr((hay), (needle)))                                              \
			fail_msg("\"%s\" does not contain \"%s\"", (hay), (needle));      \
	} while (0)

static const char *const debug_keys[] = { "instructions", "stack_frames", "dma", NULL };

/* The member rebuilt from the piecewise read: root plus every streamed array, element
 * by element. NULL with msg when the read fails at any step. */
static json_t *read_pieces(const char *text, size_t len, const char *const *keys, char *msg,
			   size_t msgsz)
{
	struct nx_nj_doc doc;
	json_t *out;

	if (nx_nj_load(&doc, text, len, keys, msg, msgsz))
		return NULL;
	out = json_deep_copy(doc.root);
	for (size_t i = 0; i < doc.narrays; i++) {
		struct nx_nj_iter it;
		json_t *arr = json_array(), *elem;
		int more;

		nx_nj_iter_init(&it, &doc, &doc.arrays[i]);
		while ((more = nx_nj_next(&it, &elem, msg, msgsz)) == 1)
			json_array_append_new(arr, elem);
		if (more < 0 || json_array_size(arr) != doc.arrays[i].count) {
			if (more == 0)
				snprintf(msg, msgsz, "counted %zu elements, read %zu",
					 doc.arrays[i].count, json_array_size(arr));
			json_decref(arr);
			json_decref(out);
			nx_nj_release(&doc);
			return NULL;
		}
		json_object_set_new(out, doc.arrays[i].key, arr);
	}
	nx_nj_release(&doc);
	return out;
}

/* What json_loadb of the whole text says, as the reader used to say it. */
static json_t *read_whole(const char *text, size_t len, char *msg, size_t msgsz)
{
	json_error_t je;
	json_t *v = json_loadb(text, len, JSON_REJECT_DUPLICATES, &je);

	if (!v)
		snprintf(msg, msgsz, "invalid JSON at line %d column %d: %s", je.line, je.column,
			 je.text);
	else if (!json_is_object(v)) {
		snprintf(msg, msgsz, "expected an object at the top level");
		json_decref(v);
		v = NULL;
	}
	return v;
}

/* Both reads accept the text with equal trees, or both refuse it; *same_msg tells
 * whether their messages are the same too. One difference is known: jansson skips a NUL
 * byte that ends a number or a literal (it takes the byte put back for "none"), and the
 * scanner refuses it. */
static void expect_same(const char *text, size_t len, bool *same_msg)
{
	char m1[512] = "", m2[512] = "";
	json_t *a = read_pieces(text, len, debug_keys, m1, sizeof(m1));
	json_t *b = read_whole(text, len, m2, sizeof(m2));

	if (!a && b && memchr(text, '\0', len) && strstr(m1, "expected ',' or ")) {
		json_decref(b);
		b = NULL;
		snprintf(m2, sizeof(m2), "(jansson skipped a NUL byte)");
	}
	if (!a != !b)
		fail_msg("pieces: %s; whole: %s; text: %.*s", a ? "ok" : m1, b ? "ok" : m2,
			 (int)len, text);
	if (a && !json_equal(a, b))
		fail_msg("different trees for %.*s", (int)len, text);
	if (!a && !strstr(m1, "invalid JSON at line ") && !strstr(m1, "top level"))
		fail_msg("message \"%s\"", m1);
	if (same_msg)
		*same_msg = !strcmp(m1, m2);
	json_decref(a);
	json_decref(b);
}

static void expect_fault(const char *text, const char *msg)
{
	char m[512] = "";
	json_t *v = read_pieces(text, strlen(text), debug_keys, m, sizeof(m));

	if (v)
		fail_msg("accepted: %s", text);
	assert_contains(m, msg);
}

/* A debug-info-like member: escapes, numbers of every form, nesting, empty containers. */
static void sample(struct nx_strbuf *sb, size_t n)
{
	nx_strbuf_addstr(sb, "{\"version\": 1, \"compiler_decisions\": [[\"k\", \"v\\n\"]],"
			     " \"instructions\": [");
	for (size_t i = 0; i < n; i++)
		nx_strbuf_addf(sb, "%s{\"name\": \"i%zu \\\"q\\\" \\u00e9\\ud83d\\ude00\", "
				      "\"line\": %zu, \"x\": -%zu.%zue+%zu, \"n\": null, "
				      "\"t\": [true, false, [], {}, [[%zu]]]}",
				  i ? ", " : "", i, i, i, i % 7, i % 3, i);
	nx_strbuf_addstr(sb, "], \"stack_frames\": [], \"extra\": {\"a\": [1, {\"b\": 2}]},"
			     " \"s\": \"x\"}");
}

static void test_big_array_equals_whole(void **state)
{
	struct nx_strbuf sb = NX_STRBUF_INIT;
	struct nx_nj_doc doc;
	char msg[512];

	(void)state;
	sample(&sb, 20000);
	expect_same(sb.buf, sb.len, NULL);
	assert_int_equal(nx_nj_load(&doc, sb.buf, sb.len, debug_keys, msg, sizeof(msg)), 0);
	assert_int_equal(doc.narrays, 2);
	assert_non_null(nx_nj_find(&doc, "instructions"));
	assert_int_equal(nx_nj_find(&doc, "instructions")->count, 20000);
	assert_int_equal(nx_nj_find(&doc, "stack_frames")->count, 0);
	assert_null(nx_nj_find(&doc, "dma"));
	/* The streamed arrays are not in the root; the rest is. */
	assert_null(json_object_get(doc.root, "instructions"));
	assert_int_equal(json_integer_value(json_object_get(doc.root, "version")), 1);
	assert_string_equal(json_string_value(json_object_get(doc.root, "s")), "x");
	nx_nj_release(&doc);
	nx_strbuf_release(&sb);
}

static void test_whitespace_everywhere(void **state)
{
	const char *text = " \r\n\t{ \n\"instructions\"\t:\r\n[ \n{ \"a\" :\n1 , \"b\"\t: [ 2 ,"
			   "\n3 ] } ,\n\t{ } , [ ] , 7 ,\"s\" , true\n]\r\n, \"v\" : { \"w\" :"
			   " null } , \"k\" :\n-0.5E-3 } \n\t\r ";
	char msg[256];
	json_t *v;

	(void)state;
	expect_same(text, strlen(text), NULL);
	v = read_pieces(text, strlen(text), debug_keys, msg, sizeof(msg));
	assert_non_null(v);
	assert_int_equal(json_array_size(json_object_get(v, "instructions")), 6);
	json_decref(v);
	expect_same("{}", 2, NULL);
	expect_same(" { } ", 5, NULL);
	expect_same("{\"instructions\": []}", 20, NULL);
	expect_same("{\"instructions\" : [ ] }", 23, NULL);
}

static void test_escaped_keys(void **state)
{
	/* "instr\u0075ctions" is "instructions": streamed, and equal to the plain key. */
	const char *text = "{\"instr\\u0075ctions\": [{\"a\\\"b\": 1}], \"\\u00e9\\n\": 2, "
			   "\"a\\\\\": [3]}";
	struct nx_nj_doc doc;
	char msg[256];

	(void)state;
	expect_same(text, strlen(text), NULL);
	assert_int_equal(nx_nj_load(&doc, text, strlen(text), debug_keys, msg, sizeof(msg)), 0);
	assert_non_null(nx_nj_find(&doc, "instructions"));
	assert_int_equal(json_integer_value(json_object_get(doc.root, "\xc3\xa9\n")), 2);
	assert_int_equal(json_array_size(json_object_get(doc.root, "a\\")), 1);
	nx_nj_release(&doc);
	expect_fault("{\"instructions\": [], \"instr\\u0075ctions\": []}",
		     "invalid JSON at line 1 column 40: duplicate object key near "
		     "'\"instr\\u0075ctions\"'");
	expect_fault("{\"a\\u0000\": 1}", "\\u0000 is not allowed");
	expect_fault("{\"a\\x\": 1}", "invalid escape");
	expect_fault("{\"a\\u12g4\": 1}", "invalid \\u escape");
	expect_fault("{\"a\xff\": 1}", "invalid JSON at line 1");
}

static void test_duplicate_keys(void **state)
{
	bool same;

	(void)state;
	expect_fault("{\"v\": 1,\n \"v\": 2}",
		     "invalid JSON at line 2 column 4: duplicate object key near '\"v\"'");
	expect_fault("{\"instructions\": [],\n \"instructions\": [1]}",
		     "invalid JSON at line 2 column 15: duplicate object key");
	expect_fault("{\"instructions\": 5, \"instructions\": []}", "duplicate object key");
	expect_fault("{\"instructions\": [], \"instructions\": 5}", "duplicate object key");
	/* Inside an element or a value: jansson's own check, placed in the whole text. */
	expect_same("{\"instructions\": [{\"a\": 1},\n  {\"a\": 1, \"a\": 2}]}", 48, &same);
	assert_true(same);
	expect_same("{\"x\": {\"a\": 1,\n \"a\": 2}}", 24, &same);
	assert_true(same);
}

/* Each fault placed as the whole-text json_loadb places it (same line, column, text). */
static void test_faults_placed_like_jansson(void **state)
{
	static const char *const texts[] = {
		/* Faults jansson finds inside an element of a streamed array. */
		"{\"instructions\": [\n {\"a\": 1},\n {\"a\": 99999999999999999999}\n]}",
		"{\"instructions\": [\n {\"a\": 1},\n {\"a\": \"\xc3\x28\"}\n]}",
		"{\"instructions\": [\n {\"a\": \"\\u0000\"}]}",
		"{\"instructions\": [{\"\xc3\xa9\": 1}, {\"b\": 1e999}]}",
		/* And inside a value kept whole. */
		"{\"x\": [1,\n 2, 1e999]}",
		"{\"x\": 99999999999999999999}",
		"{\"x\": {\"y\": \"\xff\"}}",
	};
	bool same;

	(void)state;
	for (size_t i = 0; i < NX_ARRAY_SIZE(texts); i++) {
		expect_same(texts[i], strlen(texts[i]), &same);
		if (!same) {
			char m1[512], m2[512];
			read_pieces(texts[i], strlen(texts[i]), debug_keys, m1, sizeof(m1));
			read_whole(texts[i], strlen(texts[i]), m2, sizeof(m2));
			fail_msg("text %zu: \"%s\" vs \"%s\"", i, m1, m2);
		}
	}
}

static void test_syntax_faults(void **state)
{
	(void)state;
	/* Inside an element of a streamed array, and between elements. */
	expect_fault("{\"instructions\": [\n  {\"a\": 1},\n  {\"a\" 2}]}",
		     "invalid JSON at line 3 column 8: expected ':'");
	expect_fault("{\"instructions\": [\n  {\"a\": 1}\n  {\"a\": 2}]}",
		     "invalid JSON at line 3 column 3: expected ',' or ']'");
	expect_fault("{\"instructions\": [{\"a\": 1},]}",
		     "invalid JSON at line 1 column 28: invalid token");
	expect_fault("{\"instructions\": [{\"a\": [1 2]}]}", "column 28: expected ',' or ']'");
	expect_fault("{\"instructions\": [{\"a\": 01}]}", "column 26: expected ',' or '}'");
	expect_fault("{\"instructions\": [{\"a\": -}]}", "column 26: invalid number");
	expect_fault("{\"instructions\": [{\"a\": 1.}]}", "column 27: invalid number");
	expect_fault("{\"instructions\": [{\"a\": 1e+}]}", "column 28: invalid number");
	expect_fault("{\"instructions\": [{\"a\": tru}]}", "column 25: invalid token");
	expect_fault("{\"instructions\": [{\"a\": \"x\ty\"}]}",
		     "column 27: control character in a string");
	expect_fault("{\"instructions\": [{1: 2}]}", "column 20: expected a string key");
	/* Between the top-level members, and around them. */
	expect_fault("{\"a\": 1 \"b\": 2}", "invalid JSON at line 1 column 9: expected ',' or '}'");
	expect_fault("{\"a\": 1,}", "column 9: expected a string key");
	expect_fault("{\"a\" 1}", "column 6: expected ':'");
	expect_fault("{\"a\": 1} x", "column 10: end of file expected");
	expect_fault("{\"a\": 1} {}", "end of file expected");
	expect_fault("", "invalid JSON at line 1 column 0: premature end of input");
	expect_fault("  \n ", "invalid JSON at line 2 column 1: premature end of input");
	expect_fault("[1, 2]", "expected an object at the top level");
	expect_fault("[1, 2", "invalid JSON at line 1 column 5: premature end of input");
	expect_fault("\"s\"", "expected an object at the top level");
	/* Columns count characters, not bytes, as jansson counts them. */
	expect_fault("{\"\xc3\xa9\xc3\xa9\": 1 2}", "invalid JSON at line 1 column 10");
}

/* Every prefix of a member is refused with a place, none is taken for the whole. */
static void test_truncated(void **state)
{
	struct nx_strbuf sb = NX_STRBUF_INIT;
	char msg[512];

	(void)state;
	sample(&sb, 3);
	for (size_t cut = 0; cut < sb.len; cut++) {
		json_t *v = read_pieces(sb.buf, cut, debug_keys, msg, sizeof(msg));
		if (v)
			fail_msg("prefix of %zu bytes accepted", cut);
		assert_contains(msg, "invalid JSON at line 1 column ");
		expect_same(sb.buf, cut, NULL);
	}
	nx_strbuf_release(&sb);
}

/* Deep nesting: jansson's limit of 2048 levels, counted over the whole member. */
static void test_depth(void **state)
{
	struct nx_strbuf sb = NX_STRBUF_INIT;
	char msg[512];
	json_t *v;

	(void)state;
	for (int deep = 2046; deep <= 2048; deep++) {
		nx_strbuf_reset(&sb);
		nx_strbuf_addstr(&sb, "{\"instructions\": ");
		for (int i = 0; i < deep; i++)
			nx_strbuf_addstr(&sb, "[");
		for (int i = 0; i < deep; i++)
			nx_strbuf_addstr(&sb, "]");
		nx_strbuf_addstr(&sb, "}");
		v = read_pieces(sb.buf, sb.len, debug_keys, msg, sizeof(msg));
		if (deep <= 2047)
			assert_non_null(v);
		else
			assert_contains(msg, "maximum parsing depth reached");
		expect_same(sb.buf, sb.len, NULL);
		json_decref(v);
	}
	nx_strbuf_release(&sb);
}

/* Damaged members (bytes replaced, inserted, removed): accepted with the same tree as
 * jansson's whole parse, or refused by both. A fixed generator: the same texts each run. */
static void test_damaged_like_whole(void **state)
{
	struct nx_strbuf sb = NX_STRBUF_INIT;
	uint64_t seed = NX_TEST_DAMAGE_SEED;
	char *text = malloc(4096);
	size_t same = 0;

	(void)state;
	sample(&sb, 4);
	assert_true(sb.len < 2048);
	for (int round = 0; round < 20000; round++) {
		size_t len = sb.len;
		memcpy(text, sb.buf, len);
		nx_test_damage(text, &len, &seed, 1 + round % 3);
		bool s;
		expect_same(text, len, &s);
		same += s;
	}
	/* Most messages are jansson's own; the scanner words its faults its own way. */
	print_message("%zu of 20000 damaged texts: the same message as a whole parse\n", same);
	free(text);
	nx_strbuf_release(&sb);
}

static void test_line_col(void **state)
{
	int line, col;

	(void)state;
	nx_jscan_line_col("ab\ncd\xc3\xa9", 0, &line, &col);
	assert_int_equal(line, 1);
	assert_int_equal(col, 0);
	nx_jscan_line_col("ab\ncd\xc3\xa9", 3, &line, &col);
	assert_int_equal(line, 2);
	assert_int_equal(col, 0);
	nx_jscan_line_col("ab\ncd\xc3\xa9", 7, &line, &col);
	assert_int_equal(line, 2);
	assert_int_equal(col, 3);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_big_array_equals_whole),
		cmocka_unit_test(test_whitespace_everywhere),
		cmocka_unit_test(test_escaped_keys),
		cmocka_unit_test(test_duplicate_keys),
		cmocka_unit_test(test_faults_placed_like_jansson),
		cmocka_unit_test(test_syntax_faults),
		cmocka_unit_test(test_truncated),
		cmocka_unit_test(test_depth),
		cmocka_unit_test(test_damaged_like_whole),
		cmocka_unit_test(test_line_col),
	};
	return cmocka_run_group_tests_name("neff_json", tests, NULL, NULL);
}
