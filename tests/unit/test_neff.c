/* SPDX-License-Identifier: MIT
 * test_neff.c: the NEFF reader and writer. A kernel with tensors, queues, DMA blocks,
 * instructions on several engines and debug info is written and read back field by
 * field; then damaged files (header, gzip, tar, JSON, instruction streams) must each
 * fail with a message naming the file and the place, and never crash. */
#include "common/compat.h"
#include "neff/neff.h"
#include "neff/tar.h"
#include "common/fsutil.h"
#include "common/sha256.h"
#include "common/strbuf.h"
#include "common/xalloc.h"

#include <jansson.h>
#include <setjmp.h>
#include <stdarg.h>
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

static char *tmpdir;

static int setup(void **state)
{
	const char *base = getenv("NX_TEST_TMP");
	struct nx_err err = { 0 };

	(void)state;
	if (!base)
		base = "/tmp";
	if (nx_mkdirs(base, &err))
		return -1;
	tmpdir = nx_xasprintf("%s/test_neff.XXXXXX", base);
	return mkdtemp(tmpdir) ? 0 : -1;
}

static int teardown(void **state)
{
	struct nx_err err = { 0 };

	(void)state;
	nx_remove_tree(tmpdir, &err);
	free(tmpdir);
	return 0;
}

static struct nx_ap ap(int mem, int dtype, unsigned start, unsigned parts, uint32_t off,
		       uint32_t n0, uint32_t n1)
{
	struct nx_ap a = { (uint8_t)mem, (uint8_t)dtype, (uint8_t)start, (uint8_t)(parts - 1),
			   off, { n0, n1 }, { 1, (int32_t)n0 } };
	return a;
}

static struct nx_inst inst(int engine, int opcode)
{
	struct nx_inst in;

	memset(&in, 0, sizeof(in));
	in.engine = (uint8_t)engine;
	in.opcode = (uint16_t)opcode;
	in.dma_block = NX_NONE32;
	in.debug_id = NX_NONE32;
	return in;
}

static struct nx_dma_desc desc(int from_loc, int from_var, int to_loc, int to_var,
			       uint64_t rows, uint64_t cols, int dtype)
{
	struct nx_dma_desc d;

	memset(&d, 0, sizeof(d));
	d.from_loc = from_loc;
	d.from_var = from_var;
	d.to_loc = to_loc;
	d.to_var = to_var;
	d.from_ndim = d.to_ndim = 2;
	d.from_sizes[0] = d.to_sizes[0] = rows;
	d.from_sizes[1] = d.to_sizes[1] = cols;
	d.from_steps[0] = d.to_steps[0] = (int64_t)cols;
	d.from_steps[1] = d.to_steps[1] = 1;
	d.dtype = dtype;
	d.bytes = rows * cols * nx_dtype_size(dtype);
	return d;
}

static void add_tensor(struct nx_neff *n, const char *name, const char *type, int kind,
		       uint64_t size, int dtype, const char *format, unsigned rank,
		       const uint64_t *shape, int64_t node)
{
	struct nx_tensor *t = &n->tensors[n->ntensors];

	t->name = nx_xstrdup(name);
	t->def_type = nx_xstrdup(type);
	t->kind = kind;
	t->var_id = (int64_t)n->ntensors++;
	t->size = size;
	t->dtype = dtype;
	t->format = format ? nx_xstrdup(format) : NULL;
	t->rank = rank;
	for (unsigned i = 0; i < rank; i++)
		t->shape[i] = shape[i];
	t->node = node;
}

static void add_queue(struct nx_neff *n, const char *name, const char *type, int qt, int owner,
		      int sem, int eidx, int qidx)
{
	n->queues[n->nqueues++] = (struct nx_dma_queue){ nx_xstrdup(name), nx_xstrdup(type), qt,
							  owner, sem, eidx, qidx, eidx % 4,
							  qidx % 2 };
}

/* Tensors in var_id order and queues in name order: the order the reader returns. */
enum { T_LHST, T_RHS, T_W, T_OUT, T_SCRATCH };
enum { Q_GPSIMD_DYN, Q_SYNC_IN, Q_SYNC_OUT, Q_TENSOR_W, Q_VECTOR_DYN };

static void build_sample(struct nx_neff *n)
{
	static const uint64_t s_lhst[] = { 128, 128 }, s_rhs[] = { 128, 512 }, s_w[] = { 4 };
	struct nx_dma_block *b;
	struct nx_inst *in;

	memset(n, 0, sizeof(*n));
	n->hdr.pkg_version = 1;
	n->hdr.major_version = 2;
	n->hdr.minor_version = 3;
	snprintf(n->hdr.build_version, sizeof(n->hdr.build_version), "2.21.0.0+test");
	n->hdr.num_tpb = 1;
	for (int i = 0; i < 16; i++)
		n->hdr.uuid[i] = (uint8_t)(i * 17);
	snprintf(n->hdr.name, sizeof(n->hdr.name), "matmul_kernel");
	n->hdr.requested_tpb_count = 1;
	n->hdr.tpb_per_node[0] = 1;
	n->hdr.tpb_per_node[63] = 9;
	n->hdr.feature_bits = 1u << 0 | 1u << 2 | 1ull << 40;
	n->hdr.lnc_size = 1;
	n->tool_version = nx_xstrdup("neuronx-cc 2.21.0");

	n->tensors = nx_xcalloc(5, sizeof(*n->tensors));
	add_tensor(n, "lhsT", "input", NX_TENSOR_IN, 32768, NX_DT_BF16, "KM", 2, s_lhst, 0);
	add_tensor(n, "rhs", "input", NX_TENSOR_IN, 131072, NX_DT_BF16, NULL, 2, s_rhs, 1);
	add_tensor(n, "w", "file", NX_TENSOR_WEIGHT, 16, NX_DT_FP32, NULL, 1, s_w, -1);
	add_tensor(n, "out", "output", NX_TENSOR_OUT, 262144, NX_DT_FP32, "NC", 2, s_rhs, 2);
	add_tensor(n, "scratch", "tmp-buf", NX_TENSOR_OTHER, 4096, -1, NULL, 0, NULL, -1);

	n->queues = nx_xcalloc(5, sizeof(*n->queues));
	add_queue(n, "qGpSimdDynamic", "dynamic", NX_QT_SOFTWARE_DYNAMIC, NX_ENGINE_GPSIMD, -1, 3,
		  15);
	add_queue(n, "qSyncIO0", "in", NX_QT_INPUT, NX_ENGINE_SYNC, 22, 0, 0);
	add_queue(n, "qSyncIO1", "out", NX_QT_OUTPUT, NX_ENGINE_SYNC, 23, 1, 0);
	add_queue(n, "qTensorW", "weights", NX_QT_DATA, NX_ENGINE_TENSOR, 24, 2, 1);
	add_queue(n, "qVectorDyn", "dynamic", NX_QT_HARDWARE_DYNAMIC, NX_ENGINE_VECTOR, -1, 15, 11);

	/* Blocks: Tensor's first, then Sync's. */
	n->nblocks = 3;
	n->blocks = nx_xcalloc(3, sizeof(*n->blocks));
	b = &n->blocks[0];
	*b = (struct nx_dma_block){ 7, NX_ENGINE_TENSOR, Q_TENSOR_W, -1, 1, NULL, 16 };
	b->desc = nx_xcalloc(1, sizeof(*b->desc));
	b->desc[0] = desc(NX_LOC_HBM, T_W, NX_LOC_SBUF, -1, 1, 4, NX_DT_FP32);
	b->desc[0].to_start_partition = 5;
	b->desc[0].to_off = 256;
	b = &n->blocks[1];
	*b = (struct nx_dma_block){ 0, NX_ENGINE_SYNC, Q_SYNC_IN, 30, 2, NULL, 32768 + 131072 };
	b->desc = nx_xcalloc(2, sizeof(*b->desc));
	b->desc[0] = desc(NX_LOC_HBM, T_LHST, NX_LOC_SBUF, -1, 128, 128, NX_DT_BF16);
	b->desc[1] = desc(NX_LOC_HBM, T_RHS, NX_LOC_SBUF, -1, 128, 512, NX_DT_BF16);
	b->desc[1].transpose = true;
	b->desc[1].to_off = 0x1200;
	b = &n->blocks[2];
	*b = (struct nx_dma_block){ 1, NX_ENGINE_SYNC, Q_SYNC_OUT, -1, 1, NULL, 262144 };
	b->desc = nx_xcalloc(1, sizeof(*b->desc));
	b->desc[0] = desc(NX_LOC_SBUF, -1, NX_LOC_HBM, T_OUT, 128, 512, NX_DT_FP32);
	b->desc[0].from_ndim = 3;
	b->desc[0].from_sizes[1] = 2;
	b->desc[0].from_sizes[2] = 256;
	b->desc[0].from_steps[1] = -256;
	b->desc[0].from_steps[2] = 1;

	/* Tensor: trigger the weights, LDWEIGHTS, MATMUL. */
	n->ninst[NX_ENGINE_TENSOR] = 3;
	in = n->inst[NX_ENGINE_TENSOR] = nx_xcalloc(3, sizeof(*in));
	in[0] = inst(NX_ENGINE_TENSOR, NX_OP_DMA_TRIGGER);
	in[0].dma_block = 0;
	in[1] = inst(NX_ENGINE_TENSOR, NX_OP_LDWEIGHTS);
	in[1].src0 = ap(NX_MEM_SBUF, NX_DT_BF16, 0, 128, 0, 128, 1);
	in[1].wait_cond = NX_WAIT_GE;
	in[1].wait_sem = 30;
	in[1].wait_value = 1;
	in[2] = inst(NX_ENGINE_TENSOR, NX_OP_MATMUL);
	in[2].src0 = ap(NX_MEM_SBUF, NX_DT_BF16, 0, 128, 0x1200, 512, 1);
	in[2].dst = ap(NX_MEM_PSUM, NX_DT_FP32, 0, 128, 0, 512, 1);
	in[2].flags = NX_INST_ACCUMULATE;
	in[2].sig_op = NX_SEM_INC;
	in[2].sig_sem = 3;
	in[2].debug_id = 0;
	in[2].bir_id = 218805;
	/* Vector: evict PSUM. */
	n->ninst[NX_ENGINE_VECTOR] = 1;
	in = n->inst[NX_ENGINE_VECTOR] = nx_xcalloc(1, sizeof(*in));
	in[0] = inst(NX_ENGINE_VECTOR, NX_OP_TENSOR_COPY);
	in[0].src0 = ap(NX_MEM_PSUM, NX_DT_FP32, 0, 128, 0, 512, 1);
	in[0].dst = ap(NX_MEM_SBUF, NX_DT_FP32, 0, 128, 0x8000, 512, 1);
	in[0].perf_mode = 1;
	in[0].debug_id = 1;
	/* Scalar: an activation with an immediate. */
	n->ninst[NX_ENGINE_SCALAR] = 1;
	in = n->inst[NX_ENGINE_SCALAR] = nx_xcalloc(1, sizeof(*in));
	in[0] = inst(NX_ENGINE_SCALAR, NX_OP_ACTIVATE);
	in[0].act_fn = NX_ACT_GELU;
	in[0].imm = 0.125f;
	in[0].src0 = ap(NX_MEM_SBUF, NX_DT_FP32, 64, 64, 0x8000, 256, 2);
	in[0].dst = ap(NX_MEM_SBUF, NX_DT_FP32, 64, 64, 0x8000, 256, 2);
	/* Sync: load, store, then a semaphore event. */
	n->ninst[NX_ENGINE_SYNC] = 3;
	in = n->inst[NX_ENGINE_SYNC] = nx_xcalloc(3, sizeof(*in));
	in[0] = inst(NX_ENGINE_SYNC, NX_OP_DMA_TRIGGER);
	in[0].dma_block = 1;
	in[1] = inst(NX_ENGINE_SYNC, NX_OP_DMA_TRIGGER);
	in[1].dma_block = 2;
	in[1].wait_cond = NX_WAIT_EQ;
	in[1].wait_sem = 3;
	in[1].wait_value = 1;
	in[2] = inst(NX_ENGINE_SYNC, NX_OP_EVENT_SEMAPHORE);
	in[2].sig_op = NX_SEM_ADD;
	in[2].sig_sem = 255;
	in[2].sig_value = 16;
	/* GpSimd has no instructions. */

	n->dbg.ninsts = 2;
	n->dbg.insts = nx_xcalloc(2, sizeof(*n->dbg.insts));
	n->dbg.insts[0] = (struct nx_dbg_inst){ nx_xstrdup("inst.72:0"), nx_xstrdup("k.py"), 12,
						 11, 21, nx_xstrdup("k.py:12") };
	n->dbg.insts[1] = (struct nx_dbg_inst){ nx_xstrdup("inst.73:0"), NULL, -1, -1, -1, NULL };
	n->dbg.nframes = 2;
	n->dbg.frames = nx_xcalloc(2, sizeof(*n->dbg.frames));
	n->dbg.frames[0] = (struct nx_dbg_frame){ 10, -1, nx_xstrdup("main"), nx_xstrdup("k.py"),
						  1 };
	n->dbg.frames[1] = (struct nx_dbg_frame){ 11, 10, nx_xstrdup("k.kernel"), NULL, -1 };
	n->dbg.nitervars = 2;
	n->dbg.itervars = nx_xcalloc(2, sizeof(*n->dbg.itervars));
	n->dbg.itervars[0] = (struct nx_dbg_itervar){ 20, -1, nx_xstrdup("i"), nx_xstrdup("k.py"),
						      0, 7 };
	n->dbg.itervars[1] = (struct nx_dbg_itervar){ 21, 20, nx_xstrdup("j"), NULL, -3, -1 };
}

static void assert_str_eq_null(const char *a, const char *b)
{
	if (!a || !b)
		assert_ptr_equal(a, b);
	else
		assert_string_equal(a, b);
}

static void compare_ap(const struct nx_ap *a, const struct nx_ap *b)
{
	assert_int_equal(a->mem, b->mem);
	assert_int_equal(a->dtype, b->dtype);
	assert_int_equal(a->start_partition, b->start_partition);
	assert_int_equal(a->num_partitions, b->num_partitions);
	assert_int_equal(a->offset, b->offset);
	assert_int_equal(a->size[0], b->size[0]);
	assert_int_equal(a->size[1], b->size[1]);
	assert_int_equal(a->step[0], b->step[0]);
	assert_int_equal(a->step[1], b->step[1]);
}

static void compare_inst(const struct nx_inst *a, const struct nx_inst *b)
{
	assert_int_equal(a->opcode, b->opcode);
	assert_int_equal(a->engine, b->engine);
	assert_int_equal(a->flags, b->flags);
	assert_int_equal(a->act_fn, b->act_fn);
	assert_int_equal(a->perf_mode, b->perf_mode);
	assert_int_equal(a->alu, b->alu);
	assert_int_equal(a->wait_cond, b->wait_cond);
	assert_int_equal(a->sig_op, b->sig_op);
	assert_int_equal(a->wait_sem, b->wait_sem);
	assert_int_equal(a->sig_sem, b->sig_sem);
	assert_int_equal(a->wait_value, b->wait_value);
	assert_int_equal(a->sig_value, b->sig_value);
	assert_int_equal(a->dma_block, b->dma_block);
	assert_int_equal(a->debug_id, b->debug_id);
	assert_int_equal(a->bir_id, b->bir_id);
	assert_memory_equal(&a->imm, &b->imm, sizeof(float));
	compare_ap(&a->dst, &b->dst);
	compare_ap(&a->src0, &b->src0);
	compare_ap(&a->src1, &b->src1);
}

static void compare_desc(const struct nx_dma_desc *a, const struct nx_dma_desc *b)
{
	assert_int_equal(a->from_loc, b->from_loc);
	assert_int_equal(a->to_loc, b->to_loc);
	assert_int_equal(a->from_var, b->from_var);
	assert_int_equal(a->to_var, b->to_var);
	assert_int_equal(a->from_off, b->from_off);
	assert_int_equal(a->to_off, b->to_off);
	assert_int_equal(a->from_ndim, b->from_ndim);
	assert_int_equal(a->to_ndim, b->to_ndim);
	for (unsigned i = 0; i < a->from_ndim; i++) {
		assert_int_equal(a->from_sizes[i], b->from_sizes[i]);
		assert_int_equal(a->from_steps[i], b->from_steps[i]);
	}
	for (unsigned i = 0; i < a->to_ndim; i++) {
		assert_int_equal(a->to_sizes[i], b->to_sizes[i]);
		assert_int_equal(a->to_steps[i], b->to_steps[i]);
	}
	assert_int_equal(a->from_start_partition, b->from_start_partition);
	assert_int_equal(a->to_start_partition, b->to_start_partition);
	assert_int_equal(a->dtype, b->dtype);
	assert_int_equal(a->transpose, b->transpose);
	assert_int_equal(a->bytes, b->bytes);
}

/* Everything but the computed header fields (checked by the caller). */
static void compare_neff(const struct nx_neff *a, const struct nx_neff *b)
{
	assert_int_equal(a->hdr.pkg_version, b->hdr.pkg_version);
	assert_int_equal(a->hdr.major_version, b->hdr.major_version);
	assert_int_equal(a->hdr.minor_version, b->hdr.minor_version);
	assert_string_equal(a->hdr.build_version, b->hdr.build_version);
	assert_int_equal(a->hdr.num_tpb, b->hdr.num_tpb);
	assert_memory_equal(a->hdr.uuid, b->hdr.uuid, 16);
	assert_string_equal(a->hdr.name, b->hdr.name);
	assert_int_equal(a->hdr.requested_tpb_count, b->hdr.requested_tpb_count);
	assert_memory_equal(a->hdr.tpb_per_node, b->hdr.tpb_per_node, 64);
	assert_int_equal(a->hdr.feature_bits, b->hdr.feature_bits);
	assert_int_equal(a->hdr.lnc_size, b->hdr.lnc_size);
	assert_str_eq_null(a->tool_version, b->tool_version);

	assert_int_equal(a->ntensors, b->ntensors);
	for (size_t i = 0; i < a->ntensors; i++) {
		const struct nx_tensor *x = &a->tensors[i], *y = &b->tensors[i];
		assert_string_equal(x->name, y->name);
		assert_string_equal(x->def_type, y->def_type);
		assert_int_equal(x->kind, y->kind);
		assert_int_equal(x->var_id, y->var_id);
		assert_int_equal(x->size, y->size);
		assert_int_equal(x->dtype, y->dtype);
		assert_str_eq_null(x->format, y->format);
		assert_int_equal(x->rank, y->rank);
		for (unsigned d = 0; d < x->rank; d++)
			assert_int_equal(x->shape[d], y->shape[d]);
		assert_int_equal(x->node, y->node);
	}
	assert_int_equal(a->nqueues, b->nqueues);
	for (size_t i = 0; i < a->nqueues; i++) {
		const struct nx_dma_queue *x = &a->queues[i], *y = &b->queues[i];
		assert_string_equal(x->name, y->name);
		assert_string_equal(x->def_type, y->def_type);
		assert_int_equal(x->queue_type, y->queue_type);
		assert_int_equal(x->owner, y->owner);
		assert_int_equal(x->semaphore, y->semaphore);
		assert_int_equal(x->engine_idx, y->engine_idx);
		assert_int_equal(x->queue_idx, y->queue_idx);
		assert_int_equal(x->axi_port, y->axi_port);
		assert_int_equal(x->dram_channel, y->dram_channel);
	}
	assert_int_equal(a->nblocks, b->nblocks);
	for (size_t i = 0; i < a->nblocks; i++) {
		const struct nx_dma_block *x = &a->blocks[i], *y = &b->blocks[i];
		assert_int_equal(x->id, y->id);
		assert_int_equal(x->engine, y->engine);
		assert_int_equal(x->queue, y->queue);
		assert_int_equal(x->semaphore, y->semaphore);
		assert_int_equal(x->ndesc, y->ndesc);
		assert_int_equal(x->bytes, y->bytes);
		for (size_t d = 0; d < x->ndesc; d++)
			compare_desc(&x->desc[d], &y->desc[d]);
	}
	for (int e = 0; e < NX_ENGINE_COUNT; e++) {
		assert_int_equal(a->ninst[e], b->ninst[e]);
		for (size_t i = 0; i < a->ninst[e]; i++)
			compare_inst(&a->inst[e][i], &b->inst[e][i]);
	}
	assert_int_equal(a->dbg.ninsts, b->dbg.ninsts);
	for (size_t i = 0; i < a->dbg.ninsts; i++) {
		const struct nx_dbg_inst *x = &a->dbg.insts[i], *y = &b->dbg.insts[i];
		assert_string_equal(x->name, y->name);
		assert_str_eq_null(x->file, y->file);
		assert_int_equal(x->line, y->line);
		assert_int_equal(x->stack_frame_id, y->stack_frame_id);
		assert_int_equal(x->iteration_vars_id, y->iteration_vars_id);
		assert_str_eq_null(x->bir_location, y->bir_location);
	}
	assert_int_equal(a->dbg.nframes, b->dbg.nframes);
	for (size_t i = 0; i < a->dbg.nframes; i++) {
		const struct nx_dbg_frame *x = &a->dbg.frames[i], *y = &b->dbg.frames[i];
		assert_int_equal(x->id, y->id);
		assert_int_equal(x->parent, y->parent);
		assert_string_equal(x->function, y->function);
		assert_str_eq_null(x->file, y->file);
		assert_int_equal(x->line, y->line);
	}
	assert_int_equal(a->dbg.nitervars, b->dbg.nitervars);
	for (size_t i = 0; i < a->dbg.nitervars; i++) {
		const struct nx_dbg_itervar *x = &a->dbg.itervars[i], *y = &b->dbg.itervars[i];
		assert_int_equal(x->id, y->id);
		assert_int_equal(x->parent, y->parent);
		assert_string_equal(x->name, y->name);
		assert_str_eq_null(x->file, y->file);
		assert_int_equal(x->value, y->value);
		assert_int_equal(x->line, y->line);
	}
}

static char *path_in_tmp(const char *name)
{
	return nx_path_join(tmpdir, name);
}

static void test_roundtrip(void **state)
{
	struct nx_neff n, r;
	struct nx_err err = { 0 };
	char *path = path_in_tmp("sample.neff"), *data;
	size_t len;
	uint8_t hash[32];

	(void)state;
	build_sample(&n);
	assert_int_equal(nx_neff_write(path, &n, &err), 0);
	assert_int_equal(nx_neff_read(path, &r, &err), 0);
	compare_neff(&n, &r);
	/* Computed header fields. */
	assert_int_equal(nx_read_file(path, &data, &len, &err), 0);
	assert_int_equal(r.hdr.header_size, 1024);
	assert_int_equal(r.hdr.data_size, len - 1024);
	nx_sha256(data + 1024, len - 1024, hash);
	assert_memory_equal(r.hdr.hash, hash, 32);
	/* Lookups and names. */
	assert_int_equal(nx_neff_find_tensor(&r, "out"), T_OUT);
	assert_int_equal(nx_neff_find_tensor(&r, "nope"), -1);
	assert_int_equal(nx_neff_find_queue(&r, "qTensorW"), Q_TENSOR_W);
	assert_int_equal(nx_neff_find_queue(&r, "nope"), -1);
	free(data);
	free(path);
	nx_neff_release(&r);
	nx_neff_release(&n);
	/* Release leaves a zeroed struct that can be released again. */
	nx_neff_release(&n);
	assert_int_equal(n.ntensors, 0);
}

static void test_deterministic(void **state)
{
	struct nx_neff n;
	struct nx_err err = { 0 };
	uint8_t *a, *b;
	size_t la, lb;

	(void)state;
	build_sample(&n);
	assert_int_equal(nx_neff_write_mem(&n, &a, &la, &err), 0);
	assert_int_equal(nx_neff_write_mem(&n, &b, &lb, &err), 0);
	assert_int_equal(la, lb);
	assert_memory_equal(a, b, la);
	/* Header bytes at the SDK offsets; the padding is zero. */
	assert_int_equal(a[0], 1);
	assert_int_equal(a[8] | a[9] << 8, 1024);
	assert_int_equal(a[24], 2);
	assert_int_equal(a[32], 3);
	assert_memory_equal(a + 40, "2.21.0.0+test", 13);
	assert_int_equal(a[168], 1);
	assert_int_equal(a[204 + 1], 17);
	assert_memory_equal(a + 220, "matmul_kernel", 13);
	assert_int_equal(a[476], 1);
	assert_int_equal(a[480 + 63], 9);
	assert_int_equal(a[544], 5);
	assert_int_equal(a[549], 1); /* bit 40 */
	assert_int_equal(a[552], 1);
	for (int i = 556; i < 1024; i++)
		assert_int_equal(a[i], 0);
	free(a);
	free(b);
	nx_neff_release(&n);
}

static void test_md5_and_text(void **state)
{
	struct nx_neff n, r;
	struct nx_err err = { 0 };
	struct nx_strbuf sb = NX_STRBUF_INIT;
	uint8_t *data;
	size_t len;
	char hex[65];

	(void)state;
	build_sample(&n);
	n.hdr.pkg_version = 2;
	assert_int_equal(nx_neff_write_mem(&n, &data, &len, &err), 0);
	assert_int_equal(nx_neff_read_mem("m.neff", data, len, &r, &err), 0);
	compare_neff(&n, &r);
	nx_neff_hash_hex(&r.hdr, hex);
	assert_int_equal(strlen(hex), 32);
	for (int i = 172 + 16; i < 204; i++) /* MD5 uses 16 of the 32 hash bytes */
		assert_int_equal(data[i], 0);
	nx_neff_uuid_hex(&r.hdr, hex);
	assert_string_equal(hex, "00112233445566778899aabbccddeeff");
	nx_neff_features(r.hdr.feature_bits, &sb);
	assert_string_equal(sb.buf, "coalesced-cc, on-chip-functions, bit40");
	nx_strbuf_reset(&sb);
	nx_neff_features(2, &sb);
	assert_string_equal(sb.buf, "queue-set-instances");
	nx_strbuf_reset(&sb);
	nx_neff_features(0, &sb);
	assert_string_equal(nx_strbuf_str(&sb), "");
	nx_strbuf_release(&sb);
	free(data);
	nx_neff_release(&r);
	nx_neff_release(&n);
}

/* A zeroed header and no optional parts still make a readable, minimal NEFF. */
static void test_minimal(void **state)
{
	struct nx_neff n, r;
	struct nx_err err = { 0 };
	uint8_t *data;
	size_t len;

	(void)state;
	memset(&n, 0, sizeof(n));
	assert_int_equal(nx_neff_write_mem(&n, &data, &len, &err), 0);
	assert_int_equal(nx_neff_read_mem("min.neff", data, len, &r, &err), 0);
	assert_int_equal(r.hdr.pkg_version, 1);
	assert_int_equal(r.hdr.major_version, 2);
	assert_null(r.tool_version);
	assert_int_equal(r.ntensors + r.nqueues + r.nblocks + r.dbg.ninsts, 0);
	for (int e = 0; e < NX_ENGINE_COUNT; e++)
		assert_int_equal(r.ninst[e], 0);
	free(data);
	nx_neff_release(&r);
}

/* ---- Damaged files --------------------------------------------------------------- */

/* The members of a NEFF, editable, and a way to pack them again with a valid header. */
struct pack {
	size_t n;
	char *name[16];
	char *data[16];
	size_t len[16];
};

static void pack_from_sample(struct pack *p)
{
	struct nx_neff n;
	struct nx_err err = { 0 };
	struct nx_tar tar;
	uint8_t *data;
	size_t len;

	build_sample(&n);
	assert_int_equal(nx_neff_write_mem(&n, &data, &len, &err), 0);
	assert_int_equal(nx_tar_read_gz("s", data + 1024, len - 1024, &tar, &err), 0);
	memset(p, 0, sizeof(*p));
	for (size_t i = 0; i < tar.n; i++) {
		p->name[p->n] = nx_xstrdup(tar.ents[i].name);
		p->data[p->n] = nx_xmalloc(tar.ents[i].size + 1);
		memcpy(p->data[p->n], tar.ents[i].data, tar.ents[i].size);
		p->data[p->n][tar.ents[i].size] = '\0';
		p->len[p->n++] = tar.ents[i].size;
	}
	nx_tar_release(&tar);
	free(data);
	nx_neff_release(&n);
}

static void pack_release(struct pack *p)
{
	for (size_t i = 0; i < p->n; i++) {
		free(p->name[i]);
		free(p->data[i]);
	}
	p->n = 0;
}

static void pack_set(struct pack *p, const char *name, const void *data, size_t len)
{
	char *copy = nx_xmalloc(len + 1); /* data may point into the member replaced */
	size_t i;

	memcpy(copy, data, len);
	copy[len] = '\0';
	for (i = 0; i < p->n && strcmp(p->name[i], name); i++)
		;
	if (i == p->n)
		p->name[p->n++] = nx_xstrdup(name);
	else
		free(p->data[i]);
	p->data[i] = copy;
	p->len[i] = len;
}

static void pack_del(struct pack *p, const char *name)
{
	for (size_t i = 0; i < p->n; i++) {
		if (!strcmp(p->name[i], name)) {
			free(p->name[i]);
			free(p->data[i]);
			p->n--;
			p->name[i] = p->name[p->n];
			p->data[i] = p->data[p->n];
			p->len[i] = p->len[p->n];
			return;
		}
	}
	fail_msg("no member %s", name);
}

static const char *pack_get(struct pack *p, const char *name)
{
	for (size_t i = 0; i < p->n; i++)
		if (!strcmp(p->name[i], name))
			return p->data[i];
	fail_msg("no member %s", name);
	return NULL;
}

/* A NEFF around an arbitrary payload, with a consistent header. */
static uint8_t *wrap_payload(const uint8_t *payload, size_t plen, size_t *len)
{
	struct nx_neff_header h;
	uint8_t *out = nx_xmalloc(1024 + plen);

	memset(&h, 0, sizeof(h));
	h.pkg_version = 1;
	h.header_size = 1024;
	h.data_size = plen;
	h.major_version = 2;
	nx_neff_payload_hash(1, payload, plen, h.hash);
	nx_neff_header_encode(&h, out);
	memcpy(out + 1024, payload, plen);
	*len = 1024 + plen;
	return out;
}

/* Packs the members; tar_cut > 0 truncates the tar stream, gz_cut the gzip stream. */
static uint8_t *pack_build(struct pack *p, size_t tar_cut, size_t gz_cut, size_t *len)
{
	struct nx_strbuf tar = NX_STRBUF_INIT;
	struct nx_err err = { 0 };
	uint8_t *gz, *out;
	size_t gzlen;

	for (size_t i = 0; i < p->n; i++)
		assert_int_equal(nx_tar_add(&tar, p->name[i], p->data[i], p->len[i], &err), 0);
	nx_tar_finish(&tar);
	if (tar_cut)
		tar.len = tar_cut;
	assert_int_equal(nx_gzip((uint8_t *)tar.buf, tar.len, &gz, &gzlen, &err), 0);
	if (gz_cut)
		gzlen = gz_cut;
	out = wrap_payload(gz, gzlen, len);
	free(gz);
	nx_strbuf_release(&tar);
	return out;
}

/* Reads the packed members back; returns the reader's code, error in *err. */
static int pack_read(struct pack *p, struct nx_err *err)
{
	struct nx_neff r;
	size_t len;
	uint8_t *data = pack_build(p, 0, 0, &len);
	int rc;

	nx_err_clear(err);
	rc = nx_neff_read_mem("x.neff", data, len, &r, err);
	if (!rc)
		nx_neff_release(&r);
	free(data);
	return rc;
}

/* Replaces one member with `text` and expects the read to fail with code and text. */
static void expect_member_error(const char *member, const char *text, int code,
				const char *msg)
{
	struct pack p;
	struct nx_err err = { 0 };

	pack_from_sample(&p);
	pack_set(&p, member, text, strlen(text));
	assert_int_equal(pack_read(&p, &err), code);
	assert_contains(err.msg, "x.neff: ");
	assert_contains(err.msg, msg);
	pack_release(&p);
}

/* Edits one JSON member through jansson, then expects an error. */
static void expect_json_edit(const char *member, const char *json_path, json_t *value,
			     const char *msg)
{
	struct pack p;
	struct nx_err err = { 0 };
	json_t *root, *obj;
	char buf[256], *key, *save = NULL, *text;

	pack_from_sample(&p);
	root = json_loads(pack_get(&p, member), 0, NULL);
	assert_non_null(root);
	/* json_path: keys separated by '/', array indices as numbers; the last is set. */
	snprintf(buf, sizeof(buf), "%s", json_path);
	obj = root;
	key = strtok_r(buf, "/", &save);
	for (char *next; (next = strtok_r(NULL, "/", &save)); key = next) {
		obj = json_is_array(obj) ? json_array_get(obj, strtoul(key, NULL, 10))
					 : json_object_get(obj, key);
		assert_non_null(obj);
	}
	if (json_is_array(obj))
		json_array_set_new(obj, strtoul(key, NULL, 10), value);
	else if (value)
		json_object_set_new(obj, key, value);
	else
		json_object_del(obj, key);
	text = json_dumps(root, 0);
	pack_set(&p, member, text, strlen(text));
	NX_ASSERT_CMP(pack_read(&p, &err), <, 0);
	assert_contains(err.msg, "x.neff: ");
	assert_contains(err.msg, msg);
	free(text);
	json_decref(root);
	pack_release(&p);
}

static void test_damaged_pack_builder(void **state)
{
	struct pack p;
	struct nx_err err = { 0 };

	(void)state;
	/* The harness itself: an unchanged repack reads fine. */
	pack_from_sample(&p);
	assert_int_equal(pack_read(&p, &err), 0);
	pack_release(&p);
}

static void test_missing_file(void **state)
{
	struct nx_neff r;
	struct nx_err err = { 0 };
	char *path = path_in_tmp("no/such.neff");

	(void)state;
	assert_int_equal(nx_neff_read(path, &r, &err), -ENOENT);
	assert_contains(err.msg, "cannot open '");
	assert_contains(err.msg, "no/such.neff'");
	free(path);
}

static void test_header_errors(void **state)
{
	struct nx_neff n, r;
	struct nx_err err = { 0 };
	uint8_t *data, *copy;
	size_t len;
	char *path = path_in_tmp("trunc.neff");

	(void)state;
	build_sample(&n);
	assert_int_equal(nx_neff_write_mem(&n, &data, &len, &err), 0);
	copy = nx_xmalloc(len + 8);

	/* Cut inside the header, in a file on disk. */
	assert_int_equal(nx_write_file_atomic(path, data, 500, &err), 0);
	assert_int_equal(nx_neff_read(path, &r, &err), NX_ETRUNC);
	assert_contains(err.msg, "trunc.neff: truncated header: the file has 500 bytes, the "
				 "header alone needs 1024");
	assert_int_equal(nx_neff_read_mem("e.neff", data, 0, &r, &err), NX_ETRUNC);

	/* Cut inside the gzip data: the header's data_size no longer fits. */
	assert_int_equal(nx_neff_read_mem("x.neff", data, len - 40, &r, &err), NX_ETRUNC);
	assert_contains(err.msg, "x.neff: header: data_size (byte 16) is ");
	assert_contains(err.msg, "bytes follow the 1024-byte header");
	/* Extra bytes after the payload. */
	memcpy(copy, data, len);
	assert_int_equal(nx_neff_read_mem("x.neff", copy, len + 8, &r, &err), NX_ECORRUPT);
	assert_contains(err.msg, "data_size (byte 16)");

	memcpy(copy, data, len);
	copy[8] = 0xe8, copy[9] = 0x03; /* 1000 */
	assert_int_equal(nx_neff_read_mem("x.neff", copy, len, &r, &err), NX_ECORRUPT);
	assert_contains(err.msg, "x.neff: header: header_size (byte 8) is 1000, expected 1024");

	memcpy(copy, data, len);
	copy[0] = 3;
	assert_int_equal(nx_neff_read_mem("x.neff", copy, len, &r, &err), NX_EVERSION);
	assert_contains(err.msg, "x.neff: header: pkg_version (byte 0) is 3; supported are 1 "
				 "(tar.gz + SHA-256) and 2 (tar.gz + MD5)");

	memcpy(copy, data, len);
	copy[24] = 7;
	assert_int_equal(nx_neff_read_mem("x.neff", copy, len, &r, &err), NX_EVERSION);
	assert_contains(err.msg, "major version (byte 24) is 7; this build reads major "
				 "versions 1 to 3");

	/* A flipped payload byte. */
	memcpy(copy, data, len);
	copy[len / 2] ^= 0x20;
	assert_int_equal(nx_neff_read_mem("x.neff", copy, len, &r, &err), NX_ECORRUPT);
	assert_contains(err.msg, "x.neff: header: hash mismatch: the header (byte 172) records "
				 "SHA-256 ");
	{
		char want[65], got[65];
		uint8_t h[32];

		nx_sha256(data + 1024, len - 1024, h);
		for (int i = 0; i < 32; i++)
			snprintf(want + 2 * i, 3, "%02x", h[i]);
		nx_sha256(copy + 1024, len - 1024, h);
		for (int i = 0; i < 32; i++)
			snprintf(got + 2 * i, 3, "%02x", h[i]);
		assert_contains(err.msg, want);
		assert_contains(err.msg, got);
	}
	/* A header field that is only ignored (padding) does not matter. */
	memcpy(copy, data, len);
	copy[1000] = 0x55;
	assert_int_equal(nx_neff_read_mem("x.neff", copy, len, &r, &err), 0);
	nx_neff_release(&r);

	free(copy);
	free(data);
	free(path);
	nx_neff_release(&n);
}

static void test_payload_truncation(void **state)
{
	struct pack p;
	struct nx_neff r;
	struct nx_err err = { 0 };
	uint8_t *data;
	size_t len, full;

	(void)state;
	pack_from_sample(&p);
	data = pack_build(&p, 0, 0, &full);
	free(data);
	/* Every cut of the gzip stream, under a header that matches the cut. */
	for (size_t cut = 1; cut < full - 1024; cut++) {
		data = pack_build(&p, 0, cut, &len);
		assert_int_equal(nx_neff_read_mem("x.neff", data, len, &r, &err), NX_ETRUNC);
		assert_contains(err.msg, "x.neff: gzip stream is truncated");
		free(data);
	}
	/* A tar stream cut inside def.json (the second member: header at byte 1024). */
	data = pack_build(&p, 1024 + 512 + 10, 0, &len);
	assert_int_equal(nx_neff_read_mem("x.neff", data, len, &r, &err), NX_ETRUNC);
	assert_contains(err.msg, "x.neff: tar member 'sg00/def.json' at byte 1024: size ");
	assert_contains(err.msg, "exceeds the 10 bytes left in the archive");
	free(data);
	/* Cut inside the second tar header. */
	data = pack_build(&p, 1024 + 100, 0, &len);
	assert_int_equal(nx_neff_read_mem("x.neff", data, len, &r, &err), NX_ETRUNC);
	assert_contains(err.msg, "x.neff: tar stream byte 1024: header block cut short");
	free(data);
	/* Cut at a member boundary: def.json is then missing. */
	data = pack_build(&p, 1024, 0, &len);
	assert_int_equal(nx_neff_read_mem("x.neff", data, len, &r, &err), NX_ECORRUPT);
	assert_contains(err.msg, "x.neff: sg00/def.json: member is missing from the archive");
	free(data);
	pack_release(&p);
}

/* A dropped member reads as empty; its neighbours keep every byte, those that share a
 * page with it included. */
static void test_tar_drop(void **state)
{
	struct nx_strbuf tar = NX_STRBUF_INIT;
	struct nx_err err = { 0 };
	struct nx_tar t;
	static char data[3][40000];
	const size_t len[3] = { 700, 40000, 900 };
	uint8_t *gz;
	size_t gzlen;

	(void)state;
	for (int m = 0; m < 3; m++) {
		char name[16];
		for (size_t i = 0; i < len[m]; i++)
			data[m][i] = (char)('a' + (i * 7 + (size_t)m) % 26);
		snprintf(name, sizeof(name), "m%d", m);
		assert_int_equal(nx_tar_add(&tar, name, data[m], len[m], &err), 0);
	}
	nx_tar_finish(&tar);
	assert_int_equal(nx_gzip((uint8_t *)tar.buf, tar.len, &gz, &gzlen, &err), 0);
	assert_int_equal(nx_tar_read_gz("t", gz, gzlen, &t, &err), 0);
	nx_tar_drop(&t, nx_tar_find(&t, "m1"));
	assert_null(nx_tar_find(&t, "m1")->data);
	assert_int_equal(nx_tar_find(&t, "m1")->size, 0);
	assert_int_equal(nx_tar_find(&t, "m0")->size, len[0]);
	assert_memory_equal(nx_tar_find(&t, "m0")->data, data[0], len[0]);
	assert_int_equal(nx_tar_find(&t, "m2")->size, len[2]);
	assert_memory_equal(nx_tar_find(&t, "m2")->data, data[2], len[2]);
	nx_tar_drop(&t, nx_tar_find(&t, "m0")); /* less than a page: nothing to give back */
	assert_memory_equal(nx_tar_find(&t, "m2")->data, data[2], len[2]);
	nx_tar_release(&t);
	free(gz);
	nx_strbuf_release(&tar);
}

static void test_tar_checksum(void **state)
{
	struct pack p;
	struct nx_strbuf tar = NX_STRBUF_INIT;
	struct nx_neff r;
	struct nx_err err = { 0 };
	uint8_t *gz, *data;
	size_t gzlen, len;

	(void)state;
	pack_from_sample(&p);
	for (size_t i = 0; i < p.n; i++)
		assert_int_equal(nx_tar_add(&tar, p.name[i], p.data[i], p.len[i], &err), 0);
	nx_tar_finish(&tar);
	tar.buf[1024 + 101] = '7'; /* def.json's mode */
	assert_int_equal(nx_gzip((uint8_t *)tar.buf, tar.len, &gz, &gzlen, &err), 0);
	data = wrap_payload(gz, gzlen, &len);
	assert_int_equal(nx_neff_read_mem("x.neff", data, len, &r, &err), NX_ECORRUPT);
	assert_contains(err.msg, "x.neff: tar member 'sg00/def.json' at byte 1024: header "
				 "checksum mismatch");
	/* Not gzip at all. */
	free(data);
	data = wrap_payload((const uint8_t *)tar.buf, tar.len, &len);
	assert_int_equal(nx_neff_read_mem("x.neff", data, len, &r, &err), NX_ECORRUPT);
	assert_contains(err.msg, "x.neff: gzip data is corrupt at compressed byte");
	free(data);
	free(gz);
	nx_strbuf_release(&tar);
	pack_release(&p);
}

static void test_json_errors(void **state)
{
	(void)state;
	expect_member_error("sg00/def.json", "{\"var\": {", NX_ECORRUPT,
			    "x.neff: sg00/def.json: invalid JSON at line 1");
	expect_member_error("sg00/def.json", "[1, 2]", NX_ECORRUPT,
			    "sg00/def.json: expected an object at the top level");
	expect_member_error("sg00/def.json", "{\"var\": {}, \"var\": {}, \"dma_queue\": {}}",
			    NX_ECORRUPT, "sg00/def.json: invalid JSON");
	expect_member_error("info.json", "{\"tool_version\": 5}", NX_ECORRUPT,
			    "x.neff: info.json: tool_version: expected string, found integer");
	expect_member_error("sg00/def.json", "{\"dma_queue\": {}}", NX_ECORRUPT,
			    "sg00/def.json: var: missing");
	expect_member_error("sg00/def.json", "{\"var\": [], \"dma_queue\": {}}", NX_ECORRUPT,
			    "sg00/def.json: var: expected object, found array");
	expect_member_error("sg00/def.json",
			    "{\"var\": {\"sb\": {\"type\": \"input\", \"var_id\": 0, \"size\": 4}},"
			    " \"dma_queue\": {}}", NX_ECORRUPT,
			    "sg00/def.json: var.sb: variable name \"sb\" is reserved");
	expect_member_error("sg00/def.json",
			    "{\"var\": {\"a\": {\"type\": \"input\", \"var_id\": 0, \"size\": "
			    "99999999999999999999}}, \"dma_queue\": {}}", NX_ECORRUPT,
			    "sg00/def.json: invalid JSON at line 1");
	expect_member_error("kernel_debug_info.json", "{\"version\": 2}", NX_EVERSION,
			    "x.neff: kernel_debug_info.json: version: version 2 is not supported");
	expect_member_error("sg00/Tensor.json", "{\"dma\": {}}", NX_ECORRUPT,
			    "x.neff: sg00/Tensor.json: dma: expected array, found object");
}

/* The big members are read element by element (src/neff/neff_json.c): their faults are
 * still placed in the member, and the checks keep their order. */
static void test_json_pieces(void **state)
{
	(void)state;
	expect_member_error("kernel_debug_info.json",
			    "{\"version\": 1, \"instructions\": [{\"name\": \"a\"},\n"
			    " {\"name\" \"b\"}]}",
			    NX_ECORRUPT, "x.neff: kernel_debug_info.json: invalid JSON at line 2 "
					 "column 10: expected ':'");
	expect_member_error("kernel_debug_info.json",
			    "{\"version\": 1, \"instructions\": [{\"name\": \"a\"}\n"
			    " {\"name\": \"b\"}]}",
			    NX_ECORRUPT, "x.neff: kernel_debug_info.json: invalid JSON at line 2 "
					 "column 2: expected ',' or ']'");
	expect_member_error("kernel_debug_info.json",
			    "{\"version\": 1, \"instructions\": [{\"name\": \"a\"},", NX_ECORRUPT,
			    "kernel_debug_info.json: invalid JSON at line 1 column 46: premature "
			    "end of input");
	/* jansson's own checks inside an element. */
	expect_member_error("kernel_debug_info.json",
			    "{\"version\": 1, \"instructions\": [{\"name\": \"a\"},\n"
			    " {\"name\": \"a\", \"name\": \"b\"}]}", NX_ECORRUPT,
			    "kernel_debug_info.json: invalid JSON at line 2 column 21: duplicate "
			    "object key near '\"name\"'");
	expect_member_error("sg00/Sync.json", "{\"dma\": [],\n\"dma\": []}", NX_ECORRUPT,
			    "x.neff: sg00/Sync.json: invalid JSON at line 2 column 5: duplicate "
			    "object key near '\"dma\"'");
	/* The version is checked first wherever it stands, a syntax fault before it. */
	expect_member_error("kernel_debug_info.json", "{\"instructions\": [5], \"version\": 2}",
			    NX_EVERSION, "kernel_debug_info.json: version: version 2 is not "
					 "supported");
	expect_member_error("kernel_debug_info.json",
			    "{\"instructions\": [5], \"version\": 2, }", NX_ECORRUPT,
			    "kernel_debug_info.json: invalid JSON at line 1 column 37");
	/* A key spelled with an escape is the same key. */
	expect_member_error("kernel_debug_info.json",
			    "{\"version\": 1, \"instr\\u0075ctions\": [{\"name\": 5}]}",
			    NX_ECORRUPT,
			    "kernel_debug_info.json: instructions[0].name: expected string, found "
			    "integer");
	expect_member_error("kernel_debug_info.json", "{\"version\": 1, \"stack_frames\": {}}",
			    NX_ECORRUPT, "kernel_debug_info.json: stack_frames: expected array, "
					 "found object");
}

static void test_def_values(void **state)
{
	(void)state;
	expect_json_edit("sg00/def.json", "var/lhsT/size", json_string("big"),
			 "x.neff: sg00/def.json: var.lhsT.size: expected integer, found string");
	expect_json_edit("sg00/def.json", "var/lhsT/size", json_integer(1ll << 60),
			 "sg00/def.json: var.lhsT.size: value 1152921504606846976 is out of range "
			 "0..281474976710656");
	expect_json_edit("sg00/def.json", "var/lhsT/size", json_real(1.5),
			 "var.lhsT.size: expected integer, found number");
	expect_json_edit("sg00/def.json", "var/lhsT/type", NULL, "var.lhsT.type: missing");
	expect_json_edit("sg00/def.json", "var/lhsT/dtype", json_string("complex"),
			 "var.lhsT.dtype: unknown data type \"complex\"");
	expect_json_edit("sg00/def.json", "var/lhsT/shape/1", json_integer(-4),
			 "var.lhsT.shape[1]: value -4 is out of range");
	expect_json_edit("sg00/def.json", "var/lhsT/shape",
			 json_pack("[iiiiiiiii]", 1, 1, 1, 1, 1, 1, 1, 1, 1),
			 "var.lhsT.shape: 9 dimensions, at most 8 supported");
	expect_json_edit("sg00/def.json", "var/rhs", json_integer(3),
			 "var.rhs: expected object, found integer");
	expect_json_edit("sg00/def.json", "dma_queue/qSyncIO0/owner", json_string("Bogus"),
			 "sg00/def.json: dma_queue.qSyncIO0.owner: unknown engine \"Bogus\"");
	expect_json_edit("sg00/def.json", "dma_queue/qSyncIO0/engine_idx", json_integer(16),
			 "dma_queue.qSyncIO0.engine_idx: value 16 is out of range 0..15");
	expect_json_edit("sg00/def.json", "dma_queue/qSyncIO0/semaphore", json_integer(256),
			 "dma_queue.qSyncIO0.semaphore: value 256 is out of range -1..255");
	expect_json_edit("sg00/def.json", "dma_queue/qSyncIO0/num_queues", json_integer(17),
			 "dma_queue.qSyncIO0.num_queues: value 17 is out of range 1..16");
	expect_json_edit("sg00/def.json", "dma_queue/qSyncIO0/axi_port", NULL,
			 "dma_queue.qSyncIO0.axi_port: missing");
}

static void test_dma_values(void **state)
{
	(void)state;
	expect_json_edit("sg00/Sync.json", "dma/0/queue", json_string("nope"),
			 "x.neff: sg00/Sync.json: dma[0].queue: no DMA queue \"nope\" in "
			 "sg00/def.json");
	expect_json_edit("sg00/Sync.json", "dma/0/desc/1/from", json_string("ghost"),
			 "sg00/Sync.json: dma[0].desc[1].from: unknown variable \"ghost\"");
	expect_json_edit("sg00/Sync.json", "dma/0/desc/0/op", json_string("add"),
			 "dma[0].desc[0].op: unsupported operation \"add\" (only copy)");
	expect_json_edit("sg00/Sync.json", "dma/0/desc/0/from_sizes", json_pack("[ii]", 128, 129),
			 "dma[0].desc[0].to_sizes: cover 16384 elements but from_sizes cover "
			 "16512");
	expect_json_edit("sg00/Sync.json", "dma/0/desc/0/from_off", json_integer(1),
			 "dma[0].desc[0].from: the access reaches elements 1..16384 of bf16 "
			 "\"lhsT\", which holds 32768 bytes");
	expect_json_edit("sg00/Sync.json", "dma/0/desc/0/from_steps", json_pack("[ii]", -128, 1),
			 "dma[0].desc[0].from: the access reaches elements -16256..127");
	expect_json_edit("sg00/Sync.json", "dma/0/desc/0/to_partition", json_integer(1),
			 "dma[0].desc[0].to: partitions 1..128 exceed the 128 partitions");
	expect_json_edit("sg00/Sync.json", "dma/0/desc/0/from_sizes",
			 json_pack("[iiiii]", 1, 1, 1, 1, 1),
			 "dma[0].desc[0].from: from_sizes has 5 dimensions, expected 1..4");
	expect_json_edit("sg00/Sync.json", "dma/0/desc/0/from_steps", json_pack("[i]", 1),
			 "dma[0].desc[0].from: from_steps has 1 entries but from_sizes has 2");
	expect_json_edit("sg00/Sync.json", "dma/0/desc/0/from_sizes",
			 json_pack("[II]", (json_int_t)1 << 32, (json_int_t)1 << 32),
			 "dma[0].desc[0].from: from_sizes: element count exceeds 2^48");
	expect_json_edit("sg00/Sync.json", "dma/0/desc/0/from_sizes/0",
			 json_integer((json_int_t)1 << 40),
			 "dma[0].desc[0].from_sizes[0]: value 1099511627776 is out of range "
			 "0..4294967296");
	expect_json_edit("sg00/Sync.json", "dma/0/desc/0/dtype", json_string("fp64"),
			 "dma[0].desc[0].dtype: unknown data type \"fp64\"");
	expect_json_edit("sg00/Sync.json", "dma/0/desc/0/transpose", json_string("yes"),
			 "dma[0].desc[0].transpose: expected boolean, found string");
	expect_json_edit("sg00/Sync.json", "dma/1/id", json_integer(0),
			 "sg00/Sync.json: dma[1].id: id 0 is also used by dma[0]");
	expect_json_edit("sg00/Sync.json", "dma/0/id", json_integer(-1),
			 "dma[0].id: value -1 is out of range 0..4294967295");
	expect_json_edit("sg00/Sync.json", "dma/0/desc", NULL, "dma[0].desc: missing");
}

static void test_debug_values(void **state)
{
	(void)state;
	expect_json_edit("kernel_debug_info.json", "stack_frames/0/parent", json_integer(11),
			 "x.neff: kernel_debug_info.json: stack_frames[0]: the parent chain loops "
			 "back to id");
	expect_json_edit("kernel_debug_info.json", "stack_frames/1/parent", json_integer(99),
			 "kernel_debug_info.json: stack_frames[1].parent: no entry has id 99");
	expect_json_edit("kernel_debug_info.json", "stack_frames/1/id", json_integer(10),
			 "kernel_debug_info.json: stack_frames[1].id: id 10 is also used by "
			 "stack_frames[0]");
	expect_json_edit("kernel_debug_info.json", "iteration_variables/0/parent",
			 json_integer(20),
			 "iteration_variables[0]: the parent chain loops back to id 20");
	expect_json_edit("kernel_debug_info.json", "instructions/0/stack_frame_id",
			 json_integer(12),
			 "instructions[0].stack_frame_id: no stack frame has id 12");
	expect_json_edit("kernel_debug_info.json", "instructions/0/iteration_variables_id",
			 json_integer(5),
			 "instructions[0].iteration_variables_id: no iteration variable has id 5");
	expect_json_edit("kernel_debug_info.json", "instructions/1/name", json_integer(5),
			 "instructions[1].name: expected string, found integer");
	expect_json_edit("kernel_debug_info.json", "instructions/0/line", json_integer(-2),
			 "instructions[0].line: value -2 is out of range -1..2147483647");
	expect_json_edit("kernel_debug_info.json", "stack_frames/0", json_string("x"),
			 "stack_frames[0]: expected object, found string");
}

/* Sets one record of an engine stream of base records (appending when index == count). */
static void set_record(struct pack *p, const char *member, size_t index, const struct nx_inst *in)
{
	size_t len = 0, n;
	const char *old = NULL;
	uint8_t *buf;

	for (size_t i = 0; i < p->n; i++)
		if (!strcmp(p->name[i], member))
			old = p->data[i], len = p->len[i];
	buf = nx_xcalloc(len + NX_INST_EXT_SIZE, 1);
	if (old)
		memcpy(buf, old, len);
	n = nx_inst_encode(in, buf + index * NX_INST_SIZE);
	if (index * NX_INST_SIZE + n > len)
		len = index * NX_INST_SIZE + n;
	pack_set(p, member, buf, len);
	free(buf);
}

static void expect_bin_error(const char *member, size_t index, const struct nx_inst *in,
			     int poke_off, uint8_t poke, const char *msg)
{
	struct pack p;
	struct nx_err err = { 0 };

	pack_from_sample(&p);
	set_record(&p, member, index, in);
	for (size_t i = 0; poke_off >= 0 && i < p.n; i++)
		if (!strcmp(p.name[i], member))
			p.data[i][index * NX_INST_SIZE + (size_t)poke_off] = (char)poke;
	assert_int_equal(pack_read(&p, &err), NX_ECORRUPT);
	assert_contains(err.msg, msg);
	pack_release(&p);
}

static void test_bin_errors(void **state)
{
	struct pack p;
	struct nx_err err = { 0 };
	struct nx_inst in;

	(void)state;
	/* A partial record. */
	pack_from_sample(&p);
	pack_set(&p, "sg00/Tensor.bin", pack_get(&p, "sg00/Tensor.bin"), 200);
	assert_int_equal(pack_read(&p, &err), NX_ECORRUPT);
	assert_contains(err.msg, "x.neff: sg00/Tensor.bin: instruction 1: the record at byte 128 "
				 "is partial (72 of 128 bytes)");
	pack_release(&p);

	in = inst(NX_ENGINE_VECTOR, NX_OP_NOP);
	expect_bin_error("sg00/Vector.bin", 0, &in, 0, 77,
			 "x.neff: sg00/Vector.bin: instruction 0: byte 0: opcode 77 is not "
			 "defined (0..27)");
	in.src0 = ap(NX_MEM_SBUF, NX_DT_BF16, 100, 64, 0, 1, 1);
	expect_bin_error("sg00/Vector.bin", 1, &in, -1, 0,
			 "sg00/Vector.bin: instruction 1: byte 66: src0 partitions 100..163 exceed "
			 "the 128 partitions");
	in = inst(NX_ENGINE_TENSOR, NX_OP_NOP);
	expect_bin_error("sg00/Vector.bin", 0, &in, -1, 0,
			 "sg00/Vector.bin: instruction 0: byte 2: engine Tensor does not match the "
			 "Vector stream");
	in = inst(NX_ENGINE_SYNC, NX_OP_DMA_TRIGGER);
	in.dma_block = 9;
	expect_bin_error("sg00/Sync.bin", 3, &in, -1, 0,
			 "sg00/Sync.bin: instruction 3: byte 24: dma_block 9 is out of range (3 "
			 "blocks)");
	in.dma_block = NX_NONE32;
	expect_bin_error("sg00/Sync.bin", 0, &in, -1, 0,
			 "sg00/Sync.bin: instruction 0: byte 24: DMA trigger without a dma_block");
	in = inst(NX_ENGINE_SCALAR, NX_OP_NOP);
	in.debug_id = 2;
	expect_bin_error("sg00/Scalar.bin", 0, &in, -1, 0,
			 "sg00/Scalar.bin: instruction 0: byte 28: debug_id 2 is out of range (2 "
			 "debug instructions)");
	in.debug_id = NX_NONE32;
	expect_bin_error("sg00/GpSimd.bin", 0, &in, 9, 1, "sg00/GpSimd.bin: instruction 0: byte 9");

	/* Without debug info, any debug_id is dangling. */
	pack_from_sample(&p);
	pack_del(&p, "kernel_debug_info.json");
	assert_int_equal(pack_read(&p, &err), NX_ECORRUPT);
	assert_contains(err.msg, "sg00/Tensor.bin: instruction 2: byte 28: debug_id 0 is out of "
				 "range (0 debug instructions)");
	pack_release(&p);
	/* Engine members are optional. */
	pack_from_sample(&p);
	pack_del(&p, "sg00/GpSimd.bin");
	pack_del(&p, "sg00/GpSimd.json");
	assert_int_equal(pack_read(&p, &err), 0);
	pack_release(&p);
}

/* Deterministic byte flips inside the uncompressed archive: any outcome but a crash. */
static void test_flips_never_crash(void **state)
{
	struct pack p;
	struct nx_strbuf tar = NX_STRBUF_INIT;
	struct nx_err err = { 0 };
	struct nx_neff r;
	uint32_t x = 12345;
	int failures = 0;

	(void)state;
	pack_from_sample(&p);
	for (size_t i = 0; i < p.n; i++)
		assert_int_equal(nx_tar_add(&tar, p.name[i], p.data[i], p.len[i], &err), 0);
	nx_tar_finish(&tar);
	for (int round = 0; round < 300; round++) {
		char *copy = nx_xmalloc(tar.len);
		uint8_t *gz, *data;
		size_t gzlen, len;

		memcpy(copy, tar.buf, tar.len);
		for (int k = 0; k < 4; k++) {
			x ^= x << 13, x ^= x >> 17, x ^= x << 5;
			copy[x % tar.len] ^= (char)(1u << (x >> 29));
		}
		assert_int_equal(nx_gzip((uint8_t *)copy, tar.len, &gz, &gzlen, &err), 0);
		data = wrap_payload(gz, gzlen, &len);
		if (nx_neff_read_mem("f.neff", data, len, &r, &err) == 0) {
			nx_neff_release(&r);
		} else {
			failures++;
			assert_contains(err.msg, "f.neff: ");
		}
		free(data);
		free(gz);
		free(copy);
	}
	NX_ASSERT_CMP(failures, >, 0);
	nx_strbuf_release(&tar);
	pack_release(&p);
}

static void test_writer_errors(void **state)
{
	struct nx_neff n;
	struct nx_err err = { 0 };
	uint8_t *data = NULL;
	size_t len;
	char *path = path_in_tmp("w.neff");

	(void)state;
	build_sample(&n);
	n.blocks[2].engine = NX_ENGINE_TENSOR; /* a Tensor block after Sync's */
	assert_int_equal(nx_neff_write(path, &n, &err), NX_EUSAGE);
	assert_contains(err.msg, "w.neff': block 2 (engine 0) is out of engine order");
	assert_false(nx_is_file(path));
	n.blocks[2].engine = NX_ENGINE_SYNC;

	free(n.tensors[1].name);
	n.tensors[1].name = nx_xstrdup("lhsT");
	assert_int_equal(nx_neff_write_mem(&n, &data, &len, &err), NX_EUSAGE);
	assert_contains(err.msg, "tensor name \"lhsT\" is used twice");
	free(n.tensors[1].name);
	n.tensors[1].name = nx_xstrdup("r\xff");
	assert_int_equal(nx_neff_write_mem(&n, &data, &len, &err), NX_EUSAGE);
	assert_contains(err.msg, "tensor 1: name is not valid UTF-8");
	free(n.tensors[1].name);
	n.tensors[1].name = nx_xstrdup("rhs");

	n.inst[NX_ENGINE_VECTOR][0].opcode = 99;
	assert_int_equal(nx_neff_write_mem(&n, &data, &len, &err), NX_EUSAGE);
	assert_contains(err.msg, "the NEFF would not read back: ");
	assert_contains(err.msg, "sg00/Vector.bin: instruction 0: byte 0: opcode 99");
	n.inst[NX_ENGINE_VECTOR][0].opcode = NX_OP_TENSOR_COPY;

	n.blocks[1].desc[0].from_var = 42;
	assert_int_equal(nx_neff_write_mem(&n, &data, &len, &err), NX_EUSAGE);
	assert_contains(err.msg, "block 1 (Sync): desc[0]: from: tensor index 42 is out of "
				 "range");
	n.blocks[1].desc[0].from_var = T_LHST;
	n.queues[0].owner = 9;
	assert_int_equal(nx_neff_write_mem(&n, &data, &len, &err), NX_EUSAGE);
	assert_contains(err.msg, "queue \"qGpSimdDynamic\": owner 9 is not an engine");
	n.queues[0].owner = NX_ENGINE_GPSIMD;
	n.hdr.pkg_version = 5;
	assert_int_equal(nx_neff_write_mem(&n, &data, &len, &err), NX_EUSAGE);
	assert_contains(err.msg, "pkg_version (byte 0) is 5");
	assert_null(data);
	free(path);
	nx_neff_release(&n);
}

/* The DMA and debug members are written as text, not as jansson trees: each must be
 * exactly what json_dumps makes of its own parse (sorted keys, one-space indent, the same
 * escapes), also for strings with quotes, backslashes, control bytes and non-ASCII. */
static void test_writer_text(void **state)
{
	static const char *const awkward = "k \"q\" \\ \b\f\n\r\t\x01\x1f \xc3\xa9 \xe2\x82\xac.py";
	struct nx_neff n, r;
	struct nx_err err = { 0 };
	struct nx_tar tar;
	uint8_t *data;
	size_t len, checked = 0;

	(void)state;
	build_sample(&n);
	free(n.dbg.insts[0].file);
	n.dbg.insts[0].file = nx_xstrdup(awkward);
	free(n.dbg.frames[1].function);
	n.dbg.frames[1].function = nx_xstrdup(awkward);
	n.dbg.nbirs = 1;
	n.dbg.birs = nx_xcalloc(1, sizeof(*n.dbg.birs));
	n.dbg.birs[0] = (struct nx_dbg_bir){ 7, nx_xstrdup("bir \"7\"") };
	n.dbg.ndecisions = 2;
	n.dbg.decisions = nx_xcalloc(2, sizeof(*n.dbg.decisions));
	n.dbg.decisions[0] = (struct nx_dbg_decision){ nx_xstrdup("alloc"), nx_xstrdup(awkward),
							12, 2, NULL, NULL };
	n.dbg.decisions[0].keys = nx_xcalloc(2, sizeof(char *));
	n.dbg.decisions[0].values = nx_xcalloc(2, sizeof(char *));
	n.dbg.decisions[0].keys[0] = nx_xstrdup("buffer");
	n.dbg.decisions[0].values[0] = nx_xstrdup("a \"b\"");
	n.dbg.decisions[0].keys[1] = nx_xstrdup("bytes");
	n.dbg.decisions[0].values[1] = nx_xstrdup("2048");
	n.dbg.decisions[1] = (struct nx_dbg_decision){ nx_xstrdup("reorder"), NULL, -1, 0, NULL,
							NULL };
	n.blocks[1].desc[0].cast = true;          /* bf16 from HBM, fp32 in SBUF */
	n.blocks[1].desc[0].to_dtype = NX_DT_FP32;
	n.hdr.major_version = 3; /* what a cast needs */
	assert_int_equal(nx_neff_write_mem(&n, &data, &len, &err), 0);
	assert_int_equal(nx_neff_read_mem("t", data, len, &r, &err), 0);
	compare_neff(&n, &r);
	assert_int_equal(r.dbg.nbirs, 1);
	assert_string_equal(r.dbg.birs[0].name, "bir \"7\"");
	assert_int_equal(r.dbg.ndecisions, 2);
	assert_string_equal(r.dbg.decisions[0].file, awkward);
	assert_string_equal(r.dbg.decisions[0].values[0], "a \"b\"");
	assert_int_equal(r.dbg.decisions[1].nargs, 0);
	assert_true(r.blocks[1].desc[0].cast);
	assert_int_equal(r.blocks[1].desc[0].to_dtype, NX_DT_FP32);
	assert_int_equal(nx_tar_read_gz("t", data + 1024, len - 1024, &tar, &err), 0);
	for (size_t i = 0; i < tar.n; i++) {
		const struct nx_tar_entry *e = &tar.ents[i];
		json_error_t je;
		json_t *root;
		char *again;

		if (strcmp(e->name, "kernel_debug_info.json") &&
		    (strncmp(e->name, "sg00/", 5) || !strstr(e->name, ".json") ||
		     !strcmp(e->name, "sg00/def.json")))
			continue;
		root = json_loadb((const char *)e->data, e->size, 0, &je);
		assert_non_null(root);
		again = json_dumps(root, JSON_SORT_KEYS | JSON_INDENT(1));
		assert_non_null(again);
		assert_int_equal(strlen(again), e->size);
		assert_memory_equal(again, e->data, e->size);
		free(again);
		json_decref(root);
		checked++;
	}
	assert_int_equal(checked, 1 + NX_ENGINE_COUNT);
	nx_tar_release(&tar);
	free(data);
	nx_neff_release(&r);

	/* the same checks as a jansson string: invalid UTF-8 is refused, named */
	free(n.dbg.insts[1].name);
	n.dbg.insts[1].name = nx_xstrdup("inst\xc0\x80"); /* an overlong NUL */
	assert_int_equal(nx_neff_write_mem(&n, &data, &len, &err), NX_EUSAGE);
	assert_contains(err.msg, "kernel_debug_info.json: \"name\" is not valid UTF-8");
	free(n.dbg.insts[1].name);
	n.dbg.insts[1].name = nx_xstrdup("inst.73:0");
	free(n.dbg.itervars[0].file);
	n.dbg.itervars[0].file = nx_xstrdup("k\xed\xa0\x80.py"); /* a surrogate */
	assert_int_equal(nx_neff_write_mem(&n, &data, &len, &err), NX_EUSAGE);
	assert_contains(err.msg, "kernel_debug_info.json: \"file\" is not valid UTF-8");
	free(n.dbg.itervars[0].file);
	n.dbg.itervars[0].file = nx_xstrdup("k.py");
	free(n.queues[Q_TENSOR_W].name);
	n.queues[Q_TENSOR_W].name = nx_xstrdup("q\xff");
	assert_int_equal(nx_neff_write_mem(&n, &data, &len, &err), NX_EUSAGE);
	assert_contains(err.msg, "queue 3: name is not valid UTF-8");
	free(n.queues[Q_TENSOR_W].name);
	n.queues[Q_TENSOR_W].name = nx_xstrdup("qTensorW");
	n.blocks[1].desc[0].dtype = 99;
	assert_int_equal(nx_neff_write_mem(&n, &data, &len, &err), NX_EUSAGE);
	assert_contains(err.msg, "block 1 (Sync): desc[0]: dtype 99 is not defined");
	n.blocks[1].desc[0].dtype = NX_DT_BF16;
	n.dbg.decisions[0].values[1][0] = '\xff';
	assert_int_equal(nx_neff_write_mem(&n, &data, &len, &err), NX_EUSAGE);
	assert_contains(err.msg, "kernel_debug_info.json: a decision argument is not valid UTF-8");
	n.dbg.decisions[0].values[1][0] = '2';
	n.blocks[1].desc[0].to_dtype = 77;
	assert_int_equal(nx_neff_write_mem(&n, &data, &len, &err), NX_EUSAGE);
	assert_contains(err.msg, "block 1 (Sync): desc[0]: to_dtype 77 is not defined");
	n.blocks[1].desc[0].to_dtype = NX_DT_FP32;
	n.blocks[1].desc[0].to_ndim = 5;
	assert_int_equal(nx_neff_write_mem(&n, &data, &len, &err), NX_EUSAGE);
	assert_contains(err.msg, "block 1 (Sync): desc[0]: to: 5 dimensions, expected 1..4");
	nx_neff_release(&n);
}

/* The reader keeps one copy of each distinct debug-info path: the instructions', frames'
 * and iteration variables' files and BIR locations that are equal are one string, the
 * texts unchanged, and the NEFF releases them once (ASan builds catch a double free). */
static void test_debug_paths_once(void **state)
{
	struct nx_neff n, r;
	struct nx_err err = { 0 };
	uint8_t *data;
	size_t len;

	(void)state;
	build_sample(&n);
	n.dbg.insts[1].file = nx_xstrdup("k.py");
	n.dbg.insts[1].bir_location = nx_xstrdup("k.py:12");
	assert_int_equal(nx_neff_write_mem(&n, &data, &len, &err), 0);
	assert_int_equal(nx_neff_read_mem("m.neff", data, len, &r, &err), 0);
	compare_neff(&n, &r);
	assert_string_equal(r.dbg.insts[0].file, "k.py");
	assert_ptr_equal(r.dbg.insts[1].file, r.dbg.insts[0].file);
	assert_ptr_equal(r.dbg.frames[0].file, r.dbg.insts[0].file);
	assert_ptr_equal(r.dbg.itervars[0].file, r.dbg.insts[0].file);
	assert_string_equal(r.dbg.insts[1].bir_location, "k.py:12");
	assert_ptr_equal(r.dbg.insts[1].bir_location, r.dbg.insts[0].bir_location);
	assert_null(r.dbg.frames[1].file);
	nx_debug_info_release(&r.dbg); /* alone, as the ingest does, then the rest */
	assert_null(r.dbg.paths);
	assert_int_equal(r.dbg.ninsts, 0);
	free(data);
	nx_neff_release(&r);
	nx_neff_release(&n);
}

/* One file for src: name and text copied. */
static void source_add(struct nx_neff_source *src, const char *name, const char *text,
		       size_t len)
{
	uint8_t *t = nx_xmalloc(len + 1);

	memcpy(t, text, len);
	nx_neff_source_add(src, nx_xstrdup(name), t, len);
}

/* The NEFF packed from p reads whole, with none of its kernel sources and this problem. */
static void assert_sources_left_out(struct pack *p, const char *problem)
{
	struct nx_neff r;
	struct nx_err err = { 0 };
	size_t len;
	uint8_t *data = pack_build(p, 0, 0, &len);

	assert_int_equal(nx_neff_read_mem("x.neff", data, len, &r, &err), 0);
	assert_int_equal(r.source.n, 0);
	assert_string_equal(r.source.problem, problem);
	assert_int_equal(r.ntensors, 5);
	nx_neff_release(&r);
	free(data);
}

/* The kernel sources a NEFF carries: written and read back in order (the kernel's own file
 * and a helper's); the writer refuses what the rule refuses, for a file and for the set
 * (two of one name, too many, too large in all); the reader takes "./kernel_source/" too
 * and never fails because of them, leaving them all out with the reason. */
static void test_kernel_source(void **state)
{
	struct nx_neff n, r;
	struct nx_err err = { 0 };
	uint8_t *data = NULL;
	size_t len;
	struct pack p;
	char long_name[NX_NEFF_SOURCE_NAME_MAX + 2], name[16];
	char *half = nx_xcalloc(1, NX_NEFF_SOURCE_MAX / 2 + 1);

	(void)state;
	build_sample(&n);
	assert_int_equal(nx_neff_write_mem(&n, &data, &len, &err), 0);
	assert_int_equal(nx_neff_read_mem("x.neff", data, len, &r, &err), 0);
	assert_int_equal(r.source.n, 0);
	assert_null(r.source.problem);
	nx_neff_release(&r);
	free(data);

	source_add(&n.source, "k.py", "x = 1\n", 6);
	source_add(&n.source, "helpers.py", "def f():\n    pass\n", 19);
	assert_int_equal(nx_neff_write_mem(&n, &data, &len, &err), 0);
	assert_int_equal(nx_neff_read_mem("x.neff", data, len, &r, &err), 0);
	assert_int_equal(r.source.n, 2);
	assert_string_equal(r.source.files[0].name, "k.py");
	assert_int_equal(r.source.files[0].len, 6);
	assert_memory_equal(r.source.files[0].text, "x = 1\n", 6);
	assert_string_equal(r.source.files[1].name, "helpers.py");
	assert_memory_equal(r.source.files[1].text, "def f():\n    pass\n", 19);
	assert_null(r.source.problem);
	nx_neff_release(&r);
	free(data);

	free(n.source.files[1].name);
	n.source.files[1].name = nx_xstrdup("k.py");
	assert_int_equal(nx_neff_write_mem(&n, &data, &len, &err), NX_EUSAGE);
	assert_contains(err.msg, "two kernel sources are named 'k.py'");
	free(n.source.files[1].name);
	n.source.files[1].name = nx_xstrdup("a/k.py");
	assert_int_equal(nx_neff_write_mem(&n, &data, &len, &err), NX_EUSAGE);
	assert_contains(err.msg, "the kernel source's name holds '/' (byte 2)");
	free(n.source.files[1].name);
	memset(long_name, 'k', sizeof(long_name) - 1);
	long_name[sizeof(long_name) - 1] = '\0';
	n.source.files[1].name = nx_xstrdup(long_name);
	assert_int_equal(nx_neff_write_mem(&n, &data, &len, &err), NX_EUSAGE);
	assert_contains(err.msg, "name is 86 bytes long; a NEFF takes at most 85");
	free(n.source.files[1].name);
	n.source.files[1].name = nx_xstrdup("..");
	assert_int_equal(nx_neff_write_mem(&n, &data, &len, &err), NX_EUSAGE);
	assert_contains(err.msg, "must be a file name, not '..'");
	free(n.source.files[1].name);
	n.source.files[1].name = nx_xstrdup("j.py");
	free(n.source.files[1].text);
	n.source.files[1].text = nx_xcalloc(1, NX_NEFF_SOURCE_MAX + 1);
	n.source.files[1].len = NX_NEFF_SOURCE_MAX + 1;
	assert_int_equal(nx_neff_write_mem(&n, &data, &len, &err), NX_EUSAGE);
	assert_contains(err.msg, "the kernel source 'j.py' is 1.0 MiB; a NEFF carries at most 1 MiB");
	n.source.files[1].len = NX_NEFF_SOURCE_MAX; /* each fits, not both */
	assert_int_equal(nx_neff_write_mem(&n, &data, &len, &err), NX_EUSAGE);
	assert_contains(err.msg, "the kernel sources are 1.0 MiB in all; a NEFF carries at most 1 MiB");
	nx_neff_release(&n);
	build_sample(&n);
	for (int i = 0; i <= NX_NEFF_SOURCE_FILES_MAX; i++) {
		snprintf(name, sizeof(name), "f%d.py", i);
		source_add(&n.source, name, "\n", 1);
	}
	assert_int_equal(nx_neff_write_mem(&n, &data, &len, &err), NX_EUSAGE);
	assert_contains(err.msg, "65 kernel sources; a NEFF carries at most 64");
	assert_null(data);
	nx_neff_release(&n);

	pack_from_sample(&p);
	pack_set(&p, "./kernel_source/k.py", "y\n", 2);
	data = pack_build(&p, 0, 0, &len);
	assert_int_equal(nx_neff_read_mem("x.neff", data, len, &r, &err), 0);
	assert_int_equal(r.source.n, 1);
	assert_string_equal(r.source.files[0].name, "k.py");
	assert_null(r.source.problem);
	nx_neff_release(&r);
	free(data);
	pack_set(&p, "kernel_source/k.py", "z\n", 2); /* a second k.py */
	assert_sources_left_out(&p, "x.neff: two kernel sources are named 'k.py'");
	pack_del(&p, "kernel_source/k.py");
	pack_set(&p, "kernel_source/a.py", half, NX_NEFF_SOURCE_MAX / 2);
	pack_set(&p, "kernel_source/b.py", half, NX_NEFF_SOURCE_MAX / 2 + 1);
	assert_sources_left_out(&p, "x.neff: 3 kernel sources of 1.0 MiB in all; a NEFF carries "
				"at most 64, of 1 MiB");
	pack_del(&p, "./kernel_source/k.py");
	pack_del(&p, "kernel_source/a.py");
	pack_del(&p, "kernel_source/b.py");
	pack_set(&p, "kernel_source/\x01.py", "z\n", 2);
	assert_sources_left_out(&p, "x.neff: member 'kernel_source/\x01.py': the kernel source's "
				"name holds a control character (byte 1): a file name without directories is "
				"expected");
	pack_release(&p);
	free(half);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_roundtrip),
		cmocka_unit_test(test_deterministic),
		cmocka_unit_test(test_md5_and_text),
		cmocka_unit_test(test_minimal),
		cmocka_unit_test(test_damaged_pack_builder),
		cmocka_unit_test(test_missing_file),
		cmocka_unit_test(test_header_errors),
		cmocka_unit_test(test_payload_truncation),
		cmocka_unit_test(test_tar_drop),
		cmocka_unit_test(test_tar_checksum),
		cmocka_unit_test(test_json_errors),
		cmocka_unit_test(test_json_pieces),
		cmocka_unit_test(test_def_values),
		cmocka_unit_test(test_dma_values),
		cmocka_unit_test(test_debug_values),
		cmocka_unit_test(test_bin_errors),
		cmocka_unit_test(test_flips_never_crash),
		cmocka_unit_test(test_writer_errors),
		cmocka_unit_test(test_writer_text),
		cmocka_unit_test(test_kernel_source),
		cmocka_unit_test(test_debug_paths_once),
	};
	return cmocka_run_group_tests_name("neff", tests, setup, teardown);
}
