/* SPDX-License-Identifier: MIT
 * sql_files.h: the derive stage's SQL, embedded at build time from the .sql files in src/derive/
 * (cmake/embed_sql.cmake). */
#ifndef NX_DERIVE_SQL_FILES_H
#define NX_DERIVE_SQL_FILES_H

#include <stddef.h>

struct nx_sql_file {
	const char *name; /* file name, e.g. "10_active_time.sql" */
	const char *text;
};
extern const struct nx_sql_file nx_sql_files[];
extern const size_t nx_sql_file_count;

#endif
