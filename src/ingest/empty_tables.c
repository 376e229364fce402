/* SPDX-License-Identifier: MIT
 * empty_tables.c: completes a profile directory so it has a file for every stored
 * table of the schema, like the real tool's dumps: a table that got no rows (or that
 * our pipeline never fills) is written as a valid zero-row <Table>.parquet with the
 * schema's exact columns and types. Transient API payloads are never written. */
#include "common/compat.h"
#include "ingest/ingest.h"
#include "common/fsutil.h"
#include "common/strbuf.h"
#include "common/xalloc.h"
#include "db/duck.h"
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

void nx_empty_table_sql(const struct nx_table *t, struct nx_strbuf *out)
{
	nx_strbuf_addstr(out, "SELECT ");
	for (size_t i = 0; i < t->nfields; i++) {
		const char *ty = nx_schema_duck_type(&t->fields[i]);
		nx_strbuf_addf(out, "%sCAST(NULL AS %s) AS \"%s\"", i ? ", " : "",
			       ty ? ty : "VARCHAR", t->fields[i].name);
	}
	nx_strbuf_addstr(out, " WHERE false");
}

static bool skipped(const char *table, const char *const *skip)
{
	for (; skip && *skip; skip++)
		if (!strcmp(*skip, table))
			return true;
	return false;
}

/* Writes the empty tables; each one written is marked in written (when non-NULL) and
 * reported to progress. */
static int write_empty(struct nx_duck *d, const char *dir, const char *const *skip,
		       bool *written, const struct nx_progress *progress, struct nx_err *err)
{
	int rc = 0;

	for (size_t i = 0; !rc && i < nx_schema_table_count; i++) {
		const struct nx_table *t = &nx_schema_tables[i];
		if (!t->written || skipped(t->name, skip) || has_file(dir, t->name))
			continue;
		struct nx_strbuf sql = NX_STRBUF_INIT;
		char *path = nx_xasprintf("%s/%s.parquet", dir, t->name);
		uint64_t rows = 0;

		nx_empty_table_sql(t, &sql);
		rc = nx_duck_copy_query(d, sql.buf, path, &rows, err);
		if (rc) {
			nx_err_wrap(err, "writing the empty table %s", t->name);
		} else {
			if (written)
				written[i] = true;
			nx_empty_table_progress(progress, t);
		}
		nx_strbuf_release(&sql);
		free(path);
	}
	return rc;
}

void nx_empty_table_progress(const struct nx_progress *progress, const struct nx_table *t)
{
	struct nx_progress_event ev = { .kind = NX_PROGRESS_TABLE, .stage = "raw", .table = t->name,
					.how = "empty" };
	nx_progress_emit(progress, &ev);
}

int nx_write_empty_tables(struct nx_duck *d, const char *dir, const struct nx_progress *progress,
			  struct nx_err *err)
{
	return write_empty(d, dir, NULL, NULL, progress, err);
}

int nx_write_empty_tables_marked(struct nx_duck *d, const char *dir, const char *const *skip,
				 bool *written, struct nx_err *err)
{
	return write_empty(d, dir, skip, written, NULL, err);
}
