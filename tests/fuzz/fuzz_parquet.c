/* SPDX-License-Identifier: MIT
 * fuzz_parquet.c: libFuzzer target for the parquet part joiner (db/parquet_concat.c), its
 * Thrift compact reader, and the analysis's parquet reader (db/parquet_read.c: pages,
 * levels, dictionaries, bit-packed indices). Each input is written to a file in a private
 * temporary directory (fuzz_tmp.h), joined with itself into a second file, which is then
 * removed, and read row group by row group for the seeds' columns. Seeds in
 * tests/fuzz/corpus/parquet: small files DuckDB writes (make_corpus.sh). */
#include "common/compat.h"
#include "db/parquet_concat.h"
#include "db/parquet_read.h"
#include "fuzz_tmp.h"

#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *path = fuzz_tmp_path("input.parquet"), *out = fuzz_tmp_path("joined.parquet");
	struct nx_err err = { 0 };
	FILE *f;

	f = fopen(path, "wb");
	if (!f)
		abort();
	if (size && fwrite(data, 1, size, f) != size)
		abort();
	if (fclose(f) != 0)
		abort();
	const char *parts[] = { path, path };
	unlink(out);
	if (nx_parquet_concat(parts, 2, out, &err) == 0)
		unlink(out);

	static const char *const cols[] = { "id", "name", "flag", "v", "k" };
	const char *files[] = { path };
	const struct nx_pqr_batch *b;
	struct nx_pqr *r = NULL;
	int rc = nx_pqr_open(&r, files, 1, cols, 5, &err);
	while (!rc && !(rc = nx_pqr_next(r, &b, &err)) && b)
		;
	nx_pqr_close(r);
	return 0;
}
