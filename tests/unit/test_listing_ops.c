/* SPDX-License-Identifier: MIT
 * test_listing_ops.c: the listing syntax of the NKI operations (docs/formats/listing.md):
 * every new opcode and operand assembles into the fields the NEFF documents, survives a
 * NEFF round trip bit for bit (major version 3, old NEFFs stay version 2), and every
 * bad form fails with "FILE:LINE: problem" and no NEFF. Also the new element types, 4-D
 * access patterns, DMA casts and transposes, and `decision` lines. */
#include "common/compat.h"
#include "common/xalloc.h"
#include "kernels/listing.h"
#include "neff/neff.h"

#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
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

/* Six lines of declarations: an instruction after them is on line 7. */
static const char head[] = "kernel k\nsource k.py\ntensor x input bf16 128x512\n"
			   "tensor a input bf16 64x128\ntensor y output fp32 128x512\n"
			   "queue q0 in Sync sem=1\n";

static void assemble(const char *body, struct nx_neff *n)
{
	char *text = nx_xasprintf("%s%s", head, body);
	struct nx_err err = { 0 };

	if (nx_listing_assemble("t.lst", text, strlen(text), n, &err))
		fail_msg("%s", err.msg);
	free(text);
}

/* The only instruction of `body` on `engine`. */
static struct nx_inst one(const char *body, int engine)
{
	struct nx_neff n;
	struct nx_inst in;

	assemble(body, &n);
	assert_int_equal(n.ninst[engine], 1);
	in = n.inst[engine][0];
	nx_neff_release(&n);
	return in;
}

static void bad(const char *body, const char *expect)
{
	char *text = nx_xasprintf("%s%s", head, body);
	struct nx_neff n;
	struct nx_err err = { 0 };

	if (nx_listing_assemble("t.lst", text, strlen(text), &n, &err) == 0)
		fail_msg("'%s' was accepted", body);
	assert_int_equal(err.code, NX_EUSAGE);
	assert_contains(err.msg, expect);
	free(text);
}

static void check_ap(const struct nx_ap *ap, int mem, int dtype, unsigned p0, unsigned np,
		     uint32_t off, uint32_t s0)
{
	assert_int_equal(ap->mem, mem);
	assert_int_equal(ap->dtype, dtype);
	assert_int_equal(ap->start_partition, p0);
	assert_int_equal(nx_ap_partitions(ap), np);
	assert_int_equal(ap->offset, off);
	assert_int_equal(ap->size[0], s0);
}

static void test_opcodes(void **state)
{
	static const struct {
		const char *line;
		int engine, opcode;
	} ok[] = {
		{ "Vector tensor_tensor_scan src=sbuf[0:128]+0:fp32[8] src1=sbuf[0:128]+32:fp32[8] "
		  "dst=sbuf[0:128]+64:fp32[8] op0=mul op1=add", NX_ENGINE_VECTOR,
		  NX_OP_TENSOR_TENSOR_SCAN },
		{ "DVE BN_STATS src=sbuf[0:128]+0:fp32[512] dst=sbuf[0:128]+2048:fp32[6]",
		  NX_ENGINE_VECTOR, NX_OP_BN_STATS },
		{ "Vector bn_aggr src=sbuf[0:128]+0:fp32[12] dst=sbuf[0:128]+48:fp32[2]",
		  NX_ENGINE_VECTOR, NX_OP_BN_AGGR },
		{ "GpSimd reciprocal src=sbuf[0:1]+0:fp32[4] dst=sbuf[0:1]+16:fp32[4]",
		  NX_ENGINE_GPSIMD, NX_OP_RECIPROCAL },
		{ "POOL affine_select src=sbuf[0:128]+0:fp32[128] dst=sbuf[0:128]+512:fp32[128] "
		  "cmp_op=greater_equal", NX_ENGINE_GPSIMD, NX_OP_AFFINE_SELECT },
		{ "Vector scalar_tensor_tensor src=sbuf[0:2]+0:bf16[4] src1=sbuf[0:2]+8:bf16[4] "
		  "dst=sbuf[0:2]+16:bf16[4] op0=mul operand0=3 op1=max", NX_ENGINE_VECTOR,
		  NX_OP_SCALAR_TENSOR_TENSOR },
		{ "Vector tensor_scalar_reduce src=sbuf[0:2]+0:fp32[4] dst=sbuf[0:2]+16:fp32[4] "
		  "op0=add operand0=1 reduce_op=max reduce_res=sbuf[0:2]+32:fp32[1]",
		  NX_ENGINE_VECTOR, NX_OP_TENSOR_SCALAR_REDUCE },
		{ "Vector transpose src=sbuf[0:32]+0:bf16[16] dst=sbuf[0:16]+64:bf16[32]",
		  NX_ENGINE_VECTOR, NX_OP_TRANSPOSE },
		{ "Vector tensor_copy_predicated src=sbuf[0:2]+0:fp32[4] dst=sbuf[0:2]+16:fp32[4] "
		  "predicate=sbuf[0:2]+32:uint8[4]", NX_ENGINE_VECTOR,
		  NX_OP_TENSOR_COPY_PREDICATED },
		{ "GpSimd select src=sbuf[0:2]+0:fp32[4] src1=sbuf[0:2]+16:fp32[4] "
		  "dst=sbuf[0:2]+32:fp32[4] predicate=sbuf[0:2]+48:uint8[4]", NX_ENGINE_GPSIMD,
		  NX_OP_SELECT },
		{ "Vector range_select src=sbuf[0:2]+0:fp32[4] dst=sbuf[0:2]+16:fp32[4] "
		  "comp_op0=is_ge comp_op1=less bound0=sbuf[0:2]+32:fp32[1] "
		  "bound1=sbuf[0:2]+36:fp32[1]", NX_ENGINE_VECTOR, NX_OP_RANGE_SELECT },
		{ "Vector max8 src=sbuf[0:2]+0:fp32[16] dst=sbuf[0:2]+64:fp32[8]", NX_ENGINE_VECTOR,
		  NX_OP_MAX8 },
		{ "Vector nc_find_index8 src=sbuf[0:2]+0:fp32[16] vals=sbuf[0:2]+64:fp32[8] "
		  "dst=sbuf[0:2]+96:uint32[8]", -1, -1 }, /* NKI name: not a mnemonic */
		{ "Vector find_index8 src=sbuf[0:2]+0:fp32[16] vals=sbuf[0:2]+64:fp32[8] "
		  "dst=sbuf[0:2]+96:uint32[8]", NX_ENGINE_VECTOR, NX_OP_FIND_INDEX8 },
		{ "Vector MATCH_REPLACE8 src=sbuf[0:2]+0:fp32[16] vals=sbuf[0:2]+64:fp32[8] "
		  "dst=sbuf[0:2]+96:fp32[16] imm=-inf", NX_ENGINE_VECTOR, NX_OP_MATCH_REPLACE8 },
		{ "GpSimd local_gather src=sbuf[0:16]+0:fp32[16] index=sbuf[0:16]+64:uint16[4] "
		  "dst=sbuf[0:16]+96:fp32[8] num_elem_per_idx=2", NX_ENGINE_GPSIMD,
		  NX_OP_LOCAL_GATHER },
	};
	(void)state;
	for (size_t i = 0; i < NX_ARRAY_SIZE(ok); i++) {
		char *body = nx_xasprintf("@9 %s\n", ok[i].line);

		if (ok[i].engine < 0) {
			bad(body, "t.lst:7: unknown opcode 'nc_find_index8'");
		} else {
			struct nx_inst in = one(body, ok[i].engine);

			assert_int_equal(in.opcode, ok[i].opcode);
			assert_int_equal(in.engine, ok[i].engine);
			assert_true(nx_inst_extended(&in) || ok[i].opcode >= NX_OP_COUNT_V2);
		}
		free(body);
	}
}

/* The operand slots and fields each keyword fills (neff.md, "Operand roles"). */
static void test_operand_roles(void **state)
{
	struct nx_inst in;

	(void)state;
	in = one("Vector tensor_scalar src=sbuf[0:128]+0:fp32[512] dst=sbuf[0:128]+2048:fp32[512] "
		 "op0=nl.subtract operand0=sbuf[0:128]+8192:fp32[1] reverse0 op1=mult "
		 "operand1=0.125 reverse1\n", NX_ENGINE_VECTOR);
	assert_int_equal(in.alu, NX_ALU_SUB);
	assert_int_equal(in.alu1, NX_ALU_MUL);
	assert_int_equal(in.flags2, NX_INST2_OP1 | NX_INST2_REVERSE0 | NX_INST2_REVERSE1);
	check_ap(&in.src1, NX_MEM_SBUF, NX_DT_FP32, 0, 128, 8192, 1);
	assert_true(in.imm1 == 0.125f);
	assert_int_equal(in.src2.mem, NX_MEM_NONE);

	/* the single-op form is the old record: no extension */
	in = one("Vector tensor_scalar src=sbuf[0:1]+0:fp32[4] dst=sbuf[0:1]+16:fp32[4] alu=mul "
		 "imm=2\n", NX_ENGINE_VECTOR);
	assert_false(nx_inst_extended(&in));
	assert_true(in.imm == 2.0f);

	in = one("Scalar activate act=nl.silu src=sbuf[0:4]+0:fp32[8] dst=sbuf[0:4]+32:bf16[8] "
		 "bias=-1.5 scale=sbuf[0:4]+64:fp32[1] reduce_op=max "
		 "reduce_res=sbuf[0:4]+68:fp32[1]\n", NX_ENGINE_SCALAR);
	assert_int_equal(in.act_fn, NX_ACT_SILU);
	assert_true(in.imm1 == -1.5f);
	check_ap(&in.src2, NX_MEM_SBUF, NX_DT_FP32, 0, 4, 64, 1);
	check_ap(&in.dst2, NX_MEM_SBUF, NX_DT_FP32, 0, 4, 68, 1);
	assert_int_equal(in.reduce_op, NX_ALU_MAX);
	assert_int_equal(in.reduce_cmd, NX_RCMD_RESET_REDUCE);

	/* defaults: identity, scale 1 */
	in = one("ACT activate src=sbuf[0:4]+0:fp32[8] dst=sbuf[0:4]+32:fp32[8]\n",
		 NX_ENGINE_SCALAR);
	assert_int_equal(in.act_fn, NX_ACT_IDENTITY);
	assert_true(in.imm == 1.0f);

	in = one("Vector tensor_tensor_scan src=sbuf[0:4]+0:fp32[8] src1=sbuf[0:4]+32:fp32[8] "
		 "dst=sbuf[0:4]+64:fp32[8] op0=mul op1=add initial=sbuf[0:4]+96:fp32[1]\n",
		 NX_ENGINE_VECTOR);
	assert_int_equal(in.alu1, NX_ALU_ADD);
	check_ap(&in.src2, NX_MEM_SBUF, NX_DT_FP32, 0, 4, 96, 1);
	assert_int_equal(in.flags2, 0);

	in = one("Vector scalar_tensor_tensor src=sbuf[0:4]+0:fp32[8] src1=sbuf[0:4]+32:fp32[8] "
		 "dst=sbuf[0:4]+64:fp32[8] op0=mul operand0=sbuf[0:4]+96:fp32[1] op1=add\n",
		 NX_ENGINE_VECTOR);
	check_ap(&in.src1, NX_MEM_SBUF, NX_DT_FP32, 0, 4, 32, 8);
	check_ap(&in.src2, NX_MEM_SBUF, NX_DT_FP32, 0, 4, 96, 1);

	in = one("Vector range_select src=sbuf[0:2]+0:fp32[4] dst=sbuf[0:2]+16:fp32[4] "
		 "comp_op0=is_gt comp_op1=is_le bound0=sbuf[0:2]+32:fp32[1] "
		 "bound1=sbuf[0:2]+36:fp32[1] range_start=-3 on_false_value=-9984 "
		 "reduce_op=max reduce_res=sbuf[0:2]+40:fp32[1] reduce_cmd=idle\n",
		 NX_ENGINE_VECTOR);
	assert_int_equal(in.alu, NX_ALU_IS_GT);
	assert_int_equal(in.alu1, NX_ALU_IS_LE);
	assert_int_equal(in.param[0], -3);
	assert_true(in.imm1 == -9984.0f);
	assert_int_equal(in.reduce_cmd, NX_RCMD_IDLE);
	check_ap(&in.src1, NX_MEM_SBUF, NX_DT_FP32, 0, 2, 32, 1);
	check_ap(&in.src2, NX_MEM_SBUF, NX_DT_FP32, 0, 2, 36, 1);

	in = one("GpSimd iota dst=sbuf[0:128]+0:int32[4,8] pattern={1,-4} offset=7 "
		 "channel_multiplier=32\n", NX_ENGINE_GPSIMD);
	assert_int_equal(in.pattern[0], 1);
	assert_int_equal(in.pattern[1], -4);
	assert_int_equal(in.param[0], 7);
	assert_int_equal(in.param[1], 32);

	in = one("GpSimd affine_select src=sbuf[0:8]+0:fp32[16] dst=sbuf[0:8]+64:fp32[16] "
		 "pattern={-1} offset=2 channel_multiplier=1 cmp_op=is_ge on_false_value=-1\n",
		 NX_ENGINE_GPSIMD);
	assert_int_equal(in.alu, NX_ALU_IS_GE);
	assert_true(in.imm1 == -1.0f);

	in = one("Vector tensor_reduce src=sbuf[0:64]+0:fp32[2,2,16,16]{1,32,2,64} "
		 "dst=sbuf[0:64]+4096:fp32[16,16] op=max axes=2 negate keepdims\n",
		 NX_ENGINE_VECTOR);
	assert_int_equal(in.axes, 2);
	assert_int_equal(in.flags2, NX_INST2_NEGATE | NX_INST2_KEEPDIMS);
	assert_int_equal(in.src0.size[3], 16);
	assert_int_equal(in.src0.step[3], 64);
	assert_int_equal(nx_ap_free_elems(&in.src0), 1024);
	assert_int_equal(nx_ap_ndim(&in.src0), 4);

	in = one("Vector tensor_copy_predicated src=sbuf[0:2]+0:fp32[4] dst=sbuf[0:2]+16:fp32[4] "
		 "predicate=sbuf[0:2]+32:bool[4] reverse0\n", NX_ENGINE_VECTOR);
	check_ap(&in.src2, NX_MEM_SBUF, NX_DT_UINT8, 0, 2, 32, 4);
	assert_int_equal(in.flags2, NX_INST2_REVERSE0);

	in = one("GpSimd local_gather src=sbuf[0:16]+0:fp32[16] index=sbuf[0:16]+64:uint16[4] "
		 "dst=sbuf[0:16]+96:fp32[8] num_elem_per_idx=2\n", NX_ENGINE_GPSIMD);
	assert_int_equal(in.param[0], 2);
	check_ap(&in.src1, NX_MEM_SBUF, NX_DT_UINT16, 0, 16, 64, 4);

	in = one("Tensor ldweights src=sbuf[0:64]+0:fp8_e5m2[64] stationary_onezero "
		 "tile_position=64,0 tile_size=64,64\n", NX_ENGINE_TENSOR);
	assert_int_equal(in.flags2, NX_INST2_STAT_ONEZERO);
	assert_memory_equal(in.tile, "\x40\x00\x40\x40", 4);
	assert_int_equal(in.src0.dtype, NX_DT_FP8_E5M2);
	in = one("Tensor matmul src=sbuf[0:64]+0:fp8[512] dst=psum[0:64]+0:fp32[512] perf=4x "
		 "moving_onezero acc transpose\n", NX_ENGINE_TENSOR);
	assert_int_equal(in.perf_mode, 2);
	assert_int_equal(in.flags, NX_INST_ACCUMULATE | NX_INST_TRANSPOSE);
	assert_int_equal(in.flags2, NX_INST2_MOV_ONEZERO);
}

static void test_dtypes(void **state)
{
	static const struct {
		const char *name;
		int dt;
		unsigned size;
	} t[] = {
		{ "int8", NX_DT_INT8, 1 }, { "int16", NX_DT_INT16, 2 },
		{ "uint16", NX_DT_UINT16, 2 }, { "uint32", NX_DT_UINT32, 4 },
		{ "float8_e5m2", NX_DT_FP8_E5M2, 1 }, { "float8_e3m4", NX_DT_FP8_E3M4, 1 },
		{ "float8_e4m3fn", NX_DT_FP8, 1 }, { "bool_", NX_DT_UINT8, 1 },
	};
	(void)state;
	for (size_t i = 0; i < NX_ARRAY_SIZE(t); i++) {
		char *body = nx_xasprintf("Vector tensor_copy src=sbuf[0:1]+0:%s[4] "
					  "dst=sbuf[0:1]+16:fp32[4]\n", t[i].name);
		struct nx_inst in = one(body, NX_ENGINE_VECTOR);

		assert_int_equal(in.src0.dtype, t[i].dt);
		assert_int_equal(nx_dtype_size(t[i].dt), t[i].size);
		free(body);
	}
	assert_int_equal(nx_dtype_parse("float4_e2m1fn_x4"), -1);
}

/* Every activation function and ALU operation of the docs parses and prints back. */
static void test_names(void **state)
{
	static const char *const acts[] = {
		"identity", "copy", "exp", "log", "relu", "gelu", "gelu_dx", "gelu_apprx_tanh",
		"gelu_apprx_sigmoid", "silu", "silu_dx", "tanh", "sigmoid", "sqrt", "rsqrt",
		"square", "reciprocal", "softplus", "mish", "erf", "erf_dx", "abs", "sign", "sin",
		"cos", "tan", "arctan", "negative",
	};
	static const char *const alus[] = {
		"add", "sub", "mul", "max", "min", "div", "bypass", "abs_max", "abs_min", "mod",
		"pow", "is_equal", "not_equal", "is_gt", "is_ge", "is_lt", "is_le", "logical_and",
		"logical_or", "logical_xor", "logical_not", "bitwise_and", "bitwise_or",
		"bitwise_xor", "bitwise_not", "shift_left", "arith_shift_right",
		"logical_shift_right",
	};
	(void)state;
	for (size_t i = 0; i < NX_ARRAY_SIZE(acts); i++) {
		int f = nx_act_fn_parse(acts[i]);

		assert_true(f > 0);
		assert_int_equal(nx_act_fn_parse(nx_act_fn_name(f)), f);
	}
	for (size_t i = 0; i < NX_ARRAY_SIZE(alus); i++) {
		assert_int_equal(nx_alu_parse(alus[i]), (int)i);
		assert_string_equal(nx_alu_name((int)i), alus[i]);
	}
	assert_int_equal(nx_alu_parse("np.power"), NX_ALU_POW);
	assert_int_equal(nx_alu_parse("right_shift"), NX_ALU_ARITH_SHIFT_RIGHT);
	assert_int_equal(nx_alu_parse("invert"), NX_ALU_BITWISE_NOT);
	assert_int_equal(nx_alu_parse("less_equal"), NX_ALU_IS_LE);
	assert_int_equal(nx_alu_parse("frob"), -1);
	assert_string_equal(nx_act_fn_name(NX_ACT_GELU_APPRX_TANH), "GELU_APPRX_TANH");
}

static void test_dma(void **state)
{
	struct nx_neff n;
	const struct nx_dma_desc *d;

	(void)state;
	assemble("block b q0\n"
		 "  desc x[0:128, 0:512] -> sbuf[0:128]+0:fp32\n"
		 "  desc a[0:64, 0:128] -> sbuf[0:128]+4096 transpose\n"
		 "  desc sbuf[0:128]+0:fp32[512] -> y[0:128, 0:512]\n"
		 "  desc sbuf[0:128]+0:bf16[512] -> y[0:128, 0:512]\n"
		 "Sync dma_trigger block=b\n", &n);
	d = n.blocks[0].desc;
	assert_true(d[0].cast);
	assert_int_equal(d[0].dtype, NX_DT_BF16);
	assert_int_equal(d[0].to_dtype, NX_DT_FP32);
	assert_int_equal(d[0].bytes, 128 * 512 * 2);
	assert_false(d[1].cast);
	assert_true(d[1].transpose);
	assert_int_equal(d[1].to_sizes[0], 128);
	assert_int_equal(d[1].to_sizes[1], 64);
	assert_false(d[2].cast);
	assert_true(d[3].cast); /* bf16 in SBUF stored into an fp32 tensor */
	assert_int_equal(d[3].to_dtype, NX_DT_FP32);
	nx_neff_release(&n);

	bad("block b q0\n  desc y[0:64, 0:128] -> sbuf[0:128]+0 transpose\n",
	    "t.lst:8: a DMA transpose moves 2-byte elements without a cast (here fp32 to fp32)");
	bad("block b q0\n  desc a[0:64, 0:128] -> sbuf[0:64]+0 transpose\n",
	    "t.lst:8: the last HBM dimension (128) must match the 64 partitions");
	bad("block b q0\n  desc x[0:128, 0:512] -> sbuf[0:128]+0:fp33\n", "unknown dtype 'fp33'");
	bad("block b q0\n  desc x[0:128, 0:512] -> sbuf[0:128]+0:fp32[\n",
	    "expected :dtype[N] or :dtype");
}

static void test_decision_lines(void **state)
{
	struct nx_neff n;
	const struct nx_dbg_decision *d;

	(void)state;
	assemble("@12 decision alloc buffer=q mem=sbuf bytes=1024\n"
		 "decision reorder\n"
		 "@lib/x.py:3 decision queue call=nl.load queue=qSyncIO0 note=a=b\n", &n);
	assert_int_equal(n.dbg.ndecisions, 3);
	d = n.dbg.decisions;
	assert_string_equal(d[0].kind, "alloc");
	assert_string_equal(d[0].file, "k.py");
	assert_int_equal(d[0].line, 12);
	assert_int_equal(d[0].nargs, 3);
	assert_string_equal(d[0].keys[2], "bytes");
	assert_string_equal(d[0].values[2], "1024");
	assert_null(d[1].file);
	assert_int_equal(d[1].line, -1);
	assert_int_equal(d[1].nargs, 0);
	assert_string_equal(d[2].file, "lib/x.py");
	assert_string_equal(d[2].values[2], "a=b");
	assert_int_equal(n.dbg.ninsts, 0); /* decisions make no debug instructions */
	nx_neff_release(&n);

	bad("decision\n", "t.lst:7: expected: decision KIND KEY=VALUE");
	bad("decision 9lives\n", "t.lst:7: bad decision kind '9lives'");
	bad("decision alloc bytes\n", "t.lst:7: bad decision argument 'bytes': expected KEY=VALUE");
	bad("decision alloc =3\n", "bad decision argument '=3'");
	bad("@x decision alloc\n", "t.lst:7: bad source line 'x'");
}

/* Assemble, write, read: every field identical; the version follows the content. */
static void test_roundtrip(void **state)
{
	struct nx_neff a, b;
	struct nx_err err = { 0 };
	uint8_t *data;
	size_t len;

	(void)state;
	assemble("block b q0\n  desc x[0:128, 0:512] -> sbuf[0:128]+0:fp32\n"
		 "@5 decision alloc buffer=q bytes=1024\n"
		 "@9 Sync dma_trigger block=b\n"
		 "@10 Vector tensor_scalar src=sbuf[0:128]+0:fp32[512] "
		 "dst=sbuf[0:128]+2048:fp32[512] op0=sub operand0=sbuf[0:128]+8192:fp32[1] "
		 "op1=mul operand1=0.125\n"
		 "@11 Scalar activate act=erf src=sbuf[0:4]+0:fp32[8] dst=sbuf[0:4]+32:bf16[8] "
		 "bias=sbuf[0:4]+64:fp32[1] scale=2 reduce_op=add reduce_res=sbuf[0:4]+68:fp32[1]\n"
		 "@12 GpSimd iota dst=sbuf[0:128]+0:int32[2,2,2,2]{8,4,2,1} pattern={1,2,3,4} "
		 "offset=-7 channel_multiplier=16\n"
		 "@13 Vector tensor_copy src=sbuf[0:128]+0:fp32[512] "
		 "dst=sbuf[0:128]+2048:fp32[512]\n",
		 &a);
	if (nx_neff_write_mem(&a, &data, &len, &err) ||
	    nx_neff_read_mem("rt.neff", data, len, &b, &err))
		fail_msg("%s", err.msg);
	assert_int_equal(b.hdr.major_version, 3);
	for (int e = 0; e < NX_ENGINE_COUNT; e++) {
		assert_int_equal(b.ninst[e], a.ninst[e]);
		if (a.ninst[e])
			assert_memory_equal(b.inst[e], a.inst[e], a.ninst[e] * sizeof(*a.inst[e]));
	}
	assert_true(b.blocks[0].desc[0].cast);
	assert_int_equal(b.blocks[0].desc[0].to_dtype, NX_DT_FP32);
	assert_int_equal(b.dbg.ndecisions, 1);
	assert_string_equal(b.dbg.decisions[0].values[1], "1024");
	assert_int_equal(b.dbg.decisions[0].line, 5);
	free(data);
	nx_neff_release(&a);
	nx_neff_release(&b);

	/* a version-3 opcode, activation function or dtype in a base record, or a tensor of a
	 * version-3 dtype, needs version 3 too */
	static const char *const v3[] = {
		"@9 Vector reciprocal src=sbuf[0:1]+0:fp32[4] dst=sbuf[0:1]+16:fp32[4]\n",
		"@9 Scalar activate act=silu src=sbuf[0:1]+0:fp32[4] dst=sbuf[0:1]+16:fp32[4]\n",
		"@9 Vector tensor_copy src=sbuf[0:1]+0:int8[4] dst=sbuf[0:1]+16:fp32[4]\n",
		("@9 Vector tensor_tensor src=sbuf[0:1]+0:fp32[4] src1=sbuf[0:1]+0:fp32[4] "
		 "dst=sbuf[0:1]+16:fp32[4] alu=pow\n"),
		"tensor q input int16 4x4\n",
	};
	for (size_t i = 0; i < NX_ARRAY_SIZE(v3); i++) {
		assemble(v3[i], &a);
		if (nx_neff_write_mem(&a, &data, &len, &err) ||
		    nx_neff_read_mem("rt.neff", data, len, &b, &err))
			fail_msg("%s: %s", v3[i], err.msg);
		assert_int_equal(b.hdr.major_version, 3);
		free(data);
		nx_neff_release(&a);
		nx_neff_release(&b);
	}

	/* without the newer features the NEFF stays major version 2, 128-byte records */
	assemble("@9 Vector tensor_copy src=sbuf[0:128]+0:fp32[512] "
		 "dst=sbuf[0:128]+2048:fp32[512]\n", &a);
	if (nx_neff_write_mem(&a, &data, &len, &err) ||
	    nx_neff_read_mem("rt.neff", data, len, &b, &err))
		fail_msg("%s", err.msg);
	assert_int_equal(b.hdr.major_version, 2);
	free(data);
	nx_neff_release(&a);
	nx_neff_release(&b);
}

static void test_bad_operands(void **state)
{
	(void)state;
	bad("@9 Vector tensor_copy src=sbuf[0:1]+0:fp32[4] dst=sbuf[0:1]+16:fp32[4] imm=3\n",
	    "t.lst:7: TENSOR_COPY takes no 'imm='");
	bad("Vector tensor_copy src=sbuf[0:1]+0:fp32[4] dst=sbuf[0:1]+16:fp32[4] negate\n",
	    "TENSOR_COPY takes no 'negate'");
	bad("Vector bn_aggr src=sbuf[0:1]+0:fp32[6]\n", "t.lst:7: BN_AGGR needs dst=");
	bad("Vector tensor_tensor src=sbuf[0:1]+0:fp32[4] src1=sbuf[0:1]+0:fp32[4] "
	    "dst=sbuf[0:1]+16:fp32[4]\n", "TENSOR_TENSOR needs alu=");
	bad("Vector tensor_scalar src=sbuf[0:1]+0:fp32[4] dst=sbuf[0:1]+16:fp32[4] alu=add "
	    "alu=mul\n", "'alu' is given twice");
	bad("Vector tensor_scalar src=sbuf[0:1]+0:fp32[4] dst=sbuf[0:1]+16:fp32[4] alu=add "
	    "imm=1 operand0=2\n", "imm= and operand0= give the same value");
	bad("Vector tensor_scalar src=sbuf[0:1]+0:fp32[4] dst=sbuf[0:1]+16:fp32[4] alu=add "
	    "op1=mul\n", "op1= and operand1= go together");
	bad("Vector tensor_scalar src=sbuf[0:1]+0:fp32[4] dst=sbuf[0:1]+16:fp32[4] alu=add "
	    "reverse1\n", "reverse1 needs op1=");
	bad("Vector tensor_scalar src=sbuf[0:1]+0:fp32[4] dst=sbuf[0:1]+16:fp32[4] alu=frob\n",
	    "unknown ALU operation 'frob' in alu=");
	bad("Vector tensor_scalar src=sbuf[0:1]+0:fp32[4] dst=sbuf[0:1]+16:fp32[4] alu=add "
	    "operand0=two\n", "bad operand0 'two': expected a number or an access pattern");
	bad("Vector tensor_scalar src=sbuf[0:1]+0:fp32[4] dst=sbuf[0:1]+16:fp32[4] alu=add "
	    "imm=sbuf[0:1]+0:fp32[1]\n", "TENSOR_SCALAR takes a number for imm=, not an access");
	bad("Scalar activate src=sbuf[0:1]+0:fp32[4] dst=sbuf[0:1]+16:fp32[4] act=wobble\n",
	    "unknown activation function 'wobble'");
	bad("Scalar activate src=sbuf[0:1]+0:fp32[4] dst=sbuf[0:1]+16:fp32[4] reduce_op=add\n",
	    "reduce_op= and reduce_res= go together");
	bad("Scalar activate src=sbuf[0:1]+0:fp32[4] dst=sbuf[0:1]+16:fp32[4] reduce_cmd=later\n",
	    "bad reduce_cmd 'later' (idle, reset, reduce, reset_reduce)");
	bad("Scalar activate src=sbuf[0:1]+0:fp32[4] dst=sbuf[0:1]+16:fp32[4] imm=2 scale=3\n",
	    "imm= and scale= give the same value");
	bad("GpSimd affine_select src=sbuf[0:1]+0:fp32[4] dst=sbuf[0:1]+16:fp32[4] cmp_op=add\n",
	    "cmp_op=add is not a comparison");
	bad("GpSimd affine_select src=sbuf[0:1]+0:fp32[4] dst=sbuf[0:1]+16:fp32[4] cmp_op=is_ge "
	    "on_false_value=sbuf[0:1]+0:fp32[1]\n", "bad on_false_value");
	bad("GpSimd iota dst=sbuf[0:1]+0:int32[4] pattern={1,2,3}\n",
	    "pattern= has 3 steps but dst has 2 free dimensions");
	bad("GpSimd iota dst=sbuf[0:1]+0:int32[4] pattern={1,2,3,4,5}\n", "bad pattern");
	bad("GpSimd iota dst=sbuf[0:1]+0:int32[4] pattern=1\n", "bad pattern '1'");
	bad("GpSimd iota dst=sbuf[0:1]+0:int32[4] offset=1.5\n",
	    "bad offset '1.5': expected an integer");
	bad("Vector tensor_reduce src=sbuf[0:1]+0:fp32[4,4] dst=sbuf[0:1]+64:fp32[4] alu=add "
	    "axes=3\n", "axes=3 but src has 2 free dimensions");
	bad("Vector tensor_reduce src=sbuf[0:1]+0:fp32[4] dst=sbuf[0:1]+64:fp32[1] alu=add "
	    "axes=5\n", "bad axes '5': expected an integer 1..4");
	bad("Vector tensor_reduce src=sbuf[0:1]+0:fp32[4] dst=sbuf[0:1]+64:fp32[1] alu=add "
	    "negate=1\n", "'negate=1' takes no value: write 'negate'");
	bad("Vector tensor_copy src dst=sbuf[0:1]+64:fp32[1]\n",
	    "operand 'src' needs a value: src=...");
	bad("Tensor matmul src=sbuf[0:1]+0:fp8[4] dst=psum[0:1]+0:fp32[4] tile_size=256,1\n",
	    "bad tile_size '256,1': expected ROW,COLUMN (0..128 each)");
	bad("Tensor matmul src=sbuf[0:1]+0:fp8[4] dst=psum[0:1]+0:fp32[4] perf=3x\n",
	    "bad performance mode '3x'");
	bad("Vector find_index8 src=sbuf[0:1]+0:fp32[16] dst=sbuf[0:1]+64:uint32[8]\n",
	    "FIND_INDEX8 needs vals=");
	bad("Vector select src=sbuf[0:1]+0:fp32[4] src1=sbuf[0:1]+16:fp32[4] "
	    "dst=sbuf[0:1]+32:fp32[4] vals=sbuf[0:1]+48:fp32[8] predicate=sbuf[0:1]+0:uint8[4]\n",
	    "SELECT takes no 'vals='");
	bad("GpSimd local_gather src=sbuf[0:1]+0:fp32[16] index=sbuf[0:1]+64:uint16[4] "
	    "dst=sbuf[0:1]+96:fp32[4] num_elem_per_idx=0\n", "bad num_elem_per_idx '0'");
	/* access patterns */
	bad("Vector tensor_copy src=sbuf[0:1]+0:fp32[1,2,3,4,5] dst=sbuf[0:1]+0:fp32[4]\n",
	    "expected [size0,...] (1 to 4 sizes, innermost first)");
	bad("Vector tensor_copy src=sbuf[0:1]+0:fp32[2,2,2]{1,2} dst=sbuf[0:1]+0:fp32[8]\n",
	    "expected {step0,...} with one step per size (3)");
	bad("Vector tensor_copy src=sbuf[0:1]+0:fp32[2,0] dst=sbuf[0:1]+0:fp32[8]\n",
	    "sizes must be 1..2^32-1");
	bad("Vector tensor_copy src=sbuf[0:1]+0:fp32[2]{1,2,3} dst=sbuf[0:1]+0:fp32[8]\n",
	    "one step per size (1)");
	bad("Vector tensor_copy src=sbuf[0:1]+0:fp32[2,2]{1,4294967296} dst=sbuf[0:1]+0:fp32[8]\n",
	    "step 4294967296 is out of range");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_opcodes),      cmocka_unit_test(test_operand_roles),
		cmocka_unit_test(test_dtypes),       cmocka_unit_test(test_names),
		cmocka_unit_test(test_dma),          cmocka_unit_test(test_decision_lines),
		cmocka_unit_test(test_roundtrip),    cmocka_unit_test(test_bad_operands),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
