/* SPDX-License-Identifier: MIT
 * fuzz_search.c: libFuzzer target for the body of POST /api/v1/db/<name>/_search
 * (nx_search_body_parse in src/server/h_search.c: control-byte escaping, JSON, the
 * type/tableName/query members). Seeds: tests/fuzz/corpus/search (the request bodies
 * of the seed workflows and the API tests). Built with -DNX_FUZZ=ON (DEVELOPERS.md). */
#include "common/compat.h"
#include "server/http.h"

#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct nx_search_body b;
	struct nx_err err = { 0 };

	if (nx_search_body_parse((const char *)data, size, &b, &err) == 0) {
		/* what the handler relies on */
		if (!b.type || (!strcmp(b.type, "tableSchema") && !b.table) ||
		    (!strcmp(b.type, "databaseExplorerQuery") && !b.sql))
			__builtin_trap();
	} else if (!b.error || !err.msg[0]) {
		__builtin_trap();
	}
	nx_search_body_release(&b);
	return 0;
}
