/* SPDX-License-Identifier: MIT
 * parquet_slice.c: slices of whole row groups of a parquet file as files of their own
 * (see parquet_slice.h). The footer is parsed one top-level value (one row group) at a
 * time through a window that grows only when a value does not fit. */
#include "common/compat.h"
#include "db/parquet_slice.h"
#include "db/parquet_footer.h"
#include "db/thrift_compact.h"
#include "common/fsutil.h"
#include "common/strbuf.h"
#include "common/xalloc.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Footer bytes read at a time; a value larger than this is read whole. */
#define WINDOW (1u << 20)

/* Where a row group lies: its footer bytes [at, end) and its data [lo, hi). */
struct group {
	uint64_t at, end, lo, hi;
	int64_t rows;
};

struct nx_pq_slicer {
	char *path;
	struct nx_pq_file f;
	int64_t version;
	/* file bytes of FileMetaData values copied to every slice (end == start: absent) */
	uint64_t schema[2], kv[2], created_by[2], orders[2];
	struct group *g;
	uint32_t n;
	size_t cap;
	uint8_t *buf; /* the window: file bytes [start, start + len) */
	size_t buf_cap;
	uint64_t start, len;
};

static uint64_t footer_end(const struct nx_pq_slicer *s)
{
	return s->f.size - 8;
}

/* A cursor at file offset at over at least want bytes (fewer at the footer's end). */
static int view(struct nx_pq_slicer *s, uint64_t at, uint64_t want, struct nx_tc_in *in,
		struct nx_err *err)
{
	uint64_t end = footer_end(s);

	if (want > end - at)
		want = end - at;
	if (at < s->start || at + want > s->start + s->len) {
		uint64_t len = want > WINDOW ? want : WINDOW;
		if (len > end - at)
			len = end - at;
		if (len > s->buf_cap) {
			s->buf = nx_xrealloc(s->buf, len ? len : 1);
			s->buf_cap = len;
		}
		s->start = at;
		s->len = 0;
		int rc = nx_pq_read_at(&s->f, s->buf, len, at, err);
		if (rc)
			return rc;
		s->len = len;
	}
	nx_tc_in_init(in, s->buf + (at - s->start), s->start + s->len - at, s->path, at);
	in->more = s->start + s->len < end;
	return 0;
}

/* What one step of the footer's parse reads. */
struct step {
	int16_t last, id;
	int type, elem;
	uint32_t n;
	int64_t v;
	struct group *g;
};

enum what { HEADER, ZIGZAG, SKIP, LIST, GROUP };

static int parse(struct nx_tc_in *in, enum what what, struct step *st, struct nx_err *err)
{
	switch (what) {
	case HEADER: return nx_tc_read_field(in, st->last, &st->type, &st->id, err);
	case ZIGZAG: return nx_tc_read_zigzag(in, &st->v, err);
	case SKIP: return nx_tc_skip(in, st->type, err);
	case LIST: return nx_tc_read_list(in, &st->n, &st->elem, err);
	case GROUP: return nx_pq_row_group_span(in, &st->g->rows, &st->g->lo, &st->g->hi, err);
	}
	return 0;
}

/* Parses one value at *at, widening the window while the value does not fit in it (its
 * error is then about the window's end, not the file's); *at moves past it. */
static int step_at(struct nx_pq_slicer *s, uint64_t *at, enum what what, struct step *st,
		   struct nx_err *err)
{
	for (uint64_t want = 64u << 10;; want *= 2) {
		struct nx_tc_in in;
		int rc = view(s, *at, want, &in, err);
		if (rc)
			return rc;
		if (!(rc = parse(&in, what, st, err))) {
			*at = nx_tc_offset(&in);
			return 0;
		}
		if (*at + (uint64_t)(in.end - in.buf) >= footer_end(s))
			return rc;
	}
}

static int bad_type(struct nx_pq_slicer *s, uint64_t at, int16_t id, struct nx_err *err)
{
	return nx_errf(err, NX_ECORRUPT, "'%s': parquet footer at byte %" PRIu64 ": field %d "
		       "has an unexpected type", s->path, at, id);
}

static int read_groups(struct nx_pq_slicer *s, uint64_t *at, struct nx_err *err)
{
	struct step st = { 0 };
	int rc = step_at(s, at, LIST, &st, err);

	if (!rc && st.elem != NX_TC_STRUCT)
		return bad_type(s, *at, 4, err);
	for (uint32_t i = 0; !rc && i < st.n; i++) {
		NX_GROW(s->g, s->n + 1, s->cap);
		struct group *g = &s->g[s->n];
		g->at = *at;
		st.g = g;
		if (!(rc = step_at(s, at, GROUP, &st, err))) {
			g->end = *at;
			s->n++;
		}
	}
	return rc;
}

/* Walks the FileMetaData: version, the ranges of the values copied to slices, and every
 * row group's place. */
static int scan(struct nx_pq_slicer *s, struct nx_err *err)
{
	uint64_t at = s->f.data_end, *range;
	struct step st = { 0 };
	bool groups = false;
	int rc;

	for (;;) {
		if ((rc = step_at(s, &at, HEADER, &st, err)))
			return rc;
		if (st.type == NX_TC_STOP)
			break;
		range = NULL;
		switch (st.id) {
		case 1: case 3:
			if (st.type != (st.id == 1 ? NX_TC_I32 : NX_TC_I64))
				return bad_type(s, at, st.id, err);
			rc = step_at(s, &at, ZIGZAG, &st, err);
			if (st.id == 1)
				s->version = st.v;
			break;
		case 2: range = s->schema; break;
		case 5: range = s->kv; break;
		case 6: range = s->created_by; break;
		case 7: range = s->orders; break;
		case 4:
			if (st.type != NX_TC_LIST)
				return bad_type(s, at, st.id, err);
			rc = read_groups(s, &at, err);
			groups = true;
			break;
		default:
			return nx_pq_err(&s->f, NX_EVERSION, at, "unknown FileMetaData field (an "
					 "encrypted file?)", err);
		}
		if (!rc && range) {
			if (st.type != (st.id == 6 ? NX_TC_BINARY : NX_TC_LIST))
				return bad_type(s, at, st.id, err);
			range[0] = at;
			rc = step_at(s, &at, SKIP, &st, err);
			range[1] = at;
		}
		if (rc)
			return rc;
		st.last = st.id;
	}
	if (at != footer_end(s))
		return nx_pq_err(&s->f, NX_ECORRUPT, at, "bytes after the footer's end", err);
	if (!groups || s->schema[1] == s->schema[0])
		return nx_pq_err(&s->f, NX_ECORRUPT, s->f.data_end, "footer lacks schema or row "
				 "groups", err);
	for (uint32_t i = 0; i < s->n; i++)
		if (s->g[i].lo < 4 || s->g[i].hi > s->f.data_end)
			return nx_pq_err(&s->f, NX_ECORRUPT, s->g[i].at, "row group data outside the "
					 "file's data", err);
	return 0;
}

int nx_pq_slicer_open(struct nx_pq_slicer **out, const char *path, struct nx_err *err)
{
	struct nx_pq_slicer *s = nx_xcalloc(1, sizeof(*s));
	int rc;

	s->path = nx_xstrdup(path);
	rc = nx_pq_open(&s->f, s->path, err);
	if (!rc)
		rc = scan(s, err);
	free(s->buf);
	s->buf = NULL;
	s->buf_cap = s->start = s->len = 0;
	if (rc) {
		nx_pq_slicer_close(s);
		s = NULL;
	}
	*out = s;
	return rc;
}

void nx_pq_slicer_close(struct nx_pq_slicer *s)
{
	if (!s)
		return;
	if (s->f.fd >= 0)
		close(s->f.fd);
	free(s->g);
	free(s->buf);
	free(s->path);
	free(s);
}

uint32_t nx_pq_slicer_row_groups(const struct nx_pq_slicer *s)
{
	return s->n;
}

/* Appends file bytes [r[0], r[1]) to b. */
static int add_bytes(struct nx_pq_slicer *s, const uint64_t r[2], struct nx_strbuf *b,
		     struct nx_err *err)
{
	size_t len = (size_t)(r[1] - r[0]);

	nx_strbuf_grow(b, len);
	int rc = nx_pq_read_at(&s->f, b->buf + b->len, len, r[0], err);
	if (!rc) {
		b->len += len;
		b->buf[b->len] = '\0';
	}
	return rc;
}

/* The slice's footer, written to fd row group by row group; *len gets its size. */
static int write_footer(struct nx_pq_slicer *s, uint32_t first, uint32_t n,
			const struct nx_pq_move *mv, int fd, const char *out, uint64_t *len,
			struct nx_err *err)
{
	struct nx_strbuf b = NX_STRBUF_INIT, raw = NX_STRBUF_INIT;
	int64_t rows = 0;
	int16_t last = 4;
	int rc;

	for (uint32_t i = first; i < first + n; i++)
		rows += s->g[i].rows;
	*len = 0;
	nx_tc_write_field(&b, 0, NX_TC_I32, 1);
	nx_tc_write_zigzag(&b, s->version);
	nx_tc_write_field(&b, 1, NX_TC_LIST, 2);
	rc = add_bytes(s, s->schema, &b, err);
	nx_tc_write_field(&b, 2, NX_TC_I64, 3);
	nx_tc_write_zigzag(&b, rows);
	nx_tc_write_field(&b, 3, NX_TC_LIST, 4);
	nx_tc_write_list(&b, n, NX_TC_STRUCT);
	for (uint32_t i = first; !rc && i < first + n; i++) {
		const uint64_t r[2] = { s->g[i].at, s->g[i].end };
		struct nx_tc_in in;
		nx_strbuf_reset(&raw);
		if ((rc = add_bytes(s, r, &raw, err)))
			break;
		nx_tc_in_init(&in, raw.buf, raw.len, s->path, r[0]);
		if ((rc = nx_pq_copy_row_group(&in, mv, i - first, &b, err)))
			break;
		rc = nx_pq_write_all(fd, out, b.buf, b.len, err);
		*len += b.len;
		nx_strbuf_reset(&b);
	}
	const uint64_t *tail[] = { s->kv, s->created_by, s->orders };
	const int types[] = { NX_TC_LIST, NX_TC_BINARY, NX_TC_LIST };
	for (int f = 0; !rc && f < 3; f++) {
		if (tail[f][1] == tail[f][0])
			continue;
		nx_tc_write_field(&b, last, types[f], (int16_t)(5 + f));
		rc = add_bytes(s, tail[f], &b, err);
		last = (int16_t)(5 + f);
	}
	nx_strbuf_addch(&b, 0);
	if (!rc)
		rc = nx_pq_write_all(fd, out, b.buf, b.len, err);
	*len += b.len;
	nx_strbuf_release(&b);
	nx_strbuf_release(&raw);
	return rc;
}

int nx_pq_slice_write(struct nx_pq_slicer *s, uint32_t first, uint32_t n, const char *out,
		      struct nx_err *err)
{
	struct nx_pq_move mv = { .file = s->path, .lo = UINT64_MAX, .drop_indexes = true };
	uint64_t footer_len = 0;
	int fd, rc;

	if (n == 0 || first > s->n || n > s->n - first)
		return nx_errf(err, NX_EUSAGE, "'%s': no row groups %u..%u (it has %u)", s->path,
			       first, first + n, s->n);
	for (uint32_t i = first; i < first + n; i++) {
		mv.lo = s->g[i].lo < mv.lo ? s->g[i].lo : mv.lo;
		mv.hi = s->g[i].hi > mv.hi ? s->g[i].hi : mv.hi;
	}
	mv.delta = 4 - (int64_t)mv.lo;
	fd = open(out, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (fd < 0)
		return nx_errf(err, -errno, "cannot create '%s': %s", out, strerror(errno));
	rc = nx_pq_write_all(fd, out, NX_PQ_MAGIC, 4, err);
	if (!rc)
		rc = nx_pq_copy_out(&s->f, mv.lo, mv.hi - mv.lo, fd, out, err);
	if (!rc)
		rc = write_footer(s, first, n, &mv, fd, out, &footer_len, err);
	if (!rc)
		rc = nx_pq_write_tail(fd, out, footer_len, err);
	if (close(fd) && !rc)
		rc = nx_errf(err, -errno, "cannot write '%s': %s", out, strerror(errno));
	if (rc)
		unlink(out);
	return rc;
}

static char *slice_name(const char *dir, const char *stem, uint32_t i)
{
	char *base = nx_xasprintf("%s-%u.parquet", stem, i), *p = nx_path_join(dir, base);

	free(base);
	return p;
}

int nx_pq_each_slice(const char *path, uint32_t per, const char *dir, const char *stem,
		     bool keep, nx_pq_slice_fn fn, void *arg, uint32_t *pieces,
		     struct nx_err *err)
{
	struct nx_pq_slicer *s = NULL;
	uint32_t groups, i = 0;
	int rc;

	if (pieces)
		*pieces = 0;
	if (per == 0)
		return nx_errf(err, NX_EUSAGE, "'%s': slices of 0 row groups", path);
	if ((rc = nx_pq_slicer_open(&s, path, err)))
		return rc;
	groups = nx_pq_slicer_row_groups(s);
	if (groups <= per) {
		nx_pq_slicer_close(s);
		rc = fn(arg, path, 0, err);
		if (!rc && pieces)
			*pieces = 1;
		return rc;
	}
	for (uint32_t first = 0; !rc && first < groups; first += per, i++) {
		char *out = slice_name(dir, stem, i);

		if (!(rc = nx_pq_slice_write(s, first, groups - first < per ? groups - first : per,
					     out, err))) {
			rc = fn(arg, out, i, err);
			if (rc || !keep)
				unlink(out);
		}
		free(out);
	}
	nx_pq_slicer_close(s);
	/* a failure removes the slices kept before it: all or nothing */
	for (uint32_t k = 0; rc && keep && k + 1 < i; k++) {
		char *out = slice_name(dir, stem, k);

		unlink(out);
		free(out);
	}
	if (!rc && pieces)
		*pieces = i;
	return rc;
}
