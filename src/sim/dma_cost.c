/* SPDX-License-Identifier: MIT
 * dma_cost.c: how a DMA descriptor breaks into contiguous runs, and what a packet of
 * runs costs one DMA engine.
 *
 * A row is the longest stretch that is contiguous on both sides (on the SBUF/PSUM side
 * never more than one partition). What an engine pays for, though, is a run: a stretch
 * contiguous in HBM, which may cover several consecutive partitions of the engine
 * (writing to another SBUF partition costs nothing extra: 8 partitions x 256 B from
 * contiguous HBM took one engine 97 ns, measured on trn2). Each run pays a fixed cost
 * and then streams at the engine's rate, so bandwidth falls for small strided rows and
 * saturates around 4 KiB (docs/simulator.md, "DMA"; fitted to the micro facts M1 and M2).
 * Static descriptors, read from rings in memory, are also limited in rate: one per
 * queue gap on each queue of an engine, and at least an engine gap of the engine's
 * time each (fitted to the trn1 tutorial matmuls), which is what makes rows below
 * ~3 KiB slow on such queues. */
#include "common/compat.h"
#include "sim/cost.h"

/* Contiguous elements at the innermost end of a row-major HBM pattern. */
static uint64_t hbm_run(unsigned ndim, const uint64_t *sizes, const int64_t *steps)
{
	uint64_t run;
	int d;

	if (!ndim)
		return 1;
	if (steps[ndim - 1] != 1)
		return 1;
	run = sizes[ndim - 1];
	for (d = (int)ndim - 2; d >= 0; d--) {
		if (sizes[d] == 1)
			continue;
		if (steps[d] != (int64_t)run)
			break;
		run *= sizes[d];
	}
	return run;
}

static uint64_t prod(unsigned from, unsigned ndim, const uint64_t *sizes)
{
	uint64_t p = 1;

	for (unsigned d = from; d < ndim; d++)
		p *= sizes[d];
	return p;
}

void nx_cost_dma_geom(const struct nx_dma_desc *d, struct nx_dma_geom *g)
{
	unsigned es = nx_dtype_size(d->dtype);
	uint64_t bytes = d->bytes, run = UINT64_MAX;
	bool from_chip = d->from_loc != NX_LOC_HBM, to_chip = d->to_loc != NX_LOC_HBM;

	if (!es)
		es = 1;
	if (!bytes)
		bytes = prod(0, d->to_ndim, d->to_sizes) * es;
	g->hbm = !from_chip || !to_chip;
	g->partitions = 0;
	g->first_partition = 0;
	if (!from_chip) {
		uint64_t r = hbm_run(d->from_ndim, d->from_sizes, d->from_steps) * es;

		run = r < run ? r : run;
	}
	if (!to_chip) {
		uint64_t r = hbm_run(d->to_ndim, d->to_sizes, d->to_steps) * es;

		run = r < run ? r : run;
	}
	g->hbm_run = run;
	if (to_chip && d->to_ndim) {
		g->partitions = (unsigned)d->to_sizes[0];
		g->first_partition = d->to_start_partition;
	} else if (from_chip && d->from_ndim) {
		g->partitions = (unsigned)d->from_sizes[0];
		g->first_partition = d->from_start_partition;
	}
	if (g->partitions) {
		uint64_t per = bytes / g->partitions;

		if (per && per < run)
			run = per;
	}
	if (run == UINT64_MAX || !run)
		run = bytes ? bytes : 1;
	if (run > bytes && bytes)
		run = bytes;
	g->row_bytes = run;
	g->rows = bytes ? (bytes + run - 1) / run : 0;
	if (!g->hbm || g->hbm_run == UINT64_MAX || g->hbm_run < run)
		g->hbm_run = run;
}

uint64_t nx_cost_dma_ring_gap_ps(const struct nx_machine *m, bool per_engine)
{
	uint64_t bytes = per_engine ? m->dma_ring_engine_bytes : m->dma_ring_queue_bytes;

	return bytes * m->dma_engine_fs_per_byte / 1000;
}
