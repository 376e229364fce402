/* SPDX-License-Identifier: MIT
 * parquet_zip.h: joins two parquet files that hold different columns of the same rows
 * into one file with the columns of both, byte for byte.
 *
 * Why: DuckDB encodes a COPY from our row sources on one thread (docs/memory.md, "Both
 * cores"). The raw stage therefore runs two COPYs of the same rows side by side, each
 * writing some of the table's columns in the same row groups, and joins their files
 * here: no row moves, so the joined file holds the rows in the source's order.
 *
 * How: the right file's data region (its column chunks and bloom filters) is appended
 * to the left file after the left's own, and one footer replaces the left's: the
 * schema lists the left's columns then the right's, and row group g lists the left's
 * column chunks of g then the right's, whose offsets move by where its data landed.
 * The data pages are not decoded; only the right's bytes are copied. No DuckDB here. */
#ifndef NX_DB_PARQUET_ZIP_H
#define NX_DB_PARQUET_ZIP_H

#include "common/compat.h"
#include "common/err.h"

/* Whether left and right have row groups of the same row counts, in the same order
 * (*same), which nx_parquet_zip needs. Errors name the file and the byte. */
int nx_parquet_zip_check(const char *left, const char *right, bool *same, struct nx_err *err);

/* Makes left hold right's columns after its own (see above). right is left as it was.
 * Both must have been checked by nx_parquet_zip_check. On failure left may be damaged
 * (it is the caller's temporary); errors name the file and the byte. */
int nx_parquet_zip(const char *left, const char *right, struct nx_err *err);

#endif
