/* SPDX-License-Identifier: MIT
 * parquet_empty.c: zero-row parquet files from the schema (see parquet_empty.h). */
#include "common/compat.h"
#include "db/parquet_empty.h"
#include "common/fsutil.h"
#include "db/parquet_meta.h"

void nx_parquet_empty_bytes(const struct nx_table *t, const char *created_by,
			    struct nx_strbuf *out)
{
	size_t start;

	nx_strbuf_add(out, "PAR1", 4);
	start = out->len;
	nx_pq_file_metadata(out, t, 0, NULL, 0, created_by);
	nx_pq_tail(out, out->len - start);
}

int nx_parquet_write_empty(const struct nx_table *t, const char *path, struct nx_err *err)
{
	struct nx_strbuf b = NX_STRBUF_INIT;
	int rc;

	nx_parquet_empty_bytes(t, NX_PARQUET_EMPTY_CREATED_BY, &b);
	rc = nx_write_file_atomic(path, b.buf, b.len, err);
	nx_strbuf_release(&b);
	return rc;
}
