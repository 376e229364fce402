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

static void mark(struct sim *s, uint64_t lo, uint64_t hi)
{
	for (uint64_t g = lo / GRANULE; g < GRANULES && g * GRANULE < hi; g++)
		s->landed[g / 64] |= (uint64_t)1 << (g % 64);
}

static void clear(struct sim *s, uint64_t lo, uint64_t hi)
{
	for (uint64_t g = lo / GRANULE; g < GRANULES && g * GRANULE < hi; g++)
		s->landed[g / 64] &= ~((uint64_t)1 << (g % 64));
}

static bool any(const struct sim *s, uint64_t lo, uint64_t hi)
{
	for (uint64_t g = lo / GRANULE; g < GRANULES && g * GRANULE < hi; g++)
		if (s->landed[g / 64] >> (g % 64) & 1)
			return true;
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
		mark(s, lo, hi);
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
		clear(s, lo, hi);
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
		if (any(s, lo, hi))
			return true;
	}
	return false;
}
