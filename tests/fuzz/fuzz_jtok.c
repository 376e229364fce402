/* SPDX-License-Identifier: MIT
 * fuzz_jtok.c: libFuzzer target for the framework-trace JSON tokenizer (jtok.c) over
 * the input layer (input.c, plain or gzip by magic bytes). The first byte selects
 * the mode, the rest is the document:
 *   bit 0: every value inside the top-level container is captured as compact JSON
 *          (nx_jtok_capture) instead of being walked token by token;
 *   bit 1: strings are limited to 64 bytes (the over-long string path);
 *   bit 2: captures are limited to 256 bytes (the capture limit path).
 * Seeds: tests/fuzz/corpus/jtok (small vendored traces and edge cases). Built with
 * -DNX_FUZZ=ON (see DEVELOPERS.md). */
#include "common/compat.h"
#include "common/strbuf.h"
#include "trace/jtok.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct nx_strbuf out = NX_STRBUF_INIT;
	struct nx_err err = { 0 };
	struct nx_tin in;
	struct nx_jtok t;
	unsigned mode;
	int k;

	if (size < 1)
		return 0;
	mode = data[0];
	if (nx_tin_open_mem(&in, data + 1, size - 1, "fuzz.json", &err))
		return 0;
	nx_jtok_init(&t, &in);
	if (mode & 2)
		t.max_string = 64;
	while ((k = nx_jtok_next(&t, &err)) > 0) {
		if ((mode & 1) && nx_jtok_depth(&t) >= 1 && k != NX_JT_KEY &&
		    k != NX_JT_OBJ_END && k != NX_JT_ARR_END) {
			/* A value that opens a container raised the depth by one. */
			if ((k == NX_JT_OBJ || k == NX_JT_ARR) && nx_jtok_depth(&t) < 2)
				continue;
			out.len = 0;
			if (nx_jtok_capture(&t, k, &out, (mode & 4) ? 256 : (1u << 20), &err) < 0)
				break;
		}
	}
	nx_strbuf_release(&out);
	nx_jtok_release(&t);
	nx_tin_close(&in);
	return 0;
}
