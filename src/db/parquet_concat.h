/* SPDX-License-Identifier: MIT
 * parquet_concat.h: joins parquet files of one schema into one file, byte for byte.
 *
 * Why: DuckDB's parquet writer and reader both hold every row group's metadata (and
 * the writer every bloom filter) in memory for as long as the file is open, about 1 KB
 * per column chunk: 110 MB for a 70M-row Instruction table. The ingest therefore writes
 * a large table as parts of a few million rows (db/table_files.h's split rule), reads
 * the parts in the derive stage, and joins them here at the end, because the seed
 * workflows open "<Table>.parquet" by name.
 *
 * How: the output is "PAR1", each part's bytes between its magic and its footer (its
 * column chunks, bloom filters and page indexes, copied by the kernel), then one footer
 * whose row groups are the parts' row groups in order with every file offset moved by
 * where its part landed. The data pages are not decoded. Memory: one part's footer at a
 * time. No DuckDB here. */
#ifndef NX_DB_PARQUET_CONCAT_H
#define NX_DB_PARQUET_CONCAT_H

#include "common/compat.h"
#include "common/err.h"

/* Writes parts[0..n) (n >= 1, same schema) joined into out, which must not exist. On
 * failure nothing is left at out and the parts are untouched. Errors name the part
 * and the byte where it is malformed. */
int nx_parquet_concat(const char *const *parts, size_t n, const char *out,
		      struct nx_err *err);

/* For every table of dir stored only as parts ("<T>_<n>.parquet"), joins the parts
 * into "<T>.parquet" (through a hidden temporary, renamed when complete) and removes
 * them; a single part is just renamed. *bytes and *tables (may be NULL) get the bytes
 * copied and the number of tables that had more than one part. */
int nx_parquet_join_split_tables(const char *dir, uint64_t *bytes, size_t *tables,
				 struct nx_err *err);

#endif
