/* SPDX-License-Identifier: MIT
 * test_isa.c: instruction-set names, the record codec (128-byte layout and the 256-byte
 * extension, version limits, round trip, every validation error), the operand text the
 * analyses parse, and the work and FLOP figures of instructions (hand-computed). */
#include "common/compat.h"
#include "neff/isa.h"
#include "neff/neff.h"
#include "common/strbuf.h"

#include <regex.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "helper/asserts.h"

#define assert_contains(hay, needle)                                                        \
	do {                                                                               \
		if (!strstr((hay), (needle)))                                              \
			fail_msg("\"%s\" does not contain \"%s\"", (hay), (needle));      \
	} while (0)

static struct nx_ap ap(int mem, int dtype, unsigned start, unsigned parts, uint32_t off,
		       uint32_t n0, uint32_t n1, int32_t s0, int32_t s1)
{
	struct nx_ap a = { (uint8_t)mem, (uint8_t)dtype, (uint8_t)start, (uint8_t)(parts - 1),
			   off, { n0, n1 }, { s0, s1 } };
	return a;
}

/* MATMUL: moving bf16 [K=128 partitions x N=512] -> PSUM fp32 [M=64 x 512]. */
static struct nx_inst matmul(void)
{
	struct nx_inst in;

	memset(&in, 0, sizeof(in));
	in.opcode = NX_OP_MATMUL;
	in.engine = NX_ENGINE_TENSOR;
	in.wait_cond = NX_WAIT_GE;
	in.wait_sem = 3;
	in.wait_value = 2;
	in.sig_op = NX_SEM_INC;
	in.sig_sem = 5;
	in.dma_block = NX_NONE32;
	in.debug_id = NX_NONE32;
	in.src0 = ap(NX_MEM_SBUF, NX_DT_BF16, 0, 128, 0x1200, 512, 1, 1, 0);
	in.dst = ap(NX_MEM_PSUM, NX_DT_FP32, 0, 64, 0x800, 512, 1, 1, 0);
	return in;
}

static void test_names(void **state)
{
	(void)state;
	assert_string_equal(nx_engine_name(NX_ENGINE_GPSIMD), "GpSimd");
	assert_string_equal(nx_engine_lower(NX_ENGINE_GPSIMD), "gpsimd");
	assert_string_equal(nx_engine_name(99), "unknown");
	for (int e = 0; e < NX_ENGINE_COUNT; e++) {
		assert_int_equal(nx_engine_parse(nx_engine_name(e)), e);
		assert_int_equal(nx_engine_parse(nx_engine_lower(e)), e);
	}
	assert_int_equal(nx_engine_parse("PE"), NX_ENGINE_TENSOR);
	assert_int_equal(nx_engine_parse("dve"), NX_ENGINE_VECTOR);
	assert_int_equal(nx_engine_parse("ACT"), NX_ENGINE_SCALAR);
	assert_int_equal(nx_engine_parse("Pool"), NX_ENGINE_GPSIMD);
	assert_int_equal(nx_engine_parse("SP"), NX_ENGINE_SYNC);
	assert_int_equal(nx_engine_parse("dma"), -1);
	assert_int_equal(nx_engine_parse(NULL), -1);

	for (int d = 0; d < NX_DT_COUNT; d++)
		assert_int_equal(nx_dtype_parse(nx_dtype_name(d)), d);
	assert_int_equal(nx_dtype_parse("bfloat16"), NX_DT_BF16);
	assert_int_equal(nx_dtype_parse("float32"), NX_DT_FP32);
	assert_int_equal(nx_dtype_parse("float8_e4m3"), NX_DT_FP8);
	assert_int_equal(nx_dtype_parse("complex64"), -1);
	assert_int_equal(nx_dtype_size(NX_DT_BF16), 2);
	assert_int_equal(nx_dtype_size(NX_DT_FP32), 4);
	assert_int_equal(nx_dtype_size(NX_DT_FP8), 1);
	assert_int_equal(nx_dtype_size(NX_DT_TF32), 4);
	assert_int_equal(nx_dtype_size(NX_DT_UINT8), 1);
	assert_int_equal(nx_dtype_size(-1), 0);

	for (int op = 0; op < NX_OP_COUNT; op++)
		assert_int_equal(nx_opcode_parse(nx_opcode_name(op)), op);
	assert_string_equal(nx_opcode_name(NX_OP_DMA_TRIGGER), "DMA_DIRECT2D");
	assert_int_equal(nx_opcode_parse("dma_trigger"), NX_OP_DMA_TRIGGER);
	assert_int_equal(nx_opcode_parse("matmul"), NX_OP_MATMUL);
	assert_int_equal(nx_opcode_parse("FROB"), -1);

	for (int f = 0; f < NX_ACT_COUNT; f++)
		assert_int_equal(nx_act_fn_parse(nx_act_fn_name(f)), f);
	assert_string_equal(nx_act_fn_name(NX_ACT_COPY), "COPY");
	for (int a = 0; a < NX_ALU_COUNT; a++)
		assert_int_equal(nx_alu_parse(nx_alu_name(a)), a);
	assert_string_equal(nx_tensor_kind_name(NX_TENSOR_WEIGHT), "WEIGHT");
	assert_string_equal(nx_queue_type_name(NX_QT_SOFTWARE_DYNAMIC), "software_dynamic");
	assert_string_equal(nx_queue_type_name(NX_QT_COUNT), "unknown");
}

static void test_layout(void **state)
{
	struct nx_inst in = matmul();
	uint8_t rec[NX_INST_EXT_SIZE];

	(void)state;
	in.opcode = 0x0102 & 0xff; /* MATMUL = 2, kept little-endian */
	in.flags = NX_INST_ACCUMULATE;
	in.bir_id = 0x11223344;
	in.imm = 1.0f;
	nx_inst_encode(&in, rec);
	assert_int_equal(rec[0], NX_OP_MATMUL);
	assert_int_equal(rec[1], 0);
	assert_int_equal(rec[2], NX_ENGINE_TENSOR);
	assert_int_equal(rec[3], NX_INST_ACCUMULATE);
	assert_int_equal(rec[7], NX_WAIT_GE);
	assert_int_equal(rec[8], NX_SEM_INC);
	assert_int_equal(rec[10], 3);
	assert_int_equal(rec[12], 5);
	assert_int_equal(rec[16], 2);
	assert_memory_equal(rec + 24, "\xff\xff\xff\xff", 4);
	assert_memory_equal(rec + 32, "\x44\x33\x22\x11", 4);
	assert_memory_equal(rec + 36, "\x00\x00\x80\x3f", 4); /* 1.0f */
	/* dst at 40: mem, dtype, start, partitions-1, offset, sizes, steps */
	assert_int_equal(rec[40], NX_MEM_PSUM);
	assert_int_equal(rec[41], NX_DT_FP32);
	assert_int_equal(rec[43], 63);
	assert_memory_equal(rec + 44, "\x00\x08\x00\x00", 4);
	assert_memory_equal(rec + 48, "\x00\x02\x00\x00", 4);
	/* src0 at 64, src1 at 88 (unused: zero), reserved tail zero. */
	assert_int_equal(rec[64], NX_MEM_SBUF);
	assert_int_equal(rec[67], 127);
	for (int i = 88; i < 128; i++)
		assert_int_equal(rec[i], 0);
}

static void test_roundtrip(void **state)
{
	struct nx_inst in, out;
	uint8_t rec[NX_INST_EXT_SIZE];
	size_t used;
	struct nx_err err = { 0 };

	(void)state;
	memset(&in, 0, sizeof(in));
	in.opcode = NX_OP_TENSOR_SCALAR;
	in.engine = NX_ENGINE_GPSIMD;
	in.flags = NX_INST_TRANSPOSE | NX_INST_ACCUMULATE;
	in.act_fn = NX_ACT_GELU;
	in.perf_mode = 2;
	in.alu = NX_ALU_DIV;
	in.wait_cond = NX_WAIT_EQ;
	in.sig_op = NX_SEM_SET;
	in.wait_sem = 255;
	in.sig_sem = 254;
	in.wait_value = 0xdeadbeef;
	in.sig_value = 7;
	in.dma_block = 9;
	in.debug_id = 10;
	in.bir_id = 0xffffffff;
	in.imm = -0.3125f;
	in.dst = ap(NX_MEM_SBUF, NX_DT_UINT8, 127, 1, 0xffffffff, 0xffffffff, 3, -5, INT32_MIN);
	in.src0 = ap(NX_MEM_PSUM, NX_DT_TF32, 0, 128, 1, 2, 3, 4, 5);
	in.src1 = ap(NX_MEM_SBUF, NX_DT_INT32, 64, 64, 7, 8, 9, INT32_MAX, -1);
	assert_int_equal(nx_inst_encode(&in, rec), NX_INST_SIZE);
	assert_int_equal(nx_inst_decode(rec, sizeof(rec), 2, &out, &used, "r", &err), 0);
	assert_int_equal(used, NX_INST_SIZE);
	assert_memory_equal(&in, &out, sizeof(in));
}

/* Encodes a MATMUL, pokes one byte, decodes, and checks the error text. */
static void expect_bad_at(int off, uint8_t val, int reported, const char *text)
{
	struct nx_inst in = matmul(), out;
	uint8_t rec[NX_INST_EXT_SIZE];
	struct nx_err err = { 0 };
	char where[64];
	size_t used;

	nx_inst_encode(&in, rec);
	rec[off] = val;
	assert_int_equal(nx_inst_decode(rec, NX_INST_SIZE, 3, &out, &used,
					"sg00/Tensor.bin: instruction 12", &err), NX_ECORRUPT);
	snprintf(where, sizeof(where), "sg00/Tensor.bin: instruction 12: byte %d: ", reported);
	assert_contains(err.msg, where);
	assert_contains(err.msg, text);
}

static void expect_bad(int off, uint8_t val, const char *text)
{
	expect_bad_at(off, val, off, text);
}

static void test_decode_errors(void **state)
{
	(void)state;
	expect_bad(0, NX_OP_COUNT, "opcode 28 is not defined (0..27)");
	expect_bad_at(1, 1, 0, "opcode 258 is not defined"); /* errors name the field's start */
	expect_bad(2, 5, "engine 5 is not defined (0..4)");
	expect_bad(3, 0x04, "flags 0x04 set undefined bits 0x04");
	expect_bad(4, NX_ACT_COUNT, "act_fn 29 is not defined");
	expect_bad(5, 3, "perf_mode 3 is not defined (0..2)");
	expect_bad(6, NX_ALU_COUNT, "alu 28 is not defined");
	expect_bad(7, 3, "wait_cond 3 is not defined (0..2)");
	expect_bad(8, 6, "sig_op 6 is not defined (0..5)");
	expect_bad(9, 1, "reserved byte is 0x01, must be zero");
	expect_bad_at(11, 1, 10, "wait_sem 259 is not defined (0..255)"); /* 3 + 256 */
	expect_bad_at(13, 1, 12, "sig_sem 261 is not defined (0..255)");
	expect_bad(15, 0x80, "reserved byte is 0x80");
	expect_bad(127, 1, "reserved byte is 0x01");
	expect_bad(40, 3, "dst memory 3 is not defined (0 none, 1 sbuf, 2 psum)");
	expect_bad(65, NX_DT_COUNT, "src0 dtype 13 is not defined (0..12)");
	/* src0 starts at partition 1 with 128 partitions: one too many. */
	expect_bad(66, 1, "src0 partitions 1..128 exceed the 128 partitions (start 1, count 128)");
	expect_bad_at(91, 200, 90, "src1 partitions 0..200 exceed");
}

/* POSIX spellings of the analysis regexes `src=\S+\[[\d,\-]+\]\[(\d+),` and
 * `(\d+)\*(\d+)\s*$`. */
static long regex_group(const char *pattern, const char *text, int group)
{
	regex_t re;
	regmatch_t m[3];
	long v = -1;

	assert_int_equal(regcomp(&re, pattern, REG_EXTENDED), 0);
	if (regexec(&re, text, 3, m, 0) == 0 && m[group].rm_so >= 0)
		v = strtol(text + m[group].rm_so, NULL, 10);
	regfree(&re);
	return v;
}

static void test_operands_matmul(void **state)
{
	struct nx_inst in = matmul();
	struct nx_strbuf sb = NX_STRBUF_INIT;

	(void)state;
	nx_inst_format_operands(&in, &sb);
	assert_string_equal(sb.buf, "S[3]>=2 S[5]++@complete src=bf16@0x1200[1,1,0][512,1,128] "
				    "dst=fp32@psum:0x800[1,1,0][512,1,64] 128*64");
	assert_int_equal(regex_group("src=[^[:space:]]+\\[[0-9,-]+\\]\\[([0-9]+),", sb.buf, 1),
			 512);
	assert_int_equal(regex_group("([0-9]+)\\*([0-9]+)[[:space:]]*$", sb.buf, 1), 128);
	assert_int_equal(regex_group("([0-9]+)\\*([0-9]+)[[:space:]]*$", sb.buf, 2), 64);

	/* Transpose and accumulate flags, negative steps, a start partition: K*M stays last. */
	nx_strbuf_reset(&sb);
	in.flags = NX_INST_TRANSPOSE | NX_INST_ACCUMULATE;
	in.wait_cond = NX_WAIT_NONE;
	in.sig_op = NX_SEM_NONE;
	in.src0 = ap(NX_MEM_SBUF, NX_DT_FP8, 32, 96, 0, 256, 2, -1, 256);
	nx_inst_format_operands(&in, &sb);
	assert_string_equal(sb.buf, "src=fp8@p32:0x0[1,-1,256][256,2,96] "
				    "dst=fp32@psum:0x800[1,1,0][512,1,64] transpose acc 96*64");
	assert_int_equal(regex_group("src=[^[:space:]]+\\[[0-9,-]+\\]\\[([0-9]+),", sb.buf, 1),
			 256);
	assert_int_equal(regex_group("([0-9]+)\\*([0-9]+)[[:space:]]*$", sb.buf, 1), 96);
	nx_strbuf_release(&sb);
}

static void test_operands_semaphores(void **state)
{
	static const struct {
		int op;
		uint32_t value;
		const char *text;
	} sig[] = {
		{ NX_SEM_INC, 0, "S[5]++@complete" }, { NX_SEM_DEC, 0, "S[5]--@complete" },
		{ NX_SEM_ADD, 16, "S[5]+=16@complete" }, { NX_SEM_SUB, 2, "S[5]-=2@complete" },
		{ NX_SEM_SET, 1, "S[5]=1@complete" },
	};
	struct nx_strbuf sb = NX_STRBUF_INIT;
	struct nx_inst in;

	(void)state;
	memset(&in, 0, sizeof(in));
	in.opcode = NX_OP_EVENT_SEMAPHORE;
	in.engine = NX_ENGINE_SYNC;
	in.sig_sem = 5;
	for (size_t i = 0; i < NX_ARRAY_SIZE(sig); i++) {
		nx_strbuf_reset(&sb);
		in.sig_op = (uint8_t)sig[i].op;
		in.sig_value = sig[i].value;
		nx_inst_format_operands(&in, &sb);
		assert_string_equal(sb.buf, sig[i].text);
	}
	nx_strbuf_reset(&sb);
	in.sig_op = NX_SEM_NONE;
	in.wait_cond = NX_WAIT_EQ;
	in.wait_sem = 45;
	in.wait_value = 16;
	nx_inst_format_operands(&in, &sb);
	assert_string_equal(sb.buf, "S[45]==16");
	nx_strbuf_reset(&sb);
	in.wait_cond = NX_WAIT_NONE;
	nx_inst_format_operands(&in, &sb);
	assert_string_equal(nx_strbuf_str(&sb), "");
	nx_strbuf_release(&sb);
}

static void test_operands_other(void **state)
{
	struct nx_strbuf sb = NX_STRBUF_INIT;
	struct nx_inst in;

	(void)state;
	memset(&in, 0, sizeof(in));
	in.opcode = NX_OP_ACTIVATE;
	in.engine = NX_ENGINE_SCALAR;
	in.act_fn = NX_ACT_EXP;
	in.imm = 0.5f;
	in.src0 = ap(NX_MEM_PSUM, NX_DT_FP32, 0, 128, 0, 512, 1, 1, 0);
	in.dst = ap(NX_MEM_SBUF, NX_DT_BF16, 0, 128, 0x4000, 512, 1, 1, 0);
	nx_inst_format_operands(&in, &sb);
	assert_string_equal(sb.buf, "src=fp32@psum:0x0[1,1,0][512,1,128] "
				    "dst=bf16@0x4000[1,1,0][512,1,128] fn=EXP scale=0.5");
	nx_strbuf_reset(&sb);
	in.opcode = NX_OP_TENSOR_TENSOR;
	in.alu = NX_ALU_MAX;
	in.src1 = in.dst;
	nx_inst_format_operands(&in, &sb);
	assert_contains(sb.buf, " src1=bf16@0x4000[1,1,0][512,1,128] dst=");
	assert_contains(sb.buf, " op=max");
	nx_strbuf_reset(&sb);
	memset(&in, 0, sizeof(in));
	in.opcode = NX_OP_DMA_TRIGGER;
	in.engine = NX_ENGINE_SYNC;
	in.dma_block = 4;
	in.sig_op = NX_SEM_ADD;
	in.sig_sem = 22;
	in.sig_value = 16;
	nx_inst_format_operands(&in, &sb);
	assert_string_equal(sb.buf, "S[22]+=16@complete dma_block=4");
	nx_strbuf_release(&sb);
}

static void test_work_matmul(void **state)
{
	struct nx_inst in = matmul();
	struct nx_inst_work w;

	(void)state;
	nx_inst_work(&in, true, &w);
	/* K = 128, M = 64, N = 512. */
	assert_int_equal(w.elements, 512);
	assert_int_equal(w.partitions, 128);
	assert_int_equal(w.tensor_elements, 4194304);
	assert_int_equal(w.raw_flops, 8388608);
	assert_int_equal(w.adjusted_flops, 8388608);
	assert_int_equal(w.sbuf_read_bytes, 128 * 512 * 2);
	assert_int_equal(w.psum_write_bytes, 64 * 512 * 4);
	assert_int_equal(w.sbuf_write_bytes, 0);
	assert_int_equal(w.psum_read_bytes, 0);
	assert_int_equal(w.psum_read_sbuf_write_bytes, 0);

	in.src0.dtype = NX_DT_FP32;
	nx_inst_work(&in, true, &w);
	assert_int_equal(w.adjusted_flops, 33554432);
	assert_int_equal(w.sbuf_read_bytes, 128 * 512 * 4);
	in.src0.dtype = NX_DT_FP8;
	nx_inst_work(&in, true, &w);
	assert_int_equal(w.adjusted_flops, 4194304);
	nx_inst_work(&in, false, &w);
	assert_int_equal(w.adjusted_flops, 8388608);
	in.src0.dtype = NX_DT_UINT8;
	nx_inst_work(&in, false, &w);
	assert_int_equal(w.adjusted_flops, 4194304);
	in.src0.dtype = NX_DT_FP16;
	nx_inst_work(&in, true, &w);
	assert_int_equal(w.adjusted_flops, 8388608);
	in.src0.dtype = NX_DT_TF32;
	nx_inst_work(&in, true, &w);
	assert_int_equal(w.adjusted_flops, 8388608);
}

static void test_work_other(void **state)
{
	struct nx_inst in;
	struct nx_inst_work w;

	(void)state;
	/* LDWEIGHTS: reads a 128 x 64 bf16 stationary tile from SBUF, no FLOPs. */
	memset(&in, 0, sizeof(in));
	in.opcode = NX_OP_LDWEIGHTS;
	in.src0 = ap(NX_MEM_SBUF, NX_DT_BF16, 0, 128, 0, 64, 1, 1, 0);
	nx_inst_work(&in, true, &w);
	assert_int_equal(w.sbuf_read_bytes, 16384);
	assert_int_equal(w.raw_flops, 0);
	assert_int_equal(w.tensor_elements, 0);
	assert_int_equal(w.psum_write_bytes, 0);

	/* TENSOR_COPY PSUM fp32 64 x 512 -> SBUF bf16. */
	memset(&in, 0, sizeof(in));
	in.opcode = NX_OP_TENSOR_COPY;
	in.engine = NX_ENGINE_VECTOR;
	in.src0 = ap(NX_MEM_PSUM, NX_DT_FP32, 0, 64, 0, 512, 1, 1, 0);
	in.dst = ap(NX_MEM_SBUF, NX_DT_BF16, 0, 64, 0, 512, 1, 1, 0);
	nx_inst_work(&in, true, &w);
	assert_int_equal(w.elements, 512);
	assert_int_equal(w.partitions, 64);
	assert_int_equal(w.psum_read_bytes, 131072);
	assert_int_equal(w.sbuf_write_bytes, 65536);
	assert_int_equal(w.psum_read_sbuf_write_bytes, 65536);
	assert_int_equal(w.sbuf_read_bytes, 0);

	/* TENSOR_TENSOR on SBUF with a 2-D pattern: 32 partitions x (16 x 8) fp32. */
	memset(&in, 0, sizeof(in));
	in.opcode = NX_OP_TENSOR_TENSOR;
	in.src0 = ap(NX_MEM_SBUF, NX_DT_FP32, 0, 32, 0, 16, 8, 1, 16);
	in.src1 = ap(NX_MEM_SBUF, NX_DT_FP32, 32, 32, 0, 16, 8, 1, 16);
	in.dst = ap(NX_MEM_SBUF, NX_DT_FP32, 64, 32, 0, 16, 8, 1, 16);
	nx_inst_work(&in, true, &w);
	assert_int_equal(w.elements, 128);
	assert_int_equal(w.sbuf_read_bytes, 2 * 32 * 128 * 4);
	assert_int_equal(w.sbuf_write_bytes, 32 * 128 * 4);
	assert_int_equal(w.psum_read_sbuf_write_bytes, 0);

	/* MEMSET has only a destination; huge patterns saturate instead of wrapping. */
	memset(&in, 0, sizeof(in));
	in.opcode = NX_OP_MEMSET;
	in.dst = ap(NX_MEM_SBUF, NX_DT_FP32, 0, 128, 0, UINT32_MAX, UINT32_MAX, 1, 1);
	nx_inst_work(&in, true, &w);
	assert_int_equal(w.elements, (uint64_t)UINT32_MAX * UINT32_MAX);
	assert_int_equal(w.partitions, 128);
	NX_ASSERT_CMP(w.sbuf_write_bytes, ==, UINT64_MAX);

	/* No operands: nothing counted. */
	memset(&in, 0, sizeof(in));
	in.opcode = NX_OP_NOP;
	nx_inst_work(&in, true, &w);
	assert_int_equal(w.elements + w.partitions + w.sbuf_read_bytes + w.sbuf_write_bytes, 0);
}


/* Every extension field set: the record is 384 bytes with flags bit 7, and decodes to
 * the same struct. */
static struct nx_inst extended(void)
{
	struct nx_inst in = matmul();

	in.opcode = NX_OP_RANGE_SELECT;
	in.engine = NX_ENGINE_VECTOR;
	in.alu = NX_ALU_IS_GE;
	in.flags2 = 0x7f;
	in.alu1 = NX_ALU_LOGICAL_SHIFT_RIGHT;
	in.reduce_op = NX_ALU_MAX;
	in.reduce_cmd = NX_RCMD_RESET_REDUCE;
	in.axes = 4;
	memcpy(in.tile, "\x40\x20\x40\x60", 4);
	in.imm1 = -9984.0f;
	in.param[0] = -7;
	in.param[1] = INT32_MAX;
	in.pattern[0] = 1;
	in.pattern[3] = INT32_MIN;
	in.src0 = ap(NX_MEM_SBUF, NX_DT_FP8_E3M4, 0, 64, 0, 2, 2, 1, 32);
	in.src0.size[2] = 16;
	in.src0.size[3] = 16;
	in.src0.step[2] = 2;
	in.src0.step[3] = -64;
	in.src2 = ap(NX_MEM_PSUM, NX_DT_UINT32, 3, 5, 12, 1, 1, 1, 1);
	in.dst2 = ap(NX_MEM_SBUF, NX_DT_INT8, 127, 1, 0xabc, 9, 0, 1, 9);
	return in;
}

/* Decodes a copy of the len-byte record rec with byte off set to val, as NEFF major
 * version `major`: expects rc and, for an error, text in the message. */
static void expect_poked(const uint8_t *rec, size_t len, unsigned major, int off, uint8_t val,
			 int rc, const char *text)
{
	uint8_t copy[NX_INST_EXT_SIZE];
	struct nx_err err = { 0 };
	struct nx_inst out;
	size_t used;

	memcpy(copy, rec, len);
	copy[off] = val;
	assert_int_equal(nx_inst_decode(copy, len, major, &out, &used, "r", &err), rc);
	if (text)
		assert_contains(err.msg, text);
}

static void test_extension(void **state)
{
	struct nx_inst in = extended(), out;
	uint8_t rec[NX_INST_EXT_SIZE + 8];
	struct nx_err err = { 0 };
	size_t used;

	(void)state;
	assert_true(nx_inst_extended(&in));
	assert_int_equal(nx_inst_encode(&in, rec), NX_INST_EXT_SIZE);
	assert_int_equal(rec[3] & 0x80, 0x80);
	assert_int_equal(rec[128], 0x7f);
	assert_int_equal(rec[129], NX_ALU_LOGICAL_SHIFT_RIGHT);
	assert_int_equal(rec[132], 4);
	assert_memory_equal(rec + 136, "\x40\x20\x40\x60", 4);
	assert_memory_equal(rec + 140, "\x00\x00\x1c\xc6", 4); /* -9984.0f */
	assert_memory_equal(rec + 144, "\xf9\xff\xff\xff", 4); /* -7 */
	assert_int_equal(rec[168], NX_MEM_PSUM);        /* src2 */
	assert_int_equal(rec[192 + 2], 127);            /* dst2 start partition */
	assert_int_equal(rec[216 + 16], 16);            /* src0 size[2] */
	assert_memory_equal(rec + 216 + 16 + 12, "\xc0\xff\xff\xff", 4); /* step[3] -64 */
	for (int i = 296; i < (int)NX_INST_EXT_SIZE; i++)
		assert_int_equal(rec[i], 0);
	assert_int_equal(nx_inst_decode(rec, sizeof(rec), 3, &out, &used, "r", &err), 0);
	assert_int_equal(used, NX_INST_EXT_SIZE);
	assert_memory_equal(&in, &out, sizeof(in));

	/* partial, wrong version, bad extension fields */
	assert_int_equal(nx_inst_decode(rec, NX_INST_EXT_SIZE - 1, 3, &out, &used, "r", &err),
			 NX_ECORRUPT);
	assert_contains(err.msg, "r: the extended record is partial (383 of 384 bytes)");
	assert_int_equal(nx_inst_decode(rec, sizeof(rec), 2, &out, &used, "r", &err),
			 NX_EVERSION);
	assert_contains(err.msg, "r: byte 3: flags bit 7 (record extension) needs NEFF major "
				 "version 3 (this file is version 2)");
	static const struct {
		int off;
		uint8_t val;
		const char *text;
	} bad[] = {
		{ 128, 0xff, "byte 128: flags2 0xff set undefined bits 0x80" },
		{ 129, NX_ALU_COUNT, "byte 129: alu1 28 is not defined (0..27)" },
		{ 130, NX_ALU_COUNT, "byte 130: reduce_op 28 is not defined" },
		{ 131, NX_RCMD_COUNT, "byte 131: reduce_cmd 4 is not defined (0..3)" },
		{ 132, 5, "byte 132: axes 5 is not defined (0..4)" },
		{ 134, 1, "byte 134: reserved byte is 0x01" },
		{ 137, 129, "byte 137: tile 129 is more than 128" },
		{ 168, 3, "byte 168: src2 memory 3 is not defined" },
		{ 193, NX_DT_COUNT, "byte 193: dst2 dtype 13 is not defined" },
		{ 383, 1, "byte 383: reserved byte is 0x01" },
	};
	for (size_t i = 0; i < NX_ARRAY_SIZE(bad); i++)
		expect_poked(rec, NX_INST_EXT_SIZE, 3, bad[i].off, bad[i].val, NX_ECORRUPT,
			     bad[i].text);
}

/* A version-2 file may not use the values version 3 added. */
static void test_v2_limits(void **state)
{
	static const struct {
		int off;
		uint8_t val;
		const char *text;
	} v3[] = {
		{ 0, NX_OP_BN_STATS, "byte 0: opcode 14 needs NEFF major version 3" },
		{ 4, NX_ACT_LOG, "byte 4: act_fn 10 needs NEFF major version 3" },
		{ 6, NX_ALU_POW, "byte 6: alu 10 needs NEFF major version 3" },
		{ 41, NX_DT_INT8, "byte 41: dst dtype int8 needs NEFF major version 3" },
	};
	struct nx_inst in = matmul();
	uint8_t rec[NX_INST_EXT_SIZE];

	(void)state;
	nx_inst_encode(&in, rec);
	for (size_t i = 0; i < NX_ARRAY_SIZE(v3); i++) {
		expect_poked(rec, NX_INST_SIZE, 2, v3[i].off, v3[i].val, NX_EVERSION, v3[i].text);
		expect_poked(rec, NX_INST_SIZE, 3, v3[i].off, v3[i].val, 0, NULL);
	}
}

static void fmt(const struct nx_inst *in, const char *want)
{
	struct nx_strbuf sb = NX_STRBUF_INIT;

	nx_inst_format_operands(in, &sb);
	assert_string_equal(nx_strbuf_str(&sb), want);
	nx_strbuf_release(&sb);
}

/* The operand text of the NKI operations: slots by role, 4-D patterns, new fields. */
static void test_operands_nki(void **state)
{
	struct nx_inst in;

	(void)state;
	memset(&in, 0, sizeof(in));
	in.opcode = NX_OP_TENSOR_SCALAR;
	in.engine = NX_ENGINE_VECTOR;
	in.src0 = ap(NX_MEM_SBUF, NX_DT_FP32, 0, 4, 0, 8, 1, 1, 8);
	in.dst = ap(NX_MEM_SBUF, NX_DT_FP32, 0, 4, 32, 8, 1, 1, 8);
	in.alu = NX_ALU_MUL;
	in.imm = 2.0f;
	fmt(&in, "src=fp32@0x0[1,1,8][8,1,4] dst=fp32@0x20[1,1,8][8,1,4] op=mul imm=2");
	in.flags2 = NX_INST2_OP1 | NX_INST2_REVERSE1;
	in.alu1 = NX_ALU_IS_GE;
	in.src2 = ap(NX_MEM_SBUF, NX_DT_FP32, 0, 4, 64, 1, 1, 1, 1);
	fmt(&in, "src=fp32@0x0[1,1,8][8,1,4] operand1=fp32@0x40[1,1,1][1,1,4] "
		 "dst=fp32@0x20[1,1,8][8,1,4] op0=mul operand0=2 op1=is_ge reverse1");

	memset(&in, 0, sizeof(in));
	in.opcode = NX_OP_TENSOR_REDUCE;
	in.src0 = ap(NX_MEM_SBUF, NX_DT_BF16, 0, 2, 0, 2, 3, 1, 2);
	in.src0.size[2] = 4;
	in.src0.step[2] = 6;
	in.dst = ap(NX_MEM_PSUM, NX_DT_FP32, 0, 2, 0, 4, 1, 1, 4);
	in.axes = 2;
	in.flags2 = NX_INST2_NEGATE;
	fmt(&in, "src=bf16@0x0[1,1,2,6][2,3,4,2] dst=fp32@psum:0x0[1,1,4][4,1,2] op=add axes=2 "
		 "negate");

	memset(&in, 0, sizeof(in));
	in.opcode = NX_OP_IOTA;
	in.dst = ap(NX_MEM_SBUF, NX_DT_INT32, 0, 128, 0, 8, 1, 1, 8);
	fmt(&in, "dst=int32@0x0[1,1,8][8,1,128]");
	in.pattern[0] = 1;
	in.param[0] = 5;
	in.param[1] = -8;
	fmt(&in, "dst=int32@0x0[1,1,8][8,1,128] pattern=[1,0] offset=5 channel_multiplier=-8");

	memset(&in, 0, sizeof(in));
	in.opcode = NX_OP_ACTIVATE;
	in.act_fn = NX_ACT_SILU;
	in.imm = 1.0f;
	in.imm1 = 0.5f;
	in.src0 = ap(NX_MEM_PSUM, NX_DT_FP32, 0, 1, 0, 4, 1, 1, 4);
	in.dst = ap(NX_MEM_SBUF, NX_DT_BF16, 0, 1, 0, 4, 1, 1, 4);
	in.dst2 = ap(NX_MEM_SBUF, NX_DT_FP32, 0, 1, 16, 1, 1, 1, 1);
	in.reduce_cmd = NX_RCMD_REDUCE;
	fmt(&in, "src=fp32@psum:0x0[1,1,4][4,1,1] dst=bf16@0x0[1,1,4][4,1,1] "
		 "reduce_res=fp32@0x10[1,1,1][1,1,1] fn=SILU scale=1 bias=0.5 reduce_op=add "
		 "reduce_cmd=reduce");

	memset(&in, 0, sizeof(in));
	in.opcode = NX_OP_MATMUL;
	in.src0 = ap(NX_MEM_SBUF, NX_DT_FP8, 0, 64, 0, 512, 1, 1, 512);
	in.dst = ap(NX_MEM_PSUM, NX_DT_FP32, 0, 64, 0, 512, 1, 1, 512);
	in.perf_mode = 1;
	in.flags2 = NX_INST2_MOV_ONEZERO;
	memcpy(in.tile, "\x00\x40\x40\x40", 4);
	fmt(&in, "src=fp8@0x0[1,1,512][512,1,64] dst=fp32@psum:0x0[1,1,512][512,1,64] "
		 "moving_onezero perf=2x tile_position=0,64 tile_size=64,64 64*64");
}

/* Work of the NKI operations: every source and both outputs count. */
static void test_work_nki(void **state)
{
	struct nx_inst in = extended();
	struct nx_inst_work w;

	(void)state;
	in.src1 = ap(NX_MEM_SBUF, NX_DT_FP32, 0, 64, 0, 1, 1, 1, 1);
	in.dst = ap(NX_MEM_SBUF, NX_DT_BF16, 0, 64, 0, 1024, 1, 1, 1024);
	nx_inst_work(&in, true, &w);
	assert_int_equal(w.elements, 2 * 2 * 16 * 16);
	assert_int_equal(w.partitions, 64);
	assert_int_equal(w.sbuf_read_bytes, 64 * 1024 * 1 + 64 * 4);
	assert_int_equal(w.psum_read_bytes, 5 * 4); /* src2 */
	assert_int_equal(w.sbuf_write_bytes, 64 * 1024 * 2 + 9);
	assert_int_equal(w.raw_flops, 0);

	/* INT8 and the FP8 formats scale like UINT8 and FP8 */
	in = matmul();
	in.src0.dtype = NX_DT_INT8;
	nx_inst_work(&in, false, &w);
	assert_int_equal(w.adjusted_flops, w.raw_flops / 2);
	in.src0.dtype = NX_DT_FP8_E5M2;
	nx_inst_work(&in, true, &w);
	assert_int_equal(w.adjusted_flops, w.raw_flops / 2);
	nx_inst_work(&in, false, &w);
	assert_int_equal(w.adjusted_flops, w.raw_flops);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_names),
		cmocka_unit_test(test_layout),
		cmocka_unit_test(test_roundtrip),
		cmocka_unit_test(test_decode_errors),
		cmocka_unit_test(test_operands_matmul),
		cmocka_unit_test(test_operands_semaphores),
		cmocka_unit_test(test_operands_other),
		cmocka_unit_test(test_work_matmul),
		cmocka_unit_test(test_work_other),
		cmocka_unit_test(test_extension),
		cmocka_unit_test(test_v2_limits),
		cmocka_unit_test(test_operands_nki),
		cmocka_unit_test(test_work_nki),
	};
	return cmocka_run_group_tests_name("isa", tests, NULL, NULL);
}
