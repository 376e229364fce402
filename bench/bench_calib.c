/* SPDX-License-Identifier: MIT
 * bench_calib.c: the simulator against published hardware measurements (called by
 * bench/calibration.sh). Captures each calibration kernel of the library at its
 * measured shape and target and prints measured, simulated and the error for the total
 * time and for every published engine-busy or DMA figure, then the median and worst
 * error per family; then the micro facts, each from a small listing simulated in
 * process. The measured values and their sources are listed in docs/simulator.md
 * ("Calibration"). usage: bench_calib [--markdown | --library]; --markdown prints the
 * tables of docs/simulator.md's "Results" as they stand there, --library its table of
 * the other library kernels. */
#include "common/compat.h"
#include "common/xalloc.h"
#include "kernels/library.h"
#include "kernels/listing.h"
#include "sim/sim.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- profile of one run: union of busy intervals per engine and for DMA ---- */

struct busy {
	uint64_t s, e, total;
	bool any;
};

struct prof {
	struct busy eng[NX_ENGINE_COUNT], dma;
	uint64_t end, pkt_ns, dma_bytes, inst_ns[NX_ENGINE_COUNT], ninst[NX_ENGINE_COUNT];
	uint64_t first_start[NX_ENGINE_COUNT], pkt_first_ns;
	uint64_t starts[4][NX_ENGINE_COUNT], ends[4][NX_ENGINE_COUNT];
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

static double busy_ns(const struct busy *b)
{
	return b->any ? (double)(b->total + b->e - b->s) : 0.0;
}

static int record(void *arg, const struct nx_rec *r, struct nx_err *err)
{
	struct prof *p = arg;

	(void)err;
	if (r->kind == NX_REC_INST) {
		int e = r->u.inst.engine;

		add(&p->eng[e], r->u.inst.start, r->u.inst.end);
		if (p->ninst[e] < 4) {
			p->starts[p->ninst[e]][e] = r->u.inst.start;
			p->ends[p->ninst[e]][e] = r->u.inst.end;
		}
		p->inst_ns[e] += r->u.inst.end - r->u.inst.start;
		p->ninst[e]++;
	} else if (r->kind == NX_REC_DMA) {
		add(&p->dma, r->u.dma.start, r->u.dma.end);
		p->pkt_ns += r->u.dma.end - r->u.dma.start;
		if (r->u.dma.bytes > 4)
			p->dma_bytes += r->u.dma.bytes;
		if (!p->pkt_first_ns && r->u.dma.bytes > 4)
			p->pkt_first_ns = r->u.dma.end - r->u.dma.start;
	} else if (r->kind == NX_REC_EXEC && r->u.exec.stop) {
		p->end = r->u.exec.ts;
	}
	return 0;
}

static int run_neff(const struct nx_neff *neff, const char *target, struct prof *p,
		    struct nx_err *err)
{
	struct nx_sim_opts o = { .target = target, .dma_packets = true, .exec_index = 1 };
	struct nx_sim_sink sink = { record, p };

	memset(p, 0, sizeof(*p));
	return nx_sim_run(neff, &o, &sink, NULL, err);
}

static int run_listing(const char *text, const char *target, struct prof *p, struct nx_err *err)
{
	struct nx_neff neff;
	int rc;

	if ((rc = nx_listing_assemble("micro.listing", text, strlen(text), &neff, err)))
		return rc;
	rc = run_neff(&neff, target, p, err);
	nx_neff_release(&neff);
	return rc;
}

/* ---- output ---- */

static bool md;

static void row(const char *name, const char *what, double meas, double sim, const char *unit,
		bool points, double *err_out)
{
	double e = points ? sim - meas : 100.0 * (sim - meas) / meas;

	if (err_out)
		*err_out = e;
	if (md)
		printf("| %s | %s | %.4g %s | %.4g %s | %+.1f%s |\n", name, what, meas, unit, sim,
		       unit, e, points ? " pt" : " %");
	else
		printf("%-26s %-20s %10.4g %10.4g %-5s %+7.1f%s\n", name, what, meas, sim, unit, e,
		       points ? " pt" : " %");
}

static void head(const char *title)
{
	printf("\n%s%s\n", md ? "#### " : "# ", title);
	if (md)
		printf("\n| kernel / fact | figure | measured | simulated | error |\n"
		       "|---|---|---|---|---|\n");
	else
		printf("%-26s %-20s %10s %10s %-5s %8s\n", "kernel", "figure", "measured",
		       "simulated", "unit", "error");
}

static int cmp_abs(const void *a, const void *b)
{
	double x = fabs(*(const double *)a), y = fabs(*(const double *)b);

	return x < y ? -1 : x > y;
}

static void summary(const char *family, double *errs, size_t n, const char *unit)
{
	qsort(errs, n, sizeof(*errs), cmp_abs);
	printf(md ? "- %s: median |error| %.1f%s, worst %.1f%s (%zu figures)\n"
		  : "%s: median |error| %.1f%s, worst %.1f%s (%zu figures)\n", family,
	       n % 2 ? fabs(errs[n / 2]) : (fabs(errs[n / 2 - 1]) + fabs(errs[n / 2])) / 2, unit,
	       fabs(errs[n - 1]), unit, n);
}

/* ---- end-to-end kernels ---- */

enum { F_TOTAL, F_TE, F_DMA, F_VE, F_TE_MS, F_DMA_MS, F_PKT_MS, F_VE_MS, F_COUNT };

struct e2e {
	const char *kernel, *target, *family;
	double v[F_COUNT];   /* measured; < 0 when not published. ms or % of the span */
};

/* Measured figures (docs/simulator.md, "Calibration", lists the sources). */
static const struct e2e kernels[] = {
	{ "calib_trn1_matmul_tiled", "trn1", "A", { 51.80, -1, -1, -1, -1, -1, -1, -1 } },
	{ "calib_trn1_matmul_hoist", "trn1", "A", { 42.96, -1, -1, -1, -1, -1, -1, -1 } },
	{ "calib_trn1_matmul_block", "trn1", "A", { 22.07, -1, -1, -1, -1, -1, -1, -1 } },
	{ "calib_trn1_matmul_opt", "trn1", "A", { 6.97, -1, -1, -1, -1, -1, -1, -1 } },
	{ "calib_trn2_matmul_v2", "trn2", "B",
	  { 39.89, 87.28, 99.93, -1, 34.82, 39.87, 519.58, -1 } },
	{ "calib_trn2_matmul_v3", "trn2", "B",
	  { 28.20, 99.85, 99.73, -1, 28.16, 28.12, 402.07, -1 } },
	{ "calib_trn2_matmul_v4", "trn2", "B",
	  { 28.41, 99.52, 95.70, -1, 28.28, 27.19, 390.69, -1 } },
	{ "calib_trn2_matmul_v5", "trn2", "B",
	  { 28.30, 99.50, 21.54, 10.55, 28.16, 6.10, 81.73, 2.99 } },
	{ "calib_trn1_layernorm_v1", "trn1", "C", { 2.311, -1, -1, -1, -1, -1, -1, -1 } },
	{ "calib_trn1_layernorm_v2", "trn1", "C", { 1.969, -1, -1, -1, -1, -1, -1, -1 } },
};

static const char *const fig_name[F_COUNT] = {
	"total", "TE active", "DMA active", "VectorE active", "TE active time",
	"DMA active time", "DMA packet time", "VectorE active time",
};

static int e2e(void)
{
	static const char *const fams[] = { "A", "B", "C" };
	static const char *const fam_title[] = {
		"Family A: trn1 BF16 matmul [4096,8192]@[8192,8192] (NKI matmul tutorial)",
		"Family B: trn2 FP32 matmul [4096,8192]@[8192,8192] (kernel-optimization guide)",
		"Family C: trn1 FP32 LayerNorm 4096 x 8192 (NKI LayerNorm tutorial)",
	};
	int rc = 0;

	for (size_t f = 0; f < NX_ARRAY_SIZE(fams); f++) {
		double terr[8], perr[16], serr[16], sim_total[8], meas_total[8];
		size_t nt = 0, np = 0, ns = 0;
		bool order = true;

		head(fam_title[f]);
		for (size_t i = 0; i < NX_ARRAY_SIZE(kernels); i++) {
			const struct e2e *k = &kernels[i];
			const struct nx_kernel_def *def = nx_kernel_find(k->kernel);
			struct nx_kopts ko = { .size = 0, .target = k->target };
			struct nx_err err = { 0 };
			struct nx_neff neff;
			struct prof *p;
			double sim[F_COUNT], span;

			if (strcmp(k->family, fams[f]))
				continue;
			p = nx_xcalloc(1, sizeof(*p));
			if (!def || nx_kernel_build(def, &ko, &neff, &err)) {
				fprintf(stderr, "bench_calib: %s: %s\n", k->kernel,
					def ? err.msg : "not in the library");
				free(p);
				rc = 1;
				continue;
			}
			rc |= run_neff(&neff, k->target, p, &err) ? 1 : 0;
			nx_neff_release(&neff);
			if (err.msg[0])
				fprintf(stderr, "bench_calib: %s: %s\n", k->kernel, err.msg);
			span = (double)p->end;
			sim[F_TOTAL] = span / 1e6;
			sim[F_TE] = 100.0 * busy_ns(&p->eng[NX_ENGINE_TENSOR]) / span;
			sim[F_DMA] = 100.0 * busy_ns(&p->dma) / span;
			sim[F_VE] = 100.0 * busy_ns(&p->eng[NX_ENGINE_VECTOR]) / span;
			sim[F_TE_MS] = busy_ns(&p->eng[NX_ENGINE_TENSOR]) / 1e6;
			sim[F_DMA_MS] = busy_ns(&p->dma) / 1e6;
			sim[F_PKT_MS] = p->pkt_ns / 1e6;
			sim[F_VE_MS] = busy_ns(&p->eng[NX_ENGINE_VECTOR]) / 1e6;
			for (int x = 0; x < F_COUNT; x++) {
				bool pct = x >= F_TE && x <= F_VE;
				double e;

				if (k->v[x] < 0)
					continue;
				row(k->kernel + 6, fig_name[x], k->v[x], sim[x], pct ? "%" : "ms", pct,
				    &e);
				if (x == F_TOTAL)
					terr[nt] = e;
				else if (pct)
					perr[np++] = e;
				else
					serr[ns++] = e;
			}
			sim_total[nt] = sim[F_TOTAL];
			meas_total[nt++] = k->v[F_TOTAL];
			free(p);
		}
		for (size_t a = 0; a < nt; a++)
			for (size_t b = 0; b < nt; b++)
				if ((meas_total[a] < meas_total[b]) != (sim_total[a] < sim_total[b]))
					order = false;
		if (md)
			printf("\n");
		summary("total time", terr, nt, "%");
		if (np)
			summary("engine-busy percentages", perr, np, " pt");
		if (ns)
			summary("other published times", serr, ns, "%");
		printf("%sversion order by speed: %s\n", md ? "- " : "",
		       order ? "as measured" : "DIFFERS from measured");
	}
	return rc;
}

/* ---- micro facts ---- */

static char *mm_listing(unsigned n, const char *const *shapes, size_t nshapes)
{
	struct nx_strbuf sb = NX_STRBUF_INIT;

	nx_strbuf_addstr(&sb, "kernel micro_te\n");
	for (unsigned i = 0; i < n; i++) {
		const char *sh = shapes[(i / (n / nshapes)) % nshapes];

		nx_strbuf_addf(&sb, "%s\n", sh);
		(void)i;
	}
	return nx_strbuf_detach(&sb, NULL);
}

/* M5: a 2048^3 BF16 matmul, loops m 0..15, n 0..3, k 0..15; each iteration loads an
 * A tile and transposes it on TensorE (copy PSUM -> SBUF on VectorE) or, fast, loads
 * the lhsT tile directly; then loads the rhs tile and multiplies. Rings of 4 slots.
 * S[1] A loads, S[2] rhs loads, S[3] matmuls, S[4] output evictions, S[5] stores,
 * S[6] identity, S[7] transposes, S[8] transposed copies. */
static char *m5_listing(bool transpose)
{
	struct nx_strbuf sb = NX_STRBUF_INIT;
	unsigned j = 0, t = 0;
	const unsigned A = 0, AT = 1024, B = 2048, O = 6144, ID = 8192;

	nx_strbuf_addstr(&sb, "kernel m5\ntensor a input bf16 2048x2048\n"
			 "tensor b input bf16 2048x2048\ntensor c output bf16 2048x2048\n"
			 "queue qa dynamic Sync sem=1\nqueue qb dynamic Sync sem=2\nqueue qo dynamic Vector sem=5\n");
	if (transpose)
		nx_strbuf_addf(&sb, "GpSimd iota dst=sbuf[0:128]+%u:bf16[128] sig=S[6]=1\n", ID);
	for (unsigned m = 0; m < 16; m++) {
		for (unsigned n = 0; n < 4; n++, t++) {
			for (unsigned k = 0; k < 16; k++, j++) {
				unsigned r = j % 4;

				nx_strbuf_addf(&sb, "block a%u qa\n  desc a[%u:%u, %u:%u] -> sbuf[0:128]+%u\n"
					       "Sync dma_trigger block=a%u", j,
					       transpose ? m * 128 : k * 128, (transpose ? m : k) * 128 + 128,
					       transpose ? k * 128 : m * 128, (transpose ? k : m) * 128 + 128,
					       A + r * 256, j);
				if (j >= 4)
					nx_strbuf_addf(&sb, " wait=S[%d]>=%u", transpose ? 7 : 3, j - 3);
				nx_strbuf_addf(&sb, "\nblock b%u qb\n  desc b[%u:%u, %u:%u] -> sbuf[0:128]+%u\n"
					       "Sync dma_trigger block=b%u%s\n", j, k * 128, k * 128 + 128,
					       n * 512, n * 512 + 512, B + r * 1024, j,
					       j >= 4 ? "" : "");
				if (j >= 4)
					nx_strbuf_addf(&sb, "Sync event_semaphore wait=S[3]>=%u\n", j - 3);
				if (transpose) {
					if (j >= 4)
						nx_strbuf_addf(&sb, "Tensor event_semaphore wait=S[8]>=%u\n",
							       j - 3);
					nx_strbuf_addf(&sb, "Tensor ldweights src=sbuf[0:128]+%u:bf16[128] "
						       "transpose%s\n", ID, j ? "" : " wait=S[6]>=1");
					nx_strbuf_addf(&sb, "Tensor matmul src=sbuf[0:128]+%u:bf16[128] "
						       "dst=psum[0:128]+%u:fp32[128] transpose wait=S[1]>=%u "
						       "sig=S[7]++\n", A + r * 256, (4 + r) * 2048, 16 * (j + 1));
					if (j >= 4)
						nx_strbuf_addf(&sb, "Vector event_semaphore wait=S[3]>=%u\n",
							       j - 3);
					nx_strbuf_addf(&sb, "Vector tensor_copy src=psum[0:128]+%u:fp32[128] "
						       "dst=sbuf[0:128]+%u:bf16[128] wait=S[7]>=%u sig=S[8]++\n",
						       (4 + r) * 2048, AT + r * 256, j + 1);
				}
				if (k == 0 && t >= 4)
					nx_strbuf_addf(&sb, "Tensor event_semaphore wait=S[4]>=%u\n", t - 3);
				nx_strbuf_addf(&sb, "Tensor ldweights src=sbuf[0:128]+%u:bf16[128] "
					       "wait=S[%d]>=%u\n", (transpose ? AT : A) + r * 256,
					       transpose ? 8 : 1, transpose ? j + 1 : 16 * (j + 1));
				nx_strbuf_addf(&sb, "Tensor matmul src=sbuf[0:128]+%u:bf16[512] "
					       "dst=psum[0:128]+%u:fp32[512] wait=S[2]>=%u sig=S[3]++%s\n",
					       B + r * 1024, (t % 4) * 2048, 16 * (j + 1), k ? " acc" : "");
			}
			if (t >= 2)
				nx_strbuf_addf(&sb, "Vector event_semaphore wait=S[5]>=%u\n", 16 * (t - 1));
			nx_strbuf_addf(&sb, "Vector tensor_copy src=psum[0:128]+%u:fp32[512] "
				       "dst=sbuf[0:128]+%u:bf16[512] wait=S[3]>=%u sig=S[4]++\n"
				       "block o%u qo\n  desc sbuf[0:128]+%u -> c[%u:%u, %u:%u]\n"
				       "Vector dma_trigger block=o%u\n", (t % 4) * 2048, O + (t % 2) * 1024,
				       j, t, O + (t % 2) * 1024, m * 128, m * 128 + 128, n * 512,
				       n * 512 + 512, t);
		}
	}
	nx_strbuf_addf(&sb, "Sync event_semaphore wait=S[5]>=%u\n", 16 * t);
	return nx_strbuf_detach(&sb, NULL);
}

static int micro(void)
{
	struct nx_err err = { 0 };
	struct prof *p = nx_xcalloc(1, sizeof(*p));
	double errs[16], e;
	size_t n = 0;
	int rc = 0;

	head("Micro facts");
	/* M1: one engine moves 32 KiB HBM -> SBUF: A[4, 4096] bf16 on 4 partitions */
	rc |= run_listing("kernel m1\ntensor A input bf16 4x4096\nqueue q in Sync sem=1\n"
			  "block b q\n  desc A[0:4, 0:4096] -> sbuf[0:4]+0\n"
			  "Sync dma_trigger block=b\nSync event_semaphore wait=S[1]>=16\n",
			  "trn2", p, &err);
	row("M1 one DMA engine", "32 KiB transfer", 1416, (double)p->pkt_first_ns, "ns", false, &e);
	errs[n++] = e;
	/* M2: a 128 x 128 bf16 load, 16 engines x 2 KiB (8 partitions x 256 B) */
	rc |= run_listing("kernel m2\ntensor A input bf16 128x128\nqueue q dynamic GpSimd sem=1\n"
			  "block b q\n  desc A[0:128, 0:128] -> sbuf[0:128]+0\n"
			  "GpSimd dma_trigger block=b\nGpSimd event_semaphore wait=S[1]>=16\n",
			  "trn2", p, &err);
	row("M2 one DMA engine", "2 KiB transfer", 97, (double)p->pkt_first_ns, "ns", false, &e);
	errs[n++] = e;
	/* M3: a 128 x 8192 bf16 input loaded in 128 x 512 (1 KiB/partition) or 128 x 2048
	 * (4 KiB/partition) tiles; achieved GB/s = bytes / merged DMA-active time */
	for (int v = 0; v < 2; v++) {
		unsigned w = v ? 2048 : 512;
		struct nx_strbuf sb = NX_STRBUF_INIT;

		nx_strbuf_addstr(&sb, "kernel m3\ntensor A input bf16 128x8192\n"
				 "tensor B output bf16 128x8192\nqueue q dynamic Sync sem=1\n");
		for (unsigned c = 0; c < 8192 / w; c++)
			nx_strbuf_addf(&sb, "block b%u q\n  desc A[0:128, %u:%u] -> sbuf[0:128]+%u\n"
				       "Sync dma_trigger block=b%u\n", c, c * w, c * w + w, c * w * 2, c);
		nx_strbuf_addf(&sb, "Sync event_semaphore wait=S[1]>=%u\n", 16 * (8192 / w));
		rc |= run_listing(nx_strbuf_str(&sb), "trn2", p, &err);
		nx_strbuf_release(&sb);
		row("M3 DMA bandwidth", v ? "4 KiB/partition" : "1 KiB/partition", v ? 354 : 259,
		    p->dma_bytes / busy_ns(&p->dma), "GB/s", false, &e);
		errs[n++] = e;
	}
	/* M4: 2048 back-to-back nc_matmul, full 128/128/512 tiles, then the mixed kernel */
	{
		static const char *const full[] = {
			"Tensor ldweights src=sbuf[0:128]+0:bf16[128]\n"
			"Tensor matmul src=sbuf[0:128]+256:bf16[512] dst=psum[0:128]+0:fp32[512]",
		};
		static const char *const mixed[] = {
			"Tensor ldweights src=sbuf[0:128]+0:bf16[32]\n"
			"Tensor matmul src=sbuf[0:128]+256:bf16[512] dst=psum[0:32]+0:fp32[512]",
			"Tensor ldweights src=sbuf[0:128]+0:bf16[128]\n"
			"Tensor matmul src=sbuf[0:128]+256:bf16[64] dst=psum[0:128]+0:fp32[64]",
			"Tensor ldweights src=sbuf[0:32]+0:bf16[128]\n"
			"Tensor matmul src=sbuf[0:32]+256:bf16[512] dst=psum[0:128]+0:fp32[512]",
			"Tensor ldweights src=sbuf[0:128]+0:bf16[128]\n"
			"Tensor matmul src=sbuf[0:128]+256:bf16[512] dst=psum[0:128]+0:fp32[512]",
		};
		/* BF16-equivalent FLOPs: 2 K M N per matmul */
		const double f_full = 2.0 * 128 * 128 * 512;
		const double f_mixed = 512 * 2.0 * (128.0 * 32 * 512 + 128.0 * 128 * 64 +
						    32.0 * 128 * 512 + 128.0 * 128 * 512);
		char *t = mm_listing(2048, full, 1);

		rc |= run_listing(t, "trn2", p, &err);
		free(t);
		row("M4 TE throughput", "full tiles", 77.2,
		    2048 * f_full / busy_ns(&p->eng[NX_ENGINE_TENSOR]) / 1e3, "TF/s", false, &e);
		errs[n++] = e;
		t = mm_listing(2048, mixed, 4);
		rc |= run_listing(t, "trn2", p, &err);
		free(t);
		row("M4 TE throughput", "mixed small tiles", 30.8,
		    f_mixed / busy_ns(&p->eng[NX_ENGINE_TENSOR]) / 1e3, "TF/s", false, &e);
		errs[n++] = e;
	}
	/* M5 (hardware and dtype not stated: simulated as BF16 on trn2, static queues) */
	for (int v = 0; v < 2; v++) {
		char *t = m5_listing(v == 0);

		rc |= run_listing(t, "trn2", p, &err);
		free(t);
		row("M5 2048^3 matmul", v ? "lhsT loaded: total" : "TE transposes: total",
		    v ? 608 : 802, p->end / 1e3, "us", false, &e);
		errs[n++] = e;
		row("M5 2048^3 matmul", v ? "lhsT loaded: TE act." : "TE transposes: TE act.",
		    v ? 420 : 503, busy_ns(&p->eng[NX_ENGINE_TENSOR]) / 1e3, "us", false, &e);
		errs[n++] = e;
	}
	/* M6: dependent 1-element ACTIVATEs on trn1, each reading the previous output */
	{
		struct nx_strbuf sb = NX_STRBUF_INIT;

		nx_strbuf_addstr(&sb, "kernel m6\n");
		for (int i = 0; i < 4; i++)
			nx_strbuf_addf(&sb, "Scalar activate act=identity imm=2 "
				       "src=sbuf[0:128]+%d:fp32[1] dst=sbuf[0:128]+%d:fp32[1] "
				       "sig=S[7]++%s\n", 4 * i, 4 * i + 4,
				       i ? (i == 1 ? " wait=S[7]>=1" : i == 2 ? " wait=S[7]>=2"
								      : " wait=S[7]>=3") : "");
		rc |= run_listing(nx_strbuf_str(&sb), "trn1", p, &err);
		nx_strbuf_release(&sb);
		row("M6 dependent ScalarE op", "start to start", 189,
		    (double)(p->starts[2][NX_ENGINE_SCALAR] - p->starts[1][NX_ENGINE_SCALAR]), "ns",
		    false, &e);
		errs[n++] = e;
		row("M6 dependent ScalarE op", "duration", 159,
		    (double)(p->ends[2][NX_ENGINE_SCALAR] - p->starts[2][NX_ENGINE_SCALAR]), "ns",
		    false, &e);
		errs[n++] = e;
	}
	if (err.msg[0])
		fprintf(stderr, "bench_calib: micro: %s\n", err.msg);
	if (md)
		printf("\n");
	summary("micro facts", errs, n, "%");
	free(p);
	return rc;
}

/* The other library kernels at their default size on trn2: the table of
 * docs/simulator.md, "Library kernels and their simulated profiles". */
static int library(void)
{
	static const char *const names[NX_ENGINE_COUNT] = { "Tensor", "Vector", "Scalar", "GpSimd",
							    "Sync" };
	const struct nx_kernel_def *const *k;
	size_t n;
	int rc = 0;

	printf("\n| kernel | size | total | DMA active | busiest engine |\n|---|---|---|---|---|\n");
	k = nx_kernels(&n);
	for (size_t i = 0; i < n; i++) {
		/* the docs show serial_sem at 2048^3, where the serialisation is plain */
		struct nx_kopts ko = { .size = strcmp(k[i]->name, "serial_sem") ? 0 : 2048,
				       .target = "trn2" };
		struct nx_err err = { 0 };
		struct nx_neff neff;
		struct prof *p;
		int best = 0;

		if (!strncmp(k[i]->name, "calib_", 6))
			continue;
		p = nx_xcalloc(1, sizeof(*p));
		if (nx_kernel_build(k[i], &ko, &neff, &err) || run_neff(&neff, "trn2", p, &err)) {
			fprintf(stderr, "bench_calib: %s: %s\n", k[i]->name, err.msg);
			free(p);
			rc = 1;
			continue;
		}
		nx_neff_release(&neff);
		for (int e = 1; e < NX_ENGINE_COUNT; e++)
			if (busy_ns(&p->eng[e]) > busy_ns(&p->eng[best]))
				best = e;
		printf("| %s | %u | %.2f ms | %.2f ms (%.0f%%) | %s %.2f ms (%.0f%%) |\n", k[i]->name,
		       ko.size ? ko.size : k[i]->default_size, p->end / 1e6, busy_ns(&p->dma) / 1e6,
		       100.0 * busy_ns(&p->dma) / p->end, names[best],
		       busy_ns(&p->eng[best]) / 1e6, 100.0 * busy_ns(&p->eng[best]) / p->end);
		free(p);
	}
	return rc;
}

int main(int argc, char **argv)
{
	int rc;

	if (argc > 1 && !strcmp(argv[1], "--library"))
		return library() ? 1 : 0;
	md = argc > 1 && !strcmp(argv[1], "--markdown");
	printf("%s: measured (published) vs simulated; error = (simulated - measured) / "
	       "measured, or the difference in points for percentages\n",
	       md ? "Calibration" : "# simulator calibration");
	rc = e2e();
	rc |= micro();
	return rc ? 1 : 0;
}
