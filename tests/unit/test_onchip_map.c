/* SPDX-License-Identifier: MIT
 * test_onchip_map.c: the occupancy pass's ownership map (src/ingest/onchip_map.c), which
 * walks the cells in runs of one owner, against the cell-by-cell model it replaced (kept
 * here as the reference, as occupancy.c had it up to 0d161c4). Both are driven by the
 * same pseudo-random accesses, many thousands of them over a few memory shapes, and must
 * emit the same rows in the same order: overlapping writes, partial overwrites (the
 * negative rows), in-place updates and accumulating reads, a DMA transfer's later
 * packets, PSUM banks, writes across partition groups, ranges clipped at the memory's
 * end, and what is still live at the trace's end. */
#include "common/compat.h"
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "common/xalloc.h"
#include "ingest/onchip_map.h"
#include "neff/isa.h"

#include <stdlib.h>
#include <string.h>

/* ---- one emitted row, as both models give it ---- */

struct row {
	int mem;
	unsigned p0, p1, unit;
	uint64_t lo, hi;
	int64_t start, end, bytes;
	bool dma;
	int engine;
	uint32_t pc, block;
};

struct rows {
	struct row *v;
	size_t n, cap;
};

static void add_row(struct rows *rs, const struct nx_oc_alloc *a, int64_t start, int64_t end,
		    int64_t bytes)
{
	NX_GROW(rs->v, rs->n + 1, rs->cap);
	rs->v[rs->n++] = (struct row){ .mem = a->r.mem, .p0 = a->r.p0, .p1 = a->r.p1,
		.unit = a->unit, .lo = a->r.lo, .hi = a->r.hi, .start = start, .end = end,
		.bytes = bytes, .dma = a->dma, .engine = a->engine, .pc = a->pc,
		.block = a->block };
}

static void emit_new(void *arg, const struct nx_oc_alloc *a, int64_t start, int64_t end,
		     int64_t bytes)
{
	add_row(arg, a, start, end, bytes);
}

/* ---- the reference: the map cell by cell ---- */

#define CELL NX_OC_CELL_BYTES
#define GP NX_OC_GROUP_PARTS
#define NGROUPS (NX_NUM_PARTITIONS / GP)

struct ref {
	uint64_t cap_bytes[NX_OC_NMEM], bank_bytes;
	size_t ncols[NX_OC_NMEM];
	int32_t *owner[NX_OC_NMEM];
	struct nx_oc_alloc *pool;
	size_t npool, pool_cap;
	int32_t free_head;
	struct rows *rows;
};

static uint64_t min_u64(uint64_t a, uint64_t b) { return a < b ? a : b; }
static uint64_t max_u64(uint64_t a, uint64_t b) { return a > b ? a : b; }
static int64_t min_i64(int64_t a, int64_t b) { return a < b ? a : b; }
static int64_t max_i64(int64_t a, int64_t b) { return a > b ? a : b; }

static void ref_init(struct ref *s, uint64_t sbuf, uint64_t psum, uint64_t bank, struct rows *rows)
{
	*s = (struct ref){ .free_head = -1, .bank_bytes = bank, .rows = rows };
	s->cap_bytes[NX_OC_SBUF] = sbuf;
	s->cap_bytes[NX_OC_PSUM] = psum;
	for (int k = 0; k < NX_OC_NMEM; k++) {
		s->ncols[k] = (size_t)((s->cap_bytes[k] + CELL - 1) / CELL);
		s->owner[k] = nx_xmalloc(NGROUPS * s->ncols[k] * sizeof(int32_t));
		memset(s->owner[k], 0xff, NGROUPS * s->ncols[k] * sizeof(int32_t));
	}
}

static void ref_release(struct ref *s)
{
	for (size_t i = 0; i < s->npool; i++)
		free(s->pool[i].loss);
	free(s->pool);
	for (int k = 0; k < NX_OC_NMEM; k++)
		free(s->owner[k]);
}

static bool ref_range_eq(const struct nx_oc_range *a, const struct nx_oc_range *b)
{
	return a->mem == b->mem && a->p0 == b->p0 && a->p1 == b->p1 && a->lo == b->lo &&
	       a->hi == b->hi;
}

static int64_t cell_bytes(const struct nx_oc_range *r, unsigned g, size_t col)
{
	unsigned p0 = r->p0 > g * GP ? r->p0 : g * GP;
	unsigned p1 = r->p1 < (g + 1) * GP - 1 ? r->p1 : (g + 1) * GP - 1;
	uint64_t lo = max_u64(r->lo, col * CELL);
	uint64_t hi = min_u64(r->hi, (col + 1) * CELL - 1);

	return p1 < p0 || hi < lo ? 0 : (int64_t)(p1 - p0 + 1) * (int64_t)(hi - lo + 1);
}

static void ref_close(struct ref *s, int32_t i)
{
	struct nx_oc_alloc *a = &s->pool[i];
	int64_t end = max_i64(a->wend, min_i64(a->rend, a->kill));

	add_row(s->rows, a, a->start, end, a->bytes);
	for (size_t k = 0; k < a->nloss; k++)
		if (a->loss[k].ts < end)
			add_row(s->rows, a, max_i64(a->start, a->loss[k].ts), end, -a->loss[k].bytes);
	free(a->loss);
	a->loss = NULL;
	a->nloss = a->loss_cap = 0;
	a->next_free = s->free_head;
	s->free_head = i;
}

static void ref_read(struct ref *s, const struct nx_oc_range *r, int64_t end)
{
	size_t n = s->ncols[r->mem];

	for (unsigned g = r->p0 / GP; g <= r->p1 / GP; g++)
		for (size_t col = r->lo / CELL; col <= r->hi / CELL; col++) {
			int32_t o = s->owner[r->mem][g * n + col];
			if (o >= 0 && s->pool[o].rend < end)
				s->pool[o].rend = end;
		}
}

static size_t ref_cells(const struct nx_oc_range *r)
{
	return (size_t)(r->p1 / GP - r->p0 / GP + 1) * (size_t)(r->hi / CELL - r->lo / CELL + 1);
}

static void ref_write_unit(struct ref *s, const struct nx_oc_range *r, unsigned unit,
			   const struct nx_oc_writer *w)
{
	size_t n = s->ncols[r->mem];
	int32_t o = s->owner[r->mem][(r->p0 / GP) * n + r->lo / CELL];

	if (o >= 0) {
		struct nx_oc_alloc *a = &s->pool[o];
		bool same = ref_range_eq(&a->r, r) && a->cells == ref_cells(r);
		if (same && !w->dma && w->in_place) {
			a->wend = max_i64(a->wend, w->end);
			a->rend = max_i64(a->rend, a->wend);
			return;
		}
	}
	int32_t i = s->free_head;
	if (i >= 0) {
		s->free_head = s->pool[i].next_free;
	} else {
		NX_GROW(s->pool, s->npool + 1, s->pool_cap);
		i = (int32_t)s->npool++;
	}
	struct nx_oc_alloc *a = &s->pool[i];
	*a = (struct nx_oc_alloc){ .r = *r, .unit = unit, .start = w->start, .wend = w->end,
		.rend = w->end, .kill = INT64_MAX, .dma = w->dma, .engine = w->engine,
		.pc = w->pc, .block = w->block, .desc = w->desc, .transfer = w->transfer,
		.next_free = -1 };
	for (unsigned g = r->p0 / GP; g <= r->p1 / GP; g++)
		for (size_t col = r->lo / CELL; col <= r->hi / CELL; col++) {
			int32_t *cell = &s->owner[r->mem][g * n + col];
			a->bytes += cell_bytes(r, g, col);
			a->cells++;
			if (*cell >= 0) {
				struct nx_oc_alloc *old = &s->pool[*cell];
				int64_t lost = cell_bytes(&old->r, g, col);
				if (--old->cells == 0) {
					old->kill = w->start;
					ref_close(s, *cell);
				} else if (old->nloss && old->loss[old->nloss - 1].ts == w->start) {
					old->loss[old->nloss - 1].bytes += lost;
				} else {
					NX_GROW(old->loss, old->nloss + 1, old->loss_cap);
					old->loss[old->nloss++] = (struct nx_oc_loss){ w->start, lost };
				}
			}
			*cell = i;
		}
}

static void ref_write(struct ref *s, const struct nx_oc_range *r, const struct nx_oc_writer *w)
{
	struct nx_oc_range u = *r;

	if (r->mem == NX_OC_SBUF) {
		for (unsigned g = r->p0 / GP; g <= r->p1 / GP; g++) {
			u.p0 = r->p0 > g * GP ? r->p0 : g * GP;
			u.p1 = r->p1 < (g + 1) * GP - 1 ? r->p1 : (g + 1) * GP - 1;
			ref_write_unit(s, &u, g * GP, w);
		}
		return;
	}
	for (uint64_t b = r->lo / s->bank_bytes; b <= r->hi / s->bank_bytes; b++) {
		u.lo = max_u64(r->lo, b * s->bank_bytes);
		u.hi = min_u64(r->hi, (b + 1) * s->bank_bytes - 1);
		ref_write_unit(s, &u, (unsigned)b, w);
	}
}

static void ref_extend(struct ref *s, const struct nx_oc_range *rg, uint64_t transfer, int64_t end)
{
	size_t nc = s->ncols[rg->mem];
	for (unsigned g = rg->p0 / GP; g <= rg->p1 / GP; g++)
		for (size_t col = rg->lo / CELL; col <= rg->hi / CELL; col++) {
			int32_t o = s->owner[rg->mem][g * nc + col];
			struct nx_oc_alloc *a = o >= 0 ? &s->pool[o] : NULL;
			if (a && a->dma && a->transfer == transfer && a->wend < end)
				a->rend = max_i64(a->rend, a->wend = end);
		}
}

static void ref_close_all(struct ref *s)
{
	for (size_t i = 0; i < s->npool; i++)
		if (s->pool[i].cells)
			ref_close(s, (int32_t)i);
}

/* ---- the accesses ---- */

static uint64_t rng_state;

static uint32_t rnd(uint32_t n)
{
	rng_state = rng_state * 6364136223846793005ull + 1442695040888963407ull;
	return (uint32_t)((rng_state >> 33) % n);
}

/* A range of mem: small, large, cell-aligned or not, sometimes past the end (clipped;
 * false when nothing is left of it). */
static bool random_range(const struct nx_oc_map *m, int mem, struct nx_oc_range *r)
{
	uint64_t cap = m->cap_bytes[mem];
	unsigned shape = rnd(4);

	r->mem = mem;
	r->p0 = rnd(8) ? rnd(NX_NUM_PARTITIONS) : 32 * rnd(4);
	r->p1 = r->p0 + (rnd(3) ? rnd(NX_NUM_PARTITIONS) : rnd(40));
	r->lo = shape == 0 ? CELL * rnd((unsigned)(cap / CELL)) : rnd((unsigned)cap);
	uint64_t len = shape == 1 ? 1 + rnd(CELL) : shape == 2 ? 1 + rnd((unsigned)(cap / 4))
								 : CELL * (1 + rnd(8));
	if (!rnd(20))
		r->lo = cap - 1 - rnd(100); /* runs past the end */
	r->hi = r->lo + len - 1;
	if (!rnd(8)) {
		/* one whole unit: an SBUF partition group, a PSUM bank */
		if (mem == NX_OC_SBUF) {
			r->p0 = 32 * rnd(4);
			r->p1 = r->p0 + 31;
		} else {
			uint64_t banks = (cap + m->bank_bytes - 1) / m->bank_bytes;
			r->lo = m->bank_bytes * rnd((unsigned)banks);
			r->hi = r->lo + m->bank_bytes - 1;
		}
	}
	if (!rnd(50))
		r->p0 = NX_NUM_PARTITIONS + rnd(4); /* wholly outside */
	return nx_oc_clip(m, r);
}

struct both {
	struct nx_oc_map m;
	struct ref ref;
	struct rows got, want;
};

static bool row_eq(const struct row *a, const struct row *b)
{
	return a->mem == b->mem && a->p0 == b->p0 && a->p1 == b->p1 && a->unit == b->unit &&
	       a->lo == b->lo && a->hi == b->hi && a->start == b->start && a->end == b->end &&
	       a->bytes == b->bytes && a->dma == b->dma && a->engine == b->engine &&
	       a->pc == b->pc && a->block == b->block;
}

static void compare(const struct both *b, const char *when, unsigned step)
{
	if (b->got.n != b->want.n)
		fail_msg("%s, step %u: %zu rows, the reference %zu", when, step, b->got.n, b->want.n);
	for (size_t i = 0; i < b->got.n; i++)
		if (!row_eq(&b->got.v[i], &b->want.v[i]))
			fail_msg("%s, step %u: row %zu differs (bytes %lld against %lld, end %lld "
				 "against %lld)", when, step, i, (long long)b->got.v[i].bytes,
				 (long long)b->want.v[i].bytes, (long long)b->got.v[i].end,
				 (long long)b->want.v[i].end);
}

#define HISTORY 16

/* n accesses on memories of the given shape, from seed. */
static void run(uint64_t sbuf, uint64_t psum, uint64_t bank, uint64_t seed, unsigned n)
{
	struct both *b = nx_xcalloc(1, sizeof(*b));
	struct nx_oc_range hist[HISTORY];
	uint64_t xfer_id[HISTORY];
	struct nx_oc_range xfer_rg[HISTORY];
	unsigned nhist = 0, nxfer = 0;
	int64_t t = 0;
	size_t lost_rows = 0, dma_rows = 0;

	rng_state = seed;
	nx_oc_map_init(&b->m, sbuf, psum, bank, emit_new, &b->got);
	ref_init(&b->ref, sbuf, psum, bank, &b->want);
	memset(&b->got, 0, sizeof(b->got));
	for (unsigned step = 0; step < n; step++) {
		int mem = rnd(3) ? NX_OC_SBUF : NX_OC_PSUM;
		struct nx_oc_range r;
		t += rnd(4) ? rnd(50) : 0;               /* starts in order, often equal */
		int64_t end = t + (rnd(10) ? rnd(400) : 0);
		unsigned op = rnd(10);

		if (nhist && rnd(3) == 0) {
			r = hist[rnd(nhist)];            /* a range seen before */
		} else if (!random_range(&b->m, mem, &r)) {
			continue;
		}
		if (op < 3) {                            /* an instruction's read */
			nx_oc_read(&b->m, &r, end);
			ref_read(&b->ref, &r, end);
		} else if (op < 7) {                     /* an instruction's write */
			struct nx_oc_writer w = { .start = t, .end = end, .engine = (int)rnd(5),
				.pc = rnd(1000), .in_place = rnd(2) };
			if (w.in_place && rnd(2)) {      /* an accumulating MATMUL */
				nx_oc_read(&b->m, &r, end);
				ref_read(&b->ref, &r, end);
			}
			nx_oc_write(&b->m, &r, &w);
			ref_write(&b->ref, &r, &w);
		} else if (op < 9 || !nxfer) {           /* a transfer's first packet */
			struct nx_oc_writer w = { .start = t, .end = end, .dma = true,
				.engine = -1, .block = rnd(50), .desc = rnd(4),
				.transfer = step };
			nx_oc_write(&b->m, &r, &w);
			ref_write(&b->ref, &r, &w);
			unsigned k = nxfer < HISTORY ? nxfer++ : rnd(HISTORY);
			xfer_id[k] = step;
			xfer_rg[k] = r;
		} else {                                 /* a later packet of one */
			unsigned k = rnd(nxfer);
			if (rnd(2))
				r = xfer_rg[k];
			nx_oc_extend(&b->m, &r, xfer_id[k], end);
			ref_extend(&b->ref, &r, xfer_id[k], end);
		}
		hist[nhist < HISTORY ? nhist++ : rnd(HISTORY)] = r;
		if (step % 256 == 0)
			compare(b, "during", step);
	}
	nx_oc_close_all(&b->m);
	ref_close_all(&b->ref);
	compare(b, "at the end", n);
	for (size_t i = 0; i < b->want.n; i++) {
		lost_rows += b->want.v[i].bytes < 0;
		dma_rows += b->want.v[i].dma;
	}
	/* the accesses made every kind of row */
	assert_true(b->want.n > n / 4);
	assert_true(lost_rows > 0);
	assert_true(dma_rows > 0);
	nx_oc_map_release(&b->m);
	ref_release(&b->ref);
	free(b->got.v);
	free(b->want.v);
	free(b);
}

/* A small memory (4 KiB partitions, PSUM banks of 256 bytes): every access overlaps many. */
static void test_small(void **state)
{
	(void)state;
	for (uint64_t seed = 1; seed <= 8; seed++)
		run(4096, 1024, 256, seed, 20000);
}

/* Sizes that are no multiple of a cell: the last column is partial. */
static void test_ragged(void **state)
{
	(void)state;
	for (uint64_t seed = 11; seed <= 14; seed++)
		run(4096 + 40, 1000, 250, seed, 20000);
}

/* trn2's sizes (224 KiB partitions, 8 PSUM banks of 2 KiB). */
static void test_trn2(void **state)
{
	(void)state;
	for (uint64_t seed = 21; seed <= 22; seed++)
		run(224 * 1024, 16 * 1024, 2048, seed, 20000);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_small),
		cmocka_unit_test(test_ragged),
		cmocka_unit_test(test_trn2),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
