/* SPDX-License-Identifier: MIT
 * parquet_write.c: parquet files from batches of rows, without DuckDB's writer (see
 * parquet_write.h). A column collects the levels of a row group and its values, into a
 * dictionary or PLAIN; at the group's end each column becomes one compressed data page,
 * after a dictionary page when it has one, and its ColumnChunk is appended to the
 * encoded row groups the footer lists. A keyed column's cells (parquet_write.h, "Keyed
 * columns") take their index from a memo per key when they can. */
#include "common/compat.h"
#include "db/parquet_write.h"
#include "db/duck.h"
#include "common/assert.h"
#include "common/le.h"
#include "common/log.h"
#include "common/strbuf.h"
#include "common/xalloc.h"
#include "db/parquet_dict.h"
#include "db/parquet_meta.h"
#include "db/parquet_rle.h"
#include "db/parquet_empty.h"
#include "db/rowbuf.h"
#include "db/thrift_compact.h"
#include "schema/schema.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zstd.h>

/* zstd's level: 1, its fastest. On the shared traces' SystemProfileEvents it also made
 * smaller files than level 3, DuckDB's (hta 1.240 against 1.269 MB, owlv2 1.894
 * against 1.972 MB; DuckDB's own files: 1.254 and 2.005 MB). */
#define ZSTD_LEVEL 1
/* A row group ends early when one column's values pass this. */
#define GROUP_BYTES ((size_t)64 << 20)
/* A scalar column's chunk (not a boolean's) is dictionary-encoded unless its distinct
 * values pass a quarter of the row group's rows or 1 MiB PLAIN; past either it is
 * written PLAIN, and so are the column's next DICT_SKIP chunks before the dictionary is
 * tried again (a column of all-distinct values, such as a timestamp, would hash a
 * quarter of its values in vain in each). Integers and floats are there as in DuckDB's
 * files: at 10M records they made Instruction 124 MB instead of 134 and DmaPacket 25
 * instead of 31 (DuckDB's: 133 and 20), for no CPU seen (docs/memory.md). */
#define DICT_FRACTION 4
#define DICT_BYTES ((size_t)1 << 20)
#define DICT_SKIP 15
/* The memos of a source's keyed columns, at most (4 bytes per key and column), when the
 * source has no fill: 16 MiB is about 100,000 instructions in a NEFF for the 42 keyed
 * columns of Instruction. Past it the writer ignores the keys (the same file, the usual
 * way). A filled source has at most NX_ROW_KEYS_FILLED keys: 8 MiB at most. */
#define MEMO_BYTES ((size_t)16 << 20)

enum { PAGE_DATA = 0, PAGE_DICT = 2, ENC_PLAIN = 0, ENC_RLE = 3, ENC_RLE_DICT = 8,
       CODEC_ZSTD = 6 };

struct col {
	const struct nx_field *f;
	struct nx_pq_leaf leaf;
	enum nx_coltype ct;
	int max_def;           /* 1 for a scalar, 3 for a list */
	struct nx_strbuf vals; /* the row group's values, PLAIN (booleans: a byte each) */
	struct nx_pq_dict dict; /* or their dictionary and indices, when dict_on */
	bool dict_able, dict_on;
	unsigned dict_skip;    /* chunks left to write PLAIN before trying it again */
	uint8_t *def, *rep;    /* its levels, a byte each (rep: lists only) */
	size_t nlev, levcap;
	uint64_t nulls;        /* NULL cells of a scalar */
	bool minmax, nan;      /* min/max hold a value; a float column saw NaN */
	union {
		int64_t i;
		double d;
	} min, max;
	/* a keyed column's memo: key -> gen << 16 | its value's index + 1 (or MEMO_NULL),
	 * of this chunk when gen is the column's (bumped when the chunk's dictionary is;
	 * 1 .. MEMO_GENS, the memo zeroed when it wraps). 4 bytes a key, not 8: Instruction's
	 * 42 memos then hold 430 KB, not 860, at 2,560 keys, and a row group's lookups miss
	 * the core's cache half as often (docs/memory.md, "Where view's CPU goes at 10M") */
	uint32_t *memo;
	uint32_t gen;
	uint64_t memo_hits;    /* its cells that took their index from the memo */
};

/* A memo's NULL (a filled source's: its key's cell is NULL); an index from it on is not
 * memoed (a dictionary of 65,535 values or more: row groups over 262,140 rows). */
#define MEMO_NULL 0xFFFFu
/* The generations of a memo before it is zeroed and they start again. */
#define MEMO_GENS 0xFFFFu

struct nx_pqw {
	const struct nx_table *t;
	char *path, *tmp;
	int fd;
	uint64_t off;            /* bytes written so far */
	unsigned long row_group;
	uint64_t rows, group_rows;
	struct col *cols;
	struct nx_strbuf page;   /* a page's body before compression */
	struct nx_strbuf hdr;    /* a page's header */
	struct nx_strbuf groups; /* the RowGroup structs written so far, encoded */
	uint32_t ngroups;
	ZSTD_CCtx *zc;
	void *zbuf;
	size_t zcap;
	uint32_t nkeys;          /* the source's keys (0: the columns are not keyed) */
	/* A filled source's (struct nx_row_keys' fill): the keyed cells of key k are at
	 * row k % svec of static batch k / svec; column i's data and validity there are
	 * sdata and svalid [batch * nfields + i]. */
	duckdb_data_chunk *statics;
	size_t nstatics, svec;
	void **sdata;
	uint64_t **svalid;
};

/* ---- writing the file -------------------------------------------------------------- */

static int put(struct nx_pqw *w, const void *data, size_t len, struct nx_err *err)
{
	const char *p = data;

	while (len) {
		ssize_t n = write(w->fd, p, len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return nx_errf(err, n < 0 ? -errno : -EIO,
				       "cannot write '%s' at byte %" PRIu64 ": %s", w->tmp, w->off,
				       n < 0 ? strerror(errno) : "nothing written");
		p += n;
		len -= (size_t)n;
		w->off += (uint64_t)n;
	}
	return 0;
}

int nx_pqw_open(struct nx_pqw **out, const struct nx_table *t, const char *path,
		unsigned long row_group, struct nx_err *err)
{
	struct nx_pqw *w = nx_xcalloc(1, sizeof(*w));

	*out = NULL;
	w->t = t;
	w->path = nx_xstrdup(path);
	w->tmp = nx_xasprintf("%s.tmp.%d", path, (int)getpid());
	w->row_group = row_group ? row_group : 8192UL;
	w->fd = open(w->tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (w->fd < 0) {
		int rc = nx_errf(err, -errno, "cannot create '%s': %s", w->tmp, strerror(errno));
		free(w->tmp);
		free(w->path);
		free(w);
		return rc;
	}
	w->zc = ZSTD_createCCtx();
	if (!w->zc) {
		nx_pqw_abort(w);
		return nx_errf(err, -ENOMEM, "cannot start zstd for '%s'", path);
	}
	w->cols = nx_xcalloc(t->nfields, sizeof(*w->cols));
	for (size_t i = 0; i < t->nfields; i++) {
		struct col *c = &w->cols[i];
		c->f = &t->fields[i];
		c->leaf = nx_pq_leaf_of(c->f);
		c->ct = nx_rowbuf_coltype(c->f);
		c->max_def = c->leaf.list ? 3 : 1;
		c->dict_able = c->dict_on = !c->leaf.list && c->ct != NX_COL_BOOLEAN;
		c->gen = 1; /* a memo's zeros are of no chunk */
		nx_pq_dict_reset(&c->dict, w->row_group / DICT_FRACTION, DICT_BYTES);
	}
	int rc = put(w, "PAR1", 4, err);
	if (rc) {
		nx_pqw_abort(w);
		return rc;
	}
	*out = w;
	return 0;
}

/* ---- collecting a row group ---------------------------------------------------------- */

static void levels_room(struct col *c, size_t more)
{
	if (c->nlev + more <= c->levcap)
		return;
	c->levcap = c->levcap * 2 > c->nlev + more ? c->levcap * 2 : c->nlev + more + 1024;
	c->def = nx_xrealloc(c->def, c->levcap);
	if (c->leaf.list)
		c->rep = nx_xrealloc(c->rep, c->levcap);
}

static inline void see_i64(struct col *c, int64_t v)
{
	if (!c->minmax) {
		c->min.i = c->max.i = v;
		c->minmax = true;
	} else if (v < c->min.i) {
		c->min.i = v;
	} else if (v > c->max.i) {
		c->max.i = v;
	}
}

static inline void see_f64(struct col *c, double v)
{
	if (isnan(v)) {
		c->nan = true;
	} else if (!c->minmax) {
		c->min.d = c->max.d = v;
		c->minmax = true;
	} else if (v < c->min.d) {
		c->min.d = v;
	} else if (v > c->max.d) {
		c->max.d = v;
	}
}

static inline const char *str_of(const duckdb_string_t *s, uint32_t *len)
{
	*len = s->value.inlined.length;
	return *len <= sizeof(s->value.inlined.inlined) ? s->value.inlined.inlined
							 : s->value.pointer.ptr;
}

static inline void put_str(struct nx_strbuf *vals, const duckdb_string_t *s)
{
	uint32_t len;
	const char *p = str_of(s, &len);
	uint8_t le[4];

	nx_put_le32(le, len);
	nx_strbuf_add(vals, le, 4);
	nx_strbuf_add(vals, p, len);
}

/* A value of a scalar column, len bytes at p (a string: after its length), into the
 * column's dictionary while it has one, else PLAIN (the chunk's values so far too,
 * when the dictionary has just passed its bound). */
static inline __attribute__((always_inline)) void add_value(struct col *c, const void *p,
							    uint32_t len, bool str)
{
	if (c->dict_on) {
		if (nx_pq_dict_add(&c->dict, p, len, str))
			return;
		nx_pq_dict_spill(&c->dict, &c->vals);
		c->dict_on = false;
		c->dict_skip = DICT_SKIP;
	}
	if (str) {
		uint8_t le[4];
		nx_put_le32(le, len);
		nx_strbuf_add(&c->vals, le, 4);
	}
	nx_strbuf_add(&c->vals, p, len);
}

/* A keyed column's value of a row of key `key` (len bytes at p), when its key's memo
 * names the chunk's dictionary index of that very value: the index pushed with no hash,
 * and no min/max to update (a value of the dictionary was seen in this chunk). Any other
 * case (no key, no memo, a memo of an earlier chunk or of another value: a source that
 * broke its promise) is a miss, for the usual way. */
static inline bool memo_hit(struct col *c, uint32_t key, uint32_t nkeys, const void *p,
			    uint32_t len)
{
	if (!c->dict_on || key >= nkeys || c->memo[key] >> 16 != c->gen ||
	    (c->memo[key] & MEMO_NULL) == MEMO_NULL ||
	    !nx_pq_dict_add_at(&c->dict, (c->memo[key] & MEMO_NULL) - 1, p, len))
		return false;
	c->memo_hits++;
	return true;
}

/* After a miss added the value of a row of key `key` the usual way: its index, for the
 * key's next rows (none once the chunk went PLAIN). */
static inline void memo_note(struct col *c, uint32_t key, uint32_t nkeys)
{
	if (c->dict_on && key < nkeys && c->dict.idx[c->dict.nidx - 1] + 1 < MEMO_NULL)
		c->memo[key] = c->gen << 16 | (c->dict.idx[c->dict.nidx - 1] + 1);
}

/* Rows [from, to) of a scalar column of type ct. Values go in little-endian, as the
 * machine holds them (x86-64 and arm64 alike). Inline into add_scalar once per type and
 * keyed or not, ct and keyed constants there: no switch per row. A keyed column's value
 * (keyed: keys[r] is row r's key, below nkeys or not a key) is first looked up in its
 * key's memo (memo_hit). */
static inline __attribute__((always_inline)) void add_typed(struct col *c, const void *data,
							    const uint64_t *valid, size_t from,
							    size_t to, enum nx_coltype ct,
							    bool keyed, const uint32_t *keys,
							    uint32_t nkeys)
{
	for (size_t r = from; r < to; r++) {
		bool ok = nx_rowbuf_valid(valid, r);
		c->def[c->nlev++] = ok;
		if (!ok) {
			c->nulls++;
			continue;
		}
		switch (ct) {
		case NX_COL_BIGINT: {
			int64_t v = ((const int64_t *)data)[r];
			if (keyed && memo_hit(c, keys[r], nkeys, &v, 8))
				break;
			see_i64(c, v);
			add_value(c, &v, 8, false);
			if (keyed)
				memo_note(c, keys[r], nkeys);
			break;
		}
		case NX_COL_INTEGER: {
			int32_t v = ((const int32_t *)data)[r];
			if (keyed && memo_hit(c, keys[r], nkeys, &v, 4))
				break;
			see_i64(c, v);
			add_value(c, &v, 4, false);
			if (keyed)
				memo_note(c, keys[r], nkeys);
			break;
		}
		case NX_COL_DOUBLE: {
			double v = ((const double *)data)[r];
			if (keyed && memo_hit(c, keys[r], nkeys, &v, 8))
				break;
			see_f64(c, v);
			add_value(c, &v, 8, false);
			if (keyed)
				memo_note(c, keys[r], nkeys);
			break;
		}
		case NX_COL_FLOAT: {
			float v = ((const float *)data)[r];
			if (keyed && memo_hit(c, keys[r], nkeys, &v, 4))
				break;
			see_f64(c, v);
			add_value(c, &v, 4, false);
			if (keyed)
				memo_note(c, keys[r], nkeys);
			break;
		}
		case NX_COL_BOOLEAN:
			nx_strbuf_addch(&c->vals, ((const bool *)data)[r] ? 1 : 0);
			break;
		default: {
			uint32_t len;
			const char *p = str_of(&((const duckdb_string_t *)data)[r], &len);
			if (keyed && memo_hit(c, keys[r], nkeys, p, len))
				break;
			add_value(c, p, len, true);
			if (keyed)
				memo_note(c, keys[r], nkeys);
			break;
		}
		}
	}
}

/* Rows [from, to) of column ci (c), of type ct, keyed, of a filled source: a row with a
 * key has no cell in the batch; its key's memo gives its level and index with no value
 * read at all, or (a miss) its value is read from the key's static row and added the
 * usual way, and noted. A row of no key is read from the batch. */
static inline __attribute__((always_inline)) void add_filled(const struct nx_pqw *w,
							     struct col *c, size_t ci,
							     const void *data,
							     const uint64_t *valid, size_t from,
							     size_t to, enum nx_coltype ct,
							     const uint32_t *keys)
{
	const uint32_t gen = c->gen;

	for (size_t r = from; r < to; r++) {
		uint32_t key = keys[r];
		const void *d = data;
		const uint64_t *vm = valid;
		size_t at = r;
		if (key < w->nkeys) {
			uint32_t e = c->memo[key];
			if (e >> 16 == gen && c->dict_on) {
				uint32_t m = e & MEMO_NULL;
				if (m == MEMO_NULL) {
					c->def[c->nlev++] = 0;
					c->nulls++;
					c->memo_hits++;
					continue;
				}
				if (c->dict.nidx < c->dict.idxcap) {
					c->def[c->nlev++] = 1;
					c->dict.idx[c->dict.nidx++] = m - 1;
					c->memo_hits++;
					continue;
				}
			}
			size_t sb = key / w->svec * w->t->nfields + ci;
			d = w->sdata[sb];
			vm = w->svalid[sb];
			at = key % w->svec;
		}
		bool ok = nx_rowbuf_valid(vm, at);
		c->def[c->nlev++] = ok;
		if (!ok) {
			c->nulls++;
			if (key < w->nkeys && c->dict_on)
				c->memo[key] = gen << 16 | MEMO_NULL;
			continue;
		}
		switch (ct) {
		case NX_COL_BIGINT: {
			int64_t v = ((const int64_t *)d)[at];
			see_i64(c, v);
			add_value(c, &v, 8, false);
			break;
		}
		case NX_COL_INTEGER: {
			int32_t v = ((const int32_t *)d)[at];
			see_i64(c, v);
			add_value(c, &v, 4, false);
			break;
		}
		case NX_COL_DOUBLE: {
			double v = ((const double *)d)[at];
			see_f64(c, v);
			add_value(c, &v, 8, false);
			break;
		}
		case NX_COL_FLOAT: {
			float v = ((const float *)d)[at];
			see_f64(c, v);
			add_value(c, &v, 4, false);
			break;
		}
		default: {
			uint32_t len;
			const char *p = str_of(&((const duckdb_string_t *)d)[at], &len);
			add_value(c, p, len, true);
			break;
		}
		}
		if (key < w->nkeys && c->dict_on && c->dict.idx[c->dict.nidx - 1] + 1 < MEMO_NULL)
			c->memo[key] = gen << 16 | (c->dict.idx[c->dict.nidx - 1] + 1);
	}
}

/* Rows [from, to) of a scalar column of type ct (not a boolean): a filled source's keyed
 * column (add_filled), a keyed one while its chunk has a dictionary, or the usual way.
 * Inline once per type, ct a constant. */
static inline __attribute__((always_inline)) void add_as(const struct nx_pqw *w, struct col *c,
							 size_t ci, const void *data,
							 const uint64_t *valid, size_t from,
							 size_t to, const uint32_t *keys,
							 uint32_t nkeys, enum nx_coltype ct)
{
	if (c->memo && keys && w->statics)
		add_filled(w, c, ci, data, valid, from, to, ct, keys);
	else if (c->memo && keys && c->dict_on)
		add_typed(c, data, valid, from, to, ct, true, keys, nkeys);
	else
		add_typed(c, data, valid, from, to, ct, false, NULL, 0);
}

static void add_scalar(const struct nx_pqw *w, struct col *c, size_t ci, const void *data,
		       const uint64_t *valid, size_t from, size_t to, const uint32_t *keys,
		       uint32_t nkeys)
{
	levels_room(c, to - from);
	switch (c->ct) {
	case NX_COL_BIGINT: add_as(w, c, ci, data, valid, from, to, keys, nkeys, NX_COL_BIGINT); break;
	case NX_COL_INTEGER: add_as(w, c, ci, data, valid, from, to, keys, nkeys, NX_COL_INTEGER); break;
	case NX_COL_DOUBLE: add_as(w, c, ci, data, valid, from, to, keys, nkeys, NX_COL_DOUBLE); break;
	case NX_COL_FLOAT: add_as(w, c, ci, data, valid, from, to, keys, nkeys, NX_COL_FLOAT); break;
	case NX_COL_BOOLEAN: /* never keyed: no dictionary, and nx_pqw_keys keys none by a fill */
		NX_ASSERT(!(c->memo && keys && w->statics));
		add_typed(c, data, valid, from, to, NX_COL_BOOLEAN, false, NULL, 0);
		break;
	default: add_as(w, c, ci, data, valid, from, to, keys, nkeys, NX_COL_VARCHAR); break;
	}
}

/* Rows [from, to) of a list column: a NULL list is level 0, an empty one 1, an item
 * that is NULL 2 and one that is not 3; repetition 0 starts a row's list, 1 goes on
 * with it. */
static void add_list(struct col *c, duckdb_vector vec, const uint64_t *valid, size_t from,
		     size_t to)
{
	const duckdb_list_entry *e = duckdb_vector_get_data(vec);
	duckdb_vector child = duckdb_list_vector_get_child(vec);
	const void *items = duckdb_vector_get_data(child);
	const uint64_t *ivalid = duckdb_vector_get_validity(child);

	for (size_t r = from; r < to; r++) {
		size_t len = nx_rowbuf_valid(valid, r) ? (size_t)e[r].length : 0;
		levels_room(c, len ? len : 1);
		if (!nx_rowbuf_valid(valid, r) || !len) {
			c->rep[c->nlev] = 0;
			c->def[c->nlev++] = nx_rowbuf_valid(valid, r) ? 1 : 0;
			continue;
		}
		for (size_t k = 0; k < len; k++) {
			size_t i = (size_t)e[r].offset + k;
			bool ok = nx_rowbuf_valid(ivalid, i);
			c->rep[c->nlev] = k > 0;
			c->def[c->nlev++] = ok ? 3 : 2;
			if (!ok)
				continue;
			if (c->ct == NX_COL_LIST_BIGINT) {
				int64_t v = ((const int64_t *)items)[i];
				nx_strbuf_add(&c->vals, &v, 8);
			} else {
				put_str(&c->vals, &((const duckdb_string_t *)items)[i]);
			}
		}
	}
}

/* ---- a row group's pages and footer entries ---------------------------------------- */

/* Appends n levels of bit width bw (1 or 2) in the RLE/bit-packed hybrid
 * (db/parquet_rle.c), after their length (4 bytes, little-endian: data page v1). */
static void put_levels(struct nx_strbuf *out, const uint8_t *lv, size_t n, int bw)
{
	size_t at = out->len;

	NX_ASSERT(bw == 1 || bw == 2);
	nx_strbuf_add(out, "\0\0\0\0", 4);
	nx_pq_rle_put8(out, lv, n, bw);
	nx_put_le32((uint8_t *)out->buf + at, (uint32_t)(out->len - at - 4));
}

/* PLAIN booleans: one bit each, the first in the lowest bit. */
static void put_bools(struct nx_strbuf *out, const struct nx_strbuf *vals)
{
	for (size_t i = 0; i < vals->len; i += 8) {
		unsigned char byte = 0;
		for (size_t k = 0; k < 8 && i + k < vals->len; k++)
			byte |= (unsigned char)((vals->buf[i + k] & 1) << k);
		nx_strbuf_addch(out, (char)byte);
	}
}

static void put_i64_field(struct nx_strbuf *out, int16_t *last, int16_t id, int64_t v)
{
	nx_tc_write_field(out, *last, NX_TC_I64, id);
	nx_tc_write_zigzag(out, v);
	*last = id;
}

static void put_i32_field(struct nx_strbuf *out, int16_t *last, int16_t id, int32_t v)
{
	nx_tc_write_field(out, *last, NX_TC_I32, id);
	nx_tc_write_zigzag(out, v);
	*last = id;
}

static void put_bin_field(struct nx_strbuf *out, int16_t *last, int16_t id, const void *p,
			  size_t len)
{
	nx_tc_write_field(out, *last, NX_TC_BINARY, id);
	nx_tc_write_varint(out, len);
	nx_strbuf_add(out, p, len);
	*last = id;
}

/* Statistics (3 null_count, 5 max_value, 6 min_value) of a scalar column. */
static void put_stats(struct nx_strbuf *out, const struct col *c)
{
	int16_t last = 0;

	put_i64_field(out, &last, 3, (int64_t)c->nulls);
	if (c->minmax && !c->nan) {
		unsigned char mx[8], mn[8];
		size_t len = 8;
		if (c->ct == NX_COL_INTEGER) {
			int32_t a = (int32_t)c->max.i, b = (int32_t)c->min.i;
			memcpy(mx, &a, 4);
			memcpy(mn, &b, 4);
			len = 4;
		} else if (c->ct == NX_COL_FLOAT) {
			float a = (float)c->max.d, b = (float)c->min.d;
			memcpy(mx, &a, 4);
			memcpy(mn, &b, 4);
			len = 4;
		} else {
			memcpy(mx, &c->max, 8);
			memcpy(mn, &c->min, 8);
		}
		put_bin_field(out, &last, 5, mx, len);
		put_bin_field(out, &last, 6, mn, len);
	}
	nx_strbuf_addch(out, NX_TC_STOP);
}

/* Compresses w->page and writes it after its PageHeader: 1 type, 2 uncompressed size,
 * 3 compressed size, then 5 data_page_header (1 num_values, 2 encoding, 3 definition
 * and 4 repetition level encodings) or 7 dictionary_page_header (1 num_values,
 * 2 encoding). *raw and *packed grow by the page's sizes with its header. */
static int write_page(struct nx_pqw *w, const struct col *c, int type, size_t values,
		      int encoding, uint64_t *raw, uint64_t *packed, struct nx_err *err)
{
	int16_t last = 0;
	size_t bound, z;
	int rc;

	if (w->page.len > INT32_MAX || values > INT32_MAX)
		return nx_errf(err, -EFBIG, "'%s': column %s: a page of %zu bytes is too large "
			       "for parquet", w->path, c->f->name, w->page.len);
	bound = ZSTD_compressBound(w->page.len);
	if (bound > w->zcap) {
		free(w->zbuf);
		w->zcap = bound;
		w->zbuf = nx_xmalloc(bound);
	}
	z = ZSTD_compressCCtx(w->zc, w->zbuf, w->zcap, w->page.buf ? w->page.buf : "",
			      w->page.len, ZSTD_LEVEL);
	if (ZSTD_isError(z))
		return nx_errf(err, -EIO, "'%s': column %s: zstd: %s", w->path, c->f->name,
			       ZSTD_getErrorName(z));
	nx_strbuf_reset(&w->hdr);
	put_i32_field(&w->hdr, &last, 1, type);
	put_i32_field(&w->hdr, &last, 2, (int32_t)w->page.len);
	put_i32_field(&w->hdr, &last, 3, (int32_t)z);
	nx_tc_write_field(&w->hdr, last, NX_TC_STRUCT, type == PAGE_DICT ? 7 : 5);
	last = 0;
	put_i32_field(&w->hdr, &last, 1, (int32_t)values);
	put_i32_field(&w->hdr, &last, 2, encoding);
	if (type == PAGE_DATA) {
		put_i32_field(&w->hdr, &last, 3, ENC_RLE);
		put_i32_field(&w->hdr, &last, 4, ENC_RLE);
	}
	nx_strbuf_addch(&w->hdr, NX_TC_STOP);
	nx_strbuf_addch(&w->hdr, NX_TC_STOP);
	if ((rc = put(w, w->hdr.buf, w->hdr.len, err)) || (rc = put(w, w->zbuf, z, err)))
		return rc;
	*raw += w->hdr.len + w->page.len;
	*packed += w->hdr.len + z;
	return 0;
}

/* Writes column c's pages for the row group (a dictionary page first, when the chunk
 * has a dictionary) and appends its ColumnChunk to w->groups; *raw and *packed grow by
 * the pages' sizes with their headers. */
static int flush_column(struct nx_pqw *w, struct col *c, uint64_t *raw, uint64_t *packed,
			struct nx_err *err)
{
	uint64_t at = w->off, data_at = at, u = 0, p = 0;
	bool dict = c->dict_on && c->dict.n > 0;
	int16_t last = 0;
	int rc;

	/* a scalar column has one level per row; a list column at least one */
	NX_ASSERT(c->leaf.list ? c->nlev >= w->group_rows : c->nlev == w->group_rows);
	NX_ASSERT(c->ct != NX_COL_BOOLEAN || c->vals.len == c->nlev - c->nulls);
	NX_ASSERT(!dict || (c->vals.len == 0 && c->dict.nidx == c->nlev - c->nulls));
	if (dict) {
		nx_strbuf_reset(&w->page);
		nx_strbuf_add(&w->page, c->dict.vals.buf, c->dict.vals.len);
		if ((rc = write_page(w, c, PAGE_DICT, c->dict.n, ENC_PLAIN, &u, &p, err)))
			return rc;
		data_at = w->off;
	}
	nx_strbuf_reset(&w->page);
	if (c->leaf.list)
		put_levels(&w->page, c->rep, c->nlev, 1);
	put_levels(&w->page, c->def, c->nlev, c->max_def == 1 ? 1 : 2);
	if (dict)
		nx_pq_dict_put_indices(&c->dict, &w->page);
	else if (c->ct == NX_COL_BOOLEAN)
		put_bools(&w->page, &c->vals);
	else
		nx_strbuf_add(&w->page, c->vals.buf ? c->vals.buf : "", c->vals.len);
	if ((rc = write_page(w, c, PAGE_DATA, c->nlev, dict ? ENC_RLE_DICT : ENC_PLAIN, &u, &p,
			     err)))
		return rc;
	*raw += u;
	*packed += p;

	/* ColumnChunk: 2 file_offset, 3 meta_data. ColumnMetaData: 1 type, 2 encodings,
	 * 3 path_in_schema, 4 codec, 5 num_values, 6 and 7 sizes, 9 data_page_offset,
	 * 11 dictionary_page_offset (a chunk with a dictionary), 12 statistics (scalars) */
	struct nx_strbuf *g = &w->groups;
	last = 0;
	put_i64_field(g, &last, 2, (int64_t)at);
	nx_tc_write_field(g, last, NX_TC_STRUCT, 3);
	last = 0;
	put_i32_field(g, &last, 1, c->leaf.type);
	nx_tc_write_field(g, last, NX_TC_LIST, 2);
	nx_tc_write_list(g, dict ? 3 : 2, NX_TC_I32);
	nx_tc_write_zigzag(g, ENC_PLAIN);
	nx_tc_write_zigzag(g, ENC_RLE);
	if (dict)
		nx_tc_write_zigzag(g, ENC_RLE_DICT);
	nx_tc_write_field(g, 2, NX_TC_LIST, 3);
	const char *path[3] = { c->f->name, "list", "element" };
	uint32_t depth = c->leaf.list ? 3 : 1;
	nx_tc_write_list(g, depth, NX_TC_BINARY);
	for (uint32_t i = 0; i < depth; i++) {
		nx_tc_write_varint(g, strlen(path[i]));
		nx_strbuf_addstr(g, path[i]);
	}
	last = 3;
	put_i32_field(g, &last, 4, CODEC_ZSTD);
	put_i64_field(g, &last, 5, (int64_t)c->nlev);
	put_i64_field(g, &last, 6, (int64_t)u);
	put_i64_field(g, &last, 7, (int64_t)p);
	put_i64_field(g, &last, 9, (int64_t)data_at);
	if (dict)
		put_i64_field(g, &last, 11, (int64_t)at);
	if (!c->leaf.list) {
		nx_tc_write_field(g, last, NX_TC_STRUCT, 12);
		put_stats(g, c);
	}
	nx_strbuf_addch(g, NX_TC_STOP);
	nx_strbuf_addch(g, NX_TC_STOP);

	nx_strbuf_reset(&c->vals);
	c->nlev = 0;
	c->nulls = 0;
	c->minmax = c->nan = false;
	if (c->dict_skip) {
		c->dict_skip--;
		c->dict_on = false;
	} else {
		c->dict_on = c->dict_able;
	}
	nx_pq_dict_reset(&c->dict, w->row_group / DICT_FRACTION, DICT_BYTES);
	if (++c->gen > MEMO_GENS) { /* the memo's entries are of the chunks before */
		if (c->memo)
			memset(c->memo, 0, w->nkeys * sizeof(*c->memo));
		c->gen = 1;
	}
	return 0;
}

/* Writes the row group collected so far (none: nothing). RowGroup: 1 columns,
 * 2 total_byte_size, 3 num_rows, 5 file_offset, 6 total_compressed_size, 7 ordinal.
 * The footer keeps about 1 KB per row group of SystemProfileEvents until the end. */
static int flush_group(struct nx_pqw *w, struct nx_err *err)
{
	uint64_t at = w->off, raw = 0, packed = 0;
	int16_t last = 0;
	int rc;

	if (!w->group_rows)
		return 0;
	nx_tc_write_field(&w->groups, 0, NX_TC_LIST, 1);
	nx_tc_write_list(&w->groups, (uint32_t)w->t->nfields, NX_TC_STRUCT);
	for (size_t i = 0; i < w->t->nfields; i++)
		if ((rc = flush_column(w, &w->cols[i], &raw, &packed, err)))
			return rc;
	last = 1;
	put_i64_field(&w->groups, &last, 2, (int64_t)raw);
	put_i64_field(&w->groups, &last, 3, (int64_t)w->group_rows);
	put_i64_field(&w->groups, &last, 5, (int64_t)at);
	put_i64_field(&w->groups, &last, 6, (int64_t)packed);
	if (w->ngroups <= INT16_MAX) { /* an optional field, an i16: left out past that */
		nx_tc_write_field(&w->groups, last, NX_TC_I16, 7);
		nx_tc_write_zigzag(&w->groups, w->ngroups);
	}
	nx_strbuf_addch(&w->groups, NX_TC_STOP);
	w->ngroups++;
	w->group_rows = 0;
	return 0;
}

/* Fills the static rows of a filled source: one per key, in batches of svec rows. */
static void fill_statics(struct nx_pqw *w, const struct nx_row_keys *k)
{
	const struct nx_table *t = w->t;
	duckdb_logical_type types[128];

	w->svec = duckdb_vector_size();
	w->nstatics = (k->n + w->svec - 1) / w->svec;
	w->statics = nx_xcalloc(w->nstatics, sizeof(*w->statics));
	w->sdata = nx_xcalloc(w->nstatics * t->nfields, sizeof(*w->sdata));
	w->svalid = nx_xcalloc(w->nstatics * t->nfields, sizeof(*w->svalid));
	for (size_t i = 0; i < t->nfields; i++)
		types[i] = nx_rowbuf_logical_type(&t->fields[i]);
	for (size_t sb = 0; sb < w->nstatics; sb++) {
		struct nx_rowbuf b;
		size_t rows = k->n - sb * w->svec < w->svec ? k->n - sb * w->svec : w->svec;
		w->statics[sb] = duckdb_create_data_chunk(types, t->nfields);
		nx_rowbuf_bind(&b, w->statics[sb], t);
		for (size_t r = 0; r < rows; r++)
			k->fill(k->arg, (uint32_t)(sb * w->svec + r), &b, r);
		duckdb_data_chunk_set_size(w->statics[sb], (idx_t)rows);
		for (size_t i = 0; i < t->nfields; i++) {
			w->sdata[sb * t->nfields + i] = b.data[i];
			w->svalid[sb * t->nfields + i] = b.validity[i];
		}
	}
	for (size_t i = 0; i < t->nfields; i++)
		duckdb_destroy_logical_type(&types[i]);
}

int nx_pqw_keys(struct nx_pqw *w, const struct nx_row_keys *k, struct nx_err *err)
{
	size_t keyed = 0;

	for (size_t i = 0; k && k->n && i < w->t->nfields && i < 128; i++) {
		const struct col *c = &w->cols[i];
		if (!(k->cols[i / 64] >> (i % 64) & 1))
			continue;
		if (!c->dict_able && k->fill) /* its cells would be missing from the batches */
			return nx_errf(err, NX_EUSAGE, "'%s': column %s, a boolean or a list, "
				       "cannot be keyed by a fill", w->path, c->f->name);
		keyed += c->dict_able;
	}
	if (k && k->fill && k->n > NX_ROW_KEYS_FILLED)
		return nx_errf(err, NX_EUSAGE, "'%s': %u keys with a fill, more than %u",
			       w->path, k->n, NX_ROW_KEYS_FILLED);
	if (!keyed || (!k->fill && (size_t)k->n * keyed * sizeof(uint32_t) > MEMO_BYTES))
		return 0;
	w->nkeys = k->n;
	for (size_t i = 0; i < w->t->nfields && i < 128; i++) {
		struct col *c = &w->cols[i];
		if ((k->cols[i / 64] >> (i % 64) & 1) && c->dict_able && !c->memo)
			c->memo = nx_xcalloc(k->n, sizeof(*c->memo));
	}
	if (k->fill && !w->statics)
		fill_statics(w, k);
	return 0;
}

int nx_pqw_add(struct nx_pqw *w, const struct nx_rowbuf *b, size_t n, struct nx_err *err)
{
	return nx_pqw_add_rows(w, b, 0, n, err);
}

int nx_pqw_add_rows(struct nx_pqw *w, const struct nx_rowbuf *b, size_t from, size_t n,
		    struct nx_err *err)
{
	size_t done = from;
	int rc;

	while (done < n) {
		NX_ASSERT(w->group_rows < w->row_group); /* a full group was flushed */
		/* the rows of the batch that fit the row group */
		size_t to = n, biggest = 0;
		if (to - done > w->row_group - w->group_rows)
			to = done + (w->row_group - w->group_rows);
		for (size_t i = 0; i < w->t->nfields; i++) {
			struct col *c = &w->cols[i];
			if (c->leaf.list)
				add_list(c, b->vec[i], b->validity[i], done, to);
			else
				add_scalar(w, c, i, b->data[i], b->validity[i], done, to,
					   b->keys, w->nkeys);
			if (c->vals.len > biggest)
				biggest = c->vals.len;
		}
		w->group_rows += to - done;
		w->rows += to - done;
		done = to;
		if ((w->group_rows >= w->row_group || biggest >= GROUP_BYTES) &&
		    (rc = flush_group(w, err)))
			return rc;
	}
	return 0;
}

static void release(struct nx_pqw *w)
{
	for (size_t i = 0; w->cols && i < w->t->nfields; i++) {
		nx_strbuf_release(&w->cols[i].vals);
		nx_pq_dict_release(&w->cols[i].dict);
		free(w->cols[i].def);
		free(w->cols[i].rep);
		free(w->cols[i].memo);
	}
	for (size_t i = 0; i < w->nstatics; i++)
		duckdb_destroy_data_chunk(&w->statics[i]);
	free(w->statics);
	free(w->sdata);
	free(w->svalid);
	free(w->cols);
	nx_strbuf_release(&w->page);
	nx_strbuf_release(&w->hdr);
	nx_strbuf_release(&w->groups);
	ZSTD_freeCCtx(w->zc);
	free(w->zbuf);
	free(w->tmp);
	free(w->path);
	free(w);
}

void nx_pqw_abort(struct nx_pqw *w)
{
	if (!w)
		return;
	if (w->fd >= 0)
		close(w->fd);
	unlink(w->tmp);
	release(w);
}

int nx_pqw_close(struct nx_pqw *w, uint64_t *rows, struct nx_err *err)
{
	struct nx_strbuf foot = NX_STRBUF_INIT;
	int rc = flush_group(w, err);
	uint64_t hits = 0;

	for (size_t i = 0; w->nkeys && i < w->t->nfields; i++)
		hits += w->cols[i].memo_hits;
	if (w->nkeys) /* the tests' and a profiler's way to see the memos at work */
		nx_log(NX_LOG_DEBUG, "parquet: '%s': %" PRIu64 " cells of %" PRIu64 " rows by "
		       "their key's memo", w->path, hits, w->rows);

	if (!rc) {
		nx_pq_file_metadata(&foot, w->t, w->rows, &w->groups, w->ngroups,
				    NX_PARQUET_EMPTY_CREATED_BY);
		nx_pq_tail(&foot, foot.len);
		rc = put(w, foot.buf, foot.len, err);
	}
	nx_strbuf_release(&foot);
	if (close(w->fd) && !rc)
		rc = nx_errf(err, -errno, "cannot write '%s': %s", w->tmp, strerror(errno));
	w->fd = -1;
	if (!rc && rename(w->tmp, w->path))
		rc = nx_errf(err, -errno, "cannot rename '%s' to '%s': %s", w->tmp, w->path,
			     strerror(errno));
	if (!rc && rows)
		*rows = w->rows;
	if (rc)
		unlink(w->tmp);
	release(w);
	return rc;
}
