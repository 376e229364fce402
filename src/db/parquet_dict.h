/* SPDX-License-Identifier: MIT
 * parquet_dict.h: the dictionary of one column chunk of our parquet writer
 * (db/parquet_write.c): the distinct values of the chunk, PLAIN, in the order first
 * seen, and for each value that is not NULL its index into them.
 *
 * Why: a trace table's columns hold few distinct values (engine, opcode, operands, byte
 * counts repeat from instruction to instruction). PLAIN they made our files 27 % larger
 * than DuckDB's, and DuckDB reading them back verified every string's UTF-8 again; a
 * dictionary page and indices are what DuckDB's own writer makes of them.
 *
 * What: a hash table (open addressing) over the values; a value is added by its bytes,
 * and a string's with the 4-byte length that PLAIN puts before it, and found by its
 * first 16 bytes as two words and its length (its bytes past 16 compared after). The
 * dictionary refuses a value past its bound (nx_pq_dict_add returns false); the writer
 * then writes the chunk PLAIN, after nx_pq_dict_spill has turned the indices so far
 * back into PLAIN values. A value whose index the caller guesses (the writer's memo of
 * a keyed column, db/parquet_write.h) is added by nx_pq_dict_add_at: the guess checked
 * against the value, no hash. No DuckDB here. */
#ifndef NX_DB_PARQUET_DICT_H
#define NX_DB_PARQUET_DICT_H

#include "common/compat.h"
#include "common/strbuf.h"

#include <string.h>

/* A distinct value: its first 16 bytes (zeros past its end), its length and where its
 * bytes are in vals (after the length of a string). Values of up to 16 bytes, nearly all
 * of a trace table's (numbers, names, ids), are compared by these two words alone. */
struct nx_pq_dval {
	uint64_t w0, w1;
	uint32_t len, at;
};

struct nx_pq_dict {
	struct nx_strbuf vals;  /* the distinct values, PLAIN, in index order */
	struct nx_pq_dval *dv;  /* value k */
	uint64_t *slots;        /* the value there: its hash's low 32 bits << 32 | k + 1;
				 * 0 for none */
	size_t n, cap, nslots;
	uint32_t *idx;          /* the chunk's indices, one per value not NULL */
	size_t nidx, idxcap;
	size_t max_values, max_bytes; /* the bound */
	bool is_str;            /* its values are strings, each after its length */
	struct nx_pq_dval last; /* the last index's value (with nidx > 0), at hand */
	uint32_t last_k;
};

/* Empties d for a new chunk, with a bound of max_values distinct values and max_bytes
 * of them PLAIN. */
void nx_pq_dict_reset(struct nx_pq_dict *d, size_t max_values, size_t max_bytes);

/* The first 16 bytes of len at p, zeros past len, in two words; reads no byte past len.
 * A number's 8 or 4 at once. */
static inline void nx__pq_words(const void *p, uint32_t len, uint64_t *w0, uint64_t *w1)
{
	const unsigned char *b = p;
	uint64_t x = 0, y = 0;
	uint32_t lo, hi;

	if (len >= 16) {
		memcpy(&x, b, 8);
		memcpy(&y, b + 8, 8);
	} else if (len > 8) { /* bytes 8..len-1: the top of the word ending at len */
		memcpy(&x, b, 8);
		memcpy(&y, b + len - 8, 8);
		y >>= 8 * (16 - len);
	} else if (len == 8) {
		memcpy(&x, b, 8);
	} else if (len >= 4) { /* bytes 4..len-1: the top of the word ending at len */
		memcpy(&lo, b, 4);
		memcpy(&hi, b + len - 4, 4);
		x = lo | (uint64_t)hi >> (8 * (8 - len)) << 32;
	} else if (len) {
		x = b[0];
		if (len > 1)
			x |= (uint64_t)b[1] << 8;
		if (len > 2)
			x |= (uint64_t)b[2] << 16;
	}
	*w0 = x;
	*w1 = y;
}

/* Whether value k is the len bytes at p, whose first words are w0 and w1. */
static inline bool nx__pq_dict_is(const struct nx_pq_dict *d, uint32_t k, const void *p,
				  uint32_t len, uint64_t w0, uint64_t w1)
{
	const struct nx_pq_dval *v = &d->dv[k];

	return v->w0 == w0 && v->w1 == w1 && v->len == len &&
	       (len <= 16 || !memcmp(d->vals.buf + v->at + 16, (const char *)p + 16, len - 16));
}

/* nx_pq_dict_add's way for a value that is not the one before. */
bool nx__pq_dict_add_other(struct nx_pq_dict *d, const void *p, uint32_t len, bool strlen,
			   uint64_t w0, uint64_t w1);

/* Adds a value: len bytes at p, after a 4-byte little-endian length when strlen is set
 * (a BYTE_ARRAY). False, with d unchanged, when it is new and d would pass its bound.
 * Inline for the value before it again (a run, common in a trace's columns; every value
 * of every column not a boolean or a list passes here): no hash, no call. */
static inline bool nx_pq_dict_add(struct nx_pq_dict *d, const void *p, uint32_t len,
				  bool strlen)
{
	uint64_t w0, w1;

	nx__pq_words(p, len, &w0, &w1);
	if (d->nidx && d->nidx < d->idxcap && d->last.w0 == w0 && d->last.w1 == w1 &&
	    d->last.len == len &&
	    (len <= 16 || !memcmp(d->vals.buf + d->last.at + 16, (const char *)p + 16, len - 16))) {
		d->idx[d->nidx++] = d->last_k;
		return true;
	}
	return nx__pq_dict_add_other(d, p, len, strlen, w0, w1);
}
/* Adds the len bytes at p as value k, with no hash, when value k of the chunk is those
 * bytes (a memo's guess, db/parquet_write.c's keyed columns): true then, with the index
 * pushed. False, with d unchanged, when k is not a value of the chunk, holds another
 * value, or the indices need room: the caller adds it by nx_pq_dict_add. */
static inline bool nx_pq_dict_add_at(struct nx_pq_dict *d, uint32_t k, const void *p,
				     uint32_t len)
{
	uint64_t w0, w1;

	if (k >= d->n || d->nidx >= d->idxcap)
		return false;
	nx__pq_words(p, len, &w0, &w1);
	if (!nx__pq_dict_is(d, k, p, len, w0, w1))
		return false;
	d->idx[d->nidx++] = k;
	return true;
}
/* Appends the PLAIN value of every index so far to out, in order. */
void nx_pq_dict_spill(const struct nx_pq_dict *d, struct nx_strbuf *out);
/* Appends the data page's values: the indices' bit width (1 byte), then the indices in
 * the RLE/bit-packed hybrid (encoding RLE_DICTIONARY). */
void nx_pq_dict_put_indices(const struct nx_pq_dict *d, struct nx_strbuf *out);
void nx_pq_dict_release(struct nx_pq_dict *d);

#endif
