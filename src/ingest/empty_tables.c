/* SPDX-License-Identifier: MIT
 * empty_tables.c: completes a profile directory so it has a file for every stored
 * table of the schema, like the real tool's dumps: a table that got no rows (or that
 * our pipeline never fills) is written as a valid zero-row <Table>.parquet with the
 * schema's exact columns and types (db/parquet_empty.h writes it, without DuckDB).
 * Transient API payloads are never written. */
#include "common/compat.h"
#include "ingest/ingest.h"
#include "common/fsutil.h"
#include "common/xalloc.h"
#include "db/parquet_empty.h"
#include "schema/schema.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A table has data when <T>.parquet or its first part <T>_0.parquet exists. */
static bool has_file(const char *dir, const char *table)
{
	char *one = nx_xasprintf("%s/%s.parquet", dir, table);
	char *split = nx_xasprintf("%s/%s_0.parquet", dir, table);
	bool found = nx_is_file(one) || nx_is_file(split);

	free(one);
	free(split);
	return found;
}

static void progress_empty(const struct nx_progress *progress, const struct nx_table *t)
{
	struct nx_progress_event ev = { .kind = NX_PROGRESS_TABLE, .stage = "raw", .table = t->name,
					.how = "empty" };
	nx_progress_emit(progress, &ev);
}

int nx_write_empty_tables(const char *dir, const struct nx_progress *progress, struct nx_err *err)
{
	int rc = 0;

	for (size_t i = 0; !rc && i < nx_schema_table_count; i++) {
		const struct nx_table *t = &nx_schema_tables[i];
		if (!t->written || has_file(dir, t->name))
			continue;
		char *path = nx_xasprintf("%s/%s.parquet", dir, t->name);
		rc = nx_parquet_write_empty(t, path, err);
		if (rc)
			nx_err_wrap(err, "writing the empty table %s", t->name);
		else
			progress_empty(progress, t);
		free(path);
	}
	return rc;
}
