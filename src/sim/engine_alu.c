/* SPDX-License-Identifier: MIT
 * engine_alu.c: cost of Vector, Scalar, GpSimd and Sync instructions.
 *
 * Rules of thumb from §6.2: an instruction over N elements per partition costs about N
 * engine cycles (2N when VectorE reads two tensors, 8N for an ALU divide on VectorE;
 * the RECIPROCAL instruction 2.5N there, fitted to a measured NKI kernel), never less than MIN_II = 64 cycles, plus a static overhead: ~60 cycles
 * of SBUF/PSUM access set-up, and ~100 cycles more when the instruction depends on the
 * previous one of its engine (the two add up: 64 + 60 + 100 = 224 ScalarE cycles is
 * the measured 159 ns of a dependent one-element ACTIVATE on trn1, micro fact M6). An
 * instruction that waits on another engine does not pay the 100 (trn2 v5's VectorE
 * adds each wait on a matmul). A free-dimension stride above 16 bytes halves the
 * bandwidth. The v3 2x/4x performance modes divide the streaming part for 2-byte
 * types. The NKI operations beyond these follow the ISA reference's cost rules where it
 * gives one (bn_aggr 13N/3; activation and tensor_scalar with a reduction + MIN_II) and
 * otherwise the rule of the nearest documented operation (docs/simulator.md, table
 * "Cost per operation"). */
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
 * tensor_tensor cost rule of the NKI ISA reference). `op` is the operation between the
 * two tensors. */
static bool tt_single_pass(const struct nx_inst *in, int op)
{
	const struct nx_ap *a = &in->src0, *b = &in->src1, *d = &in->dst;

	if ((a->mem == NX_MEM_PSUM) != (b->mem == NX_MEM_PSUM))
		return true;
	return a->mem == NX_MEM_SBUF && b->mem == NX_MEM_SBUF && d->mem == NX_MEM_SBUF &&
	       a->dtype == NX_DT_BF16 && b->dtype == NX_DT_BF16 && d->dtype == NX_DT_BF16 &&
	       a->step[0] == 1 && b->step[0] == 1 && d->step[0] == 1 &&
	       (op == NX_ALU_ADD || op == NX_ALU_MUL || op == NX_ALU_SUB);
}

/* The streaming cycles of a Vector/Scalar/GpSimd instruction over n elements per
 * partition, before the floor, the stride and perf-mode rules. */
static uint64_t streaming(const struct nx_machine *m, const struct nx_inst *in, uint64_t n)
{
	bool vec = in->engine == NX_ENGINE_VECTOR;

	switch (in->opcode) {
	case NX_OP_TENSOR_TENSOR:
		n = vec && !tt_single_pass(in, in->alu) ? 2 * n : n;
		return vec && in->alu == NX_ALU_DIV ? n * m->recip_factor : n;
	case NX_OP_SCALAR_TENSOR_TENSOR:
		return vec && !tt_single_pass(in, in->alu1) ? 2 * n : n;
	case NX_OP_TENSOR_TENSOR_SCAN:
	case NX_OP_TENSOR_COPY_PREDICATED:
	case NX_OP_SELECT:
		return vec ? 2 * n : n; /* two tensor inputs, never one pass (ours) */
	case NX_OP_MEMSET:
		/* a bf16/fp16 zero fill streams two elements a cycle */
		return vec && in->imm == 0 && sixteen(in->dst.dtype) ? (n + 1) / 2 : n;
	case NX_OP_TENSOR_REDUCE:
		/* so does a 16-bit add/max reduction */
		return vec && sixteen(in->src0.dtype) &&
		       (in->alu == NX_ALU_ADD || in->alu == NX_ALU_MAX) ? (n + 1) / 2 : n;
	case NX_OP_TENSOR_SCALAR:
		return vec && (in->alu == NX_ALU_DIV ||
			       ((in->flags2 & NX_INST2_OP1) && in->alu1 == NX_ALU_DIV))
		       ? n * m->recip_factor : n;
	case NX_OP_RECIPROCAL:
		return vec ? (n * m->recip_op_halves + 1) / 2 : n;
	case NX_OP_BN_AGGR:
		return 13 * (n / 3);
	case NX_OP_LOCAL_GATHER:
		return nx_ap_free_elems(&in->dst);
	default:
		return n;
	}
}

/* The reductions into a second output cost one MIN_II more (activation_reduce,
 * tensor_scalar_reduce in the ISA reference; range_select ours). */
static bool reduces(const struct nx_inst *in)
{
	return in->opcode == NX_OP_TENSOR_SCALAR_REDUCE ||
	       ((in->opcode == NX_OP_ACTIVATE || in->opcode == NX_OP_RANGE_SELECT) &&
		in->dst2.mem != NX_MEM_NONE);
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
	work = streaming(m, in, elems(in));
	if (wide_stride(&in->src0) || wide_stride(&in->src1) || wide_stride(&in->dst))
		work *= 2;
	if (m->hw->v3 && in->perf_mode && (in->engine == NX_ENGINE_VECTOR ||
				       in->engine == NX_ENGINE_SCALAR) &&
	    two_byte(&in->src0) && two_byte(&in->src1) && two_byte(&in->dst))
		work = (work + (1u << in->perf_mode) - 1) >> in->perf_mode;
	if (work < m->alu_min_ii)
		work = m->alu_min_ii;
	if (reduces(in))
		work += m->alu_min_ii;
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
