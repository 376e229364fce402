/* SPDX-License-Identifier: MIT
 * parquet_write.h: a schema table's rows written to a parquet file in C, without
 * DuckDB's writer.
 *
 * Why: the trace ingest is CPU-bound on two cores, and DuckDB's parquet writer (its
 * dictionary analysis of every string, its copies, zstd at level 3) took over a third
 * of the CPU of a framework-trace ingest, for SystemProfileEvents alone
 * (docs/framework-traces.md). What that table needs from a writer is little.
 *
 * The raw trace tables (Instruction, DmaPacket) are written by it too, in parts
 * (nx_pqw_write_parts; docs/memory.md, "Our writer for the raw tables").
 *
 * What: the columns DuckDB's writer would make for the table (db/parquet_meta.h). Each
 * row group has one data page (v1) per column: definition levels (and repetition
 * levels for a list) in the RLE/bit-packed hybrid, then the values of the cells that
 * are not NULL, the whole page compressed with zstd. The values of a scalar column other
 * than a boolean are dictionary-encoded, as DuckDB's writer does (a dictionary page of
 * the chunk's distinct values, PLAIN, before a data page of RLE_DICTIONARY indices;
 * db/parquet_dict.h), unless the chunk has too many distinct values: then, and for
 * lists and booleans, they are PLAIN. Integer and float columns
 * carry min/max statistics, every scalar column its null count, so DuckDB can skip row
 * groups as it does in its own files. A row group holds row_group rows, or fewer when a
 * column's values pass 64 MB. The file is written as a temporary sibling and renamed
 * at the end, so a failed write leaves path as it was.
 *
 * Keyed columns: a row source may promise that some of its columns are functions of a
 * key per row (struct nx_row_keys, db/duck.h; Instruction's about 40 columns of the
 * static instruction, its key the instruction's engine and index). Rows interleave
 * engines, so those cells seldom repeat the row before and each took a hash and a probe
 * of the chunk's dictionary. The writer keeps, per keyed column, a memo key -> the
 * dictionary index its last value got in the chunk: a cell whose memo names an index of
 * the chunk's dictionary holding the very same bytes (two words and the length compared, the rest
 * of a long string with memcmp) gets that index with no hash and no min/max update;
 * any other (first of its key in the chunk, a NULL, the chunk already PLAIN, a row of
 * no key, a value other than the memo's: a broken promise) goes
 * the usual way and notes its index. A source with a fill (Instruction's) goes further:
 * the writer fills one row per key once (per file), the source leaves the keyed cells of
 * a row with a key out of the batches it makes for this writer, and the memo (of this
 * chunk: a generation per column) gives the cell's level and index with no value read;
 * a miss reads the value from the key's row. The dictionary sees the same values in the
 * same order either way, so the file is byte for byte the one written without keys
 * (test_parquet_keyed; docs/memory.md, "The static columns by key"). */
#ifndef NX_DB_PARQUET_WRITE_H
#define NX_DB_PARQUET_WRITE_H

#include "common/compat.h"
#include "common/err.h"

struct nx_table;
struct nx_rowbuf;
struct nx_pqw;

/* Starts a file for rows of t at path, in row groups of row_group rows (0: 8192). */
int nx_pqw_open(struct nx_pqw **out, const struct nx_table *t, const char *path,
		unsigned long row_group, struct nx_err *err);
struct nx_row_keys;
/* Takes the keyed columns of k (NULL or no key: none) for the rows added next, whose
 * batches then carry their keys (b->keys; a batch without is added the usual way).
 * Without a fill, ignored when the memos would pass 16 MiB (k->n keys times the keyed
 * columns, 8 bytes each). With one, fills the static rows; an error (NX_EUSAGE) when
 * it keys a boolean or a list, or has more than NX_ROW_KEYS_FILLED keys. */
int nx_pqw_keys(struct nx_pqw *w, const struct nx_row_keys *k, struct nx_err *err);
/* Adds rows [0, n) of b, a batch of rows of the file's table. */
int nx_pqw_add(struct nx_pqw *w, const struct nx_rowbuf *b, size_t n, struct nx_err *err);
/* Adds rows [from, n) of b. */
int nx_pqw_add_rows(struct nx_pqw *w, const struct nx_rowbuf *b, size_t from, size_t n,
		    struct nx_err *err);
/* Writes what is left and the footer, renames the file to its path, and frees w;
 * *rows (may be NULL) gets the number of rows. On failure nothing is left at path but
 * what was there before, and w is freed too. */
int nx_pqw_close(struct nx_pqw *w, uint64_t *rows, struct nx_err *err);
/* Gives the file up (NULL: nothing): removes the temporary file and frees w. */
void nx_pqw_abort(struct nx_pqw *w);

struct nx_row_source;
struct nx_duck_ahead;
/* A row source (db/duck.h) written whole to path by this writer, with no database,
 * as nx_duck_copy_source would write it with DuckDB's: for a table whose rows are only
 * written (source_write.c). */
int nx_pqw_write_source(struct nx_row_source *src, const char *path, uint64_t *rows,
			struct nx_err *err);
/* Likewise for a source run ahead on its thread (nx_duck_ahead_start, which a is
 * stopped and freed by, whichever way this ends), as nx_duck_copy_ahead would write it. */
int nx_pqw_write_ahead(struct nx_duck_ahead *a, const char *path, unsigned long row_group,
		       uint64_t *rows, struct nx_err *err);

/* Likewise, into parts dir/<T>_0.parquet, <T>_1.parquet, ... of part_rows rows each
 * (the last may hold fewer; no rows: no part), in row groups of row_group rows, as
 * nx_duck_copy_source_parts writes them with DuckDB's COPY: *nparts gets their number.
 * a is stopped and freed whichever way this ends; on failure the part being written is
 * given up (those done before stay: the caller writes into a directory of its own). */
int nx_pqw_write_parts(struct nx_duck_ahead *a, const char *dir, uint64_t part_rows,
		       unsigned long row_group, uint64_t *rows, size_t *nparts,
		       struct nx_err *err);

#endif
