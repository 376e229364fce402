/* SPDX-License-Identifier: MIT
 * test_nki_ops.c: every NKI operation of the listing end to end: one small listing per
 * operation is assembled, written and read back as a NEFF, simulated on trn2 into an
 * NTFF and ingested into parquet; the Instruction row (real DuckDB) must show the
 * operation's opcode, engine, source line, operand text, bytes and the duration its
 * cost rule gives (docs/simulator.md, "Cost per operation"), worked out by hand below.
 * Also: DMA casts and transposes, matmul flags, compiler decisions as Warning rows. */
#include "common/compat.h"
#include "common/fsutil.h"
#include "common/xalloc.h"
#include "db/duck.h"
#include "helper/fixture.h"
#include "helper/profile_db.h"
#include "ingest/ingest.h"
#include "kernels/listing.h"
#include "sim/sim.h"

#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "helper/asserts.h"

/* Declarations every case shares: a 128x512 bf16 input, a 64x128 bf16 matrix, a
 * 128x512 fp32 output, their queues and three blocks (a load with a cast to fp32, a
 * transposing load, a store). */
static const char head[] =
	"kernel nki_op\n"
	"source k.py\n"
	"frame nki_op k.py:1\n"
	"tensor x input bf16 128x512\n"
	"tensor a input bf16 64x128\n"
	"tensor y output fp32 128x512\n"
	"queue qSyncIO0 in Sync sem=1\n"
	"queue qSyncIO1 out Sync sem=2\n"
	"block load_cast qSyncIO0\n"
	"  desc x[0:128, 0:512] -> sbuf[0:128]+0:fp32\n"
	"block load_t qSyncIO0\n"
	"  desc a[0:64, 0:128] -> sbuf[0:128]+65536 transpose\n"
	"block store qSyncIO1\n"
	"  desc sbuf[0:128]+0:fp32[512] -> y[0:128, 0:512]\n";

/* trn2 clocks (MHz) and the duration in ns of `cycles` from time 0: the INST record's
 * end tick, truncated from picoseconds (nx_cycles_ps rounds to the picosecond). */
enum { VE = 960, ACT = 1200, POOL = 1200, PE = 2400 };
static int64_t ns(uint64_t cycles, unsigned mhz)
{
	return (int64_t)(((cycles * 1000000u + mhz / 2) / mhz) / 1000);
}

struct op_case {
	const char *name;      /* profile name */
	const char *line;      /* the instruction, at k.py:10 */
	const char *opcode, *engine;
	const char *operands;  /* a part of Instruction.operands */
	int64_t sbuf_read, sbuf_write;
};

/* Assembles head + body, writes and re-reads the NEFF, simulates and ingests it;
 * returns the published profile directory. */
static char *run(const char *dir, const char *data, const char *name, const char *body)
{
	char *text = nx_xasprintf("%s%s", head, body);
	char *neff = nx_xasprintf("%s/%s.neff", dir, name), *ntff = nx_xasprintf("%s/%s.ntff", dir,
										  name);
	struct nx_sim_opts so = { .target = "trn2", .dma_packets = true, .exec_index = 1 };
	struct nx_neff a, b;
	struct nx_err err = { 0 };
	char *out = NULL;

	if (nx_listing_assemble("k.lst", text, strlen(text), &a, &err))
		fail_msg("%s: %s", name, err.msg);
	if (nx_neff_write(neff, &a, &err) || nx_neff_read(neff, &b, &err))
		fail_msg("%s: %s", name, err.msg);
	for (int e = 0; e < NX_ENGINE_COUNT; e++) {
		assert_int_equal(a.ninst[e], b.ninst[e]);
		if (a.ninst[e])
			assert_memory_equal(a.inst[e], b.inst[e], a.ninst[e] * sizeof(*a.inst[e]));
	}
	if (nx_sim_capture(&b, &so, ntff, NULL, &err))
		fail_msg("%s: %s", name, err.msg);
	out = nx_test_ingest(neff, ntff, data, name);
	nx_neff_release(&a);
	nx_neff_release(&b);
	free(text);
	free(neff);
	free(ntff);
	return out;
}

/* One listing run in a directory of its own, its profile open in d. */
struct one_run {
	char *dir, *data, *prof;
	struct nx_duck *d;
};

static void open_run(struct one_run *r, const char *tag, const char *name, const char *body)
{
	r->dir = nx_test_dir(tag);
	r->data = nx_path_join(r->dir, "data");
	r->prof = run(r->dir, r->data, name, body);
	r->d = NULL;
	nx_test_use_profile(&r->d, r->prof);
}

static void close_run(struct one_run *r)
{
	nx_duck_close(r->d);
	free(r->prof);
	free(r->data);
	free(r->dir);
}

static double q(struct nx_duck *d, const char *fmt, ...) NX_PRINTF(2, 3);
static double q(struct nx_duck *d, const char *fmt, ...)
{
	va_list ap;
	char *sql;
	double v;

	va_start(ap, fmt);
	assert_true(vasprintf(&sql, fmt, ap) >= 0);
	va_end(ap);
	v = nx_test_q(d, sql);
	free(sql);
	return v;
}

static const struct op_case cases[] = {
	{ "scan", "@10 Vector tensor_tensor_scan src=sbuf[0:128]+0:fp32[512] "
		  "src1=sbuf[0:128]+2048:fp32[512] dst=sbuf[0:128]+4096:fp32[512] op0=mul op1=add "
		  "initial=0\n",
	  "TENSOR_TENSOR_SCAN", "Vector", "op0=mul op1=add initial=0", 524288, 262144 },
	{ "bn_stats", "@10 Vector bn_stats src=sbuf[0:128]+0:fp32[512] "
		      "dst=sbuf[0:128]+12288:fp32[6]\n",
	  "BN_STATS", "Vector", "dst=fp32@0x3000[1,1,6][6,1,128]", 262144, 3072 },
	{ "bn_aggr", "@10 Vector bn_aggr src=sbuf[0:128]+12288:fp32[6] "
		     "dst=sbuf[0:128]+12312:fp32[2]\n",
	  "BN_AGGR", "Vector", "src=fp32@0x3000[1,1,6][6,1,128]", 3072, 1024 },
	{ "recip_v", "@10 Vector reciprocal src=sbuf[0:128]+0:fp32[512] "
		     "dst=sbuf[0:128]+2048:fp32[512]\n",
	  "RECIPROCAL", "Vector", "dst=fp32@0x800", 262144, 262144 },
	{ "recip_g", "@10 GpSimd reciprocal src=sbuf[0:128]+0:fp32[512] "
		     "dst=sbuf[0:128]+2048:fp32[512]\n",
	  "RECIPROCAL", "GpSimd", "dst=fp32@0x800", 262144, 262144 },
	{ "affine", "@10 GpSimd affine_select src=sbuf[0:128]+0:fp32[128] "
		    "dst=sbuf[0:128]+4096:fp32[128] pattern={-1} offset=0 channel_multiplier=1 "
		    "cmp_op=is_ge on_false_value=-9984.0\n",
	  "AFFINE_SELECT", "GpSimd",
	  "pattern=[-1,0] offset=0 channel_multiplier=1 cmp_op=is_ge on_false_value=-9984",
	  65536, 65536 },
	{ "stt", "@10 Vector scalar_tensor_tensor src=sbuf[0:128]+0:bf16[512] "
		 "src1=sbuf[0:128]+1024:bf16[512] dst=sbuf[0:128]+2048:bf16[512] op0=mul "
		 "operand0=2 op1=add\n",
	  "SCALAR_TENSOR_TENSOR", "Vector", "op0=mul operand0=2 op1=add", 262144, 131072 },
	{ "tsr", "@10 Vector tensor_scalar_reduce src=sbuf[0:128]+0:fp32[512] "
		 "dst=sbuf[0:128]+2048:fp32[512] op0=mul operand0=1.0 reduce_op=add "
		 "reduce_res=sbuf[0:128]+8192:fp32[1]\n",
	  "TENSOR_SCALAR_REDUCE", "Vector",
	  "reduce_res=fp32@0x2000[1,1,1][1,1,128] op0=mul operand0=1 reduce_op=add", 262144,
	  262144 + 512 },
	{ "transpose", "@10 Vector transpose src=sbuf[0:32]+0:bf16[32] "
		       "dst=sbuf[0:32]+64:bf16[32]\n",
	  "TRANSPOSE", "Vector", "src=bf16@0x0[1,1,32][32,1,32]", 2048, 2048 },
	{ "copy_pred", "@10 Vector tensor_copy_predicated src=sbuf[0:128]+0:fp32[512] "
		       "predicate=sbuf[0:128]+4096:uint8[512] dst=sbuf[0:128]+8192:fp32[512] "
		       "reverse0\n",
	  "TENSOR_COPY_PREDICATED", "Vector", "predicate=uint8@0x1000[1,1,512][512,1,128]",
	  262144 + 65536, 262144 },
	{ "select", "@10 GpSimd select src=sbuf[0:128]+0:fp32[512] src1=sbuf[0:128]+2048:fp32[512] "
		    "predicate=sbuf[0:128]+4096:uint8[512] dst=sbuf[0:128]+8192:fp32[512]\n",
	  "SELECT", "GpSimd", "src1=fp32@0x800", 2 * 262144 + 65536, 262144 },
	{ "range_sel", "@10 Vector range_select src=sbuf[0:128]+0:fp32[512] "
		       "bound0=sbuf[0:128]+4096:fp32[1] bound1=sbuf[0:128]+4100:fp32[1] "
		       "dst=sbuf[0:128]+8192:fp32[512] comp_op0=is_ge comp_op1=is_lt "
		       "range_start=16 on_false_value=-1e9 reduce_op=max "
		       "reduce_res=sbuf[0:128]+4104:fp32[1]\n",
	  "RANGE_SELECT", "Vector",
	  "comp_op0=is_ge comp_op1=is_lt range_start=16 on_false_value=-1e+09 reduce_op=max "
	  "reduce_cmd=reset_reduce", 262144 + 1024, 262144 + 512 },
	{ "max8", "@10 Vector max8 src=sbuf[0:128]+0:fp32[512] dst=sbuf[0:128]+4096:fp32[8]\n",
	  "MAX8", "Vector", "dst=fp32@0x1000[1,1,8][8,1,128]", 262144, 4096 },
	{ "find8", "@10 Vector find_index8 src=sbuf[0:128]+0:fp32[512] "
		   "vals=sbuf[0:128]+4096:fp32[8] dst=sbuf[0:128]+4128:uint32[8]\n",
	  "FIND_INDEX8", "Vector", "vals=fp32@0x1000[1,1,8][8,1,128]", 262144 + 4096, 4096 },
	{ "replace8", "@10 Vector match_replace8 src=sbuf[0:128]+0:fp32[512] "
		      "vals=sbuf[0:128]+4096:fp32[8] dst=sbuf[0:128]+8192:fp32[512] imm=-1e9\n",
	  "MATCH_REPLACE8", "Vector", "imm=-1e+09", 262144 + 4096, 262144 },
	{ "gather", "@10 GpSimd local_gather src=sbuf[0:128]+0:fp32[512] "
		    "index=sbuf[0:128]+4096:uint16[64] dst=sbuf[0:128]+8192:fp32[64] "
		    "num_elem_per_idx=1\n",
	  "LOCAL_GATHER", "GpSimd",
	  "index=uint16@0x1000[1,1,64][64,1,128] dst=fp32@0x2000[1,1,64][64,1,128] "
	  "num_elem_per_idx=1",
	  262144 + 16384, 32768 },
	{ "iota", "@10 GpSimd iota dst=sbuf[0:128]+0:int32[512] pattern={1} offset=3 "
		  "channel_multiplier=512\n",
	  "IOTA", "GpSimd", "pattern=[1,0] offset=3 channel_multiplier=512", 0, 262144 },
	{ "act_reduce", "@10 Scalar activate act=gelu_apprx_tanh src=sbuf[0:128]+0:fp32[512] "
			"dst=sbuf[0:128]+2048:bf16[512] bias=sbuf[0:128]+8192:fp32[1] "
			"scale=sbuf[0:128]+8196:fp32[1] reduce_op=add "
			"reduce_res=sbuf[0:128]+8200:fp32[1] reduce_cmd=reduce\n",
	  "ACTIVATE", "Scalar",
	  "bias=fp32@0x2000[1,1,1][1,1,128] scale=fp32@0x2004[1,1,1][1,1,128] "
	  "dst=bf16@0x800[1,1,512][512,1,128] reduce_res=fp32@0x2008[1,1,1][1,1,128] "
	  "fn=GELU_APPRX_TANH reduce_op=add reduce_cmd=reduce", 262144 + 1024, 131072 + 512 },
	{ "ts2", "@10 Vector tensor_scalar src=sbuf[0:128]+0:fp32[512] "
		 "dst=sbuf[0:128]+2048:fp32[512] op0=subtract operand0=sbuf[0:128]+8192:fp32[1] "
		 "reverse0 op1=divide operand1=3\n",
	  "TENSOR_SCALAR", "Vector",
	  "operand0=fp32@0x2000[1,1,1][1,1,128] dst=fp32@0x800[1,1,512][512,1,128] op0=sub "
	  "reverse0 op1=div operand1=3", 262144 + 512, 262144 },
	{ "reduce4d", "@10 Vector tensor_reduce src=sbuf[0:64]+0:fp32[2,2,16,16]{1,32,2,64} "
		      "dst=sbuf[0:64]+16384:fp32[16,16] alu=add axes=2 negate keepdims\n",
	  "TENSOR_REDUCE", "Vector",
	  "src=fp32@0x0[1,1,32,2,64][2,2,16,16,64] dst=fp32@0x4000[1,1,16][16,16,64] op=add "
	  "axes=2 negate keepdims", 262144, 65536 },
};

/* The cycles of each case, in the order of cases[], by its rule (streaming, floored at
 * MIN_II = 64, + 64 for a reduction, + 60 static) and engine clock. */
static int64_t expected_ns(size_t i)
{
	static const struct {
		uint64_t cycles;
		unsigned mhz;
	} want[] = {
		{ 2 * 512 + 60, VE },      /* scan: two tensor inputs, 2N */
		{ 512 + 60, VE },          /* bn_stats: N */
		{ 64 + 60, VE },           /* bn_aggr: 13 * (6 / 3) = 26, floored at 64 */
		{ 5 * 512 / 2 + 60, VE },  /* reciprocal on Vector: 2.5N (fitted, NKI silu) */
		{ 512 + 60, POOL },        /* reciprocal on GpSimd: N */
		{ 128 + 60, POOL },        /* affine_select: N */
		{ 512 + 60, VE },          /* scalar_tensor_tensor: all-bf16 SBUF add, one pass */
		{ 512 + 64 + 60, VE },     /* tensor_scalar_reduce: N + MIN_II */
		{ 64 + 60, VE },           /* Vector transpose 32x32: N = 32, floored */
		{ 2 * 512 + 60, VE },      /* copy_predicated: data and predicate, 2N */
		{ 512 + 60, POOL },        /* select on GpSimd: N */
		{ 512 + 64 + 60, VE },     /* range_select with reduce_res: N + MIN_II */
		{ 512 + 60, VE },          /* max8 */
		{ 512 + 60, VE },          /* find_index8 */
		{ 512 + 60, VE },          /* match_replace8 */
		{ 64 + 60, POOL },         /* local_gather: N of dst = 64 */
		{ 512 + 60, POOL },        /* iota */
		{ 512 + 64 + 60, ACT },    /* activation with reduce_res: N + MIN_II */
		{ 8 * 512 + 60, VE },      /* tensor_scalar with a divide: 8N */
		{ 2 * 2 * 16 * 16 + 60, VE }, /* 4-D reduce over 1024 fp32 elements: N */
	};

	assert_int_equal(NX_ARRAY_SIZE(want), NX_ARRAY_SIZE(cases));
	return ns(want[i].cycles, want[i].mhz);
}

static void test_each_op(void **state)
{
	char *dir = nx_test_dir("nki_ops"), *data = nx_path_join(dir, "data");
	struct nx_duck *d = NULL;

	(void)state;
	for (size_t i = 0; i < NX_ARRAY_SIZE(cases); i++) {
		const struct op_case *c = &cases[i];
		char *prof = run(dir, data, c->name, c->line);

		nx_test_use_profile(&d, prof);
		if (q(d, "SELECT count(*) FROM Instruction WHERE opcode = '%s' AND engine = '%s' "
			 "AND nki_source_location = 'k.py:10' AND duration_ns = %" PRId64
			 " AND strpos(operands, '%s') > 0 AND sbuf_read_bytes = %" PRId64
			 " AND sbuf_write_bytes = %" PRId64, c->opcode, c->engine, expected_ns(i),
		      c->operands, c->sbuf_read, c->sbuf_write) != 1)
			fail_msg("%s: expected one %s %s row of %" PRId64 " ns with '%s', sbuf %"
				 PRId64 "/%" PRId64 "; got %.0f ns: check Instruction", c->name,
				 c->engine, c->opcode, expected_ns(i), c->operands, c->sbuf_read,
				 c->sbuf_write, q(d, "SELECT max(duration_ns) FROM Instruction "
						 "WHERE opcode = '%s'", c->opcode));
		free(prof);
	}
	nx_duck_close(d);
	free(data);
	free(dir);
}

/* The activation function shows in scalar_activation_fn, OpcodeSummary counts the
 * instruction, and both outputs (dst, reduce_res) show in SbufAllocation. */
static void test_activation_fn(void **state)
{
	struct one_run r;

	(void)state;
	open_run(&r, "nki_act", "act", cases[17].line);
	NX_EQ(r.d, "SELECT count(*) FROM Instruction WHERE scalar_activation_fn = 'GELU_APPRX_TANH'",
	      1);
	NX_EQ(r.d, "SELECT instruction_count FROM OpcodeSummary WHERE opcode = 'ACTIVATE'", 1);
	/* the second output occupies SBUF like dst does */
	NX_EQ(r.d, "SELECT count(*) > 0 FROM SbufAllocation WHERE start_address <= 8200 AND "
		 "end_address >= 8203", 1);
	NX_EQ(r.d, "SELECT count(*) > 0 FROM SbufAllocation WHERE start_address <= 2048 AND "
		 "end_address >= 3071", 1);
	close_run(&r);
}

/* A cast load, a transposing load and a store: the trigger instructions carry the
 * source bytes, and both loads complete before the store's wait. */
static void test_dma_cast_transpose(void **state)
{
	static const char body[] =
		"@10 Sync dma_trigger block=load_cast\n"
		"@11 Sync dma_trigger block=load_t\n"
		"@12 Vector tensor_copy src=sbuf[0:128]+0:fp32[512] dst=sbuf[0:128]+4096:fp32[512] "
		"wait=S[1]>=32 sig=S[3]++\n"
		"@13 Sync dma_trigger block=store wait=S[3]>=1\n"
		"@14 Sync event_semaphore wait=S[2]>=16\n";
	struct one_run r;

	(void)state;
	open_run(&r, "nki_dma", "dma", body);
	NX_EQ(r.d, "SELECT hbm_read_bytes FROM Instruction WHERE nki_source_location = 'k.py:10'",
	      128 * 512 * 2);
	NX_EQ(r.d, "SELECT hbm_read_bytes FROM Instruction WHERE nki_source_location = 'k.py:11'",
	      64 * 128 * 2);
	NX_EQ(r.d, "SELECT hbm_write_bytes FROM Instruction WHERE nki_source_location = 'k.py:13'",
	      128 * 512 * 4);
	NX_EQ(r.d, "SELECT count(*) FROM DmaPacketAggregated WHERE is_transpose_mode", 1);
	close_run(&r);
}

/* Matmul flags show in the operands and performance_mode, K*M stays last, the FLOPs
 * are unchanged (the double-row time is in test_sim_cost). */
static void test_matmul_flags(void **state)
{
	static const char body[] =
		"@10 Tensor ldweights src=sbuf[0:128]+0:fp8[128] stationary_onezero "
		"tile_position=0,0 tile_size=128,128\n"
		"@11 Tensor matmul src=sbuf[0:128]+1024:fp8[512] dst=psum[0:128]+0:fp32[512] "
		"moving_onezero perf=2x\n";
	struct one_run r;

	(void)state;
	open_run(&r, "nki_mm", "mm", body);
	NX_EQ(r.d, "SELECT count(*) FROM Instruction WHERE opcode = 'LDWEIGHTS' AND operands LIKE "
		 "'%stationary_onezero tile_position=0,0 tile_size=128,128'", 1);
	NX_EQ(r.d, "SELECT count(*) FROM Instruction WHERE opcode = 'MATMUL' AND operands LIKE "
		 "'% moving_onezero perf=2x 128*128'", 1);
	NX_EQ(r.d, "SELECT count(*) FROM Instruction WHERE opcode = 'MATMUL' AND "
		 "performance_mode = '2x'", 1);
	NX_EQ(r.d, "SELECT raw_flops FROM Instruction WHERE opcode = 'MATMUL'",
	      2.0 * 128 * 128 * 512);
	close_run(&r);
}

/* Decisions become Compiler Decision warnings, in listing order, with their location;
 * the recommend quality check does not count them. */
static void test_decisions(void **state)
{
	static const char body[] =
		"@20 decision alloc buffer=x_tile mem=sbuf partitions=128 bytes=2048 bufs=2\n"
		"decision spill buffer=kv save_bytes=262144 reload_bytes=262144\n"
		"@other.py:7 decision engine call=nisa.memset engine=GpSimd\n"
		"@10 Vector memset dst=sbuf[0:128]+0:fp32[512] imm=0\n";
	struct one_run r;

	(void)state;
	open_run(&r, "nki_dec", "dec", body);
	NX_EQ(r.d, "SELECT count(*) FROM Warning WHERE category = 'Compiler Decision'", 3);
	NX_EQ(r.d, "SELECT count(*) FROM Warning WHERE category = 'Compiler Decision' AND message = "
		 "'alloc buffer=x_tile mem=sbuf partitions=128 bytes=2048 bufs=2 (k.py:20)'", 1);
	NX_EQ(r.d, "SELECT count(*) FROM Warning WHERE message = "
		 "'spill buffer=kv save_bytes=262144 reload_bytes=262144'", 1);
	NX_EQ(r.d, "SELECT count(*) FROM Warning WHERE message = "
		 "'engine call=nisa.memset engine=GpSimd (other.py:7)'", 1);
	close_run(&r);
}

/* The simulator refuses what the hardware would: wrong engine, shapes, bounds; the
 * error names the instruction and its source line. */
static void test_validate(void **state)
{
	static const struct {
		const char *line, *error;
	} bad[] = {
		{ "@9 GpSimd bn_stats src=sbuf[0:128]+0:fp32[512] dst=sbuf[0:128]+2048:fp32[6]",
		  "GpSimd instruction 0 (BN_STATS) at k.py:9: BN_STATS cannot run on the GpSimd "
		  "engine" },
		{ "@9 Vector bn_stats src=sbuf[0:128]+0:fp32[600] dst=sbuf[0:128]+4096:fp32[6]",
		  "Vector instruction 0 (BN_STATS) at k.py:9: BN_STATS takes at most 512 elements "
		  "per partition (600) and writes 6 (6)" },
		{ "@9 Vector bn_aggr src=sbuf[0:128]+0:fp32[7] dst=sbuf[0:128]+4096:fp32[2]",
		  "BN_AGGR reads a multiple of 3 elements per partition (7) and writes 2 (2)" },
		{ "@9 Vector transpose src=sbuf[0:64]+0:bf16[32] dst=sbuf[0:32]+128:bf16[64]",
		  "a Vector TRANSPOSE maps P x F to F x P with P, F <= 32 "
		  "(here 64 x 32 to 32 x 64)" },
		{ "@9 Vector reciprocal src=sbuf[0:128]+0:fp32[8] dst=sbuf[0:64]+64:fp32[8]",
		  "RECIPROCAL reads 128 partitions but writes 64" },
		{ "@9 Vector reciprocal src=sbuf[0:128]+0:fp32[8] dst=sbuf[0:128]+64:fp32[4]",
		  "RECIPROCAL reads 8 elements per partition but writes 4" },
		{ "@9 Vector tensor_scalar src=sbuf[0:128]+0:fp32[8] dst=sbuf[0:128]+64:fp32[8] "
		  "op0=add operand0=sbuf[0:128]+96:fp32[2] op1=mul operand1=2",
		  "operand0 must be 128 partitions x 1 element (it is 128 x 2)" },
		{ "@9 Scalar activate src=sbuf[0:128]+0:fp32[8] dst=sbuf[0:128]+64:fp32[8] "
		  "bias=sbuf[0:64]+96:fp32[1]",
		  "bias must be 128 partitions x 1 element (it is 64 x 1)" },
		{ "@9 Vector tensor_scalar_reduce src=sbuf[0:128]+0:fp32[8] "
		  "dst=sbuf[0:128]+64:fp32[8] op0=add operand0=1 reduce_op=add "
		  "reduce_res=sbuf[0:64]+96:fp32[1]",
		  "reduce_res has 64 partitions, src0 128" },
		{ "@9 Vector max8 src=sbuf[0:128]+0:fp32[16] dst=sbuf[0:128]+64:fp32[4]",
		  "MAX8 writes 8 elements per partition from at least 8 (here 4 from 16)" },
		{ "@9 Vector find_index8 src=sbuf[0:128]+0:fp32[16] vals=sbuf[0:128]+64:fp32[4] "
		  "dst=sbuf[0:128]+128:uint32[8]",
		  "FIND_INDEX8 takes vals of 128 partitions x 8 and writes 8 per partition" },
		{ "@9 GpSimd select src=sbuf[0:128]+0:fp32[16] src1=sbuf[0:128]+64:fp32[16] "
		  "predicate=sbuf[0:128]+128:uint8[8] dst=sbuf[0:128]+256:fp32[16]",
		  "predicate is 8 elements per partition, src0 16" },
		{ "@9 Vector tensor_tensor_scan src=sbuf[0:128]+0:fp32[16] "
		  "src1=sbuf[0:128]+64:fp32[8] dst=sbuf[0:128]+256:fp32[16] op0=mul op1=add",
		  "src1 is 8 elements per partition, src0 16" },
		{ "@9 Vector tensor_reduce src=sbuf[0:128]+229000:fp32[2,2,16,16]{1,32,2,64} "
		  "dst=sbuf[0:128]+0:fp32[16,16] alu=add axes=2",
		  "src0 bytes 229000..233095 of each partition are outside SBUF (229376 bytes per "
		  "partition on trn2)" },
		{ "@9 Tensor matmul src=sbuf[0:128]+0:bf16[128] dst=psum[0:128]+0:fp32[128] "
		  "tile_position=64,0 tile_size=128,64",
		  "PE tile at 64,0 of size 128,64 leaves the 128x128 array" },
		{ "@9 Vector affine_select src=sbuf[0:128]+0:fp32[16] dst=sbuf[0:128]+64:fp32[16] "
		  "cmp_op=is_ge", "AFFINE_SELECT cannot run on the Vector engine" },
		{ "@9 Vector local_gather src=sbuf[0:16]+0:fp32[16] index=sbuf[0:16]+64:uint16[4] "
		  "dst=sbuf[0:16]+96:fp32[8]", "LOCAL_GATHER cannot run on the Vector engine" },
	};
	(void)state;
	for (size_t i = 0; i < NX_ARRAY_SIZE(bad); i++) {
		char *text = nx_xasprintf("%s%s\n", head, bad[i].line);
		struct nx_neff n;
		struct nx_err err = { 0 };

		if (nx_listing_assemble("k.lst", text, strlen(text), &n, &err))
			fail_msg("%s: %s", bad[i].line, err.msg);
		if (nx_sim_validate(&n, "trn2", &err) != NX_ESIM)
			fail_msg("%s: accepted", bad[i].line);
		if (!strstr(err.msg, bad[i].error) || !strstr(err.msg, "at k.py:9: "))
			fail_msg("\"%s\" does not contain \"%s\"", err.msg, bad[i].error);
		nx_neff_release(&n);
		free(text);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_each_op),
		cmocka_unit_test(test_activation_fn),
		cmocka_unit_test(test_dma_cast_transpose),
		cmocka_unit_test(test_matmul_flags),
		cmocka_unit_test(test_decisions),
		cmocka_unit_test(test_validate),
	};

	return nx_test_done(cmocka_run_group_tests(tests, NULL, NULL));
}
