/* SPDX-License-Identifier: MIT
 * profile_files.h: what a profile directory contains. Parquet files become tables by
 * the rule of db/table_files.h ("<T>.parquet", or the parts "<T>_0.parquet",
 * "<T>_1.parquet", ... of a split table T). A directory holding a symbolic link, or
 * anything but regular files and directories, anywhere below it is refused: DuckDB's
 * allowed_directories compares path prefixes and would follow a link out of the
 * profile (and a FIFO would block a reader for good). No DuckDB here. */
#ifndef NX_SERVER_PROFILE_FILES_H
#define NX_SERVER_PROFILE_FILES_H

#include "common/compat.h"
#include "common/err.h"
#include "common/source_archive.h" /* NX_SOURCE_ARCHIVE */

#include <sys/types.h>
#include <time.h>

/* A fleet run's member profiles, by number (owned by the run's nx_pfiles, at a fixed
 * address: its union tables point to it). */
struct nx_pmembers {
	char **name;
	size_t n;
};

/* File i of a fleet run's union table: member number and base name number. */
struct nx_pmember_file {
	uint32_t member;
	uint32_t base;
};

struct nx_ptable {
	char *name;
	char **files; /* a profile's own table: base names, in read order; NULL in a union table */
	uint64_t *sizes;
	size_t nfiles;
	uint64_t bytes;
	/* A fleet run's union table: file i is "../<member>@latest/<base>" (nx__ptable_file),
	 * stored as numbers, 8 bytes a file: the paths as strings were the largest part of a
	 * server's memory per member (7 MB at 1,500 members). */
	bool members;
	struct nx_pmember_file *mf;    /* per file */
	char **bases;                  /* the distinct base names (one, or a split table's parts) */
	size_t nbases;
	const struct nx_pmembers *run; /* borrowed from the nx_pfiles */
};

/* The identity of a directory when it was scanned: an entry added or removed below it
 * (a link planted later) changes its modification time. */
struct nx_pdir {
	char *path;
	dev_t dev;
	ino_t ino;
	struct timespec mtime;
};

struct nx_pfiles {
	struct nx_ptable *t; /* sorted by name */
	size_t n;
	bool has_source;      /* source_folder.tar.gz is present */
	uint64_t source_bytes;
	char **allow; /* a fleet run: the resolved member directories its views read */
	size_t nallow;
	struct nx_pdir *dirs; /* the subdirectories, and a fleet run's member directories */
	size_t ndirs;
	struct nx_pmembers *members; /* a fleet run: its members with tables, else NULL */
};

/* Scans dir (a resolved path), with the member tables when it is a fleet run's index
 * (fleet_files.c). */
int nx__pfiles_scan(const char *dir, struct nx_pfiles *out, struct nx_err *err);
/* Only dir's own files. */
int nx__pfiles_scan_plain(const char *dir, struct nx_pfiles *out, struct nx_err *err);
/* Adds the member tables of a fleet run's index directory (a no-op elsewhere). */
int nx__pfiles_scan_fleet(const char *dir, struct nx_pfiles *pf, struct nx_err *err);
void nx__pfiles_release(struct nx_pfiles *pf);
/* Moves the directories of from (scanned) into pf->dirs, with from's own directory
 * dir: a fleet run's member, which its union tables read. */
void nx__pfiles_take_dirs(struct nx_pfiles *pf, struct nx_pfiles *from, const char *dir);
/* Whether the directories of pf->dirs are as they were scanned. */
bool nx__pfiles_dirs_unchanged(const struct nx_pfiles *pf);

/* File i of t as it is named in listings and read beside the profile directory: a base
 * name, "../<member>@latest/<base>" in a fleet run's union table, or a slice's absolute
 * path. Caller frees. */
char *nx__ptable_file(const struct nx_ptable *t, size_t i);
/* Its member's name in a union table, else NULL (borrowed). */
const char *nx__ptable_member(const struct nx_ptable *t, size_t i);

/* Case-insensitive lookup, as SQL identifiers are. Returns a borrowed pointer. */
const struct nx_ptable *nx__pfiles_find(const struct nx_pfiles *pf, const char *name);

#endif
