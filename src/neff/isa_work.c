/* SPDX-License-Identifier: MIT
 * isa_work.c: the work of one instruction (elements, partitions, SBUF/PSUM bytes read
 * and written, MATMUL FLOPs), shared by the simulator's cost model and the ingester's
 * Instruction byte and flop columns (docs/formats/neff.md, "Work figures"). */
#include "common/compat.h"
#include "neff/isa.h"

#include <string.h>

/* a * b, saturating at UINT64_MAX (crafted sizes must not wrap around). */
static uint64_t mul_sat(uint64_t a, uint64_t b)
{
	if (a && b > UINT64_MAX / a)
		return UINT64_MAX;
	return a * b;
}

static uint64_t add_sat(uint64_t a, uint64_t b)
{
	return a > UINT64_MAX - b ? UINT64_MAX : a + b;
}

uint64_t nx__ap_outer_elems(const struct nx_ap *ap, uint64_t n)
{
	for (unsigned k = 2; k < NX_AP_DIMS; k++)
		n = mul_sat(n, ap->size[k] ? ap->size[k] : 1);
	return n;
}

/* Bytes an access pattern covers: partitions x free elements x element size. */
static uint64_t ap_bytes(const struct nx_ap *ap)
{
	return mul_sat(mul_sat(nx_ap_partitions(ap), nx_ap_free_elems(ap)),
		       nx_dtype_size(ap->dtype));
}

/* Adds an operand's bytes to the read or write counter of its memory. */
static void count_ap(const struct nx_ap *ap, bool write, struct nx_inst_work *w)
{
	uint64_t b = ap_bytes(ap);

	if (ap->mem == NX_MEM_SBUF) {
		uint64_t *c = write ? &w->sbuf_write_bytes : &w->sbuf_read_bytes;
		*c = add_sat(*c, b);
	} else if (ap->mem == NX_MEM_PSUM) {
		uint64_t *c = write ? &w->psum_write_bytes : &w->psum_read_bytes;
		*c = add_sat(*c, b);
	}
}

/* BF16-equivalent FLOPs: FP32 costs four passes, FP8 on v3 and 8-bit integers run at
 * double rate. */
static uint64_t adjust_flops(uint64_t raw, int dtype, bool v3)
{
	switch (dtype) {
	case NX_DT_FP32:
		return mul_sat(raw, 4);
	case NX_DT_FP8:
	case NX_DT_FP8_E5M2:
	case NX_DT_FP8_E3M4:
		return v3 ? raw / 2 : raw;
	case NX_DT_UINT8:
	case NX_DT_INT8:
		return raw / 2;
	default:
		return raw; /* BF16, FP16, TF32 (and the wider integers) count as is */
	}
}

void nx_inst_work(const struct nx_inst *in, bool target_v3, struct nx_inst_work *w)
{
	const struct nx_ap *main_ap = in->src0.mem != NX_MEM_NONE ? &in->src0 : &in->dst;

	memset(w, 0, sizeof(*w));
	w->elements = nx_ap_free_elems(main_ap);
	w->partitions = nx_ap_partitions(main_ap);
	count_ap(&in->src0, false, w);
	count_ap(&in->src1, false, w);
	count_ap(&in->src2, false, w);
	count_ap(&in->dst, true, w);
	count_ap(&in->dst2, true, w);
	if (in->opcode == NX_OP_MATMUL) {
		uint64_t k = nx_ap_partitions(&in->src0), m = nx_ap_partitions(&in->dst);
		uint64_t n = nx_ap_free_elems(&in->src0);

		w->tensor_elements = mul_sat(mul_sat(k, m), n);
		w->raw_flops = mul_sat(w->tensor_elements, 2);
		w->adjusted_flops = adjust_flops(w->raw_flops, in->src0.dtype, target_v3);
	}
	/* Evicting PSUM into SBUF (TENSOR_COPY, ACTIVATE, ... with a PSUM source). */
	if (in->src0.mem == NX_MEM_PSUM && in->dst.mem == NX_MEM_SBUF)
		w->psum_read_sbuf_write_bytes = ap_bytes(&in->dst);
}
