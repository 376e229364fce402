/* SPDX-License-Identifier: MIT
 * parquet_footer.h: what the code that handles our parquet files at the level of their
 * footers shares: joining parts one after the other (db/parquet_concat.c) or side by
 * side (db/parquet_zip.c), cutting a file into slices (db/parquet_slice.c) and reading
 * columns (db/parquet_read.c). A file is opened and its frame checked, its footer read
 * and scanned (rows, row groups, where the fields a joined footer copies lie), its bytes
 * copied, and its row groups or column chunks re-written for bytes that moved (read from
 * a Thrift compact cursor, written with every file offset moved by the same amount;
 * offsets must lie in the moved range). Field numbers are those of parquet.thrift. No
 * DuckDB here. */
#ifndef NX_DB_PARQUET_FOOTER_H
#define NX_DB_PARQUET_FOOTER_H

#include "common/compat.h"
#include "common/err.h"
#include "common/strbuf.h"
#include "db/thrift_compact.h"

#define NX_PQ_MAGIC "PAR1"
/* A footer larger than this is refused as corrupt: DuckDB's for a 2M-row part of the
 * widest table is well under 4 MB, for 70M rows in one file about 35 MB. */
#define NX_PQ_MAX_FOOTER (256u << 20)

/* An open parquet file: "PAR1", data [4, data_end), footer, length, "PAR1". rows and
 * row_groups are set by nx_pq_scan. */
struct nx_pq_file {
	const char *path;
	int fd; /* -1 when not open */
	uint64_t size, data_end;
	uint32_t footer_len;
	int64_t rows;
	uint32_t row_groups;
};

/* Where a scanned FileMetaData's fields lie in its footer (byte ranges, end == start
 * when absent): the schema list, key-value metadata, created_by and column orders. */
struct nx_pq_head {
	uint8_t *footer; /* owned by whoever keeps it (nx_pq_scan does not set it) */
	int64_t version;
	size_t schema[2], kv[2], created_by[2], orders[2];
};

/* Opens path and checks its two magics and its footer length; the caller closes f->fd
 * when it is not -1 (nx_pq_close), whatever the result. */
int nx_pq_open(struct nx_pq_file *f, const char *path, struct nx_err *err);
void nx_pq_close(struct nx_pq_file *f);
/* The rows f's footer declares (FileMetaData's num_rows), read from the footer's start
 * up to that field: its schema, not its row groups (64 KiB for a footer of 11 MB). */
int nx_pq_num_rows(const struct nx_pq_file *f, int64_t *rows, struct nx_err *err);
/* Reads f's footer, whole, into *out (the caller frees it). */
int nx_pq_read_footer(const struct nx_pq_file *f, uint8_t **out, struct nx_err *err);
/* Checks a FileMetaData and sets f->rows, f->row_groups and h's ranges (h->footer is
 * left NULL). Fields this code does not know (encryption) are refused. */
int nx_pq_scan(struct nx_pq_file *f, const uint8_t *footer, struct nx_pq_head *h,
	       struct nx_err *err);
/* Positions a cursor over a footer that nx_pq_scan accepted at its first row group. */
int nx_pq_seek_row_groups(struct nx_tc_in *in, struct nx_err *err);
/* Appends a joined FileMetaData's last fields, h's key-value metadata (5), created_by
 * (6) and column orders (7, or the list in orders when not NULL: an encoded list header
 * and its items), then the struct's end. */
void nx_pq_put_last_fields(struct nx_strbuf *b, const struct nx_pq_head *h,
			   const struct nx_strbuf *orders);
/* An error naming the file and the byte. */
int nx_pq_err(const struct nx_pq_file *f, int code, uint64_t at, const char *what,
	      struct nx_err *err);
/* Reads exactly len bytes at off (a short file is NX_ETRUNC). */
int nx_pq_read_at(const struct nx_pq_file *f, void *buf, size_t len, uint64_t off,
		  struct nx_err *err);
/* Appends bytes [off, off + len) of f to fd (named out), in the kernel when it can. */
int nx_pq_copy_out(const struct nx_pq_file *f, uint64_t off, uint64_t len, int fd,
		   const char *out, struct nx_err *err);
int nx_pq_write_all(int fd, const char *path, const void *buf, size_t len, struct nx_err *err);
/* Writes a footer's length and the closing magic. */
int nx_pq_write_tail(int fd, const char *path, uint64_t footer_len, struct nx_err *err);

/* How a row group's offsets move: those in [lo, hi] by delta (0 stays 0: "unset"); an
 * offset outside is an error naming file. With drop_indexes, the page indexes' and bloom
 * filters' offsets and lengths are left out (they lie outside a slice's bytes). */
struct nx_pq_move {
	const char *file;
	uint64_t lo, hi;
	int64_t delta;
	bool drop_indexes;
};

/* Checks a field's type (the file and the cursor's byte in the message). */
int nx_pq_want(struct nx_tc_in *in, int type, int expected, int16_t id, struct nx_err *err);

/* Copies one RowGroup struct from in to out with its offsets moved, its columns'
 * too, and its ordinal set to `ordinal` (left out past the i16 range: it is optional). A
 * column chunk in another file or encrypted is refused (NX_EVERSION). */
int nx_pq_copy_row_group(struct nx_tc_in *in, const struct nx_pq_move *m, uint64_t ordinal,
			 struct nx_strbuf *out, struct nx_err *err);

/* Copies one ColumnChunk struct from in to out with its offsets moved (as
 * nx_pq_copy_row_group does for each of a row group's chunks). */
int nx_pq_copy_chunk(struct nx_tc_in *in, const struct nx_pq_move *m, struct nx_strbuf *out,
		     struct nx_err *err);

/* Reads one RowGroup struct: its row count and the bytes its column chunks take in the
 * file, [*lo, *hi). */
int nx_pq_row_group_span(struct nx_tc_in *in, int64_t *rows, uint64_t *lo, uint64_t *hi,
			 struct nx_err *err);

#endif
