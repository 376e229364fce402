/* SPDX-License-Identifier: MIT
 * cost.h: the per-instruction and per-DMA-packet cost model, as pure functions so
 * unit tests can check them against hand-computed times (docs/simulator.md). */
#ifndef NX_SIM_COST_H
#define NX_SIM_COST_H

#include "common/compat.h"
#include "neff/isa.h"
#include "neff/neff.h"
#include "sim/machine.h"

/* Clock of an engine in MHz (Sync runs at the NeuronCore base clock). */
unsigned nx_cost_engine_mhz(const struct nx_machine *m, int engine);

/* Tensor engine: cycles of an unthrottled LDWEIGHTS, MATMUL or control instruction. */
uint64_t nx_cost_tensor_cycles(const struct nx_machine *m, const struct nx_inst *in);

/* Tensor engine: cycles of an unthrottled MATMUL whose stationary operand (the last
 * LDWEIGHTS) has `stationary` columns: max(min(64, stationary), N) for 2-byte and FP8
 * types, 4x for FP32 (the documented nc_matmul cost). */
uint64_t nx_cost_matmul_cycles(const struct nx_machine *m, const struct nx_inst *in,
			       uint64_t stationary);

/* Vector, Scalar, GpSimd and Sync: cycles of one instruction. `dependent` is true when
 * the instruction depends on an earlier instruction of its own engine (it waits on a
 * semaphore that engine updated last); it then pays the dependent static overhead on
 * top of the access set-up. */
uint64_t nx_cost_alu_cycles(const struct nx_machine *m, const struct nx_inst *in, bool dependent);

/* Duration in picoseconds of any compute-engine instruction (no throttling). */
uint64_t nx_cost_inst_ps(const struct nx_machine *m, const struct nx_inst *in, bool dependent);

/* Geometry of one DMA descriptor as the DMA engines see it: `rows` contiguous runs of
 * `row_bytes` each, spread over the partitions [first_partition, first_partition +
 * partitions) of the on-chip side (partitions is 0 for HBM-to-HBM copies). */
struct nx_dma_geom {
	uint64_t rows;
	uint64_t row_bytes;
	unsigned first_partition;
	unsigned partitions;
	bool hbm;          /* one side is HBM (the shared HBM cap applies) */
	uint64_t hbm_run;  /* bytes contiguous on the HBM side; may span several partitions
			    * (an engine moves them as one run); row_bytes when no HBM side */
};
void nx_cost_dma_geom(const struct nx_dma_desc *d, struct nx_dma_geom *g);

/* Engine time in picoseconds to move `rows` runs of `row_bytes` (one packet): a fixed
 * cost per run plus the engine's streaming time (inline: asked once per packet). */
static inline uint64_t nx_cost_dma_packet_ps(const struct nx_machine *m, uint64_t rows,
					     uint64_t row_bytes, bool transpose)
{
	uint64_t per_row = m->dma_desc_overhead_ps + row_bytes * m->dma_engine_fs_per_byte / 1000;
	uint64_t t = rows * per_row;

	return transpose ? t * m->dma_transpose_factor : t;
}

/* Static descriptor rings: the least time between the starts of two descriptors of
 * one queue on one DMA engine (per_engine false: the time the engine takes to stream
 * dma_ring_queue_bytes), or the least time the engine spends on each such descriptor
 * (per_engine true: dma_ring_engine_bytes); 0 when the machine has no such limit. */
uint64_t nx_cost_dma_ring_gap_ps(const struct nx_machine *m, bool per_engine);

#endif
