/* SPDX-License-Identifier: MIT
 * isa.c: the instruction record codec. A record is the 128-byte base record, followed
 * by a 256-byte extension when the instruction uses a field the base lacks (NEFF major
 * version 3). The layout is ours (docs/formats/neff.md, "Instruction streams"); the
 * offsets below are the normative copy. */
#include "common/compat.h"
#include "neff/isa.h"
#include "neff/neff.h"
#include "common/le.h"

#include <stdio.h>
#include <string.h>

/* Base record. All multi-byte fields are little-endian. */
enum {
	OFF_OPCODE = 0,     /* u16 */
	OFF_ENGINE = 2,     /* u8 */
	OFF_FLAGS = 3,      /* u8, bits 0..1 defined, bit 7 = an extension follows */
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
	/* Extension, from byte 128 of the record. */
	OFF_FLAGS2 = 128,   /* u8, bits 0..6 */
	OFF_ALU1 = 129,     /* u8 */
	OFF_REDUCE_OP = 130,/* u8 */
	OFF_REDUCE_CMD = 131,/* u8 */
	OFF_AXES = 132,     /* u8, 0..4 */
	OFF_RSVD3 = 133,    /* 3 bytes, zero */
	OFF_TILE = 136,     /* 4 x u8, 0..128 */
	OFF_IMM1 = 140,     /* binary32 */
	OFF_PARAM = 144,    /* 2 x i32 */
	OFF_PATTERN = 152,  /* 4 x i32 */
	OFF_SRC2 = 168,     /* access pattern */
	OFF_DST2 = 192,     /* access pattern */
	OFF_DIMS = 216,     /* per pattern (dst, src0, src1, src2, dst2) 16 bytes: */
	DIM_SIZE2 = 0, DIM_SIZE3 = 4, DIM_STEP2 = 8, DIM_STEP3 = 12, DIM_SIZE = 16,
	OFF_RSVD4 = 296,    /* 88 bytes, zero */
};
#define FLAGS_DEFINED (NX_INST_TRANSPOSE | NX_INST_ACCUMULATE)
#define FLAG_EXTENDED 0x80u
#define FLAGS2_DEFINED 0x7fu

/* The five patterns in record order, with their base and extension offsets. */
struct ap_slot {
	const char *name;
	size_t member;
	unsigned base, dims;
};
static const struct ap_slot ap_slots[] = {
	{ "dst", offsetof(struct nx_inst, dst), OFF_DST, OFF_DIMS },
	{ "src0", offsetof(struct nx_inst, src0), OFF_SRC0, OFF_DIMS + DIM_SIZE },
	{ "src1", offsetof(struct nx_inst, src1), OFF_SRC1, OFF_DIMS + 2 * DIM_SIZE },
	{ "src2", offsetof(struct nx_inst, src2), OFF_SRC2, OFF_DIMS + 3 * DIM_SIZE },
	{ "dst2", offsetof(struct nx_inst, dst2), OFF_DST2, OFF_DIMS + 4 * DIM_SIZE },
};

static struct nx_ap *slot_ap(struct nx_inst *in, const struct ap_slot *s)
{
	return (struct nx_ap *)((char *)in + s->member);
}

static const struct nx_ap *slot_cap(const struct nx_inst *in, const struct ap_slot *s)
{
	return (const struct nx_ap *)((const char *)in + s->member);
}

bool nx_inst_extended(const struct nx_inst *in)
{
	static const struct nx_inst zero;
	const struct nx_ap *aps[] = { &in->dst, &in->src0, &in->src1 };

	for (size_t i = 0; i < NX_ARRAY_SIZE(aps); i++)
		if (aps[i]->size[2] || aps[i]->size[3] || aps[i]->step[2] || aps[i]->step[3])
			return true;
	return in->flags2 || in->alu1 || in->reduce_op || in->reduce_cmd || in->axes ||
	       memcmp(in->tile, zero.tile, sizeof(in->tile)) ||
	       memcmp(&in->imm1, &zero.imm1, sizeof(in->imm1)) ||
	       in->param[0] || in->param[1] ||
	       memcmp(in->pattern, zero.pattern, sizeof(in->pattern)) ||
	       in->src2.mem != NX_MEM_NONE || in->dst2.mem != NX_MEM_NONE ||
	       memcmp(&in->src2, &zero.src2, sizeof(in->src2)) ||
	       memcmp(&in->dst2, &zero.dst2, sizeof(in->dst2));
}

bool nx_inst_needs_v3(const struct nx_inst *in)
{
	return nx_inst_extended(in) || in->opcode >= NX_OP_COUNT_V2 ||
	       in->act_fn >= NX_ACT_COUNT_V2 || in->alu >= NX_ALU_COUNT_V2 ||
	       (in->dst.mem && in->dst.dtype >= NX_DT_COUNT_V2) ||
	       (in->src0.mem && in->src0.dtype >= NX_DT_COUNT_V2) ||
	       (in->src1.mem && in->src1.dtype >= NX_DT_COUNT_V2);
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

static void put_f32(uint8_t *p, float f)
{
	uint32_t v;

	memcpy(&v, &f, sizeof(v));
	nx_put_le32(p, v);
}

static float get_f32(const uint8_t *p)
{
	uint32_t v = nx_get_le32(p);
	float f;

	memcpy(&f, &v, sizeof(f));
	return f;
}

size_t nx_inst_encode(const struct nx_inst *in, uint8_t *out)
{
	bool ext = nx_inst_extended(in);

	memset(out, 0, ext ? NX_INST_EXT_SIZE : NX_INST_SIZE);
	nx_put_le16(out + OFF_OPCODE, in->opcode);
	out[OFF_ENGINE] = in->engine;
	out[OFF_FLAGS] = (uint8_t)(in->flags | (ext ? FLAG_EXTENDED : 0));
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
	put_f32(out + OFF_IMM, in->imm);
	for (size_t s = 0; s < (ext ? NX_ARRAY_SIZE(ap_slots) : 3u); s++) {
		const struct nx_ap *ap = slot_cap(in, &ap_slots[s]);
		uint8_t *d = out + ap_slots[s].dims;

		encode_ap(ap, out + ap_slots[s].base);
		if (!ext)
			continue;
		nx_put_le32(d + DIM_SIZE2, ap->size[2]);
		nx_put_le32(d + DIM_SIZE3, ap->size[3]);
		nx_put_le32(d + DIM_STEP2, (uint32_t)ap->step[2]);
		nx_put_le32(d + DIM_STEP3, (uint32_t)ap->step[3]);
	}
	if (!ext)
		return NX_INST_SIZE;
	out[OFF_FLAGS2] = in->flags2;
	out[OFF_ALU1] = in->alu1;
	out[OFF_REDUCE_OP] = in->reduce_op;
	out[OFF_REDUCE_CMD] = in->reduce_cmd;
	out[OFF_AXES] = in->axes;
	memcpy(out + OFF_TILE, in->tile, sizeof(in->tile));
	put_f32(out + OFF_IMM1, in->imm1);
	for (int k = 0; k < 2; k++)
		nx_put_le32(out + OFF_PARAM + 4 * k, (uint32_t)in->param[k]);
	for (unsigned k = 0; k < NX_AP_DIMS; k++)
		nx_put_le32(out + OFF_PATTERN + 4 * k, (uint32_t)in->pattern[k]);
	return NX_INST_EXT_SIZE;
}

/* Decodes and checks one access pattern (and, in an extended record, its outer dims). */
static int decode_ap(const uint8_t *rec, const struct ap_slot *slot, bool ext, unsigned ndt,
		     struct nx_ap *ap, const char *where, struct nx_err *err)
{
	const uint8_t *p = rec + slot->base;
	const char *what = slot->name;
	unsigned base = slot->base;

	ap->mem = p[AP_MEM];
	ap->dtype = p[AP_DTYPE];
	ap->start_partition = p[AP_START];
	ap->num_partitions = p[AP_NPART];
	ap->offset = nx_get_le32(p + AP_OFFSET);
	ap->size[0] = nx_get_le32(p + AP_SIZE0);
	ap->size[1] = nx_get_le32(p + AP_SIZE1);
	ap->step[0] = (int32_t)nx_get_le32(p + AP_STEP0);
	ap->step[1] = (int32_t)nx_get_le32(p + AP_STEP1);
	if (ext) {
		const uint8_t *d = rec + slot->dims;

		ap->size[2] = nx_get_le32(d + DIM_SIZE2);
		ap->size[3] = nx_get_le32(d + DIM_SIZE3);
		ap->step[2] = (int32_t)nx_get_le32(d + DIM_STEP2);
		ap->step[3] = (int32_t)nx_get_le32(d + DIM_STEP3);
	}
	if (ap->mem > NX_MEM_PSUM)
		return nx_errf(err, NX_ECORRUPT,
			       "%s: byte %u: %s memory %u is not defined (0 none, 1 sbuf, 2 psum)",
			       where, base + AP_MEM, what, ap->mem);
	if (ap->dtype >= NX_DT_COUNT)
		return nx_errf(err, NX_ECORRUPT, "%s: byte %u: %s dtype %u is not defined (0..%d)",
			       where, base + AP_DTYPE, what, ap->dtype, NX_DT_COUNT - 1);
	if (ap->dtype >= ndt)
		return nx_errf(err, NX_EVERSION, "%s: byte %u: %s dtype %s needs NEFF major "
			       "version 3", where, base + AP_DTYPE, what, nx_dtype_name(ap->dtype));
	if ((unsigned)ap->start_partition + ap->num_partitions + 1u > NX_NUM_PARTITIONS)
		return nx_errf(err, NX_ECORRUPT,
			       "%s: byte %u: %s partitions %u..%u exceed the %u partitions "
			       "(start %u, count %u)", where, base + AP_START, what,
			       ap->start_partition, ap->start_partition + ap->num_partitions,
			       NX_NUM_PARTITIONS, ap->start_partition, ap->num_partitions + 1u);
	return 0;
}

/* One "byte N: field V is not defined (0..max)" check, and the version-2 limit. */
#define CHECK_MAX(field, off, max, v2max)                                                   \
	do {                                                                                \
		if ((unsigned)out->field > (unsigned)(max))                                 \
			return nx_errf(err, NX_ECORRUPT,                                    \
				       "%s: byte %d: " #field " %u is not defined (0..%u)", where, \
				       (off), (unsigned)out->field, (unsigned)(max));       \
		if (major < 3 && (unsigned)out->field > (unsigned)(v2max))                  \
			return nx_errf(err, NX_EVERSION,                                    \
				       "%s: byte %d: " #field " %u needs NEFF major version 3 " \
				       "(this file is version %u)", where, (off),           \
				       (unsigned)out->field, major);                        \
	} while (0)

static int check_reserved(const uint8_t *in, int off, int len, const char *where,
			  struct nx_err *err)
{
	for (int i = off; i < off + len; i++)
		if (in[i])
			return nx_errf(err, NX_ECORRUPT, "%s: byte %d: reserved byte is 0x%02x, "
				       "must be zero", where, i, in[i]);
	return 0;
}

static void decode_ext(const uint8_t *in, struct nx_inst *out)
{
	out->flags2 = in[OFF_FLAGS2];
	out->alu1 = in[OFF_ALU1];
	out->reduce_op = in[OFF_REDUCE_OP];
	out->reduce_cmd = in[OFF_REDUCE_CMD];
	out->axes = in[OFF_AXES];
	memcpy(out->tile, in + OFF_TILE, sizeof(out->tile));
	out->imm1 = get_f32(in + OFF_IMM1);
	for (int k = 0; k < 2; k++)
		out->param[k] = (int32_t)nx_get_le32(in + OFF_PARAM + 4 * k);
	for (unsigned k = 0; k < NX_AP_DIMS; k++)
		out->pattern[k] = (int32_t)nx_get_le32(in + OFF_PATTERN + 4 * k);
}

static int check_ext(const uint8_t *in, const struct nx_inst *out, const char *where,
		     struct nx_err *err)
{
	int rc;

	if (out->flags2 & ~FLAGS2_DEFINED)
		return nx_errf(err, NX_ECORRUPT, "%s: byte %d: flags2 0x%02x set undefined bits "
			       "0x%02x", where, OFF_FLAGS2, out->flags2,
			       out->flags2 & ~FLAGS2_DEFINED);
	if (out->alu1 >= NX_ALU_COUNT || out->reduce_op >= NX_ALU_COUNT)
		return nx_errf(err, NX_ECORRUPT, "%s: byte %d: %s %u is not defined (0..%d)", where,
			       out->alu1 >= NX_ALU_COUNT ? OFF_ALU1 : OFF_REDUCE_OP,
			       out->alu1 >= NX_ALU_COUNT ? "alu1" : "reduce_op",
			       out->alu1 >= NX_ALU_COUNT ? out->alu1 : out->reduce_op,
			       NX_ALU_COUNT - 1);
	if (out->reduce_cmd >= NX_RCMD_COUNT)
		return nx_errf(err, NX_ECORRUPT, "%s: byte %d: reduce_cmd %u is not defined "
			       "(0..%d)", where, OFF_REDUCE_CMD, out->reduce_cmd,
			       NX_RCMD_COUNT - 1);
	if (out->axes > NX_AP_DIMS)
		return nx_errf(err, NX_ECORRUPT, "%s: byte %d: axes %u is not defined (0..%u)",
			       where, OFF_AXES, out->axes, NX_AP_DIMS);
	for (int k = 0; k < 4; k++)
		if (out->tile[k] > NX_NUM_PARTITIONS)
			return nx_errf(err, NX_ECORRUPT, "%s: byte %d: tile %u is more than %u",
				       where, OFF_TILE + k, out->tile[k], NX_NUM_PARTITIONS);
	if ((rc = check_reserved(in, OFF_RSVD3, 3, where, err)))
		return rc;
	return check_reserved(in, OFF_RSVD4, (int)NX_INST_EXT_SIZE - OFF_RSVD4, where, err);
}

int nx_inst_decode(const uint8_t *in, size_t avail, unsigned major, struct nx_inst *out,
		   size_t *used, const char *where, struct nx_err *err)
{
	bool ext;
	int rc;

	memset(out, 0, sizeof(*out));
	*used = 0;
	if (avail < NX_INST_SIZE)
		return nx_errf(err, NX_ECORRUPT, "%s: the record is partial (%zu of %u bytes)",
			       where, avail, NX_INST_SIZE);
	ext = in[OFF_FLAGS] & FLAG_EXTENDED;
	if (ext && major < 3)
		return nx_errf(err, NX_EVERSION, "%s: byte %d: flags bit 7 (record extension) "
			       "needs NEFF major version 3 (this file is version %u)", where,
			       OFF_FLAGS, major);
	if (ext && avail < NX_INST_EXT_SIZE)
		return nx_errf(err, NX_ECORRUPT, "%s: the extended record is partial (%zu of %u "
			       "bytes)", where, avail, NX_INST_EXT_SIZE);
	out->opcode = nx_get_le16(in + OFF_OPCODE);
	out->engine = in[OFF_ENGINE];
	out->flags = in[OFF_FLAGS] & (uint8_t)~FLAG_EXTENDED;
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
	out->imm = get_f32(in + OFF_IMM);

	CHECK_MAX(opcode, OFF_OPCODE, NX_OP_COUNT - 1, NX_OP_COUNT_V2 - 1);
	CHECK_MAX(engine, OFF_ENGINE, NX_ENGINE_COUNT - 1, NX_ENGINE_COUNT - 1);
	if (out->flags & ~FLAGS_DEFINED)
		return nx_errf(err, NX_ECORRUPT,
			       "%s: byte %d: flags 0x%02x set undefined bits 0x%02x", where,
			       OFF_FLAGS, in[OFF_FLAGS], out->flags & ~FLAGS_DEFINED);
	CHECK_MAX(act_fn, OFF_ACT_FN, NX_ACT_COUNT - 1, NX_ACT_COUNT_V2 - 1);
	CHECK_MAX(perf_mode, OFF_PERF_MODE, 2, 2);
	CHECK_MAX(alu, OFF_ALU, NX_ALU_COUNT - 1, NX_ALU_COUNT_V2 - 1);
	CHECK_MAX(wait_cond, OFF_WAIT_COND, NX_WAIT_EQ, NX_WAIT_EQ);
	CHECK_MAX(sig_op, OFF_SIG_OP, NX_SEM_SET, NX_SEM_SET);
	CHECK_MAX(wait_sem, OFF_WAIT_SEM, NX_NUM_SEMAPHORES - 1, NX_NUM_SEMAPHORES - 1);
	CHECK_MAX(sig_sem, OFF_SIG_SEM, NX_NUM_SEMAPHORES - 1, NX_NUM_SEMAPHORES - 1);
	if ((rc = check_reserved(in, OFF_RSVD0, 1, where, err)) ||
	    (rc = check_reserved(in, OFF_RSVD1, 2, where, err)) ||
	    (rc = check_reserved(in, OFF_RSVD2, 16, where, err)))
		return rc;
	if (ext) {
		decode_ext(in, out);
		if ((rc = check_ext(in, out, where, err)))
			return rc;
	}
	for (size_t s = 0; s < (ext ? NX_ARRAY_SIZE(ap_slots) : 3u); s++)
		if ((rc = decode_ap(in, &ap_slots[s], ext, major < 3 ? NX_DT_COUNT_V2 : NX_DT_COUNT,
				    slot_ap(out, &ap_slots[s]), where, err)))
			return rc;
	*used = ext ? NX_INST_EXT_SIZE : NX_INST_SIZE;
	return 0;
}
