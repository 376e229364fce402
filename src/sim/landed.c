/* SPDX-License-Identifier: MIT
 * landed.c: which SBUF bytes a DMA wrote last (trn1). A VectorE instruction that reads
 * such bytes starts dve_landed_ps late (docs/simulator.md, "VectorE reads of DMA-written
 * bytes"). The map keeps one bit per 64-byte granule of a partition's address space,
 * for all partitions at once: a DMA trigger marks the SBUF bytes its descriptors write,
 * and any engine instruction writing SBUF clears every granule it touches: the pool places
 * tiles on 64-byte boundaries, so bytes of a granule an engine writes in part belonged to
 * an earlier tile there, and a small tile (a 4-byte accumulator) an engine keeps writing
 * is not read as DMA-written because a reload once used its granule. */
#include "common/compat.h"
#include "sim/sim_int.h"

enum { GRANULE = 64, GRANULES = SIM_LANDED_WORDS * 64 };

/* The bytes [*lo, *hi) of each partition that `ndim` free dimensions (sizes and steps in
 * elements of `es` bytes) starting at byte `off` cover. */
static void span(uint64_t off, unsigned ndim, const uint64_t *size, const int64_t *step,
		 unsigned es, uint64_t *lo, uint64_t *hi)
{
	int64_t below = 0, above = 0;

	for (unsigned k = 0; k < ndim; k++) {
		int64_t reach = size[k] ? (int64_t)(size[k] - 1) * step[k] * (int64_t)es : 0;

		if (reach < 0)
			below -= reach;
		else
			above += reach;
	}
	*lo = (uint64_t)below > off ? 0 : off - (uint64_t)below;
	*hi = off + (uint64_t)above + es;
}

/* The granules of bytes [lo, hi) are [*g, *end), within the map. */
static void granule_range(uint64_t lo, uint64_t hi, uint64_t *g, uint64_t *end)
{
	*g = lo / GRANULE;
	*end = hi / GRANULE + (hi % GRANULE != 0);
	if (*end > GRANULES)
		*end = GRANULES;
}

/* The granules from g up to end that share g's word of the map, as a mask of that word;
 * *g moves past them. */
static uint64_t word_mask(uint64_t *g, uint64_t end)
{
	unsigned bit = (unsigned)(*g % 64), n = 64 - bit;

	if (n > end - *g)
		n = (unsigned)(end - *g);
	*g += n;
	return (n == 64 ? ~(uint64_t)0 : ((uint64_t)1 << n) - 1) << bit;
}

/* Marks (on) or clears the granules of bytes [lo, hi), a word of 64 at a time. */
static void set_granules(struct sim *s, uint64_t lo, uint64_t hi, bool on)
{
	uint64_t g, end;

	granule_range(lo, hi, &g, &end);
	while (g < end) {
		uint64_t w = g / 64, mask = word_mask(&g, end);

		s->landed[w] = on ? s->landed[w] | mask : s->landed[w] & ~mask;
	}
}

static bool any_granule(const struct sim *s, uint64_t lo, uint64_t hi)
{
	uint64_t g, end;

	granule_range(lo, hi, &g, &end);
	while (g < end) {
		uint64_t w = g / 64;

		if (s->landed[w] & word_mask(&g, end))
			return true;
	}
	return false;
}

static void ap_span(const struct nx_ap *ap, uint64_t *lo, uint64_t *hi)
{
	uint64_t size[NX_AP_DIMS];
	int64_t step[NX_AP_DIMS];
	unsigned es = nx_dtype_size(ap->dtype);

	for (unsigned k = 0; k < NX_AP_DIMS; k++) {
		size[k] = ap->size[k];
		step[k] = ap->step[k];
	}
	span(ap->offset, NX_AP_DIMS, size, step, es ? es : 1, lo, hi);
}

void nx__sim_landed_block(struct sim *s, uint32_t block)
{
	const struct nx_dma_block *b = &s->neff->blocks[block];

	for (size_t i = 0; i < b->ndesc; i++) {
		const struct nx_dma_desc *d = &b->desc[i];
		unsigned es = nx_dtype_size(d->cast ? d->to_dtype : d->dtype);
		uint64_t lo, hi;

		if (d->to_loc != NX_LOC_SBUF || !d->to_ndim)
			continue;
		/* the first dimension is the partitions */
		span(d->to_off, d->to_ndim - 1, d->to_sizes + 1, d->to_steps + 1, es ? es : 1,
		     &lo, &hi);
		set_granules(s, lo, hi, true);
	}
}

void nx__sim_landed_write(struct sim *s, const struct nx_inst *in)
{
	const struct nx_ap *out[2] = { &in->dst, &in->dst2 };

	for (int i = 0; i < 2; i++) {
		uint64_t lo, hi;

		if (out[i]->mem != NX_MEM_SBUF)
			continue;
		ap_span(out[i], &lo, &hi);
		set_granules(s, lo, hi, false);
	}
}

bool nx__sim_landed_read(const struct sim *s, const struct nx_inst *in)
{
	const struct nx_ap *src[3] = { &in->src0, &in->src1, &in->src2 };

	for (int i = 0; i < 3; i++) {
		uint64_t lo, hi;

		if (src[i]->mem != NX_MEM_SBUF)
			continue;
		ap_span(src[i], &lo, &hi);
		if (any_granule(s, lo, hi))
			return true;
	}
	return false;
}
