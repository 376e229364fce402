/* SPDX-License-Identifier: MIT
 * isa_names.c: the names of the instruction-set enums (engines, element types, opcodes,
 * activation functions, ALU operations, reduce commands, tensor kinds, queue types) as
 * the profiler shows them, and the parsers that accept them and the listing's and NKI's
 * spellings. */
#include "common/compat.h"
#include "neff/isa.h"
#include "neff/neff.h"

#include <string.h>
#include <strings.h>

static const char *const engine_names[NX_ENGINE_COUNT] = {
	"Tensor", "Vector", "Scalar", "GpSimd", "Sync",
};
static const char *const engine_lower[NX_ENGINE_COUNT] = {
	"tensor", "vector", "scalar", "gpsimd", "sync",
};
static const char *const engine_short[NX_ENGINE_COUNT] = { "PE", "DVE", "ACT", "POOL", "SP" };

static const char *const dtype_names[NX_DT_COUNT] = {
	"bf16", "fp16", "fp32", "fp8", "tf32", "int32", "uint8", "int8", "int16", "uint16",
	"uint32", "fp8_e5m2", "fp8_e3m4",
};
const unsigned char nx__dtype_sizes[NX_DT_COUNT] = { 2, 2, 4, 1, 4, 4, 1, 1, 2, 2, 4, 1, 1 };

struct alias {
	const char *name;
	int value;
};
/* Longer spellings (numpy, NKI, XLA) accepted by nx_dtype_parse. */
static const struct alias dtype_alias[] = {
	{ "bfloat16", NX_DT_BF16 }, { "float16", NX_DT_FP16 }, { "half", NX_DT_FP16 },
	{ "float32", NX_DT_FP32 }, { "float", NX_DT_FP32 }, { "fp8_e4m3", NX_DT_FP8 },
	{ "float8_e4m3", NX_DT_FP8 }, { "float8_e4m3fn", NX_DT_FP8 }, { "float8e4", NX_DT_FP8 },
	{ "tfloat32", NX_DT_TF32 }, { "int", NX_DT_INT32 }, { "u8", NX_DT_UINT8 },
	{ "bool", NX_DT_UINT8 }, { "bool_", NX_DT_UINT8 }, { "float8_e5m2", NX_DT_FP8_E5M2 },
	{ "float8e5", NX_DT_FP8_E5M2 }, { "float8_e3m4", NX_DT_FP8_E3M4 },
	{ "float8e3", NX_DT_FP8_E3M4 },
};

static const char *const op_names[NX_OP_COUNT] = {
	"NOP", "LDWEIGHTS", "MATMUL", "TENSOR_TENSOR", "TENSOR_SCALAR", "TENSOR_REDUCE",
	"ACTIVATE", "TENSOR_COPY", "MEMSET", "IOTA", "EVENT_SEMAPHORE", "DMA_DIRECT2D", "NOTIFY",
	"TENSOR_TENSOR_SCAN", "BN_STATS", "BN_AGGR", "RECIPROCAL", "AFFINE_SELECT",
	"SCALAR_TENSOR_TENSOR", "TENSOR_SCALAR_REDUCE", "TRANSPOSE", "TENSOR_COPY_PREDICATED",
	"SELECT", "RANGE_SELECT", "MAX8", "FIND_INDEX8", "MATCH_REPLACE8", "LOCAL_GATHER",
};
/* Listing mnemonics: the enum names, except the DMA trigger. */
static const char *const op_mnemonics[NX_OP_COUNT] = {
	"nop", "ldweights", "matmul", "tensor_tensor", "tensor_scalar", "tensor_reduce",
	"activate", "tensor_copy", "memset", "iota", "event_semaphore", "dma_trigger", "notify",
	"tensor_tensor_scan", "bn_stats", "bn_aggr", "reciprocal", "affine_select",
	"scalar_tensor_tensor", "tensor_scalar_reduce", "transpose", "tensor_copy_predicated",
	"select", "range_select", "max8", "find_index8", "match_replace8", "local_gather",
};

/* Slot roles by opcode (docs/formats/neff.md, "Operand roles"). */
static const struct nx_op_roles roles[NX_OP_COUNT] = {
	[NX_OP_TENSOR_TENSOR] = { "src1", NULL, NULL },
	[NX_OP_TENSOR_SCALAR] = { "operand0", "operand1", NULL },
	[NX_OP_ACTIVATE] = { "bias", "scale", "reduce_res" },
	[NX_OP_TENSOR_TENSOR_SCAN] = { "src1", "initial", NULL },
	[NX_OP_SCALAR_TENSOR_TENSOR] = { "src1", "operand0", NULL },
	[NX_OP_TENSOR_SCALAR_REDUCE] = { "operand0", NULL, "reduce_res" },
	[NX_OP_TENSOR_COPY_PREDICATED] = { NULL, "predicate", NULL },
	[NX_OP_SELECT] = { "src1", "predicate", NULL },
	[NX_OP_RANGE_SELECT] = { "bound0", "bound1", "reduce_res" },
	[NX_OP_FIND_INDEX8] = { "vals", NULL, NULL },
	[NX_OP_MATCH_REPLACE8] = { "vals", NULL, NULL },
	[NX_OP_LOCAL_GATHER] = { "index", NULL, NULL },
};

static const char *const act_names[NX_ACT_COUNT] = {
	"NONE", "IDENTITY", "EXP", "RELU", "GELU", "TANH", "SIGMOID", "RSQRT", "SQUARE", "COPY",
	"LOG", "SQRT", "SIN", "COS", "TAN", "ARCTAN", "SILU", "SILU_DX", "GELU_DX",
	"GELU_APPRX_TANH", "GELU_APPRX_SIGMOID", "SOFTPLUS", "MISH", "ERF", "ERF_DX", "ABS",
	"SIGN", "RECIPROCAL", "NEGATIVE",
};
static const char *const alu_names[NX_ALU_COUNT] = {
	"add", "sub", "mul", "max", "min", "div", "bypass", "abs_max", "abs_min", "mod", "pow",
	"is_equal", "not_equal", "is_gt", "is_ge", "is_lt", "is_le", "logical_and", "logical_or",
	"logical_xor", "logical_not", "bitwise_and", "bitwise_or", "bitwise_xor", "bitwise_not",
	"shift_left", "arith_shift_right", "logical_shift_right",
};
static const struct alias alu_alias[] = {
	{ "subtract", NX_ALU_SUB }, { "multiply", NX_ALU_MUL }, { "mult", NX_ALU_MUL },
	{ "maximum", NX_ALU_MAX }, { "minimum", NX_ALU_MIN }, { "divide", NX_ALU_DIV },
	{ "fmod", NX_ALU_MOD }, { "power", NX_ALU_POW }, { "equal", NX_ALU_IS_EQUAL },
	{ "greater", NX_ALU_IS_GT }, { "greater_equal", NX_ALU_IS_GE }, { "less", NX_ALU_IS_LT },
	{ "less_equal", NX_ALU_IS_LE }, { "invert", NX_ALU_BITWISE_NOT },
	{ "left_shift", NX_ALU_SHIFT_LEFT }, { "arith_shift_left", NX_ALU_SHIFT_LEFT },
	{ "logical_shift_left", NX_ALU_SHIFT_LEFT }, { "right_shift", NX_ALU_ARITH_SHIFT_RIGHT },
};
static const char *const rcmd_names[NX_RCMD_COUNT] = { "idle", "reset", "reduce",
						       "reset_reduce" };
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

static int parse_alias(const struct alias *tab, size_t n, const char *s)
{
	for (size_t i = 0; s && i < n; i++)
		if (!strcasecmp(tab[i].name, s))
			return tab[i].value;
	return -1;
}

/* "nl.exp" -> "exp": NKI's module prefixes. */
static const char *strip_module(const char *s)
{
	if (s && (!strncasecmp(s, "nl.", 3) || !strncasecmp(s, "np.", 3)))
		return s + 3;
	return s;
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

int nx_dtype_parse(const char *s)
{
	int d = parse_in(dtype_names, NX_DT_COUNT, s);

	return d >= 0 ? d : parse_alias(dtype_alias, NX_ARRAY_SIZE(dtype_alias), s);
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

const struct nx_op_roles *nx_op_roles(int opcode)
{
	static const struct nx_op_roles none;

	return opcode >= 0 && opcode < NX_OP_COUNT ? &roles[opcode] : &none;
}

const char *nx_act_fn_name(int fn)
{
	return name_of(act_names, NX_ACT_COUNT, fn);
}

int nx_act_fn_parse(const char *s)
{
	return parse_in(act_names, NX_ACT_COUNT, strip_module(s));
}

const char *nx_alu_name(int alu)
{
	return name_of(alu_names, NX_ALU_COUNT, alu);
}

int nx_alu_parse(const char *s)
{
	int a;

	s = strip_module(s);
	a = parse_in(alu_names, NX_ALU_COUNT, s);
	return a >= 0 ? a : parse_alias(alu_alias, NX_ARRAY_SIZE(alu_alias), s);
}

bool nx_alu_is_compare(int alu)
{
	return alu >= NX_ALU_IS_EQUAL && alu <= NX_ALU_IS_LE;
}

const char *nx_reduce_cmd_name(int cmd)
{
	return name_of(rcmd_names, NX_RCMD_COUNT, cmd);
}

int nx_reduce_cmd_parse(const char *s)
{
	return parse_in(rcmd_names, NX_RCMD_COUNT, s);
}

const char *nx_tensor_kind_name(int kind)
{
	return name_of(tensor_kind_names, (int)NX_ARRAY_SIZE(tensor_kind_names), kind);
}

const char *nx_queue_type_name(int qt)
{
	return name_of(queue_type_names, NX_QT_COUNT, qt);
}
