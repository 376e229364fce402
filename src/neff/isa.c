/* SPDX-License-Identifier: MIT
 * isa.c: names of the instruction-set enums, the 128-byte instruction record codec,
 * the profiler-style operand text, and the work (elements, bytes, FLOPs) of one
 * instruction. The record layout is ours (docs/formats/neff.md, "Instruction
 * streams"); the offsets below are the normative copy. */
#include "common/compat.h"
#include "neff/isa.h"
#include "neff/neff.h"
#include "common/le.h"

#include <stdio.h>
#include <string.h>
#include <strings.h>

/* Record layout. All multi-byte fields are little-endian. */
enum {
	OFF_OPCODE = 0,     /* u16 */
	OFF_ENGINE = 2,     /* u8 */
	OFF_FLAGS = 3,      /* u8, bits 0..1 defined */
	OFF_ACT_FN = 4,     /* u8 */
	OFF_PERF_MODE = 5,  /* u8, 0..2 */
	OFF_ALU = 6,        /* u8 */
	OFF_WAIT_COND = 7,  /* u8 */
	OFF_SIG_OP = 8,     /* u8 */
	OFF_RSVD0 = 9,      /* u8, zero */
	OFF_WAIT_SEM = 10,  /* u16, < 256 */
	OFF_SIG_SEM = 12,   /* u16, < 256 */
	OFF_RSVD1 = 14,     /* u16, zero */
	OFF_WAIT_VALUE = 16,/* u32 */
	OFF_SIG_VALUE = 20, /* u32 */
	OFF_DMA_BLOCK = 24, /* u32 */
	OFF_DEBUG_ID = 28,  /* u32 */
	OFF_BIR_ID = 32,    /* u32 */
	OFF_IMM = 36,       /* IEEE-754 binary32 bits */
	OFF_DST = 40,       /* access pattern, AP_SIZE bytes */
	OFF_SRC0 = 64,
	OFF_SRC1 = 88,
	OFF_RSVD2 = 112,    /* 16 bytes, zero */
	AP_SIZE = 24,
	/* Inside an access pattern. */
	AP_MEM = 0, AP_DTYPE = 1, AP_START = 2, AP_NPART = 3, AP_OFFSET = 4, AP_SIZE0 = 8,
	AP_SIZE1 = 12, AP_STEP0 = 16, AP_STEP1 = 20,
};
#define FLAGS_DEFINED (NX_INST_TRANSPOSE | NX_INST_ACCUMULATE)

static const char *const engine_names[NX_ENGINE_COUNT] = {
	"Tensor", "Vector", "Scalar", "GpSimd", "Sync",
};
static const char *const engine_lower[NX_ENGINE_COUNT] = {
	"tensor", "vector", "scalar", "gpsimd", "sync",
};
static const char *const engine_short[NX_ENGINE_COUNT] = { "PE", "DVE", "ACT", "POOL", "SP" };

static const char *const dtype_names[NX_DT_COUNT] = {
	"bf16", "fp16", "fp32", "fp8", "tf32", "int32", "uint8",
};
static const unsigned dtype_sizes[NX_DT_COUNT] = { 2, 2, 4, 1, 4, 4, 1 };
/* Longer spellings (numpy, NKI, XLA) accepted by nx_dtype_parse. */
static const struct {
	const char *name;
	int dtype;
} dtype_alias[] = {
	{ "bfloat16", NX_DT_BF16 }, { "float16", NX_DT_FP16 }, { "half", NX_DT_FP16 },
	{ "float32", NX_DT_FP32 }, { "float", NX_DT_FP32 }, { "fp8_e4m3", NX_DT_FP8 },
	{ "float8_e4m3", NX_DT_FP8 }, { "float8e4", NX_DT_FP8 }, { "tfloat32", NX_DT_TF32 },
	{ "int", NX_DT_INT32 }, { "u8", NX_DT_UINT8 },
};

static const char *const op_names[NX_OP_COUNT] = {
	"NOP", "LDWEIGHTS", "MATMUL", "TENSOR_TENSOR", "TENSOR_SCALAR", "TENSOR_REDUCE",
	"ACTIVATE", "TENSOR_COPY", "MEMSET", "IOTA", "EVENT_SEMAPHORE", "DMA_DIRECT2D", "NOTIFY",
};
/* Listing mnemonics: the enum names. */
static const char *const op_mnemonics[NX_OP_COUNT] = {
	"nop", "ldweights", "matmul", "tensor_tensor", "tensor_scalar", "tensor_reduce",
	"activate", "tensor_copy", "memset", "iota", "event_semaphore", "dma_trigger", "notify",
};

static const char *const act_names[NX_ACT_COUNT] = {
	"NONE", "IDENTITY", "EXP", "RELU", "GELU", "TANH", "SIGMOID", "RSQRT", "SQUARE", "COPY",
};
static const char *const alu_names[NX_ALU_COUNT] = { "add", "sub", "mul", "max", "min", "div" };
static const char *const tensor_kind_names[] = { "IN", "OUT", "WEIGHT", "OTHER" };
static const char *const queue_type_names[NX_QT_COUNT] = {
	"instruction", "input", "output", "data", "software_dynamic", "hardware_dynamic", "unknown",
};

static const char *name_of(const char *const *tab, int n, int v)
{
	return v >= 0 && v < n ? tab[v] : "unknown";
}

static int parse_in(const char *const *tab, int n, const char *s)
{
	for (int i = 0; s && i < n; i++)
		if (!strcasecmp(tab[i], s))
			return i;
	return -1;
}

const char *nx_engine_name(int engine)
{
	return name_of(engine_names, NX_ENGINE_COUNT, engine);
}

const char *nx_engine_lower(int engine)
{
	return name_of(engine_lower, NX_ENGINE_COUNT, engine);
}

int nx_engine_parse(const char *s)
{
	int e = parse_in(engine_names, NX_ENGINE_COUNT, s);
	return e >= 0 ? e : parse_in(engine_short, NX_ENGINE_COUNT, s);
}

const char *nx_dtype_name(int dtype)
{
	return name_of(dtype_names, NX_DT_COUNT, dtype);
}

unsigned nx_dtype_size(int dtype)
{
	return dtype >= 0 && dtype < NX_DT_COUNT ? dtype_sizes[dtype] : 0;
}

int nx_dtype_parse(const char *s)
{
	int d = parse_in(dtype_names, NX_DT_COUNT, s);

	for (size_t i = 0; d < 0 && s && i < NX_ARRAY_SIZE(dtype_alias); i++)
		if (!strcasecmp(dtype_alias[i].name, s))
			d = dtype_alias[i].dtype;
	return d;
}

const char *nx_opcode_name(int opcode)
{
	return name_of(op_names, NX_OP_COUNT, opcode);
}

int nx_opcode_parse(const char *s)
{
	int op = parse_in(op_names, NX_OP_COUNT, s);
	return op >= 0 ? op : parse_in(op_mnemonics, NX_OP_COUNT, s);
}

const char *nx_act_fn_name(int fn)
{
	return name_of(act_names, NX_ACT_COUNT, fn);
}

int nx_act_fn_parse(const char *s)
{
	return parse_in(act_names, NX_ACT_COUNT, s);
}

const char *nx_alu_name(int alu)
{
	return name_of(alu_names, NX_ALU_COUNT, alu);
}

int nx_alu_parse(const char *s)
{
	return parse_in(alu_names, NX_ALU_COUNT, s);
}

const char *nx_tensor_kind_name(int kind)
{
	return name_of(tensor_kind_names, (int)NX_ARRAY_SIZE(tensor_kind_names), kind);
}

const char *nx_queue_type_name(int qt)
{
	return name_of(queue_type_names, NX_QT_COUNT, qt);
}

static void encode_ap(const struct nx_ap *ap, uint8_t *p)
{
	p[AP_MEM] = ap->mem;
	p[AP_DTYPE] = ap->dtype;
	p[AP_START] = ap->start_partition;
	p[AP_NPART] = ap->num_partitions;
	nx_put_le32(p + AP_OFFSET, ap->offset);
	nx_put_le32(p + AP_SIZE0, ap->size[0]);
	nx_put_le32(p + AP_SIZE1, ap->size[1]);
	nx_put_le32(p + AP_STEP0, (uint32_t)ap->step[0]);
	nx_put_le32(p + AP_STEP1, (uint32_t)ap->step[1]);
}

void nx_inst_encode(const struct nx_inst *in, uint8_t out[NX_INST_SIZE])
{
	uint32_t imm;

	memset(out, 0, NX_INST_SIZE);
	nx_put_le16(out + OFF_OPCODE, in->opcode);
	out[OFF_ENGINE] = in->engine;
	out[OFF_FLAGS] = in->flags;
	out[OFF_ACT_FN] = in->act_fn;
	out[OFF_PERF_MODE] = in->perf_mode;
	out[OFF_ALU] = in->alu;
	out[OFF_WAIT_COND] = in->wait_cond;
	out[OFF_SIG_OP] = in->sig_op;
	nx_put_le16(out + OFF_WAIT_SEM, in->wait_sem);
	nx_put_le16(out + OFF_SIG_SEM, in->sig_sem);
	nx_put_le32(out + OFF_WAIT_VALUE, in->wait_value);
	nx_put_le32(out + OFF_SIG_VALUE, in->sig_value);
	nx_put_le32(out + OFF_DMA_BLOCK, in->dma_block);
	nx_put_le32(out + OFF_DEBUG_ID, in->debug_id);
	nx_put_le32(out + OFF_BIR_ID, in->bir_id);
	memcpy(&imm, &in->imm, sizeof(imm));
	nx_put_le32(out + OFF_IMM, imm);
	encode_ap(&in->dst, out + OFF_DST);
	encode_ap(&in->src0, out + OFF_SRC0);
	encode_ap(&in->src1, out + OFF_SRC1);
}

/* Decodes and checks one access pattern at record offset `base`. */
static int decode_ap(const uint8_t *rec, unsigned base, const char *what, struct nx_ap *ap,
		     const char *where, struct nx_err *err)
{
	const uint8_t *p = rec + base;

	ap->mem = p[AP_MEM];
	ap->dtype = p[AP_DTYPE];
	ap->start_partition = p[AP_START];
	ap->num_partitions = p[AP_NPART];
	ap->offset = nx_get_le32(p + AP_OFFSET);
	ap->size[0] = nx_get_le32(p + AP_SIZE0);
	ap->size[1] = nx_get_le32(p + AP_SIZE1);
	ap->step[0] = (int32_t)nx_get_le32(p + AP_STEP0);
	ap->step[1] = (int32_t)nx_get_le32(p + AP_STEP1);
	if (ap->mem > NX_MEM_PSUM)
		return nx_errf(err, NX_ECORRUPT,
			       "%s: byte %u: %s memory %u is not defined (0 none, 1 sbuf, 2 psum)",
			       where, base + AP_MEM, what, ap->mem);
	if (ap->dtype >= NX_DT_COUNT)
		return nx_errf(err, NX_ECORRUPT, "%s: byte %u: %s dtype %u is not defined (0..%d)",
			       where, base + AP_DTYPE, what, ap->dtype, NX_DT_COUNT - 1);
	if ((unsigned)ap->start_partition + ap->num_partitions + 1u > NX_NUM_PARTITIONS)
		return nx_errf(err, NX_ECORRUPT,
			       "%s: byte %u: %s partitions %u..%u exceed the %u partitions "
			       "(start %u, count %u)", where, base + AP_START, what,
			       ap->start_partition, ap->start_partition + ap->num_partitions,
			       NX_NUM_PARTITIONS, ap->start_partition, ap->num_partitions + 1u);
	return 0;
}

/* One "byte N: field V is not defined (0..max)" check. */
#define CHECK_MAX(field, off, max)                                                          \
	do {                                                                                \
		if ((unsigned)out->field > (unsigned)(max))                                 \
			return nx_errf(err, NX_ECORRUPT,                                    \
				       "%s: byte %d: " #field " %u is not defined (0..%u)", where, \
				       (off), (unsigned)out->field, (unsigned)(max));       \
	} while (0)

int nx_inst_decode(const uint8_t in[NX_INST_SIZE], struct nx_inst *out, const char *where,
		   struct nx_err *err)
{
	uint32_t imm;
	int rc;

	memset(out, 0, sizeof(*out));
	out->opcode = nx_get_le16(in + OFF_OPCODE);
	out->engine = in[OFF_ENGINE];
	out->flags = in[OFF_FLAGS];
	out->act_fn = in[OFF_ACT_FN];
	out->perf_mode = in[OFF_PERF_MODE];
	out->alu = in[OFF_ALU];
	out->wait_cond = in[OFF_WAIT_COND];
	out->sig_op = in[OFF_SIG_OP];
	out->wait_sem = nx_get_le16(in + OFF_WAIT_SEM);
	out->sig_sem = nx_get_le16(in + OFF_SIG_SEM);
	out->wait_value = nx_get_le32(in + OFF_WAIT_VALUE);
	out->sig_value = nx_get_le32(in + OFF_SIG_VALUE);
	out->dma_block = nx_get_le32(in + OFF_DMA_BLOCK);
	out->debug_id = nx_get_le32(in + OFF_DEBUG_ID);
	out->bir_id = nx_get_le32(in + OFF_BIR_ID);
	imm = nx_get_le32(in + OFF_IMM);
	memcpy(&out->imm, &imm, sizeof(imm));

	CHECK_MAX(opcode, OFF_OPCODE, NX_OP_COUNT - 1);
	CHECK_MAX(engine, OFF_ENGINE, NX_ENGINE_COUNT - 1);
	if (out->flags & ~FLAGS_DEFINED)
		return nx_errf(err, NX_ECORRUPT,
			       "%s: byte %d: flags 0x%02x set undefined bits 0x%02x", where,
			       OFF_FLAGS, out->flags, out->flags & ~FLAGS_DEFINED);
	CHECK_MAX(act_fn, OFF_ACT_FN, NX_ACT_COUNT - 1);
	CHECK_MAX(perf_mode, OFF_PERF_MODE, 2);
	CHECK_MAX(alu, OFF_ALU, NX_ALU_COUNT - 1);
	CHECK_MAX(wait_cond, OFF_WAIT_COND, NX_WAIT_EQ);
	CHECK_MAX(sig_op, OFF_SIG_OP, NX_SEM_SET);
	CHECK_MAX(wait_sem, OFF_WAIT_SEM, NX_NUM_SEMAPHORES - 1);
	CHECK_MAX(sig_sem, OFF_SIG_SEM, NX_NUM_SEMAPHORES - 1);
	static const struct {
		int off, len;
	} reserved[] = { { OFF_RSVD0, 1 }, { OFF_RSVD1, 2 }, { OFF_RSVD2, 16 } };
	for (size_t r = 0; r < NX_ARRAY_SIZE(reserved); r++)
		for (int i = reserved[r].off; i < reserved[r].off + reserved[r].len; i++)
			if (in[i])
				return nx_errf(err, NX_ECORRUPT,
					       "%s: byte %d: reserved byte is 0x%02x, must be zero",
					       where, i, in[i]);
	rc = decode_ap(in, OFF_DST, "dst", &out->dst, where, err);
	if (!rc)
		rc = decode_ap(in, OFF_SRC0, "src0", &out->src0, where, err);
	if (!rc)
		rc = decode_ap(in, OFF_SRC1, "src1", &out->src1, where, err);
	return rc;
}

/* "S[5]++@complete", "S[5]+=16@complete", ... for the completion update. */
static void format_signal(const struct nx_inst *in, struct nx_strbuf *out)
{
	static const char *const ops[] = { "", "++", "--", "+=", "-=", "=" };

	nx_strbuf_addf(out, "S[%u]%s", in->sig_sem, ops[in->sig_op]);
	if (in->sig_op >= NX_SEM_ADD)
		nx_strbuf_addf(out, "%" PRIu32, in->sig_value);
	nx_strbuf_addstr(out, "@complete");
}

/* name=dtype@[psum:][p<start>:]0x<offset>[pstep,step0,step1][size0,size1,partitions] */
static void format_ap(const char *name, const struct nx_ap *ap, struct nx_strbuf *out)
{
	if (ap->mem == NX_MEM_NONE)
		return;
	if (out->len)
		nx_strbuf_addch(out, ' ');
	nx_strbuf_addf(out, "%s=%s@%s", name, nx_dtype_name(ap->dtype),
		       ap->mem == NX_MEM_PSUM ? "psum:" : "");
	if (ap->start_partition)
		nx_strbuf_addf(out, "p%u:", ap->start_partition);
	nx_strbuf_addf(out, "0x%" PRIx32 "[1,%" PRId32 ",%" PRId32 "][%" PRIu32 ",%" PRIu32 ",%u]",
		       ap->offset, ap->step[0], ap->step[1], ap->size[0], ap->size[1],
		       nx_ap_partitions(ap));
}

static void add_word(struct nx_strbuf *out, const char *s)
{
	if (out->len)
		nx_strbuf_addch(out, ' ');
	nx_strbuf_addstr(out, s);
}

void nx_inst_format_operands(const struct nx_inst *in, struct nx_strbuf *out)
{
	struct nx_strbuf sb = NX_STRBUF_INIT;
	char tmp[64];

	if (in->wait_cond != NX_WAIT_NONE)
		nx_strbuf_addf(&sb, "S[%u]%s%" PRIu32, in->wait_sem,
			       in->wait_cond == NX_WAIT_EQ ? "==" : ">=", in->wait_value);
	if (in->sig_op != NX_SEM_NONE && in->sig_op <= NX_SEM_SET) {
		if (sb.len)
			nx_strbuf_addch(&sb, ' ');
		format_signal(in, &sb);
	}
	if (in->opcode == NX_OP_DMA_TRIGGER) {
		snprintf(tmp, sizeof(tmp), "dma_block=%" PRIu32, in->dma_block);
		add_word(&sb, tmp);
	}
	format_ap("src", &in->src0, &sb);
	format_ap("src1", &in->src1, &sb);
	format_ap("dst", &in->dst, &sb);
	switch (in->opcode) {
	case NX_OP_TENSOR_TENSOR:
	case NX_OP_TENSOR_REDUCE:
		snprintf(tmp, sizeof(tmp), "op=%s", nx_alu_name(in->alu));
		add_word(&sb, tmp);
		break;
	case NX_OP_TENSOR_SCALAR:
		snprintf(tmp, sizeof(tmp), "op=%s imm=%g", nx_alu_name(in->alu), (double)in->imm);
		add_word(&sb, tmp);
		break;
	case NX_OP_ACTIVATE:
		snprintf(tmp, sizeof(tmp), "fn=%s scale=%g", nx_act_fn_name(in->act_fn),
			 (double)in->imm);
		add_word(&sb, tmp);
		break;
	case NX_OP_MEMSET:
		snprintf(tmp, sizeof(tmp), "value=%g", (double)in->imm);
		add_word(&sb, tmp);
		break;
	case NX_OP_MATMUL:
		if (in->flags & NX_INST_TRANSPOSE)
			add_word(&sb, "transpose");
		if (in->flags & NX_INST_ACCUMULATE)
			add_word(&sb, "acc");
		/* Last, so that `(\d+)\*(\d+)\s*$` finds K*M. */
		snprintf(tmp, sizeof(tmp), "%u*%u", nx_ap_partitions(&in->src0),
			 nx_ap_partitions(&in->dst));
		add_word(&sb, tmp);
		break;
	default:
		break;
	}
	nx_strbuf_add(out, sb.buf ? sb.buf : "", sb.len);
	nx_strbuf_release(&sb);
}

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

/* BF16-equivalent FLOPs: FP32 costs four passes, FP8 on v3 and UINT8 run at double rate. */
static uint64_t adjust_flops(uint64_t raw, int dtype, bool v3)
{
	switch (dtype) {
	case NX_DT_FP32:
		return mul_sat(raw, 4);
	case NX_DT_FP8:
		return v3 ? raw / 2 : raw;
	case NX_DT_UINT8:
		return raw / 2;
	default:
		return raw; /* BF16, FP16, TF32 (and INT32) count as is */
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
	count_ap(&in->dst, true, w);
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
