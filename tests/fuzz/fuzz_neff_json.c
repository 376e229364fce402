/* SPDX-License-Identifier: MIT
 * fuzz_neff_json.c: libFuzzer entry point for the NEFF reader's piecewise JSON
 * (src/neff/neff_json.c over json_scan.c), checked against jansson reading the whole
 * input: both accept it with equal trees, or both refuse it; anything else aborts.
 * Seeds in tests/fuzz/corpus/neff_json. The one known difference is allowed: jansson
 * skips a NUL byte that ends a number or a literal, the scanner refuses it. The input is
 * also read as one element by the reader of element tokens (src/neff/json_tok.c): what
 * it accepts, jansson must accept to the same tokens. */
#include "common/compat.h"
#include "neff/json_tok.h"
#include "neff/neff_json.h"

#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char *const streamed[] = { "instructions", "stack_frames", "dma", NULL };

/* The member rebuilt from its pieces, or NULL when any piece is refused. */
static json_t *read_pieces(const char *text, size_t len)
{
	struct nx_nj_doc doc;
	char msg[512];
	json_t *out;

	if (nx_nj_load(&doc, text, len, streamed, msg, sizeof(msg)))
		return NULL;
	out = json_deep_copy(doc.root);
	for (size_t i = 0; out && i < doc.narrays; i++) {
		struct nx_nj_iter it;
		json_t *arr = json_array(), *elem;
		int more;

		nx_nj_iter_init(&it, &doc, &doc.arrays[i]);
		while ((more = nx_nj_next(&it, &elem, msg, sizeof(msg))) == 1)
			json_array_append_new(arr, elem);
		if (more < 0 || json_array_size(arr) != doc.arrays[i].count) {
			if (more == 0)
				abort(); /* the scanner counted other elements than jansson read */
			json_decref(arr);
			json_decref(out);
			out = NULL;
		} else {
			json_object_set_new(out, doc.arrays[i].key, arr);
		}
	}
	nx_nj_release(&doc);
	return out;
}

static bool same_tokens(const struct nx_jt *a, const struct nx_jt *b)
{
	if (a->n != b->n)
		return false;
	for (size_t i = 0; i < a->n; i++) {
		const struct nx_jt_tok *x = &a->t[i], *y = &b->t[i];
		if (x->type != y->type || x->next != y->next || x->n != y->n ||
		    (x->key == NX_JT_NONE) != (y->key == NX_JT_NONE))
			return false;
		if (x->key != NX_JT_NONE && (x->keylen != y->keylen ||
					     strcmp(a->str + x->key, b->str + y->key)))
			return false;
		if (x->type == JSON_STRING ? strcmp(a->str + x->v, b->str + y->v) : x->v != y->v)
			return false;
	}
	return true;
}

/* Our element reader accepts only what jansson reads to the same tokens. */
static void tokens_like_jansson(const char *text, size_t size)
{
	struct nx_jt ours = { 0 }, theirs = { 0 };
	json_t *v;
	size_t end;

	if (nx_jt_parse(&ours, text, size, 0, &end)) {
		v = json_loadb(text, size, JSON_DECODE_ANY | JSON_REJECT_DUPLICATES |
			       JSON_DISABLE_EOF_CHECK, NULL);
		if (!v)
			abort();
		nx_jt_from_json(&theirs, v);
		json_decref(v);
		if (!same_tokens(&ours, &theirs))
			abort();
	}
	nx_jt_release(&ours);
	nx_jt_release(&theirs);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *text = (const char *)data;
	json_t *a = read_pieces(text, size);
	json_t *b = json_loadb(text, size, JSON_REJECT_DUPLICATES, NULL);

	if (b && !json_is_object(b)) {
		json_decref(b);
		b = NULL;
	}
	if (!a && b && memchr(text, '\0', size)) {
		json_decref(b);
		b = NULL;
	}
	if (!a != !b || (a && !json_equal(a, b)))
		abort();
	json_decref(a);
	json_decref(b);
	tokens_like_jansson(text, size);
	return 0;
}
