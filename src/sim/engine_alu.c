/* SPDX-License-Identifier: MIT
 * engine_alu.c: cost of Vector, Scalar, GpSimd and Sync instructions.
 *
 * Rules of thumb from §6.2: an instruction over N elements per partition costs about N
 * engine cycles (2N when VectorE reads two tensors, 8N for reciprocal/divide on
 * VectorE), never less than MIN_II = 64 cycles, plus a static overhead: ~60 cycles
 * of SBUF/PSUM access set-up, and ~100 cycles more when the instruction depends on the
 * previous one of its engine (the two add up: 64 + 60 + 100 = 224 ScalarE cycles is
 * the measured 159 ns of a dependent one-element ACTIVATE on trn1, micro fact M6). An
 * instruction that waits on another engine does not pay the 100 (trn2 v5's VectorE
 * adds each wait on a matmul). A free-dimension stride above 16 bytes halves the
 * bandwidth. The v3 2x/4x performance modes divide the streaming part for 2-byte
 * types. */
#include "common/compat.h"
#include "sim/cost.h"

static uint64_t elems(const struct nx_inst *in)
{
	uint64_t n = nx_ap_free_elems(&in->src0);

	if (!n)
		n = nx_ap_free_elems(&in->dst);
	return n;
}

static bool two_byte(const struct nx_ap *ap)
{
	return ap->mem == NX_MEM_NONE || nx_dtype_size(ap->dtype) == 2;
}

static bool wide_stride(const struct nx_ap *ap)
{
	int64_t s = ap->step[0] < 0 ? -(int64_t)ap->step[0] : ap->step[0];

	return ap->mem != NX_MEM_NONE && ap->size[0] > 1 && s * nx_dtype_size(ap->dtype) > 16;
}

static bool sixteen(int dtype)
{
	return dtype == NX_DT_BF16 || dtype == NX_DT_FP16;
}

/* VectorE reads two tensors in one pass (N cycles, not 2N) when one is in PSUM and the
 * other in SBUF, or for a contiguous all-BF16 SBUF add, multiply or subtract (the
 * tensor_tensor cost rule of the NKI ISA reference). */
static bool tt_single_pass(const struct nx_inst *in)
{
	const struct nx_ap *a = &in->src0, *b = &in->src1, *d = &in->dst;

	if ((a->mem == NX_MEM_PSUM) != (b->mem == NX_MEM_PSUM))
		return true;
	return a->mem == NX_MEM_SBUF && b->mem == NX_MEM_SBUF && d->mem == NX_MEM_SBUF &&
	       a->dtype == NX_DT_BF16 && b->dtype == NX_DT_BF16 && d->dtype == NX_DT_BF16 &&
	       a->step[0] == 1 && b->step[0] == 1 && d->step[0] == 1 &&
	       (in->alu == NX_ALU_ADD || in->alu == NX_ALU_MUL || in->alu == NX_ALU_SUB);
}

uint64_t nx_cost_alu_cycles(const struct nx_machine *m, const struct nx_inst *in, bool dependent)
{
	uint64_t work, stat = m->alu_static + (dependent ? m->alu_dep_static : 0);

	switch (in->opcode) {
	case NX_OP_NOP:
	case NX_OP_EVENT_SEMAPHORE:
	case NX_OP_DMA_TRIGGER:
	case NX_OP_NOTIFY:
		return m->control_cycles;
	default:
		break;
	}
	work = elems(in);
	if (in->engine == NX_ENGINE_VECTOR && in->opcode == NX_OP_TENSOR_TENSOR &&
	    !tt_single_pass(in))
		work *= 2;
	/* a bf16/fp16 zero fill and a 16-bit add/max reduction stream two elements a cycle */
	if (in->engine == NX_ENGINE_VECTOR &&
	    ((in->opcode == NX_OP_MEMSET && in->imm == 0 && sixteen(in->dst.dtype)) ||
	     (in->opcode == NX_OP_TENSOR_REDUCE && sixteen(in->src0.dtype) &&
	      (in->alu == NX_ALU_ADD || in->alu == NX_ALU_MAX))))
		work = (work + 1) / 2;
	if (in->engine == NX_ENGINE_VECTOR && in->alu == NX_ALU_DIV &&
	    (in->opcode == NX_OP_TENSOR_TENSOR || in->opcode == NX_OP_TENSOR_SCALAR))
		work *= m->recip_factor;
	if (wide_stride(&in->src0) || wide_stride(&in->src1) || wide_stride(&in->dst))
		work *= 2;
	if (m->hw->v3 && in->perf_mode && (in->engine == NX_ENGINE_VECTOR ||
				       in->engine == NX_ENGINE_SCALAR) &&
	    two_byte(&in->src0) && two_byte(&in->src1) && two_byte(&in->dst))
		work = (work + (1u << in->perf_mode) - 1) >> in->perf_mode;
	if (work < m->alu_min_ii)
		work = m->alu_min_ii;
	return work + stat;
}

uint64_t nx_cost_inst_ps(const struct nx_machine *m, const struct nx_inst *in, bool dependent)
{
	uint64_t cyc;

	if (in->engine == NX_ENGINE_TENSOR)
		cyc = nx_cost_tensor_cycles(m, in);
	else
		cyc = nx_cost_alu_cycles(m, in, dependent);
	return nx_cycles_ps(cyc, nx_cost_engine_mhz(m, in->engine));
}
