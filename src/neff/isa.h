/* SPDX-License-Identifier: MIT
 * isa.h: our NeuronCore instruction set as stored in a NEFF.
 *
 * The real engine instruction binaries are not public, so the project defines its own
 * encoding (docs/formats/neff.md, "Instruction streams"). Each engine's program is a
 * file sg00/<Engine>.bin of fixed 128-byte records; an instruction's pc is its index
 * in that file (Instruction.pc is the per-engine index). The same decoded struct feeds the
 * simulator (what to execute) and the ingester (opcode, operands and source location
 * of every executed instruction). */
#ifndef NX_NEFF_ISA_H
#define NX_NEFF_ISA_H

#include "common/compat.h"
#include "common/err.h"
#include "common/strbuf.h"

#define NX_INST_SIZE 128u
#define NX_NUM_PARTITIONS 128u
#define NX_NUM_SEMAPHORES 256u

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
	NX_DT_COUNT = 7,
};
/* Short names used in operand strings and listings: bf16 fp16 fp32 fp8 tf32 int32 uint8. */
const char *nx_dtype_name(int dtype);
unsigned nx_dtype_size(int dtype);
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
	NX_OP_COUNT = 13,
};
/* Opcode as the profiler shows it (Instruction.opcode), e.g. "MATMUL". The DMA trigger
 * appears as "DMA_DIRECT2D", matching the hardware-DGE instruction name. */
const char *nx_opcode_name(int opcode);
/* Accepts the profiler name or the listing mnemonic; -1 when unknown. */
int nx_opcode_parse(const char *s);

/* Activation functions of ACTIVATE (Instruction.scalar_activation_fn). */
enum nx_act_fn {
	NX_ACT_NONE = 0, NX_ACT_IDENTITY, NX_ACT_EXP, NX_ACT_RELU, NX_ACT_GELU, NX_ACT_TANH,
	NX_ACT_SIGMOID, NX_ACT_RSQRT, NX_ACT_SQUARE, NX_ACT_COPY, NX_ACT_COUNT,
};
const char *nx_act_fn_name(int fn);
int nx_act_fn_parse(const char *s);

/* Arithmetic of TENSOR_TENSOR / TENSOR_SCALAR / TENSOR_REDUCE (stored in `alu`). */
enum nx_alu { NX_ALU_ADD = 0, NX_ALU_SUB, NX_ALU_MUL, NX_ALU_MAX, NX_ALU_MIN, NX_ALU_DIV,
	      NX_ALU_COUNT };
const char *nx_alu_name(int alu);
int nx_alu_parse(const char *s);

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

/* An on-chip access pattern: num_partitions partitions starting at start_partition,
 * and in each partition a 2-D free pattern of size[0] x size[1] elements with element
 * steps step[0], step[1], starting at byte `offset` inside the partition. */
struct nx_ap {
	uint8_t mem;             /* enum nx_mem; NX_MEM_NONE = operand unused */
	uint8_t dtype;           /* enum nx_dtype */
	uint8_t start_partition; /* 0..127 */
	uint8_t num_partitions;  /* 1..128 is stored as 0..127 + 1: use nx_ap_partitions() */
	uint32_t offset;         /* bytes within each partition */
	uint32_t size[2];        /* elements; size[1] is 1 for a 1-D pattern */
	int32_t step[2];         /* elements */
};
static inline unsigned nx_ap_partitions(const struct nx_ap *ap)
{
	return ap->mem == NX_MEM_NONE ? 0u : (unsigned)ap->num_partitions + 1u;
}
/* Elements per partition. */
static inline uint64_t nx_ap_free_elems(const struct nx_ap *ap)
{
	return ap->mem == NX_MEM_NONE ? 0 : (uint64_t)ap->size[0] * (ap->size[1] ? ap->size[1] : 1);
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
};

/* Encodes/decodes one NX_INST_SIZE-byte record (little-endian, layout in neff.md). */
void nx_inst_encode(const struct nx_inst *in, uint8_t out[NX_INST_SIZE]);
/* Fails with NX_ECORRUPT on reserved bits, unknown opcodes or out-of-range fields;
 * `where` names the record in the error (e.g. "sg00/Tensor.bin: instruction 12"). */
int nx_inst_decode(const uint8_t in[NX_INST_SIZE], struct nx_inst *out, const char *where,
		   struct nx_err *err);

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
