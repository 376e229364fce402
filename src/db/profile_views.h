/* SPDX-License-Identifier: MIT
 * profile_views.h: a profile directory opened as views. Every table file of the
 * directory (one file or the parts of a split table, see db/table_files.h) becomes a
 * view named after its table; the derive stage, the analysis, nx-sql and the tests
 * read profiles this way. (The server builds its sandboxed views from its own scan.) */
#ifndef NX_DB_PROFILE_VIEWS_H
#define NX_DB_PROFILE_VIEWS_H

#include "common/compat.h"
#include "common/err.h"
#include "common/strbuf.h"
#include "db/duck.h"

/* Creates (or replaces) a view named after each table file in dir, merging the parts
 * of split tables. */
int nx_db_create_views(struct nx_duck *d, const char *dir, struct nx_err *err);

/* Likewise for one table of dir only (an error when it has no file there): a file just
 * written, without binding every other table's files again. */
int nx_db_create_table_view(struct nx_duck *d, const char *dir, const char *table,
			    struct nx_err *err);

/* Creates an empty, correctly typed view for every schema table that has no file in
 * dir, so SQL can refer to any table. */
int nx_db_create_empty_views(struct nx_duck *d, const char *dir, struct nx_err *err);

/* Both: the views of dir's tables, and empty ones for the schema tables it lacks. */
int nx_db_profile_views(struct nx_duck *d, const char *dir, struct nx_err *err);

/* Appends read_parquet([...]) over table's files in dir (one file or its parts). */
int nx_db_add_table_scan(struct nx_strbuf *sql, const char *dir, const char *table,
			 struct nx_err *err);

/* True when table name has a file (whole or split) in one of dirs (NULL-terminated). */
bool nx_db_table_has_file(const char *const *dirs, const char *name);

#endif
