/* SPDX-License-Identifier: MIT
 * onchip_map.c: the ownership map of the on-chip occupancy pass (see onchip_map.h). */
#include "common/compat.h"
#include "ingest/onchip_map.h"
#include "common/xalloc.h"
#include "neff/isa.h"

#include <stdlib.h>
#include <string.h>

#define CELL NX_OC_CELL_BYTES
#define GP NX_OC_GROUP_PARTS
#define NGROUPS (NX_NUM_PARTITIONS / GP)

static uint64_t min_u64(uint64_t a, uint64_t b) { return a < b ? a : b; }
static uint64_t max_u64(uint64_t a, uint64_t b) { return a > b ? a : b; }
static int64_t min_i64(int64_t a, int64_t b) { return a < b ? a : b; }
static int64_t max_i64(int64_t a, int64_t b) { return a > b ? a : b; }

void nx_oc_map_init(struct nx_oc_map *m, uint64_t sbuf_partition_bytes,
		    uint64_t psum_partition_bytes, uint64_t psum_bank_bytes,
		    nx_oc_emit_fn *emit, void *arg)
{
	*m = (struct nx_oc_map){ .free_head = -1, .emit = emit, .arg = arg };
	m->cap_bytes[NX_OC_SBUF] = sbuf_partition_bytes;
	m->cap_bytes[NX_OC_PSUM] = psum_partition_bytes;
	m->bank_bytes = psum_bank_bytes;
	for (int k = 0; k < NX_OC_NMEM; k++) {
		m->ncols[k] = (size_t)((m->cap_bytes[k] + CELL - 1) / CELL);
		m->owner[k] = nx_xmalloc(NGROUPS * m->ncols[k] * sizeof(int32_t));
		memset(m->owner[k], 0xff, NGROUPS * m->ncols[k] * sizeof(int32_t));
		/* one bit more than the columns: the edge after the last one */
		m->nwords[k] = m->ncols[k] / 64 + 1;
		m->edge[k] = nx_xcalloc(NGROUPS * m->nwords[k], sizeof(uint64_t));
	}
}

void nx_oc_map_release(struct nx_oc_map *m)
{
	for (size_t i = 0; i < m->npool; i++)
		free(m->pool[i].loss);
	free(m->pool);
	for (int k = 0; k < NX_OC_NMEM; k++) {
		free(m->owner[k]);
		free(m->edge[k]);
	}
	memset(m, 0, sizeof(*m));
}

bool nx_oc_clip(const struct nx_oc_map *m, struct nx_oc_range *r)
{
	if (r->p0 >= NX_NUM_PARTITIONS || r->lo >= m->cap_bytes[r->mem])
		return false;
	r->p1 = r->p1 >= NX_NUM_PARTITIONS ? NX_NUM_PARTITIONS - 1 : r->p1;
	r->hi = min_u64(r->hi, m->cap_bytes[r->mem] - 1);
	return true;
}

int64_t nx_oc_unit_capacity(const struct nx_oc_map *m, int mem)
{
	return (int64_t)(mem == NX_OC_SBUF ? GP * m->cap_bytes[NX_OC_SBUF]
					   : NX_NUM_PARTITIONS * m->bank_bytes);
}

/* Cells of r: partition groups x 64-byte columns. */
static size_t range_cells(const struct nx_oc_range *r)
{
	return (size_t)(r->p1 / GP - r->p0 / GP + 1) * (size_t)(r->hi / CELL - r->lo / CELL + 1);
}

/* Bytes of range r inside the cells of group g, columns ca..cb: the sum of its bytes in
 * each of those cells, as the cells tile the columns without a gap. */
static int64_t run_bytes(const struct nx_oc_range *r, unsigned g, size_t ca, size_t cb)
{
	unsigned p0 = r->p0 > g * GP ? r->p0 : g * GP;
	unsigned p1 = r->p1 < (g + 1) * GP - 1 ? r->p1 : (g + 1) * GP - 1;
	uint64_t lo = max_u64(r->lo, ca * CELL);
	uint64_t hi = min_u64(r->hi, (cb + 1) * CELL - 1);

	return p1 < p0 || hi < lo ? 0 : (int64_t)(p1 - p0 + 1) * (int64_t)(hi - lo + 1);
}

/* Writes the rows of allocation i and returns it to the free list. */
static void close_alloc(struct nx_oc_map *m, int32_t i)
{
	struct nx_oc_alloc *a = &m->pool[i];
	int64_t end = max_i64(a->wend, min_i64(a->rend, a->kill));

	m->emit(m->arg, a, a->start, end, a->bytes);
	for (size_t k = 0; k < a->nloss; k++)
		if (a->loss[k].ts < end)
			m->emit(m->arg, a, max_i64(a->start, a->loss[k].ts), end, -a->loss[k].bytes);
	free(a->loss);
	a->loss = NULL;
	a->nloss = a->loss_cap = 0;
	a->next_free = m->free_head;
	m->free_head = i;
}

/* Bytes of a overwritten at ts while some of its cells stay live. */
static void lose(struct nx_oc_alloc *a, int64_t ts, int64_t bytes)
{
	if (a->nloss && a->loss[a->nloss - 1].ts == ts) {
		a->loss[a->nloss - 1].bytes += bytes;
		return;
	}
	NX_GROW(a->loss, a->nloss + 1, a->loss_cap);
	a->loss[a->nloss++] = (struct nx_oc_loss){ ts, bytes };
}

/* Allocation o loses its cells of group g, columns ca..cb, at ts, as if cell by cell:
 * the cells before its last one are losses, and its last one ends it. */
static void take(struct nx_oc_map *m, int32_t o, unsigned g, size_t ca, size_t cb, int64_t ts)
{
	struct nx_oc_alloc *old = &m->pool[o];
	size_t k = cb - ca + 1;

	if (old->cells > k) {
		old->cells -= k;
		lose(old, ts, run_bytes(&old->r, g, ca, cb));
		return;
	}
	if (k > 1)
		lose(old, ts, run_bytes(&old->r, g, ca, cb - 1));
	old->cells = 0;
	old->kill = ts;
	close_alloc(m, o);
}

/* The first marked column after c up to c1 in a row's edge bits (the end of the run
 * holding c, plus one), or c1 + 1. */
static size_t next_edge(const uint64_t *w, size_t c, size_t c1)
{
	size_t x = c + 1, k = x / 64, last = c1 / 64;

	if (x > c1)
		return c1 + 1;
	uint64_t v = w[k] & (~(uint64_t)0 << (x % 64));
	while (!v) {
		if (++k > last)
			return c1 + 1;
		v = w[k];
	}
	size_t b = k * 64 + (size_t)__builtin_ctzll(v);
	return b <= c1 ? b : c1 + 1;
}

/* Columns a..b (a <= b) of a row now hold one new owner: no run starts inside them, one
 * starts at a and one at b + 1. */
static void mark_run(uint64_t *w, size_t a, size_t b)
{
	size_t ka = a / 64, kb = b / 64;
	uint64_t ma = ~(uint64_t)0 << (a % 64), mb = ~(uint64_t)0 >> (63 - b % 64);

	if (ka == kb) {
		w[ka] &= ~(ma & mb);
	} else {
		w[ka] &= ~ma;
		for (size_t k = ka + 1; k < kb; k++)
			w[k] = 0;
		w[kb] &= ~mb;
	}
	w[ka] |= (uint64_t)1 << (a % 64);
	w[(b + 1) / 64] |= (uint64_t)1 << ((b + 1) % 64);
}

void nx_oc_read(struct nx_oc_map *m, const struct nx_oc_range *r, int64_t end)
{
	size_t n = m->ncols[r->mem], nw = m->nwords[r->mem], c0 = r->lo / CELL,
	       c1 = r->hi / CELL;

	for (unsigned g = r->p0 / GP; g <= r->p1 / GP; g++) {
		const int32_t *row = m->owner[r->mem] + g * n;
		const uint64_t *w = m->edge[r->mem] + g * nw;
		for (size_t c = c0; c <= c1; c = next_edge(w, c, c1)) {
			int32_t o = row[c];
			if (o >= 0 && m->pool[o].rend < end)
				m->pool[o].rend = end;
		}
	}
}

void nx_oc_extend(struct nx_oc_map *m, const struct nx_oc_range *r, uint64_t transfer,
		  int64_t end)
{
	size_t n = m->ncols[r->mem], nw = m->nwords[r->mem], c0 = r->lo / CELL,
	       c1 = r->hi / CELL;

	for (unsigned g = r->p0 / GP; g <= r->p1 / GP; g++) {
		const int32_t *row = m->owner[r->mem] + g * n;
		const uint64_t *w = m->edge[r->mem] + g * nw;
		for (size_t c = c0; c <= c1; c = next_edge(w, c, c1)) {
			int32_t o = row[c];
			struct nx_oc_alloc *a = o >= 0 ? &m->pool[o] : NULL;
			if (a && a->dma && a->transfer == transfer && a->wend < end)
				a->rend = max_i64(a->rend, a->wend = end);
		}
	}
}

/* p[0..n) = v, two cells a store (the cells of a write are a hot loop). */
static void fill(int32_t *p, size_t n, int32_t v)
{
	uint64_t two = (uint64_t)(uint32_t)v * 0x100000001u;
	size_t k = 0;

	if (n && ((uintptr_t)p & 7)) {
		p[0] = v;
		k = 1;
	}
	for (; k + 2 <= n; k += 2)
		memcpy(p + k, &two, sizeof(two));
	if (k < n)
		p[k] = v;
}

/* One allocation unit (a partition group of SBUF, a bank of PSUM) written by w. */
static void write_unit(struct nx_oc_map *m, const struct nx_oc_range *r, unsigned unit,
		       const struct nx_oc_writer *w)
{
	size_t n = m->ncols[r->mem], c0 = r->lo / CELL, c1 = r->hi / CELL;
	int32_t o = m->owner[r->mem][(r->p0 / GP) * n + c0];

	if (o >= 0) {
		struct nx_oc_alloc *a = &m->pool[o];
		bool same = nx_oc_range_eq(&a->r, r) && a->cells == range_cells(r);
		if (same && !w->dma && w->in_place) {
			a->wend = max_i64(a->wend, w->end);
			a->rend = max_i64(a->rend, a->wend);
			return;
		}
	}
	int32_t i = m->free_head;
	if (i >= 0) {
		m->free_head = m->pool[i].next_free;
	} else {
		NX_GROW(m->pool, m->npool + 1, m->pool_cap);
		i = (int32_t)m->npool++;
	}
	struct nx_oc_alloc *a = &m->pool[i];
	*a = (struct nx_oc_alloc){ .r = *r, .unit = unit, .start = w->start, .wend = w->end,
		.rend = w->end, .kill = INT64_MAX, .dma = w->dma, .engine = w->engine,
		.pc = w->pc, .block = w->block, .desc = w->desc, .transfer = w->transfer,
		.next_free = -1 };
	a->bytes = (int64_t)(r->p1 - r->p0 + 1) * (int64_t)(r->hi - r->lo + 1);
	a->cells = range_cells(r);
	for (unsigned g = r->p0 / GP; g <= r->p1 / GP; g++) {
		int32_t *row = m->owner[r->mem] + g * n;
		uint64_t *ew = m->edge[r->mem] + g * m->nwords[r->mem];
		for (size_t c = c0, e; c <= c1; c = e) {
			o = row[c];
			e = next_edge(ew, c, c1);
			if (o >= 0)
				take(m, o, g, c, e - 1, w->start);
		}
		fill(row + c0, c1 - c0 + 1, i);
		mark_run(ew, c0, c1);
	}
}

void nx_oc_write(struct nx_oc_map *m, const struct nx_oc_range *r, const struct nx_oc_writer *w)
{
	struct nx_oc_range u = *r;

	if (r->mem == NX_OC_SBUF) {
		for (unsigned g = r->p0 / GP; g <= r->p1 / GP; g++) {
			u.p0 = r->p0 > g * GP ? r->p0 : g * GP;
			u.p1 = r->p1 < (g + 1) * GP - 1 ? r->p1 : (g + 1) * GP - 1;
			write_unit(m, &u, g * GP, w);
		}
		return;
	}
	for (uint64_t b = r->lo / m->bank_bytes; b <= r->hi / m->bank_bytes; b++) {
		u.lo = max_u64(r->lo, b * m->bank_bytes);
		u.hi = min_u64(r->hi, (b + 1) * m->bank_bytes - 1);
		write_unit(m, &u, (unsigned)b, w);
	}
}

void nx_oc_close_all(struct nx_oc_map *m)
{
	for (size_t i = 0; i < m->npool; i++)
		if (m->pool[i].cells)
			close_alloc(m, (int32_t)i);
}
