/* SPDX-License-Identifier: MIT
 * fuzz_neff_json.c: libFuzzer entry point for the NEFF reader's piecewise JSON
 * (src/neff/neff_json.c over json_scan.c), checked against jansson reading the whole
 * input: both accept it with equal trees, or both refuse it; anything else aborts.
 * Seeds in tests/fuzz/corpus/neff_json. The one known difference is allowed: jansson
 * skips a NUL byte that ends a number or a literal, the scanner refuses it. */
#include "common/compat.h"
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
	return 0;
}
