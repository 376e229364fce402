/* SPDX-License-Identifier: MIT
 * isa_text.c: Instruction.operands, the profiler-style text of one instruction's
 * operands: semaphore clause, access patterns as [steps][sizes] named by their role,
 * then the opcode's own fields (docs/formats/neff.md, "Operand text"). Instructions of
 * the library kernels keep the text they had before the record extension. */
#include "common/compat.h"
#include "neff/isa.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

/* "S[5]++@complete", "S[5]+=16@complete", ... for the completion update. */
static void format_signal(const struct nx_inst *in, struct nx_strbuf *out)
{
	static const char *const ops[] = { "", "++", "--", "+=", "-=", "=" };

	nx_strbuf_addf(out, "S[%u]%s", in->sig_sem, ops[in->sig_op]);
	if (in->sig_op >= NX_SEM_ADD)
		nx_strbuf_addf(out, "%" PRIu32, in->sig_value);
	nx_strbuf_addstr(out, "@complete");
}

static void sep(struct nx_strbuf *out)
{
	if (out->len)
		nx_strbuf_addch(out, ' ');
}

/* name=dtype@[psum:][p<start>:]0x<offset>[1,step0,...][size0,...,partitions]: two free
 * dimensions, or three or four when the pattern uses them. */
static void format_ap(const char *name, const struct nx_ap *ap, struct nx_strbuf *out)
{
	unsigned nd;

	if (!name || ap->mem == NX_MEM_NONE)
		return;
	nd = nx_ap_ndim(ap);
	sep(out);
	nx_strbuf_addf(out, "%s=%s@%s", name, nx_dtype_name(ap->dtype),
		       ap->mem == NX_MEM_PSUM ? "psum:" : "");
	if (ap->start_partition)
		nx_strbuf_addf(out, "p%u:", ap->start_partition);
	nx_strbuf_addf(out, "0x%" PRIx32 "[1", ap->offset);
	for (unsigned k = 0; k < nd; k++)
		nx_strbuf_addf(out, ",%" PRId32, ap->step[k]);
	nx_strbuf_addch(out, ']');
	for (unsigned k = 0; k < nd; k++)
		nx_strbuf_addf(out, "%c%" PRIu32, k ? ',' : '[', ap->size[k]);
	nx_strbuf_addf(out, ",%u]", nx_ap_partitions(ap));
}

static void word(struct nx_strbuf *out, const char *s)
{
	sep(out);
	nx_strbuf_addstr(out, s);
}

static void wordf(struct nx_strbuf *out, const char *fmt, ...) NX_PRINTF(2, 3);
static void wordf(struct nx_strbuf *out, const char *fmt, ...)
{
	char tmp[128];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(tmp, sizeof(tmp), fmt, ap);
	va_end(ap);
	word(out, tmp);
}

/* "name=%g" unless the slot holds a pattern (then printed with the patterns). */
static void scalar(struct nx_strbuf *out, const char *name, const struct nx_ap *slot, float v)
{
	if (!slot || slot->mem == NX_MEM_NONE)
		wordf(out, "%s=%g", name, (double)v);
}

static void flag(struct nx_strbuf *out, bool on, const char *name)
{
	if (on)
		word(out, name);
}

/* pattern=[s0,..] offset=N channel_multiplier=N of IOTA and AFFINE_SELECT. */
static void affine(const struct nx_inst *in, struct nx_strbuf *out)
{
	unsigned nd = nx_ap_ndim(&in->dst);

	sep(out);
	nx_strbuf_addstr(out, "pattern=[");
	for (unsigned k = 0; k < nd; k++)
		nx_strbuf_addf(out, "%s%" PRId32, k ? "," : "", in->pattern[k]);
	nx_strbuf_addf(out, "] offset=%" PRId32 " channel_multiplier=%" PRId32, in->param[0],
		       in->param[1]);
}

static void reduce(const struct nx_inst *in, struct nx_strbuf *out)
{
	if (in->dst2.mem != NX_MEM_NONE)
		wordf(out, "reduce_op=%s", nx_alu_name(in->reduce_op));
	if (in->dst2.mem != NX_MEM_NONE || in->reduce_cmd)
		wordf(out, "reduce_cmd=%s", nx_reduce_cmd_name(in->reduce_cmd));
}

static void tensor_scalar(const struct nx_inst *in, struct nx_strbuf *out)
{
	if (!in->flags2 && in->src1.mem == NX_MEM_NONE) {
		/* the single-op form, as before the record extension */
		wordf(out, "op=%s imm=%g", nx_alu_name(in->alu), (double)in->imm);
		return;
	}
	wordf(out, "op0=%s", nx_alu_name(in->alu));
	scalar(out, "operand0", &in->src1, in->imm);
	flag(out, in->flags2 & NX_INST2_REVERSE0, "reverse0");
	if (!(in->flags2 & NX_INST2_OP1))
		return;
	wordf(out, "op1=%s", nx_alu_name(in->alu1));
	scalar(out, "operand1", &in->src2, in->imm1);
	flag(out, in->flags2 & NX_INST2_REVERSE1, "reverse1");
}

static void tensor_ops(const struct nx_inst *in, struct nx_strbuf *out)
{
	switch (in->opcode) {
	case NX_OP_TENSOR_TENSOR:
		wordf(out, "op=%s", nx_alu_name(in->alu));
		break;
	case NX_OP_TENSOR_REDUCE:
		wordf(out, "op=%s", nx_alu_name(in->alu));
		if (in->axes)
			wordf(out, "axes=%u", in->axes);
		flag(out, in->flags2 & NX_INST2_NEGATE, "negate");
		flag(out, in->flags2 & NX_INST2_KEEPDIMS, "keepdims");
		break;
	case NX_OP_TENSOR_SCALAR:
		tensor_scalar(in, out);
		break;
	case NX_OP_TENSOR_TENSOR_SCAN:
		wordf(out, "op0=%s op1=%s", nx_alu_name(in->alu), nx_alu_name(in->alu1));
		scalar(out, "initial", &in->src2, in->imm1);
		break;
	case NX_OP_SCALAR_TENSOR_TENSOR:
		wordf(out, "op0=%s", nx_alu_name(in->alu));
		scalar(out, "operand0", &in->src2, in->imm);
		flag(out, in->flags2 & NX_INST2_REVERSE0, "reverse0");
		wordf(out, "op1=%s", nx_alu_name(in->alu1));
		break;
	case NX_OP_TENSOR_SCALAR_REDUCE:
		wordf(out, "op0=%s", nx_alu_name(in->alu));
		scalar(out, "operand0", &in->src1, in->imm);
		flag(out, in->flags2 & NX_INST2_REVERSE0, "reverse0");
		reduce(in, out);
		break;
	default:
		break;
	}
}

static void select_ops(const struct nx_inst *in, struct nx_strbuf *out)
{
	switch (in->opcode) {
	case NX_OP_IOTA:
		if (in->param[0] || in->param[1] || in->pattern[0] || in->pattern[1] ||
		    in->pattern[2] || in->pattern[3])
			affine(in, out);
		break;
	case NX_OP_AFFINE_SELECT:
		affine(in, out);
		wordf(out, "cmp_op=%s on_false_value=%g", nx_alu_name(in->alu), (double)in->imm1);
		break;
	case NX_OP_TENSOR_COPY_PREDICATED:
		flag(out, in->flags2 & NX_INST2_REVERSE0, "reverse_pred");
		break;
	case NX_OP_RANGE_SELECT:
		wordf(out, "comp_op0=%s comp_op1=%s range_start=%" PRId32 " on_false_value=%g",
		      nx_alu_name(in->alu), nx_alu_name(in->alu1), in->param[0], (double)in->imm1);
		reduce(in, out);
		break;
	case NX_OP_MATCH_REPLACE8:
		wordf(out, "imm=%g", (double)in->imm);
		break;
	case NX_OP_LOCAL_GATHER:
		wordf(out, "num_elem_per_idx=%" PRId32, in->param[0] ? in->param[0] : 1);
		break;
	default:
		break;
	}
}

static void tile(const struct nx_inst *in, struct nx_strbuf *out)
{
	if (in->tile[0] || in->tile[1] || in->tile[2] || in->tile[3])
		wordf(out, "tile_position=%u,%u tile_size=%u,%u", in->tile[0], in->tile[1],
		      in->tile[2], in->tile[3]);
}

static void extra(const struct nx_inst *in, struct nx_strbuf *out)
{
	switch (in->opcode) {
	case NX_OP_ACTIVATE:
		sep(out);
		nx_strbuf_addf(out, "fn=%s", nx_act_fn_name(in->act_fn));
		scalar(out, "scale", &in->src2, in->imm);
		if (in->src1.mem == NX_MEM_NONE && in->imm1 != 0.0f)
			wordf(out, "bias=%g", (double)in->imm1);
		reduce(in, out);
		break;
	case NX_OP_MEMSET:
		wordf(out, "value=%g", (double)in->imm);
		break;
	case NX_OP_LDWEIGHTS:
		flag(out, in->flags2 & NX_INST2_STAT_ONEZERO, "stationary_onezero");
		tile(in, out);
		break;
	case NX_OP_MATMUL:
		flag(out, in->flags & NX_INST_TRANSPOSE, "transpose");
		flag(out, in->flags & NX_INST_ACCUMULATE, "acc");
		flag(out, in->flags2 & NX_INST2_MOV_ONEZERO, "moving_onezero");
		if (in->perf_mode)
			wordf(out, "perf=%ux", 1u << in->perf_mode);
		tile(in, out);
		/* Last, so that `(\d+)\*(\d+)\s*$` finds K*M. */
		wordf(out, "%u*%u", nx_ap_partitions(&in->src0), nx_ap_partitions(&in->dst));
		break;
	default:
		tensor_ops(in, out);
		select_ops(in, out);
		break;
	}
}

void nx_inst_format_operands(const struct nx_inst *in, struct nx_strbuf *out)
{
	struct nx_strbuf sb = NX_STRBUF_INIT;
	const struct nx_op_roles *r = nx_op_roles(in->opcode);

	if (in->wait_cond != NX_WAIT_NONE)
		nx_strbuf_addf(&sb, "S[%u]%s%" PRIu32, in->wait_sem,
			       in->wait_cond == NX_WAIT_EQ ? "==" : ">=", in->wait_value);
	if (in->sig_op != NX_SEM_NONE && in->sig_op <= NX_SEM_SET) {
		sep(&sb);
		format_signal(in, &sb);
	}
	if (in->opcode == NX_OP_DMA_TRIGGER)
		wordf(&sb, "dma_block=%" PRIu32, in->dma_block);
	format_ap("src", &in->src0, &sb);
	format_ap(r->src1 ? r->src1 : "src1", &in->src1, &sb);
	format_ap(r->src2 ? r->src2 : "src2", &in->src2, &sb);
	format_ap("dst", &in->dst, &sb);
	format_ap(r->dst2 ? r->dst2 : "dst2", &in->dst2, &sb);
	extra(in, &sb);
	nx_strbuf_add(out, sb.buf ? sb.buf : "", sb.len);
	nx_strbuf_release(&sb);
}
