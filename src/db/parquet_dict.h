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
 * What: a hash table (open addressing) over the values' PLAIN bytes; a value is added
 * by its bytes, and a string's with the 4-byte length that PLAIN puts before it. The
 * dictionary refuses a value past its bound (nx_pq_dict_add returns false); the writer
 * then writes the chunk PLAIN, after nx_pq_dict_spill has turned the indices so far
 * back into PLAIN values. No DuckDB here. */
#ifndef NX_DB_PARQUET_DICT_H
#define NX_DB_PARQUET_DICT_H

#include "common/compat.h"
#include "common/strbuf.h"

#include <string.h>

struct nx_pq_dict {
	struct nx_strbuf vals;  /* the distinct values, PLAIN, in index order */
	uint32_t *off;          /* value k is vals[off[k], off[k + 1]) */
	uint64_t *slots;        /* the value there: its hash's low 32 bits << 32 | k + 1;
				 * 0 for none */
	size_t n, cap, nslots;
	uint32_t *idx;          /* the chunk's indices, one per value not NULL */
	size_t nidx, idxcap;
	size_t max_values, max_bytes; /* the bound */
};

/* Empties d for a new chunk, with a bound of max_values distinct values and max_bytes
 * of them PLAIN. */
void nx_pq_dict_reset(struct nx_pq_dict *d, size_t max_values, size_t max_bytes);
/* Whether len bytes at a and b are the same: a number's 8 or 4 compared at once, not
 * through a call of memcmp (a third of the dictionary's time when it was). */
static inline bool nx__pq_same(const char *a, const void *b, uint32_t len)
{
	if (len == 8) {
		uint64_t x, y;
		memcpy(&x, a, 8);
		memcpy(&y, b, 8);
		return x == y;
	}
	if (len == 4) {
		uint32_t x, y;
		memcpy(&x, a, 4);
		memcpy(&y, b, 4);
		return x == y;
	}
	return !memcmp(a, b, len);
}

/* nx_pq_dict_add's way for a value that is not the one before. */
bool nx__pq_dict_add_other(struct nx_pq_dict *d, const void *p, uint32_t len, bool strlen);

/* Adds a value: len bytes at p, after a 4-byte little-endian length when strlen is set
 * (a BYTE_ARRAY). False, with d unchanged, when it is new and d would pass its bound.
 * Inline for the value before it again (a run, common in a trace's columns; every value
 * of every column not a boolean or a list passes here): no hash, no call. */
static inline bool nx_pq_dict_add(struct nx_pq_dict *d, const void *p, uint32_t len,
				  bool strlen)
{
	if (d->nidx && d->nidx < d->idxcap) {
		uint32_t k = d->idx[d->nidx - 1], pre = strlen ? 4 : 0;
		if (d->off[k + 1] - d->off[k] == pre + len &&
		    nx__pq_same(d->vals.buf + d->off[k] + pre, p, len)) {
			d->idx[d->nidx++] = k;
			return true;
		}
	}
	return nx__pq_dict_add_other(d, p, len, strlen);
}
/* Appends the PLAIN value of every index so far to out, in order. */
void nx_pq_dict_spill(const struct nx_pq_dict *d, struct nx_strbuf *out);
/* Appends the data page's values: the indices' bit width (1 byte), then the indices in
 * the RLE/bit-packed hybrid (encoding RLE_DICTIONARY). */
void nx_pq_dict_put_indices(const struct nx_pq_dict *d, struct nx_strbuf *out);
void nx_pq_dict_release(struct nx_pq_dict *d);

#endif
