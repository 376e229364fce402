/* SPDX-License-Identifier: MIT
 * fuzz_ntff.c: libFuzzer target for the NTFF reader. Each input is written to a file in
 * a private temporary directory (fuzz_tmp.h) and read to the end twice: once with every
 * kind and once with the instruction kind only (the skip path), then rewound once. Built
 * with -DNX_FUZZ=ON (see DEVELOPERS.md); seeds in tests/fuzz/corpus/ntff (files the
 * simulator writes). */
#include "common/compat.h"
#include "ntff/ntff.h"
#include "fuzz_tmp.h"

#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void drain(struct nx_ntff_reader *r, unsigned mask)
{
	struct nx_err err = { 0 };
	struct nx_rec rec;

	while (nx_ntff_reader_next(r, mask, &rec, &err) == 1)
		;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *path = fuzz_tmp_path("input.ntff");
	struct nx_ntff_reader *r = NULL;
	struct nx_err err = { 0 };
	FILE *f;

	f = fopen(path, "wb");
	if (!f)
		abort();
	if (size && fwrite(data, 1, size, f) != size)
		abort();
	if (fclose(f) != 0)
		abort();
	if (nx_ntff_reader_open(&r, path, &err) == 0) {
		(void)nx_ntff_reader_info(r);
		drain(r, NX_REC_MASK_ALL);
		nx_ntff_reader_rewind(r, &err);
		drain(r, NX_REC_MASK(NX_REC_INST));
		for (int k = 0; k <= NX_REC_KIND_MAX + 1; k++)
			(void)nx_ntff_reader_count(r, k);
		nx_ntff_reader_close(r);
	}
	return 0;
}
