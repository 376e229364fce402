/* SPDX-License-Identifier: MIT
 * fuzz_listing.c: libFuzzer target for the kernel listing assembler (listing_parse.c
 * and listing_asm.c): each input is one listing text, assembled into an in-memory
 * NEFF that is then released. Seeds: tests/fuzz/corpus/listing (listings written by
 * `kernel gen --listing`). Built with -DNX_FUZZ=ON (see DEVELOPERS.md). */
#include "common/compat.h"
#include "kernels/listing.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct nx_neff neff;
	struct nx_err err = { 0 };

	if (nx_listing_assemble("fuzz.lst", (const char *)data, size, &neff, &err) == 0)
		nx_neff_release(&neff);
	return 0;
}
