/* SPDX-License-Identifier: MIT
 * parquet_meta.h: the parts of a parquet footer that depend only on a schema table,
 * shared by the two writers that work without DuckDB (db/parquet_empty.h for files
 * without rows, db/parquet_write.h for files with them).
 *
 * Each column gets the physical and converted type DuckDB's writer gives the column's
 * DuckDB type (nx_schema_duck_type), and DuckDB's layout: a scalar is an optional
 * leaf; a list is parquet's three levels (optional group name (LIST) { repeated group
 * list { optional element } }). So DuckDB, pyarrow and pandas read our files as they
 * read DuckDB's. No DuckDB here. */
#ifndef NX_DB_PARQUET_META_H
#define NX_DB_PARQUET_META_H

#include "common/compat.h"
#include "common/strbuf.h"

struct nx_table;
struct nx_field;

/* parquet.thrift's codes, only those used by our writers. */
enum { NX_PQ_BOOLEAN = 0, NX_PQ_INT32 = 1, NX_PQ_INT64 = 2, NX_PQ_FLOAT = 4,
       NX_PQ_DOUBLE = 5, NX_PQ_BYTE_ARRAY = 6 };
enum { NX_PQ_REQUIRED = 0, NX_PQ_OPTIONAL = 1, NX_PQ_REPEATED = 2 };
enum { NX_PQ_NONE = -1, NX_PQ_UTF8 = 0, NX_PQ_LIST = 3, NX_PQ_INT_32 = 17,
       NX_PQ_INT_64 = 18 };

/* A column's leaf: physical and converted type (NX_PQ_NONE when it has none), and
 * whether the column is a list of it. */
struct nx_pq_leaf {
	int type, converted;
	bool list;
};

/* The leaf of a field's DuckDB type; a type our writers do not know is VARCHAR. */
struct nx_pq_leaf nx_pq_leaf_of(const struct nx_field *f);

/* Appends FileMetaData whole (version 1, the schema of t, num_rows, the row groups,
 * created_by): row_groups holds nrow_groups RowGroup structs already encoded. */
void nx_pq_file_metadata(struct nx_strbuf *out, const struct nx_table *t, uint64_t num_rows,
			 const struct nx_strbuf *row_groups, uint32_t nrow_groups,
			 const char *created_by);

/* Appends the file's tail: the footer's length (little-endian) and "PAR1". */
void nx_pq_tail(struct nx_strbuf *out, size_t footer_len);

#endif
