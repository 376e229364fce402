/* SPDX-License-Identifier: MIT
 * parquet_concat.c: one parquet file from parts of one schema (see parquet_concat.h).
 * Two passes over the parts' footers: the first checks every part and counts rows and
 * row groups, the second (after the data is copied) re-reads each footer and writes its
 * row groups with their offsets moved (db/parquet_footer.c). Field numbers are those of
 * parquet.thrift. */
#include "common/compat.h"
#include "db/parquet_concat.h"
#include "db/parquet_footer.h"
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

#define PQ_MAGIC NX_PQ_MAGIC

/* What the first pass learns of a part; the footer bytes are only held while used. */
struct part {
	struct nx_pq_file f;
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

static int read_footer(const struct part *p, uint8_t **out, struct nx_err *err)
{
	uint8_t *buf = nx_xmalloc(p->f.footer_len ? p->f.footer_len : 1);
	int rc = nx_pq_read_at(&p->f, buf, p->f.footer_len, p->f.data_end, err);

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

/* First pass over a FileMetaData: rows, row groups, and (into h) the copied fields'
 * ranges. Fields this code does not know (encryption) are refused. */
static int scan_footer(struct part *p, const uint8_t *footer, struct head *h,
		       struct nx_err *err)
{
	struct nx_tc_in in;
	int16_t last = 0, id;
	int type, elem, rc;
	bool seen_rows = false, seen_groups = false;

	nx_tc_in_init(&in, footer, p->f.footer_len, p->f.path, p->f.data_end);
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
			if (!(rc = nx_pq_want(&in, type, NX_TC_I32, id, err)))
				rc = nx_tc_read_zigzag(&in, &h->version, err);
			break;
		case 2:
			if (!(rc = nx_pq_want(&in, type, NX_TC_LIST, id, err)) &&
			    !(rc = nx_tc_skip(&in, type, err)))
				mark(&in, h->schema, start);
			break;
		case 3:
			if (!(rc = nx_pq_want(&in, type, NX_TC_I64, id, err)))
				rc = nx_tc_read_zigzag(&in, &p->rows, err);
			seen_rows = true;
			break;
		case 4:
			if ((rc = nx_pq_want(&in, type, NX_TC_LIST, id, err)) ||
			    (rc = nx_tc_read_list(&in, &p->row_groups, &elem, err)))
				break;
			if ((rc = nx_pq_want(&in, elem, NX_TC_STRUCT, id, err)))
				break;
			for (uint32_t i = 0; !rc && i < p->row_groups; i++)
				rc = nx_tc_skip(&in, NX_TC_STRUCT, err);
			seen_groups = true;
			break;
		case 5:
		case 7:
			if (!(rc = nx_pq_want(&in, type, NX_TC_LIST, id, err)) &&
			    !(rc = nx_tc_skip(&in, type, err)))
				mark(&in, id == 5 ? h->kv : h->orders, start);
			break;
		case 6:
			if (!(rc = nx_pq_want(&in, type, NX_TC_BINARY, id, err)) &&
			    !(rc = nx_tc_skip(&in, type, err)))
				mark(&in, h->created_by, start);
			break;
		default:
			return nx_pq_err(&p->f, NX_EVERSION, nx_tc_offset(&in),
					"unknown FileMetaData field (an encrypted file?)", err);
		}
		if (rc)
			return rc;
		last = id;
	}
	if (in.p != in.end)
		return nx_pq_err(&p->f, NX_ECORRUPT, nx_tc_offset(&in), "bytes after the footer's end",
				err);
	if (!seen_rows || !seen_groups || h->schema[1] == h->schema[0])
		return nx_pq_err(&p->f, NX_ECORRUPT, p->f.data_end, "footer lacks schema, rows or row groups",
				err);
	if (p->rows < 0)
		return nx_pq_err(&p->f, NX_ECORRUPT, p->f.data_end, "negative row count", err);
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
		struct nx_pq_move mv = { .file = parts[i].f.path, .lo = 4, .hi = parts[i].f.data_end,
					 .delta = (int64_t)pos - 4 };
		struct nx_tc_in in;
		uint8_t *footer;
		if ((rc = read_footer(&parts[i], &footer, err)))
			break;
		nx_tc_in_init(&in, footer, parts[i].f.footer_len, parts[i].f.path, parts[i].f.data_end);
		rc = seek_row_groups(&in, err);
		for (uint32_t g = 0; !rc && g < parts[i].row_groups; g++)
			rc = nx_pq_copy_row_group(&in, &mv, ordinal++, &b, err);
		free(footer);
		pos += parts[i].f.data_end - 4;
		if (!rc)
			rc = nx_pq_write_all(fd, out, b.buf, b.len, err);
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
		rc = nx_pq_write_all(fd, out, b.buf, b.len, err);
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
		parts[i].f.fd = -1;
	if (n == 0)
		rc = nx_errf(err, NX_EUSAGE, "'%s': no parts to join", out);
	for (size_t i = 0; !rc && i < n; i++) {
		struct head hi;
		uint8_t *footer;
		if ((rc = nx_pq_open(&parts[i].f, paths[i], err)) ||
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
		rc = nx_pq_write_all(fd, out, PQ_MAGIC, 4, err);
	for (size_t i = 0; !rc && i < n; i++)
		rc = nx_pq_copy_out(&parts[i].f, 4, parts[i].f.data_end - 4, fd, out, err);
	if (!rc)
		rc = write_footer(parts, n, &h, fd, out, &footer_len, err);
	if (!rc && footer_len > UINT32_MAX)
		rc = nx_errf(err, NX_EUSAGE, "'%s': joined footer over 4 GiB", out);
	if (!rc)
		rc = nx_pq_write_tail(fd, out, footer_len, err);
	if (fd >= 0 && close(fd) && !rc)
		rc = nx_errf(err, -errno, "cannot write '%s': %s", out, strerror(errno));
	if (rc && fd >= 0)
		unlink(out);
	for (size_t i = 0; i < n; i++)
		if (parts[i].f.fd >= 0)
			close(parts[i].f.fd);
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
