/* SPDX-License-Identifier: MIT
 * fuzz_lod_stamp.c: libFuzzer target for the stamp file of the timeline cache
 * (nx__lod_stamp_check in src/server/lod_cache.c), which a server reads from disk before
 * it trusts a cache: any text either matches the expected stamp exactly, with its size,
 * or gets a reason. Seeds: tests/fuzz/corpus/lod_stamp. Built with -DNX_FUZZ=ON
 * (DEVELOPERS.md). */
#include "common/compat.h"
#include "server/lod.h"

#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char profile[] = "my-kernel", version[] = "65024-10961294-1796431540.568407194",
	     tables[] = "3f9a0c1e22b7d415";
	const struct nx_lod_stamp want = { .format = NX_LOD_FORMAT, .profile = profile,
					   .version = version, .tables = tables };
	char *text = malloc(size + 1), *why;
	uint64_t bytes = 0;

	memcpy(text, data, size);
	text[size] = '\0';
	why = nx__lod_stamp_check(text, &want, &bytes);
	if (!why && (!strstr(text, "\nprofile my-kernel\n") || !strstr(text, "\nformat 4\n")))
		__builtin_trap();
	if (why && !*why)
		__builtin_trap();
	free(why);
	free(text);
	return 0;
}
