/* SPDX-License-Identifier: MIT
 * hw.h: published facts about the NeuronCore generations (trn1, trn2): clocks,
 * on-chip memory sizes, Tensor engine geometry, DMA engines and bandwidths.
 *
 * This module is neutral: the simulator, the ingest of real profiles and the
 * analysis read it, and it depends on nothing but common/. The simulator's own cost
 * model parameters (fitted figures, overheads) stay in sim/machine.h. Figures come
 * from the AWS Neuron SDK documentation (the NeuronCore-v2/-v3 and Trainium/Trainium2
 * architecture pages, the NKI architecture guides and DMA overview); docs/simulator.md
 * lists each with its source. Clocks are in MHz so timing arithmetic stays integer. */
#ifndef NX_HW_HW_H
#define NX_HW_HW_H

#include "common/compat.h"

struct nx_hw {
	const char *target;          /* "trn2", "trn1" */
	const char *instance_type;   /* "trn2.48xlarge", "trn1.32xlarge" */
	const char *core_name;       /* "NeuronCore-v3", "NeuronCore-v2" */
	bool v3;                     /* NeuronCore-v3 (perf modes, FP8, throttling, HW DGE) */
	/* clocks (MHz) */
	unsigned te_mhz, ve_mhz, se_mhz, gp_mhz, nc_mhz;
	/* on-chip memories, per partition */
	unsigned partitions;         /* 128 */
	uint64_t sbuf_partition_bytes;
	uint64_t psum_partition_bytes;
	uint64_t psum_bank_bytes;
	/* Tensor engine systolic array */
	unsigned te_rows, te_cols;
	/* DMA */
	unsigned dma_engines;        /* DMA engines per NeuronCore (16) */
	double dma_ddr_bandwidth;    /* bytes/s, DMA peak per core (Metadata) */
	double hbm_ddr_bandwidth;    /* bytes/s, per HBM stack (Metadata) */
};

/* The two generations' tables (nx_hw_get looks them up by name). */
extern const struct nx_hw nx_hw_trn2, nx_hw_trn1;

/* Returns the facts of "trn2" (when name is NULL) or "trn1"; NULL if the name is
 * unknown. The returned table is static. */
const struct nx_hw *nx_hw_get(const char *name);

/* Converts cycles of a clock in MHz to picoseconds, rounding to nearest. */
static inline uint64_t nx_cycles_ps(uint64_t cycles, unsigned mhz)
{
	return (cycles * 1000000u + mhz / 2) / mhz;
}

#endif
