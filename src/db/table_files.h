/* SPDX-License-Identifier: MIT
 * table_files.h: the one rule that maps the files of a profile directory to tables,
 * shared by the views of the derive stage and the analysis (db/profile_views.c) and by
 * the server's scan (server/profile_files.c). No DuckDB here.
 *
 *   "<T>.parquet" is table T; "<T>_<n>.parquet", n of 1 to 9 decimal digits, is part n
 *   of split table T. A table's files are read in order: "<T>.parquet" first, then the
 *   parts by n. Hidden files (".x") and temporaries (names holding ".tmp") are no tables. */
#ifndef NX_DB_TABLE_FILES_H
#define NX_DB_TABLE_FILES_H

#include "common/compat.h"
#include "common/err.h"

/* Parses a base name; on success *table gets the table name (caller frees) and *index
 * the part number (-1 for "<T>.parquet"). False for a file that is no table file. */
bool nx_table_file_parse(const char *file, char **table, long *index);

struct nx_table_file {
	char *table;
	char *file; /* base name */
	long index; /* -1 for "<T>.parquet" */
	uint64_t bytes; /* as set by the keep callback (0 without one) */
};

/* Decides whether dir/file is listed (e.g. a regular file inside dir) and may set
 * *bytes; files that are no table files never reach it. */
typedef bool (*nx_table_file_keep)(void *arg, const char *dir, const char *file,
				   uint64_t *bytes);

/* Lists the table files of dir sorted by table name, then in read order, so each
 * table's files are one run of *out. keep may be NULL (every table file is listed).
 * Fails with -errno when dir cannot be listed. */
int nx_table_files_list(const char *dir, nx_table_file_keep keep, void *arg,
			struct nx_table_file **out, size_t *n, struct nx_err *err);
void nx_table_files_free(struct nx_table_file *v, size_t n);

/* The file of a fleet run's index profile that lists its member profiles, one per line
 * (written by `fleet index`; read by the server and the exports). */
#define NX_PROFILE_FLEET_MEMBERS "fleet-members.txt"

#endif
