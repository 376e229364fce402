/* SPDX-License-Identifier: MIT
 * fuzz_trace_events.c: libFuzzer target for the Chrome-trace event reader (chrome.c) and
 * the SystemProfileEvents row source (events.c): each input is written to a trace file
 * in a private temporary directory (fuzz_tmp.h) and read to the end through the real row
 * source into scratch DuckDB vectors (nx_duck_drain_source, no database), warnings
 * included. Seeds: tests/fuzz/corpus/trace_events (small vendored traces and edge
 * cases). Built with -DNX_FUZZ=ON (see DEVELOPERS.md). */
#include "common/compat.h"
#include "db/duck.h"
#include "ingest/context.h"
#include "trace/events.h"
#include "fuzz_tmp.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *path = fuzz_tmp_path("input.json");
	struct nx_ingest_ctx ctx;
	struct nx_tev_file file = { .instance = "i-fuzz" };
	struct nx_tev_src s;
	struct nx_row_source src;
	struct nx_err err = { 0 };
	uint64_t rows;
	FILE *f;

	f = fopen(path, "wb");
	if (!f)
		abort();
	if (size && fwrite(data, 1, size, f) != size)
		abort();
	if (fclose(f) != 0)
		abort();
	memset(&ctx, 0, sizeof(ctx));
	file.path = path;
	if (nx_tev_init(&s, &file, 1, nx_ctx_warning, &ctx, &src, &err) == 0)
		(void)nx_duck_drain_source(&src, &rows, &err);
	nx_tev_release(&s);
	nx_ctx_release(&ctx);
	return 0;
}
