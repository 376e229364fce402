/* SPDX-License-Identifier: MIT
 * bench_calib.c: the simulator against published hardware measurements (called by
 * bench/calibration.sh): a report a user can read, family by family, with measured,
 * simulated and the error of every published figure, then the median and worst error
 * of each class of figures and how many are within the target, and an overview.
 * Families A-C are library kernels rebuilt from the NKI tutorials and guides (captured
 * here at their measured shape and target), then the micro facts (calib/calib_micro.c),
 * then family D, the NKI calibration kernels measured on trn1, when their folder is
 * given (calib/calib_nki.c). The measured values of A-C and the micro facts and their
 * sources are listed in docs/simulator.md ("Calibration").
 *
 * usage: bench_calib [--markdown] [--only FAMILIES] [--reference DIR [--nki-results TSV |
 *                    --nki-skipped WHY]]
 *        bench_calib --library
 * --markdown prints the tables of docs/simulator.md's "Results"; --only keeps the
 * families whose letters it lists (A, B, C, M for the micro facts, D); --library
 * prints docs/simulator.md's table of the other library kernels. */
#include "common/compat.h"
#include "bench/calib/calib.h"
#include "common/xalloc.h"
#include "kernels/library.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

/* Families A-C, those whose letter is in `only`. */
static int e2e(const char *only)
{
	static const char *const fams[] = { "A", "B", "C" };
	static const char *const fam_title[] = {
		"Family A: trn1 BF16 matmul [4096,8192]@[8192,8192] (NKI matmul tutorial)",
		"Family B: trn2 FP32 matmul [4096,8192]@[8192,8192] (kernel-optimization guide)",
		"Family C: trn1 FP32 LayerNorm 4096 x 8192 (NKI LayerNorm tutorial)",
	};
	static const char *const fam_short[] = { "A (trn1 mm)", "B (trn2 mm)", "C (trn1 LN)" };
	int rc = 0;

	for (size_t f = 0; f < NX_ARRAY_SIZE(fams); f++) {
		if (!strchr(only, fams[f][0]))
			continue;
		struct calib_errs terr = { .n = 0 }, perr = { .n = 0 }, serr = { .n = 0 };
		double sim_total[8], meas_total[8];
		size_t nt = 0;
		bool order = true;

		calib_head(fam_title[f]);
		for (size_t i = 0; i < NX_ARRAY_SIZE(kernels); i++) {
			const struct e2e *k = &kernels[i];
			const struct nx_kernel_def *def = nx_kernel_find(k->kernel);
			struct nx_kopts ko = { .size = 0, .target = k->target };
			struct nx_err err = { 0 };
			struct nx_neff neff;
			struct calib_prof *p;
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
			rc |= calib_run_neff(&neff, k->target, p, &err) ? 1 : 0;
			nx_neff_release(&neff);
			if (err.msg[0])
				fprintf(stderr, "bench_calib: %s: %s\n", k->kernel, err.msg);
			span = (double)p->end;
			sim[F_TOTAL] = span / 1e6;
			sim[F_TE] = 100.0 * calib_busy_ns(&p->eng[NX_ENGINE_TENSOR]) / span;
			sim[F_DMA] = 100.0 * calib_busy_ns(&p->dma) / span;
			sim[F_VE] = 100.0 * calib_busy_ns(&p->eng[NX_ENGINE_VECTOR]) / span;
			sim[F_TE_MS] = calib_busy_ns(&p->eng[NX_ENGINE_TENSOR]) / 1e6;
			sim[F_DMA_MS] = calib_busy_ns(&p->dma) / 1e6;
			sim[F_PKT_MS] = p->pkt_ns / 1e6;
			sim[F_VE_MS] = calib_busy_ns(&p->eng[NX_ENGINE_VECTOR]) / 1e6;
			for (int x = 0; x < F_COUNT; x++) {
				bool pct = x >= F_TE && x <= F_VE;

				if (k->v[x] < 0)
					continue;
				calib_row(k->kernel + 6, fig_name[x], k->v[x], sim[x], pct ? "%" : "ms",
					  pct, x == F_TOTAL ? &terr : pct ? &perr : &serr);
			}
			sim_total[nt] = sim[F_TOTAL];
			meas_total[nt++] = k->v[F_TOTAL];
			free(p);
		}
		for (size_t a = 0; a < nt; a++)
			for (size_t b = 0; b < nt; b++)
				if ((meas_total[a] < meas_total[b]) != (sim_total[a] < sim_total[b]))
					order = false;
		if (calib_md)
			printf("\n");
		calib_summary(fam_short[f], "total time", &terr, "%", 15);
		calib_summary(fam_short[f], "engine-busy percentages", &perr, " pt", 10);
		calib_summary(fam_short[f], "other published times", &serr, "%", 0);
		calib_note("version order by speed: %s", order ? "as measured" :
			   "DIFFERS from measured");
	}
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
		struct calib_prof *p;
		int best = 0;

		if (!strncmp(k[i]->name, "calib_", 6))
			continue;
		p = nx_xcalloc(1, sizeof(*p));
		if (nx_kernel_build(k[i], &ko, &neff, &err) || calib_run_neff(&neff, "trn2", p, &err)) {
			fprintf(stderr, "bench_calib: %s: %s\n", k[i]->name, err.msg);
			free(p);
			rc = 1;
			continue;
		}
		nx_neff_release(&neff);
		for (int e = 1; e < NX_ENGINE_COUNT; e++)
			if (calib_busy_ns(&p->eng[e]) > calib_busy_ns(&p->eng[best]))
				best = e;
		printf("| %s | %u | %.2f ms | %.2f ms (%.0f%%) | %s %.2f ms (%.0f%%) |\n", k[i]->name,
		       ko.size ? ko.size : k[i]->default_size, p->end / 1e6, calib_busy_ns(&p->dma) / 1e6,
		       100.0 * calib_busy_ns(&p->dma) / p->end, names[best],
		       calib_busy_ns(&p->eng[best]) / 1e6, 100.0 * calib_busy_ns(&p->eng[best]) / p->end);
		free(p);
	}
	return rc;
}

static int usage(void)
{
	fprintf(stderr, "usage: bench_calib [--markdown] [--only FAMILIES] [--reference DIR "
		"[--nki-results TSV | --nki-skipped WHY]]\n       bench_calib --library\n"
		"FAMILIES: letters among A B C M D (default all)\n");
	return 2;
}

int main(int argc, char **argv)
{
	const char *ref = NULL, *results = NULL, *why = NULL, *only = "ABCMD";
	int rc;

	if (argc == 2 && !strcmp(argv[1], "--library"))
		return library() ? 1 : 0;
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--markdown"))
			calib_md = true;
		else if (!strcmp(argv[i], "--only") && i + 1 < argc &&
			 argv[i + 1][0] && strspn(argv[i + 1], "ABCMD") == strlen(argv[i + 1]))
			only = argv[++i];
		else if (!strcmp(argv[i], "--reference") && i + 1 < argc)
			ref = argv[++i];
		else if (!strcmp(argv[i], "--nki-results") && i + 1 < argc)
			results = argv[++i];
		else if (!strcmp(argv[i], "--nki-skipped") && i + 1 < argc)
			why = argv[++i];
		else
			return usage();
	}
	if ((results || why) && !ref)
		return usage();
	printf("%s: measured vs simulated; error = (simulated - measured) / measured, or the "
	       "difference in points for percentages. Targets: totals ±15%%, engine-busy "
	       "percentages ±10 points, HBM bytes and micro facts ±10%%\n",
	       calib_md ? "Calibration" : "# simulator calibration");
	rc = e2e(only);
	if (strchr(only, 'M'))
		rc |= calib_micro();
	if (strchr(only, 'D') && ref)
		rc |= calib_nki(ref, results, why);
	else if (strchr(only, 'D'))
		printf("\n%sFamily D (NKI calibration kernels, trn1): not run: give the folder "
		       "that holds nki-calibration/ with --reference\n", calib_md ? "#### " : "# ");
	calib_overview();
	return rc ? 1 : 0;
}
