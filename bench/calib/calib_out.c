/* SPDX-License-Identifier: MIT
 * calib_out.c: bench_calib's shared parts: simulating a NEFF or a listing into a
 * profile of busy intervals and bytes, and the report (rows, per-family summaries, the
 * closing overview), as plain text or as the markdown of docs/simulator.md. */
#include "common/compat.h"
#include "bench/calib/calib.h"
#include "common/xalloc.h"
#include "kernels/listing.h"
#include "sim/sim.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

bool calib_md;

/* ---- profiles ---- */

static void busy_add(struct calib_busy *b, uint64_t s, uint64_t e)
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

double calib_busy_ns(const struct calib_busy *b)
{
	return b->any ? (double)(b->total + b->e - b->s) : 0.0;
}

static bool touches_hbm(const struct nx_neff *neff, const struct nx_rec_dma *d)
{
	const struct nx_dma_desc *dd;

	if (!neff || d->block >= neff->nblocks || d->desc >= neff->blocks[d->block].ndesc)
		return false;
	dd = &neff->blocks[d->block].desc[d->desc];
	return dd->from_loc == NX_LOC_HBM || dd->to_loc == NX_LOC_HBM;
}

static int record(void *arg, const struct nx_rec *r, struct nx_err *err)
{
	struct calib_prof *p = arg;

	(void)err;
	if (r->kind == NX_REC_INST) {
		int e = r->u.inst.engine;

		busy_add(&p->eng[e], r->u.inst.start, r->u.inst.end);
		if (p->ninst[e] < 4) {
			p->starts[p->ninst[e]][e] = r->u.inst.start;
			p->ends[p->ninst[e]][e] = r->u.inst.end;
		}
		p->inst_ns[e] += r->u.inst.end - r->u.inst.start;
		p->ninst[e]++;
	} else if (r->kind == NX_REC_DMA) {
		busy_add(&p->dma, r->u.dma.start, r->u.dma.end);
		p->pkt_ns += r->u.dma.end - r->u.dma.start;
		if (r->u.dma.bytes > 4) {
			p->dma_bytes += r->u.dma.bytes;
			if (touches_hbm(p->neff, &r->u.dma))
				p->hbm_bytes += r->u.dma.bytes;
		}
		if (!p->pkt_first_ns && r->u.dma.bytes > 4)
			p->pkt_first_ns = r->u.dma.end - r->u.dma.start;
	} else if (r->kind == NX_REC_EXEC && r->u.exec.stop) {
		p->end = r->u.exec.ts;
	}
	return 0;
}

int calib_run_neff(const struct nx_neff *neff, const char *target, struct calib_prof *p,
		   struct nx_err *err)
{
	struct nx_sim_opts o = { .target = target, .dma_packets = true, .exec_index = 1 };
	struct nx_sim_sink sink = { record, p };

	memset(p, 0, sizeof(*p));
	p->neff = neff;
	return nx_sim_run(neff, &o, &sink, NULL, err);
}

int calib_run_listing(const char *text, const char *target, struct calib_prof *p,
		      struct nx_err *err)
{
	struct nx_neff neff;
	int rc;

	if ((rc = nx_listing_assemble("calib.listing", text, strlen(text), &neff, err)))
		return rc;
	rc = calib_run_neff(&neff, target, p, err);
	p->neff = NULL;
	nx_neff_release(&neff);
	return rc;
}

/* ---- the report ---- */

void calib_head(const char *title)
{
	printf("\n%s%s\n", calib_md ? "#### " : "# ", title);
	if (calib_md)
		printf("\n| kernel / fact | figure | measured | simulated | error |\n"
		       "|---|---|---|---|---|\n");
	else
		printf("%-26s %-20s %10s %10s %-5s %8s\n", "kernel", "figure", "measured",
		       "simulated", "unit", "error");
}

void calib_row(const char *name, const char *what, double meas, double sim, const char *unit,
	       bool points, struct calib_errs *errs)
{
	double e = points ? sim - meas : 100.0 * (sim - meas) / meas;

	if (errs && errs->n < NX_ARRAY_SIZE(errs->v))
		errs->v[errs->n++] = e;
	if (calib_md)
		printf("| %s | %s | %.4g %s | %.4g %s | %+.1f%s |\n", name, what, meas, unit, sim,
		       unit, e, points ? " pt" : " %");
	else
		printf("%-26s %-20s %10.4g %10.4g %-5s %+7.1f%s\n", name, what, meas, sim, unit, e,
		       points ? " pt" : " %");
}

void calib_note(const char *fmt, ...)
{
	va_list ap;

	printf(calib_md ? "- " : "");
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
}

static int cmp_abs(const void *a, const void *b)
{
	double x = fabs(*(const double *)a), y = fabs(*(const double *)b);

	return x < y ? -1 : x > y;
}

/* the summary lines, kept for the overview */
static struct line {
	char family[64], what[64], median[24], worst[24], within[24];
} *lines;
static size_t nlines, caplines;
static char last_family[64];

void calib_summary(const char *family, const char *what, struct calib_errs *errs,
		   const char *unit, double target)
{
	double med, worst;
	size_t n = errs->n, ok = 0;
	struct line *l;

	if (!n)
		return;
	qsort(errs->v, n, sizeof(errs->v[0]), cmp_abs);
	med = n % 2 ? fabs(errs->v[n / 2]) : (fabs(errs->v[n / 2 - 1]) + fabs(errs->v[n / 2])) / 2;
	worst = fabs(errs->v[n - 1]);
	for (size_t i = 0; i < n; i++)
		ok += fabs(errs->v[i]) <= target;
	NX_GROW(lines, nlines + 1, caplines);
	l = &lines[nlines++];
	snprintf(l->family, sizeof(l->family), "%s",
		 strcmp(family, last_family) ? family : "");
	snprintf(last_family, sizeof(last_family), "%s", family);
	snprintf(l->what, sizeof(l->what), "%s", what);
	snprintf(l->median, sizeof(l->median), "%.1f%s", med, unit);
	snprintf(l->worst, sizeof(l->worst), "%.1f%s", worst, unit);
	if (target > 0)
		snprintf(l->within, sizeof(l->within), "%zu of %zu (±%g%s)", ok, n, target, unit);
	else
		snprintf(l->within, sizeof(l->within), "%zu figures", n);
	printf(calib_md ? "- %s: median |error| %s, worst %s; within target: %s\n"
			: "%s: median |error| %s, worst %s; within target: %s\n", what, l->median,
	       l->worst, target > 0 ? l->within : "none set");
	errs->n = 0;
}

void calib_overview(void)
{
	if (calib_md)
		printf("\n#### Overview\n\n| family | figures | median abs. error | worst | within "
		       "target |\n|---|---|---|---|---|\n");
	else
		printf("\n# Overview\n%-16s %-36s %10s %10s  %s\n", "family", "figures", "median",
		       "worst", "within target");
	for (size_t i = 0; i < nlines; i++) {
		const struct line *l = &lines[i];

		if (calib_md)
			printf("| %s | %s | %s | %s | %s |\n", l->family, l->what, l->median, l->worst,
			       l->within);
		else
			printf("%-16s %-36s %10s %10s  %s\n", l->family, l->what, l->median, l->worst,
			       l->within);
	}
	free(lines);
	lines = NULL;
	nlines = caplines = 0;
}
