/* SPDX-License-Identifier: MIT
 * damage.c: damaged JSON texts for bad-input tests (see damage.h). */
#include "helper/damage.h"

#include <string.h>

void nx_test_damage(char *text, size_t *len, uint64_t *seed, int edits)
{
	static const char alphabet[] = "{}[],:\"\\ \n0159-+.eEtrufalsn\x00\xff\xc3\x80u/";

	for (; edits > 0 && *len > 0; edits--) {
		*seed = *seed * 6364136223846793005ull + 1442695040888963407ull;
		size_t at = (size_t)(*seed >> 33) % *len;
		char c = alphabet[(*seed >> 20) % (sizeof(alphabet) - 1)];

		switch ((*seed >> 8) % 3) {
		case 0:
			text[at] = c;
			break;
		case 1:
			memmove(text + at + 1, text + at, *len - at);
			text[at] = c;
			(*len)++;
			break;
		default:
			memmove(text + at, text + at + 1, *len - at - 1);
			(*len)--;
			break;
		}
	}
}
