/* SPDX-License-Identifier: MIT
 * thrift_compact.c: Thrift compact protocol reading, skipping, copying and writing
 * (see thrift_compact.h). Values are checked against the buffer's end before they are
 * read; a count that could not fit in the bytes left is refused before any loop. */
#include "common/compat.h"
#include "db/thrift_compact.h"

#include <inttypes.h>
#include <string.h>

#define TC_MAX_DEPTH 64

void nx_tc_in_init(struct nx_tc_in *in, const void *buf, size_t len, const char *file,
		   uint64_t base)
{
	in->buf = in->p = buf;
	in->end = len ? in->buf + len : in->buf; /* buf may be NULL when len is 0 */
	in->file = file;
	in->base = base;
	in->depth = 0;
	in->more = false;
}

uint64_t nx_tc_offset(const struct nx_tc_in *in)
{
	return in->base + (uint64_t)(in->p - in->buf);
}

static int bad(struct nx_tc_in *in, int code, const char *what, struct nx_err *err)
{
	return nx_errf(err, code, "'%s': parquet footer at byte %" PRIu64 ": %s", in->file,
		       nx_tc_offset(in), what);
}

static size_t left(const struct nx_tc_in *in)
{
	return (size_t)(in->end - in->p);
}

int nx_tc_read_varint(struct nx_tc_in *in, uint64_t *v, struct nx_err *err)
{
	uint64_t x = 0;

	for (int shift = 0; shift < 64; shift += 7) {
		if (in->p == in->end)
			return bad(in, NX_ETRUNC, "ends inside a varint", err);
		uint8_t b = *in->p++;
		x |= (uint64_t)(b & 0x7f) << shift;
		if (!(b & 0x80)) {
			*v = x;
			return 0;
		}
	}
	return bad(in, NX_ECORRUPT, "varint longer than 10 bytes", err);
}

int nx_tc_read_zigzag(struct nx_tc_in *in, int64_t *v, struct nx_err *err)
{
	uint64_t u;
	int rc = nx_tc_read_varint(in, &u, err);

	if (!rc)
		*v = (int64_t)(u >> 1) ^ -(int64_t)(u & 1);
	return rc;
}

int nx_tc_read_field(struct nx_tc_in *in, int16_t last_id, int *type, int16_t *id,
		     struct nx_err *err)
{
	if (in->p == in->end)
		return bad(in, NX_ETRUNC, "ends inside a struct", err);
	uint8_t b = *in->p++;
	*type = b & 0x0f;
	if (*type == NX_TC_STOP) {
		*id = 0;
		return 0;
	}
	if (*type > NX_TC_STRUCT)
		return bad(in, NX_ECORRUPT, "unknown field type", err);
	if (b >> 4) {
		*id = (int16_t)(last_id + (b >> 4));
		return 0;
	}
	int64_t v;
	int rc = nx_tc_read_zigzag(in, &v, err);
	if (rc)
		return rc;
	if (v < INT16_MIN || v > INT16_MAX)
		return bad(in, NX_ECORRUPT, "field id out of range", err);
	*id = (int16_t)v;
	return 0;
}

int nx_tc_read_list(struct nx_tc_in *in, uint32_t *n, int *elem, struct nx_err *err)
{
	if (in->p == in->end)
		return bad(in, NX_ETRUNC, "ends inside a list header", err);
	uint8_t b = *in->p++;
	uint64_t size = b >> 4;

	*elem = b & 0x0f;
	if (size == 15) {
		int rc = nx_tc_read_varint(in, &size, err);
		if (rc)
			return rc;
	}
	if (*elem < NX_TC_TRUE || *elem > NX_TC_STRUCT)
		return bad(in, NX_ECORRUPT, "unknown list element type", err);
	/* every element takes at least one byte */
	if (size > left(in))
		return bad(in, in->more ? NX_ETRUNC : NX_ECORRUPT, "list longer than the footer",
			   err);
	*n = (uint32_t)size;
	return 0;
}

/* Reads (skip) or copies (out != NULL) one value; the one walker behind both. */
static int walk(struct nx_tc_in *in, int type, struct nx_strbuf *out, struct nx_err *err);

static int walk_bytes(struct nx_tc_in *in, size_t n, struct nx_strbuf *out,
		      struct nx_err *err)
{
	if (n > left(in))
		return bad(in, NX_ETRUNC, "ends inside a value", err);
	if (out)
		nx_strbuf_add(out, in->p, n);
	in->p += n;
	return 0;
}

static int walk_varint(struct nx_tc_in *in, struct nx_strbuf *out, struct nx_err *err)
{
	uint64_t v;
	int rc = nx_tc_read_varint(in, &v, err);

	if (!rc && out)
		nx_tc_write_varint(out, v);
	return rc;
}

static int walk_struct(struct nx_tc_in *in, struct nx_strbuf *out, struct nx_err *err)
{
	int16_t last = 0, id;
	int type, rc;

	for (;;) {
		if ((rc = nx_tc_read_field(in, last, &type, &id, err)))
			return rc;
		if (out && type == NX_TC_STOP) {
			nx_strbuf_addch(out, 0);
			return 0;
		}
		if (type == NX_TC_STOP)
			return 0;
		if (out)
			nx_tc_write_field(out, last, type, id);
		/* a bool field's value is its header's type */
		if (type != NX_TC_TRUE && type != NX_TC_FALSE && (rc = walk(in, type, out, err)))
			return rc;
		last = id;
	}
}

static int walk_list(struct nx_tc_in *in, struct nx_strbuf *out, struct nx_err *err)
{
	uint32_t n;
	int elem, rc = nx_tc_read_list(in, &n, &elem, err);

	if (rc)
		return rc;
	if (out)
		nx_tc_write_list(out, n, elem);
	for (uint32_t i = 0; i < n; i++) {
		/* bools inside a list take a byte each */
		if (elem == NX_TC_TRUE || elem == NX_TC_FALSE)
			rc = walk_bytes(in, 1, out, err);
		else
			rc = walk(in, elem, out, err);
		if (rc)
			return rc;
	}
	return 0;
}

static int walk_map(struct nx_tc_in *in, struct nx_strbuf *out, struct nx_err *err)
{
	uint64_t n;
	int rc = nx_tc_read_varint(in, &n, err);

	if (rc)
		return rc;
	if (out)
		nx_tc_write_varint(out, n);
	if (n == 0)
		return 0;
	if (n > left(in) / 2)
		return bad(in, in->more ? NX_ETRUNC : NX_ECORRUPT, "map longer than the footer",
			   err);
	if (in->p == in->end)
		return bad(in, NX_ETRUNC, "ends inside a map header", err);
	uint8_t kv = *in->p++;
	int kt = kv >> 4, vt = kv & 0x0f;
	if (kt < NX_TC_TRUE || kt > NX_TC_STRUCT || vt < NX_TC_TRUE || vt > NX_TC_STRUCT)
		return bad(in, NX_ECORRUPT, "unknown map element type", err);
	if (out)
		nx_strbuf_addch(out, (char)kv);
	for (uint64_t i = 0; i < n; i++) {
		int k = kt == NX_TC_TRUE || kt == NX_TC_FALSE ? walk_bytes(in, 1, out, err)
							      : walk(in, kt, out, err);
		if (k || (k = vt == NX_TC_TRUE || vt == NX_TC_FALSE ? walk_bytes(in, 1, out, err)
								    : walk(in, vt, out, err)))
			return k;
	}
	return 0;
}

static int walk(struct nx_tc_in *in, int type, struct nx_strbuf *out, struct nx_err *err)
{
	uint64_t n;
	int rc;

	switch (type) {
	case NX_TC_TRUE:
	case NX_TC_FALSE:
	case NX_TC_BYTE:
		return walk_bytes(in, 1, out, err);
	case NX_TC_I16:
	case NX_TC_I32:
	case NX_TC_I64:
		return walk_varint(in, out, err);
	case NX_TC_DOUBLE:
		return walk_bytes(in, 8, out, err);
	case NX_TC_BINARY:
		if ((rc = nx_tc_read_varint(in, &n, err)))
			return rc;
		if (n > left(in))
			return bad(in, NX_ETRUNC, "string longer than the footer", err);
		if (out)
			nx_tc_write_varint(out, n);
		return walk_bytes(in, (size_t)n, out, err);
	case NX_TC_LIST:
	case NX_TC_SET:
	case NX_TC_MAP:
	case NX_TC_STRUCT:
		if (++in->depth > TC_MAX_DEPTH)
			return bad(in, NX_ECORRUPT, "nested more than 64 deep", err);
		rc = type == NX_TC_STRUCT ? walk_struct(in, out, err)
		     : type == NX_TC_MAP  ? walk_map(in, out, err)
					  : walk_list(in, out, err);
		in->depth--;
		return rc;
	default:
		return bad(in, NX_ECORRUPT, "unknown value type", err);
	}
}

int nx_tc_skip(struct nx_tc_in *in, int type, struct nx_err *err)
{
	return walk(in, type, NULL, err);
}

int nx_tc_copy(struct nx_tc_in *in, int type, struct nx_strbuf *out, struct nx_err *err)
{
	return walk(in, type, out, err);
}

void nx_tc_write_varint(struct nx_strbuf *out, uint64_t v)
{
	while (v >= 0x80) {
		nx_strbuf_addch(out, (char)(0x80 | (v & 0x7f)));
		v >>= 7;
	}
	nx_strbuf_addch(out, (char)v);
}

void nx_tc_write_zigzag(struct nx_strbuf *out, int64_t v)
{
	nx_tc_write_varint(out, ((uint64_t)v << 1) ^ (uint64_t)(v >> 63));
}

void nx_tc_write_field(struct nx_strbuf *out, int16_t last_id, int type, int16_t id)
{
	int delta = id - last_id;

	if (delta > 0 && delta <= 15) {
		nx_strbuf_addch(out, (char)(delta << 4 | type));
	} else {
		nx_strbuf_addch(out, (char)type);
		nx_tc_write_zigzag(out, id);
	}
}

void nx_tc_write_list(struct nx_strbuf *out, uint32_t n, int elem)
{
	if (n < 15) {
		nx_strbuf_addch(out, (char)(n << 4 | elem));
	} else {
		nx_strbuf_addch(out, (char)(0xf0 | elem));
		nx_tc_write_varint(out, n);
	}
}
