/* SPDX-License-Identifier: MIT
 * machine.c: the simulator's trn1 (NeuronCore-v2) and trn2 (NeuronCore-v3) cost
 * models. Figures are the published rules of thumb of the NKI architecture guides, DMA
 * overview and ISA reference unless marked "ours"; docs/simulator.md repeats them with
 * their sources. The published facts come from hw/hw.c. */
#include "common/compat.h"
#include "sim/machine.h"

#include <string.h>

static const struct nx_machine trn2 = {
	.hw = &nx_hw_trn2,
	.mm_max_moving = 512,
	.mm_min_ii = 64,
	.fp32_factor = 4,
	.lw_speedup = 4,
	.alu_min_ii = 64,
	.alu_static = 60,
	.alu_dep_static = 100,
	.recip_factor = 8,
	.recip_op_halves = 5,                   /* fitted on trn1 (silu), as there */
	.control_cycles = 64,                   /* ours */
	.sem_latency_ps = 30000,                /* M6: 189 ns start to start - 159 ns */
	.dve_landed_ps = 0,                     /* none: no trn2 measurement shows it */
	.dma_partitions_per_engine = 8,
	.dma_engine_fs_per_byte = 42918,        /* 23.3 B/ns per engine (M1/M2 fit) */
	.dma_desc_overhead_ps = 9000,           /* per HBM-contiguous run (M1/M2 line fit) */
	.dma_latency_ps = 1300000,              /* semaphore-to-start ~1.3 us per transfer */
	.dma_ring_queue_bytes = 2720,           /* both fitted on trn1 (below), taken as */
	.dma_ring_engine_bytes = 1650,          /* bytes: the guidance's sizes hold for all */
	.hw_dge_ps = 600000,                    /* ~600 ns per hardware-DGE instruction */
	.hbm_fs_per_byte = 1379,                /* 2.9 TB/s / 4 stacks = 725 GB/s */
	.dma_transpose_factor = 4,              /* ours */
	.throttle = true,
	.throttle_ramp_ps = 3000000,
	.throttle_idle_ps = 1500000,
	.throttle_steps = 4,
};

static const struct nx_machine trn1 = {
	.hw = &nx_hw_trn1,
	.mm_max_moving = 512,
	.mm_min_ii = 64,
	.fp32_factor = 4,
	.lw_speedup = 4,
	.alu_min_ii = 64,
	.alu_static = 60,
	.alu_dep_static = 100,
	.recip_factor = 8,
	.recip_op_halves = 5,                   /* 2.5N: NKI silu's VectorE active time */
	.control_cycles = 64,
	.sem_latency_ps = 30000,
	.dve_landed_ps = 766000,                /* fitted to NKI silu (family D) */
	.dma_partitions_per_engine = 8,
	.dma_engine_fs_per_byte = 58824,        /* 17 B/ns per engine; 16 x = 272 GB/s */
	.dma_desc_overhead_ps = 9000,           /* as trn2 (no trn1 micro facts) */
	.dma_latency_ps = 1300000,
	.dma_ring_queue_bytes = 2720,           /* 160.0 ns: fitted to the tutorial's Opt 1 */
	.dma_ring_engine_bytes = 1650,          /* 97.1 ns: fitted to its Tiled */
	.hw_dge_ps = 0,                         /* NeuronCore-v2 has no hardware DGE */
	.hbm_fs_per_byte = 2439,                /* 820 GB/s / 2 stacks = 410 GB/s */
	.dma_transpose_factor = 4,
	.throttle = false,
	.throttle_ramp_ps = 3000000,
	.throttle_idle_ps = 1500000,
	.throttle_steps = 4,
};

const struct nx_machine *nx_machine_get(const char *name)
{
	if (!name || !strcmp(name, "trn2"))
		return &trn2;
	if (!strcmp(name, "trn1"))
		return &trn1;
	return NULL;
}
