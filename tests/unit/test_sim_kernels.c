/* SPDX-License-Identifier: MIT
 * test_sim_kernels.c: the kernel library end to end in memory: every kernel generates,
 * assembles and simulates at a small size; its source locations are real lines of
 * kernels/<name>.py holding the expected code; and the simulated profiles have the
 * shape the analysis expects (matmul V0 DMA-bound, V2 Tensor-bound, total time
 * V0 > V1 > V2; planted kernels bound by the planted engine). */
#include "common/compat.h"
#include "common/fsutil.h"
#include "common/xalloc.h"
#include "kernels/library.h"
#include "sim/sim.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "helper/asserts.h"

/* Union of busy intervals per engine (records of a kind arrive sorted by start). */
struct busy {
	uint64_t s, e, total;
	bool any;
};

struct prof {
	struct busy eng[NX_ENGINE_COUNT], dma;
	uint64_t end, wait;
};

static void add(struct busy *b, uint64_t s, uint64_t e)
{
	if (b->any && s <= b->e) {
		if (e > b->e)
			b->e = e;
		return;
	}
	if (b->any)
		b->total += b->e - b->s;
	b->s = s;
	b->e = e;
	b->any = true;
}

static uint64_t busy(const struct busy *b)
{
	return b->any ? b->total + b->e - b->s : 0;
}

static int record(void *arg, const struct nx_rec *r, struct nx_err *err)
{
	struct prof *p = arg;

	(void)err;
	if (r->kind == NX_REC_INST) {
		add(&p->eng[r->u.inst.engine], r->u.inst.start, r->u.inst.end);
		p->wait += r->u.inst.wait_ticks;
	} else if (r->kind == NX_REC_DMA) {
		add(&p->dma, r->u.dma.start, r->u.dma.end);
	} else if (r->kind == NX_REC_EXEC && r->u.exec.stop) {
		p->end = r->u.exec.ts;
	}
	return 0;
}

static void profile(const char *name, unsigned size, struct prof *p)
{
	const struct nx_kernel_def *k = nx_kernel_find(name);
	struct nx_kopts ko = { .size = size, .target = "trn2" };
	struct nx_sim_opts o = { .target = "trn2", .dma_packets = true, .exec_index = 1 };
	struct nx_sim_sink sink = { record, p };
	struct nx_err err = { 0 };
	struct nx_neff neff;

	assert_non_null(k);
	memset(p, 0, sizeof(*p));
	if (nx_kernel_build(k, &ko, &neff, &err) || nx_sim_run(&neff, &o, &sink, NULL, &err))
		fail_msg("%s: %s", name, err.msg);
	nx_neff_release(&neff);
}

static void test_all_build_and_run(void **state)
{
	const struct nx_kernel_def *const *k;
	size_t n;

	(void)state;
	k = nx_kernels(&n);
	assert_int_equal(n, 20);
	for (size_t i = 0; i < n; i++) {
		struct prof p;

		profile(k[i]->name, k[i]->min_size, &p);
		NX_ASSERT_CMP(p.end, >, 0);
		assert_non_null(nx_kernel_find(k[i]->name));
	}
}

/* The calibration matmuls follow their published loop nests: the same matmuls in
 * every version, and HBM traffic falling from version to version. */
static void test_calibration_kernels(void **state)
{
	static const char *const fam[2][4] = {
		{ "calib_trn1_matmul_tiled", "calib_trn1_matmul_hoist", "calib_trn1_matmul_block",
		  "calib_trn1_matmul_opt" },
		{ "calib_trn2_matmul_v2", "calib_trn2_matmul_v3", "calib_trn2_matmul_v4",
		  "calib_trn2_matmul_v5" },
	};

	(void)state;
	for (int f = 0; f < 2; f++) {
		uint64_t prev = UINT64_MAX;

		for (int v = 0; v < 4; v++) {
			struct nx_kopts ko = { .size = 2048, .target = f ? "trn2" : "trn1" };
			struct nx_err err = { 0 };
			struct nx_neff neff;
			uint64_t bytes = 0, mm = 0;

			if (nx_kernel_build(nx_kernel_find(fam[f][v]), &ko, &neff, &err))
				fail_msg("%s: %s", fam[f][v], err.msg);
			/* M = 1024, K = N = 2048: 8 x 4 x 16 tiles of 128 x 128 x 512 */
			for (size_t x = 0; x < neff.ninst[NX_ENGINE_TENSOR]; x++)
				mm += neff.inst[NX_ENGINE_TENSOR][x].opcode == NX_OP_MATMUL;
			assert_int_equal(mm, 8 * 4 * 16);
			for (size_t b = 0; b < neff.nblocks; b++)
				for (size_t d = 0; d < neff.blocks[b].ndesc; d++)
					bytes += neff.blocks[b].desc[d].bytes;
			NX_ASSERT_CMP(bytes, <, prev);
			prev = bytes;
			nx_neff_release(&neff);
		}
	}
}

static void test_bad_sizes(void **state)
{
	struct nx_kopts ko = { .size = 500, .target = "trn2" };
	struct nx_strbuf sb = NX_STRBUF_INIT;
	struct nx_err err = { 0 };

	(void)state;
	assert_int_equal(nx_kernel_listing(nx_kernel_find("matmul_v0"), &ko, &sb, &err), NX_EUSAGE);
	assert_non_null(strstr(err.msg, "multiple of 512"));
	ko.size = 4096;
	assert_int_equal(nx_kernel_listing(nx_kernel_find("attention"), &ko, &sb, &err), NX_EUSAGE);
	ko.size = 1024;
	ko.target = "trn9";
	assert_int_equal(nx_kernel_listing(nx_kernel_find("softmax"), &ko, &sb, &err), NX_EUSAGE);
	nx_strbuf_release(&sb);
}

/* Returns line `line` (1-based) of text, in a new string. */
static char *nth_line(const char *text, int line)
{
	const char *p = text, *e;

	for (int i = 1; i < line && p; i++) {
		p = strchr(p, '\n');
		if (p)
			p++;
	}
	if (!p)
		return nx_xstrdup("");
	e = strchr(p, '\n');
	return e ? nx_xstrndup(p, (size_t)(e - p)) : nx_xstrdup(p);
}

static void test_source_lines(void **state)
{
	const char *root = getenv("NX_SOURCE_DIR");
	const struct nx_kernel_def *const *k;
	size_t n;

	(void)state;
	if (!root)
		root = ".";
	k = nx_kernels(&n);
	for (size_t i = 0; i < n; i++) {
		struct nx_kopts ko = { .size = k[i]->min_size, .target = "trn2" };
		struct nx_err err = { 0 };
		struct nx_neff neff;
		char *path = nx_xasprintf("%s/%s", root, k[i]->source), *text = NULL;
		size_t len;

		if (nx_read_file(path, &text, &len, &err))
			fail_msg("%s", err.msg);
		for (size_t j = 0; j < k[i]->nlines; j++) {
			char *l = nth_line(text, k[i]->lines[j].line);

			if (!strstr(l, k[i]->lines[j].needle))
				fail_msg("%s:%d is '%s', expected it to contain '%s'", k[i]->source,
					 k[i]->lines[j].line, l, k[i]->lines[j].needle);
			free(l);
		}
		/* every source location the NEFF carries is one of those lines */
		assert_int_equal(nx_kernel_build(k[i], &ko, &neff, &err), 0);
		for (size_t d = 0; d < neff.dbg.ninsts; d++) {
			bool found = false;

			assert_string_equal(neff.dbg.insts[d].file, k[i]->source);
			for (size_t j = 0; j < k[i]->nlines; j++)
				found |= neff.dbg.insts[d].line == k[i]->lines[j].line;
			if (!found)
				fail_msg("%s: line %" PRId64 " is not in the line table", k[i]->name,
					 neff.dbg.insts[d].line);
		}
		for (int e = 0; e < NX_ENGINE_COUNT; e++)
			for (size_t x = 0; x < neff.ninst[e]; x++)
				NX_ASSERT_CMP(neff.inst[e][x].debug_id, <, neff.dbg.ninsts);
		/* loop variables point at their `for` lines */
		NX_ASSERT_CMP(neff.dbg.nitervars, >, 0);
		for (size_t v = 0; v < neff.dbg.nitervars; v++) {
			const struct nx_dbg_itervar *it = &neff.dbg.itervars[v];
			char *l = nth_line(text, (int)it->line), *want = nx_xasprintf("for %s in", it->name);

			if (!strstr(l, want))
				fail_msg("%s:%" PRId64 " is '%s', expected the loop of '%s'", k[i]->source,
					 it->line, l, it->name);
			NX_ASSERT_CMP(it->parent, <, (int64_t)v);
			free(want);
			free(l);
		}
		nx_neff_release(&neff);
		free(text);
		free(path);
	}
}

static void test_matmul_versions(void **state)
{
	struct prof v0, v1, v2;

	(void)state;
	profile("matmul_v0", 2048, &v0);
	profile("matmul_v1", 2048, &v1);
	profile("matmul_v2", 2048, &v2);
	NX_ASSERT_CMP(v0.end, >, v1.end);
	NX_ASSERT_CMP(v1.end, >, v2.end);
	/* V0 is DMA-bound (its data-starved Tensor engine runs throttled), V2 Tensor-bound */
	NX_ASSERT_CMP(busy(&v0.dma), >, 3 * busy(&v0.eng[NX_ENGINE_TENSOR]) / 2);
	NX_ASSERT_CMP(busy(&v2.eng[NX_ENGINE_TENSOR]), >, 3 * busy(&v2.dma) / 2);
	NX_ASSERT_CMP(busy(&v2.eng[NX_ENGINE_TENSOR]) * 10, >, v2.end * 7);
}

static void test_planted(void **state)
{
	struct prof p;

	(void)state;
	profile("dma_tiny", 1024, &p);
	for (int e = 0; e < NX_ENGINE_COUNT; e++)
		NX_ASSERT_CMP(busy(&p.dma), >, 2 * busy(&p.eng[e]));
	profile("vector_bound", 1024, &p);
	NX_ASSERT_CMP(busy(&p.eng[NX_ENGINE_VECTOR]), >, 5 * busy(&p.dma));
	NX_ASSERT_CMP(busy(&p.eng[NX_ENGINE_VECTOR]) * 10, >, p.end * 9);
	/* serialised: the busiest engine covers far less than the run */
	profile("serial_sem", 1024, &p);
	for (int e = 0; e < NX_ENGINE_COUNT; e++)
		NX_ASSERT_CMP(busy(&p.eng[e]) * 10, <, p.end * 8);
	NX_ASSERT_CMP(busy(&p.dma) * 10, <, p.end * 8);
	NX_ASSERT_CMP(p.wait, >, p.end);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_all_build_and_run),
		cmocka_unit_test(test_calibration_kernels),
		cmocka_unit_test(test_bad_sizes),
		cmocka_unit_test(test_source_lines),
		cmocka_unit_test(test_matmul_versions),
		cmocka_unit_test(test_planted),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
