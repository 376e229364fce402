/* SPDX-License-Identifier: MIT
 * result_json.h: turns DuckDB result vectors into JSON text. A column's logical
 * type is compiled once into an nx_rj_type tree, then each value is written by
 * walking that tree, so the hot loop makes no type queries. Encoding rules:
 * integers beyond +-2^53 (and such DECIMALs) become strings so JavaScript clients
 * keep every digit; NaN and infinities become null; temporal values are strings;
 * LIST/ARRAY are arrays; STRUCT and MAP are objects; UNION is its active member.
 * Only src/server/ includes duckdb.h. */
#ifndef NX_SERVER_RESULT_JSON_H
#define NX_SERVER_RESULT_JSON_H

#include "common/compat.h"
#include "common/strbuf.h"

#include <duckdb.h>

struct nx_rj_type {
	duckdb_type id;
	duckdb_type internal; /* storage type of DECIMAL and ENUM */
	uint8_t width, scale; /* DECIMAL */
	idx_t array_size;     /* ARRAY */
	char **names;         /* ENUM dictionary, or STRUCT/UNION member names */
	size_t nnames;
	struct nx_rj_type *child; /* LIST/ARRAY: 1; MAP: 2 (key, value); STRUCT/UNION: nnames */
	size_t nchild;
	char *sql_name; /* e.g. "BIGINT", "VARCHAR[]", "DECIMAL(18,3)" */
};

/* Compiles t. Returns 0, or -ENOTSUP with the offending type in *bad (static
 * string) for types this encoder does not render (BIT, BIGNUM, ...). */
int nx__rj_type_init(struct nx_rj_type *rt, duckdb_logical_type t, const char **bad);
void nx__rj_type_release(struct nx_rj_type *rt);

/* Appends the JSON encoding of row `row` of vector v (of type rt) to out. */
void nx__rj_value(struct nx_strbuf *out, const struct nx_rj_type *rt, duckdb_vector v, idx_t row);

/* Appends a double as the shortest text that reads back to the same value. */
void nx__rj_double(struct nx_strbuf *out, double d);

#endif
