/* SPDX-License-Identifier: MIT
 * machine.c: trn1 (NeuronCore-v2) and trn2 (NeuronCore-v3) constants.
 * Figures are from shared/reference/neuron-explorer.md §6.1/§6.2 unless marked
 * "ours"; docs/simulator.md repeats them with their sources. */
#include "common/compat.h"
#include "sim/machine.h"

#include <string.h>

static const struct nx_machine trn2 = {
	.target = "trn2",
	.instance_type = "trn2.48xlarge",
	.core_name = "NeuronCore-v3",
	.v3 = true,
	.te_mhz = 2400, .ve_mhz = 960, .se_mhz = 1200, .gp_mhz = 1200, .nc_mhz = 1200,
	.sbuf_partition_bytes = 224 * 1024,     /* 28 MiB = 128 x 224 KiB */
	.psum_partition_bytes = 16 * 1024,      /* 8 banks x 2 KiB */
	.psum_bank_bytes = 2048,
	.te_rows = 128, .te_cols = 128,
	.mm_max_moving = 512,
	.mm_min_ii = 64,
	.fp32_factor = 4,
	.lw_speedup = 4,
	.alu_min_ii = 64,
	.alu_static = 60,
	.alu_dep_static = 100,
	.recip_factor = 8,
	.control_cycles = 64,                   /* ours */
	.sem_latency_ps = 30000,                /* M6: 189 ns start to start - 159 ns */
	.dma_engines = 16,
	.dma_partitions_per_engine = 8,
	.dma_engine_fs_per_byte = 42918,        /* 23.3 B/ns per engine (M1/M2 fit) */
	.dma_desc_overhead_ps = 18000,          /* per HBM-contiguous run (fit to M1-M3) */
	.dma_latency_ps = 1300000,              /* semaphore-to-start ~1.3 us per transfer */
	.hw_dge_ps = 600000,                    /* ~600 ns per hardware-DGE instruction */
	.hbm_fs_per_byte = 1379,                /* 2.9 TB/s / 4 stacks = 725 GB/s */
	.dma_transpose_factor = 4,              /* ours */
	.dma_ddr_bandwidth = 435.2e9,
	.hbm_ddr_bandwidth = 725e9,
	.throttle = true,
	.throttle_ramp_ps = 3000000,
	.throttle_idle_ps = 1500000,
	.throttle_steps = 4,
};

static const struct nx_machine trn1 = {
	.target = "trn1",
	.instance_type = "trn1.32xlarge",
	.core_name = "NeuronCore-v2",
	.v3 = false,
	.te_mhz = 2800, .ve_mhz = 1120, .se_mhz = 1400, .gp_mhz = 1400, .nc_mhz = 1400,
	.sbuf_partition_bytes = 192 * 1024,     /* 24 MiB = 128 x 192 KiB */
	.psum_partition_bytes = 16 * 1024,
	.psum_bank_bytes = 2048,
	.te_rows = 128, .te_cols = 128,
	.mm_max_moving = 512,
	.mm_min_ii = 64,
	.fp32_factor = 4,
	.lw_speedup = 4,
	.alu_min_ii = 64,
	.alu_static = 60,
	.alu_dep_static = 100,
	.recip_factor = 8,
	.control_cycles = 64,
	.sem_latency_ps = 30000,
	.dma_engines = 16,
	.dma_partitions_per_engine = 8,
	.dma_engine_fs_per_byte = 58824,        /* 17 B/ns per engine; 16 x = 272 GB/s */
	.dma_desc_overhead_ps = 18000,          /* as trn2 (no trn1 micro facts) */
	.dma_latency_ps = 1300000,
	.hw_dge_ps = 0,                         /* NeuronCore-v2 has no hardware DGE */
	.hbm_fs_per_byte = 2439,                /* 820 GB/s / 2 stacks = 410 GB/s */
	.dma_transpose_factor = 4,
	.dma_ddr_bandwidth = 272e9,
	.hbm_ddr_bandwidth = 410e9,
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
