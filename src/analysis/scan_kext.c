/* SPDX-License-Identifier: MIT
 * scan_kext.c: the kernel's extent for `recommend --window kernel` (see scan.h): the
 * first start and last end of the kernel's packets. The footers' statistics of start_ts
 * and end_ts tell which row groups of DmaPacket can hold them: for the first start, the
 * row groups in order of their least start_ts, until one holds a kernel packet and no
 * group left starts before it; for the last end, by their greatest end_ts, likewise.
 * Usually two row groups of hundreds are read. Files whose statistics do not tell, or
 * that the C reader does not read, and NX_REC_READ=duckdb, take a pass over the whole
 * table instead (as before). */
#include "common/compat.h"
#include "analysis/scan.h"
#include "common/xalloc.h"

#include <stdlib.h>
#include <string.h>

enum { K_START, K_END, K_BYTES, K_QUEUE, K_N };
static const struct nx_rec_colspec kext_cols[K_N] = {
	{ "start_ts", NX_REC_BIGINT }, { "end_ts", NX_REC_BIGINT },
	{ "transfer_bytes", NX_REC_BIGINT }, { "queue_type", NX_REC_VARCHAR },
};

struct kernel_extent {
	bool lo_set, hi_set;
	int64_t lo, hi;
};

static void kext_reset(void *arg)
{
	memset(arg, 0, sizeof(struct kernel_extent));
}

static int kext_batch(void *arg, const struct nx_pqr_batch *b, struct nx_err *err)
{
	struct kernel_extent *x = arg;

	(void)err;
	for (size_t r = 0; r < b->rows; r++) {
		int64_t s, e, bytes;

		if (!nx__rec_kernel_packet(b, K_BYTES, r, &bytes))
			continue;
		if (nx__rec_i64(b, K_START, r, &s) && (!x->lo_set || s < x->lo)) {
			x->lo = s;
			x->lo_set = true;
		}
		if (nx__rec_i64(b, K_END, r, &e) && (!x->hi_set || e > x->hi)) {
			x->hi = e;
			x->hi_set = true;
		}
	}
	return 0;
}

/* ---- from the footers ------------------------------------------------------------- */

/* A row group: its least start_ts and greatest end_ts by its statistics (unset when it
 * holds none), and whether it was read. */
struct group {
	size_t g;
	struct nx_pqr_range start, end;
	bool read;
};

static int by_least_start(const void *a, const void *b)
{
	const struct group *x = *(const struct group *const *)a;
	const struct group *y = *(const struct group *const *)b;

	return x->start.lo < y->start.lo ? -1 : x->start.lo > y->start.lo;
}

static int by_greatest_end(const void *a, const void *b)
{
	const struct group *x = *(const struct group *const *)a;
	const struct group *y = *(const struct group *const *)b;

	return x->end.hi > y->end.hi ? -1 : x->end.hi < y->end.hi;
}

/* Reads row group g into the extent (once). */
static int read_group(struct nx_pqr *p, struct group *g, struct kernel_extent *x,
		      struct nx_err *err)
{
	const struct nx_pqr_batch *b;
	int rc;

	if (g->read)
		return 0;
	g->read = true;
	nx_pqr_seek(p, g->g);
	if ((rc = nx_pqr_next(p, &b, err)))
		return rc;
	return b ? kext_batch(x, b, err) : 0;
}

/* The extent from the row groups the statistics point at (*nread of them): NX_ENOTFOUND
 * (or NX_EVERSION, a row group the C reader does not read) when the pass must read them. */
static int footer_extent(const char *dir, struct kernel_extent *x, size_t *nread,
			 struct nx_err *err)
{
	struct nx_pqr *p = NULL;
	struct group *gs = NULL, **by_start = NULL, **by_end = NULL;
	size_t n = 0, ns = 0, ne = 0;
	int rc = nx__rec_read_groups(dir, "DmaPacket", kext_cols, K_N, &p, err);

	memset(x, 0, sizeof(*x));
	*nread = 0;
	if (!rc) {
		n = nx_pqr_groups(p);
		gs = nx_xcalloc(n ? n : 1, sizeof(*gs));
		by_start = nx_xcalloc(n ? n : 1, sizeof(*by_start));
		by_end = nx_xcalloc(n ? n : 1, sizeof(*by_end));
	}
	for (size_t i = 0; !rc && i < n; i++) {
		gs[i].g = i;
		rc = nx_pqr_group_range(p, i, K_START, &gs[i].start, err);
		if (!rc)
			rc = nx_pqr_group_range(p, i, K_END, &gs[i].end, err);
		if (!rc && gs[i].start.set)
			by_start[ns++] = &gs[i];
		if (!rc && gs[i].end.set)
			by_end[ne++] = &gs[i];
	}
	if (!rc) {
		qsort(by_start, ns, sizeof(*by_start), by_least_start);
		qsort(by_end, ne, sizeof(*by_end), by_greatest_end);
	}
	/* a row group whose least start is not below the first kernel start found holds no
	 * earlier one; likewise for the ends; every group read counts for both */
	for (size_t i = 0; !rc && i < ns && !(x->lo_set && by_start[i]->start.lo >= x->lo); i++)
		rc = read_group(p, by_start[i], x, err);
	for (size_t i = 0; !rc && i < ne && !(x->hi_set && by_end[i]->end.hi <= x->hi); i++)
		rc = read_group(p, by_end[i], x, err);
	for (size_t i = 0; i < n; i++)
		*nread += gs[i].read;
	free(by_start);
	free(by_end);
	free(gs);
	nx_pqr_close(p);
	return rc;
}

int nx__rec_kernel_extent_footers(const char *dir, int64_t *t0, int64_t *t1, size_t *nread,
				  struct nx_err *err)
{
	struct kernel_extent x;
	int rc = footer_extent(dir, &x, nread, err);

	if (rc)
		return rc == NX_EVERSION ? (err->code = NX_ENOTFOUND) : rc;
	if (!x.lo_set || !x.hi_set)
		return 1;
	*t0 = x.lo;
	*t1 = x.hi;
	return 0;
}

int nx__rec_kernel_extent(struct nx_duck *d, const struct nx_rec_scan *sc, int64_t *t0,
			  int64_t *t1, struct nx_err *err)
{
	/* NX_REC_KEXT=pass takes the pass whatever the footers say (the tests compare) */
	const char *how = getenv("NX_REC_READ"), *kext = getenv("NX_REC_KEXT");
	struct kernel_extent x = { 0 };
	size_t nread;
	int rc = NX_ENOTFOUND;

	if (!(how && !strcmp(how, "duckdb")) && !(kext && !strcmp(kext, "pass"))) {
		rc = nx__rec_kernel_extent_footers(sc->dir, t0, t1, &nread, err);
		if (rc != NX_ENOTFOUND)
			return rc < 0 ? nx_err_wrap(err, "reading DmaPacket") : rc;
		nx_err_clear(err);
	}
	rc = nx__rec_read_pass(d, sc->dir, "DmaPacket", kext_cols, K_N, NULL, kext_reset,
			       kext_batch, &x, err);
	if (rc)
		return nx_err_wrap(err, "reading DmaPacket");
	if (!x.lo_set || !x.hi_set)
		return 1;
	*t0 = x.lo;
	*t1 = x.hi;
	return 0;
}
