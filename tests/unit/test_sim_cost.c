/* SPDX-License-Identifier: MIT
 * test_sim_cost.c: the simulator's cost model against times worked out by hand from
 * the constants in docs/simulator.md (trn2 unless stated): MATMUL and LDWEIGHTS on
 * the Tensor engine (with the FP8 perf modes), Vector/Scalar instructions, and DMA
 * descriptor geometry and packet cost. */
#include "common/compat.h"
#include "sim/cost.h"
#include "sim/machine.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>
#include <cmocka.h>

#include "helper/asserts.h"

static struct nx_ap ap(int mem, int dtype, uint32_t n0, uint32_t n1)
{
	struct nx_ap a = { (uint8_t)mem, (uint8_t)dtype, 0, 127, 0, { n0, n1 }, { 1, (int32_t)n0 } };
	return a;
}

static struct nx_inst inst(int engine, int op, int dtype, uint32_t n)
{
	struct nx_inst in;

	memset(&in, 0, sizeof(in));
	in.engine = (uint8_t)engine;
	in.opcode = (uint16_t)op;
	in.src0 = ap(NX_MEM_SBUF, dtype, n, 1);
	in.dst = ap(NX_MEM_SBUF, dtype, n, 1);
	in.dma_block = NX_NONE32;
	in.debug_id = NX_NONE32;
	return in;
}

static void test_matmul(void **state)
{
	const struct nx_machine *m = nx_machine_get("trn2");
	struct nx_inst in = inst(NX_ENGINE_TENSOR, NX_OP_MATMUL, NX_DT_BF16, 512);

	(void)state;
	/* II = max(N, 64) TE cycles at 2.4 GHz: 512 cycles = 213.333 ns */
	assert_int_equal(nx_cost_tensor_cycles(m, &in), 512);
	assert_int_equal(nx_cost_inst_ps(m, &in, false), 213333);
	in.src0.size[0] = 32;
	assert_int_equal(nx_cost_tensor_cycles(m, &in), 64);
	assert_int_equal(nx_cost_inst_ps(m, &in, false), 26667);
	/* with a narrow stationary the floor is its width: max(min(64, 32), 32) = 32 */
	assert_int_equal(nx_cost_matmul_cycles(m, &in, 32), 32);
	assert_int_equal(nx_cost_matmul_cycles(m, &in, 128), 64);
	/* FP32 is 4x */
	in = inst(NX_ENGINE_TENSOR, NX_OP_MATMUL, NX_DT_FP32, 128);
	assert_int_equal(nx_cost_tensor_cycles(m, &in), 512);
	/* trn1 runs the TE at 2.8 GHz */
	in = inst(NX_ENGINE_TENSOR, NX_OP_MATMUL, NX_DT_BF16, 512);
	assert_int_equal(nx_cost_inst_ps(nx_machine_get("trn1"), &in, false), 182857);
}

/* nc_matmul perf modes: FP8 double-row (2x) and quad-row (4x) on trn2 only. */
static void test_matmul_perf_modes(void **state)
{
	const struct nx_machine *m2 = nx_machine_get("trn2"), *m1 = nx_machine_get("trn1");
	struct nx_inst in = inst(NX_ENGINE_TENSOR, NX_OP_MATMUL, NX_DT_FP8_E5M2, 512);

	(void)state;
	in.perf_mode = 1;
	assert_int_equal(nx_cost_tensor_cycles(m2, &in), 256);
	assert_int_equal(nx_cost_matmul_cycles(m2, &in, 128), 256);
	assert_int_equal(nx_cost_tensor_cycles(m1, &in), 512);
	in.perf_mode = 2;
	assert_int_equal(nx_cost_matmul_cycles(m2, &in, 128), 128);
	in = inst(NX_ENGINE_TENSOR, NX_OP_MATMUL, NX_DT_BF16, 512);
	in.perf_mode = 1; /* not an FP8 operand: no effect */
	assert_int_equal(nx_cost_tensor_cycles(m2, &in), 512);
}

static void test_ldweights(void **state)
{
	const struct nx_machine *m = nx_machine_get("trn2");
	struct nx_inst in = inst(NX_ENGINE_TENSOR, NX_OP_LDWEIGHTS, NX_DT_BF16, 128);

	(void)state;
	/* 4x faster than a MATMUL of the same free size: 128 / 4 = 32 cycles */
	assert_int_equal(nx_cost_tensor_cycles(m, &in), 32);
	assert_int_equal(nx_cost_inst_ps(m, &in, false), 13333);
	in.src0.size[0] = 16; /* floor of 64 cycles / 4 */
	assert_int_equal(nx_cost_tensor_cycles(m, &in), 16);
}

static void test_vector(void **state)
{
	const struct nx_machine *m = nx_machine_get("trn2");
	struct nx_inst in = inst(NX_ENGINE_VECTOR, NX_OP_TENSOR_TENSOR, NX_DT_BF16, 512);

	(void)state;
	in.src1 = ap(NX_MEM_SBUF, NX_DT_BF16, 512, 1);
	/* a contiguous all-BF16 SBUF add streams in one pass: N + 60 */
	assert_int_equal(nx_cost_alu_cycles(m, &in, false), 572);
	/* so does an FP32 SBUF + PSUM add */
	in.src0.dtype = in.dst.dtype = NX_DT_FP32;
	in.src1.mem = NX_MEM_PSUM;
	in.src1.dtype = NX_DT_FP32;
	assert_int_equal(nx_cost_alu_cycles(m, &in, false), 572);
	/* zero fill in BF16: N/2 */
	in = inst(NX_ENGINE_VECTOR, NX_OP_MEMSET, NX_DT_BF16, 512);
	assert_int_equal(nx_cost_alu_cycles(m, &in, false), 316);
	/* other two-input ops (here max) read the inputs one after the other:
	 * 2N + 60 cycles set-up at 0.96 GHz = 1084 cycles = 1129.167 ns */
	in = inst(NX_ENGINE_VECTOR, NX_OP_TENSOR_TENSOR, NX_DT_BF16, 512);
	in.src1 = ap(NX_MEM_SBUF, NX_DT_BF16, 512, 1);
	in.alu = NX_ALU_MAX;
	assert_int_equal(nx_cost_alu_cycles(m, &in, false), 1084);
	assert_int_equal(nx_cost_inst_ps(m, &in, false), 1129167);
	/* dependent instruction: 100 cycles more static overhead */
	assert_int_equal(nx_cost_alu_cycles(m, &in, true), 1184);
	/* small: MIN_II 64 cycles */
	in = inst(NX_ENGINE_VECTOR, NX_OP_TENSOR_SCALAR, NX_DT_FP32, 16);
	assert_int_equal(nx_cost_alu_cycles(m, &in, true), 224); /* 64 + 60 + 100: M6 */
	/* an ALU divide: 8N (the RECIPROCAL instruction: 2.5N) */
	in = inst(NX_ENGINE_VECTOR, NX_OP_TENSOR_SCALAR, NX_DT_FP32, 100);
	in.alu = NX_ALU_DIV;
	assert_int_equal(nx_cost_alu_cycles(m, &in, false), 860);
	in = inst(NX_ENGINE_VECTOR, NX_OP_RECIPROCAL, NX_DT_FP32, 101);
	assert_int_equal(nx_cost_alu_cycles(m, &in, false), 253 + 60); /* 2.5 x 101, up */
	/* 4x perf mode on 2-byte types (v3 only) */
	in = inst(NX_ENGINE_VECTOR, NX_OP_TENSOR_COPY, NX_DT_BF16, 1024);
	in.perf_mode = 2;
	assert_int_equal(nx_cost_alu_cycles(m, &in, false), 316);
	assert_int_equal(nx_cost_alu_cycles(nx_machine_get("trn1"), &in, false), 1084);
	/* a 32-byte free-dimension stride halves the bandwidth */
	in = inst(NX_ENGINE_VECTOR, NX_OP_TENSOR_COPY, NX_DT_BF16, 256);
	in.src0.step[0] = 16;
	assert_int_equal(nx_cost_alu_cycles(m, &in, false), 572);
}

static void test_scalar_gpsimd_sync(void **state)
{
	const struct nx_machine *m = nx_machine_get("trn2");
	struct nx_inst in = inst(NX_ENGINE_SCALAR, NX_OP_ACTIVATE, NX_DT_BF16, 1000);

	(void)state;
	/* N + 60 cycles at 1.2 GHz */
	assert_int_equal(nx_cost_alu_cycles(m, &in, false), 1060);
	assert_int_equal(nx_cost_inst_ps(m, &in, false), 883333);
	in = inst(NX_ENGINE_GPSIMD, NX_OP_TENSOR_COPY, NX_DT_BF16, 128);
	assert_int_equal(nx_cost_alu_cycles(m, &in, false), 188);
	in = inst(NX_ENGINE_SYNC, NX_OP_DMA_TRIGGER, NX_DT_BF16, 0);
	assert_int_equal(nx_cost_inst_ps(m, &in, false), 53333);
}

static struct nx_dma_desc load_desc(uint64_t rows, uint64_t cols, uint64_t ld)
{
	struct nx_dma_desc d;

	memset(&d, 0, sizeof(d));
	d.from_loc = NX_LOC_HBM;
	d.to_loc = NX_LOC_SBUF;
	d.from_var = 0;
	d.to_var = -1;
	d.from_ndim = 2;
	d.from_sizes[0] = rows;
	d.from_sizes[1] = cols;
	d.from_steps[0] = (int64_t)ld;
	d.from_steps[1] = 1;
	d.to_ndim = 2;
	d.to_sizes[0] = rows;
	d.to_sizes[1] = cols;
	d.to_steps[0] = 1;
	d.to_steps[1] = 1;
	d.dtype = NX_DT_BF16;
	d.bytes = rows * cols * 2;
	return d;
}

static void test_dma(void **state)
{
	const struct nx_machine *m = nx_machine_get("trn2");
	struct nx_dma_desc d = load_desc(128, 128, 4096);
	struct nx_dma_geom g;

	(void)state;
	/* a 128x128 lhsT tile of a 4096-wide matrix: 128 runs of 256 bytes */
	nx_cost_dma_geom(&d, &g);
	assert_int_equal(g.rows, 128);
	assert_int_equal(g.row_bytes, 256);
	assert_int_equal(g.partitions, 128);
	assert_true(g.hbm);
	assert_int_equal(g.hbm_run, 256); /* strided in HBM: each row is a run */
	/* one engine takes 8 partitions: 8 x (9 ns + 256 B / 23.3 B/ns) = 159.896 ns */
	assert_int_equal(nx_cost_dma_packet_ps(m, 8, 256, false), 159896);
	/* M1: 32 KiB from contiguous HBM by one engine, one run: 1.415 us (measured 1.416) */
	assert_int_equal(nx_cost_dma_packet_ps(m, 1, 32768, false), 1415337);
	/* M2: 128 x 128 bf16 from a contiguous tensor: one 32 KiB run over 128 partitions */
	d = load_desc(128, 128, 128);
	nx_cost_dma_geom(&d, &g);
	assert_int_equal(g.row_bytes, 256);
	assert_int_equal(g.hbm_run, 32768);
	/* a contiguous full-width load merges into one run per partition */
	d = load_desc(128, 4096, 4096);
	nx_cost_dma_geom(&d, &g);
	assert_int_equal(g.rows, 128);
	assert_int_equal(g.row_bytes, 8192);
	/* HBM-contiguous 2-D source into 32 partitions: one run per partition */
	d = load_desc(32, 64, 64);
	nx_cost_dma_geom(&d, &g);
	assert_int_equal(g.rows, 32);
	assert_int_equal(g.row_bytes, 128);
	/* transposes cost 4x */
	assert_int_equal(nx_cost_dma_packet_ps(m, 1, 256, true), 4 * 19987);
	/* the bandwidth falls for small descriptors */
	NX_ASSERT_CMP(64.0 / nx_cost_dma_packet_ps(m, 1, 64, false), <, 2048.0 / nx_cost_dma_packet_ps(m, 1, 2048, false));
	/* static descriptor rings: one descriptor of a queue per 2720 B of streaming,
	 * 116.737 ns at 23.3 B/ns (trn2) and 160.001 ns at 17 B/ns (trn1), and one of the
	 * engine's static queues per 1650 B (70.815 and 97.060 ns): a single queue of 1 KiB
	 * rows moves 1024 B per 160 ns on trn1, 38% of the engine's rate */
	assert_int_equal(nx_cost_dma_ring_gap_ps(m, false), 116736);
	assert_int_equal(nx_cost_dma_ring_gap_ps(m, true), 70814);
	assert_int_equal(nx_cost_dma_ring_gap_ps(nx_machine_get("trn1"), false), 160001);
	assert_int_equal(nx_cost_dma_ring_gap_ps(nx_machine_get("trn1"), true), 97059);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_matmul),
		cmocka_unit_test(test_matmul_perf_modes),
		cmocka_unit_test(test_ldweights),
		cmocka_unit_test(test_vector),
		cmocka_unit_test(test_scalar_gpsimd_sync),
		cmocka_unit_test(test_dma),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
