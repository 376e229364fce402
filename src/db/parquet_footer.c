/* SPDX-License-Identifier: MIT
 * parquet_footer.c: parquet files opened and their footers read and scanned, row groups
 * and column chunks re-written for moved bytes, and their byte spans (see
 * parquet_footer.h). Field numbers are those of parquet.thrift. */
#include "common/compat.h"
#include "db/parquet_footer.h"
#include "common/le.h"
#include "common/xalloc.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int nx_pq_err(const struct nx_pq_file *f, int code, uint64_t at, const char *what,
	      struct nx_err *err)
{
	return nx_errf(err, code, "'%s': parquet at byte %" PRIu64 ": %s", f->path, at, what);
}

int nx_pq_read_at(const struct nx_pq_file *f, void *buf, size_t len, uint64_t off,
		  struct nx_err *err)
{
	size_t got = 0;

	while (got < len) {
		ssize_t n = pread(f->fd, (char *)buf + got, len - got, (off_t)(off + got));
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return nx_errf(err, -errno, "cannot read '%s': %s", f->path, strerror(errno));
		if (n == 0)
			return nx_pq_err(f, NX_ETRUNC, off + got, "file ends early", err);
		got += (size_t)n;
	}
	return 0;
}

int nx_pq_open(struct nx_pq_file *f, const char *path, struct nx_err *err)
{
	struct stat st;
	uint8_t head[4], tail[8];
	int rc;

	memset(f, 0, sizeof(*f));
	f->path = path;
	f->fd = open(path, O_RDONLY | O_CLOEXEC);
	if (f->fd < 0)
		return nx_errf(err, -errno, "cannot open '%s': %s", path, strerror(errno));
	if (fstat(f->fd, &st))
		return nx_errf(err, -errno, "cannot stat '%s': %s", path, strerror(errno));
	f->size = (uint64_t)st.st_size;
	if (f->size < 12)
		return nx_pq_err(f, NX_ETRUNC, f->size, "too short for a parquet file", err);
	if ((rc = nx_pq_read_at(f, head, 4, 0, err)) ||
	    (rc = nx_pq_read_at(f, tail, 8, f->size - 8, err)))
		return rc;
	if (memcmp(head, NX_PQ_MAGIC, 4))
		return nx_pq_err(f, NX_ECORRUPT, 0, "no PAR1 magic at the start", err);
	if (!memcmp(tail + 4, "PARE", 4))
		return nx_pq_err(f, NX_EVERSION, f->size - 4, "encrypted footers are not supported",
				 err);
	if (memcmp(tail + 4, NX_PQ_MAGIC, 4))
		return nx_pq_err(f, NX_ECORRUPT, f->size - 4, "no PAR1 magic at the end", err);
	f->footer_len = nx_get_le32(tail);
	if (f->footer_len > NX_PQ_MAX_FOOTER || f->footer_len > f->size - 12)
		return nx_pq_err(f, NX_ECORRUPT, f->size - 8, "footer length past the file's start",
				 err);
	f->data_end = f->size - 8 - f->footer_len;
	return 0;
}

void nx_pq_close(struct nx_pq_file *f)
{
	if (f->fd >= 0)
		close(f->fd);
	f->fd = -1;
}

/* The fields before num_rows (1 version, 2 schema) from the footer's first len bytes:
 * NX_ETRUNC when they run past them. */
static int rows_in(const struct nx_pq_file *f, const uint8_t *buf, size_t len, int64_t *rows,
		   struct nx_err *err)
{
	struct nx_tc_in in;
	int16_t last = 0, id;
	int type, rc;

	nx_tc_in_init(&in, buf, len, f->path, f->data_end);
	in.more = len < f->footer_len;
	for (;;) {
		if ((rc = nx_tc_read_field(&in, last, &type, &id, err)))
			return rc;
		if (type == NX_TC_STOP || id > 3)
			return nx_pq_err(f, NX_ECORRUPT, nx_tc_offset(&in), "footer without its "
					 "rows (num_rows)", err);
		if (id == 3) {
			if ((rc = nx_pq_want(&in, type, NX_TC_I64, id, err)) ||
			    (rc = nx_tc_read_zigzag(&in, rows, err)))
				return rc;
			return *rows < 0 ? nx_pq_err(f, NX_ECORRUPT, nx_tc_offset(&in),
						     "negative num_rows", err) : 0;
		}
		if ((rc = nx_tc_skip(&in, type, err)))
			return rc;
		last = id;
	}
}

int nx_pq_num_rows(const struct nx_pq_file *f, int64_t *rows, struct nx_err *err)
{
	size_t len = f->footer_len < (64u << 10) ? f->footer_len : (64u << 10);
	uint8_t *buf = NULL;
	int rc;

	for (;;) {
		buf = nx_xrealloc(buf, len ? len : 1);
		rc = nx_pq_read_at(f, buf, len, f->data_end, err);
		if (!rc)
			rc = rows_in(f, buf, len, rows, err);
		if (rc != NX_ETRUNC || len >= f->footer_len)
			break;
		len = len * 2 < f->footer_len ? len * 2 : f->footer_len;
	}
	free(buf);
	return rc;
}

int nx_pq_read_footer(const struct nx_pq_file *f, uint8_t **out, struct nx_err *err)
{
	uint8_t *buf = nx_xmalloc(f->footer_len ? f->footer_len : 1);
	int rc = nx_pq_read_at(f, buf, f->footer_len, f->data_end, err);

	if (rc)
		free(buf);
	else
		*out = buf;
	return rc;
}

static void mark(const struct nx_tc_in *in, size_t range[2], const uint8_t *start)
{
	range[0] = (size_t)(start - in->buf);
	range[1] = (size_t)(in->p - in->buf);
}

/* One top-level FileMetaData field of nx_pq_scan: its value checked and read, or its
 * range marked; *seen gets bit 0 for the rows, bit 1 for the row groups. */
static int scan_field(struct nx_tc_in *in, int type, int16_t id, struct nx_pq_file *f,
		      struct nx_pq_head *h, unsigned *seen, struct nx_err *err)
{
	const uint8_t *start = in->p;
	int elem, rc;

	switch (id) {
	case 1:
		if ((rc = nx_pq_want(in, type, NX_TC_I32, id, err)))
			return rc;
		return nx_tc_read_zigzag(in, &h->version, err);
	case 2:
	case 5:
	case 7:
		if ((rc = nx_pq_want(in, type, NX_TC_LIST, id, err)) ||
		    (rc = nx_tc_skip(in, type, err)))
			return rc;
		mark(in, id == 2 ? h->schema : id == 5 ? h->kv : h->orders, start);
		return 0;
	case 3:
		*seen |= 1;
		if ((rc = nx_pq_want(in, type, NX_TC_I64, id, err)))
			return rc;
		return nx_tc_read_zigzag(in, &f->rows, err);
	case 4:
		*seen |= 2;
		if ((rc = nx_pq_want(in, type, NX_TC_LIST, id, err)) ||
		    (rc = nx_tc_read_list(in, &f->row_groups, &elem, err)) ||
		    (rc = nx_pq_want(in, elem, NX_TC_STRUCT, id, err)))
			return rc;
		for (uint32_t i = 0; !rc && i < f->row_groups; i++)
			rc = nx_tc_skip(in, NX_TC_STRUCT, err);
		return rc;
	case 6:
		if ((rc = nx_pq_want(in, type, NX_TC_BINARY, id, err)) ||
		    (rc = nx_tc_skip(in, type, err)))
			return rc;
		mark(in, h->created_by, start);
		return 0;
	default:
		return nx_pq_err(f, NX_EVERSION, nx_tc_offset(in),
				 "unknown FileMetaData field (an encrypted file?)", err);
	}
}

int nx_pq_scan(struct nx_pq_file *f, const uint8_t *footer, struct nx_pq_head *h,
	       struct nx_err *err)
{
	struct nx_tc_in in;
	int16_t last = 0, id;
	unsigned seen = 0;
	int type, rc;

	nx_tc_in_init(&in, footer, f->footer_len, f->path, f->data_end);
	memset(h, 0, sizeof(*h));
	f->rows = 0;
	f->row_groups = 0;
	for (;;) {
		if ((rc = nx_tc_read_field(&in, last, &type, &id, err)))
			return rc;
		if (type == NX_TC_STOP)
			break;
		if ((rc = scan_field(&in, type, id, f, h, &seen, err)))
			return rc;
		last = id;
	}
	if (in.p != in.end)
		return nx_pq_err(f, NX_ECORRUPT, nx_tc_offset(&in), "bytes after the footer's end",
				 err);
	if (seen != 3 || h->schema[1] == h->schema[0])
		return nx_pq_err(f, NX_ECORRUPT, f->data_end,
				 "footer lacks schema, rows or row groups", err);
	if (f->rows < 0)
		return nx_pq_err(f, NX_ECORRUPT, f->data_end, "negative row count", err);
	return 0;
}

int nx_pq_seek_row_groups(struct nx_tc_in *in, struct nx_err *err)
{
	int16_t last = 0, id;
	int type, elem, rc;
	uint32_t n;

	for (;;) {
		if ((rc = nx_tc_read_field(in, last, &type, &id, err)))
			return rc;
		if (id == 4 && type == NX_TC_LIST)
			return nx_tc_read_list(in, &n, &elem, err);
		if (type == NX_TC_STOP)
			return nx_errf(err, NX_ECORRUPT, "'%s': footer changed while joining",
				       in->file);
		if ((rc = nx_tc_skip(in, type, err)))
			return rc;
		last = id;
	}
}

void nx_pq_put_last_fields(struct nx_strbuf *b, const struct nx_pq_head *h,
			   const struct nx_strbuf *orders)
{
	const size_t *range[] = { h->kv, h->created_by, h->orders };
	const int types[] = { NX_TC_LIST, NX_TC_BINARY, NX_TC_LIST };
	int16_t last = 4;

	for (int f = 0; f < 3; f++) {
		bool mine = f == 2 && orders;
		if (!mine && range[f][1] == range[f][0])
			continue;
		nx_tc_write_field(b, last, types[f], (int16_t)(5 + f));
		if (mine)
			nx_strbuf_add(b, orders->buf, orders->len);
		else
			nx_strbuf_add(b, h->footer + range[f][0], range[f][1] - range[f][0]);
		last = (int16_t)(5 + f);
	}
	nx_strbuf_addch(b, NX_TC_STOP);
}

int nx_pq_write_all(int fd, const char *path, const void *buf, size_t len, struct nx_err *err)
{
	while (len) {
		ssize_t n = write(fd, buf, len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return nx_errf(err, -errno, "cannot write '%s': %s", path, strerror(errno));
		buf = (const char *)buf + n;
		len -= (size_t)n;
	}
	return 0;
}

int nx_pq_copy_out(const struct nx_pq_file *f, uint64_t off, uint64_t len, int fd,
		   const char *out, struct nx_err *err)
{
	loff_t at = (loff_t)off;

	while (len) {
		ssize_t n = copy_file_range(f->fd, &at, fd, NULL, len, 0);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break; /* not supported here (or a short file): plain reads below */
		len -= (uint64_t)n;
	}
	if (!len)
		return 0;
	char *buf = nx_xmalloc(1 << 20);
	int rc = 0;
	while (!rc && len) {
		size_t chunk = len < (1u << 20) ? (size_t)len : 1u << 20;
		if (!(rc = nx_pq_read_at(f, buf, chunk, (uint64_t)at, err)))
			rc = nx_pq_write_all(fd, out, buf, chunk, err);
		at += (loff_t)chunk;
		len -= chunk;
	}
	free(buf);
	return rc;
}

int nx_pq_write_tail(int fd, const char *path, uint64_t footer_len, struct nx_err *err)
{
	uint8_t tail[8];

	nx_put_le32(tail, (uint32_t)footer_len);
	memcpy(tail + 4, NX_PQ_MAGIC, 4);
	if (footer_len > UINT32_MAX)
		return nx_errf(err, NX_EUSAGE, "'%s': footer over 4 GiB", path);
	return nx_pq_write_all(fd, path, tail, 8, err);
}

static int footer_err(const struct nx_tc_in *in, int code, const char *what,
		      struct nx_err *err)
{
	return nx_errf(err, code, "'%s': parquet at byte %" PRIu64 ": %s", in->file,
		       nx_tc_offset(in), what);
}

int nx_pq_want(struct nx_tc_in *in, int type, int expected, int16_t id, struct nx_err *err)
{
	if (type == expected)
		return 0;
	return nx_errf(err, NX_ECORRUPT, "'%s': parquet footer at byte %" PRIu64
		       ": field %d has type %d, not %d", in->file, nx_tc_offset(in), id, type,
		       expected);
}

/* An i64 file offset: must lie in the moved range (0 stays 0: "unset"). */
static int move_offset(struct nx_tc_in *in, int type, int16_t id, const struct nx_pq_move *m,
		       struct nx_strbuf *out, struct nx_err *err)
{
	int64_t v;
	int rc = nx_pq_want(in, type, NX_TC_I64, id, err);

	if (rc || (rc = nx_tc_read_zigzag(in, &v, err)))
		return rc;
	if (v != 0 && (v < 0 || (uint64_t)v < m->lo || (uint64_t)v > m->hi))
		return footer_err(in, NX_ECORRUPT, "file offset outside the data it belongs to",
				  err);
	nx_tc_write_zigzag(out, v ? v + m->delta : 0);
	return 0;
}

/* What copy_struct does with a struct's fields: the i64 file offsets to move, the fields
 * left out with drop_indexes, the fields that make the chunk unreadable here, and one
 * struct field copied by its own kind. */
struct kind {
	int16_t moves[4], dropped[4], refused[3];
	size_t nmoves, ndropped, nrefused;
	int16_t nested_id;
	const struct kind *nested; /* NULL: no struct field of its own kind */
};

/* ColumnMetaData: data_page_offset, index_page_offset, dictionary_page_offset and
 * bloom_filter_offset move; the bloom filter's offset and length can be dropped. */
static const struct kind column_meta = { .moves = { 9, 10, 11, 14 }, .nmoves = 4,
					 .dropped = { 14, 15 }, .ndropped = 2 };
/* ColumnChunk: file_offset, offset_index_offset and column_index_offset move (the page
 * indexes can be dropped); a chunk in another file (file_path) or encrypted is refused;
 * meta_data is a ColumnMetaData. */
static const struct kind column_chunk = { .moves = { 2, 4, 6 }, .nmoves = 3,
					  .dropped = { 4, 5, 6, 7 }, .ndropped = 4,
					  .refused = { 1, 8, 9 }, .nrefused = 3,
					  .nested_id = 3, .nested = &column_meta };

static bool listed(const int16_t *ids, size_t n, int16_t id)
{
	for (size_t i = 0; i < n; i++)
		if (ids[i] == id)
			return true;
	return false;
}

/* Called for each field of a struct; consumes the field's value. */
typedef int (*field_fn)(struct nx_tc_in *in, int type, int16_t id, void *arg,
			struct nx_err *err);

/* Walks the fields of the struct at in up to its end. */
static int each_field(struct nx_tc_in *in, field_fn fn, void *arg, struct nx_err *err)
{
	int16_t last = 0, id;
	int type, rc;

	for (;;) {
		if ((rc = nx_tc_read_field(in, last, &type, &id, err)))
			return rc;
		if (type == NX_TC_STOP)
			return 0;
		if ((rc = fn(in, type, id, arg, err)))
			return rc;
		last = id;
	}
}

/* A value copied or skipped whole (a bool's value lives in its field header). */
static int copy_value(struct nx_tc_in *in, int type, struct nx_strbuf *out, struct nx_err *err)
{
	if (type == NX_TC_TRUE || type == NX_TC_FALSE)
		return 0;
	return out ? nx_tc_copy(in, type, out, err) : nx_tc_skip(in, type, err);
}

/* A struct being copied: where its fields go and the last field id written there. */
struct copy {
	const struct nx_pq_move *m;
	const struct kind *k;
	struct nx_strbuf *out;
	int16_t written;
	uint64_t ordinal; /* RowGroup */
};

static int copy_struct(struct nx_tc_in *in, const struct nx_pq_move *m, const struct kind *k,
		       struct nx_strbuf *out, struct nx_err *err);

static int copy_field(struct nx_tc_in *in, int type, int16_t id, void *arg, struct nx_err *err)
{
	struct copy *c = arg;
	const struct kind *k = c->k;

	if (listed(k->refused, k->nrefused, id))
		return footer_err(in, NX_EVERSION, "a column chunk in another file or encrypted",
				  err);
	if (c->m->drop_indexes && listed(k->dropped, k->ndropped, id))
		return copy_value(in, type, NULL, err);
	nx_tc_write_field(c->out, c->written, type, id);
	c->written = id;
	if (listed(k->moves, k->nmoves, id))
		return move_offset(in, type, id, c->m, c->out, err);
	if (k->nested && id == k->nested_id) {
		int rc = nx_pq_want(in, type, NX_TC_STRUCT, id, err);
		return rc ? rc : copy_struct(in, c->m, k->nested, c->out, err);
	}
	return copy_value(in, type, c->out, err);
}

/* Copies a struct's fields through fn, then the stop byte that ends it. */
static int copy_fields(struct nx_tc_in *in, field_fn fn, struct copy *c, struct nx_err *err)
{
	int rc = each_field(in, fn, c, err);

	if (!rc)
		nx_strbuf_addch(c->out, 0);
	return rc;
}

static int copy_struct(struct nx_tc_in *in, const struct nx_pq_move *m, const struct kind *k,
		       struct nx_strbuf *out, struct nx_err *err)
{
	struct copy c = { .m = m, .k = k, .out = out };

	return copy_fields(in, copy_field, &c, err);
}

/* A struct list field's header, checked, and its length. */
static int struct_list(struct nx_tc_in *in, int type, int16_t id, uint32_t *n,
		       struct nx_err *err)
{
	int elem, rc;

	if ((rc = nx_pq_want(in, type, NX_TC_LIST, id, err)) ||
	    (rc = nx_tc_read_list(in, n, &elem, err)))
		return rc;
	return nx_pq_want(in, elem, NX_TC_STRUCT, id, err);
}

/* RowGroup: its columns (1) are ColumnChunks, file_offset (5) moves, ordinal (7) is
 * renumbered (and left out past the i16 range: it is optional). */
static int row_group_field(struct nx_tc_in *in, int type, int16_t id, void *arg,
			   struct nx_err *err)
{
	struct copy *c = arg;
	uint32_t n;
	int64_t ignored;
	int rc;

	if (id == 7) {
		if ((rc = nx_pq_want(in, type, NX_TC_I16, id, err)) ||
		    (rc = nx_tc_read_zigzag(in, &ignored, err)) || c->ordinal > INT16_MAX)
			return rc;
		nx_tc_write_field(c->out, c->written, type, id);
		nx_tc_write_zigzag(c->out, (int64_t)c->ordinal);
		c->written = id;
		return 0;
	}
	nx_tc_write_field(c->out, c->written, type, id);
	c->written = id;
	if (id == 5)
		return move_offset(in, type, id, c->m, c->out, err);
	if (id != 1)
		return copy_value(in, type, c->out, err);
	if ((rc = struct_list(in, type, id, &n, err)))
		return rc;
	nx_tc_write_list(c->out, n, NX_TC_STRUCT);
	for (uint32_t i = 0; !rc && i < n; i++)
		rc = copy_struct(in, c->m, &column_chunk, c->out, err);
	return rc;
}

int nx_pq_copy_row_group(struct nx_tc_in *in, const struct nx_pq_move *m, uint64_t ordinal,
			 struct nx_strbuf *out, struct nx_err *err)
{
	struct copy c = { .m = m, .out = out, .ordinal = ordinal };

	return copy_fields(in, row_group_field, &c, err);
}

int nx_pq_copy_chunk(struct nx_tc_in *in, const struct nx_pq_move *m, struct nx_strbuf *out,
		     struct nx_err *err)
{
	return copy_struct(in, m, &column_chunk, out, err);
}

/* What a row group's span gathers: its rows, and per column chunk the metadata's
 * total_compressed_size (7), data_page_offset (9) and dictionary_page_offset (11). */
struct span {
	int64_t rows, size, data, dict;
	uint64_t lo, hi;
};

static int meta_field(struct nx_tc_in *in, int type, int16_t id, void *arg, struct nx_err *err)
{
	struct span *s = arg;
	int rc;

	if (id != 7 && id != 9 && id != 11)
		return copy_value(in, type, NULL, err);
	if ((rc = nx_pq_want(in, type, NX_TC_I64, id, err)))
		return rc;
	return nx_tc_read_zigzag(in, id == 7 ? &s->size : id == 9 ? &s->data : &s->dict, err);
}

/* A ColumnChunk: its pages are [first page, first page + total_compressed_size). */
static int chunk_field(struct nx_tc_in *in, int type, int16_t id, void *arg, struct nx_err *err)
{
	struct span *s = arg;
	int rc;

	if (id != 3 || type != NX_TC_STRUCT)
		return copy_value(in, type, NULL, err);
	s->size = -1;
	s->data = s->dict = 0;
	if ((rc = each_field(in, meta_field, s, err)))
		return rc;
	int64_t first = s->dict > 0 && s->dict < s->data ? s->dict : s->data;
	if (first < 4 || s->size < 0 || INT64_MAX - first < s->size)
		return footer_err(in, NX_ECORRUPT, "column chunk without a valid page offset or size",
				  err);
	s->lo = (uint64_t)first < s->lo ? (uint64_t)first : s->lo;
	s->hi = (uint64_t)(first + s->size) > s->hi ? (uint64_t)(first + s->size) : s->hi;
	return 0;
}

static int span_field(struct nx_tc_in *in, int type, int16_t id, void *arg, struct nx_err *err)
{
	struct span *s = arg;
	uint32_t n;
	int rc;

	if (id == 3) {
		if ((rc = nx_pq_want(in, type, NX_TC_I64, id, err)))
			return rc;
		return nx_tc_read_zigzag(in, &s->rows, err);
	}
	if (id != 1)
		return copy_value(in, type, NULL, err);
	if ((rc = struct_list(in, type, id, &n, err)))
		return rc;
	for (uint32_t i = 0; !rc && i < n; i++)
		rc = each_field(in, chunk_field, s, err);
	return rc;
}

int nx_pq_row_group_span(struct nx_tc_in *in, int64_t *rows, uint64_t *lo, uint64_t *hi,
			 struct nx_err *err)
{
	struct span s = { .rows = -1, .lo = UINT64_MAX };
	int rc = each_field(in, span_field, &s, err);

	if (rc)
		return rc;
	if (s.rows < 0 || s.hi == 0)
		return footer_err(in, NX_ECORRUPT, "row group without rows or column chunks", err);
	*rows = s.rows;
	*lo = s.lo;
	*hi = s.hi;
	return 0;
}
