/* SPDX-License-Identifier: MIT
 * profile_files.h: what a profile directory contains. Parquet files become tables by
 * the rule of db/table_files.h ("<T>.parquet", or the parts "<T>_0.parquet",
 * "<T>_1.parquet", ... of a split table T); symlinks that resolve outside the
 * directory are ignored. No DuckDB here. */
#ifndef NX_SERVER_PROFILE_FILES_H
#define NX_SERVER_PROFILE_FILES_H

#include "common/compat.h"
#include "common/err.h"

struct nx_ptable {
	char *name;
	char **files; /* base names, in read order */
	uint64_t *sizes;
	size_t nfiles;
	uint64_t bytes;
	bool members; /* a fleet run's union table: files are "../<member>@latest/<file>" */
};

struct nx_pfiles {
	struct nx_ptable *t; /* sorted by name */
	size_t n;
	bool has_source;      /* source_folder.tar.gz is present */
	uint64_t source_bytes;
	char **allow; /* a fleet run: the resolved member directories its views read */
	size_t nallow;
};

/* Scans dir (a resolved path), with the member tables when it is a fleet run's index
 * (fleet_files.c). */
int nx__pfiles_scan(const char *dir, struct nx_pfiles *out, struct nx_err *err);
/* Only dir's own files. */
int nx__pfiles_scan_plain(const char *dir, struct nx_pfiles *out, struct nx_err *err);
/* Adds the member tables of a fleet run's index directory (a no-op elsewhere). */
int nx__pfiles_scan_fleet(const char *dir, struct nx_pfiles *pf, struct nx_err *err);
void nx__pfiles_release(struct nx_pfiles *pf);

/* Case-insensitive lookup, as SQL identifiers are. Returns a borrowed pointer. */
const struct nx_ptable *nx__pfiles_find(const struct nx_pfiles *pf, const char *name);

#define NX_SOURCE_ARCHIVE "source_folder.tar.gz"

#endif
