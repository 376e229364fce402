/* SPDX-License-Identifier: MIT
 * duck_stream.h: streams the rows of one read-only query over parquet files to a C
 * callback, chunk by chunk (DuckDB's streaming result), so that exporters never hold
 * a whole table in C memory. It opens its own in-memory DuckDB: the query reads files
 * (read_parquet) and needs no state from an ingest connection. Result columns must
 * be BIGINT/INTEGER, DOUBLE, BOOLEAN or VARCHAR (cast in SQL otherwise). */
#ifndef NX_DB_DUCK_STREAM_H
#define NX_DB_DUCK_STREAM_H

#include "common/compat.h"
#include "common/err.h"

enum nx_dkind { NX_D_NULL, NX_D_INT, NX_D_FLOAT, NX_D_TEXT, NX_D_BOOL };

struct nx_dcell {
	enum nx_dkind kind;
	int64_t i;        /* NX_D_INT; NX_D_BOOL as 0/1 */
	double f;         /* NX_D_FLOAT */
	const char *s;    /* NX_D_TEXT: not NUL-terminated, valid during the call */
	size_t len;
};

/* Called once per row with ncols cells; a non-zero return stops the stream and is
 * returned by nx_duck_stream. */
typedef int (*nx_dstream_fn)(void *arg, const struct nx_dcell *cells, size_t ncols);

/* Runs sql and calls fn for every row in order. */
int nx_duck_stream(const char *sql, nx_dstream_fn fn, void *arg, struct nx_err *err);

/* Called once, before the first row, with the result's column names. */
typedef void (*nx_dstream_head_fn)(void *arg, const char *const *names, size_t ncols);

/* The same, telling head the column names first. */
int nx_duck_stream_named(const char *sql, nx_dstream_head_fn head, nx_dstream_fn fn, void *arg,
			 struct nx_err *err);

#endif
