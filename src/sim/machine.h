/* SPDX-License-Identifier: MIT
 * machine.h: the hardware constants of the simulated NeuronCore generations.
 *
 * Every figure comes from the research notes (shared/reference/neuron-explorer.md
 * §6.1 and §6.2) or is one of our own assumptions; docs/simulator.md lists which is
 * which. Clocks are kept in MHz and bandwidths in femtoseconds per byte so all timing
 * arithmetic is integer and therefore reproducible on any host. */
#ifndef NX_SIM_MACHINE_H
#define NX_SIM_MACHINE_H

#include "common/compat.h"

struct nx_machine {
	const char *target;          /* "trn2", "trn1" */
	const char *instance_type;   /* "trn2.48xlarge", "trn1.32xlarge" */
	const char *core_name;       /* "NeuronCore-v3", "NeuronCore-v2" */
	bool v3;                     /* NeuronCore-v3 rules (perf modes, FP8 x0.5, throttling) */
	/* clocks (MHz) */
	unsigned te_mhz, ve_mhz, se_mhz, gp_mhz, nc_mhz;
	/* on-chip memories, per partition */
	uint64_t sbuf_partition_bytes;
	uint64_t psum_partition_bytes;
	uint64_t psum_bank_bytes;
	/* Tensor engine */
	unsigned te_rows, te_cols;
	unsigned mm_max_moving;      /* moving free size limit (512) */
	unsigned mm_min_ii;          /* MATMUL initiation interval floor, TE cycles (64) */
	unsigned fp32_factor;        /* FP32 matmul cost multiplier (4) */
	unsigned lw_speedup;         /* LoadStationary vs MATMUL of the same free size (4) */
	/* Vector / Scalar / GpSimd */
	unsigned alu_min_ii;         /* MIN_II, engine cycles (64) */
	unsigned alu_static;         /* SBUF/PSUM access set-up per instruction, cycles (60) */
	unsigned alu_dep_static;     /* extra static overhead of a dependent instruction (100) */
	unsigned recip_factor;       /* reciprocal (ALU divide) on Vector: 8N */
	unsigned control_cycles;     /* NOP / EVENT_SEMAPHORE / NOTIFY / DMA trigger, engine cycles */
	uint64_t sem_latency_ps;     /* an engine's semaphore update reaches waiters (M6) */
	/* DMA */
	unsigned dma_engines;        /* 16 */
	unsigned dma_partitions_per_engine; /* ~8 partitions of a transfer per engine */
	uint64_t dma_engine_fs_per_byte;    /* one engine's streaming rate */
	uint64_t dma_desc_overhead_ps;      /* fixed cost of each contiguous descriptor row */
	uint64_t dma_latency_ps;            /* trigger to first packet */
	uint64_t hw_dge_ps;                 /* a trigger on a hardware-DGE queue (v3), 0 none */
	uint64_t hbm_fs_per_byte;           /* shared HBM cap (one stack, one active core) */
	unsigned dma_transpose_factor;      /* DMA transpose slowdown */
	double dma_ddr_bandwidth;           /* bytes/s, Metadata */
	double hbm_ddr_bandwidth;           /* bytes/s, Metadata */
	/* Tensor throttling (dI/dt), v3 only */
	bool throttle;
	uint64_t throttle_ramp_ps;   /* ramp from 50% to 100% (~3 us) */
	uint64_t throttle_idle_ps;   /* idle gap that re-arms it */
	unsigned throttle_steps;     /* ramp steps; limits k/16 = 8, 10, 12, 14 */
};

/* Returns the constants of "trn2" (default when name is NULL) or "trn1"; NULL if the
 * name is unknown. The returned table is static. */
const struct nx_machine *nx_machine_get(const char *name);

/* Converts cycles of a clock in MHz to picoseconds, rounding to nearest. */
static inline uint64_t nx_cycles_ps(uint64_t cycles, unsigned mhz)
{
	return (cycles * 1000000u + mhz / 2) / mhz;
}

#endif
