/* SPDX-License-Identifier: MIT
 * parquet_dict.c: a column chunk's dictionary and its indices (see parquet_dict.h). */
#include "common/compat.h"
#include "db/parquet_dict.h"
#include "common/hash.h"
#include "common/le.h"
#include "common/xalloc.h"
#include "db/parquet_rle.h"

#include <stdlib.h>
#include <string.h>

void nx_pq_dict_reset(struct nx_pq_dict *d, size_t max_values, size_t max_bytes)
{
	nx_strbuf_reset(&d->vals);
	if (d->n && d->slots)
		memset(d->slots, 0, d->nslots * sizeof(*d->slots));
	d->n = 0;
	d->nidx = 0;
	d->max_values = max_values ? max_values : 1;
	d->max_bytes = max_bytes;
}

void nx_pq_dict_release(struct nx_pq_dict *d)
{
	nx_strbuf_release(&d->vals);
	free(d->dv);
	free(d->slots);
	free(d->idx);
	memset(d, 0, sizeof(*d));
}

/* A hash of a value from its first words and length; past 16 bytes, of the rest too,
 * eight bytes at a time. */
static inline uint64_t hash_value(const unsigned char *p, uint32_t len, uint64_t w0,
				  uint64_t w1)
{
	uint64_t h = 0x9e3779b97f4a7c15ull ^ len ^ w0, w;

	if (len <= 8)
		return nx_mix64(h);
	h = (h ^ (w1 * 0xff51afd7ed558ccdull)) * 0xc4ceb9fe1a85ec53ull;
	if (len > 16) {
		size_t n = len - 16;
		for (p += 16; n >= 8; p += 8, n -= 8) {
			memcpy(&w, p, 8);
			h = (h ^ w) * 0xff51afd7ed558ccdull;
			h ^= h >> 29;
		}
		if (n) {
			w = 0;
			memcpy(&w, p, n);
			h = (h ^ w) * 0xff51afd7ed558ccdull;
		}
	}
	return nx_mix64(h);
}

/* Doubles the slots (at least 256) and places every value again. */
static void grow_slots(struct nx_pq_dict *d)
{
	size_t n = d->nslots ? d->nslots * 2 : 256;
	uint64_t *old = d->slots;

	d->slots = nx_xcalloc(n, sizeof(*d->slots));
	for (size_t i = 0; i < d->nslots; i++) {
		if (!old[i])
			continue;
		size_t s = (old[i] >> 32) & (n - 1);
		while (d->slots[s])
			s = (s + 1) & (n - 1);
		d->slots[s] = old[i];
	}
	d->nslots = n;
	free(old);
}

static void push_index(struct nx_pq_dict *d, uint32_t k)
{
	d->last = d->dv[k];
	d->last_k = k;
	if (d->nidx == d->idxcap) {
		d->idxcap = d->idxcap ? d->idxcap * 2 : 4096;
		d->idx = nx_xrealloc(d->idx, d->idxcap * sizeof(*d->idx));
	}
	d->idx[d->nidx++] = k;
}

bool nx__pq_dict_add_other(struct nx_pq_dict *d, const void *p, uint32_t len, bool strlen,
			   uint64_t w0, uint64_t w1)
{
	uint32_t pre = strlen ? 4 : 0, h = (uint32_t)hash_value(p, len, w0, w1);
	size_t s;

	if (!d->nslots)
		grow_slots(d);
	for (s = h & (d->nslots - 1); d->slots[s]; s = (s + 1) & (d->nslots - 1)) {
		uint32_t k = (uint32_t)d->slots[s] - 1;
		if ((uint32_t)(d->slots[s] >> 32) == h && nx__pq_dict_is(d, k, p, len, w0, w1)) {
			push_index(d, k);
			return true;
		}
	}
	if (d->n + 1 > d->max_values || d->vals.len + pre + len > d->max_bytes)
		return false;
	if (d->n + 1 > d->cap) {
		d->cap = d->cap ? d->cap * 2 : 256;
		d->dv = nx_xrealloc(d->dv, d->cap * sizeof(*d->dv));
	}
	if (strlen) {
		uint8_t le[4];
		nx_put_le32(le, len);
		nx_strbuf_add(&d->vals, le, 4);
	}
	d->is_str = strlen;
	d->dv[d->n] = (struct nx_pq_dval){ .w0 = w0, .w1 = w1, .len = len,
					   .at = (uint32_t)d->vals.len };
	nx_strbuf_add(&d->vals, p, len);
	d->slots[s] = (uint64_t)h << 32 | (uint32_t)++d->n;
	push_index(d, (uint32_t)d->n - 1);
	if (2 * d->n > d->nslots) /* at most half full */
		grow_slots(d);
	return true;
}

void nx_pq_dict_spill(const struct nx_pq_dict *d, struct nx_strbuf *out)
{
	for (size_t i = 0; i < d->nidx; i++) {
		const struct nx_pq_dval *v = &d->dv[d->idx[i]];
		uint32_t pre = d->is_str ? 4 : 0;
		nx_strbuf_add(out, d->vals.buf + v->at - pre, v->len + pre);
	}
}

void nx_pq_dict_put_indices(const struct nx_pq_dict *d, struct nx_strbuf *out)
{
	int bw = 1;

	while (bw < 32 && d->n > ((size_t)1 << bw))
		bw++;
	nx_strbuf_addch(out, (char)bw);
	nx_pq_rle_put32(out, d->idx, d->nidx, bw);
}
