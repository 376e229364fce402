/* SPDX-License-Identifier: MIT
 * hw.c: the trn1 (NeuronCore-v2) and trn2 (NeuronCore-v3) fact tables.
 * Figures are from the AWS Neuron SDK documentation (architecture pages, NKI
 * architecture guides, NKI DMA overview); docs/simulator.md repeats them with their
 * sources. */
#include "common/compat.h"
#include "hw/hw.h"

#include <string.h>

const struct nx_hw nx_hw_trn2 = {
	.target = "trn2",
	.instance_type = "trn2.48xlarge",
	.core_name = "NeuronCore-v3",
	.v3 = true,
	.te_mhz = 2400, .ve_mhz = 960, .se_mhz = 1200, .gp_mhz = 1200, .nc_mhz = 1200,
	.partitions = 128,
	.sbuf_partition_bytes = 224 * 1024,     /* 28 MiB = 128 x 224 KiB */
	.psum_partition_bytes = 16 * 1024,      /* 8 banks x 2 KiB */
	.psum_bank_bytes = 2048,
	.te_rows = 128, .te_cols = 128,
	.dma_engines = 16,
	.dma_ddr_bandwidth = 435.2e9,
	.hbm_ddr_bandwidth = 725e9,             /* 2.9 TB/s / 4 stacks */
};

const struct nx_hw nx_hw_trn1 = {
	.target = "trn1",
	.instance_type = "trn1.32xlarge",
	.core_name = "NeuronCore-v2",
	.v3 = false,
	.te_mhz = 2800, .ve_mhz = 1120, .se_mhz = 1400, .gp_mhz = 1400, .nc_mhz = 1400,
	.partitions = 128,
	.sbuf_partition_bytes = 192 * 1024,     /* 24 MiB = 128 x 192 KiB */
	.psum_partition_bytes = 16 * 1024,
	.psum_bank_bytes = 2048,
	.te_rows = 128, .te_cols = 128,
	.dma_engines = 16,
	.dma_ddr_bandwidth = 272e9,
	.hbm_ddr_bandwidth = 410e9,             /* 820 GB/s / 2 stacks */
};

const struct nx_hw *nx_hw_get(const char *name)
{
	if (!name || !strcmp(name, "trn2"))
		return &nx_hw_trn2;
	if (!strcmp(name, "trn1"))
		return &nx_hw_trn1;
	return NULL;
}
