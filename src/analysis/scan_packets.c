/* SPDX-License-Identifier: MIT
 * scan_packets.c: recommend's passes over DmaPacket and ActiveTime (see scan.h). The
 * unions need their intervals in start order: DmaPacket is read in file order, which
 * the ingest writes by start, and read again sorted by DuckDB (which spills into the
 * analysis's own directory) should a start come before the one above it; ActiveTime,
 * one row per run of an engine, likewise: in file order, where the ingest writes each
 * engine's runs by start, and sorted by DuckDB should a run of an engine start before
 * the one above it. */
#include "common/compat.h"
#include "analysis/scan.h"
#include "analysis/rec.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* The first four serve the union, the extent and the bytes; the last two the busy time
 * per transfer of the transfers' merge (scan_xfer.c). */
enum { P_START, P_END, P_BYTES, P_QUEUE, P_AGG, P_DUR, P_N };
static const struct nx_rec_colspec packet_cols[P_N] = {
	{ "start_ts", NX_REC_BIGINT }, { "end_ts", NX_REC_BIGINT },
	{ "transfer_bytes", NX_REC_BIGINT }, { "queue_type", NX_REC_VARCHAR },
	{ "packet_aggregation_id", NX_REC_BIGINT }, { "duration_ns", NX_REC_BIGINT },
};

struct packets {
	struct nx_rec_scan *sc;
	bool busy; /* the busy time per transfer is wanted */
	struct nx_rec_union u;
	int64_t last, bytes;
	bool any;
	/* a window's pass: the union of the packets unclipped, for sc->dma_runs */
	struct nx_rec_union all;
	int64_t all_last;
	bool all_any;
};

static void packets_reset(void *arg)
{
	struct packets *p = arg;
	struct nx_rec_scan *sc = p->sc;
	bool busy = p->busy;

	memset(p, 0, sizeof(*p));
	p->sc = sc;
	p->busy = busy;
	sc->packets = 0;
	sc->pk_lo_set = sc->pk_hi_set = false;
	nx__rec_busy_reset(sc);
	nx__rec_stretches_release(&sc->dma_runs);
	/* NX_REC_DMA_RUNS=read: the investigation reads DmaPacket again (the tests compare) */
	const char *how = getenv("NX_REC_DMA_RUNS");
	sc->dma_runs_kept = !how || strcmp(how, "read");
}

/* A run of the union of all packets into sc->dma_runs, while they are not too many. */
static void keep_run(struct nx_rec_scan *sc, int64_t rs, int64_t re)
{
	if (!sc->dma_runs_kept)
		return;
	if (sc->dma_runs.n == NX_REC_DMA_RUNS_MAX) {
		nx__rec_stretches_release(&sc->dma_runs);
		sc->dma_runs_kept = false;
		return;
	}
	nx__rec_stretches_add(&sc->dma_runs, rs, re);
}

/* [s, e) (e > s) into the unclipped union of a window's pass. */
static int all_add(struct packets *p, int64_t s, int64_t e)
{
	int64_t rs, re;

	if (p->all_any && s < p->all_last)
		return NX_REC_UNSORTED;
	p->all_any = true;
	p->all_last = s;
	if (nx__rec_union_add(&p->all, s, e, &rs, &re))
		keep_run(p->sc, rs, re);
	return 0;
}

static int packets_batch(void *arg, const struct nx_pqr_batch *b, struct nx_err *err)
{
	struct packets *p = arg;
	struct nx_rec_scan *sc = p->sc;
	const struct nx_rec_scan_window *w = &sc->win;

	for (size_t r = 0; r < b->rows; r++) {
		int64_t s = 0, e = 0, bytes, rs, re, agg, dur;
		bool hs = nx__rec_i64(b, P_START, r, &s), he = nx__rec_i64(b, P_END, r, &e);

		sc->packets++;
		if (p->busy && nx__rec_i64(b, P_AGG, r, &agg) && nx__rec_i64(b, P_DUR, r, &dur)) {
			int rc = nx__rec_busy_add(sc, agg, dur, err);
			if (rc)
				return rc;
		}
		if (hs && (!sc->pk_lo_set || s < sc->pk_lo)) {
			sc->pk_lo = s;
			sc->pk_lo_set = true;
		}
		if (he && (!sc->pk_hi_set || e > sc->pk_hi)) {
			sc->pk_hi = e;
			sc->pk_hi_set = true;
		}
		if (hs && (w->whole || (s >= w->t0 && s < w->t1)) &&
		    nx__rec_kernel_packet(b, P_BYTES, r, &bytes))
			p->bytes += bytes;
		if (!hs || !he)
			continue;
		if (!w->whole && e > s) {
			int rc = all_add(p, s, e);
			if (rc)
				return rc;
		}
		if (!w->whole) {
			s = s > w->t0 ? s : w->t0;
			e = e < w->t1 ? e : w->t1;
		}
		if (e <= s)
			continue;
		if (p->any && s < p->last)
			return NX_REC_UNSORTED;
		p->any = true;
		p->last = s;
		/* over the whole profile, the union is that of all packets */
		if (nx__rec_union_add(&p->u, s, e, &rs, &re) && w->whole)
			keep_run(sc, rs, re);
	}
	return 0;
}

int nx__rec_scan_packets(struct nx_duck *d, struct nx_rec_scan *sc, struct nx_err *err)
{
	/* the busy time per transfer only when the Instruction pass (before this one) found
	 * transfers that DMA efficiency groups by line */
	struct packets p = { .sc = sc, .busy = sc->edges_to_lines > 0 };
	int64_t rs, re;
	int rc = nx__rec_read_pass(d, sc->dir, "DmaPacket", packet_cols, p.busy ? P_N : P_AGG,
				   "start_ts, end_ts", packets_reset, packets_batch, &p, err);

	if (!rc)
		rc = nx__rec_busy_finish(sc, err);
	if (rc)
		return nx_err_wrap(err, "reading DmaPacket");
	if (nx__rec_union_end(&p.u, &rs, &re) && sc->win.whole)
		keep_run(sc, rs, re);
	if (nx__rec_union_end(&p.all, &rs, &re))
		keep_run(sc, rs, re);
	sc->dma_union = p.u.total;
	sc->dma_bytes = (double)p.bytes;
	return 0;
}

/* ---- ActiveTime ------------------------------------------------------------------- */

static const char *const engines[4] = { "tensor", "vector", "scalar", "gpsimd" };

static const struct nx_rec_colspec active_cols[] = {
	{ "engine", NX_REC_VARCHAR }, { "start_ts", NX_REC_BIGINT }, { "end_ts", NX_REC_BIGINT },
};
/* rx_ActiveTime lower-cases engine (quality.c): sorted the same way */
#define ACTIVE_ORDER "lower(engine), start_ts, end_ts"

/* Whether an engine cell is name (lower-case ASCII) once lower-cased, as rx_ActiveTime
 * has it (no character outside ASCII lower-cases to an engine's name). */
static bool engine_is(const char *s, size_t len, const char *name)
{
	if (len != strlen(name))
		return false;
	for (size_t i = 0; i < len; i++) {
		char c = s[i] >= 'A' && s[i] <= 'Z' ? (char)(s[i] - 'A' + 'a') : s[i];
		if (c != name[i])
			return false;
	}
	return true;
}

/* The index in engines[] of row r's engine, -1 for another or none. */
static int engine_of(const struct nx_pqr_batch *b, size_t r)
{
	const char *name;
	size_t len;

	if (!nx__rec_str(b, 0, r, &name, &len))
		return -1;
	for (int k = 0; k < 4; k++)
		if (engine_is(name, len, engines[k]))
			return k;
	return -1;
}

struct engine_runs {
	struct nx_rec_union u[4];
	int64_t last[4]; /* each engine's last start, for the order */
	bool any[4];
	int64_t t0, t1;
};

static void engine_reset(void *arg)
{
	struct engine_runs *x = arg;
	int64_t t0 = x->t0, t1 = x->t1;

	memset(x, 0, sizeof(*x));
	x->t0 = t0;
	x->t1 = t1;
}

static int engine_batch(void *arg, const struct nx_pqr_batch *b, struct nx_err *err)
{
	struct engine_runs *x = arg;

	(void)err;
	for (size_t r = 0; r < b->rows; r++) {
		int64_t s, e, rs, re;
		int k = engine_of(b, r);

		if (k < 0 || !nx__rec_i64(b, 1, r, &s) || !nx__rec_i64(b, 2, r, &e))
			continue;
		if (x->any[k] && s < x->last[k])
			return NX_REC_UNSORTED;
		x->any[k] = true;
		x->last[k] = s;
		s = s > x->t0 ? s : x->t0;
		e = e < x->t1 ? e : x->t1;
		if (e > s)
			nx__rec_union_add(&x->u[k], s, e, &rs, &re);
	}
	return 0;
}

int nx__rec_engine_unions(struct nx_duck *d, const struct nx_rec_scan *sc, int64_t t0, int64_t t1,
			  int64_t out[4], struct nx_err *err)
{
	struct engine_runs x;
	int rc;

	memset(&x, 0, sizeof(x));
	x.t0 = t0;
	x.t1 = t1;
	rc = nx__rec_read_pass(d, sc->dir, "ActiveTime", active_cols, 3, ACTIVE_ORDER,
			       engine_reset, engine_batch, &x, err);
	if (rc)
		return nx_err_wrap(err, "reading ActiveTime");
	for (int k = 0; k < 4; k++) {
		int64_t rs, re;
		nx__rec_union_end(&x.u[k], &rs, &re);
		out[k] = x.u[k].total;
	}
	return 0;
}

/* ---- the bottleneck's busy runs --------------------------------------------------- */

struct busy {
	struct nx_rec_union u;
	struct nx_rec_stretches *st;
	int64_t last;
	bool any;
	const char *engine; /* ActiveTime's rows of this engine; NULL: DmaPacket's */
};

static void busy_reset(void *arg)
{
	struct busy *b = arg;
	struct nx_rec_stretches *st = b->st;
	const char *engine = b->engine;

	memset(b, 0, sizeof(*b));
	b->st = st;
	b->engine = engine;
	nx__rec_stretches_release(st);
}

static void busy_add(struct busy *b, int64_t s, int64_t e)
{
	int64_t rs, re;

	if (nx__rec_union_add(&b->u, s, e, &rs, &re))
		nx__rec_stretches_add(b->st, rs, re);
}

static int busy_engine_batch(void *arg, const struct nx_pqr_batch *bt, struct nx_err *err)
{
	struct busy *b = arg;

	(void)err;
	for (size_t r = 0; r < bt->rows; r++) {
		const char *name;
		size_t len;
		int64_t s, e;

		if (!nx__rec_str(bt, 0, r, &name, &len) || !engine_is(name, len, b->engine) ||
		    !nx__rec_i64(bt, 1, r, &s) || !nx__rec_i64(bt, 2, r, &e))
			continue;
		if (b->any && s < b->last)
			return NX_REC_UNSORTED;
		b->any = true;
		b->last = s;
		if (e > s)
			busy_add(b, s, e);
	}
	return 0;
}

static int busy_batch(void *arg, const struct nx_pqr_batch *bt, struct nx_err *err)
{
	struct busy *b = arg;

	(void)err;
	for (size_t r = 0; r < bt->rows; r++) {
		int64_t s, e;

		if (!nx__rec_i64(bt, 0, r, &s) || !nx__rec_i64(bt, 1, r, &e) || e <= s)
			continue;
		if (b->any && s < b->last)
			return NX_REC_UNSORTED;
		b->any = true;
		b->last = s;
		busy_add(b, s, e);
	}
	return 0;
}

int nx__rec_busy_runs(struct nx_duck *d, struct nx_rec_scan *sc, const char *engine,
		      struct nx_rec_stretches *st, struct nx_err *err)
{
	static const struct nx_rec_colspec cols[] = { { "start_ts", NX_REC_BIGINT }, { "end_ts", NX_REC_BIGINT } };
	struct busy b = { .st = st, .engine = engine };
	int64_t rs, re;
	int rc;

	if (!engine && sc->dma_runs_kept) {
		nx__rec_stretches_release(st);
		*st = sc->dma_runs;
		memset(&sc->dma_runs, 0, sizeof(sc->dma_runs));
		sc->dma_runs_kept = false;
		return 0;
	}
	if (engine) { /* not DMA's: its runs are not needed */
		nx__rec_stretches_release(&sc->dma_runs);
		sc->dma_runs_kept = false;
	}
	if (engine)
		rc = nx__rec_read_pass(d, sc->dir, "ActiveTime", active_cols, 3, ACTIVE_ORDER,
				       busy_reset, busy_engine_batch, &b, err);
	else
		rc = nx__rec_read_pass(d, sc->dir, "DmaPacket", cols, 2, "start_ts, end_ts",
				       busy_reset, busy_batch, &b, err);
	if (rc)
		return nx_err_wrap(err, "the bottleneck's busy time");
	if (nx__rec_union_end(&b.u, &rs, &re))
		nx__rec_stretches_add(st, rs, re);
	return 0;
}
