/* SPDX-License-Identifier: MIT
 * fixture.c: the known NEFF + NTFF pair of fixture.h.
 *
 * Timeline (ns, ticks = ns * ticks_per_ns), execution 0 from 0 to 1000:
 *   Sync   #0 DMA_TRIGGER load   [ 10,  20)  id 1
 *   Tensor #0 LDWEIGHTS          [100, 150)  id 2
 *   Tensor #1 MATMUL             [140, 300)  id 3   overlaps #0 by 10 ns, waited 40 ns
 *   Vector #0 TENSOR_COPY        [300, 400)  id 4
 *   Scalar #0 ACTIVATE           [400, 450)  id 5
 *   Sync   #1 DMA_TRIGGER store  [450, 460)  id 6
 *   Tensor #2 MATMUL             [500, 500)  id 7   zero length
 * DMA packets (transfer 100 = block 0, trigger id 1; transfer 101 = block 1, trigger 6):
 *   id 1000 engine 0 [ 20,  80) 65536 B     id 1001 engine 1 [ 30, 90) 65536 B
 *   id 1002 engine 0 [ 90,  95)     4 B (semaphore write)
 *   id 1003 engine 2 [460, 560) 65536 B     id 1004 engine 3 [470, 580) 65536 B
 * DMA active union: [20,95) + [460,580) = 75 + 120 = 195 ns. */
#include "common/compat.h"
#include "helper/fixture.h"
#include "common/fsutil.h"
#include "common/xalloc.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

void nx_fixture_opts_default(struct nx_fixture_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->dge_notifications = true;
	o->with_debug_info = true;
	o->ticks_per_ns = 1;
}

static struct nx_ap ap(int mem, int dtype, unsigned part, unsigned free_elems)
{
	struct nx_ap a = { 0 };
	a.mem = (uint8_t)mem;
	a.dtype = (uint8_t)dtype;
	a.num_partitions = (uint8_t)(part - 1);
	a.size[0] = free_elems;
	a.size[1] = 1;
	a.step[0] = 1;
	a.step[1] = 1;
	return a;
}

static struct nx_inst inst(int engine, int opcode, uint32_t bir, uint32_t dbg)
{
	struct nx_inst in;
	memset(&in, 0, sizeof(in));
	in.engine = (uint8_t)engine;
	in.opcode = (uint16_t)opcode;
	in.bir_id = bir;
	in.debug_id = dbg;
	in.dma_block = NX_NONE32;
	return in;
}

static char *sdup(const char *s)
{
	return nx_xstrdup(s);
}

void nx_fixture_build_neff(struct nx_neff *n, bool with_debug_info)
{
	memset(n, 0, sizeof(*n));
	n->hdr.pkg_version = 1;
	n->hdr.major_version = 2;
	n->hdr.minor_version = 0;
	snprintf(n->hdr.build_version, sizeof(n->hdr.build_version), "fixture-1.0");
	n->hdr.num_tpb = 1;
	snprintf(n->hdr.name, sizeof(n->hdr.name), "fixture_kernel");
	for (int i = 0; i < 16; i++)
		n->hdr.uuid[i] = (uint8_t)(0xa0 + i);
	n->hdr.lnc_size = 1;
	n->tool_version = sdup("fixture-compiler 0.1");

	/* Tensors: a (IN, 128x512 bf16 = 131072 B), out (OUT, 131072 B), w (WEIGHT). */
	n->ntensors = 3;
	n->tensors = nx_xcalloc(3, sizeof(*n->tensors));
	const char *names[] = { "a", "out", "w" }, *types[] = { "input", "output", "file" };
	const int kinds[] = { NX_TENSOR_IN, NX_TENSOR_OUT, NX_TENSOR_WEIGHT };
	for (int i = 0; i < 3; i++) {
		struct nx_tensor *t = &n->tensors[i];
		t->name = sdup(names[i]);
		t->def_type = sdup(types[i]);
		t->kind = kinds[i];
		t->var_id = i;
		t->size = i == 2 ? 32768 : 131072;
		t->dtype = NX_DT_BF16;
		t->format = sdup("NC");
		t->rank = 2;
		t->shape[0] = 128;
		t->shape[1] = i == 2 ? 128 : 512;
		t->node = i;
	}
	/* Queues. */
	n->nqueues = 2;
	n->queues = nx_xcalloc(2, sizeof(*n->queues));
	const char *qn[] = { "qSyncIO0", "qSyncIO1" }, *qt[] = { "in", "out" };
	for (int i = 0; i < 2; i++) {
		struct nx_dma_queue *q = &n->queues[i];
		q->name = sdup(qn[i]);
		q->def_type = sdup(qt[i]);
		q->queue_type = i == 0 ? NX_QT_INPUT : NX_QT_OUTPUT;
		q->owner = NX_ENGINE_SYNC;
		q->semaphore = 10 + i;
		q->engine_idx = i;
		q->queue_idx = i;
		q->axi_port = 0;
		q->dram_channel = i;
	}
	/* Blocks: 0 loads a -> SBUF (2 descriptors of 64 partitions x 1024 B); 1 stores. */
	n->nblocks = 2;
	n->blocks = nx_xcalloc(2, sizeof(*n->blocks));
	for (int b = 0; b < 2; b++) {
		struct nx_dma_block *blk = &n->blocks[b];
		blk->id = (uint32_t)b;
		blk->engine = NX_ENGINE_SYNC;
		blk->queue = b;
		blk->semaphore = -1;
		blk->ndesc = 2;
		blk->desc = nx_xcalloc(2, sizeof(*blk->desc));
		for (int k = 0; k < 2; k++) {
			struct nx_dma_desc *d = &blk->desc[k];
			d->from_loc = b == 0 ? NX_LOC_HBM : NX_LOC_SBUF;
			d->to_loc = b == 0 ? NX_LOC_SBUF : NX_LOC_HBM;
			d->from_var = b == 0 ? 0 : -1;
			d->to_var = b == 0 ? -1 : 1;
			d->from_ndim = d->to_ndim = 2;
			d->from_sizes[0] = d->to_sizes[0] = 64;
			d->from_sizes[1] = d->to_sizes[1] = 512;
			d->from_steps[0] = d->to_steps[0] = b == 0 ? 512 : 1;
			d->from_steps[1] = d->to_steps[1] = 1;
			if (b == 0) {
				d->from_off = (uint64_t)k * 64 * 512;
				d->to_start_partition = (unsigned)k * 64;
			} else {
				d->to_off = (uint64_t)k * 64 * 512;
				d->from_start_partition = (unsigned)k * 64;
			}
			d->dtype = NX_DT_BF16;
			d->bytes = 64 * 1024;
		}
		blk->bytes = 2 * 64 * 1024;
	}
	/* Instructions. */
	uint32_t dbg = with_debug_info ? 0 : NX_NONE32;
#define DBG(i) (with_debug_info ? (uint32_t)(i) : NX_NONE32)
	(void)dbg;
	n->ninst[NX_ENGINE_SYNC] = 2;
	n->inst[NX_ENGINE_SYNC] = nx_xcalloc(2, sizeof(struct nx_inst));
	n->inst[NX_ENGINE_SYNC][0] = inst(NX_ENGINE_SYNC, NX_OP_DMA_TRIGGER, 10, DBG(0));
	n->inst[NX_ENGINE_SYNC][0].dma_block = 0;
	n->inst[NX_ENGINE_SYNC][1] = inst(NX_ENGINE_SYNC, NX_OP_DMA_TRIGGER, 15, DBG(5));
	n->inst[NX_ENGINE_SYNC][1].dma_block = 1;

	n->ninst[NX_ENGINE_TENSOR] = 3;
	n->inst[NX_ENGINE_TENSOR] = nx_xcalloc(3, sizeof(struct nx_inst));
	struct nx_inst *ld = &n->inst[NX_ENGINE_TENSOR][0];
	*ld = inst(NX_ENGINE_TENSOR, NX_OP_LDWEIGHTS, 11, DBG(1));
	ld->src0 = ap(NX_MEM_SBUF, NX_DT_BF16, 128, 128);
	struct nx_inst *mm = &n->inst[NX_ENGINE_TENSOR][1];
	*mm = inst(NX_ENGINE_TENSOR, NX_OP_MATMUL, 12, DBG(2));
	mm->src0 = ap(NX_MEM_SBUF, NX_DT_BF16, 128, 512);
	mm->dst = ap(NX_MEM_PSUM, NX_DT_FP32, 128, 512);
	mm->wait_cond = NX_WAIT_GE;
	mm->wait_sem = 10;
	mm->wait_value = 1;
	n->inst[NX_ENGINE_TENSOR][2] = *mm;
	n->inst[NX_ENGINE_TENSOR][2].wait_cond = NX_WAIT_NONE;
	n->inst[NX_ENGINE_TENSOR][2].flags = NX_INST_TRANSPOSE;
	n->inst[NX_ENGINE_TENSOR][2].src0 = ap(NX_MEM_SBUF, NX_DT_BF16, 128, 128);
	n->inst[NX_ENGINE_TENSOR][2].dst = ap(NX_MEM_PSUM, NX_DT_FP32, 128, 128);

	n->ninst[NX_ENGINE_VECTOR] = 1;
	n->inst[NX_ENGINE_VECTOR] = nx_xcalloc(1, sizeof(struct nx_inst));
	struct nx_inst *cp = &n->inst[NX_ENGINE_VECTOR][0];
	*cp = inst(NX_ENGINE_VECTOR, NX_OP_TENSOR_COPY, 13, DBG(3));
	cp->src0 = ap(NX_MEM_PSUM, NX_DT_FP32, 128, 512);
	cp->dst = ap(NX_MEM_SBUF, NX_DT_BF16, 128, 512);

	n->ninst[NX_ENGINE_SCALAR] = 1;
	n->inst[NX_ENGINE_SCALAR] = nx_xcalloc(1, sizeof(struct nx_inst));
	struct nx_inst *act = &n->inst[NX_ENGINE_SCALAR][0];
	*act = inst(NX_ENGINE_SCALAR, NX_OP_ACTIVATE, 14, DBG(4));
	act->act_fn = NX_ACT_EXP;
	act->imm = 1.0f;
	act->src0 = ap(NX_MEM_SBUF, NX_DT_BF16, 128, 512);
	act->dst = ap(NX_MEM_SBUF, NX_DT_BF16, 128, 512);
#undef DBG

	if (!with_debug_info)
		return;
	static const int lines[] = { 12, 15, 16, 18, 19, 21 };
	n->dbg.ninsts = 6;
	n->dbg.insts = nx_xcalloc(6, sizeof(*n->dbg.insts));
	for (int i = 0; i < 6; i++) {
		struct nx_dbg_inst *d = &n->dbg.insts[i];
		d->name = nx_xasprintf("inst.%d:0", 10 + i);
		d->file = sdup("kernels/fixture.py");
		d->line = lines[i];
		d->stack_frame_id = 2;
		d->iteration_vars_id = i < 3 ? 7 : -1;
		d->bir_location = nx_xasprintf("kernels/fixture.py:%d", lines[i]);
	}
	n->dbg.nframes = 2;
	n->dbg.frames = nx_xcalloc(2, sizeof(*n->dbg.frames));
	n->dbg.frames[0] = (struct nx_dbg_frame){ 1, -1, sdup("main"), sdup("kernels/fixture.py"), 30 };
	n->dbg.frames[1] = (struct nx_dbg_frame){ 2, 1, sdup("fixture.kernel"), sdup("kernels/fixture.py"), 8 };
	n->dbg.nitervars = 1;
	n->dbg.itervars = nx_xcalloc(1, sizeof(*n->dbg.itervars));
	n->dbg.itervars[0] = (struct nx_dbg_itervar){ 7, -1, sdup("k"), sdup("kernels/fixture.py"), 0, 11 };
}

static void info_init(struct nx_ntff_info *info, const struct nx_neff *n,
		      const struct nx_fixture_opts *o)
{
	memset(info, 0, sizeof(*info));
	info->version = NX_NTFF_VERSION;
	info->flags = NX_NTFF_SIMULATED | (o->dge_notifications ? NX_NTFF_DGE_NOTIFICATIONS : 0);
	memcpy(info->neff_uuid, n->hdr.uuid, 16);
	if (o->mismatched_uuid)
		info->neff_uuid[0] ^= 0xff;
	info->ticks_per_ns = o->ticks_per_ns ? o->ticks_per_ns : 1;
	info->capture_unix_ns = 1700000000000000000ull;
	info->num_physical_cores = 1;
	info->num_dma_engines = 16;
	info->te_rows = info->te_cols = 128;
	info->ve_channels = info->se_channels = info->gp_channels = 128;
	info->dma_ddr_bandwidth = 435e9;
	info->hbm_ddr_bandwidth = 725e9;
	info->te_clock_ghz = 2.4;
	info->ve_clock_ghz = 0.96;
	info->se_clock_ghz = 1.2;
	info->gp_clock_ghz = 1.2;
	info->nc_clock_ghz = 1.2;
	snprintf(info->target, sizeof(info->target), "trn2");
	snprintf(info->instance_type, sizeof(info->instance_type), "trn2.48xlarge");
	snprintf(info->runtime_version, sizeof(info->runtime_version), "fixture");
	snprintf(info->neff_name, sizeof(info->neff_name), "fixture.neff");
}

static int put(struct nx_ntff_writer *w, struct nx_rec *r, struct nx_err *err)
{
	return nx_ntff_write(w, r, err);
}

int nx_fixture_write(const char *dir, const struct nx_fixture_opts *o, struct nx_err *err)
{
	struct nx_neff n;
	struct nx_ntff_info info;
	struct nx_ntff_writer *w = NULL;
	char *neff_path = nx_path_join(dir, "fixture.neff");
	char *ntff_path = nx_path_join(dir, "fixture.ntff");
	uint64_t k = o->ticks_per_ns ? o->ticks_per_ns : 1;
	struct nx_rec r;
	int rc;

	nx_fixture_build_neff(&n, o->with_debug_info);
	rc = nx_neff_write(neff_path, &n, err);
	if (rc)
		goto out;
	info_init(&info, &n, o);
	rc = nx_ntff_writer_open(&w, ntff_path, &info, err);
	if (rc)
		goto out;

	memset(&r, 0, sizeof(r));
	r.kind = NX_REC_EXEC;
	r.u.exec = (struct nx_rec_exec){ .ts = 0, .index = 0, .stop = 0 };
	if ((rc = put(w, &r, err)))
		goto fail;
	static const struct { uint64_t id, s, e, wait; uint32_t idx; uint8_t eng; } insts[] = {
		{ 1, 10, 20, 0, 0, NX_ENGINE_SYNC },    { 2, 100, 150, 0, 0, NX_ENGINE_TENSOR },
		{ 3, 140, 300, 40, 1, NX_ENGINE_TENSOR }, { 4, 300, 400, 0, 0, NX_ENGINE_VECTOR },
		{ 5, 400, 450, 0, 0, NX_ENGINE_SCALAR }, { 6, 450, 460, 0, 1, NX_ENGINE_SYNC },
		{ 7, 500, 500, 0, 2, NX_ENGINE_TENSOR },
	};
	for (size_t i = 0; i < NX_ARRAY_SIZE(insts); i++) {
		memset(&r, 0, sizeof(r));
		r.kind = NX_REC_INST;
		r.u.inst = (struct nx_rec_inst){ .id = insts[i].id, .start = insts[i].s * k,
						 .end = insts[i].e * k, .wait_ticks = insts[i].wait * k,
						 .index = insts[i].idx, .exec = 0, .engine = insts[i].eng };
		if ((rc = put(w, &r, err)))
			goto fail;
	}
	for (uint32_t i = 0; i < o->bogus_inst; i++) {
		memset(&r, 0, sizeof(r));
		r.kind = NX_REC_INST;
		r.u.inst = (struct nx_rec_inst){ .id = 900 + i, .start = 600 * k, .end = 610 * k,
						 .index = 99, .engine = NX_ENGINE_VECTOR };
		if ((rc = put(w, &r, err)))
			goto fail;
	}
	if (o->dge_notifications) {
		static const struct { uint64_t id, tr, trig, s, e; uint32_t blk, desc, pidx, bytes;
				      uint16_t q; uint8_t eng; } pk[] = {
			{ 1000, 100, 1, 20, 80, 0, 0, 0, 65536, 0, 0 },
			{ 1001, 100, 1, 30, 90, 0, 1, 1, 65536, 0, 1 },
			{ 1002, 100, 1, 90, 95, 0, 1, 2, 4, 0, 0 },
			{ 1003, 101, 6, 460, 560, 1, 0, 0, 65536, 1, 2 },
			{ 1004, 101, 6, 470, 580, 1, 1, 1, 65536, 1, 3 },
		};
		for (size_t i = 0; i < NX_ARRAY_SIZE(pk); i++) {
			memset(&r, 0, sizeof(r));
			r.kind = NX_REC_DMA;
			r.u.dma = (struct nx_rec_dma){ .id = pk[i].id, .transfer = pk[i].tr,
						       .trigger = pk[i].trig, .start = pk[i].s * k,
						       .end = pk[i].e * k, .block = pk[i].blk,
						       .desc = pk[i].desc, .packet_idx = pk[i].pidx,
						       .bytes = pk[i].bytes, .queue = pk[i].q,
						       .crc = 0x1234, .dma_engine = pk[i].eng };
			if ((rc = put(w, &r, err)))
				goto fail;
		}
	}
	memset(&r, 0, sizeof(r));
	r.kind = NX_REC_SEM;
	r.u.sem = (struct nx_rec_sem){ .ts = 95 * k, .value = 1, .sem = 10, .source = NX_SEMSRC_AXI,
				       .op = 1, .timing = NX_SEMT_COMPLETE };
	if (!o->without_sem && (rc = put(w, &r, err)))
		goto fail;
	memset(&r, 0, sizeof(r));
	r.kind = NX_REC_THROTTLE;
	r.u.throttle = (struct nx_rec_throttle){ .ts = 100 * k, .duration = 50 * k, .k = 1, .n = 2,
						 .type = NX_THROTTLE_ACTIVITY_0 };
	if ((rc = put(w, &r, err)))
		goto fail;
	memset(&r, 0, sizeof(r));
	r.kind = NX_REC_ERROR;
	r.u.error.ts = 455 * k;
	r.u.error.type = NX_ERRT_NOTIFICATION;
	r.u.error.type_id = 7;
	snprintf(r.u.error.description, sizeof(r.u.error.description), "Debug");
	snprintf(r.u.error.metadata, sizeof(r.u.error.metadata), "step 1");
	if ((rc = put(w, &r, err)))
		goto fail;
	memset(&r, 0, sizeof(r));
	r.kind = NX_REC_EXEC;
	r.u.exec = (struct nx_rec_exec){ .ts = 1000 * k, .index = 0, .stop = 1 };
	if ((rc = put(w, &r, err)))
		goto fail;
	rc = nx_ntff_writer_close(w, err);
	goto out;
fail:
	nx_ntff_writer_abort(w);
out:
	nx_neff_release(&n);
	free(neff_path);
	free(ntff_path);
	return rc;
}

char *nx_test_dir(const char *tag)
{
	char *dir = nx_test_fresh_dir("nx-test-", tag);

	if (!dir)
		exit(1);
	return dir;
}

const char *nx_test_bin(void)
{
	const char *bin = getenv("NX_BIN");

	if (!bin || !*bin || access(bin, X_OK) != 0) {
		fprintf(stderr, "test: NX_BIN (the neuron-explorer binary) is %s%s%s; run the tests "
			"through ctest, which sets it\n", bin ? "'" : "not set", bin ? bin : "",
			bin ? "', not an executable" : "");
		exit(1);
	}
	return bin;
}

int nx_test_sh(const char *fmt, ...)
{
	va_list ap;
	char *cmd = NULL;
	int rc;

	va_start(ap, fmt);
	if (vasprintf(&cmd, fmt, ap) < 0)
		cmd = NULL;
	va_end(ap);
	if (!cmd)
		return -1;
	rc = system(cmd);
	free(cmd);
	return rc == -1 ? -1 : WEXITSTATUS(rc);
}
