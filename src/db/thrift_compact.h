/* SPDX-License-Identifier: MIT
 * thrift_compact.h: reading and re-writing Thrift's compact protocol, the encoding of a
 * parquet file's footer. Just what db/parquet_concat.c needs: field and list headers,
 * zigzag varints, and copying or skipping any value whole. Input is a bounded buffer;
 * every read checks its bounds and nesting depth and fails with an error that names the
 * file and the byte offset. No DuckDB here. */
#ifndef NX_DB_THRIFT_COMPACT_H
#define NX_DB_THRIFT_COMPACT_H

#include "common/compat.h"
#include "common/err.h"
#include "common/strbuf.h"

/* Compact-protocol type codes as they appear in field and list headers. */
enum nx_tc_type {
	NX_TC_STOP = 0,
	NX_TC_TRUE = 1, /* a bool field's value lives in its header */
	NX_TC_FALSE = 2,
	NX_TC_BYTE = 3,
	NX_TC_I16 = 4,
	NX_TC_I32 = 5,
	NX_TC_I64 = 6,
	NX_TC_DOUBLE = 7,
	NX_TC_BINARY = 8,
	NX_TC_LIST = 9,
	NX_TC_SET = 10,
	NX_TC_MAP = 11,
	NX_TC_STRUCT = 12,
};

/* A cursor over encoded bytes: p moves from the start of buf to end. file and base
 * (the file offset of buf[0]) only serve error messages. */
struct nx_tc_in {
	const uint8_t *buf, *p, *end;
	const char *file;
	uint64_t base;
	int depth;
	/* the buffer is a window on a longer footer: a list or map whose count exceeds the
	 * bytes left in it runs past the window (NX_ETRUNC, read on), not past the footer */
	bool more;
};

void nx_tc_in_init(struct nx_tc_in *in, const void *buf, size_t len, const char *file,
		   uint64_t base);
/* The file offset of the cursor. */
uint64_t nx_tc_offset(const struct nx_tc_in *in);

int nx_tc_read_varint(struct nx_tc_in *in, uint64_t *v, struct nx_err *err);
int nx_tc_read_zigzag(struct nx_tc_in *in, int64_t *v, struct nx_err *err);
/* A field header: *type NX_TC_STOP ends the struct; *id is absolute (last_id is the
 * previous field's id, 0 at a struct's start). */
int nx_tc_read_field(struct nx_tc_in *in, int16_t last_id, int *type, int16_t *id,
		     struct nx_err *err);
/* A list or set header. */
int nx_tc_read_list(struct nx_tc_in *in, uint32_t *n, int *elem, struct nx_err *err);
/* Skips one value of the given type (struct, list, ... whole). */
int nx_tc_skip(struct nx_tc_in *in, int type, struct nx_err *err);
/* Copies one value of the given type to out, unchanged. */
int nx_tc_copy(struct nx_tc_in *in, int type, struct nx_strbuf *out, struct nx_err *err);

void nx_tc_write_varint(struct nx_strbuf *out, uint64_t v);
void nx_tc_write_zigzag(struct nx_strbuf *out, int64_t v);
void nx_tc_write_field(struct nx_strbuf *out, int16_t last_id, int type, int16_t id);
void nx_tc_write_list(struct nx_strbuf *out, uint32_t n, int elem);

#endif
