/* SPDX-License-Identifier: MIT
 * test_sim_run.c: whole simulator runs on small listings, checked record by record:
 * semaphore waits recorded as wait time, DMA packets and the 16 semaphore writes of a
 * transfer, LDWEIGHTS overlapping the previous MATMUL, throttling after idle and
 * under low PE-array utilisation,
 * notifications, the hardware-DGE trigger cost and its engine-by-engine descriptors,
 * static descriptor rings, the semaphore latency, trn1's stall of VectorE reads of
 * DMA-written bytes, the deadlock
 * and bad-operand errors, byte-identical captures, and a capture moved to a device clock
 * (start_ns) differing only in its records' times. */
#include "common/compat.h"
#include "common/fsutil.h"
#include "common/strbuf.h"
#include "common/xalloc.h"
#include "kernels/listing.h"
#include "ntff/ntff.h"
#include "sim/sim.h"

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

struct recs {
	struct nx_rec *r;
	size_t n, cap;
};

static int collect(void *arg, const struct nx_rec *rec, struct nx_err *err)
{
	struct recs *rs = arg;

	(void)err;
	NX_GROW(rs->r, rs->n + 1, rs->cap);
	rs->r[rs->n++] = *rec;
	return 0;
}

static const char head[] =
	"kernel t\n"
	"source kernels/t.py\n"
	"tensor x input bf16 128x512\n"
	"tensor y output bf16 128x512\n"
	"queue qSyncIO0 in Sync sem=1\n"
	"block b0 qSyncIO0\n"
	"  desc x[0:128, 0:512] -> sbuf[0:128]+0\n";

/* Assembles head + body and runs it; returns the run's code. */
static int run(const char *body, bool packets, const char *target, struct recs *rs,
	       struct nx_sim_stats *st, struct nx_err *err)
{
	char *text = nx_xasprintf("%s%s", head, body);
	struct nx_sim_opts o = { .target = target, .dma_packets = packets, .exec_index = 1 };
	struct nx_sim_sink sink = { collect, rs };
	struct nx_neff neff;
	int rc;

	memset(rs, 0, sizeof(*rs));
	rc = nx_listing_assemble("t.txt", text, strlen(text), &neff, err);
	free(text);
	assert_int_equal(rc, 0);
	rc = nx_sim_run(&neff, &o, &sink, st, err);
	nx_neff_release(&neff);
	return rc;
}

static const struct nx_rec *find(const struct recs *rs, int kind, int engine, uint32_t index)
{
	for (size_t i = 0; i < rs->n; i++)
		if (rs->r[i].kind == kind && (kind != NX_REC_INST ||
					      (rs->r[i].u.inst.engine == engine &&
					       rs->r[i].u.inst.index == index)))
			return &rs->r[i];
	return NULL;
}

static size_t count(const struct recs *rs, int kind)
{
	size_t n = 0;

	for (size_t i = 0; i < rs->n; i++)
		n += rs->r[i].kind == kind;
	return n;
}

static void test_wait_and_dma(void **state)
{
	struct recs rs;
	struct nx_sim_stats st;
	struct nx_err err = { 0 };
	const struct nx_rec *v, *sync;
	int32_t last = 0;

	(void)state;
	assert_int_equal(run("@10 Sync dma_trigger block=b0\n"
			     "@12 Vector tensor_copy src=sbuf[0:128]+0:bf16[512] "
			     "dst=sbuf[0:128]+4096:bf16[512] wait=S[1]>=16\n",
			     true, "trn2", &rs, &st, &err), 0);
	sync = find(&rs, NX_REC_INST, NX_ENGINE_SYNC, 0);
	assert_non_null(sync);
	assert_int_equal(sync->u.inst.start, 0);
	assert_int_equal(sync->u.inst.end, 53); /* 64 cycles at 1.2 GHz */
	/* trigger 53.333 ns + latency 1300 ns + one 8 KiB run (the source is contiguous in HBM)
	 * 9 + 351.584 ns + 9.171 ns semaphore write */
	v = find(&rs, NX_REC_INST, NX_ENGINE_VECTOR, 0);
	assert_non_null(v);
	assert_int_equal(v->u.inst.start, 1723);
	assert_int_equal(v->u.inst.wait_ticks, 1723);
	/* 512 + 60 cycles at 0.96 GHz: it waits on a DMA, not on an earlier instruction of
	 * its own engine, so no dependent overhead */
	assert_int_equal(v->u.inst.end, 2318);
	/* 16 data packets of 8 KiB and 16 four-byte semaphore writes, all from instruction 0 */
	assert_int_equal(count(&rs, NX_REC_DMA), 32);
	for (size_t i = 0; i < rs.n; i++) {
		if (rs.r[i].kind == NX_REC_DMA) {
			assert_int_equal(rs.r[i].u.dma.trigger, sync->u.inst.id);
			assert_int_equal(rs.r[i].u.dma.transfer, 0);
			assert_true(rs.r[i].u.dma.bytes == 8192 || rs.r[i].u.dma.bytes == 4);
		}
		if (rs.r[i].kind == NX_REC_SEM) {
			assert_int_equal(rs.r[i].u.sem.sem, 1);
			assert_int_equal(rs.r[i].u.sem.source, NX_SEMSRC_AXI);
			last = rs.r[i].u.sem.value;
		}
	}
	assert_int_equal(last, 16);
	assert_int_equal(st.end_ns, 2318);
	assert_int_equal(st.insts, 2);
	assert_int_equal(st.dma_packets, 32);
	free(rs.r);
	/* without DGE notifications: same timing, no packet records */
	assert_int_equal(run("@10 Sync dma_trigger block=b0\n"
			     "@12 Vector tensor_copy src=sbuf[0:128]+0:bf16[512] "
			     "dst=sbuf[0:128]+4096:bf16[512] wait=S[1]>=16\n",
			     false, "trn2", &rs, &st, &err), 0);
	assert_int_equal(count(&rs, NX_REC_DMA), 0);
	assert_int_equal(count(&rs, NX_REC_SEM), 16);
	assert_int_equal(count(&rs, NX_REC_EXEC), 2);
	assert_int_equal(st.end_ns, 2318);
	free(rs.r);
}

static void test_tensor_pipeline(void **state)
{
	struct recs rs;
	struct nx_sim_stats st;
	struct nx_err err = { 0 };
	const struct nx_rec *mm0, *lw1, *mm1;

	(void)state;
	assert_int_equal(run("@20 Tensor ldweights src=sbuf[0:128]+0:bf16[128]\n"
			     "@20 Tensor matmul src=sbuf[0:128]+256:bf16[512] dst=psum[0:128]+0:fp32[512]\n"
			     "@21 Tensor ldweights src=sbuf[0:128]+0:bf16[128]\n"
			     "@21 Tensor matmul src=sbuf[0:128]+256:bf16[512] dst=psum[0:128]+2048:fp32[512]\n",
			     false, "trn1", &rs, &st, &err), 0);
	mm0 = find(&rs, NX_REC_INST, NX_ENGINE_TENSOR, 1);
	lw1 = find(&rs, NX_REC_INST, NX_ENGINE_TENSOR, 2);
	mm1 = find(&rs, NX_REC_INST, NX_ENGINE_TENSOR, 3);
	/* trn1: no throttling; LDWEIGHTS 32 cycles at 2.8 GHz, MATMUL 512 cycles */
	assert_int_equal(mm0->u.inst.start, 11);
	assert_int_equal(lw1->u.inst.start, mm0->u.inst.start); /* in the MATMUL's background */
	assert_int_equal(mm1->u.inst.start, mm0->u.inst.end);
	assert_int_equal(mm0->u.inst.end, 194); /* 11.429 + 182.857 ns */
	assert_int_equal(count(&rs, NX_REC_THROTTLE), 0);
	free(rs.r);
}

static void test_throttle(void **state)
{
	struct recs rs;
	struct nx_sim_stats st;
	struct nx_err err = { 0 };
	const struct nx_rec *mm0 = NULL;
	size_t nthr = 0;

	(void)state;
	/* trn2: a cold Tensor engine starts at 8/16 of its rate */
	assert_int_equal(run("@20 Tensor matmul src=sbuf[0:128]+256:bf16[512] dst=psum[0:128]+0:fp32[512]\n",
			     false, "trn2", &rs, &st, &err), 0);
	mm0 = find(&rs, NX_REC_INST, NX_ENGINE_TENSOR, 0);
	assert_int_equal(mm0->u.inst.end - mm0->u.inst.start, 426); /* 213.333 ns x 2 */
	for (size_t i = 0; i < rs.n; i++) {
		if (rs.r[i].kind != NX_REC_THROTTLE)
			continue;
		assert_int_equal(rs.r[i].u.throttle.k, 8);
		assert_int_equal(rs.r[i].u.throttle.n, 16);
		assert_int_equal(rs.r[i].u.throttle.ts, 0);
		nthr++;
	}
	assert_int_equal(nthr, 1); /* the run ends inside the first ramp step */
	free(rs.r);
}

/* Throttle records at k = 8/16 (one per arming of the ramp) in a run of n back-to-back
 * matmuls under a stationary of `cols` columns. */
static size_t rearms(unsigned cols, unsigned n)
{
	struct nx_strbuf sb = NX_STRBUF_INIT;
	struct recs rs;
	struct nx_sim_stats st;
	struct nx_err err = { 0 };
	size_t arms = 0;

	for (unsigned i = 0; i < n; i++)
		nx_strbuf_addf(&sb, "@20 Tensor ldweights src=sbuf[0:128]+0:bf16[%u]\n"
			       "@20 Tensor matmul src=sbuf[0:128]+256:bf16[512] "
			       "dst=psum[0:%u]+0:fp32[512]\n", cols, cols);
	assert_int_equal(run(nx_strbuf_str(&sb), false, "trn2", &rs, &st, &err), 0);
	for (size_t i = 0; i < rs.n; i++)
		arms += rs.r[i].kind == NX_REC_THROTTLE && rs.r[i].u.throttle.k == 8;
	nx_strbuf_release(&sb);
	free(rs.r);
	return arms;
}

static void test_throttle_utilisation(void **state)
{
	(void)state;
	/* 60 matmuls of 213 ns keep the engine busy ~13 us. Full-array tiles ramp up once;
	 * quarter-array tiles (32 stationary columns) use the PE array below 50%, so every
	 * 3 us window after the ramp re-arms it */
	assert_int_equal(rearms(128, 60), 1);
	NX_ASSERT_CMP(rearms(32, 60), >=, 3);
}

static void test_notify(void **state)
{
	struct recs rs;
	struct nx_sim_stats st;
	struct nx_err err = { 0 };
	const struct nx_rec *e;

	(void)state;
	assert_int_equal(run("@30 Sync notify imm=7\n", false, "trn2", &rs, &st, &err), 0);
	e = find(&rs, NX_REC_ERROR, 0, 0);
	assert_non_null(e);
	assert_int_equal(e->u.error.type, NX_ERRT_NOTIFICATION);
	assert_int_equal(e->u.error.ts, 53);
	assert_contains(e->u.error.metadata, "engine=Sync");
	free(rs.r);
}

static void test_deadlock(void **state)
{
	struct recs rs;
	struct nx_sim_stats st;
	struct nx_err err = { 0 };

	(void)state;
	assert_int_equal(run("@10 Sync dma_trigger block=b0\n"
			     "@12 Vector tensor_copy src=sbuf[0:128]+0:bf16[512] "
			     "dst=sbuf[0:128]+4096:bf16[512] wait=S[1]>=32\n",
			     false, "trn2", &rs, &st, &err), NX_ESIM);
	assert_contains(err.msg, "deadlock");
	assert_contains(err.msg, "Vector instruction 0 (TENSOR_COPY) at kernels/t.py:12");
	assert_contains(err.msg, "S[1] >= 32 but S[1] is 16");
	free(rs.r);
	/* two engines waiting on each other */
	assert_int_equal(run("@40 Vector event_semaphore wait=S[7]>=1 sig=S[8]++\n"
			     "@41 Scalar event_semaphore wait=S[8]>=1 sig=S[7]++\n",
			     false, "trn2", &rs, &st, &err), NX_ESIM);
	assert_contains(err.msg, "Vector instruction 0 (EVENT_SEMAPHORE) at kernels/t.py:40");
	assert_contains(err.msg, "Scalar instruction 0 (EVENT_SEMAPHORE) at kernels/t.py:41");
	free(rs.r);
}

static void test_bad_operands(void **state)
{
	struct recs rs;
	struct nx_sim_stats st;
	struct nx_err err = { 0 };

	(void)state;
	/* past the end of a trn2 partition (224 KiB) */
	assert_int_equal(run("@12 Vector tensor_copy src=sbuf[0:128]+0:bf16[512] "
			     "dst=sbuf[0:128]+229000:bf16[512]\n", false, "trn2", &rs, &st, &err),
			 NX_ESIM);
	assert_contains(err.msg, "Vector instruction 0 (TENSOR_COPY) at kernels/t.py:12");
	assert_contains(err.msg, "outside SBUF");
	free(rs.r);
	/* fits trn2 but not trn1 (192 KiB) */
	assert_int_equal(run("@13 Scalar activate act=exp src=sbuf[0:128]+200000:bf16[512] "
			     "dst=sbuf[0:128]+0:bf16[512]\n", false, "trn1", &rs, &st, &err), NX_ESIM);
	assert_contains(err.msg, "src0 bytes 200000..201023");
	free(rs.r);
	/* PSUM is 16 KiB per partition; MATMUL outputs stay in one 2 KiB bank */
	assert_int_equal(run("@14 Tensor matmul src=sbuf[0:128]+0:bf16[512] "
			     "dst=psum[0:128]+1024:fp32[512]\n", false, "trn2", &rs, &st, &err), NX_ESIM);
	assert_contains(err.msg, "crosses a PSUM bank");
	free(rs.r);
	/* MATMUL on the wrong engine */
	assert_int_equal(run("@15 Vector matmul src=sbuf[0:128]+0:bf16[512] "
			     "dst=psum[0:128]+0:fp32[512]\n", false, "trn2", &rs, &st, &err), NX_ESIM);
	assert_contains(err.msg, "MATMUL cannot run on the Vector engine");
	free(rs.r);
}

static void test_unknown_opcode(void **state)
{
	struct nx_neff neff;
	struct nx_err err = { 0 };
	struct nx_sim_opts o = { .target = "trn2", .exec_index = 1 };
	char *text = nx_xasprintf("%s@16 Sync nop\n", head);

	(void)state;
	assert_int_equal(nx_listing_assemble("t.txt", text, strlen(text), &neff, &err), 0);
	free(text);
	neff.inst[NX_ENGINE_SYNC][0].opcode = 99; /* as a hand-built NEFF could hold */
	assert_int_equal(nx_sim_run(&neff, &o, NULL, NULL, &err), NX_ESIM);
	assert_contains(err.msg, "Sync instruction 0 (opcode 99) at kernels/t.py:16: unknown opcode");
	nx_neff_release(&neff);
	/* a hand-built descriptor with impossible dimensions, or past its tensor */
	text = nx_xasprintf("%s@17 Sync dma_trigger block=b0\n", head);
	assert_int_equal(nx_listing_assemble("t.txt", text, strlen(text), &neff, &err), 0);
	free(text);
	neff.blocks[0].desc[0].from_ndim = 9;
	assert_int_equal(nx_sim_run(&neff, &o, NULL, NULL, &err), NX_ESIM);
	assert_contains(err.msg, "Sync instruction 0 (DMA_DIRECT2D) at kernels/t.py:17: DMA block 0 "
			"descriptor 0: bad dimensions");
	neff.blocks[0].desc[0].from_ndim = 2;
	neff.blocks[0].desc[0].from_off = 100;
	assert_int_equal(nx_sim_run(&neff, &o, NULL, NULL, &err), NX_ESIM);
	assert_contains(err.msg, "reads past the end of tensor 'x'");
	nx_neff_release(&neff);
}

static void test_instruction_fetch(void **state)
{
	struct recs rs;
	struct nx_sim_stats st;
	struct nx_err err = { 0 };
	struct nx_strbuf body = NX_STRBUF_INIT;
	uint32_t sizes[3] = { 0 };
	size_t n = 0;

	(void)state;
	nx_strbuf_addstr(&body, "queue qSyncInstr instruction Sync\n");
	for (int i = 0; i < 130; i++)
		nx_strbuf_addstr(&body, "Sync nop\n");
	assert_int_equal(run(body.buf, true, "trn2", &rs, &st, &err), 0);
	/* 130 instructions: chunks of 64, 64 and 2 instructions of 128 bytes */
	for (size_t i = 0; i < rs.n; i++) {
		if (rs.r[i].kind != NX_REC_DMA)
			continue;
		NX_ASSERT_CMP(n, <, 3);
		assert_int_equal(rs.r[i].u.dma.block, NX_NONE32);
		NX_ASSERT_CMP(rs.r[i].u.dma.trigger, ==, UINT64_MAX);
		assert_int_equal(rs.r[i].u.dma.queue, 1);
		sizes[n++] = rs.r[i].u.dma.bytes;
	}
	assert_int_equal(n, 3);
	assert_int_equal(sizes[0], 8192);
	assert_int_equal(sizes[1], 8192);
	assert_int_equal(sizes[2], 256);
	assert_int_equal(count(&rs, NX_REC_SEM), 0);
	nx_strbuf_release(&body);
	free(rs.r);
}

static void test_dge_and_sem_latency(void **state)
{
	static const char body[] =
		"queue qHw dynamic_hw Sync sem=3\n"
		"block b1 qHw\n"
		"  desc x[0:128, 0:512] -> sbuf[0:128]+8192\n"
		"@10 Sync dma_trigger block=b1\n"
		"@12 Scalar activate act=identity src=sbuf[0:128]+0:fp32[1] "
		"dst=sbuf[0:128]+4:fp32[1] sig=S[7]++\n"
		"@13 Scalar activate act=identity src=sbuf[0:128]+4:fp32[1] "
		"dst=sbuf[0:128]+8:fp32[1] wait=S[7]>=1\n"
		"@14 Vector tensor_copy src=sbuf[0:128]+0:fp32[1] dst=sbuf[0:128]+12:fp32[1] "
		"wait=S[7]>=1\n";
	struct recs rs;
	struct nx_sim_stats st;
	struct nx_err err = { 0 };
	const struct nx_rec *r;

	(void)state;
	assert_int_equal(run(body, false, "trn2", &rs, &st, &err), 0);
	/* trn2: a hardware-DGE trigger occupies SyncE for 600 ns */
	r = find(&rs, NX_REC_INST, NX_ENGINE_SYNC, 0);
	assert_int_equal(r->u.inst.end - r->u.inst.start, 600);
	/* 64 + 60 cycles at 1.2 GHz = 103.3 ns; the update lands 30 ns later; the dependent
	 * one costs 64 + 60 + 100 cycles = 186.7 ns */
	r = find(&rs, NX_REC_INST, NX_ENGINE_SCALAR, 1);
	assert_int_equal(r->u.inst.start, 133);
	assert_int_equal(r->u.inst.end, 320);
	/* waiting on another engine's update is not a dependency on its own previous
	 * instruction: 64 + 60 VectorE cycles at 0.96 GHz = 129.2 ns */
	r = find(&rs, NX_REC_INST, NX_ENGINE_VECTOR, 0);
	assert_int_equal(r->u.inst.start, 133);
	assert_int_equal(r->u.inst.end, 262);
	free(rs.r);
	/* the DGE hands each engine its descriptors in turn: engine e's packet starts
	 * (e + 1) x 600 / 16 ns into the trigger, plus the 1.3 us latency */
	assert_int_equal(run(body, true, "trn2", &rs, &st, &err), 0);
	for (size_t i = 0; i < rs.n; i++)
		if (rs.r[i].kind == NX_REC_DMA && rs.r[i].u.dma.bytes > 4)
			assert_int_equal(rs.r[i].u.dma.start,
					 (1300000 + (rs.r[i].u.dma.dma_engine + 1) * 37500) / 1000);
	assert_int_equal(count(&rs, NX_REC_DMA), 32);
	free(rs.r);
	/* trn1 has no hardware DGE: the trigger is a 64-cycle queue kick at 1.4 GHz, and
	 * all 16 engines start together */
	assert_int_equal(run(body, true, "trn1", &rs, &st, &err), 0);
	r = find(&rs, NX_REC_INST, NX_ENGINE_SYNC, 0);
	assert_int_equal(r->u.inst.end - r->u.inst.start, 45);
	for (size_t i = 0; i < rs.n; i++)
		if (rs.r[i].kind == NX_REC_DMA && rs.r[i].u.dma.bytes > 4)
			assert_int_equal(rs.r[i].u.dma.start, 1345); /* 45.714 + 1300 ns */
	free(rs.r);
}

/* Static descriptor rings (trn1): a queue of an engine starts one descriptor per
 * 160.001 ns (2720 B at 17 B/ns) and the engine spends at least 97.059 ns (1650 B) on
 * each, so small descriptors are held back, and a packet's record lasts until its
 * queue may start again. Software-DGE queues are not held back. */
static void test_descriptor_ring(void **state)
{
	static const char rings[] =
		"tensor w input bf16 128x2048\n"
		"queue qSyncIO1 in Sync sem=2\n"
		"queue qSw dynamic Sync sem=3\n"
		"block r0 qSyncIO1\n  desc w[0:128, 0:512] -> sbuf[0:128]+0\n"
		"block r1 qSyncIO1\n  desc w[0:128, 512:1024] -> sbuf[0:128]+1024\n"
		"block r2 qSyncIO0\n  desc w[0:128, 1024:1536] -> sbuf[0:128]+2048\n";
	struct recs rs;
	struct nx_sim_stats st;
	struct nx_err err = { 0 };
	char *body;
	uint64_t start[3] = { 0 }, end[3] = { 0 };
	unsigned n = 0;

	(void)state;
	/* two transfers on one ring: 8 strided 1 KiB rows per engine. The first reaches
	 * the queues at 45.714 (trigger) + 1300 ns and streams 8 x (9 + 60.236) ns; its
	 * descriptors hold the queue until 1345.714 + 8 x 160.001 = 2625.722 ns, then its
	 * semaphore write (9.235 ns) and the second transfer follow */
	body = nx_xasprintf("%s@10 Sync dma_trigger block=r0\n@11 Sync dma_trigger block=r1\n"
			    "@12 Sync event_semaphore wait=S[2]>=32\n", rings);
	assert_int_equal(run(body, true, "trn1", &rs, &st, &err), 0);
	free(body);
	for (size_t i = 0; i < rs.n && n < 3; i++)
		if (rs.r[i].kind == NX_REC_DMA && rs.r[i].u.dma.dma_engine == 0) {
			start[n] = rs.r[i].u.dma.start;
			end[n++] = rs.r[i].u.dma.end;
		}
	assert_int_equal(start[0], 1345);
	assert_int_equal(end[0], 2625);
	assert_int_equal(start[1], 2625);   /* the first transfer's semaphore write */
	assert_int_equal(start[2], 2634);   /* 2625.722 + 9.235 */
	assert_int_equal(end[2], 3914);     /* 2634.957 + 1280.008 */
	/* + 9.235 ns semaphore write + 64 SyncE cycles at 1.4 GHz */
	assert_int_equal(st.end_ns, 3969);
	free(rs.r);
	/* the same transfers on a software-DGE queue stream back to back: 1345.714 +
	 * 2 x (553.886 + 9.235) + 45.714 */
	body = nx_xasprintf("%sblock s0 qSw\n  desc w[0:128, 0:512] -> sbuf[0:128]+0\n"
			    "block s1 qSw\n  desc w[0:128, 512:1024] -> sbuf[0:128]+1024\n"
			    "@10 Sync dma_trigger block=s0\n@11 Sync dma_trigger block=s1\n"
			    "@12 Sync event_semaphore wait=S[3]>=32\n", rings);
	assert_int_equal(run(body, false, "trn1", &rs, &st, &err), 0);
	free(body);
	assert_int_equal(st.end_ns, 2517);
	free(rs.r);
	/* on two rings the second transfer waits only for the engine to take the first's
	 * 8 descriptors (1345.714 + 8 x 97.059 = 2122.186 ns), not for the first's ring;
	 * the first's semaphore write then waits for the engine to take the second's */
	body = nx_xasprintf("%s@10 Sync dma_trigger block=r0\n@11 Sync dma_trigger block=r2\n"
			    "@12 Sync event_semaphore wait=S[2]>=16\n"
			    "@12 Sync event_semaphore wait=S[1]>=16\n", rings);
	assert_int_equal(run(body, true, "trn1", &rs, &st, &err), 0);
	free(body);
	n = 0;
	for (size_t i = 0; i < rs.n && n < 3; i++)
		if (rs.r[i].kind == NX_REC_DMA && rs.r[i].u.dma.dma_engine == 0) {
			start[n] = rs.r[i].u.dma.start;
			end[n++] = rs.r[i].u.dma.end;
		}
	assert_int_equal(start[0], 1345);
	assert_int_equal(start[1], 2122);   /* r2's data, on qSyncIO0 */
	assert_int_equal(end[1], 3402);     /* 2122.186 + 1280.008 */
	assert_int_equal(start[2], 2898);   /* r0's semaphore write: 2122.186 + 776.472 */
	free(rs.r);
}

/* trn1: a VectorE instruction reading SBUF bytes a DMA wrote last issues 766 ns late
 * (counted as wait); bytes an engine wrote since do not stall it, nor do ScalarE's
 * reads, nor does trn2. */
static void test_landed_stall(void **state)
{
	static const char body[] =
		"@10 Sync dma_trigger block=b0\n"
		"@11 Scalar tensor_copy src=sbuf[0:128]+0:bf16[512] "
		"dst=sbuf[0:128]+12288:bf16[512] wait=S[1]>=16\n"
		"@12 Vector tensor_copy src=sbuf[0:128]+0:bf16[512] "
		"dst=sbuf[0:128]+4096:bf16[512] wait=S[1]>=16\n"
		"@13 Vector tensor_copy src=sbuf[0:128]+4096:bf16[512] "
		"dst=sbuf[0:128]+8192:bf16[512]\n"
		"@14 Vector tensor_copy src=sbuf[0:128]+512:bf16[64] "
		"dst=sbuf[0:128]+8192:bf16[64]\n"
		"@15 Vector memset dst=sbuf[0:128]+0:bf16[512] imm=0\n"
		"@16 Vector tensor_copy src=sbuf[0:128]+0:bf16[512] "
		"dst=sbuf[0:128]+4096:bf16[512]\n";
	struct recs rs;
	struct nx_sim_stats st;
	struct nx_err err = { 0 };
	const struct nx_rec *s0, *v[5];

	(void)state;
	assert_int_equal(run(body, false, "trn1", &rs, &st, &err), 0);
	s0 = find(&rs, NX_REC_INST, NX_ENGINE_SCALAR, 0);
	for (uint32_t i = 0; i < 5; i++)
		assert_non_null(v[i] = find(&rs, NX_REC_INST, NX_ENGINE_VECTOR, i));
	/* both wait for the load; ScalarE starts when it lands, VectorE 766 ns later */
	assert_int_equal(v[0]->u.inst.start, s0->u.inst.start + 766);
	assert_int_equal(v[0]->u.inst.wait_ticks, v[0]->u.inst.start);
	assert_int_equal(v[1]->u.inst.start, v[0]->u.inst.end);       /* VectorE's bytes */
	assert_int_equal(v[2]->u.inst.start, v[1]->u.inst.end + 766); /* the load's again */
	assert_int_equal(v[2]->u.inst.wait_ticks, 766);
	assert_int_equal(v[3]->u.inst.start, v[2]->u.inst.end);       /* a write only */
	assert_int_equal(v[4]->u.inst.start, v[3]->u.inst.end);       /* now VectorE's */
	free(rs.r);
	assert_int_equal(run(body, false, "trn2", &rs, &st, &err), 0);
	s0 = find(&rs, NX_REC_INST, NX_ENGINE_SCALAR, 0);
	v[0] = find(&rs, NX_REC_INST, NX_ENGINE_VECTOR, 0);
	assert_int_equal(v[0]->u.inst.start, s0->u.inst.start);
	free(rs.r);
}

/* An engine write clears every 64-byte granule it touches, even in part: a 4-byte tile an
 * engine wrote inside a granule a DMA once wrote is the engine's (the pool places tiles on
 * 64-byte boundaries), while the next granule, untouched, still delays VectorE. */
static void test_landed_partial_granule(void **state)
{
	static const char body[] =
		"@10 Sync dma_trigger block=b0\n"
		"@11 Vector memset dst=sbuf[0:128]+64:fp32[1] imm=0 wait=S[1]>=16\n"
		"@12 Vector tensor_copy src=sbuf[0:128]+64:fp32[1] "
		"dst=sbuf[0:128]+8192:fp32[1]\n"
		"@13 Vector tensor_copy src=sbuf[0:128]+128:fp32[1] "
		"dst=sbuf[0:128]+8256:fp32[1]\n";
	struct recs rs;
	struct nx_sim_stats st;
	struct nx_err err = { 0 };
	const struct nx_rec *v[3];

	(void)state;
	assert_int_equal(run(body, false, "trn1", &rs, &st, &err), 0);
	for (uint32_t i = 0; i < 3; i++)
		assert_non_null(v[i] = find(&rs, NX_REC_INST, NX_ENGINE_VECTOR, i));
	assert_int_equal(v[1]->u.inst.start, v[0]->u.inst.end);       /* written by VectorE */
	assert_int_equal(v[2]->u.inst.start, v[1]->u.inst.end + 766); /* still the load's */
	assert_int_equal(v[2]->u.inst.wait_ticks, 766);
	free(rs.r);
}

/* A program without any DMA block (a Tensor-engine microbenchmark) assembles and runs. */
static void test_no_dma_blocks(void **state)
{
	static const char text[] =
		"kernel t\n"
		"Tensor ldweights src=sbuf[0:128]+0:bf16[128]\n"
		"Tensor matmul src=sbuf[0:128]+256:bf16[512] dst=psum[0:128]+0:fp32[512]\n";
	struct nx_sim_opts o = { .target = "trn1", .exec_index = 1 };
	struct nx_sim_stats st;
	struct nx_err err = { 0 };
	struct nx_neff neff;

	(void)state;
	assert_int_equal(nx_listing_assemble("t.txt", text, strlen(text), &neff, &err), 0);
	assert_int_equal(neff.nblocks, 0);
	assert_int_equal(nx_sim_run(&neff, &o, NULL, &st, &err), 0);
	assert_int_equal(st.end_ns, 194); /* 11.4 ns LDWEIGHTS + 182.9 ns MATMUL on trn1 */
	nx_neff_release(&neff);
}

static void test_deterministic_capture(void **state)
{
	struct nx_sim_opts o = { .target = "trn2", .dma_packets = true, .exec_index = 2 };
	struct nx_err err = { 0 };
	struct nx_neff neff;
	char *text, *p1, *p2, *d1 = NULL, *d2 = NULL;
	size_t l1 = 0, l2 = 0;

	(void)state;
	char *dir = nx_test_dir("sim-run-same");
	p1 = nx_path_join(dir, "a.ntff");
	p2 = nx_path_join(dir, "b.ntff");
	free(dir);
	text = nx_xasprintf("%s@10 Sync dma_trigger block=b0\n"
			    "@20 Tensor ldweights src=sbuf[0:128]+0:bf16[128] wait=S[1]>=16\n"
			    "@20 Tensor matmul src=sbuf[0:128]+256:bf16[512] dst=psum[0:128]+0:fp32[512] "
			    "sig=S[2]++\n"
			    "@22 Vector tensor_copy src=psum[0:128]+0:fp32[512] dst=sbuf[0:128]+0:bf16[512] "
			    "wait=S[2]>=1\n", head);
	assert_int_equal(nx_listing_assemble("t.txt", text, strlen(text), &neff, &err), 0);
	assert_int_equal(nx_sim_capture(&neff, &o, p1, NULL, &err), 0);
	assert_int_equal(nx_sim_capture(&neff, &o, p2, NULL, &err), 0);
	assert_int_equal(nx_read_file(p1, &d1, &l1, &err), 0);
	assert_int_equal(nx_read_file(p2, &d2, &l2, &err), 0);
	NX_ASSERT_CMP(l1, >, 0);
	assert_int_equal(l1, l2);
	assert_memory_equal(d1, d2, l1);
	remove(p1);
	remove(p2);
	free(d1);
	free(d2);
	free(p1);
	free(p2);
	free(text);
	nx_neff_release(&neff);
}

/* A record's time (its start for an interval), for the start_ns test. */
static uint64_t rec_time(const struct nx_rec *r)
{
	switch (r->kind) {
	case NX_REC_INST: return r->u.inst.start;
	case NX_REC_DMA: return r->u.dma.start;
	case NX_REC_SEM: return r->u.sem.ts;
	case NX_REC_THROTTLE: return r->u.throttle.ts;
	case NX_REC_ERROR: return r->u.error.ts;
	default: return r->u.exec.ts;
	}
}

/* The same NEFF captured at tick 0 and on a device clock starting at T: the same records
 * in the same order, each T ns later (intervals keep their length). */
static void test_capture_start_ns(void **state)
{
	const uint64_t t = 1733350000123456789ull;
	struct nx_sim_opts o = { .target = "trn2", .dma_packets = true, .exec_index = 1 };
	struct nx_ntff_reader *ra = NULL, *rb = NULL;
	struct nx_err err = { 0 };
	struct nx_rec a, b;
	struct nx_neff neff;
	char *text, *p1, *p2;
	int ga, gb, n = 0, kinds = 0;

	(void)state;
	char *dir = nx_test_dir("sim-run-start");
	p1 = nx_path_join(dir, "t0.ntff");
	p2 = nx_path_join(dir, "tT.ntff");
	free(dir);
	text = nx_xasprintf("%s@10 Sync dma_trigger block=b0\n"
			    "@20 Tensor matmul src=sbuf[0:128]+256:bf16[512] dst=psum[0:128]+0:fp32[512] "
			    "wait=S[1]>=16\n", head);
	assert_int_equal(nx_listing_assemble("t.txt", text, strlen(text), &neff, &err), 0);
	assert_int_equal(nx_sim_capture(&neff, &o, p1, NULL, &err), 0);
	o.start_ns = t;
	assert_int_equal(nx_sim_capture(&neff, &o, p2, NULL, &err), 0);
	assert_int_equal(nx_ntff_reader_open(&ra, p1, &err), 0);
	assert_int_equal(nx_ntff_reader_open(&rb, p2, &err), 0);
	while ((ga = nx_ntff_reader_next(ra, NX_REC_MASK_ALL, &a, &err)) == 1) {
		gb = nx_ntff_reader_next(rb, NX_REC_MASK_ALL, &b, &err);
		assert_int_equal(gb, 1);
		assert_int_equal(a.kind, b.kind);
		assert_true(rec_time(&b) == rec_time(&a) + t);
		if (a.kind == NX_REC_INST)
			assert_true(b.u.inst.end - b.u.inst.start == a.u.inst.end - a.u.inst.start);
		if (a.kind == NX_REC_DMA)
			assert_true(b.u.dma.end - b.u.dma.start == a.u.dma.end - a.u.dma.start);
		kinds |= 1 << a.kind;
		n++;
	}
	assert_int_equal(ga, 0);
	assert_int_equal(nx_ntff_reader_next(rb, NX_REC_MASK_ALL, &b, &err), 0);
	NX_ASSERT_CMP(n, >, 0);
	/* instructions, DMA packets, semaphores and the execution's start/stop were moved */
	assert_int_equal(kinds & 0x4e, 0x4e);
	nx_ntff_reader_close(ra);
	nx_ntff_reader_close(rb);
	remove(p1);
	remove(p2);
	free(p1);
	free(p2);
	free(text);
	nx_neff_release(&neff);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_wait_and_dma),
		cmocka_unit_test(test_tensor_pipeline),
		cmocka_unit_test(test_throttle),
		cmocka_unit_test(test_throttle_utilisation),
		cmocka_unit_test(test_notify),
		cmocka_unit_test(test_deadlock),
		cmocka_unit_test(test_bad_operands),
		cmocka_unit_test(test_unknown_opcode),
		cmocka_unit_test(test_instruction_fetch),
		cmocka_unit_test(test_dge_and_sem_latency),
		cmocka_unit_test(test_descriptor_ring),
		cmocka_unit_test(test_landed_stall),
		cmocka_unit_test(test_landed_partial_granule),
		cmocka_unit_test(test_no_dma_blocks),
		cmocka_unit_test(test_deterministic_capture),
		cmocka_unit_test(test_capture_start_ns),
	};

	return nx_test_done(cmocka_run_group_tests(tests, NULL, NULL));
}
