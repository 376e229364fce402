/* SPDX-License-Identifier: MIT
 * rowbuf.h: inside a batch of rows (struct nx_rowbuf, whose setters duck.h declares and
 * rowbuf.c defines), for the code of src/db that reads one: DuckDB's writer through
 * nx_source(), and ours (parquet_write.c). A batch is a DuckDB data chunk; each column
 * is a vector, with its data and validity mask at hand. */
#ifndef NX_DB_ROWBUF_H
#define NX_DB_ROWBUF_H

#include "common/compat.h"
#include "common/arena.h"

#include <duckdb.h>

enum nx_coltype { NX_COL_BIGINT, NX_COL_INTEGER, NX_COL_FLOAT, NX_COL_DOUBLE, NX_COL_VARCHAR,
		  NX_COL_BOOLEAN, NX_COL_LIST_BIGINT, NX_COL_LIST_VARCHAR };

struct nx_rowbuf {
	duckdb_data_chunk chunk;
	size_t ncols, capacity;
	enum nx_coltype type[128];
	duckdb_vector vec[128];
	void *data[128];
	uint64_t *validity[128];
	/* NULL: strings go to the chunk's own heap, as DuckDB's writer needs. Otherwise
	 * they are copied here, and the chunk's strings point at them: only for a batch
	 * that our writer reads and that is destroyed before the arena is freed. */
	struct nx_arena *arena;
	/* NULL, or where the source writes each row's key (struct nx_row_keys, duck.h): a
	 * batch bound for our writer from a source that has keys. */
	uint32_t *keys;
};

struct nx_field;
/* The column type of a field's batches (nx_schema_duck_type; anything else is VARCHAR). */
enum nx_coltype nx_rowbuf_coltype(const struct nx_field *f);

/* The DuckDB logical type of a field's column (the caller destroys it). */
duckdb_logical_type nx_rowbuf_logical_type(const struct nx_field *f);
struct nx_table;
/* Points b at the vectors of chunk (of t's columns), every cell NULL. */
void nx_rowbuf_bind(struct nx_rowbuf *b, duckdb_data_chunk chunk, const struct nx_table *t);

/* Whether row of a validity mask is valid (a NULL mask: every row is). */
static inline bool nx_rowbuf_valid(const uint64_t *mask, size_t row)
{
	return !mask || (mask[row >> 6] >> (row & 63)) & 1;
}

#endif
