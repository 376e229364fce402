/* SPDX-License-Identifier: MIT
 * parquet_footer.h: what joining parts into one parquet file (db/parquet_concat.c) and
 * cutting a file into slices (db/parquet_slice.c) share: opening a file and checking its
 * frame, copying its bytes, and its footer's row groups re-written for bytes that moved
 * (read from a Thrift compact cursor, written with every file offset moved by the same
 * amount; offsets must lie in the moved range). Field numbers are those of
 * parquet.thrift. No DuckDB here. */
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

/* An open parquet file: "PAR1", data [4, data_end), footer, length, "PAR1". */
struct nx_pq_file {
	const char *path;
	int fd; /* -1 when not open */
	uint64_t size, data_end;
	uint32_t footer_len;
};

/* Opens path and checks its two magics and its footer length; the caller closes f->fd
 * when it is not -1, whatever the result. */
int nx_pq_open(struct nx_pq_file *f, const char *path, struct nx_err *err);
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

/* Reads one RowGroup struct: its row count and the bytes its column chunks take in the
 * file, [*lo, *hi). */
int nx_pq_row_group_span(struct nx_tc_in *in, int64_t *rows, uint64_t *lo, uint64_t *hi,
			 struct nx_err *err);

#endif
