/* SPDX-License-Identifier: MIT
 * parquet_concat.c: one parquet file from parts of one schema (see parquet_concat.h).
 * Two passes over the parts' footers: the first checks every part and counts rows and
 * row groups, the second (after the data is copied) re-reads each footer and writes its
 * row groups with their offsets moved. Field numbers are those of parquet.thrift. */
#include "common/compat.h"
#include "db/parquet_concat.h"
#include "db/table_files.h"
#include "db/thrift_compact.h"
#include "common/fsutil.h"
#include "common/strbuf.h"
#include "common/xalloc.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define PQ_MAGIC "PAR1"
/* A footer larger than this is refused as corrupt: DuckDB's for a 2M-row part of the
 * widest table is well under 4 MB. */
#define PQ_MAX_FOOTER (256u << 20)

/* What the first pass learns of a part; the footer bytes are only held while used. */
struct part {
	const char *path;
	int fd;
	uint64_t size, data_end; /* data: bytes [4, data_end) */
	uint32_t footer_len;
	int64_t rows;
	uint32_t row_groups;
};

/* The fields of the first part's FileMetaData copied to the output (byte ranges of
 * its footer, end == start when absent). */
struct head {
	uint8_t *footer;
	int64_t version;
	size_t schema[2], kv[2], created_by[2], orders[2];
};

static int part_err(const struct part *p, int code, uint64_t at, const char *what,
		    struct nx_err *err)
{
	return nx_errf(err, code, "'%s': parquet at byte %" PRIu64 ": %s", p->path, at, what);
}

static int read_at(const struct part *p, void *buf, size_t len, uint64_t off,
		   struct nx_err *err)
{
	size_t got = 0;

	while (got < len) {
		ssize_t n = pread(p->fd, (char *)buf + got, len - got, (off_t)(off + got));
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return nx_errf(err, -errno, "cannot read '%s': %s", p->path, strerror(errno));
		if (n == 0)
			return part_err(p, NX_ETRUNC, off + got, "file ends early", err);
		got += (size_t)n;
	}
	return 0;
}

/* Opens a part and checks its two magics and its footer length. */
static int open_part(struct part *p, const char *path, struct nx_err *err)
{
	struct stat st;
	uint8_t head[4], tail[8];
	int rc;

	memset(p, 0, sizeof(*p));
	p->path = path;
	p->fd = open(path, O_RDONLY | O_CLOEXEC);
	if (p->fd < 0)
		return nx_errf(err, -errno, "cannot open '%s': %s", path, strerror(errno));
	if (fstat(p->fd, &st))
		return nx_errf(err, -errno, "cannot stat '%s': %s", path, strerror(errno));
	p->size = (uint64_t)st.st_size;
	if (p->size < 12)
		return part_err(p, NX_ETRUNC, p->size, "too short for a parquet file", err);
	if ((rc = read_at(p, head, 4, 0, err)) || (rc = read_at(p, tail, 8, p->size - 8, err)))
		return rc;
	if (memcmp(head, PQ_MAGIC, 4))
		return part_err(p, NX_ECORRUPT, 0, "no PAR1 magic at the start", err);
	if (!memcmp(tail + 4, "PARE", 4))
		return part_err(p, NX_EVERSION, p->size - 4, "encrypted footers are not supported",
				err);
	if (memcmp(tail + 4, PQ_MAGIC, 4))
		return part_err(p, NX_ECORRUPT, p->size - 4, "no PAR1 magic at the end", err);
	p->footer_len = (uint32_t)tail[0] | (uint32_t)tail[1] << 8 | (uint32_t)tail[2] << 16 |
			(uint32_t)tail[3] << 24;
	if (p->footer_len > PQ_MAX_FOOTER || p->footer_len > p->size - 12)
		return part_err(p, NX_ECORRUPT, p->size - 8, "footer length past the file's start",
				err);
	p->data_end = p->size - 8 - p->footer_len;
	return 0;
}

static int read_footer(const struct part *p, uint8_t **out, struct nx_err *err)
{
	uint8_t *buf = nx_xmalloc(p->footer_len ? p->footer_len : 1);
	int rc = read_at(p, buf, p->footer_len, p->data_end, err);

	if (rc)
		free(buf);
	else
		*out = buf;
	return rc;
}

static int want(struct nx_tc_in *in, int type, int expected, int16_t id, struct nx_err *err)
{
	if (type == expected)
		return 0;
	return nx_errf(err, NX_ECORRUPT, "'%s': parquet footer at byte %" PRIu64
		       ": field %d has type %d, not %d", in->file, nx_tc_offset(in), id, type,
		       expected);
}

static void mark(const struct nx_tc_in *in, size_t range[2], const uint8_t *start)
{
	range[0] = (size_t)(start - in->buf);
	range[1] = (size_t)(in->p - in->buf);
}

/* First pass over a FileMetaData: rows, row groups, and (into h) the copied fields'
 * ranges. Fields this code does not know (encryption) are refused. */
static int scan_footer(struct part *p, const uint8_t *footer, struct head *h,
		       struct nx_err *err)
{
	struct nx_tc_in in;
	int16_t last = 0, id;
	int type, elem, rc;
	bool seen_rows = false, seen_groups = false;

	nx_tc_in_init(&in, footer, p->footer_len, p->path, p->data_end);
	memset(h, 0, sizeof(*h));
	for (;;) {
		const uint8_t *start;
		if ((rc = nx_tc_read_field(&in, last, &type, &id, err)))
			return rc;
		if (type == NX_TC_STOP)
			break;
		start = in.p;
		switch (id) {
		case 1:
			if (!(rc = want(&in, type, NX_TC_I32, id, err)))
				rc = nx_tc_read_zigzag(&in, &h->version, err);
			break;
		case 2:
			if (!(rc = want(&in, type, NX_TC_LIST, id, err)) &&
			    !(rc = nx_tc_skip(&in, type, err)))
				mark(&in, h->schema, start);
			break;
		case 3:
			if (!(rc = want(&in, type, NX_TC_I64, id, err)))
				rc = nx_tc_read_zigzag(&in, &p->rows, err);
			seen_rows = true;
			break;
		case 4:
			if ((rc = want(&in, type, NX_TC_LIST, id, err)) ||
			    (rc = nx_tc_read_list(&in, &p->row_groups, &elem, err)))
				break;
			if ((rc = want(&in, elem, NX_TC_STRUCT, id, err)))
				break;
			for (uint32_t i = 0; !rc && i < p->row_groups; i++)
				rc = nx_tc_skip(&in, NX_TC_STRUCT, err);
			seen_groups = true;
			break;
		case 5:
		case 7:
			if (!(rc = want(&in, type, NX_TC_LIST, id, err)) &&
			    !(rc = nx_tc_skip(&in, type, err)))
				mark(&in, id == 5 ? h->kv : h->orders, start);
			break;
		case 6:
			if (!(rc = want(&in, type, NX_TC_BINARY, id, err)) &&
			    !(rc = nx_tc_skip(&in, type, err)))
				mark(&in, h->created_by, start);
			break;
		default:
			return part_err(p, NX_EVERSION, nx_tc_offset(&in),
					"unknown FileMetaData field (an encrypted file?)", err);
		}
		if (rc)
			return rc;
		last = id;
	}
	if (in.p != in.end)
		return part_err(p, NX_ECORRUPT, nx_tc_offset(&in), "bytes after the footer's end",
				err);
	if (!seen_rows || !seen_groups || h->schema[1] == h->schema[0])
		return part_err(p, NX_ECORRUPT, p->data_end, "footer lacks schema, rows or row groups",
				err);
	if (p->rows < 0)
		return part_err(p, NX_ECORRUPT, p->data_end, "negative row count", err);
	return 0;
}

/* How the second pass moves a part's offsets. */
struct shift {
	const struct part *p;
	int64_t delta;
};

/* An i64 file offset: must point into the part's data (0 stays 0: "unset"). */
static int shift_offset(struct nx_tc_in *in, int type, int16_t id, const struct shift *s,
			struct nx_strbuf *out, struct nx_err *err)
{
	int64_t v;
	int rc = want(in, type, NX_TC_I64, id, err);

	if (rc || (rc = nx_tc_read_zigzag(in, &v, err)))
		return rc;
	if (v != 0 && (v < 4 || (uint64_t)v > s->p->data_end))
		return part_err(s->p, NX_ECORRUPT, nx_tc_offset(in),
				"file offset outside the part's data", err);
	nx_tc_write_zigzag(out, v ? v + s->delta : 0);
	return 0;
}

/* What copy_struct does with a struct's fields: the i64 file offsets to move, the
 * fields that make the file impossible to join, and one struct field copied by its
 * own kind. Field numbers are parquet.thrift's. */
struct kind {
	int16_t moves[4], refused[3];
	size_t nmoves, nrefused;
	int16_t nested_id;
	const struct kind *nested; /* NULL: no struct field of its own kind */
};

/* ColumnMetaData: data_page_offset, index_page_offset, dictionary_page_offset and
 * bloom_filter_offset move. */
static const struct kind column_meta = { .moves = { 9, 10, 11, 14 }, .nmoves = 4 };
/* ColumnChunk: file_offset, offset_index_offset and column_index_offset move; a chunk in
 * another file (file_path) or encrypted cannot be joined; meta_data is a ColumnMetaData. */
static const struct kind column_chunk = { .moves = { 2, 4, 6 }, .nmoves = 3,
					  .refused = { 1, 8, 9 }, .nrefused = 3,
					  .nested_id = 3, .nested = &column_meta };

static bool listed(const int16_t *ids, size_t n, int16_t id)
{
	for (size_t i = 0; i < n; i++)
		if (ids[i] == id)
			return true;
	return false;
}

static int copy_struct(struct nx_tc_in *in, const struct shift *s, const struct kind *k,
		       struct nx_strbuf *out, struct nx_err *err)
{
	int16_t last = 0, id;
	int type, rc;

	for (;;) {
		if ((rc = nx_tc_read_field(in, last, &type, &id, err)))
			return rc;
		if (type == NX_TC_STOP)
			break;
		if (listed(k->refused, k->nrefused, id))
			return part_err(s->p, NX_EVERSION, nx_tc_offset(in),
					"a column chunk in another file or encrypted", err);
		nx_tc_write_field(out, last, type, id);
		if (listed(k->moves, k->nmoves, id)) {
			rc = shift_offset(in, type, id, s, out, err);
		} else if (k->nested && id == k->nested_id) {
			if (!(rc = want(in, type, NX_TC_STRUCT, id, err)))
				rc = copy_struct(in, s, k->nested, out, err);
		} else if (type != NX_TC_TRUE && type != NX_TC_FALSE) {
			rc = nx_tc_copy(in, type, out, err);
		}
		if (rc)
			return rc;
		last = id;
	}
	nx_strbuf_addch(out, 0);
	return 0;
}

/* RowGroup: its columns (1), file_offset (5) moves, ordinal (7) is renumbered (and
 * dropped past the i16 range: it is optional). */
static int copy_row_group(struct nx_tc_in *in, const struct shift *s, uint64_t ordinal,
			  struct nx_strbuf *out, struct nx_err *err)
{
	int16_t last = 0, written = 0, id;
	int type, elem, rc;
	uint32_t n;
	int64_t ignored;

	for (;;) {
		if ((rc = nx_tc_read_field(in, last, &type, &id, err)))
			return rc;
		if (type == NX_TC_STOP)
			break;
		if (id == 7) {
			if ((rc = want(in, type, NX_TC_I16, id, err)) ||
			    (rc = nx_tc_read_zigzag(in, &ignored, err)))
				return rc;
			if (ordinal <= INT16_MAX) {
				nx_tc_write_field(out, written, type, id);
				nx_tc_write_zigzag(out, (int64_t)ordinal);
				written = id;
			}
			last = id;
			continue;
		}
		nx_tc_write_field(out, written, type, id);
		if (id == 1) {
			if ((rc = want(in, type, NX_TC_LIST, id, err)) ||
			    (rc = nx_tc_read_list(in, &n, &elem, err)) ||
			    (rc = want(in, elem, NX_TC_STRUCT, id, err)))
				return rc;
			nx_tc_write_list(out, n, elem);
			for (uint32_t i = 0; !rc && i < n; i++)
				rc = copy_struct(in, s, &column_chunk, out, err);
		} else if (id == 5) {
			rc = shift_offset(in, type, id, s, out, err);
		} else if (type != NX_TC_TRUE && type != NX_TC_FALSE) {
			rc = nx_tc_copy(in, type, out, err);
		}
		if (rc)
			return rc;
		last = written = id;
	}
	nx_strbuf_addch(out, 0);
	return 0;
}

/* Positions a cursor at the first row group of a footer that scan_footer accepted. */
static int seek_row_groups(struct nx_tc_in *in, struct nx_err *err)
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
			return nx_errf(err, NX_ECORRUPT, "'%s': footer changed while joining", in->file);
		if ((rc = nx_tc_skip(in, type, err)))
			return rc;
		last = id;
	}
}

static int write_all(int fd, const char *path, const void *buf, size_t len,
		     struct nx_err *err)
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

/* Appends bytes [4, data_end) of a part to fd, in the kernel when it can. */
static int copy_data(const struct part *p, int fd, const char *out, struct nx_err *err)
{
	loff_t off = 4;
	uint64_t left = p->data_end - 4;

	while (left) {
		ssize_t n = copy_file_range(p->fd, &off, fd, NULL, left, 0);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break; /* not supported here (or a short file): plain reads below */
		left -= (uint64_t)n;
	}
	if (left) {
		char *buf = nx_xmalloc(1 << 20);
		int rc = 0;
		while (!rc && left) {
			size_t chunk = left < (1u << 20) ? (size_t)left : 1u << 20;
			if (!(rc = read_at(p, buf, chunk, (uint64_t)off, err)))
				rc = write_all(fd, out, buf, chunk, err);
			off += (loff_t)chunk;
			left -= chunk;
		}
		free(buf);
		return rc;
	}
	return 0;
}

/* The joined footer, flushed to fd after each part's row groups. */
static int write_footer(struct part *parts, size_t n, const struct head *h, int fd,
			const char *out, uint64_t *footer_len, struct nx_err *err)
{
	struct nx_strbuf b = NX_STRBUF_INIT;
	int64_t rows = 0;
	uint64_t groups = 0, ordinal = 0, pos = 4, len = 0;
	int rc = 0;

	for (size_t i = 0; i < n; i++) {
		rows += parts[i].rows;
		groups += parts[i].row_groups;
	}
	if (groups > UINT32_MAX)
		return nx_errf(err, NX_EUSAGE, "'%s': too many row groups to join", out);
	nx_tc_write_field(&b, 0, NX_TC_I32, 1);
	nx_tc_write_zigzag(&b, h->version);
	nx_tc_write_field(&b, 1, NX_TC_LIST, 2);
	nx_strbuf_add(&b, h->footer + h->schema[0], h->schema[1] - h->schema[0]);
	nx_tc_write_field(&b, 2, NX_TC_I64, 3);
	nx_tc_write_zigzag(&b, rows);
	nx_tc_write_field(&b, 3, NX_TC_LIST, 4);
	nx_tc_write_list(&b, (uint32_t)groups, NX_TC_STRUCT);
	for (size_t i = 0; !rc && i < n; i++) {
		struct shift s = { .p = &parts[i], .delta = (int64_t)pos - 4 };
		struct nx_tc_in in;
		uint8_t *footer;
		if ((rc = read_footer(&parts[i], &footer, err)))
			break;
		nx_tc_in_init(&in, footer, parts[i].footer_len, parts[i].path, parts[i].data_end);
		rc = seek_row_groups(&in, err);
		for (uint32_t g = 0; !rc && g < parts[i].row_groups; g++)
			rc = copy_row_group(&in, &s, ordinal++, &b, err);
		free(footer);
		pos += parts[i].data_end - 4;
		if (!rc)
			rc = write_all(fd, out, b.buf, b.len, err);
		len += b.len;
		nx_strbuf_reset(&b);
	}
	int16_t last = 4;
	const size_t *tail[] = { h->kv, h->created_by, h->orders };
	const int types[] = { NX_TC_LIST, NX_TC_BINARY, NX_TC_LIST };
	for (int f = 0; f < 3; f++) {
		if (tail[f][1] == tail[f][0])
			continue;
		nx_tc_write_field(&b, last, types[f], (int16_t)(5 + f));
		nx_strbuf_add(&b, h->footer + tail[f][0], tail[f][1] - tail[f][0]);
		last = (int16_t)(5 + f);
	}
	nx_strbuf_addch(&b, 0);
	len += b.len;
	if (!rc)
		rc = write_all(fd, out, b.buf, b.len, err);
	nx_strbuf_release(&b);
	*footer_len = len;
	return rc;
}

static bool same_range(const uint8_t *a, const size_t ra[2], const uint8_t *b,
		       const size_t rb[2])
{
	return ra[1] - ra[0] == rb[1] - rb[0] && !memcmp(a + ra[0], b + rb[0], ra[1] - ra[0]);
}

int nx_parquet_concat(const char *const *paths, size_t n, const char *out, struct nx_err *err)
{
	struct part *parts = nx_xcalloc(n ? n : 1, sizeof(*parts));
	struct head h = { 0 };
	uint64_t footer_len = 0;
	int fd = -1, rc = 0;

	for (size_t i = 0; i < n; i++)
		parts[i].fd = -1;
	if (n == 0)
		rc = nx_errf(err, NX_EUSAGE, "'%s': no parts to join", out);
	for (size_t i = 0; !rc && i < n; i++) {
		struct head hi;
		uint8_t *footer;
		if ((rc = open_part(&parts[i], paths[i], err)) ||
		    (rc = read_footer(&parts[i], &footer, err)))
			break;
		rc = scan_footer(&parts[i], footer, &hi, err);
		if (!rc && i == 0) {
			h = hi;
			h.footer = footer;
			continue;
		}
		if (!rc && !same_range(h.footer, h.schema, footer, hi.schema))
			rc = nx_errf(err, NX_EMISMATCH, "'%s' has another schema than '%s'", paths[i],
				     paths[0]);
		free(footer);
	}
	if (!rc) {
		fd = open(out, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
		if (fd < 0)
			rc = nx_errf(err, -errno, "cannot create '%s': %s", out, strerror(errno));
	}
	if (!rc)
		rc = write_all(fd, out, PQ_MAGIC, 4, err);
	for (size_t i = 0; !rc && i < n; i++)
		rc = copy_data(&parts[i], fd, out, err);
	if (!rc)
		rc = write_footer(parts, n, &h, fd, out, &footer_len, err);
	if (!rc && footer_len > UINT32_MAX)
		rc = nx_errf(err, NX_EUSAGE, "'%s': joined footer over 4 GiB", out);
	if (!rc) {
		uint8_t tail[8] = { (uint8_t)footer_len, (uint8_t)(footer_len >> 8),
				    (uint8_t)(footer_len >> 16), (uint8_t)(footer_len >> 24),
				    'P', 'A', 'R', '1' };
		rc = write_all(fd, out, tail, 8, err);
	}
	if (fd >= 0 && close(fd) && !rc)
		rc = nx_errf(err, -errno, "cannot write '%s': %s", out, strerror(errno));
	if (rc && fd >= 0)
		unlink(out);
	for (size_t i = 0; i < n; i++)
		if (parts[i].fd >= 0)
			close(parts[i].fd);
	free(h.footer);
	free(parts);
	return rc;
}

/* Joins one table's parts f[0..n) of dir. */
static int join_table(const char *dir, const struct nx_table_file *f, size_t n,
		      uint64_t *bytes, struct nx_err *err)
{
	char *whole_name = nx_xasprintf("%s.parquet", f[0].table);
	char *tmp_name = nx_xasprintf(".%s.join.tmp", f[0].table);
	char *whole = nx_path_join(dir, whole_name);
	char *tmp = nx_path_join(dir, tmp_name);
	char **paths = nx_xcalloc(n, sizeof(*paths));
	int rc = 0;

	for (size_t i = 0; i < n; i++)
		paths[i] = nx_path_join(dir, f[i].file);
	if (n == 1) {
		if (rename(paths[0], whole))
			rc = nx_errf(err, -errno, "cannot rename '%s': %s", paths[0], strerror(errno));
	} else {
		remove(tmp);
		rc = nx_parquet_concat((const char *const *)paths, n, tmp, err);
		if (!rc && rename(tmp, whole))
			rc = nx_errf(err, -errno, "cannot rename '%s': %s", tmp, strerror(errno));
		if (rc)
			remove(tmp);
		for (size_t i = 0; !rc && i < n; i++) {
			struct stat st;
			if (bytes && !stat(paths[i], &st))
				*bytes += (uint64_t)st.st_size;
			remove(paths[i]);
		}
	}
	for (size_t i = 0; i < n; i++)
		free(paths[i]);
	free(paths);
	free(whole_name);
	free(tmp_name);
	free(whole);
	free(tmp);
	return rc;
}

int nx_parquet_join_split_tables(const char *dir, uint64_t *bytes, size_t *tables,
				 struct nx_err *err)
{
	struct nx_table_file *f;
	size_t n, run;
	int rc = nx_table_files_list(dir, NULL, NULL, &f, &n, err);

	if (bytes)
		*bytes = 0;
	if (tables)
		*tables = 0;
	for (size_t i = 0; !rc && i < n; i += run) {
		for (run = 1; i + run < n && !strcmp(f[i].table, f[i + run].table); run++)
			;
		/* a table that has its whole file is left as it is */
		if (f[i].index >= 0)
			rc = join_table(dir, &f[i], run, bytes, err);
		if (!rc && f[i].index >= 0 && run > 1 && tables)
			(*tables)++;
	}
	nx_table_files_free(f, n);
	return rc;
}
