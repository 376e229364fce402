/* SPDX-License-Identifier: MIT
 * calib_nki.c: family D of the calibration report, the NKI calibration kernels measured
 * on one trn1 NeuronCore with --disable-dge (REF/nki-calibration, read at run time: the
 * bench may read that folder, the repository does not copy it). Their measured Summary
 * (measured.tsv) is set against the Summary of their simulated run through the NKI
 * front-end (the TSV bench/nki_calibration.py writes): total time, HBM read + write
 * bytes (spills included), ScalarE, VectorE and GpSimd active time.
 *
 * Then the DMA streams of the two kernels that are DMA-bound on hardware (matmul: 9.3 GB
 * in 35.2 ms, bmm: 1.15 GB in 4.6 ms, both in 4 KiB rows), simulated alone: every load
 * and store of the kernel's loop nest, in its order, on static queues, without the
 * compute. The loads are the ones the measured HBM bytes imply the compiler kept: the
 * matmul re-reads its rhs strip for every row block of lhs (40 loads of 128 x 1024 FP32
 * per (n block, m block): 8.05 GB of its 9.06 GB read), the bmm reads each input once
 * (hoisted out of the loop over N blocks: 32 MiB); spill traffic is left out. */
#include "common/compat.h"
#include "bench/calib/calib.h"
#include "common/fsutil.h"
#include "common/strbuf.h"
#include "common/xalloc.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- TSV files ---- */

enum { C_PROBLEM, C_TOTAL, C_HBM_R, C_HBM_W, C_SP_R, C_SP_W, C_ACT, C_DVE, C_POOL, C_STATUS,
       C_COUNT };

/* Column names: measured.tsv (latency in ms, fractions of the total) and the results
 * file (the simulated Summary's fields, total_time in s); NULL: not in that file. */
static const char *const meas_col[C_COUNT] = {
	"problem", "latency", "hbm_read_bytes", "hbm_write_bytes", "spill_reload_bytes",
	"spill_save_bytes", "scalar_engine_active_time_percent",
	"vector_engine_active_time_percent", "gpsimd_engine_active_time_percent", NULL,
};
static const char *const sim_col[C_COUNT] = {
	"problem", "total_time", "hbm_read_bytes", "hbm_write_bytes", "spill_reload_bytes",
	"spill_save_bytes", "scalar_engine_active_time_percent",
	"vector_engine_active_time_percent", "gpsimd_engine_active_time_percent", "status",
};

struct tsv {
	char *text;
	const char *(*row)[C_COUNT]; /* row[i][c]: column c of data line i ("" if absent) */
	size_t n, cap;
};

static void tsv_release(struct tsv *t)
{
	free(t->text);
	free(t->row);
	memset(t, 0, sizeof(*t));
}

/* Reads a TSV whose first line names the columns; keeps those of cols. */
static int tsv_read(const char *path, const char *const *cols, struct tsv *t, struct nx_err *err)
{
	char *save = NULL, *line;
	int idx[C_COUNT];
	size_t len = 0, lineno = 0;
	int rc;

	memset(t, 0, sizeof(*t));
	if ((rc = nx_read_file(path, &t->text, &len, err)))
		return rc;
	for (line = strtok_r(t->text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char *f[64];
		size_t nf = 0;

		lineno++;
		line[strcspn(line, "\r")] = '\0';
		for (char *x = line; x && nf < NX_ARRAY_SIZE(f);) {
			f[nf++] = x;
			if ((x = strchr(x, '\t')))
				*x++ = '\0';
		}
		if (lineno == 1) {
			for (int c = 0; c < C_COUNT; c++) {
				idx[c] = -1;
				for (size_t i = 0; cols[c] && i < nf; i++)
					if (!strcmp(f[i], cols[c]))
						idx[c] = (int)i;
				if (cols[c] && idx[c] < 0)
					return nx_errf(err, NX_ECORRUPT, "%s:1: no column '%s'", path,
						       cols[c]);
			}
			continue;
		}
		NX_GROW(t->row, t->n + 1, t->cap);
		for (int c = 0; c < C_COUNT; c++)
			t->row[t->n][c] = idx[c] >= 0 && (size_t)idx[c] < nf ? f[idx[c]] : "";
		if (!t->row[t->n][C_PROBLEM][0])
			return nx_errf(err, NX_ECORRUPT, "%s:%zu: no problem name", path, lineno);
		t->n++;
	}
	if (!t->n)
		return nx_errf(err, NX_ECORRUPT, "%s: no data line", path);
	return 0;
}

/* Column c of row as a number; false (and a message) when it is not one. */
static bool num(const struct tsv *t, size_t i, int c, const char *path, double *v)
{
	char *end;

	*v = strtod(t->row[i][c], &end);
	if (end == t->row[i][c] || *end) {
		fprintf(stderr, "bench_calib: %s: %s: '%s' is not a number\n", path,
			t->row[i][C_PROBLEM], t->row[i][c]);
		return false;
	}
	return true;
}

static const char *title =
	"Family D: NKI calibration kernels on trn1 (NKIBench, measured with --disable-dge)";

/* The kernels run through the NKI front-end: total, HBM bytes and the three ALU
 * engines' active time against the measured Summary. */
static int compare(const struct tsv *m, const char *mpath, const char *results)
{
	struct calib_errs terr = { .n = 0 }, herr = { .n = 0 }, perr = { .n = 0 };
	static const char *const eng[3] = { "ScalarE active", "VectorE active", "GpSimd active" };
	struct nx_err err = { 0 };
	struct tsv s;
	char what[64];
	size_t ran = 0;
	int rc = 0;

	if (tsv_read(results, sim_col, &s, &err)) {
		fprintf(stderr, "bench_calib: %s\n", err.msg);
		return 1;
	}
	calib_head(title);
	for (size_t i = 0; i < m->n; i++) {
		const char *name = m->row[i][C_PROBLEM];
		double mv[C_COUNT], sv[C_COUNT];
		size_t j;

		for (j = 0; j < s.n && strcmp(s.row[j][C_PROBLEM], name); j++)
			;
		if (j == s.n || strcmp(s.row[j][C_STATUS], "ok")) {
			calib_note("%s: not simulated: %s", name,
				   j == s.n ? "missing from the results" : s.row[j][C_STATUS]);
			continue;
		}
		for (int c = C_TOTAL; c <= C_POOL; c++)
			if (!num(m, i, c, mpath, &mv[c]) || !num(&s, j, c, results, &sv[c]))
				goto bad;
		ran++;
		calib_row(name, "total", mv[C_TOTAL], sv[C_TOTAL] * 1e3, "ms", false, &terr);
		calib_row(name, "HBM read+write", (mv[C_HBM_R] + mv[C_HBM_W]) / 1e6,
			  (sv[C_HBM_R] + sv[C_HBM_W]) / 1e6, "MB", false, &herr);
		if (mv[C_SP_R] + mv[C_SP_W] > 0 || sv[C_SP_R] + sv[C_SP_W] > 0)
			calib_row(name, "  of which spills", (mv[C_SP_R] + mv[C_SP_W]) / 1e6,
				  (sv[C_SP_R] + sv[C_SP_W]) / 1e6, "MB", false, NULL);
		for (int e = 0; e < 3; e++)
			calib_row(name, eng[e], 100 * mv[C_ACT + e], 100 * sv[C_ACT + e], "%", true,
				  &perr);
		continue;
bad:
		rc = 1;
	}
	if (calib_md)
		printf("\n");
	snprintf(what, sizeof(what), "total time (%zu of %zu kernels ran)", ran, m->n);
	calib_summary("D (trn1 NKI)", what, &terr, "%", 15);
	calib_summary("D (trn1 NKI)", "ALU engine-busy percentages", &perr, " pt", 10);
	calib_summary("D (trn1 NKI)", "HBM read+write bytes", &herr, "%", 10);
	tsv_release(&s);
	return rc;
}

/* ---- the DMA streams of the DMA-bound kernels ---- */

/* A DMA stream being written: its listing, its blocks so far and the transfers of
 * each queue: qSyncIO0 and qSyncIO1 loads, qSyncIO2 stores (semaphores S[1..3]). */
struct stream {
	struct nx_strbuf sb;
	unsigned nb, n[3];
};

/* The stream's kernel, its three tensors (shapes in the listing's syntax), queues. */
static void stream_head(struct stream *st, const char *name, const char *lhs,
			const char *rhs, const char *res)
{
	memset(st, 0, sizeof(*st));
	st->sb = (struct nx_strbuf)NX_STRBUF_INIT;
	nx_strbuf_addf(&st->sb, "kernel %s\ntensor lhs input fp32 %s\ntensor rhs input fp32 %s\n"
		       "tensor res output fp32 %s\nqueue qSyncIO0 in Sync sem=1\n"
		       "queue qSyncIO1 in Sync sem=2\nqueue qSyncIO2 out Sync sem=3\n", name, lhs,
		       rhs, res);
}

/* One load or store on queue q (0..2): a block and its trigger from SyncE. */
static void xfer(struct stream *st, unsigned q, const char *src, const char *dst)
{
	nx_strbuf_addf(&st->sb, "block b%u qSyncIO%u\n  desc %s -> %s\nSync dma_trigger "
		       "block=b%u\n", st->nb, q, src, dst, st->nb);
	st->nb++;
	st->n[q]++;
}

/* Waits for every transfer of each queue; returns the listing. */
static char *stream_end(struct stream *st)
{
	for (unsigned q = 0; q < 3; q++)
		nx_strbuf_addf(&st->sb, "Sync event_semaphore wait=S[%u]>=%u\n", q + 1,
			       16 * st->n[q]);
	return nx_strbuf_detach(&st->sb, NULL);
}

/* matmul M4096 N12288 K5120, FP32: lhs [32,128,40,128] (here [4096,40,128]), rhs
 * [40,128,12288] ([5120,12288]), result [32,128,12288] ([4096,12288]). Per n block of
 * 1024 (12) and m block of 128 (32): the 40 rhs tiles [128 x 1024], the 5 lhs tiles of
 * 8 x 128 columns (4 KiB contiguous per partition), one store [128 x 1024]. */
static char *matmul_stream(void)
{
	struct stream st;
	char src[96], dst[96];

	stream_head(&st, "nki_matmul_dma", "4096x40x128", "5120x12288", "4096x12288");
	for (unsigned i0 = 0; i0 < 12; i0++) {
		for (unsigned i3 = 0; i3 < 32; i3++) {
			for (unsigned k = 0; k < 40; k++) {
				snprintf(src, sizeof(src), "rhs[%u:%u, %u:%u]", 128 * k, 128 * k + 128,
					 1024 * i0, 1024 * i0 + 1024);
				snprintf(dst, sizeof(dst), "sbuf[0:128]+%u", 4096 * k);
				xfer(&st, 0, src, dst);
			}
			for (unsigned i4 = 0; i4 < 5; i4++) {
				snprintf(src, sizeof(src), "lhs[%u:%u, %u:%u, 0:128]", 128 * i3,
					 128 * i3 + 128, 8 * i4, 8 * i4 + 8);
				xfer(&st, 1, src, "sbuf[0:128]+163840");
			}
			snprintf(dst, sizeof(dst), "res[%u:%u, %u:%u]", 128 * i3, 128 * i3 + 128,
				 1024 * i0, 1024 * i0 + 1024);
			xfer(&st, 2, "sbuf[0:128]+184320", dst);
		}
	}
	return stream_end(&st);
}

/* bmm B16 M4096 K64 N4096, FP32: lhs [16,4096,64] ([65536,64]), rhs [16,64,4096]
 * ([1024,4096]), result [16,32,128,4096] ([65536,4096]). Per batch: 32 lhs tiles
 * [128 x 64] (32 KiB contiguous), then per n block of 1024 (4) the rhs tile [64 x 1024]
 * and 32 stores [128 x 1024]. */
static char *bmm_stream(void)
{
	struct stream st;
	char src[96], dst[96];

	stream_head(&st, "nki_bmm_dma", "65536x64", "1024x4096", "65536x4096");
	for (unsigned i0 = 0; i0 < 16; i0++) {
		for (unsigned t = 0; t < 32; t++) {
			snprintf(src, sizeof(src), "lhs[%u:%u, 0:64]", 4096 * i0 + 128 * t,
				 4096 * i0 + 128 * t + 128);
			xfer(&st, 0, src, "sbuf[0:128]+0");
		}
		for (unsigned i1 = 0; i1 < 4; i1++) {
			snprintf(src, sizeof(src), "rhs[%u:%u, %u:%u]", 64 * i0, 64 * i0 + 64,
				 1024 * i1, 1024 * i1 + 1024);
			xfer(&st, 1, src, "sbuf[0:64]+8192");
			for (unsigned r = 0; r < 32; r++) {
				unsigned row = (32 * i0 + r) * 128;

				snprintf(dst, sizeof(dst), "res[%u:%u, %u:%u]", row, row + 128,
					 1024 * i1, 1024 * i1 + 1024);
				xfer(&st, 2, "sbuf[0:128]+12288", dst);
			}
		}
	}
	return stream_end(&st);
}

static int streams(const struct tsv *m, const char *mpath)
{
	static const struct {
		const char *problem;
		char *(*gen)(void);
	} k[] = { { "matmul", matmul_stream }, { "bmm", bmm_stream } };
	struct calib_errs errs = { .n = 0 };
	struct calib_prof *p = nx_xcalloc(1, sizeof(*p));
	int rc = 0;

	calib_head("Family D, DMA streams alone: the loads and stores of its DMA-bound kernels, "
		   "without compute");
	for (size_t x = 0; x < NX_ARRAY_SIZE(k); x++) {
		struct nx_err err = { 0 };
		double meas;
		size_t i;
		char *text;

		for (i = 0; i < m->n && strcmp(m->row[i][C_PROBLEM], k[x].problem); i++)
			;
		if (i == m->n || !num(m, i, C_TOTAL, mpath, &meas)) {
			calib_note("%s: not in %s", k[x].problem, mpath);
			rc = 1;
			continue;
		}
		text = k[x].gen();
		if (calib_run_listing(text, "trn1", p, &err)) {
			fprintf(stderr, "bench_calib: %s DMA stream: %s\n", k[x].problem, err.msg);
			rc = 1;
		} else {
			calib_row(k[x].problem, "DMA stream vs total", meas, p->end / 1e6, "ms", false,
				  &errs);
		}
		free(text);
	}
	if (calib_md)
		printf("\n");
	calib_summary("D (DMA streams)", "DMA-bound totals", &errs, "%", 15);
	free(p);
	return rc;
}

int calib_nki(const char *ref, const char *results, const char *why)
{
	char *mpath = nx_xasprintf("%s/nki-calibration/measured.tsv", ref);
	struct nx_err err = { 0 };
	struct tsv m;
	int rc = 0;

	if (tsv_read(mpath, meas_col, &m, &err)) {
		fprintf(stderr, "bench_calib: %s\n", err.msg);
		free(mpath);
		return 1;
	}
	if (results) {
		rc |= compare(&m, mpath, results);
	} else {
		printf("\n%s%s\n", calib_md ? "#### " : "# ", title);
		calib_note("not run: %s", why ? why : "no results from the NKI front-end");
	}
	rc |= streams(&m, mpath);
	tsv_release(&m);
	free(mpath);
	return rc;
}
