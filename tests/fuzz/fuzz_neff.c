/* SPDX-License-Identifier: MIT
 * fuzz_neff.c: libFuzzer entry point for the NEFF reader. Built with -DNX_FUZZ=ON
 * (see DEVELOPERS.md); seeds in tests/fuzz/corpus/neff.
 *
 * The first input byte selects how the rest is treated:
 *   bit 0 clear: as a NEFF file, unchanged (exercises the header checks);
 *   bit 0 set:   data_size and the hash are fixed up, so the payload parsers run;
 *   bits 0+1:    the bytes after the header are a raw tar archive that is gzipped
 *                here first, so mutations reach the tar, JSON and record parsers
 *                instead of breaking the deflate stream. */
#include "common/compat.h"
#include "neff/neff.h"
#include "neff/tar.h"

#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct nx_neff neff;
	struct nx_err err;
	uint8_t *file = NULL, *gz = NULL;
	size_t len;

	if (size < 1 + NX_NEFF_HEADER_SIZE) {
		if (size && nx_neff_read_mem("fuzz.neff", data + 1, size - 1, &neff, &err) == 0)
			nx_neff_release(&neff);
		return 0;
	}
	const uint8_t *hdr = data + 1, *payload = data + 1 + NX_NEFF_HEADER_SIZE;
	size_t plen = size - 1 - NX_NEFF_HEADER_SIZE;

	if ((data[0] & 3) == 3 && nx_gzip(payload, plen, &gz, &plen, &err) == 0)
		payload = gz;
	len = NX_NEFF_HEADER_SIZE + plen;
	file = malloc(len);
	if (!file)
		goto out;
	memcpy(file, hdr, NX_NEFF_HEADER_SIZE);
	memcpy(file + NX_NEFF_HEADER_SIZE, payload, plen);
	if (data[0] & 1) {
		uint64_t pkg = file[0] == 2 ? 2 : 1;
		uint8_t hash[32];

		nx_neff_payload_hash(pkg, file + NX_NEFF_HEADER_SIZE, plen, hash);
		memcpy(file + 172, hash, pkg == 2 ? 16 : 32);
		for (int i = 0; i < 8; i++)
			file[16 + i] = (uint8_t)((uint64_t)plen >> (8 * i));
	}
	nx_err_clear(&err);
	if (nx_neff_read_mem("fuzz.neff", file, len, &neff, &err) == 0)
		nx_neff_release(&neff);
out:
	free(file);
	free(gz);
	return 0;
}
