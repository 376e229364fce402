/* SPDX-License-Identifier: MIT
 * engine_tensor.c: cost of Tensor-engine instructions on the 128x128 systolic array.
 *
 * MATMUL streams the moving operand (K partitions x N columns) through the array: its
 * initiation interval is max(N, 64) TE cycles for 2-byte and FP8 types and four times
 * that for FP32 (§6.2); the 64-cycle floor drops to the stationary width when that is
 * narrower (documented nc_matmul cost max(min(64, N_stationary), N_moving)). On trn2 an
 * FP8 MATMUL in perf mode 2x (nc_matmul double-row) streams twice as fast, the
 * documented 158 vs 79 TFLOPS of FP8 vs BF16; 4x (quad-row) four times (ours).
 * LDWEIGHTS loads the stationary operand up to 4x faster than a
 * MATMUL of the same free size (§6.2); the overlap with the previous MATMUL is handled
 * by the scheduler in sim.c, throttling by throttle.c. */
#include "common/compat.h"
#include "sim/cost.h"

unsigned nx_cost_engine_mhz(const struct nx_machine *m, int engine)
{
	switch (engine) {
	case NX_ENGINE_TENSOR:
		return m->hw->te_mhz;
	case NX_ENGINE_VECTOR:
		return m->hw->ve_mhz;
	case NX_ENGINE_SCALAR:
		return m->hw->se_mhz;
	case NX_ENGINE_GPSIMD:
		return m->hw->gp_mhz;
	default:
		return m->hw->nc_mhz;
	}
}

static unsigned dtype_factor(const struct nx_machine *m, int dtype)
{
	return dtype == NX_DT_FP32 ? m->fp32_factor : 1;
}

static bool fp8(int dtype)
{
	return dtype == NX_DT_FP8 || dtype == NX_DT_FP8_E5M2 || dtype == NX_DT_FP8_E3M4;
}

/* FP8 double/quad-row modes of trn2 divide the streaming cycles. */
static uint64_t perf_mode(const struct nx_machine *m, const struct nx_inst *in, uint64_t cyc)
{
	unsigned k = in->perf_mode;

	if (!m->hw->v3 || !k || !fp8(in->src0.dtype))
		return cyc;
	return (cyc + (1u << k) - 1) >> k;
}

uint64_t nx_cost_matmul_cycles(const struct nx_machine *m, const struct nx_inst *in,
			       uint64_t stationary)
{
	uint64_t n = nx_ap_free_elems(&in->src0), floor = m->mm_min_ii;

	if (stationary && stationary < floor)
		floor = stationary;
	if (n < floor)
		n = floor;
	return perf_mode(m, in, n * dtype_factor(m, in->src0.dtype));
}

uint64_t nx_cost_tensor_cycles(const struct nx_machine *m, const struct nx_inst *in)
{
	uint64_t n = nx_ap_free_elems(&in->src0);

	switch (in->opcode) {
	case NX_OP_MATMUL:
		if (n < m->mm_min_ii)
			n = m->mm_min_ii;
		return perf_mode(m, in, n * dtype_factor(m, in->src0.dtype));
	case NX_OP_LDWEIGHTS:
		if (n < m->mm_min_ii)
			n = m->mm_min_ii;
		return (n * dtype_factor(m, in->src0.dtype) + m->lw_speedup - 1) / m->lw_speedup;
	default:
		return m->control_cycles;
	}
}
