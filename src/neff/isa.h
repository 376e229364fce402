/* SPDX-License-Identifier: MIT
 * isa.h: our NeuronCore instruction set as stored in a NEFF.
 *
 * The real engine instruction binaries are not public, so the project defines its own
 * encoding (docs/formats/neff.md, "Instruction streams"). Each engine's program is a
 * file sg00/<Engine>.bin of 128-byte records, each followed by a 256-byte extension
 * when it needs one (NEFF major version 3); an instruction's pc is its index in that
 * file (Instruction.pc is the per-engine index). The same decoded struct feeds the
 * simulator (what to execute) and the ingester (opcode, operands and source location
 * of every executed instruction). */
#ifndef NX_NEFF_ISA_H
#define NX_NEFF_ISA_H

#include "common/compat.h"
#include "common/err.h"
#include "common/strbuf.h"

/* A record is NX_INST_SIZE bytes, or NX_INST_EXT_SIZE (the base record and its
 * extension) when it uses a field the base record lacks (docs/formats/neff.md). */
#define NX_INST_SIZE 128u
#define NX_INST_EXT_SIZE 384u
#define NX_NUM_PARTITIONS 128u
#define NX_NUM_SEMAPHORES 256u
#define NX_AP_DIMS 4u

/* Compute engines, in the order used by every per-engine array in the project. */
enum nx_engine {
	NX_ENGINE_TENSOR = 0, /* PE: LDWEIGHTS/MATMUL on the 128x128 systolic array */
	NX_ENGINE_VECTOR = 1, /* DVE */
	NX_ENGINE_SCALAR = 2, /* ACT: activation functions */
	NX_ENGINE_GPSIMD = 3, /* POOL */
	NX_ENGINE_SYNC = 4,   /* SP: queue triggers and semaphores */
	NX_ENGINE_COUNT = 5,
};

/* "Tensor", "Vector", "Scalar", "GpSimd", "Sync": Instruction.engine spelling. */
const char *nx_engine_name(int engine);
/* "tensor", "vector", "scalar", "gpsimd", "sync": ActiveTime/OpcodeSummary spelling. */
const char *nx_engine_lower(int engine);
/* Accepts either spelling (any case) and the short names PE, DVE, ACT, POOL, SP;
 * returns the engine or -1. */
int nx_engine_parse(const char *s);

enum nx_dtype {
	NX_DT_BF16 = 0,
	NX_DT_FP16 = 1,
	NX_DT_FP32 = 2,
	NX_DT_FP8 = 3, /* fp8 e4m3 */
	NX_DT_TF32 = 4,
	NX_DT_INT32 = 5,
	NX_DT_UINT8 = 6,
	NX_DT_INT8 = 7,
	NX_DT_INT16 = 8,
	NX_DT_UINT16 = 9,
	NX_DT_UINT32 = 10,
	NX_DT_FP8_E5M2 = 11,
	NX_DT_FP8_E3M4 = 12,
	NX_DT_COUNT = 13,
};
/* The dtypes of NEFF major version 2 and earlier: bf16 .. uint8. */
#define NX_DT_COUNT_V2 7
/* Short names used in operand strings and listings: bf16 fp16 fp32 fp8 tf32 int32 uint8
 * int8 int16 uint16 uint32 fp8_e5m2 fp8_e3m4. */
const char *nx_dtype_name(int dtype);
extern const unsigned char nx__dtype_sizes[NX_DT_COUNT]; /* isa_names.c */
/* Bytes per element, 0 for an unknown dtype (inline: the simulator asks per operand). */
static inline unsigned nx_dtype_size(int dtype)
{
	return dtype >= 0 && dtype < NX_DT_COUNT ? nx__dtype_sizes[dtype] : 0;
}
int nx_dtype_parse(const char *s); /* -1 when unknown; also accepts "bfloat16", "float32" ... */

enum nx_mem {
	NX_MEM_NONE = 0,
	NX_MEM_SBUF = 1,
	NX_MEM_PSUM = 2,
};

enum nx_opcode {
	NX_OP_NOP = 0,
	NX_OP_LDWEIGHTS = 1,       /* Tensor: load the stationary operand (src0: K partitions x M) */
	NX_OP_MATMUL = 2,          /* Tensor: moving operand src0 (K partitions x N) -> dst PSUM (M x N) */
	NX_OP_TENSOR_TENSOR = 3,   /* Vector/GpSimd: dst = src0 (op) src1 */
	NX_OP_TENSOR_SCALAR = 4,   /* Vector/Scalar/GpSimd: dst = src0 (op) imm */
	NX_OP_TENSOR_REDUCE = 5,   /* Vector/GpSimd: reduce src0 along the free dimension */
	NX_OP_ACTIVATE = 6,        /* Scalar: dst = act_fn(src0 * imm) */
	NX_OP_TENSOR_COPY = 7,     /* any compute engine: dst = src0 (e.g. PSUM -> SBUF) */
	NX_OP_MEMSET = 8,          /* dst = imm */
	NX_OP_IOTA = 9,            /* GpSimd: dst = index pattern */
	NX_OP_EVENT_SEMAPHORE = 10,/* no data: only its semaphore wait and signal */
	NX_OP_DMA_TRIGGER = 11,    /* starts DMA block dma_block on its queue */
	NX_OP_NOTIFY = 12,         /* emits a custom notification into the trace */
	/* NEFF major version 3 (the NKI ISA beyond the library kernels' needs) */
	NX_OP_TENSOR_TENSOR_SCAN = 13,    /* dst[j] = (src0[j] alu dst[j-1]) alu1 src1[j] */
	NX_OP_BN_STATS = 14,              /* 6 statistics of <= 512 elements per partition */
	NX_OP_BN_AGGR = 15,               /* bn_stats groups -> mean and variance */
	NX_OP_RECIPROCAL = 16,            /* dst = 1 / src0 */
	NX_OP_AFFINE_SELECT = 17,         /* affine predicate ? src0 : imm1 */
	NX_OP_SCALAR_TENSOR_TENSOR = 18,  /* dst = (src0 alu operand0) alu1 src1 */
	NX_OP_TENSOR_SCALAR_REDUCE = 19,  /* dst = src0 alu operand0; dst2 = reduce(dst) */
	NX_OP_TRANSPOSE = 20,             /* Vector 32x32 transpose */
	NX_OP_TENSOR_COPY_PREDICATED = 21,/* dst = src2 != 0 ? src0 : dst */
	NX_OP_SELECT = 22,                /* dst = src2 != 0 ? src0 : src1 */
	NX_OP_RANGE_SELECT = 23,          /* range predicate on src1/src2 bounds ? src0 : imm1 */
	NX_OP_MAX8 = 24,                  /* the 8 largest values per partition */
	NX_OP_FIND_INDEX8 = 25,           /* indices of the 8 values src1 in src0 */
	NX_OP_MATCH_REPLACE8 = 26,        /* src0 with the 8 values src1 replaced by imm */
	NX_OP_LOCAL_GATHER = 27,          /* GpSimd: gather src0 by indices src1 */
	NX_OP_COUNT = 28,
};
#define NX_OP_COUNT_V2 13
/* Opcode as the profiler shows it (Instruction.opcode), e.g. "MATMUL". The DMA trigger
 * appears as "DMA_DIRECT2D", matching the hardware-DGE instruction name. */
const char *nx_opcode_name(int opcode);
/* Accepts the profiler name or the listing mnemonic; -1 when unknown. */
int nx_opcode_parse(const char *s);

/* What the optional operand slots src1, src2 and dst2 hold for an opcode, by the name
 * the listing and Instruction.operands give them (e.g. TENSOR_SCALAR: "operand0",
 * "operand1", NULL); NULL = the opcode does not use the slot. */
struct nx_op_roles {
	const char *src1, *src2, *dst2;
};
const struct nx_op_roles *nx_op_roles(int opcode);

/* Activation functions of ACTIVATE (Instruction.scalar_activation_fn). */
enum nx_act_fn {
	NX_ACT_NONE = 0, NX_ACT_IDENTITY, NX_ACT_EXP, NX_ACT_RELU, NX_ACT_GELU, NX_ACT_TANH,
	NX_ACT_SIGMOID, NX_ACT_RSQRT, NX_ACT_SQUARE, NX_ACT_COPY,
	/* NEFF major version 3 */
	NX_ACT_LOG, NX_ACT_SQRT, NX_ACT_SIN, NX_ACT_COS, NX_ACT_TAN, NX_ACT_ARCTAN, NX_ACT_SILU,
	NX_ACT_SILU_DX, NX_ACT_GELU_DX, NX_ACT_GELU_APPRX_TANH, NX_ACT_GELU_APPRX_SIGMOID,
	NX_ACT_SOFTPLUS, NX_ACT_MISH, NX_ACT_ERF, NX_ACT_ERF_DX, NX_ACT_ABS, NX_ACT_SIGN,
	NX_ACT_RECIPROCAL, NX_ACT_NEGATIVE, NX_ACT_COUNT,
};
#define NX_ACT_COUNT_V2 10
const char *nx_act_fn_name(int fn);
int nx_act_fn_parse(const char *s);

/* Arithmetic of TENSOR_TENSOR / TENSOR_SCALAR / TENSOR_REDUCE ... (`alu`, `alu1`,
 * `reduce_op`). */
enum nx_alu {
	NX_ALU_ADD = 0, NX_ALU_SUB, NX_ALU_MUL, NX_ALU_MAX, NX_ALU_MIN, NX_ALU_DIV,
	/* NEFF major version 3 */
	NX_ALU_BYPASS, NX_ALU_ABS_MAX, NX_ALU_ABS_MIN, NX_ALU_MOD, NX_ALU_POW, NX_ALU_IS_EQUAL,
	NX_ALU_NOT_EQUAL, NX_ALU_IS_GT, NX_ALU_IS_GE, NX_ALU_IS_LT, NX_ALU_IS_LE,
	NX_ALU_LOGICAL_AND, NX_ALU_LOGICAL_OR, NX_ALU_LOGICAL_XOR, NX_ALU_LOGICAL_NOT,
	NX_ALU_BITWISE_AND, NX_ALU_BITWISE_OR, NX_ALU_BITWISE_XOR, NX_ALU_BITWISE_NOT,
	NX_ALU_SHIFT_LEFT, NX_ALU_ARITH_SHIFT_RIGHT, NX_ALU_LOGICAL_SHIFT_RIGHT, NX_ALU_COUNT,
};
#define NX_ALU_COUNT_V2 6
const char *nx_alu_name(int alu);
/* Also accepts NKI/numpy names (subtract, multiply, greater_equal, ...) and an "nl." or
 * "np." prefix. */
int nx_alu_parse(const char *s);
/* True for the comparisons is_equal .. is_le (AFFINE_SELECT, RANGE_SELECT). */
bool nx_alu_is_compare(int alu);

/* What ACTIVATE / RANGE_SELECT do with the engine's reduction accumulator. */
enum nx_reduce_cmd { NX_RCMD_IDLE = 0, NX_RCMD_RESET, NX_RCMD_REDUCE, NX_RCMD_RESET_REDUCE,
		     NX_RCMD_COUNT };
const char *nx_reduce_cmd_name(int cmd); /* "idle", "reset", "reduce", "reset_reduce" */
int nx_reduce_cmd_parse(const char *s);

enum nx_wait_cond { NX_WAIT_NONE = 0, NX_WAIT_GE = 1, NX_WAIT_EQ = 2 };
enum nx_sem_op {
	NX_SEM_NONE = 0,
	NX_SEM_INC = 1, /* +1 */
	NX_SEM_DEC = 2, /* -1 */
	NX_SEM_ADD = 3, /* += value */
	NX_SEM_SUB = 4, /* -= value */
	NX_SEM_SET = 5, /* = value */
};

enum nx_inst_flags {
	NX_INST_TRANSPOSE = 1 << 0, /* MATMUL/LDWEIGHTS of an nc_transpose (identity matmul) */
	NX_INST_ACCUMULATE = 1 << 1,/* MATMUL accumulates into PSUM instead of overwriting */
};

/* Flags of the record extension (`flags2`). */
enum nx_inst_flags2 {
	NX_INST2_OP1 = 1 << 0,        /* a second ALU operation alu1 (TENSOR_SCALAR) */
	NX_INST2_REVERSE0 = 1 << 1,   /* operand0 alu src (TENSOR_COPY_PREDICATED: not pred) */
	NX_INST2_REVERSE1 = 1 << 2,   /* operand1 alu1 (...) */
	NX_INST2_NEGATE = 1 << 3,     /* TENSOR_REDUCE: negated result */
	NX_INST2_KEEPDIMS = 1 << 4,   /* TENSOR_REDUCE: reduced axes kept as size 1 */
	NX_INST2_STAT_ONEZERO = 1 << 5, /* LDWEIGHTS: is_stationary_onezero */
	NX_INST2_MOV_ONEZERO = 1 << 6,  /* MATMUL: is_moving_onezero */
};

/* An on-chip access pattern: num_partitions partitions starting at start_partition,
 * and in each partition a free pattern of up to four dimensions, size[0] innermost,
 * with element steps step[k], starting at byte `offset` inside the partition. An outer
 * size of 0 counts as 1 (size[1] is 1 for a 1-D pattern; size[2], size[3] are 0 for
 * patterns of up to 2 dimensions). */
struct nx_ap {
	uint8_t mem;             /* enum nx_mem; NX_MEM_NONE = operand unused */
	uint8_t dtype;           /* enum nx_dtype */
	uint8_t start_partition; /* 0..127 */
	uint8_t num_partitions;  /* 1..128 is stored as 0..127 + 1: use nx_ap_partitions() */
	uint32_t offset;         /* bytes within each partition */
	uint32_t size[NX_AP_DIMS]; /* elements */
	int32_t step[NX_AP_DIMS];  /* elements */
};
static inline unsigned nx_ap_partitions(const struct nx_ap *ap)
{
	return ap->mem == NX_MEM_NONE ? 0u : (unsigned)ap->num_partitions + 1u;
}
static inline bool nx_ap_used(const struct nx_ap *ap)
{
	return ap->mem != NX_MEM_NONE;
}
/* n times the outer two sizes, saturating at UINT64_MAX (isa_work.c). */
uint64_t nx__ap_outer_elems(const struct nx_ap *ap, uint64_t n);
/* Elements per partition (saturating at UINT64_MAX). */
static inline uint64_t nx_ap_free_elems(const struct nx_ap *ap)
{
	uint64_t n;

	if (ap->mem == NX_MEM_NONE)
		return 0;
	n = (uint64_t)ap->size[0] * (ap->size[1] ? ap->size[1] : 1);
	return ap->size[2] > 1 || ap->size[3] > 1 ? nx__ap_outer_elems(ap, n) : n;
}
/* Free dimensions in use: 2 unless size[2], size[3], step[2] or step[3] is set. */
static inline unsigned nx_ap_ndim(const struct nx_ap *ap)
{
	if (ap->size[3] || ap->step[3])
		return 4;
	return ap->size[2] || ap->step[2] ? 3 : 2;
}

/* One decoded instruction. */
struct nx_inst {
	uint16_t opcode;     /* enum nx_opcode */
	uint8_t engine;      /* enum nx_engine; must match the stream it is in */
	uint8_t flags;       /* enum nx_inst_flags */
	uint8_t act_fn;      /* enum nx_act_fn (ACTIVATE) */
	uint8_t perf_mode;   /* 0 base, 1 = "2x", 2 = "4x" (Vector/Scalar) */
	uint8_t alu;         /* enum nx_alu */
	uint8_t wait_cond;   /* enum nx_wait_cond */
	uint8_t sig_op;      /* enum nx_sem_op, applied when the instruction completes */
	uint8_t pad0;
	uint16_t wait_sem;   /* semaphore waited on before issue (0..255) */
	uint16_t sig_sem;    /* semaphore updated at completion (0..255) */
	uint32_t wait_value;
	uint32_t sig_value;
	uint32_t dma_block;  /* DMA_TRIGGER: index into nx_neff.blocks; else NX_NONE32 */
	uint32_t debug_id;   /* index into nx_debug_info.insts; NX_NONE32 when absent */
	uint32_t bir_id;     /* compiler (BIR) instruction id */
	float imm;           /* scalar operand (TENSOR_SCALAR, ACTIVATE scale, MEMSET value) */
	struct nx_ap dst, src0, src1;
	/* The record extension (NEFF major version 3); all zero = absent. The roles of
	 * each field per opcode are in docs/formats/neff.md, "Operand roles". */
	uint8_t flags2;      /* enum nx_inst_flags2 */
	uint8_t alu1;        /* second ALU operation (with NX_INST2_OP1, or by opcode) */
	uint8_t reduce_op;   /* ALU operation of the reduction into dst2 */
	uint8_t reduce_cmd;  /* enum nx_reduce_cmd */
	uint8_t axes;        /* TENSOR_REDUCE: innermost free axes reduced, 0 = all */
	uint8_t tile[4];     /* MATMUL/LDWEIGHTS PE tile: row, column, rows, columns; 0 = whole */
	float imm1;          /* second scalar: operand1, bias, on_false_value, initial */
	int32_t param[2];    /* IOTA/AFFINE_SELECT offset, channel_multiplier; RANGE_SELECT
			      * range_start; LOCAL_GATHER elements per index */
	int32_t pattern[NX_AP_DIMS]; /* IOTA/AFFINE_SELECT: step per dst free axis */
	struct nx_ap src2, dst2;     /* third input, second output (reduce_res) */
};

/* True when the instruction needs the record extension (NX_INST_EXT_SIZE bytes). */
bool nx_inst_extended(const struct nx_inst *in);
/* True when the instruction needs NEFF major version 3: the extension, or an opcode,
 * dtype, activation function or ALU operation that version 3 added. */
bool nx_inst_needs_v3(const struct nx_inst *in);
/* Encodes one record (little-endian, layout in neff.md) into out, which has room for
 * NX_INST_EXT_SIZE bytes; returns the bytes written (NX_INST_SIZE or NX_INST_EXT_SIZE). */
size_t nx_inst_encode(const struct nx_inst *in, uint8_t *out);
/* Decodes the record at the start of in (avail bytes) written for NEFF major version
 * `major`, and sets *used to its size. Fails with NX_ECORRUPT on reserved bits, unknown
 * opcodes, out-of-range fields or a partial record, and with NX_EVERSION when a
 * version-2 record uses a version-3 value; `where` names the record in the error (e.g.
 * "sg00/Tensor.bin: instruction 12"). */
int nx_inst_decode(const uint8_t *in, size_t avail, unsigned major, struct nx_inst *out,
		   size_t *used, const char *where, struct nx_err *err);

/* Renders Instruction.operands in the profiler's style, e.g. for a MATMUL
 *   "S[3]>=1 src=bf16@0x0[1,0,0][512,1,1] dst=fp32@psum:0x0[1,0,0][512,1,1] 128*128"
 * (semaphore clause, access patterns as [steps][sizes], MATMUL ends with K*M). */
void nx_inst_format_operands(const struct nx_inst *in, struct nx_strbuf *out);

/* Work figures of an instruction, shared by the simulator's cost model and the
 * ingester's Instruction byte/flop columns. */
struct nx_inst_work {
	uint64_t elements;        /* elements processed per partition (free size) */
	uint64_t partitions;      /* partitions touched */
	uint64_t tensor_elements; /* MATMUL: K * M * N (MACs); else 0 */
	uint64_t raw_flops;       /* MATMUL: 2 * K * M * N */
	uint64_t adjusted_flops;  /* raw_flops scaled to BF16-equivalents for the target */
	uint64_t sbuf_read_bytes, sbuf_write_bytes;
	uint64_t psum_read_bytes, psum_write_bytes;
	uint64_t psum_read_sbuf_write_bytes;
};
/* target_v3 selects trn2 (NeuronCore-v3) FP8 scaling (x0.5) instead of trn1's (x1). */
void nx_inst_work(const struct nx_inst *in, bool target_v3, struct nx_inst_work *w);

#endif
