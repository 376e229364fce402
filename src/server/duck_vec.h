/* SPDX-License-Identifier: MIT
 * duck_vec.h: one cell of a vector of a DuckDB result chunk, as the handlers that read
 * values themselves (rather than as JSON, result_json.c) read it: whether it is NULL, a
 * BIGINT, a VARCHAR copied out. Inline: the timeline's replies read every row this way. */
#ifndef NX_SERVER_DUCK_VEC_H
#define NX_SERVER_DUCK_VEC_H

#include "common/compat.h"
#include "common/xalloc.h"

#include <duckdb.h>

/* Whether the cell of row holds a value (is not NULL). */
static inline bool nx__vec_valid(duckdb_vector v, idx_t row)
{
	uint64_t *m = duckdb_vector_get_validity(v);

	return !m || duckdb_validity_row_is_valid(m, row);
}

/* A BIGINT cell, 0 when NULL; *null (if non-NULL) says which. */
static inline int64_t nx__vec_i64(duckdb_vector v, idx_t row, bool *null)
{
	bool ok = nx__vec_valid(v, row);

	if (null)
		*null = !ok;
	return ok ? ((int64_t *)duckdb_vector_get_data(v))[row] : 0;
}

/* A VARCHAR cell copied (malloc'd), NULL when NULL. */
static inline char *nx__vec_text(duckdb_vector v, idx_t row)
{
	duckdb_string_t *s;

	if (!nx__vec_valid(v, row))
		return NULL;
	s = &((duckdb_string_t *)duckdb_vector_get_data(v))[row];
	return nx_xstrndup(duckdb_string_t_data(s), duckdb_string_t_length(*s));
}

#endif
