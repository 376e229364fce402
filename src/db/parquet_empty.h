/* SPDX-License-Identifier: MIT
 * parquet_empty.h: a zero-row parquet file for one schema table, written without DuckDB.
 *
 * Why: a profile holds a file for every stored table of the schema, and most tables of
 * a framework-trace profile (and some of a device one) have no rows. Having DuckDB COPY
 * an empty SELECT costs a parse, a bind and a plan per table: about 25 ms of a 0.3 s
 * trace ingest for 45 tables. A file without rows is only the magic and a footer.
 *
 * What: "PAR1", the footer (FileMetaData in Thrift's compact protocol: version 1, the
 * schema, num_rows 0, no row groups, created_by), its length, "PAR1". Each column gets
 * the physical and converted type DuckDB's writer gives the column's DuckDB type
 * (db/parquet_meta.h), so the bytes are DuckDB's own but for created_by. No DuckDB
 * here. */
#ifndef NX_DB_PARQUET_EMPTY_H
#define NX_DB_PARQUET_EMPTY_H

#include "common/compat.h"
#include "common/err.h"
#include "common/strbuf.h"

struct nx_table;

/* The created_by of our files. */
#define NX_PARQUET_EMPTY_CREATED_BY "neuron-explorer version " NX_VERSION

/* Appends the whole file for table t to out, with the given created_by. */
void nx_parquet_empty_bytes(const struct nx_table *t, const char *created_by,
			    struct nx_strbuf *out);

/* Writes the file to path (replacing it) through a temporary sibling and a rename
 * (nx_write_file_atomic). On failure path is as it was and the error names it. */
int nx_parquet_write_empty(const struct nx_table *t, const char *path, struct nx_err *err);

#endif
