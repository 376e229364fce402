/* SPDX-License-Identifier: MIT
 * parquet_read.h: some columns of a table's parquet files read row group by row group,
 * in C, without DuckDB.
 *
 * Why: DuckDB's reader holds a file's whole footer as objects of about 1 KB per column
 * chunk for as long as it reads it: 110 MB for the 70M-row Instruction table of a
 * 100M-record trace, before any row. `recommend` reads that table once, in a pass of
 * its own (analysis/scan.h); this reader keeps one row group of the asked columns.
 *
 * What it reads: flat columns (optional or required, no lists) of the physical types
 * BOOLEAN, INT32, INT64, FLOAT, DOUBLE and BYTE_ARRAY, in data pages v1 or v2, PLAIN or
 * dictionary-encoded (PLAIN_DICTIONARY, RLE_DICTIONARY), uncompressed, zstd, snappy or
 * gzip: what DuckDB's writer and ours (db/parquet_write.h) write, and pyarrow's by
 * default. Anything else (another
 * encoding or codec, a nested column, an encrypted file) is refused with NX_EVERSION,
 * so a caller can read the file another way; malformed bytes are refused with an error
 * naming the file and the byte. A column the files lack reads as NULL. Memory: the
 * footer while it is scanned at open (then about 40 bytes per row group and column),
 * and one row group of the asked columns, compressed and decoded (two with
 * nx_pqr_two_sets). */
#ifndef NX_DB_PARQUET_READ_H
#define NX_DB_PARQUET_READ_H

#include "common/compat.h"
#include "common/err.h"

#define NX_PQR_MAX_COLS 32

enum nx_pqr_kind { NX_PQR_NULL, NX_PQR_I64, NX_PQR_F64, NX_PQR_STR, NX_PQR_BOOL };

/* One column of a batch: kind I64 for INT32 and INT64, F64 for FLOAT and DOUBLE, STR for
 * BYTE_ARRAY, BOOL (values in i64, 0 or 1) for BOOLEAN, NULL when the file lacks it.
 * valid[r] is 1 for a value, 0 for a NULL row. valid is NULL exactly when every row of
 * the batch holds a value (a REQUIRED column, or an optional one none of whose rows in
 * the row group is NULL, as its pages' definition levels tell): a caller then skips the
 * valid bytes. A column the file lacks (kind NULL) has valid bytes, all 0. Strings are
 * not NUL-terminated; everything is valid until the next nx_pqr_next. */
struct nx_pqr_col {
	enum nx_pqr_kind kind;
	const uint8_t *valid;
	const int64_t *i64;
	const double *f64;
	const char *const *str;
	const uint32_t *len;
	/* A STR column whose chunk in the row group is dictionary-encoded throughout:
	 * idx[r] is row r's index into its ndict distinct values (0 for a NULL row), str[r]
	 * is dict_str[idx[r]] (the same bytes) and len[r] dict_len[idx[r]], so a caller may
	 * work once per distinct value. idx is NULL otherwise (PLAIN pages, another kind,
	 * a column the file lacks). */
	const uint32_t *idx;
	const char *const *dict_str;
	const uint32_t *dict_len;
	size_t ndict;
};

struct nx_pqr_batch {
	size_t rows, ncols;
	struct nx_pqr_col col[NX_PQR_MAX_COLS];
};

struct nx_pqr;

/* Opens files[0..nfiles) (one table's files, read in that order) for the columns
 * named cols[0..ncols). Every file is opened and its footer checked here: the kind of
 * each column must be the same in all (NX_EMISMATCH otherwise). */
int nx_pqr_open(struct nx_pqr **out, const char *const *files, size_t nfiles,
		const char *const *cols, size_t ncols, struct nx_err *err);
/* The kind of column k (NX_PQR_NULL when no file has it). */
enum nx_pqr_kind nx_pqr_kind(const struct nx_pqr *r, size_t k);
/* What the footers' statistics say of integer columns, no row read: their least and
 * greatest value (set false when no row holds one). */
struct nx_pqr_range {
	bool set;
	int64_t lo, hi;
};
/* The files' rows into *rows and each column's range into out[0..ncols), from the row
 * groups' statistics (exact min_value and max_value, null_count). NX_ENOTFOUND, naming
 * the file and row group, when they do not tell: a column that is not INT32 or INT64 or
 * that a file lacks, a row group that may hold values and lacks them (the rows must then
 * be read). */
int nx_pqr_ranges(const struct nx_pqr *r, int64_t *rows, struct nx_pqr_range *out,
		  struct nx_err *err);
/* The row groups of all the files, numbered in read order from 0. */
size_t nx_pqr_groups(const struct nx_pqr *r);
/* What row group g's statistics say of integer column k, as nx_pqr_ranges (set false
 * when none of its rows holds a value): NX_ENOTFOUND, naming the file and row group,
 * when they do not tell. */
int nx_pqr_group_range(const struct nx_pqr *r, size_t g, size_t k, struct nx_pqr_range *out,
		       struct nx_err *err);
/* Row group g is the next nx_pqr_next reads (past the last: none). */
void nx_pqr_seek(struct nx_pqr *r, size_t g);
/* The next row group's rows into *b (NULL after the last). */
int nx_pqr_next(struct nx_pqr *r, const struct nx_pqr_batch **b, struct nx_err *err);
/* Before the first nx_pqr_next: batches alternate between two sets of buffers, so a
 * batch stays valid until the second nx_pqr_next after the one that returned it (a
 * caller may decode the next row group on one thread while another reads this one; the
 * reader itself is for one thread at a time). Memory: two row groups, not one. */
void nx_pqr_two_sets(struct nx_pqr *r);
void nx_pqr_close(struct nx_pqr *r);

#endif
