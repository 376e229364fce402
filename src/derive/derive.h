/* SPDX-License-Identifier: MIT
 * derive.h: the derive stage. Derived tables (Summary, ActiveTime, OpcodeSummary, ...)
 * are SQL files in src/derive/ (NN_name.sql), run by DuckDB over views of the raw parquet
 * tables already written, each result cast to the schema's exact column types and
 * written as <Table>.parquet next to them. */
#ifndef NX_DERIVE_DERIVE_H
#define NX_DERIVE_DERIVE_H

#include "common/compat.h"
#include "common/err.h"
#include "common/progress.h"
#include "db/duck.h"

/* Called with a message for each table the stage skips (missing inputs). */
typedef void (*nx_derive_note_fn)(void *arg, const char *table, const char *why);

/* Creates a view for every <Table>.parquet in dir, then runs every embedded SQL file in
 * name order (each written table is reported through progress, which may be NULL).
 * A file starts with header lines:
 *   -- table: <Name>            the schema table it produces
 *   -- stage: <name>            or: an internal table written as it is into staging
 *                               (e.g. a part nx_T_1 of a split table nx_T), even empty
 *   -- requires: <T1>, <T2>     tables that must exist, else the file is skipped
 *   -- empty when: SELECT ...   a condition (one value, true or not 0) under which the
 *                               query gives no rows: then it is not run, no file
 *   -- memory: 64MB, -- optimizers off: join_order, -- threads: 1
 *                               DuckDB settings for its one query, set back after it
 *                               (derive.c, own_apply), even when it fails
 * and its body is one SELECT. Tables with no rows are not written. */
int nx_derive_run(struct nx_duck *d, const char *dir, const char *staging,
		  const struct nx_progress *progress, nx_derive_note_fn note, void *note_arg,
		  struct nx_err *err);

/* nx_derive_run over the SQL files given, in their order, instead of the embedded ones
 * (the tests' own files, test_derive_settings). */
struct nx_sql_file;
int nx_derive_run_files(struct nx_duck *d, const char *dir, const char *staging,
			const struct nx_sql_file *files, size_t nfiles,
			const struct nx_progress *progress, nx_derive_note_fn note,
			void *note_arg, struct nx_err *err);

/* DuckDB's memory_limit for the derive SQL: NX_DERIVE_MEMORY_LIMIT or 128MB. A query
 * that runs out of it is retried once with NX_DERIVE_RETRY_MEMORY_LIMIT (1GB). */
const char *nx_derive_memory_limit(void);

/* Wraps a SELECT so its output has exactly the schema columns of `table`, in order and
 * cast to the schema types; columns the SELECT lacks become typed NULLs. */
int nx_derive_project(struct nx_duck *d, const char *table, const char *select_sql,
		      struct nx_strbuf *out, struct nx_err *err);

#endif
