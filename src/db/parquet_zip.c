/* SPDX-License-Identifier: MIT
 * parquet_zip.c: two files of the same rows, different columns, joined side by side
 * (see parquet_zip.h). The joined footer is built whole before the left file changes,
 * so a malformed footer leaves both files as they were. Field numbers are those of
 * parquet.thrift. */
#include "common/compat.h"
#include "db/parquet_zip.h"
#include "db/parquet_footer.h"
#include "db/thrift_compact.h"
#include "common/strbuf.h"
#include "common/xalloc.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* One of the two files, with its footer. */
struct side {
	struct nx_pq_file f;
	struct nx_pq_head h;
};

static int open_side(struct side *s, const char *path, struct nx_err *err)
{
	uint8_t *footer;
	int rc;

	memset(&s->h, 0, sizeof(s->h));
	if ((rc = nx_pq_open(&s->f, path, err)) || (rc = nx_pq_read_footer(&s->f, &footer, err)))
		return rc;
	rc = nx_pq_scan(&s->f, footer, &s->h, err);
	s->h.footer = footer; /* the scan clears h */
	return rc;
}

static void close_side(struct side *s)
{
	nx_pq_close(&s->f);
	free(s->h.footer);
	s->h.footer = NULL;
}

static void cursor(struct nx_tc_in *in, const struct side *s, const size_t range[2])
{
	nx_tc_in_init(in, s->h.footer + range[0], range[1] - range[0], s->f.path,
		      s->f.data_end + range[0]);
}

/* The fields of a RowGroup that the join reads; columns are where its list's items
 * start, after the list header. */
struct group {
	int64_t total_bytes, rows, file_offset, compressed;
	bool has_offset, has_compressed;
	uint32_t ncols;
	struct nx_tc_in cols;
	int64_t ordinal;
	bool has_ordinal;
};

/* Reads a RowGroup struct at in (and steps over it). Fields other than 1, 2, 3, 5, 6
 * and 7 (sorting columns) are refused: they would not hold for the joined file. */
static int read_group(struct nx_tc_in *in, const struct nx_pq_file *f, struct group *g,
		      struct nx_err *err)
{
	int16_t last = 0, id;
	int type, elem, rc;

	memset(g, 0, sizeof(*g));
	for (;;) {
		if ((rc = nx_tc_read_field(in, last, &type, &id, err)))
			return rc;
		if (type == NX_TC_STOP)
			return 0;
		switch (id) {
		case 1:
			if ((rc = nx_pq_want(in, type, NX_TC_LIST, id, err)) ||
			    (rc = nx_tc_read_list(in, &g->ncols, &elem, err)) ||
			    (rc = nx_pq_want(in, elem, NX_TC_STRUCT, id, err)))
				return rc;
			g->cols = *in;
			for (uint32_t i = 0; !rc && i < g->ncols; i++)
				rc = nx_tc_skip(in, NX_TC_STRUCT, err);
			break;
		case 2:
		case 3:
		case 5:
		case 6: {
			int64_t *v = id == 2 ? &g->total_bytes : id == 3 ? &g->rows
				   : id == 5 ? &g->file_offset : &g->compressed;
			if (!(rc = nx_pq_want(in, type, NX_TC_I64, id, err)))
				rc = nx_tc_read_zigzag(in, v, err);
			g->has_offset |= id == 5;
			g->has_compressed |= id == 6;
			break;
		}
		case 7:
			if (!(rc = nx_pq_want(in, type, NX_TC_I16, id, err)))
				rc = nx_tc_read_zigzag(in, &g->ordinal, err);
			g->has_ordinal = true;
			break;
		default:
			return nx_pq_err(f, NX_EVERSION, nx_tc_offset(in),
					      "a row group field the join does not know", err);
		}
		if (rc)
			return rc;
		last = id;
	}
}

/* Both files opened and scanned, with cursors at their first row groups. */
static int open_both(struct side *l, struct side *r, const char *left, const char *right,
		     struct nx_tc_in *lin, struct nx_tc_in *rin, struct nx_err *err)
{
	int rc;

	l->f.fd = r->f.fd = -1;
	l->h.footer = r->h.footer = NULL;
	if ((rc = open_side(l, left, err)) || (rc = open_side(r, right, err)))
		return rc;
	nx_tc_in_init(lin, l->h.footer, l->f.footer_len, l->f.path, l->f.data_end);
	nx_tc_in_init(rin, r->h.footer, r->f.footer_len, r->f.path, r->f.data_end);
	if ((rc = nx_pq_seek_row_groups(lin, err)) || (rc = nx_pq_seek_row_groups(rin, err)))
		return rc;
	return 0;
}

int nx_parquet_zip_check(const char *left, const char *right, bool *same, struct nx_err *err)
{
	struct side l, r;
	struct nx_tc_in lin, rin;
	int rc = open_both(&l, &r, left, right, &lin, &rin, err);

	*same = !rc && l.f.rows == r.f.rows && l.f.row_groups == r.f.row_groups;
	for (uint32_t i = 0; !rc && *same && i < l.f.row_groups; i++) {
		struct group a, b;
		if ((rc = read_group(&lin, &l.f, &a, err)) || (rc = read_group(&rin, &r.f, &b, err)))
			break;
		*same = a.rows == b.rows;
	}
	if (rc)
		*same = false;
	close_side(&l);
	close_side(&r);
	return rc;
}

/* Appends the joined schema: the left's root with the children of both, the left's
 * other elements, then the right's. */
static int put_schema(struct nx_strbuf *out, const struct side *l, const struct side *r,
		      struct nx_err *err)
{
	const struct side *sides[2] = { l, r };
	struct nx_tc_in in[2];
	uint32_t n[2];
	int64_t children[2] = { 0, 0 };
	int elem, rc;

	for (int s = 0; s < 2; s++) {
		cursor(&in[s], sides[s], sides[s]->h.schema);
		if ((rc = nx_tc_read_list(&in[s], &n[s], &elem, err)) ||
		    (rc = nx_pq_want(&in[s], elem, NX_TC_STRUCT, 2, err)))
			return rc;
		if (!n[s])
			return nx_pq_err(&sides[s]->f, NX_ECORRUPT, nx_tc_offset(&in[s]),
					      "a schema without its root", err);
	}
	nx_tc_write_list(out, n[0] + n[1] - 1, NX_TC_STRUCT);
	/* the roots: the left's fields, its number of children (5) the sum of both */
	for (int s = 1; s >= 0; s--) {
		int16_t last = 0, id;
		int type;
		for (;;) {
			if ((rc = nx_tc_read_field(&in[s], last, &type, &id, err)))
				return rc;
			if (type == NX_TC_STOP)
				break;
			if (id == 5) {
				if ((rc = nx_pq_want(&in[s], type, NX_TC_I32, id, err)) ||
				    (rc = nx_tc_read_zigzag(&in[s], &children[s], err)))
					return rc;
				if (s == 0) {
					nx_tc_write_field(out, last, type, id);
					nx_tc_write_zigzag(out, children[0] + children[1]);
				}
			} else if (s == 1) {
				rc = nx_tc_skip(&in[s], type, err);
			} else {
				nx_tc_write_field(out, last, type, id);
				if (type != NX_TC_TRUE && type != NX_TC_FALSE)
					rc = nx_tc_copy(&in[s], type, out, err);
			}
			if (rc)
				return rc;
			last = id;
		}
	}
	nx_strbuf_addch(out, NX_TC_STOP);
	for (int s = 0; s < 2; s++)
		for (uint32_t i = 1; i < n[s]; i++)
			if ((rc = nx_tc_copy(&in[s], NX_TC_STRUCT, out, err)))
				return rc;
	return 0;
}

/* Appends row group a (left) joined with b (right, its offsets moved by delta). */
static int put_group(struct nx_strbuf *out, const struct side *l, const struct side *r,
		     struct group *a, struct group *b, int64_t delta, struct nx_err *err)
{
	const struct nx_pq_move ml = { .file = l->f.path, .lo = 4, .hi = l->f.data_end };
	const struct nx_pq_move mr = { .file = r->f.path, .lo = 4, .hi = r->f.data_end,
				       .delta = delta };
	int16_t last = 0;
	int rc = 0;

	nx_tc_write_field(out, last, NX_TC_LIST, 1);
	nx_tc_write_list(out, a->ncols + b->ncols, NX_TC_STRUCT);
	for (uint32_t i = 0; !rc && i < a->ncols; i++)
		rc = nx_pq_copy_chunk(&a->cols, &ml, out, err);
	for (uint32_t i = 0; !rc && i < b->ncols; i++)
		rc = nx_pq_copy_chunk(&b->cols, &mr, out, err);
	if (rc)
		return rc;
	nx_tc_write_field(out, 1, NX_TC_I64, 2);
	nx_tc_write_zigzag(out, a->total_bytes + b->total_bytes);
	nx_tc_write_field(out, 2, NX_TC_I64, 3);
	nx_tc_write_zigzag(out, a->rows);
	last = 3;
	if (a->has_offset) {
		nx_tc_write_field(out, last, NX_TC_I64, 5);
		nx_tc_write_zigzag(out, a->file_offset);
		last = 5;
	}
	if (a->has_compressed || b->has_compressed) {
		nx_tc_write_field(out, last, NX_TC_I64, 6);
		nx_tc_write_zigzag(out, a->compressed + b->compressed);
		last = 6;
	}
	if (a->has_ordinal) {
		nx_tc_write_field(out, last, NX_TC_I16, 7);
		nx_tc_write_zigzag(out, a->ordinal);
	}
	nx_strbuf_addch(out, NX_TC_STOP);
	return 0;
}

/* The column orders of both (one per leaf column) as one list, or none when neither
 * file has them. */
static int join_orders(struct nx_strbuf *out, const struct side *l, const struct side *r,
		       bool *have, struct nx_err *err)
{
	const struct side *sides[2] = { l, r };
	struct nx_tc_in in[2];
	uint32_t n[2];
	int elem[2], rc;
	bool has[2] = { l->h.orders[1] > l->h.orders[0], r->h.orders[1] > r->h.orders[0] };

	*have = has[0] || has[1];
	if (!*have)
		return 0;
	if (!has[0] || !has[1])
		return nx_pq_err(&sides[has[0] ? 1 : 0]->f, NX_EMISMATCH,
				      sides[has[0] ? 1 : 0]->f.data_end,
				      "no column orders, which the other file has", err);
	for (int s = 0; s < 2; s++) {
		cursor(&in[s], sides[s], sides[s]->h.orders);
		if ((rc = nx_tc_read_list(&in[s], &n[s], &elem[s], err)))
			return rc;
	}
	if (elem[0] != elem[1])
		return nx_pq_err(&r->f, NX_EMISMATCH, nx_tc_offset(&in[1]),
				      "column orders of another kind", err);
	nx_tc_write_list(out, n[0] + n[1], elem[0]);
	for (int s = 0; s < 2; s++)
		for (uint32_t i = 0; i < n[s]; i++)
			if ((rc = nx_tc_copy(&in[s], elem[s], out, err)))
				return rc;
	return 0;
}

/* The joined FileMetaData, whole. */
static int joined_footer(struct nx_strbuf *out, struct side *l, struct side *r,
			 struct nx_tc_in *lin, struct nx_tc_in *rin, struct nx_err *err)
{
	struct nx_strbuf orders = NX_STRBUF_INIT;
	int64_t delta = (int64_t)l->f.data_end - 4;
	bool have_orders = false;
	int rc;

	if (l->f.rows != r->f.rows || l->f.row_groups != r->f.row_groups)
		return nx_errf(err, NX_EMISMATCH, "'%s' (%" PRId64 " rows, %u row groups) does "
			       "not hold the rows of '%s' (%" PRId64 " rows, %u row groups)",
			       r->f.path, r->f.rows, r->f.row_groups, l->f.path, l->f.rows,
			       l->f.row_groups);
	nx_tc_write_field(out, 0, NX_TC_I32, 1);
	nx_tc_write_zigzag(out, l->h.version);
	nx_tc_write_field(out, 1, NX_TC_LIST, 2);
	if ((rc = put_schema(out, l, r, err)))
		return rc;
	nx_tc_write_field(out, 2, NX_TC_I64, 3);
	nx_tc_write_zigzag(out, l->f.rows);
	nx_tc_write_field(out, 3, NX_TC_LIST, 4);
	nx_tc_write_list(out, l->f.row_groups, NX_TC_STRUCT);
	for (uint32_t i = 0; i < l->f.row_groups; i++) {
		struct group a, b;
		if ((rc = read_group(lin, &l->f, &a, err)) || (rc = read_group(rin, &r->f, &b, err)))
			return rc;
		if (a.rows != b.rows)
			return nx_pq_err(&r->f, NX_EMISMATCH, nx_tc_offset(rin),
					      "a row group of another size than the other file's",
					      err);
		if ((rc = put_group(out, l, r, &a, &b, delta, err)))
			return rc;
	}
	rc = join_orders(&orders, l, r, &have_orders, err);
	if (!rc)
		nx_pq_put_last_fields(out, &l->h, have_orders ? &orders : NULL);
	nx_strbuf_release(&orders);
	return rc;
}

int nx_parquet_zip(const char *left, const char *right, struct nx_err *err)
{
	struct side l, r;
	struct nx_tc_in lin, rin;
	struct nx_strbuf footer = NX_STRBUF_INIT;
	int fd = -1;
	int rc = open_both(&l, &r, left, right, &lin, &rin, err);

	if (!rc)
		rc = joined_footer(&footer, &l, &r, &lin, &rin, err);
	if (!rc && (fd = open(left, O_WRONLY | O_CLOEXEC)) < 0)
		rc = nx_errf(err, -errno, "cannot open '%s' for writing: %s", left, strerror(errno));
	if (!rc && (ftruncate(fd, (off_t)l.f.data_end) || lseek(fd, 0, SEEK_END) < 0))
		rc = nx_errf(err, -errno, "cannot cut the footer off '%s': %s", left,
			     strerror(errno));
	if (!rc)
		rc = nx_pq_copy_out(&r.f, 4, r.f.data_end - 4, fd, left, err);
	if (!rc)
		rc = nx_pq_write_all(fd, left, footer.buf, footer.len, err);
	if (!rc)
		rc = nx_pq_write_tail(fd, left, footer.len, err);
	if (fd >= 0 && close(fd) && !rc)
		rc = nx_errf(err, -errno, "cannot write '%s': %s", left, strerror(errno));
	nx_strbuf_release(&footer);
	close_side(&l);
	close_side(&r);
	return rc;
}
