/* SPDX-License-Identifier: MIT
 * test_json_tok.c: the NEFF reader's element tokens (src/neff/json_tok.c) against
 * jansson: what our reader accepts, jansson accepts too and reads to the same tokens
 * (the copy of its tree, nx_jt_from_json); what it declines (escapes, bytes beyond
 * ASCII, reals, integers of 19 digits or more, a repeated key, deep nesting) is left to
 * jansson, whether jansson accepts it or not; thousands of damaged elements never have
 * our reader accept what jansson refuses or read it otherwise. And the streamed
 * elements (nx_nj_next_tok) are the same tokens as jansson's trees (nx_nj_next). */
#include "common/compat.h"
#include "neff/json_tok.h"
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

#define FLAGS (JSON_DECODE_ANY | JSON_REJECT_DUPLICATES | JSON_DISABLE_EOF_CHECK)

static const char dbg_inst[] =
	"{\"bir_location\": \"/k/kern.py:27\", \"file\": \"/k/kern.py\", "
	"\"iteration_variables_id\": 4, \"line\": 27, \"name\": \"inst.5:0\", "
	"\"stack_frame_id\": 0}";
static const char dma_block[] =
	"{\n \"desc\": [\n  {\"dtype\": \"bf16\", \"from\": \"lhsT\", \"from_off\": 524288,\n"
	"   \"from_sizes\": [128, 128], \"from_steps\": [4096, 1], \"op\": \"copy\",\n"
	"   \"to\": \"sb\", \"to_off\": 256, \"to_sizes\": [128, 128], \"to_steps\": [1, 1],\n"
	"   \"transpose\": false, \"x\": null, \"y\": true, \"e\": [], \"o\": {}}\n ],\n"
	" \"id\": 514, \"queue\": \"qSyncIO0\", \"semaphore\": -1,\n"
	" \"big\": 999999999999999999, \"neg\": -999999999999999999, \"z\": -0}";

static void assert_same_tokens(const struct nx_jt *a, const struct nx_jt *b)
{
	assert_int_equal(a->n, b->n);
	for (size_t i = 0; i < a->n; i++) {
		const struct nx_jt_tok *x = &a->t[i], *y = &b->t[i];
		assert_int_equal(x->type, y->type);
		assert_int_equal(x->next, y->next);
		assert_int_equal(x->n, y->n);
		assert_int_equal(x->key == NX_JT_NONE, y->key == NX_JT_NONE);
		if (x->key != NX_JT_NONE) {
			assert_int_equal(x->keylen, y->keylen);
			assert_string_equal(a->str + x->key, b->str + y->key);
		}
		if (x->type == JSON_STRING)
			assert_string_equal(a->str + x->v, b->str + y->v);
		else
			assert_true(x->v == y->v);
	}
}

/* text[0..len) read by both. Returns whether our reader accepted it; when it did,
 * jansson accepted it too, to the same tokens, and ended where it ended. */
static bool same_as_jansson(const char *text, size_t len)
{
	struct nx_jt ours = { 0 }, theirs = { 0 };
	json_error_t je;
	json_t *v = json_loadb(text, len, FLAGS, &je);
	size_t end = 0;
	int got = nx_jt_parse(&ours, text, len, 0, &end);

	if (got) {
		if (!v)
			fail_msg("ours accepted what jansson refuses (%s): %.*s", je.text, (int)len,
				 text);
		nx_jt_from_json(&theirs, v);
		assert_same_tokens(&ours, &theirs);
		assert_true(end <= len);
		/* jansson may have read one byte on (its lookahead) past the value */
		assert_true(end == (size_t)je.position || end + 1 == (size_t)je.position);
	}
	json_decref(v);
	nx_jt_release(&ours);
	nx_jt_release(&theirs);
	return got;
}

static void test_plain_forms_read(void **state)
{
	static const char *const plain[] = {
		"0", "-0", "17", "-999999999999999999", "\"\"", "\"a b/c~\x7f\"", "true",
		"false", "null", "[]", "{}", "[1, [2, [3, {}]], \"x\"]", " {\"\": 1}",
		"{\"a\": {\"a\": 1}, \"b\": [{\"a\": 2}]}",
	};

	(void)state;
	assert_true(same_as_jansson(dbg_inst, strlen(dbg_inst)));
	assert_true(same_as_jansson(dma_block, strlen(dma_block)));
	for (size_t i = 0; i < NX_ARRAY_SIZE(plain); i++) {
		const char *t = plain[i] + (plain[i][0] == ' ');
		assert_true(same_as_jansson(t, strlen(t)));
	}
}

/* The accessors the reader's parse functions use. */
static void test_accessors(void **state)
{
	struct nx_jt d = { 0 };
	size_t end;
	uint32_t desc, sizes;

	(void)state;
	assert_int_equal(nx_jt_parse(&d, dma_block, strlen(dma_block), 0, &end), 1);
	assert_int_equal(end, strlen(dma_block));
	assert_int_equal(nx_jt_type(&d, 0), JSON_OBJECT);
	assert_int_equal(nx_jt_int(&d, nx_jt_get(&d, 0, "id")), 514);
	assert_string_equal(nx_jt_str(&d, nx_jt_get(&d, 0, "queue")), "qSyncIO0");
	assert_int_equal(nx_jt_int(&d, nx_jt_get(&d, 0, "semaphore")), -1);
	assert_int_equal(nx_jt_get(&d, 0, "absent"), NX_JT_NONE);
	assert_null(nx_jt_str(&d, nx_jt_get(&d, 0, "id")));
	desc = nx_jt_at(&d, nx_jt_get(&d, 0, "desc"), 0);
	assert_int_equal(nx_jt_size(&d, desc), 15);
	assert_int_equal(nx_jt_at(&d, nx_jt_get(&d, 0, "desc"), 1), NX_JT_NONE);
	sizes = nx_jt_get(&d, desc, "from_steps");
	assert_int_equal(nx_jt_size(&d, sizes), 2);
	assert_int_equal(nx_jt_int(&d, nx_jt_at(&d, sizes, 0)), 4096);
	assert_int_equal(nx_jt_int(&d, nx_jt_next(&d, nx_jt_first(&d, sizes))), 1);
	assert_int_equal(nx_jt_type(&d, nx_jt_get(&d, desc, "x")), JSON_NULL);
	assert_int_equal(nx_jt_type(&d, nx_jt_get(&d, desc, "transpose")), JSON_FALSE);
	assert_int_equal(nx_jt_size(&d, nx_jt_get(&d, desc, "o")), 0);
	assert_string_equal(nx_jt_key(&d, nx_jt_first(&d, 0)), "desc");
	/* the element ends at its closing bracket: what follows is the caller's */
	assert_int_equal(nx_jt_parse(&d, "[1] ,", 5, 0, &end), 1);
	assert_int_equal(end, 3);
	nx_jt_release(&d);
}

/* Forms left to jansson, valid or not: our reader declines every one. */
static void test_declined_forms(void **state)
{
	static const char *const declined[] = {
		"\"caf\\u00e9\"", "\"a\\nb\"", "\"\\\"\"", "\"caf\xc3\xa9\"", "\"\xff\"",
		"1.5", "1e3", "-2E-1", "1000000000000000000", "-1000000000000000000",
		"99999999999999999999999", "{\"a\": 1, \"a\": 2}", "{\"a\": [{\"b\": 1, \"b\": 1}]}",
		"\"\\u0000\"", "01", "-", "tru", "[1,]", "{\"a\" 1}", "{\"a\": 1,}", "[1 2]",
		"\"open", "[", "{\"a\":", "nul", "\"\t\"", "falsek", "[truex]", "nullZ",
	};
	struct nx_jt d = { 0 };
	struct nx_strbuf deep = NX_STRBUF_INIT;
	size_t end;

	(void)state;
	for (size_t i = 0; i < NX_ARRAY_SIZE(declined); i++) {
		assert_false(same_as_jansson(declined[i], strlen(declined[i])));
		assert_int_equal(nx_jt_parse(&d, declined[i], strlen(declined[i]), 0, &end), 0);
	}
	for (int k = 0; k < NX_JT_MAX_DEPTH; k++)
		nx_strbuf_addch(&deep, '[');
	for (int k = 0; k < NX_JT_MAX_DEPTH; k++)
		nx_strbuf_addch(&deep, ']');
	assert_true(same_as_jansson(deep.buf, deep.len)); /* 64 levels: ours */
	nx_strbuf_reset(&deep);
	for (int k = 0; k <= NX_JT_MAX_DEPTH; k++)
		nx_strbuf_addch(&deep, '[');
	for (int k = 0; k <= NX_JT_MAX_DEPTH; k++)
		nx_strbuf_addch(&deep, ']');
	assert_false(same_as_jansson(deep.buf, deep.len)); /* 65: jansson's */
	nx_strbuf_release(&deep);
	nx_jt_release(&d);
}

/* Damaged elements (bytes replaced, inserted, removed): whatever our reader accepts,
 * jansson accepts to the same tokens. A fixed generator: the same texts each run. */
static void test_damaged_never_differ(void **state)
{
	const size_t base = strlen(dma_block);
	char *text = malloc(base + 16);
	uint64_t seed = NX_TEST_DAMAGE_SEED;
	size_t accepted = 0;

	(void)state;
	for (int round = 0; round < 20000; round++) {
		size_t len = base;
		memcpy(text, dma_block, len);
		nx_test_damage(text, &len, &seed, 1 + round % 3);
		accepted += same_as_jansson(text, len);
	}
	print_message("%zu of 20000 damaged elements read by ours, the rest left to jansson\n",
		      accepted);
	assert_true(accepted > 0 && accepted < 20000);
	free(text);
}

/* A member's streamed elements: nx_nj_next_tok's tokens are those of nx_nj_next's
 * trees, for elements our reader reads and those it leaves to jansson; a fault inside
 * an element is jansson's message either way. */
static void test_streamed_like_trees(void **state)
{
	static const char *const keys[] = { "instructions", NULL };
	struct nx_strbuf sb = NX_STRBUF_INIT;
	struct nx_jt tok = { 0 }, copy = { 0 };
	struct nx_nj_iter a, b;
	struct nx_nj_doc doc;
	char msg[512], msg2[512];
	json_t *tree;
	int n = 0, ra, rb;

	(void)state;
	nx_strbuf_addf(&sb, "{\"version\": 1, \"instructions\": [%s, %s, "
		       "{\"name\": \"caf\\u00e9\", \"line\": 1.5}, {\"name\": \"\xc3\xa9\"}, "
		       "{\"line\": 12345678901234567890}, []]}", dbg_inst, dma_block);
	assert_int_equal(nx_nj_load(&doc, sb.buf, sb.len, keys, msg, sizeof(msg)), 0);
	nx_nj_iter_init(&a, &doc, nx_nj_find(&doc, "instructions"));
	nx_nj_iter_init(&b, &doc, nx_nj_find(&doc, "instructions"));
	for (;;) {
		ra = nx_nj_next_tok(&a, &tok, msg, sizeof(msg));
		rb = nx_nj_next(&b, &tree, msg2, sizeof(msg2));
		assert_int_equal(ra, rb);
		if (ra <= 0)
			break;
		nx_jt_from_json(&copy, tree);
		assert_same_tokens(&tok, &copy);
		json_decref(tree);
		n++;
	}
	assert_int_equal(n, 4); /* the fifth's integer is beyond 64 bits */
	assert_int_equal(ra, -1);
	assert_string_equal(msg, msg2);
	assert_non_null(strstr(msg, "too big integer"));
	nx_nj_release(&doc);
	nx_jt_release(&tok);
	nx_jt_release(&copy);
	nx_strbuf_release(&sb);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_plain_forms_read),
		cmocka_unit_test(test_accessors),
		cmocka_unit_test(test_declined_forms),
		cmocka_unit_test(test_damaged_never_differ),
		cmocka_unit_test(test_streamed_like_trees),
	};
	return cmocka_run_group_tests_name("json_tok", tests, NULL, NULL);
}
