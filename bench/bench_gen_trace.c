/* SPDX-License-Identifier: MIT
 * bench_gen_trace.c: writes a large synthetic NEFF + NTFF pair for the ingest
 * benchmark: a small program (512 instructions per engine, 64 DMA blocks) and a trace
 * of N records, about 70% instruction executions and 30% DMA packets, in time order.
 * With --source-lines the program carries debug info as a compiled NKI kernel does: each
 * run of LINE_RUN instructions of an engine comes from one line of bench_kernel.py, so
 * Instruction.bir_debug_info_source_location is filled and `recommend` localises its
 * findings (and the transfers their DMA_TRIGGER starts) to lines.
 * usage: bench_gen_trace [--source-lines] OUT_DIR MILLIONS_OF_RECORDS */
#include "common/compat.h"
#include "common/fsutil.h"
#include "common/xalloc.h"
#include "neff/neff.h"
#include "ntff/ntff.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PROG 512
#define BLOCKS 64
/* instructions of an engine per source line: 8 lines an engine, 40 in the kernel */
#define LINE_RUN 64
#define LINES_PER_ENGINE (PROG / LINE_RUN)

static struct nx_ap ap(int mem, unsigned parts, unsigned elems)
{
	struct nx_ap a = { 0 };
	a.mem = (uint8_t)mem;
	a.dtype = mem == NX_MEM_PSUM ? NX_DT_FP32 : NX_DT_BF16;
	a.num_partitions = (uint8_t)(parts - 1);
	a.size[0] = elems;
	a.size[1] = 1;
	a.step[0] = a.step[1] = 1;
	return a;
}

/* The debug info of --source-lines: one kernel instruction per source line of
 * bench_kernel.py, the lines of an engine ten apart from the next's. No stack frame: with
 * one, every instruction carries the whole IR id chain and the ingest's IR hierarchy
 * tables (BirInstruction ...) roll all of them up, which at 10M records ran out of the
 * derive stage's memory limit (2026-12-05): this benchmark is about recommend. */
static void add_source_lines(struct nx_neff *n)
{
	struct nx_debug_info *dbg = &n->dbg;

	dbg->ninsts = NX_ENGINE_COUNT * LINES_PER_ENGINE;
	dbg->insts = nx_xcalloc(dbg->ninsts, sizeof(*dbg->insts));
	for (size_t k = 0; k < dbg->ninsts; k++) {
		struct nx_dbg_inst *d = &dbg->insts[k];
		int64_t line = 10 + (int64_t)(k / LINES_PER_ENGINE) * 10 +
			       (int64_t)(k % LINES_PER_ENGINE);

		d->name = nx_xasprintf("inst.%zu:0", k);
		d->file = nx_xstrdup("bench_kernel.py");
		d->line = line;
		d->stack_frame_id = -1;
		d->iteration_vars_id = -1;
		d->bir_location = nx_xasprintf("bench_kernel.py:%" PRId64, line);
	}
	for (int e = 0; e < NX_ENGINE_COUNT; e++)
		for (int i = 0; i < PROG; i++)
			n->inst[e][i].debug_id = (uint32_t)(e * LINES_PER_ENGINE + i / LINE_RUN);
}

static void build_neff(struct nx_neff *n)
{
	memset(n, 0, sizeof(*n));
	n->hdr.pkg_version = 1;
	n->hdr.major_version = 2;
	n->hdr.num_tpb = 1;
	snprintf(n->hdr.name, sizeof(n->hdr.name), "bench_kernel");
	for (int i = 0; i < 16; i++)
		n->hdr.uuid[i] = (uint8_t)(0x30 + i);
	n->ntensors = 2;
	n->tensors = nx_xcalloc(2, sizeof(*n->tensors));
	for (int i = 0; i < 2; i++) {
		n->tensors[i].name = nx_xstrdup(i ? "out" : "x");
		n->tensors[i].def_type = nx_xstrdup(i ? "output" : "input");
		n->tensors[i].kind = i ? NX_TENSOR_OUT : NX_TENSOR_IN;
		n->tensors[i].size = 64ull << 20;
		n->tensors[i].dtype = NX_DT_BF16;
		n->tensors[i].rank = 2;
		n->tensors[i].shape[0] = 4096;
		n->tensors[i].shape[1] = 8192;
		n->tensors[i].node = -1;
	}
	n->nqueues = 2;
	n->queues = nx_xcalloc(2, sizeof(*n->queues));
	for (int i = 0; i < 2; i++) {
		n->queues[i].name = nx_xstrdup(i ? "qSyncIO1" : "qSyncIO0");
		n->queues[i].def_type = nx_xstrdup(i ? "out" : "in");
		n->queues[i].queue_type = i ? NX_QT_OUTPUT : NX_QT_INPUT;
		n->queues[i].owner = NX_ENGINE_SYNC;
		n->queues[i].semaphore = i;
		n->queues[i].queue_idx = i;
	}
	n->nblocks = BLOCKS;
	n->blocks = nx_xcalloc(BLOCKS, sizeof(*n->blocks));
	for (int b = 0; b < BLOCKS; b++) {
		struct nx_dma_block *blk = &n->blocks[b];
		bool load = b % 2 == 0;
		blk->id = (uint32_t)b;
		blk->engine = NX_ENGINE_SYNC;
		blk->queue = load ? 0 : 1;
		blk->semaphore = -1;
		blk->ndesc = 1;
		blk->desc = nx_xcalloc(1, sizeof(*blk->desc));
		struct nx_dma_desc *d = blk->desc;
		d->from_loc = load ? NX_LOC_HBM : NX_LOC_SBUF;
		d->to_loc = load ? NX_LOC_SBUF : NX_LOC_HBM;
		d->from_var = load ? 0 : -1;
		d->to_var = load ? -1 : 1;
		d->from_ndim = d->to_ndim = 2;
		d->from_sizes[0] = d->to_sizes[0] = 128;
		d->from_sizes[1] = d->to_sizes[1] = 1024;
		d->from_steps[0] = d->to_steps[0] = 1024;
		d->from_steps[1] = d->to_steps[1] = 1;
		d->dtype = NX_DT_BF16;
		d->bytes = 128 * 2048;
		blk->bytes = d->bytes;
	}
	for (int e = 0; e < NX_ENGINE_COUNT; e++) {
		n->ninst[e] = PROG;
		n->inst[e] = nx_xcalloc(PROG, sizeof(struct nx_inst));
		for (int i = 0; i < PROG; i++) {
			struct nx_inst *in = &n->inst[e][i];
			in->engine = (uint8_t)e;
			in->dma_block = NX_NONE32;
			in->debug_id = NX_NONE32;
			in->bir_id = (uint32_t)(e * PROG + i);
			switch (e) {
			case NX_ENGINE_TENSOR:
				in->opcode = i % 2 ? NX_OP_MATMUL : NX_OP_LDWEIGHTS;
				in->src0 = ap(NX_MEM_SBUF, 128, i % 2 ? 512 : 128);
				if (i % 2)
					in->dst = ap(NX_MEM_PSUM, 128, 512);
				break;
			case NX_ENGINE_SYNC:
				in->opcode = NX_OP_DMA_TRIGGER;
				in->dma_block = (uint32_t)(i % BLOCKS);
				break;
			case NX_ENGINE_SCALAR:
				in->opcode = NX_OP_ACTIVATE;
				in->act_fn = NX_ACT_EXP;
				in->src0 = ap(NX_MEM_SBUF, 128, 512);
				in->dst = ap(NX_MEM_SBUF, 128, 512);
				break;
			default:
				in->opcode = NX_OP_TENSOR_TENSOR;
				in->src0 = ap(NX_MEM_SBUF, 128, 512);
				in->src1 = ap(NX_MEM_SBUF, 128, 512);
				in->dst = ap(NX_MEM_SBUF, 128, 512);
			}
		}
	}
}

int main(int argc, char **argv)
{
	struct nx_neff n;
	struct nx_ntff_info info;
	struct nx_ntff_writer *w = NULL;
	struct nx_err err = { 0 };
	struct nx_rec r;

	bool source_lines = argc > 1 && !strcmp(argv[1], "--source-lines");

	if (source_lines) {
		argv++;
		argc--;
	}
	if (argc != 3) {
		fprintf(stderr, "usage: bench_gen_trace [--source-lines] OUT_DIR MILLIONS_OF_RECORDS\n");
		return 2;
	}
	uint64_t total = (uint64_t)(atof(argv[2]) * 1e6);
	char *neff_path = nx_path_join(argv[1], "bench.neff");
	char *ntff_path = nx_path_join(argv[1], "bench.ntff");
	if (nx_mkdirs(argv[1], &err))
		goto fail;
	build_neff(&n);
	if (source_lines)
		add_source_lines(&n);
	if (nx_neff_write(neff_path, &n, &err))
		goto fail;
	memset(&info, 0, sizeof(info));
	info.version = NX_NTFF_VERSION;
	info.flags = NX_NTFF_DGE_NOTIFICATIONS;
	memcpy(info.neff_uuid, n.hdr.uuid, 16);
	info.ticks_per_ns = 1;
	info.num_physical_cores = 1;
	info.num_dma_engines = 16;
	info.te_rows = info.te_cols = 128;
	info.ve_channels = info.se_channels = info.gp_channels = 128;
	info.dma_ddr_bandwidth = 435e9;
	info.hbm_ddr_bandwidth = 725e9;
	info.te_clock_ghz = 2.4;
	info.ve_clock_ghz = 0.96;
	info.se_clock_ghz = info.gp_clock_ghz = info.nc_clock_ghz = 1.2;
	snprintf(info.target, sizeof(info.target), "trn2");
	if (nx_ntff_writer_open(&w, ntff_path, &info, &err))
		goto fail;
	memset(&r, 0, sizeof(r));
	r.kind = NX_REC_EXEC;
	if (nx_ntff_write(w, &r, &err))
		goto fail;
	uint64_t t = 0, inst_id = 0, pkt_id = 0, transfer = 0, last_trigger = UINT64_MAX;
	uint64_t seed = 12345;
	for (uint64_t k = 0; k < total; k++) {
		seed = seed * 6364136223846793005ull + 1442695040888963407ull;
		unsigned roll = (unsigned)(seed >> 33) % 10;
		memset(&r, 0, sizeof(r));
		t += 1 + (seed >> 40) % 8;
		if (roll < 7) {
			int e = (int)((seed >> 20) % NX_ENGINE_COUNT);
			r.kind = NX_REC_INST;
			r.u.inst.id = ++inst_id;
			r.u.inst.start = t;
			r.u.inst.end = t + 20 + (seed >> 50) % 200;
			r.u.inst.wait_ticks = roll == 0 ? (seed >> 44) % 100 : 0;
			r.u.inst.engine = (uint8_t)e;
			r.u.inst.index = (uint32_t)((seed >> 24) % PROG);
			if (e == NX_ENGINE_SYNC)
				last_trigger = inst_id;
		} else {
			uint32_t pidx = (uint32_t)(pkt_id % 16);
			if (pidx == 0)
				transfer++;
			r.kind = NX_REC_DMA;
			r.u.dma.id = ++pkt_id;
			r.u.dma.transfer = transfer;
			r.u.dma.trigger = last_trigger;
			r.u.dma.start = t;
			r.u.dma.end = t + 100 + (seed >> 48) % 400;
			r.u.dma.block = (uint32_t)(transfer % BLOCKS);
			r.u.dma.packet_idx = pidx;
			r.u.dma.bytes = 16384;
			r.u.dma.queue = (uint16_t)(transfer % 2);
			r.u.dma.dma_engine = (uint8_t)pidx;
		}
		if (nx_ntff_write(w, &r, &err))
			goto fail;
	}
	memset(&r, 0, sizeof(r));
	r.kind = NX_REC_EXEC;
	r.u.exec.ts = t + 1000;
	r.u.exec.stop = 1;
	if (nx_ntff_write(w, &r, &err) || nx_ntff_writer_close(w, &err)) {
		w = NULL;
		goto fail;
	}
	nx_neff_release(&n);
	printf("%s %s %" PRIu64 " records (%" PRIu64 " instructions, %" PRIu64 " DMA packets)\n",
	       neff_path, ntff_path, total, inst_id, pkt_id);
	free(neff_path);
	free(ntff_path);
	return 0;
fail:
	if (w)
		nx_ntff_writer_abort(w);
	fprintf(stderr, "bench_gen_trace: %s\n", err.msg);
	return 1;
}
