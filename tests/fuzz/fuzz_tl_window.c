/* SPDX-License-Identifier: MIT
 * fuzz_tl_window.c: libFuzzer target for the window parameters of the timeline
 * endpoints (nx__tl_window_parse in src/server/h_timeline.c: t0, t1 and px as text, the
 * bucket and the snapped bounds) and the counters' look-back (nx__tl_sub). The input is
 * "t0&t1&px"; UBSan (on in the fuzz build) stops any signed overflow. Seeds:
 * tests/fuzz/corpus/tl_window. Built with -DNX_FUZZ=ON (DEVELOPERS.md). */
#include "common/compat.h"
#include "server/timeline.h"

#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = malloc(size + 1), *arg[3] = { NULL, NULL, NULL }, *p;
	struct nx__tl_window w;
	int64_t t0, t1;

	memcpy(text, data, size);
	text[size] = '\0';
	p = text;
	for (int i = 0; i < 3 && p; i++) {
		arg[i] = p;
		if ((p = strchr(p, '&')))
			*p++ = '\0';
	}
	for (int with_px = 0; with_px < 2; with_px++) {
		if (nx__tl_window_parse(arg[0], arg[1], arg[2], with_px, &w) != NX_TL_WINDOW_OK)
			continue;
		t0 = strtoll(arg[0], NULL, 10);
		t1 = strtoll(arg[1], NULL, 10);
		/* what the endpoints rely on: a power-of-two bucket wide enough, bounds snapped
		 * outwards to it, and a look-back that does not overflow */
		if (w.bucket < 1 || (w.bucket & (w.bucket - 1)) || w.bucket != (int64_t)1 << w.level ||
		    w.t0 > t0 || w.t1 < t1 || w.t0 % w.bucket || w.t1 % w.bucket ||
		    (with_px && w.bucket * w.px < t1 - t0) || (!with_px && (w.t0 != t0 || w.t1 != t1)))
			__builtin_trap();
		(void)nx__tl_sub(w.t0, nx__tl_sub(w.t1, w.t0));
	}
	free(text);
	return 0;
}
