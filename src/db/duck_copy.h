/* SPDX-License-Identifier: MIT
 * duck_copy.h: what the COPYs of src/db share (duck_copy.c, duck_copy_parts.c) and what
 * they need of the nx_source() table function (duck.c). Private to src/db. */
#ifndef NX_DB_DUCK_COPY_H
#define NX_DB_DUCK_COPY_H

#include "common/compat.h"
#include "common/err.h"
#include "common/strbuf.h"
#include "db/duck.h"

#include <duckdb.h>

/* The COPY statement of nx__copy_to into sql. */
void nx__copy_sql(struct nx_strbuf *sql, const char *select_sql, const char *path,
		  unsigned long row_group, const char *part, unsigned long part_groups);
/* COPY ... TO path as zstd parquet, in row groups of row_group rows (0: DuckDB's);
 * with part (a file name pattern) path is a directory that gets files of
 * part_groups row groups each. */
int nx__copy_to(duckdb_connection con, const char *select_sql, const char *path,
		unsigned long row_group, const char *part, unsigned long part_groups,
		uint64_t *rows, struct nx_err *err);
/* Row groups of the tables written from row sources: NX_INGEST_ROW_GROUP rows, else
 * the caller's choice, else 32768. DuckDB's parquet writer holds a row group whole
 * before compressing it, and at its default of 122880 rows a row group of the 39-column
 * Instruction table is what set the raw stage's peak (docs/memory.md). */
unsigned long nx__source_row_group(unsigned long wanted);
/* Row groups per part of a split table: NX_INGEST_PART_GROUPS, else 64 (2M rows). */
unsigned long nx__part_row_groups(void);
/* Copies src to path; with a, src already runs on a's thread (a is stopped and freed
 * whichever way the copy ends). */
int nx__copy_source(struct nx_duck *d, struct nx_row_source *src, struct nx_duck_ahead *a,
		    const char *path, const char *part, unsigned long row_group,
		    uint64_t *rows, struct nx_err *err);

/* Points nx_source(k) at src (run ahead on a as its reader k, or inline without a). */
void nx__duck_source_set(struct nx_duck *d, unsigned k, struct nx_row_source *src,
			 struct nx_duck_ahead *a);
/* The error of a copy through nx_source(k): the source's own when it failed (DuckDB only
 * wraps it), else DuckDB's rc (copy_err's message); nx_source(k) is emptied. */
int nx__duck_source_end(struct nx_duck *d, unsigned k, int rc, struct nx_err *copy_err,
			struct nx_err *err);

#endif
