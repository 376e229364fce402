/* SPDX-License-Identifier: MIT
 * test_listing.c: the kernel listing assembler. A listing with every kind of line is
 * assembled and checked field by field (and survives a NEFF write and read); then
 * bad listings must fail with "name:LINE: problem" messages: unknown opcode, bad
 * operand, missing block, unknown tensor, bad slices and misplaced lines; HBM descriptor
 * sides skip dims sliced to one element. */
#include "common/compat.h"
#include "common/fsutil.h"
#include "common/xalloc.h"
#include "kernels/listing.h"
#include "neff/neff.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "helper/asserts.h"
#include "helper/fixture.h"

#define assert_contains(hay, needle)                                                       \
	do {                                                                              \
		if (!strstr((hay), (needle)))                                             \
			fail_msg("\"%s\" does not contain \"%s\"", (hay), (needle));     \
	} while (0)

static const char good[] =
	"# a complete little kernel\n"
	"kernel demo\n"
	"source kernels/demo.py\n"
	"frame demo kernels/demo.py:5\n"
	"tensor a input bf16 256x1024\n"
	"tensor out output bf16 128x512\n"
	"queue qSyncIO0 in Sync sem=3\n"
	"queue qVectorIO0 out Vector sem=4 engine=2 idx=1\n"
	"\n"
	"block load0 qSyncIO0\n"
	"  desc a[128:256, 0:1024:2] -> sbuf[0:128]+0x100   # every other column\n"
	"block store0 qVectorIO0 sem=9\n"
	"  desc sbuf[0:128]+0 -> out[0:128, 0:512]\n"
	"@12 Sync dma_trigger block=load0\n"
	"@14 Tensor ldweights src=sbuf[0:128]+0x100:bf16[128] wait=S[3]>=16\n"
	"@14 Tensor matmul src=sbuf[0:128]+0x200:bf16[512] dst=psum[0:128]+2048:fp32[512] acc "
	"sig=S[5]++\n"
	"@15 Scalar activate act=exp imm=0.5 perf=2x src=psum[0:128]+2048:fp32[512] "
	"dst=sbuf[0:64]+0:bf16[256,2]{1,256} wait=S[5]==1 sig=S[6]+=2\n"
	"iter m=2@7 n=-1@8\n"
	"@other.py:3 Vector tensor_tensor alu=max src=sbuf[0:128]+0:bf16[512] "
	"src1=sbuf[0:128]+1024:bf16[512] dst=sbuf[0:128]+0:bf16[512] bir=77\n"
	"iter\n"
	"@16 Vector dma_trigger block=store0\n"
	"Sync nop\n";

static void test_good(void **state)
{
	struct nx_neff n;
	struct nx_err err = { 0 };
	const struct nx_dma_block *b;
	const struct nx_inst *in;

	(void)state;
	assert_int_equal(nx_listing_assemble("good.txt", good, strlen(good), &n, &err), 0);
	assert_string_equal(n.hdr.name, "demo");
	assert_int_equal(n.ntensors, 2);
	assert_string_equal(n.tensors[0].name, "a");
	assert_int_equal(n.tensors[0].kind, NX_TENSOR_IN);
	assert_int_equal(n.tensors[0].size, 256 * 1024 * 2);
	assert_int_equal(n.tensors[1].kind, NX_TENSOR_OUT);
	assert_int_equal(n.nqueues, 2);
	assert_int_equal(n.queues[0].semaphore, 3);
	assert_int_equal(n.queues[0].owner, NX_ENGINE_SYNC);
	assert_int_equal(n.queues[0].queue_type, NX_QT_INPUT);
	assert_int_equal(n.queues[1].engine_idx, 2);
	assert_int_equal(n.queues[1].queue_idx, 1);
	/* blocks are ordered by triggering engine: Vector's store first, then Sync's load */
	assert_int_equal(n.nblocks, 2);
	b = &n.blocks[0];
	assert_int_equal(b->engine, NX_ENGINE_VECTOR);
	assert_int_equal(b->semaphore, 9);
	assert_int_equal(b->desc[0].from_loc, NX_LOC_SBUF);
	assert_int_equal(b->desc[0].to_loc, NX_LOC_HBM);
	b = &n.blocks[1];
	assert_int_equal(b->engine, NX_ENGINE_SYNC);
	assert_int_equal(b->ndesc, 1);
	assert_int_equal(b->desc[0].from_var, 0);
	assert_int_equal(b->desc[0].from_off, 128 * 1024);
	assert_int_equal(b->desc[0].from_sizes[0], 128);
	assert_int_equal(b->desc[0].from_sizes[1], 512);
	assert_int_equal(b->desc[0].from_steps[0], 1024);
	assert_int_equal(b->desc[0].from_steps[1], 2);
	assert_int_equal(b->desc[0].to_sizes[0], 128);
	assert_int_equal(b->desc[0].to_sizes[1], 512);
	assert_int_equal(b->desc[0].to_off, 0x100);
	assert_int_equal(b->bytes, 128 * 512 * 2);
	assert_int_equal(n.ninst[NX_ENGINE_SYNC], 2);
	assert_int_equal(n.inst[NX_ENGINE_SYNC][0].opcode, NX_OP_DMA_TRIGGER);
	assert_int_equal(n.inst[NX_ENGINE_SYNC][0].dma_block, 1);
	assert_int_equal(n.inst[NX_ENGINE_VECTOR][1].dma_block, 0);
	assert_int_equal(n.inst[NX_ENGINE_SYNC][1].debug_id, NX_NONE32);
	/* the MATMUL shares its LDWEIGHTS' bir id */
	in = n.inst[NX_ENGINE_TENSOR];
	assert_int_equal(in[0].wait_cond, NX_WAIT_GE);
	assert_int_equal(in[0].wait_sem, 3);
	assert_int_equal(in[0].wait_value, 16);
	assert_int_equal(in[1].bir_id, in[0].bir_id);
	assert_true(in[1].flags & NX_INST_ACCUMULATE);
	assert_int_equal(in[1].sig_op, NX_SEM_INC);
	assert_int_equal(in[1].dst.mem, NX_MEM_PSUM);
	assert_int_equal(in[1].dst.offset, 2048);
	assert_int_equal(in[1].dst.dtype, NX_DT_FP32);
	in = n.inst[NX_ENGINE_SCALAR];
	assert_int_equal(in[0].act_fn, NX_ACT_EXP);
	assert_int_equal(in[0].perf_mode, 1);
	NX_ASSERT_CMP(in[0].imm, ==, 0.5f);
	assert_int_equal(in[0].wait_cond, NX_WAIT_EQ);
	assert_int_equal(in[0].sig_op, NX_SEM_ADD);
	assert_int_equal(in[0].sig_value, 2);
	assert_int_equal(nx_ap_partitions(&in[0].dst), 64);
	assert_int_equal(in[0].dst.size[1], 2);
	assert_int_equal(in[0].dst.step[1], 256);
	in = n.inst[NX_ENGINE_VECTOR];
	assert_int_equal(in[0].alu, NX_ALU_MAX);
	assert_int_equal(in[0].bir_id, 77);
	assert_int_equal(in[0].src1.offset, 1024);
	/* debug info: one kernel instruction per source line */
	assert_int_equal(n.dbg.ninsts, 5);
	assert_string_equal(n.dbg.insts[n.inst[NX_ENGINE_TENSOR][0].debug_id].file, "kernels/demo.py");
	assert_int_equal(n.dbg.insts[n.inst[NX_ENGINE_TENSOR][0].debug_id].line, 14);
	assert_int_equal(n.inst[NX_ENGINE_TENSOR][0].debug_id, n.inst[NX_ENGINE_TENSOR][1].debug_id);
	assert_string_equal(n.dbg.insts[n.inst[NX_ENGINE_VECTOR][0].debug_id].bir_location,
			    "other.py:3");
	assert_int_equal(n.dbg.nitervars, 2);
	assert_string_equal(n.dbg.itervars[0].name, "m");
	assert_int_equal(n.dbg.itervars[0].value, 2);
	assert_int_equal(n.dbg.itervars[0].line, 7);
	assert_int_equal(n.dbg.itervars[0].parent, -1);
	assert_string_equal(n.dbg.itervars[1].name, "n");
	assert_int_equal(n.dbg.itervars[1].value, -1);
	assert_int_equal(n.dbg.itervars[1].parent, 0);
	assert_string_equal(n.dbg.itervars[1].file, "kernels/demo.py");
	assert_int_equal(n.dbg.insts[n.inst[NX_ENGINE_VECTOR][0].debug_id].iteration_vars_id, 1);
	assert_int_equal(n.dbg.insts[n.inst[NX_ENGINE_VECTOR][1].debug_id].iteration_vars_id, -1);
	assert_int_equal(n.dbg.nframes, 1);
	assert_string_equal(n.dbg.frames[0].function, "demo");
	assert_int_equal(n.dbg.insts[0].stack_frame_id, 0);
	nx_neff_release(&n);
}

static void test_roundtrip(void **state)
{
	struct nx_neff a, b;
	struct nx_err err = { 0 };
	char *dir = nx_test_dir("listing"), *path = nx_path_join(dir, "roundtrip.neff");

	(void)state;
	free(dir);
	assert_int_equal(nx_listing_assemble("good.txt", good, strlen(good), &a, &err), 0);
	if (nx_neff_write(path, &a, &err) || nx_neff_read(path, &b, &err))
		fail_msg("%s", err.msg);
	assert_int_equal(b.nblocks, a.nblocks);
	for (int e = 0; e < NX_ENGINE_COUNT; e++) {
		assert_int_equal(b.ninst[e], a.ninst[e]);
		for (size_t i = 0; i < a.ninst[e]; i++) {
			assert_int_equal(b.inst[e][i].dma_block, a.inst[e][i].dma_block);
			assert_int_equal(b.inst[e][i].opcode, a.inst[e][i].opcode);
		}
	}
	assert_int_equal(b.blocks[1].desc[0].from_off, a.blocks[1].desc[0].from_off);
	assert_int_equal(b.dbg.ninsts, a.dbg.ninsts);
	assert_int_equal(b.dbg.insts[0].line, a.dbg.insts[0].line);
	assert_memory_equal(b.hdr.uuid, a.hdr.uuid, 16);
	remove(path);
	free(path);
	nx_neff_release(&a);
	nx_neff_release(&b);
}

/* HBM descriptor sides: dims sliced to one element only move the offset, so the first
 * dim of more than one element maps to the partitions, and a tensor of rank 6 takes
 * descriptors that slice at most 4 of its dims. */
static void test_one_element_dims(void **state)
{
	static const char text[] =
		"kernel k\n"
		"tensor t3 input fp32 4x128x64\n"
		"tensor t6 input bf16 2x2x2x128x4x8\n"
		"queue q0 in Sync sem=1\n"
		"block b0 q0\n"
		"  desc t3[2, 0:128, 0:64] -> sbuf[0:128]+0\n"
		"block b1 q0\n"
		"  desc t6[1, 0, 1, 0:128, 0:4, 0:8] -> sbuf[0:128]+0\n"
		"Sync dma_trigger block=b0\n"
		"Sync dma_trigger block=b1\n";
	struct nx_neff n;
	struct nx_err err = { 0 };
	const struct nx_dma_desc *d;

	(void)state;
	assert_int_equal(nx_listing_assemble("dims.txt", text, strlen(text), &n, &err), 0);
	d = &n.blocks[0].desc[0];
	assert_int_equal(d->from_ndim, 2);
	assert_int_equal(d->from_off, 2 * 128 * 64);
	assert_int_equal(d->from_sizes[0], 128);
	assert_int_equal(d->from_sizes[1], 64);
	assert_int_equal(d->from_steps[0], 64);
	assert_int_equal(d->bytes, 128 * 64 * 4);
	d = &n.blocks[1].desc[0];
	assert_int_equal(d->from_ndim, 3);
	assert_int_equal(d->from_off, (4 + 1) * 128 * 32);
	assert_int_equal(d->from_sizes[0], 128);
	assert_int_equal(d->from_sizes[2], 8);
	nx_neff_release(&n);
}

/* Assembles head + one line and expects the error text. */
static void bad(const char *body, const char *expect)
{
	const char *head = "kernel k\nsource k.py\ntensor a input bf16 128x512\n"
			   "queue q0 in Sync sem=1\nblock b0 q0\n  desc a[0:128, 0:512] -> sbuf[0:128]+0\n";
	char *text = nx_xasprintf("%s%s", head, body);
	struct nx_neff n;
	struct nx_err err = { 0 };

	if (nx_listing_assemble("bad.txt", text, strlen(text), &n, &err) == 0)
		fail_msg("'%s' was accepted", body);
	assert_int_equal(err.code, NX_EUSAGE);
	assert_contains(err.msg, expect);
	free(text);
}

static void test_bad_input(void **state)
{
	(void)state;
	bad("@3 Vector frobnicate dst=sbuf[0:128]+0:bf16[4]\n", "bad.txt:7: unknown opcode 'frobnicate'");
	bad("\n\n@3 Warp nop\n", "bad.txt:9: unknown engine or directive 'Warp'");
	bad("@3 Vector tensor_copy src=sbuf[0:129]+0:bf16[4] dst=sbuf[0:1]+0:bf16[4]\n",
	    "bad.txt:7: bad operand 'sbuf[0:129]+0:bf16[4]': partitions 0:129 are outside 0:128");
	bad("@3 Vector tensor_copy src=hbm[0:1]+0:bf16[4] dst=sbuf[0:1]+0:bf16[4]\n",
	    "memory must be sbuf or psum");
	bad("@3 Vector tensor_copy src=sbuf[0:1]+0:bf17[4] dst=sbuf[0:1]+0:bf16[4]\n",
	    "unknown dtype 'bf17'");
	bad("@3 Vector tensor_copy src=sbuf[0:1]+0:bf16[4] wait=S[300]>=1\n",
	    "index must be 0..255");
	bad("@3 Vector tensor_copy src=sbuf[0:1]+0:bf16[4] sig=S[3]*=2\n", "bad signal");
	bad("@3 Vector tensor_copy colour=red\n", "unknown operand 'colour=red'");
	bad("@3 Sync dma_trigger block=nope\n", "bad.txt:7: DMA trigger names missing block 'nope'");
	bad("@3 Sync dma_trigger\n", "DMA trigger without block=NAME");
	bad("@3 Vector nop block=b0\n", "bad.txt:7: NOP takes no 'block='");
	bad("block b1 q0\n  desc zz[0:1, 0:1] -> sbuf[0:1]+0\n", "bad.txt:8: descriptor names unknown tensor 'zz'");
	bad("block b1 q0\n  desc a[0:1] -> sbuf[0:1]+0\n", "needs 2 slices");
	bad("block b1 q0\n  desc a[0:200, 0:1] -> sbuf[0:128]+0\n", "is outside 0:128");
	bad("block b1 q0\n  desc a[0:128, 0:4] -> sbuf[0:2]+0\n",
	    "the outer HBM dimension (128) must match the 2 partitions");
	bad("block b1 q0\n  desc sbuf[0:3]+0:bf16[1] -> sbuf[0:2]+64\n", "do not split evenly");
	bad("tensor t5 input bf16 2x2x2x2x32\nblock b1 q0\n"
	    "  desc t5[0:2, 0:2, 0:2, 0:2, 0:8] -> sbuf[0:2]+0\n", "slices more than 4 dims of 't5'");
	bad("tensor t3 input bf16 4x128x8\nblock b1 q0\n  desc t3[1, 0:128, 0:8] -> sbuf[0:64]+0\n",
	    "the outer HBM dimension (128) must match the 64 partitions");
	bad("block b1 q0\n  desc sbuf[0:3]+0 -> sbuf[0:2]+64\n", "needs ':dtype[N]'");
	bad("block b1 nosuchq\n", "unknown queue 'nosuchq'");
	bad("block b0 q0\n", "block 'b0' is declared twice");
	bad("Sync nop\n  desc a[0:1, 0:1] -> sbuf[0:1]+0\n", "'desc' outside a block");
	bad("tensor t input bf16 0x4\n", "bad shape '0x4'");
	bad("queue q9 sideways Sync\n", "unknown queue type 'sideways'");
	bad("@x Sync nop\n", "bad source line 'x'");
	bad("iter m\n", "bad iteration variable 'm'");
	bad("iter m=1@x\n", "bad loop line 'x'");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_good),
		cmocka_unit_test(test_roundtrip),
		cmocka_unit_test(test_one_element_dims),
		cmocka_unit_test(test_bad_input),
	};

	return nx_test_done(cmocka_run_group_tests(tests, NULL, NULL));
}
