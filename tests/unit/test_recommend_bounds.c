/* SPDX-License-Identifier: MIT
 * test_recommend_bounds.c: the recommend bound formulas on the fixture profile
 * (timeline in tests/helper/fixture.c) against values computed by hand, whole kernel
 * and in windows; the data-quality step on a profile without DMA packets and one
 * without debug info; the delta format of the follow-up report; window parsing. */
#include "common/compat.h"
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "helper/asserts.h"

#include "analysis/rec.h"
#include "analysis/recommend.h"
#include "common/fsutil.h"
#include "common/xalloc.h"
#include "helper/fixture.h"
#include "helper/profile_db.h"
#include "ingest/ingest.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Fixture constants: DMA peak 435e9 B/s; TE 128 x 128 x 2 x 2.4 GHz. */
#define DMA_BW 435e9
#define TE_PEAK (128.0 * 128 * 2 * 2.4e9)
#define MM_FLOPS 16777216.0 /* the regular MATMUL, 2 x 128 x 128 x 512 */
#define TP_FLOPS 4194304.0  /* the zero-length TRANSPOSE matmul at 500 ns */

struct ctx {
	char *dir, *data, *full, *nodma, *nodebug;
};

static int setup(void **state)
{
	struct ctx *c = nx_xcalloc(1, sizeof(*c));
	struct nx_fixture_opts fo;

	c->dir = nx_test_dir("recommend-bounds");
	c->data = nx_path_join(c->dir, "data");
	nx_fixture_opts_default(&fo);
	c->full = nx_test_ingest_fixture(c->dir, c->data, &fo, "full");
	fo.dge_notifications = false;
	c->nodma = nx_test_ingest_fixture(c->dir, c->data, &fo, "nodma");
	nx_fixture_opts_default(&fo);
	fo.with_debug_info = false;
	c->nodebug = nx_test_ingest_fixture(c->dir, c->data, &fo, "nodebug");
	*state = c;
	return 0;
}

static int teardown(void **state)
{
	struct ctx *c = *state;
	free(c->dir);
	free(c->data);
	free(c->full);
	free(c->nodma);
	free(c->nodebug);
	free(c);
	return 0;
}

static void analyse(const char *dir, int window, int64_t t0, int64_t t1, struct nx_rec_result *r)
{
	struct nx_recommend_opts o;
	struct nx_err err = { 0 };

	nx_recommend_opts_init(&o);
	o.window = window;
	o.t0_ns = t0;
	o.t1_ns = t1;
	o.threads = 1;
	if (nx__rec_analyse(&o, dir, r, &err))
		fail_msg("%s", err.msg);
}

/* Summary stores seconds as floats: allow a few parts per million. */
static void near(double got, double want)
{
	if (!(fabs(got - want) <= 1e-5 * fmax(1, fabs(want))))
		fail_msg("got %.9g, want %.9g", got, want);
}

static void test_whole_kernel(void **state)
{
	struct ctx *c = *state;
	struct nx_rec_result r;

	analyse(c->full, NX_REC_WIN_WHOLE, 0, 0, &r);
	/* total from the execution records; DMA union [20,95) + [460,580) */
	near(r.bound[NX_REC_B_TOTAL], 1000);
	near(r.bound[NX_REC_B_MEM], 195);
	/* kernel packets: 4 x 65536 B (the 4-byte semaphore write excluded) */
	near(r.in.dma_bytes, 262144);
	near(r.bound[NX_REC_B_MEM_IDEAL], 262144 / DMA_BW * 1e9);
	/* Summary's necessary bytes include the 32768-byte weight */
	near(r.bound[NX_REC_B_MEM_NO_RELOADS], 294912 / DMA_BW * 1e9);
	/* TE: LDWEIGHTS [100,150) and MATMUL [140,300) merge into 200 ns */
	near(r.bound[NX_REC_B_COMP], 200);
	near(r.bound[NX_REC_B_COMP_IDEAL], (MM_FLOPS + TP_FLOPS) / TE_PEAK * 1e9);
	near(r.bound[NX_REC_B_COMP_USEFUL], MM_FLOPS / TE_PEAK * 1e9);
	/* engines: Tensor 200, Vector 100, Scalar 50, GpSimd 0, DMA 195: Tensor */
	near(r.in.eng_ns[NX_REC_ENG_VECTOR], 100);
	near(r.in.eng_ns[NX_REC_ENG_SCALAR], 50);
	near(r.in.eng_ns[NX_REC_ENG_GPSIMD], 0);
	assert_int_equal(r.bottleneck, NX_REC_ENG_TENSOR);
	near(r.bound[NX_REC_B_PIPELINE], 200);

	/* bn_speedup: a memory bound against the busiest non-DMA engine (Tensor, 200) */
	near(r.speedup[NX_REC_B_MEM], 1000.0 / 200);
	near(r.speedup[NX_REC_B_MEM_IDEAL], 1000 / (262144 / DMA_BW * 1e9));
	/* a compute bound against the busiest non-Tensor engine (DMA, 195) */
	near(r.speedup[NX_REC_B_COMP_USEFUL], 1000 / fmax(MM_FLOPS / TE_PEAK * 1e9, 195));
	near(r.speedup[NX_REC_B_PIPELINE], 1000.0 / 200);

	near(r.gap[NX_REC_G_DMA_IDLE], 805);
	near(r.gap[NX_REC_G_DMA_INEFF], 195 - 262144 / DMA_BW * 1e9);
	near(r.gap[NX_REC_G_EXCESS], (262144 - 294912) / DMA_BW * 1e9);
	near(r.gap[NX_REC_G_TE_IDLE], 800);
	near(r.gap[NX_REC_G_TE_UNDERUTIL], 200 - (MM_FLOPS + TP_FLOPS) / TE_PEAK * 1e9);
	near(r.gap[NX_REC_G_TRANSPOSE], TP_FLOPS / TE_PEAK * 1e9);
	near(r.gap[NX_REC_G_PIPELINE], 800);

	/* the transpose investigation finds the TRANSPOSE matmul and its line */
	const struct nx_rec_inv *tp = &r.inv[NX_REC_I_TRANSPOSE];
	assert_int_equal(tp->status, NX_REC_FOUND);
	assert_string_equal(nx__rec_cell(&tp->lines, 0, "source"), "fixture.py:16");
	near(nx__rec_metric_get(tp, "transpose_pct"), 20);
	/* the tile regexes read K=128, M=128 and N=512 from the MATMUL operands */
	const struct nx_rec_inv *te = &r.inv[NX_REC_I_TE_INEFF];
	assert_string_equal(nx__rec_cell(&te->lines, 0, "k"), "128");
	assert_string_equal(nx__rec_cell(&te->lines, 0, "m"), "128");
	assert_string_equal(nx__rec_cell(&te->lines, 0, "n"), "512");
	assert_int_equal(te->status, NX_REC_NOTHING);
	/* found investigations come first */
	assert_int_equal(r.order[0], NX_REC_I_TRANSPOSE);
	nx__rec_result_release(&r);
}

static void test_windows(void **state)
{
	struct ctx *c = *state;
	struct nx_rec_result r;

	/* the whole execution as a window: raw tables, IN + OUT only for necessary bytes */
	analyse(c->full, NX_REC_WIN_RANGE, 0, 1000, &r);
	near(r.bound[NX_REC_B_TOTAL], 1000);
	near(r.bound[NX_REC_B_MEM], 195);
	near(r.bound[NX_REC_B_MEM_NO_RELOADS], 262144 / DMA_BW * 1e9);
	near(r.in.hw_flops, MM_FLOPS + TP_FLOPS);
	nx__rec_result_release(&r);

	/* a window reaching past the kernel's end is clipped there, and says so */
	analyse(c->full, NX_REC_WIN_RANGE, 0, 1000000, &r);
	assert_true(r.clipped);
	assert_int_equal(r.req_t1, 1000000);
	NX_ASSERT_CMP(r.t1, <=, 1010);
	NX_ASSERT_CMP(r.bound[NX_REC_B_TOTAL], <=, 1010);
	nx__rec_result_release(&r);

	/* [100, 300): no packet overlaps; TE busy throughout; the transpose (500) is out */
	analyse(c->full, NX_REC_WIN_RANGE, 100, 300, &r);
	near(r.bound[NX_REC_B_TOTAL], 200);
	near(r.bound[NX_REC_B_MEM], 0);
	near(r.in.dma_bytes, 0);
	near(r.bound[NX_REC_B_COMP], 200);
	near(r.in.eng_ns[NX_REC_ENG_VECTOR], 0);
	near(r.in.tp_flops, 0);
	near(r.gap[NX_REC_G_TRANSPOSE], 0);
	assert_int_equal(r.bottleneck, NX_REC_ENG_TENSOR);
	nx__rec_result_release(&r);

	/* [50, 480): DMA [50,95) + [460,480) = 65 ns clipped; bytes of the packets starting
	 * at 460 and 470; TE 200, Vector 100, Scalar 50 */
	analyse(c->full, NX_REC_WIN_RANGE, 50, 480, &r);
	near(r.bound[NX_REC_B_TOTAL], 430);
	near(r.bound[NX_REC_B_MEM], 65);
	near(r.in.dma_bytes, 131072);
	near(r.bound[NX_REC_B_MEM_IDEAL], 131072 / DMA_BW * 1e9);
	near(r.in.eng_ns[NX_REC_ENG_SCALAR], 50);
	near(r.in.hw_flops, MM_FLOPS);
	near(r.gap[NX_REC_G_DMA_IDLE], 430 - 65);
	nx__rec_result_release(&r);

	/* kernel-packet extent: first kernel packet 20 to last end 580 */
	analyse(c->full, NX_REC_WIN_KERNEL, 0, 0, &r);
	assert_int_equal(r.t0, 20);
	assert_int_equal(r.t1, 580);
	near(r.bound[NX_REC_B_TOTAL], 560);
	nx__rec_result_release(&r);
}

static void test_no_dma(void **state)
{
	struct ctx *c = *state;
	struct nx_rec_result r;

	analyse(c->nodma, NX_REC_WIN_WHOLE, 0, 0, &r);
	assert_true(isnan(r.bound[NX_REC_B_MEM]));
	assert_true(isnan(r.bound[NX_REC_B_MEM_IDEAL]));
	assert_true(isnan(r.in.eng_ns[NX_REC_ENG_DMA]));
	/* the rest is still computed */
	near(r.bound[NX_REC_B_COMP], 200);
	near(r.bound[NX_REC_B_MEM_NO_RELOADS], 294912 / DMA_BW * 1e9);
	assert_int_equal(r.bottleneck, NX_REC_ENG_TENSOR);
	assert_int_equal(r.inv[NX_REC_I_DMA_EFF].status, NX_REC_UNAVAILABLE);
	assert_int_equal(r.inv[NX_REC_I_REDUNDANT_DMA].status, NX_REC_UNAVAILABLE);
	assert_int_equal(r.inv[NX_REC_I_TRANSPOSE].status, NX_REC_FOUND);
	bool noted = false;
	for (size_t i = 0; i < r.q.nnotes; i++)
		noted |= strstr(r.q.notes[i].why, "NEURON_RT_ENABLE_DGE_NOTIFICATIONS") != NULL;
	assert_true(noted);
	nx__rec_result_release(&r);
}

static void test_no_debug_info(void **state)
{
	struct ctx *c = *state;
	struct nx_rec_result r;

	analyse(c->nodebug, NX_REC_WIN_WHOLE, 0, 0, &r);
	assert_int_equal(r.q.with_source, 0);
	bool noted = false;
	for (size_t i = 0; i < r.q.nnotes; i++)
		noted |= strstr(r.q.notes[i].part, "localisation") != NULL;
	assert_true(noted);
	/* findings are still computed, with unknown lines */
	assert_int_equal(r.inv[NX_REC_I_TRANSPOSE].status, NX_REC_FOUND);
	assert_string_equal(nx__rec_cell(&r.inv[NX_REC_I_TRANSPOSE].lines, 0, "source"), "?");
	near(r.bound[NX_REC_B_COMP], 200);
	nx__rec_result_release(&r);
}

static void test_reports(void **state)
{
	struct ctx *c = *state;
	struct nx_recommend_opts o;
	struct nx_strbuf out = NX_STRBUF_INIT;
	struct nx_err err = { 0 };

	nx_recommend_opts_init(&o);
	o.profile_dir = c->full;
	assert_int_equal(nx_recommend_run(&o, &out, &err), 0);
	assert_non_null(strstr(out.buf, "| perfect_pipeline (Tensor) |"));
	assert_non_null(strstr(out.buf, "Bottleneck: **Tensor**"));
	nx_strbuf_reset(&out);
	o.format = NX_REC_JSON;
	o.compare_dir = c->nodma;
	assert_int_equal(nx_recommend_run(&o, &out, &err), 0);
	assert_non_null(strstr(out.buf, "\"kind\": \"recommend_compare\""));
	nx_strbuf_release(&out);
	o.profile_dir = "/nonexistent/profile";
	o.compare_dir = NULL;
	assert_int_not_equal(nx_recommend_run(&o, &out, &err), 0);
	nx_strbuf_release(&out);
}

static void delta_is(double a, double b, const char *want)
{
	struct nx_strbuf sb = NX_STRBUF_INIT;
	nx__rec_fmt_delta(&sb, a, b);
	assert_string_equal(sb.buf, want);
	nx_strbuf_release(&sb);
}

static void test_formats(void **state)
{
	struct nx_strbuf sb = NX_STRBUF_INIT;
	(void)state;

	delta_is(1500e3, 500e3, "-1,000 us (3.0x)");
	delta_is(500e3, 930e3, "+430 us");
	delta_is(500e3, 500.2e3, "\xe2\x80\x94");
	delta_is(54.31e3, 41.5e3, "-12.81 us (1.3x)");
	nx__rec_fmt_us(&sb, 1234567e3);
	assert_string_equal(sb.buf, "1,234,567 us");
	nx_strbuf_release(&sb);
}

static void test_window_parse(void **state)
{
	struct nx_recommend_opts o;
	struct nx_err err = { 0 };
	(void)state;

	nx_recommend_opts_init(&o);
	assert_int_equal(nx_recommend_parse_window(&o, "100:2500", &err), 0);
	assert_int_equal(o.window, NX_REC_WIN_RANGE);
	assert_int_equal(o.t0_ns, 100);
	assert_int_equal(o.t1_ns, 2500);
	assert_int_equal(nx_recommend_parse_window(&o, "kernel", &err), 0);
	assert_int_equal(o.window, NX_REC_WIN_KERNEL);
	assert_int_equal(nx_recommend_parse_window(&o, "5:5", &err), NX_EUSAGE);
	assert_int_equal(nx_recommend_parse_window(&o, "x:5", &err), NX_EUSAGE);
	assert_int_equal(nx_recommend_parse_window(&o, "17", &err), NX_EUSAGE);
	assert_int_equal(nx_recommend_parse_window(&o, "-5:100", &err), NX_EUSAGE);
	assert_int_equal(nx_recommend_parse_window(&o, "-500:-100", &err), NX_EUSAGE);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_whole_kernel),
		cmocka_unit_test(test_windows),
		cmocka_unit_test(test_no_dma),
		cmocka_unit_test(test_no_debug_info),
		cmocka_unit_test(test_reports),
		cmocka_unit_test(test_formats),
		cmocka_unit_test(test_window_parse),
	};
	return nx_test_done(cmocka_run_group_tests(tests, setup, teardown));
}
