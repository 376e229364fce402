/* SPDX-License-Identifier: MIT
 * machine.h: the simulator's cost model of each NeuronCore generation.
 *
 * The published hardware facts (clocks, memory sizes, DMA engines, bandwidths) live
 * in hw/hw.h; this table adds the costs the simulator charges, documented or fitted
 * (docs/simulator.md says which). Bandwidths are kept in femtoseconds per byte so all
 * timing arithmetic is integer and therefore reproducible on any host. */
#ifndef NX_SIM_MACHINE_H
#define NX_SIM_MACHINE_H

#include "common/compat.h"
#include "hw/hw.h"

struct nx_machine {
	const struct nx_hw *hw;      /* the generation's published facts */
	/* Tensor engine */
	unsigned mm_max_moving;      /* moving free size limit (512) */
	unsigned mm_min_ii;          /* MATMUL initiation interval floor, TE cycles (64) */
	unsigned fp32_factor;        /* FP32 matmul cost multiplier (4) */
	unsigned lw_speedup;         /* LoadStationary vs MATMUL of the same free size (4) */
	/* Vector / Scalar / GpSimd */
	unsigned alu_min_ii;         /* MIN_II, engine cycles (64) */
	unsigned alu_static;         /* SBUF/PSUM access set-up per instruction, cycles (60) */
	unsigned alu_dep_static;     /* extra static overhead when an instruction depends on
				      * the previous one of its engine (100) */
	unsigned recip_factor;       /* ALU divide on Vector: 8N */
	unsigned recip_op_halves;    /* the RECIPROCAL instruction on Vector, half-cycles per
				      * element (5: 2.5N, fitted to the NKI silu kernel) */
	unsigned control_cycles;     /* NOP / EVENT_SEMAPHORE / NOTIFY / DMA trigger, engine cycles */
	uint64_t sem_latency_ps;     /* an engine's semaphore update reaches waiters (M6) */
	uint64_t dve_landed_ps;      /* a VectorE instruction reading SBUF bytes a DMA wrote
				      * last starts this late (trn1, fitted to NKI silu), 0 none */
	/* DMA */
	unsigned dma_partitions_per_engine; /* ~8 partitions of a transfer per engine */
	uint64_t dma_engine_fs_per_byte;    /* one engine's streaming rate */
	uint64_t dma_desc_overhead_ps;      /* fixed cost of each contiguous descriptor row */
	uint64_t dma_latency_ps;            /* trigger to first packet */
	/* static descriptor rings, each limit given as the bytes the engine streams in the
	 * same time (0: no limit): a queue of an engine starts one descriptor per
	 * ring_queue_bytes, and the engine spends at least ring_engine_bytes on each */
	uint64_t dma_ring_queue_bytes;
	uint64_t dma_ring_engine_bytes;
	uint64_t hw_dge_ps;                 /* a trigger on a hardware-DGE queue (v3), 0 none */
	uint64_t hbm_fs_per_byte;           /* shared HBM cap (one stack, one active core) */
	unsigned dma_transpose_factor;      /* DMA transpose slowdown */
	/* Tensor throttling (dI/dt), v3 only */
	bool throttle;
	uint64_t throttle_ramp_ps;   /* ramp from 50% to 100% (~3 us) */
	uint64_t throttle_idle_ps;   /* idle gap that re-arms it */
	unsigned throttle_steps;     /* ramp steps; limits k/16 = 8, 10, 12, 14 */
};

/* Returns the cost model of "trn2" (default when name is NULL) or "trn1"; NULL if the
 * name is unknown. The returned table is static. */
const struct nx_machine *nx_machine_get(const char *name);

#endif
