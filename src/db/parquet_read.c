/* SPDX-License-Identifier: MIT
 * parquet_read.c: a table's parquet files read row group by row group for some flat
 * columns (see parquet_read.h). At open each file's footer is read once, in slices, and
 * reduced to where the asked columns' chunks lie; a batch reads each chunk whole, inflates its
 * pages and decodes levels and values into arrays of the row group's rows. Field
 * numbers are those of parquet.thrift. A page's dictionary indices are decoded in one
 * batch, and a string column's chunk is handed on with its dictionary and each row's
 * index (nx_pqr_col.idx), for callers that work once per distinct value. */
#include "common/compat.h"
#include "db/parquet_read.h"
#include "db/parquet_footer.h"
#include "db/thrift_compact.h"
#include "common/xalloc.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>
#include <zstd.h>

/* parquet.thrift's codes. */
enum { T_BOOLEAN = 0, T_INT32 = 1, T_INT64 = 2, T_INT96 = 3, T_FLOAT = 4, T_DOUBLE = 5,
       T_BYTE_ARRAY = 6 };
enum { CODEC_NONE = 0, CODEC_SNAPPY = 1, CODEC_GZIP = 2, CODEC_ZSTD = 6 };
enum { ENC_PLAIN = 0, ENC_PLAIN_DICT = 2, ENC_RLE = 3, ENC_RLE_DICT = 8 };
enum { PAGE_DATA = 0, PAGE_INDEX = 1, PAGE_DICT = 2, PAGE_DATA_V2 = 3 };
enum { REP_REQUIRED = 0, REP_OPTIONAL = 1 };

/* A page larger than this is refused as corrupt (DuckDB's are well under 100 MB). */
#define MAX_PAGE ((uint64_t)1 << 30)

/* What a chunk's statistics say (parquet.thrift's Statistics): its null count (-1 when
 * absent), and its least and greatest value as stored, little-endian, when they are exact
 * and 4 or 8 bytes long (min_len, max_len 0 otherwise). */
struct stats {
	int64_t nulls, min, max;
	uint8_t min_len, max_len;
};

/* Where a column's chunk of one row group lies, and its statistics. */
struct chunk {
	uint64_t start, len;
	int64_t values;
	int codec;
	struct stats st;
};

/* What a file's footer says of the asked columns. */
struct file {
	char *path;
	int fd;
	uint64_t size;
	uint32_t ngroups;
	int64_t *group_rows;
	struct chunk *chunks;      /* ngroups x ncols */
	int ptype[NX_PQR_MAX_COLS];   /* physical type, -1 when the file lacks the column */
	int max_def[NX_PQR_MAX_COLS];
};

/* A column's buffers for one row group. */
struct colbuf {
	uint8_t *raw;              /* the chunk as stored */
	size_t raw_cap;
	char **pages;              /* inflated pages: strings point into them */
	size_t npages, pages_cap, *page_cap;
	/* the row arrays, in one block (rows_mem) at an offset of the column's own */
	void *rows_mem;
	uint8_t *valid;
	int64_t *i64;
	double *f64;
	const char **str;
	uint32_t *len;
	size_t cap;                /* rows the value arrays hold */
	/* the chunk's dictionary */
	int64_t *d_i64;
	double *d_f64;
	const char **d_str;
	uint32_t *d_len;
	size_t d_n, d_cap;
	/* each row's index into the dictionary (0 for a NULL), and whether every data page
	 * of the chunk so far was dictionary-encoded (then the batch hands idx on) */
	uint32_t *idx;
	size_t idx_cap;
	bool all_dict;
};

struct nx_pqr {
	struct file *files;
	size_t nfiles, ncols, cur;
	uint32_t group;
	char **names;
	enum nx_pqr_kind kind[NX_PQR_MAX_COLS];
	/* one set of buffers, or two that batches alternate between (nx_pqr_two_sets) */
	struct colbuf cols[2][NX_PQR_MAX_COLS];
	struct nx_pqr_batch batch[2];
	unsigned nsets, set;
	ZSTD_DCtx *zd;
	/* the decoded indices or levels of a page with NULLs, before they are spread */
	uint32_t *scratch;
	size_t scratch_cap;
};

/* The parquet_footer.h view of f, for its reads and error messages. */
static struct nx_pq_file pq_of(const struct file *f)
{
	struct nx_pq_file pf;

	memset(&pf, 0, sizeof(pf));
	pf.path = f->path;
	pf.fd = f->fd;
	return pf;
}

static int bad(const struct file *f, int code, uint64_t at, const char *what,
	       struct nx_err *err)
{
	struct nx_pq_file pf = pq_of(f);

	return nx_pq_err(&pf, code, at, what, err);
}

static enum nx_pqr_kind kind_of(int ptype)
{
	switch (ptype) {
	case T_BOOLEAN: return NX_PQR_BOOL;
	case T_INT32: case T_INT64: return NX_PQR_I64;
	case T_FLOAT: case T_DOUBLE: return NX_PQR_F64;
	case T_BYTE_ARRAY: return NX_PQR_STR;
	default: return NX_PQR_NULL;
	}
}

static int read_at(const struct file *f, void *buf, size_t len, uint64_t off,
		   struct nx_err *err)
{
	struct nx_pq_file pf = pq_of(f);

	return nx_pq_read_at(&pf, buf, len, off, err);
}

/* ---- the footer -------------------------------------------------------------------- */

static int read_binary(struct nx_tc_in *in, const char **s, size_t *len, struct nx_err *err)
{
	uint64_t n;
	int rc = nx_tc_read_varint(in, &n, err);

	if (rc)
		return rc;
	if (n > (uint64_t)(in->end - in->p))
		return nx_errf(err, NX_ETRUNC, "'%s': parquet footer at byte %" PRIu64
			       ": string longer than the footer", in->file, nx_tc_offset(in));
	*s = (const char *)in->p;
	*len = (size_t)n;
	in->p += n;
	return 0;
}

static int read_i(struct nx_tc_in *in, int type, int16_t id, int64_t *v, struct nx_err *err)
{
	int rc = type == NX_TC_I32 || type == NX_TC_I64 || type == NX_TC_I16 || type == NX_TC_BYTE
		 ? 0 : nx_pq_want(in, type, NX_TC_I64, id, err);

	return rc ? rc : nx_tc_read_zigzag(in, v, err);
}

/* One SchemaElement: its type, repetition, name and children (-1 when absent). */
struct element {
	int64_t type, rep, children;
	const char *name;
	size_t nlen;
};

static int read_element(struct nx_tc_in *in, struct element *e, struct nx_err *err)
{
	int16_t last = 0, id;
	int type, rc;

	e->type = e->rep = e->children = -1;
	e->name = "";
	e->nlen = 0;
	for (;;) {
		if ((rc = nx_tc_read_field(in, last, &type, &id, err)))
			return rc;
		if (type == NX_TC_STOP)
			return 0;
		if (id == 1 || id == 3 || id == 5)
			rc = read_i(in, type, id, id == 1 ? &e->type : id == 3 ? &e->rep
								: &e->children, err);
		else if (id == 4 && !(rc = nx_pq_want(in, type, NX_TC_BINARY, id, err)))
			rc = read_binary(in, &e->name, &e->nlen, err);
		else if (id != 4)
			rc = nx_tc_skip(in, type, err);
		if (rc)
			return rc;
		last = id;
	}
}

/* The schema: which leaf (column chunk number) each asked column is, with its type and
 * repetition; a nested column is refused when asked for. */
static int read_schema(struct nx_tc_in *in, struct file *f, char *const *names, size_t ncols,
		       int leaf_of[NX_PQR_MAX_COLS], struct nx_err *err)
{
	uint32_t n;
	int elem, rc;
	int64_t leaf = 0;
	struct element e;

	if ((rc = nx_tc_read_list(in, &n, &elem, err)) ||
	    (rc = nx_pq_want(in, elem, NX_TC_STRUCT, 2, err)))
		return rc;
	if (!n)
		return bad(f, NX_ECORRUPT, nx_tc_offset(in), "a schema without its root", err);
	if ((rc = read_element(in, &e, err)))
		return rc;
	for (uint32_t i = 1; i < n; i++) {
		int64_t below = 0; /* leaves of a nested top-level column */
		if ((rc = read_element(in, &e, err)))
			return rc;
		size_t k;
		for (k = 0; k < ncols; k++)
			if (strlen(names[k]) == e.nlen && !memcmp(names[k], e.name, e.nlen))
				break;
		if (e.children > 0) {
			/* a group: its subtree's leaves count, its elements are skipped */
			int64_t open = e.children;
			if (k < ncols)
				return bad(f, NX_EVERSION, nx_tc_offset(in),
					   "a nested column, which this reader does not read", err);
			while (open > 0 && i + 1 < n) {
				i++;
				if ((rc = read_element(in, &e, err)))
					return rc;
				open--;
				if (e.children > 0)
					open += e.children;
				else
					below++;
			}
			leaf += below;
			continue;
		}
		if (k < ncols) {
			if (e.rep != REP_REQUIRED && e.rep != REP_OPTIONAL && e.rep != -1)
				return bad(f, NX_EVERSION, nx_tc_offset(in),
					   "a repeated column, which this reader does not read", err);
			leaf_of[k] = (int)leaf;
			f->ptype[k] = (int)e.type;
			f->max_def[k] = e.rep == REP_OPTIONAL ? 1 : 0;
		}
		leaf++;
	}
	return 0;
}

/* A little-endian integer of 4 or 8 bytes, sign-extended; its length, or 0 for another. */
static uint8_t le_int(const char *p, size_t len, int64_t *v)
{
	int32_t i32;

	if (len == 4) {
		memcpy(&i32, p, 4);
		*v = i32;
	} else if (len == 8) {
		memcpy(v, p, 8);
	} else {
		return 0;
	}
	return (uint8_t)len;
}

/* A Statistics struct: 3 null_count, 5 max_value, 6 min_value, 7 and 8 whether they are
 * exact (the deprecated 1 max and 2 min, of another sort order, are not read). */
static int read_stats(struct nx_tc_in *in, struct stats *st, struct nx_err *err)
{
	int16_t last = 0, id;
	int type, rc;
	bool max_exact = true, min_exact = true;

	st->nulls = -1;
	st->min_len = st->max_len = 0;
	for (;;) {
		if ((rc = nx_tc_read_field(in, last, &type, &id, err)))
			return rc;
		if (type == NX_TC_STOP)
			break;
		if (id == 3) {
			rc = read_i(in, type, id, &st->nulls, err);
		} else if (id == 5 || id == 6) {
			const char *v;
			size_t len;
			if (!(rc = nx_pq_want(in, type, NX_TC_BINARY, id, err)) &&
			    !(rc = read_binary(in, &v, &len, err))) {
				if (id == 5)
					st->max_len = le_int(v, len, &st->max);
				else
					st->min_len = le_int(v, len, &st->min);
			}
		} else if ((id == 7 || id == 8) && (type == NX_TC_TRUE || type == NX_TC_FALSE)) {
			*(id == 7 ? &max_exact : &min_exact) = type == NX_TC_TRUE;
		} else {
			rc = nx_tc_skip(in, type, err);
		}
		if (rc)
			return rc;
		last = id;
	}
	if (!max_exact)
		st->max_len = 0;
	if (!min_exact)
		st->min_len = 0;
	return 0;
}

/* A ColumnChunk; fills c when it is one of the asked columns (slot >= 0). */
static int read_chunk(struct nx_tc_in *in, const struct file *f, struct chunk *c,
		      struct nx_err *err)
{
	int16_t last = 0, id;
	int type, rc;

	for (;;) {
		if ((rc = nx_tc_read_field(in, last, &type, &id, err)))
			return rc;
		if (type == NX_TC_STOP)
			return 0;
		if (id == 1 || id == 8 || id == 9)
			return bad(f, NX_EVERSION, nx_tc_offset(in),
				   "a column chunk in another file or encrypted", err);
		if (id == 3 && c) {
			int16_t mlast = 0, mid;
			int mtype;
			int64_t data = 0, dict = 0, size = 0, codec = 0, values = 0;
			if ((rc = nx_pq_want(in, type, NX_TC_STRUCT, id, err)))
				return rc;
			c->st = (struct stats){ .nulls = -1 };
			for (;;) {
				if ((rc = nx_tc_read_field(in, mlast, &mtype, &mid, err)))
					return rc;
				if (mtype == NX_TC_STOP)
					break;
				int64_t *v = mid == 4 ? &codec : mid == 5 ? &values : mid == 7 ? &size
					   : mid == 9 ? &data : mid == 11 ? &dict : NULL;
				if (mid == 12 && !(rc = nx_pq_want(in, mtype, NX_TC_STRUCT, mid, err)))
					rc = read_stats(in, &c->st, err);
				else if (mid != 12)
					rc = v ? read_i(in, mtype, mid, v, err)
					       : nx_tc_skip(in, mtype, err);
				if (rc)
					return rc;
				mlast = mid;
			}
			c->start = (uint64_t)(dict > 0 && dict < data ? dict : data);
			c->len = (uint64_t)size;
			c->codec = (int)codec;
			c->values = values;
			if (data < 4 || size < 0 || values < 0 || c->start + c->len < c->start ||
			    c->start + c->len > f->size)
				return bad(f, NX_ECORRUPT, nx_tc_offset(in),
					   "a column chunk outside the file", err);
		} else if ((rc = nx_tc_skip(in, type, err))) {
			return rc;
		}
		last = id;
	}
}

/* One RowGroup: its rows and the asked columns' chunks (a second read of the same group,
 * after the footer's window moved, fills the same slots again). */
static int read_group(struct nx_tc_in *in, struct file *f, uint32_t g, size_t ncols,
		      const int leaf_of[NX_PQR_MAX_COLS], struct nx_err *err)
{
	int16_t last = 0, id;
	int type, rc;
	bool rows = false;

	for (;;) {
		if ((rc = nx_tc_read_field(in, last, &type, &id, err)))
			return rc;
		if (type == NX_TC_STOP)
			break;
		if (id == 1) {
			uint32_t nc;
			int ct;
			if ((rc = nx_pq_want(in, type, NX_TC_LIST, id, err)) ||
			    (rc = nx_tc_read_list(in, &nc, &ct, err)) ||
			    (rc = nx_pq_want(in, ct, NX_TC_STRUCT, id, err)))
				return rc;
			for (uint32_t c = 0; c < nc; c++) {
				struct chunk *slot = NULL;
				for (size_t k = 0; k < ncols; k++)
					if (leaf_of[k] == (int)c)
						slot = &f->chunks[(size_t)g * ncols + k];
				if ((rc = read_chunk(in, f, slot, err)))
					return rc;
			}
		} else if (id == 3) {
			if ((rc = read_i(in, type, id, &f->group_rows[g], err)))
				return rc;
			rows = true;
		} else if ((rc = nx_tc_skip(in, type, err))) {
			return rc;
		}
		last = id;
	}
	if (!rows || f->group_rows[g] < 0 || f->group_rows[g] > INT32_MAX)
		return bad(f, NX_ECORRUPT, nx_tc_offset(in), "a row group without its rows", err);
	return 0;
}

/* The footer is read in slices: a window of FOOTER_SLICE bytes (more when one row
 * group's metadata is larger) moves along it, so a file of many row groups costs the
 * window, not its whole footer (11 MB for the Instruction table of a 100M-record trace).
 * A part of the footer is parsed from the window; should it run past the window's end
 * before the footer's, the window moves to its start, reads on, and the part is parsed
 * again. */
#define FOOTER_SLICE ((size_t)64 << 10)

struct window {
	const struct file *f;
	uint64_t lo, end; /* buf holds the file's bytes [lo, lo + len); the footer ends at end */
	uint8_t *buf;
	size_t len, cap;
	struct nx_tc_in in;
};

/* Moves the window to keep (a byte inside it) and fills it on. */
static int window_fill(struct window *w, const uint8_t *keep, struct nx_err *err)
{
	size_t off = (size_t)(keep - w->buf), want;
	int rc, depth = w->in.depth;

	if (off) {
		memmove(w->buf, keep, w->len - off);
		w->len -= off;
		w->lo += off;
	}
	if (w->len == w->cap) { /* one part larger than the window */
		w->cap *= 2;
		w->buf = nx_xrealloc(w->buf, w->cap);
	}
	want = w->cap - w->len;
	if (want > w->end - (w->lo + w->len))
		want = (size_t)(w->end - (w->lo + w->len));
	rc = read_at(w->f, w->buf + w->len, want, w->lo + w->len, err);
	if (rc)
		return rc;
	w->len += want;
	nx_tc_in_init(&w->in, w->buf, w->len, w->f->path, w->lo);
	w->in.depth = depth;
	w->in.more = w->lo + w->len < w->end;
	return 0;
}

/* A part of the footer, the top-level field at the cursor or one row group. */
struct part {
	struct file *f;
	char *const *names;
	size_t ncols;
	int *leaf_of;
	int16_t last;   /* the previous top-level field */
	bool schema, groups_next, groups, done;
	uint32_t ngroups;
};

static int top_field(struct nx_tc_in *in, struct part *pt, struct nx_err *err)
{
	struct file *f = pt->f;
	int16_t id;
	int type, elem, rc;

	if ((rc = nx_tc_read_field(in, pt->last, &type, &id, err)))
		return rc;
	if (type == NX_TC_STOP) {
		pt->done = true;
		return 0;
	}
	if (id == 2 && !(rc = nx_pq_want(in, type, NX_TC_LIST, id, err))) {
		rc = read_schema(in, f, pt->names, pt->ncols, pt->leaf_of, err);
		pt->schema = !rc;
	} else if (id == 4 && pt->schema && !(rc = nx_pq_want(in, type, NX_TC_LIST, id, err))) {
		uint32_t n;
		if (!(rc = nx_tc_read_list(in, &n, &elem, err)) &&
		    !(rc = nx_pq_want(in, elem, NX_TC_STRUCT, 4, err)))
			pt->ngroups = n;
		pt->groups_next = !rc;
	} else if (id == 8 || id == 9) {
		rc = bad(f, NX_EVERSION, nx_tc_offset(in), "an encrypted file", err);
	} else if (id != 2 && id != 4) {
		rc = nx_tc_skip(in, type, err);
	} else {
		rc = bad(f, NX_ECORRUPT, nx_tc_offset(in), "row groups before the schema", err);
	}
	if (!rc)
		pt->last = id;
	return rc;
}

/* Parses one part (a top-level field, or row group g when g >= 0) from the window,
 * moving it as needed. */
static int window_part(struct window *w, struct part *pt, int64_t g, struct nx_err *err)
{
	for (;;) {
		const uint8_t *at = w->in.p;
		int depth = w->in.depth, rc;
		rc = g >= 0 ? read_group(&w->in, pt->f, (uint32_t)g, pt->ncols, pt->leaf_of, err)
			    : top_field(&w->in, pt, err);
		if (rc != NX_ETRUNC || w->lo + w->len >= w->end)
			return rc;
		w->in.p = at; /* it ran past the window: again from its start */
		w->in.depth = depth;
		if ((rc = window_fill(w, at, err)))
			return rc;
	}
}

static int read_footer(struct file *f, const struct nx_pq_file *pf, char *const *names,
		       size_t ncols, int leaf_of[NX_PQR_MAX_COLS], struct nx_err *err)
{
	struct window w = { .f = f, .lo = pf->data_end, .end = pf->data_end + pf->footer_len };
	struct part pt = { .f = f, .names = names, .ncols = ncols, .leaf_of = leaf_of };
	int rc;

	w.cap = pf->footer_len < FOOTER_SLICE ? (pf->footer_len ? pf->footer_len : 1)
					      : FOOTER_SLICE;
	w.buf = nx_xmalloc(w.cap);
	nx_tc_in_init(&w.in, w.buf, 0, f->path, w.lo);
	rc = window_fill(&w, w.buf, err);
	while (!rc && !pt.done) {
		rc = window_part(&w, &pt, -1, err);
		if (rc || !pt.groups_next)
			continue;
		pt.groups_next = false;
		pt.groups = true;
		f->ngroups = pt.ngroups;
		f->group_rows = nx_xcalloc(pt.ngroups ? pt.ngroups : 1, sizeof(*f->group_rows));
		f->chunks = nx_xcalloc((size_t)(pt.ngroups ? pt.ngroups : 1) * (ncols ? ncols : 1),
				       sizeof(*f->chunks));
		for (uint32_t g = 0; !rc && g < pt.ngroups; g++)
			rc = window_part(&w, &pt, g, err);
	}
	if (!rc && !pt.groups)
		rc = bad(f, NX_ECORRUPT, pf->data_end, "a footer without row groups", err);
	free(w.buf);
	return rc;
}

static int open_file(struct file *f, const char *path, char *const *names, size_t ncols,
		     struct nx_err *err)
{
	struct nx_pq_file pf;
	int leaf_of[NX_PQR_MAX_COLS];
	int rc;

	f->path = nx_xstrdup(path);
	f->fd = -1;
	for (size_t k = 0; k < ncols; k++) {
		leaf_of[k] = -1;
		f->ptype[k] = -1;
	}
	rc = nx_pq_open(&pf, path, err);
	f->fd = pf.fd; /* kept: the pages are read through it */
	f->size = pf.size;
	if (!rc)
		rc = read_footer(f, &pf, names, ncols, leaf_of, err);
	return rc;
}

int nx_pqr_open(struct nx_pqr **out, const char *const *files, size_t nfiles,
		const char *const *cols, size_t ncols, struct nx_err *err)
{
	struct nx_pqr *r = nx_xcalloc(1, sizeof(*r));
	int rc = 0;

	*out = NULL;
	if (ncols > NX_PQR_MAX_COLS) {
		free(r);
		return nx_errf(err, NX_EUSAGE, "a parquet read of more than %d columns",
			       NX_PQR_MAX_COLS);
	}
	r->ncols = ncols;
	r->nsets = 1;
	r->names = nx_xcalloc(ncols ? ncols : 1, sizeof(*r->names));
	for (size_t k = 0; k < ncols; k++)
		r->names[k] = nx_xstrdup(cols[k]);
	r->files = nx_xcalloc(nfiles ? nfiles : 1, sizeof(*r->files));
	for (size_t i = 0; i < nfiles; i++)
		r->files[i].fd = -1;
	r->nfiles = nfiles;
	for (size_t i = 0; !rc && i < nfiles; i++) {
		struct file *f = &r->files[i];
		rc = open_file(f, files[i], r->names, ncols, err);
		for (size_t k = 0; !rc && k < ncols; k++) {
			enum nx_pqr_kind kd = f->ptype[k] < 0 ? NX_PQR_NULL : kind_of(f->ptype[k]);
			if (f->ptype[k] >= 0 && kd == NX_PQR_NULL)
				rc = bad(f, NX_EVERSION, 0, "a column of a physical type this reader "
					 "does not read", err);
			else if (kd != NX_PQR_NULL && r->kind[k] != NX_PQR_NULL && kd != r->kind[k])
				rc = nx_errf(err, NX_EMISMATCH, "'%s': column %s has another type "
					     "than in '%s'", f->path, cols[k], files[0]);
			else if (kd != NX_PQR_NULL)
				r->kind[k] = kd;
		}
	}
	r->zd = ZSTD_createDCtx();
	if (!rc && !r->zd)
		rc = nx_errf(err, -ENOMEM, "cannot start zstd");
	if (rc) {
		nx_pqr_close(r);
		return rc;
	}
	*out = r;
	return 0;
}

enum nx_pqr_kind nx_pqr_kind(const struct nx_pqr *r, size_t k)
{
	return k < r->ncols ? r->kind[k] : NX_PQR_NULL;
}

/* Widens *x by chunk c of a column of physical type ptype; false when its statistics do
 * not tell (absent, inexact, of another width) and it may hold values. */
static bool range_add(struct nx_pqr_range *x, const struct stats *st, int ptype, int64_t rows)
{
	uint8_t width = ptype == T_INT32 ? 4 : 8;

	if (rows == 0 || st->nulls == rows)
		return true; /* no value in it */
	if (st->min_len != width || st->max_len != width || st->min > st->max)
		return false;
	if (!x->set || st->min < x->lo)
		x->lo = st->min;
	if (!x->set || st->max > x->hi)
		x->hi = st->max;
	x->set = true;
	return true;
}

/* Widens *x by row group g of file f for column k; NX_ENOTFOUND when it does not tell. */
static int group_range(const struct nx_pqr *r, const struct file *f, uint32_t g, size_t k,
		       struct nx_pqr_range *x, struct nx_err *err)
{
	const struct chunk *c = &f->chunks[(size_t)g * r->ncols + k];

	if (f->ptype[k] != T_INT32 && f->ptype[k] != T_INT64)
		return nx_errf(err, NX_ENOTFOUND, "'%s': column %s is not an integer column",
			       f->path, r->names[k]);
	if (!range_add(x, &c->st, f->ptype[k], f->group_rows[g]))
		return nx_errf(err, NX_ENOTFOUND, "'%s': row group %u lacks exact statistics "
			       "of column %s", f->path, g, r->names[k]);
	return 0;
}

int nx_pqr_ranges(const struct nx_pqr *r, int64_t *rows, struct nx_pqr_range *out,
		  struct nx_err *err)
{
	int rc;

	*rows = 0;
	memset(out, 0, r->ncols * sizeof(*out));
	for (size_t i = 0; i < r->nfiles; i++) {
		const struct file *f = &r->files[i];
		for (uint32_t g = 0; g < f->ngroups; g++) {
			*rows += f->group_rows[g];
			for (size_t k = 0; k < r->ncols; k++)
				if ((rc = group_range(r, f, g, k, &out[k], err)))
					return rc;
		}
	}
	return 0;
}

size_t nx_pqr_groups(const struct nx_pqr *r)
{
	size_t n = 0;

	for (size_t i = 0; i < r->nfiles; i++)
		n += r->files[i].ngroups;
	return n;
}

/* The file (index into r->files) and its row group of the files' row group g. */
static bool group_at(const struct nx_pqr *r, size_t g, size_t *file, uint32_t *group)
{
	for (size_t i = 0; i < r->nfiles; i++) {
		if (g < r->files[i].ngroups) {
			*file = i;
			*group = (uint32_t)g;
			return true;
		}
		g -= r->files[i].ngroups;
	}
	return false;
}

int nx_pqr_group_range(const struct nx_pqr *r, size_t g, size_t k, struct nx_pqr_range *out,
		       struct nx_err *err)
{
	size_t i;
	uint32_t gi;

	memset(out, 0, sizeof(*out));
	if (k >= r->ncols || !group_at(r, g, &i, &gi))
		return nx_errf(err, NX_EUSAGE, "no row group %zu or column %zu", g, k);
	return group_range(r, &r->files[i], gi, k, out, err);
}

void nx_pqr_seek(struct nx_pqr *r, size_t g)
{
	size_t i;
	uint32_t gi;

	if (group_at(r, g, &i, &gi)) {
		r->cur = i;
		r->group = gi;
	} else {
		r->cur = r->nfiles;
		r->group = 0;
	}
}

/* ---- pages ------------------------------------------------------------------------ */

/* Raw snappy (parquet's SNAPPY codec): a varint length, then literals and back
 * references. 0, or -1 for bytes that are not snappy of out_len bytes. */
static int unsnappy(const uint8_t *in, size_t in_len, uint8_t *out, size_t out_len)
{
	const uint8_t *p = in, *end = in + in_len;
	uint64_t want = 0;
	size_t o = 0;

	for (int shift = 0;; shift += 7) {
		if (p >= end || shift > 35)
			return -1;
		want |= (uint64_t)(*p & 0x7f) << shift;
		if (!(*p++ & 0x80))
			break;
	}
	if (want != out_len)
		return -1;
	while (p < end) {
		uint8_t tag = *p++;
		size_t len, off = 0;
		if ((tag & 3) == 0) {
			len = (size_t)(tag >> 2) + 1;
			if (len > 60) {
				size_t bytes = len - 60;
				if ((size_t)(end - p) < bytes)
					return -1;
				len = 0;
				for (size_t i = 0; i < bytes; i++)
					len |= (size_t)p[i] << (8 * i);
				len++;
				p += bytes;
			}
			if ((size_t)(end - p) < len || out_len - o < len)
				return -1;
			memcpy(out + o, p, len);
			p += len;
			o += len;
			continue;
		}
		if ((tag & 3) == 1) {
			if (p >= end)
				return -1;
			len = 4 + ((tag >> 2) & 7);
			off = (size_t)(tag >> 5) << 8 | *p++;
		} else {
			size_t bytes = (tag & 3) == 2 ? 2 : 4;
			if ((size_t)(end - p) < bytes)
				return -1;
			len = (size_t)(tag >> 2) + 1;
			for (size_t i = 0; i < bytes; i++)
				off |= (size_t)p[i] << (8 * i);
			p += bytes;
		}
		if (!off || off > o || out_len - o < len)
			return -1;
		for (size_t i = 0; i < len; i++, o++)
			out[o] = out[o - off]; /* may overlap what it copies */
	}
	return o == out_len ? 0 : -1;
}

/* A page of the chunk, inflated when its codec says so; *out points into raw for an
 * uncompressed page, else into a page buffer of the column kept for the batch. */
static int inflate_page(struct nx_pqr *r, struct colbuf *cb, const struct file *f,
			int codec, const uint8_t *in, size_t in_len, size_t out_len,
			uint64_t at, const uint8_t **out, struct nx_err *err)
{
	char *buf;

	if (codec == CODEC_NONE) {
		if (in_len != out_len)
			return bad(f, NX_ECORRUPT, at, "an uncompressed page of two sizes", err);
		*out = in;
		return 0;
	}
	if (cb->npages == cb->pages_cap) {
		size_t cap = cb->pages_cap ? cb->pages_cap * 2 : 8;
		cb->pages = nx_xrealloc(cb->pages, cap * sizeof(*cb->pages));
		cb->page_cap = nx_xrealloc(cb->page_cap, cap * sizeof(*cb->page_cap));
		for (size_t i = cb->pages_cap; i < cap; i++) {
			cb->pages[i] = NULL;
			cb->page_cap[i] = 0;
		}
		cb->pages_cap = cap;
	}
	if (cb->page_cap[cb->npages] < out_len + 1) {
		free(cb->pages[cb->npages]);
		cb->pages[cb->npages] = nx_xmalloc(out_len + 1);
		cb->page_cap[cb->npages] = out_len + 1;
	}
	buf = cb->pages[cb->npages++];
	if (codec == CODEC_ZSTD) {
		size_t n = ZSTD_decompressDCtx(r->zd, buf, out_len, in, in_len);
		if (ZSTD_isError(n) || n != out_len)
			return bad(f, NX_ECORRUPT, at, ZSTD_isError(n) ? ZSTD_getErrorName(n)
				   : "a zstd page of another size than its header says", err);
	} else if (codec == CODEC_GZIP) {
		z_stream z;
		memset(&z, 0, sizeof(z));
		if (inflateInit2(&z, 15 + 32) != Z_OK)
			return nx_errf(err, -ENOMEM, "cannot start zlib");
		z.next_in = (Bytef *)in;
		z.avail_in = (uInt)in_len;
		z.next_out = (Bytef *)buf;
		z.avail_out = (uInt)out_len;
		int zr = inflate(&z, Z_FINISH);
		size_t got = z.total_out;
		inflateEnd(&z);
		if (zr != Z_STREAM_END || got != out_len)
			return bad(f, NX_ECORRUPT, at, "a gzip page that does not inflate", err);
	} else if (codec == CODEC_SNAPPY) {
		if (unsnappy(in, in_len, (uint8_t *)buf, out_len))
			return bad(f, NX_ECORRUPT, at, "a snappy page that does not inflate", err);
	} else {
		return bad(f, NX_EVERSION, at, "a compression this reader does not read (zstd, "
			   "snappy, gzip or none)", err);
	}
	*out = (const uint8_t *)buf;
	return 0;
}

/* A PageHeader's fields this reader uses. */
struct page {
	int64_t type, usize, csize;
	int64_t values, encoding, def_enc;      /* data page v1 / dictionary page */
	int64_t v2_def_len, v2_rep_len, v2_compressed;
};

static int read_page_struct(struct nx_tc_in *in, int16_t which, struct page *p,
			    struct nx_err *err)
{
	int16_t last = 0, id;
	int type, rc;

	for (;;) {
		if ((rc = nx_tc_read_field(in, last, &type, &id, err)))
			return rc;
		if (type == NX_TC_STOP)
			return 0;
		int64_t *v = NULL;
		if (which == 5) /* DataPageHeader */
			v = id == 1 ? &p->values : id == 2 ? &p->encoding : id == 3 ? &p->def_enc : NULL;
		else if (which == 7) /* DictionaryPageHeader */
			v = id == 1 ? &p->values : id == 2 ? &p->encoding : NULL;
		else if (which == 8) /* DataPageHeaderV2 */
			v = id == 1 ? &p->values : id == 4 ? &p->encoding : id == 5 ? &p->v2_def_len
			  : id == 6 ? &p->v2_rep_len : NULL;
		if (which == 8 && id == 7 && (type == NX_TC_TRUE || type == NX_TC_FALSE)) {
			p->v2_compressed = type == NX_TC_TRUE;
		} else if (v) {
			if ((rc = read_i(in, type, id, v, err)))
				return rc;
		} else if (type != NX_TC_TRUE && type != NX_TC_FALSE &&
			   (rc = nx_tc_skip(in, type, err))) {
			return rc;
		}
		last = id;
	}
}

static int read_page_header(struct nx_tc_in *in, struct page *p, struct nx_err *err)
{
	int16_t last = 0, id;
	int type, rc;

	memset(p, 0, sizeof(*p));
	p->type = p->usize = p->csize = -1;
	p->v2_compressed = 1;
	for (;;) {
		if ((rc = nx_tc_read_field(in, last, &type, &id, err)))
			return rc;
		if (type == NX_TC_STOP)
			return 0;
		if (id == 1 || id == 2 || id == 3)
			rc = read_i(in, type, id, id == 1 ? &p->type : id == 2 ? &p->usize : &p->csize,
				    err);
		else if ((id == 5 || id == 7 || id == 8) &&
			 !(rc = nx_pq_want(in, type, NX_TC_STRUCT, id, err)))
			rc = read_page_struct(in, id, p, err);
		else if (id != 5 && id != 7 && id != 8)
			rc = nx_tc_skip(in, type, err);
		if (rc)
			return rc;
		last = id;
	}
}

/* ---- levels and values -------------------------------------------------------------- */

/* A reader of the RLE/bit-packed hybrid of width bw over [p, end). */
struct hybrid {
	const uint8_t *p, *end;
	int bw;
	uint32_t run, value; /* an RLE run: run values of value */
	uint32_t packed;     /* bit-packed values left in the current group run */
	const uint8_t *packed_end; /* where the bit-packed run's bytes end (or the page's) */
	uint64_t bits;
	int nbits;
};

/* Reads the next run's header once the current run is used up. */
static int hybrid_refill(struct hybrid *h)
{
	while (!h->run && !h->packed) {
		/* the next run's header: a varint, bit 0 telling bit-packed from RLE */
		uint64_t hdr = 0;
		for (int shift = 0;; shift += 7) {
			if (h->p >= h->end || shift > 35)
				return -1;
			uint8_t b = *h->p++;
			hdr |= (uint64_t)(b & 0x7f) << shift;
			if (!(b & 0x80))
				break;
		}
		if (hdr & 1) {
			if ((hdr >> 1) > ((uint64_t)1 << 28))
				return -1;
			h->packed = (uint32_t)(hdr >> 1) * 8;
			h->bits = 0;
			h->nbits = 0;
			/* groups of 8 values take bw bytes each */
			uint64_t bytes = (hdr >> 1) * (uint64_t)h->bw;
			h->packed_end = bytes < (uint64_t)(h->end - h->p) ? h->p + bytes : h->end;
		} else {
			int bytes = (h->bw + 7) / 8;
			if ((hdr >> 1) > ((uint64_t)1 << 31) || h->end - h->p < bytes)
				return -1;
			h->run = (uint32_t)(hdr >> 1);
			h->value = 0;
			for (int i = 0; i < bytes; i++)
				h->value |= (uint32_t)*h->p++ << (8 * i);
		}
	}
	return 0;
}

/* Of the current bit-packed run, up to k values into out whose 8 bytes from the one
 * they start in are all within the page: each loaded on its own (no chain of shifts
 * through a buffer), the buffer then left as hybrid_get's refill would leave it (the
 * bits of the byte begun, none above). Returns how many. */
static size_t unpack_far(struct hybrid *h, uint32_t *out, size_t k)
{
	int bw = h->bw;
	/* the first value's bit, counted from the byte `start` */
	size_t back = ((size_t)h->nbits + 7) / 8;
	const uint8_t *start = h->p - back;
	uint64_t off = back * 8 - (uint64_t)h->nbits;
	size_t bytes = (size_t)(h->end - start), m; /* the page's: a load may pass the run */

	if (!bw || !k || bytes < 8)
		return 0;
	/* value i starts at bit off + i * bw and needs its byte and 7 more */
	uint64_t last_bit = (uint64_t)(bytes - 8) * 8 + 7;
	if (last_bit < off)
		return 0;
	m = (size_t)((last_bit - off) / (uint64_t)bw) + 1;
	m = m < k ? m : k;
	uint64_t mask = ~0ull >> (64 - bw);
	for (size_t i = 0; i < m; i++) {
		uint64_t bit = off + (uint64_t)i * (uint64_t)bw, word;
		memcpy(&word, start + bit / 8, 8);
		out[i] = (uint32_t)((word >> (bit % 8)) & mask);
	}
	uint64_t end = off + (uint64_t)m * (uint64_t)bw;
	h->p = start + end / 8;
	h->bits = 0;
	h->nbits = 0;
	if (end % 8) { /* the rest of a byte begun */
		h->bits = (uint64_t)*h->p++ >> (end % 8);
		h->nbits = (int)(8 - end % 8);
	}
	return m;
}

/* The next n values into out[0..n): runs filled at once, bit-packed values loaded one
 * by one where 8 bytes of the page follow them (unpack_far), else (the page's last 8
 * bytes) unpacked from a 64-bit buffer refilled a byte at a time. -1 when the bytes end
 * before them. */
static int hybrid_get(struct hybrid *h, uint32_t *out, size_t n)
{
	while (n) {
		if (hybrid_refill(h))
			return -1;
		if (h->run) {
			size_t k = h->run < n ? h->run : n;
			uint32_t v = h->value;
			for (size_t i = 0; i < k; i++)
				out[i] = v;
			h->run -= (uint32_t)k;
			out += k;
			n -= k;
			continue;
		}
		size_t k = h->packed < n ? h->packed : n;
		size_t fast = unpack_far(h, out, k);
		int bw = h->bw, nbits = h->nbits;
		uint64_t bits = h->bits, mask = bw ? (~0ull >> (64 - bw)) : 0;
		const uint8_t *q = h->p, *qend = h->packed_end;
		for (size_t i = fast; i < k; i++) {
			if (nbits < bw) {
				while (nbits <= 56 && q < qend) {
					bits |= (uint64_t)*q++ << nbits;
					nbits += 8;
				}
				if (nbits < bw)
					return -1;
			}
			out[i] = (uint32_t)(bits & mask);
			bits = bw < 64 ? bits >> bw : 0;
			nbits -= bw;
		}
		h->bits = bits;
		h->nbits = nbits;
		h->p = q;
		h->packed -= (uint32_t)k;
		if (!h->packed)
			h->p = h->packed_end; /* the rest of the run's last byte is padding */
		out += k;
		n -= k;
	}
	return 0;
}

/* Room for rows in cb's row arrays (their contents dropped). They are large, so each
 * block starts on a page; a pass reads row r of a dozen columns together, and arrays at
 * the same offset within their pages would all fall in the same set of the CPU's
 * 8-way L1 cache and evict each other at every row. So the arrays of colbuf number
 * which start 64 bytes (a cache line) times which apart, modulo a page. */
#define ROW_LINE ((size_t)64)
#define ROW_PAGE ((size_t)4096)
static void col_room(struct colbuf *cb, size_t rows, size_t which)
{
	size_t at = (which * ROW_LINE) % ROW_PAGE;
	size_t sz[5] = { rows, rows * sizeof(*cb->i64), rows * sizeof(*cb->f64),
			 rows * sizeof(*cb->str), rows * sizeof(*cb->len) };
	size_t off[5];
	uint8_t *m;

	if (rows <= cb->cap)
		return;
	for (size_t i = 0; i < 5; i++) {
		off[i] = at;
		at += (sz[i] + ROW_LINE - 1) / ROW_LINE * ROW_LINE;
	}
	free(cb->rows_mem);
	cb->rows_mem = m = nx_xmalloc(at);
	cb->valid = m + off[0];
	cb->i64 = (int64_t *)(void *)(m + off[1]);
	cb->f64 = (double *)(void *)(m + off[2]);
	cb->str = (const char **)(void *)(m + off[3]);
	cb->len = (uint32_t *)(void *)(m + off[4]);
	cb->cap = rows;
}

/* The next w bytes of [*p, end) into v; false when fewer are left. */
static bool take(const uint8_t **p, const uint8_t *end, void *v, size_t w)
{
	if ((size_t)(end - *p) < w)
		return false;
	memcpy(v, *p, w);
	*p += w;
	return true;
}

/* n PLAIN values of a physical type from [p, end) into the dictionary (dict) or the
 * rows whose valid byte is set from row on (values, n of them; when n is rows - row,
 * every row, without reading the valid bytes). */
static int plain(struct colbuf *cb, int ptype, const uint8_t *p, const uint8_t *end, size_t n,
		 bool dict, size_t row, size_t rows)
{
	int64_t *i64 = dict ? cb->d_i64 : cb->i64;
	double *f64 = dict ? cb->d_f64 : cb->f64;
	const char **str = dict ? cb->d_str : cb->str;
	uint32_t *lens = dict ? cb->d_len : cb->len;
	size_t at = row;
	bool all = !dict && n == rows - row;

	for (size_t i = 0; i < n; i++) {
		size_t slot;
		int32_t i32;
		float f32;
		uint32_t len;

		if (dict) {
			slot = i;
		} else if (all) {
			slot = at++;
		} else {
			while (at < rows && !cb->valid[at])
				at++;
			if (at >= rows)
				return -1;
			slot = at++;
		}
		switch (ptype) {
		case T_BOOLEAN:
			if (p + i / 8 >= end)
				return -1;
			i64[slot] = (p[i / 8] >> (i % 8)) & 1;
			break;
		case T_INT32:
			if (!take(&p, end, &i32, 4))
				return -1;
			i64[slot] = i32;
			break;
		case T_INT64:
			if (!take(&p, end, &i64[slot], 8))
				return -1;
			break;
		case T_FLOAT:
			if (!take(&p, end, &f32, 4))
				return -1;
			f64[slot] = f32;
			break;
		case T_DOUBLE:
			if (!take(&p, end, &f64[slot], 8))
				return -1;
			break;
		default: /* BYTE_ARRAY */
			if (!take(&p, end, &len, 4) || (size_t)(end - p) < len)
				return -1;
			str[slot] = (const char *)p;
			lens[slot] = len;
			p += len;
			break;
		}
	}
	return 0;
}

static void dict_room(struct colbuf *cb, size_t n)
{
	if (n <= cb->d_cap)
		return;
	cb->d_i64 = nx_xrealloc(cb->d_i64, n * sizeof(*cb->d_i64));
	cb->d_f64 = nx_xrealloc(cb->d_f64, n * sizeof(*cb->d_f64));
	cb->d_str = nx_xrealloc(cb->d_str, n * sizeof(*cb->d_str));
	cb->d_len = nx_xrealloc(cb->d_len, n * sizeof(*cb->d_len));
	cb->d_cap = n;
}

/* PLAIN values of a data page whose n rows from row on are all valid: numbers copied
 * as a block (the host is little-endian, as parquet), the rest by plain(). */
static int plain_all(struct colbuf *cb, int ptype, const uint8_t *p, const uint8_t *end,
		     size_t row, size_t n)
{
	size_t have = (size_t)(end - p);

	switch (ptype) {
	case T_INT64:
	case T_DOUBLE:
		if (have / 8 < n)
			return -1;
		memcpy(ptype == T_INT64 ? (void *)(cb->i64 + row) : (void *)(cb->f64 + row), p,
		       n * 8);
		return 0;
	case T_INT32:
	case T_FLOAT:
		if (have / 4 < n)
			return -1;
		for (size_t i = 0; i < n; i++) {
			int32_t i32;
			float f32;
			if (ptype == T_INT32) {
				memcpy(&i32, p + 4 * i, 4);
				cb->i64[row + i] = i32;
			} else {
				memcpy(&f32, p + 4 * i, 4);
				cb->f64[row + i] = f32;
			}
		}
		return 0;
	default:
		return plain(cb, ptype, p, end, n, false, row, row + n);
	}
}

/* The values of a data page: rows [row, row + n) of which `present` are not NULL. -1
 * when the values are short, -2 for an encoding this reader lacks, -3 for a dictionary
 * index past the dictionary. Dictionary indices are decoded in one batch (a string
 * column's into idx, 0 for a NULL row; a number's into scratch), then the values looked
 * up. */
static int page_values(struct colbuf *cb, uint32_t *scratch, int ptype, int64_t enc,
		       const uint8_t *p, const uint8_t *end, size_t row, size_t n, size_t present)
{
	if (enc == ENC_PLAIN) {
		cb->all_dict = false;
		if (present == n)
			return plain_all(cb, ptype, p, end, row, n);
		return plain(cb, ptype, p, end, present, false, row, row + n);
	}
	if (enc != ENC_PLAIN_DICT && enc != ENC_RLE_DICT)
		return -2;
	/* a string column's indices are kept (nx_pqr_col.idx), a number's only decoded */
	bool keep = ptype == T_BYTE_ARRAY;
	if (keep && cb->idx_cap < cb->cap) {
		free(cb->idx);
		cb->idx = nx_xmalloc(cb->cap * sizeof(*cb->idx));
		cb->idx_cap = cb->cap;
	}
	uint32_t *idx = keep ? cb->idx + row : NULL;
	if (!present) {
		if (keep)
			memset(idx, 0, n * sizeof(*idx));
		return 0;
	}
	if (p >= end || *p > 32)
		return -1;
	struct hybrid h = { .p = p + 1, .end = end, .bw = *p };
	uint32_t *got = keep && present == n ? idx : scratch;
	if (hybrid_get(&h, got, present))
		return -1;
	/* each index is checked against the dictionary as it is looked up */
	const uint8_t *valid = cb->valid + row;
	size_t nd = cb->d_n;
	if (keep) {
		if (got != idx) /* spread over the valid rows, 0 in the NULL ones */
			for (size_t r = 0, j = 0; r < n; r++)
				idx[r] = valid[r] ? got[j++] : 0;
		const char **str = cb->str + row, *const *d_str = cb->d_str;
		uint32_t *len = cb->len + row;
		const uint32_t *d_len = cb->d_len;
		for (size_t r = 0; r < n; r++) {
			uint32_t i = idx[r];
			if (i >= nd)
				return -3;
			str[r] = d_str[i];
			len[r] = d_len[i];
		}
	} else if (ptype == T_FLOAT || ptype == T_DOUBLE) {
		double *out = cb->f64 + row;
		const double *d_f64 = cb->d_f64;
		for (size_t r = 0, j = 0; r < n; r++)
			if (present == n || valid[r]) {
				uint32_t i = got[j++];
				if (i >= nd)
					return -3;
				out[r] = d_f64[i];
			}
	} else {
		int64_t *out = cb->i64 + row;
		const int64_t *d_i64 = cb->d_i64;
		for (size_t r = 0, j = 0; r < n; r++)
			if (present == n || valid[r]) {
				uint32_t i = got[j++];
				if (i >= nd)
					return -3;
				out[r] = d_i64[i];
			}
	}
	return 0;
}

/* Definition levels of n rows from row on (max level 1): valid bytes; *present gets how
 * many are set. */
static int levels(struct colbuf *cb, uint32_t *scratch, const uint8_t *p, const uint8_t *end,
		  size_t row, size_t n, size_t *present)
{
	struct hybrid h = { .p = p, .end = end, .bw = 1 };

	*present = 0;
	for (size_t r = row; r < row + n;) {
		uint32_t v;
		if (hybrid_refill(&h))
			return -1;
		if (h.run) { /* a run of one level (all rows valid, mostly) at once */
			size_t k = h.run < row + n - r ? h.run : row + n - r;
			if (h.value > 1)
				return -1;
			memset(cb->valid + r, (int)h.value, k);
			*present += h.value * k;
			h.run -= (uint32_t)k;
			r += k;
			continue;
		}
		/* a bit-packed run (levels that change often), in one batch */
		size_t k = h.packed < row + n - r ? h.packed : row + n - r;
		if (hybrid_get(&h, scratch, k))
			return -1;
		for (size_t i = 0; i < k; i++) {
			v = scratch[i];
			if (v > 1)
				return -1;
			cb->valid[r + i] = (uint8_t)v;
			*present += v;
		}
		r += k;
	}
	return 0;
}

/* Reads column k's chunk of the current row group into its arrays; *all_present is
 * set when every row holds a value (a REQUIRED column, or no NULL in the levels). */
static int read_column(struct nx_pqr *r, const struct file *f, size_t k, size_t rows,
		       bool *all_present, struct nx_err *err)
{
	struct colbuf *cb = &r->cols[r->set][k];
	const struct chunk *c = &f->chunks[(size_t)r->group * r->ncols + k];
	int ptype = f->ptype[k], rc;
	size_t row = 0, rows_present = 0;
	struct nx_tc_in in;

	col_room(cb, rows ? rows : 1, r->set * r->ncols + k);
	if (r->scratch_cap < rows) {
		free(r->scratch);
		r->scratch = nx_xmalloc(rows * sizeof(*r->scratch));
		r->scratch_cap = rows;
	}
	cb->npages = 0;
	cb->d_n = 0;
	cb->all_dict = true;
	*all_present = false;
	if (ptype < 0) {
		memset(cb->valid, 0, rows);
		return 0;
	}
	if (c->len > SIZE_MAX / 2)
		return bad(f, NX_ECORRUPT, c->start, "a column chunk too large", err);
	if (c->len > cb->raw_cap) {
		free(cb->raw);
		cb->raw = nx_xmalloc(c->len);
		cb->raw_cap = c->len;
	}
	if ((rc = read_at(f, cb->raw, c->len, c->start, err)))
		return rc;
	nx_tc_in_init(&in, cb->raw, c->len, f->path, c->start);
	while (row < rows) {
		struct page pg;
		const uint8_t *data;
		uint64_t at = nx_tc_offset(&in);
		if (in.p >= in.end)
			return bad(f, NX_ETRUNC, at, "a column chunk ends before its rows", err);
		if ((rc = read_page_header(&in, &pg, err)))
			return rc;
		at = nx_tc_offset(&in);
		if (pg.csize < 0 || pg.usize < 0 || (uint64_t)pg.usize > MAX_PAGE ||
		    (uint64_t)pg.csize > (uint64_t)(in.end - in.p))
			return bad(f, NX_ECORRUPT, at, "a page outside its column chunk", err);
		const uint8_t *body = in.p;
		in.p += pg.csize;
		if (pg.type == PAGE_INDEX)
			continue;
		if (pg.type == PAGE_DICT) {
			/* one dictionary, before the data pages: another would renumber */
			if (row || cb->d_n)
				cb->all_dict = false;
			if (pg.values < 0 || (uint64_t)pg.values > (uint64_t)pg.usize + 1 ||
			    (pg.encoding != ENC_PLAIN && pg.encoding != ENC_PLAIN_DICT))
				return bad(f, NX_ECORRUPT, at, "a dictionary page this reader does "
					   "not read", err);
			if ((rc = inflate_page(r, cb, f, c->codec, body, (size_t)pg.csize,
					       (size_t)pg.usize, at, &data, err)))
				return rc;
			dict_room(cb, (size_t)pg.values + 1);
			if (plain(cb, ptype, data, data + pg.usize, (size_t)pg.values, true, 0, 0))
				return bad(f, NX_ECORRUPT, at, "a dictionary shorter than its values",
					   err);
			cb->d_n = (size_t)pg.values;
			continue;
		}
		if (pg.type != PAGE_DATA && pg.type != PAGE_DATA_V2)
			return bad(f, NX_EVERSION, at, "a page of a type this reader does not read",
				   err);
		if (pg.values < 0 || (uint64_t)pg.values > rows - row)
			return bad(f, NX_ECORRUPT, at, "a page with more values than its row group",
				   err);
		size_t n = (size_t)pg.values, present = n;
		const uint8_t *vals, *end;
		if (pg.type == PAGE_DATA) {
			if ((rc = inflate_page(r, cb, f, c->codec, body, (size_t)pg.csize,
					       (size_t)pg.usize, at, &data, err)))
				return rc;
			vals = data;
			end = data + pg.usize;
			if (f->max_def[k]) {
				uint32_t len;
				if (end - vals < 4)
					return bad(f, NX_ECORRUPT, at, "a page without its levels", err);
				memcpy(&len, vals, 4);
				if (len > (size_t)(end - vals - 4) ||
				    levels(cb, r->scratch, vals + 4, vals + 4 + len, row, n,
					   &present))
					return bad(f, NX_ECORRUPT, at, "bad definition levels", err);
				vals += 4 + len;
			}
		} else {
			/* v2: levels first, uncompressed; then the values, maybe compressed */
			uint64_t lv = (uint64_t)pg.v2_def_len + (uint64_t)pg.v2_rep_len;
			if (pg.v2_def_len < 0 || pg.v2_rep_len < 0 || lv > (uint64_t)pg.csize ||
			    lv > (uint64_t)pg.usize)
				return bad(f, NX_ECORRUPT, at, "page levels longer than the page", err);
			if (f->max_def[k] && levels(cb, r->scratch, body + pg.v2_rep_len, body + lv,
						    row, n, &present))
				return bad(f, NX_ECORRUPT, at, "bad definition levels", err);
			if ((rc = inflate_page(r, cb, f, pg.v2_compressed ? c->codec : CODEC_NONE,
					       body + lv, (size_t)(pg.csize - (int64_t)lv),
					       (size_t)(pg.usize - (int64_t)lv), at, &data, err)))
				return rc;
			vals = data;
			end = data + (pg.usize - (int64_t)lv);
		}
		if (!f->max_def[k])
			memset(cb->valid + row, 1, n);
		rc = page_values(cb, r->scratch, ptype, pg.encoding, vals, end, row, n, present);
		if (rc == -2)
			return bad(f, NX_EVERSION, at, "an encoding this reader does not read (PLAIN "
				   "or dictionary)", err);
		if (rc == -3)
			return bad(f, NX_ECORRUPT, at, "a dictionary index past the chunk's "
				   "dictionary", err);
		if (rc)
			return bad(f, NX_ECORRUPT, at, "page values shorter than its rows", err);
		row += n;
		rows_present += present;
	}
	*all_present = rows_present == rows;
	return 0;
}

int nx_pqr_next(struct nx_pqr *r, const struct nx_pqr_batch **b, struct nx_err *err)
{
	struct file *f;
	size_t rows;
	int rc;

	*b = NULL;
	while (r->cur < r->nfiles && r->group >= r->files[r->cur].ngroups) {
		r->cur++;
		r->group = 0;
	}
	if (r->cur >= r->nfiles)
		return 0;
	f = &r->files[r->cur];
	rows = (size_t)f->group_rows[r->group];
	for (size_t k = 0; k < r->ncols; k++) {
		struct colbuf *cb = &r->cols[r->set][k];
		struct nx_pqr_col *col = &r->batch[r->set].col[k];
		bool all_present;
		if ((rc = read_column(r, f, k, rows, &all_present, err)))
			return rc;
		col->kind = f->ptype[k] < 0 ? NX_PQR_NULL : kind_of(f->ptype[k]);
		col->valid = all_present ? NULL : cb->valid;
		col->i64 = cb->i64;
		col->f64 = cb->f64;
		col->str = cb->str;
		col->len = cb->len;
		bool dict = f->ptype[k] == T_BYTE_ARRAY && cb->all_dict && cb->d_n;
		col->idx = dict ? cb->idx : NULL;
		col->dict_str = dict ? cb->d_str : NULL;
		col->dict_len = dict ? cb->d_len : NULL;
		col->ndict = dict ? cb->d_n : 0;
	}
	r->batch[r->set].rows = rows;
	r->batch[r->set].ncols = r->ncols;
	r->group++;
	*b = &r->batch[r->set];
	r->set = (r->set + 1) % r->nsets;
	return 0;
}

void nx_pqr_two_sets(struct nx_pqr *r)
{
	r->nsets = 2;
}

void nx_pqr_close(struct nx_pqr *r)
{
	if (!r)
		return;
	for (size_t i = 0; i < r->nfiles; i++) {
		struct file *f = &r->files[i];
		if (f->fd >= 0)
			close(f->fd);
		free(f->path);
		free(f->group_rows);
		free(f->chunks);
	}
	for (size_t k = 0; k < r->ncols; k++) {
		for (size_t set = 0; set < 2; set++) {
			struct colbuf *cb = &r->cols[set][k];
			free(cb->raw);
			for (size_t i = 0; i < cb->pages_cap; i++)
				free(cb->pages[i]);
			free(cb->pages);
			free(cb->page_cap);
			free(cb->rows_mem);
			free(cb->d_i64);
			free(cb->d_f64);
			free(cb->d_str);
			free(cb->d_len);
			free(cb->idx);
		}
		free(r->names[k]);
	}
	free(r->names);
	free(r->files);
	ZSTD_freeDCtx(r->zd);
	free(r->scratch);
	free(r);
}
