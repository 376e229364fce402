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
	free(d->off);
	free(d->slots);
	free(d->idx);
	memset(d, 0, sizeof(*d));
}

/* A hash of len bytes, eight at a time (a number's 8 or 4 at once). */
static inline uint64_t hash_bytes(const unsigned char *p, size_t len)
{
	uint64_t h = 0x9e3779b97f4a7c15ull ^ len, w;
	uint32_t w4;

	if (len == 8) {
		memcpy(&w, p, 8);
		return nx_mix64(h ^ w);
	}
	if (len == 4) {
		memcpy(&w4, p, 4);
		return nx_mix64(h ^ w4);
	}

	for (; len >= 8; p += 8, len -= 8) {
		memcpy(&w, p, 8);
		h = (h ^ w) * 0xff51afd7ed558ccdull;
		h ^= h >> 29;
	}
	if (len) {
		w = 0;
		memcpy(&w, p, len);
		h = (h ^ w) * 0xff51afd7ed558ccdull;
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
	if (d->nidx == d->idxcap) {
		d->idxcap = d->idxcap ? d->idxcap * 2 : 4096;
		d->idx = nx_xrealloc(d->idx, d->idxcap * sizeof(*d->idx));
	}
	d->idx[d->nidx++] = k;
}

bool nx__pq_dict_add_other(struct nx_pq_dict *d, const void *p, uint32_t len, bool strlen)
{
	uint32_t pre = strlen ? 4 : 0, h = (uint32_t)hash_bytes(p, len);
	size_t s;

	if (!d->nslots)
		grow_slots(d);
	for (s = h & (d->nslots - 1); d->slots[s]; s = (s + 1) & (d->nslots - 1)) {
		uint32_t k = (uint32_t)d->slots[s] - 1;
		if ((uint32_t)(d->slots[s] >> 32) == h && d->off[k + 1] - d->off[k] == pre + len &&
		    nx__pq_same(d->vals.buf + d->off[k] + pre, p, len)) {
			push_index(d, k);
			return true;
		}
	}
	if (d->n + 1 > d->max_values || d->vals.len + pre + len > d->max_bytes)
		return false;
	if (d->n + 2 > d->cap) {
		d->cap = d->cap ? d->cap * 2 : 256;
		d->off = nx_xrealloc(d->off, d->cap * sizeof(*d->off));
	}
	if (strlen) {
		uint8_t le[4];
		nx_put_le32(le, len);
		nx_strbuf_add(&d->vals, le, 4);
	}
	nx_strbuf_add(&d->vals, p, len);
	d->off[d->n] = (uint32_t)(d->vals.len - pre - len);
	d->off[d->n + 1] = (uint32_t)d->vals.len;
	d->slots[s] = (uint64_t)h << 32 | (uint32_t)++d->n;
	push_index(d, (uint32_t)d->n - 1);
	if (2 * d->n > d->nslots) /* at most half full */
		grow_slots(d);
	return true;
}

void nx_pq_dict_spill(const struct nx_pq_dict *d, struct nx_strbuf *out)
{
	for (size_t i = 0; i < d->nidx; i++) {
		uint32_t k = d->idx[i];
		nx_strbuf_add(out, d->vals.buf + d->off[k], d->off[k + 1] - d->off[k]);
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
