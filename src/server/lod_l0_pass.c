/* SPDX-License-Identifier: MIT
 * lod_l0_pass.c: the events of a source copied into tl.ev<s> and folded into the finest
 * level of its pyramid in one pass (lod_levels.h), instead of a copy that L0 then reads
 * back slice by slice (lod_l0.c). DuckDB copies the rows as before (CREATE TABLE ... AS),
 * on a database of one thread so that they come in the order of the profile's files (the
 * build's settings are locked, so the build opens it so), and a function of
 * ours in its WHERE (nx_duck_chunk_function) sees each chunk of them on its way. That
 * order is start order but for a bounded lateness (a row starts at most `late` ns before
 * one read earlier), so a few time slices are open at once: each row goes to its slice's
 * groups, and a slice is flushed to tl.lod<s>, in slice order, once the row being read
 * proves no later row can fall into it. The rows and row order of tl.ev<s> and tl.lod<s>
 * are those of the copy and of nx__lod_l0. The pass may also run in two halves on two
 * connections (lod_levels.h, struct nx_lod_l0_half), the second half's rows appended
 * after the first's, and the time slices both halves' rows fall in merged. (Appending
 * the chunks of a streamed SELECT to tl.ev<s> instead cost more CPU than the copy and
 * the read-back together: DuckDB's appender stores strings uncompressed, and the
 * checkpoint compresses them again.) */
#include "common/compat.h"
#include "server/lod_levels.h"
#include "server/lod.h"
#include "common/xalloc.h"
#include "db/duck.h"

#include <inttypes.h>
#include <stdatomic.h>
#include <stdlib.h>

struct nx_lod_l0_run {
	struct nx_duck *d;
	const char *name;
	int64_t w;        /* slice width; INT64_MAX: one slice */
	size_t m;         /* slices open at most: c_lo .. c_lo + m - 1, slice c at c mod m */
	int64_t c_lo;     /* the first slice not yet flushed */
	bool started;     /* c_lo is set (by the first row, or the second half's c_first) */
	struct nx_lod_l0_slice **sl;
	int64_t rows;     /* of the level, appended so far */
	int64_t got[3];   /* count, first start, last end */
	struct nx_lod_l0_half *half; /* NULL: the whole table in one pass */
	int src, level;
	/* the flushes' appender (nx__lod_l0_flush_to), closed once the pass's table has its
	 * last slice: commits on whole vectors, the rest of a flush waiting for the next */
	struct nx_duck_appender *app;
};

static struct nx_lod_l0_slice *slot(struct nx_lod_l0_run *p, int64_t c)
{
	int64_t m = (int64_t)p->m, r = c % m;

	return p->sl[r < 0 ? r + m : r];
}

/* The second half keeps slice c (its groups, for the first half's join) rather than
 * flushing it; a fresh slice takes its place. */
static void keep_slice(struct nx_lod_l0_run *p, int64_t c)
{
	struct nx_lod_l0_half *h = p->half;
	int64_t m = (int64_t)p->m, r = c % m;

	r = r < 0 ? r + m : r;
	h->kept = nx_xrealloc(h->kept, (h->nkept + 1) * sizeof(*h->kept));
	h->kept_c = nx_xrealloc(h->kept_c, (h->nkept + 1) * sizeof(*h->kept_c));
	h->kept[h->nkept] = p->sl[r];
	h->kept_c[h->nkept++] = c;
	p->sl[r] = nx__lod_l0_slice_new(p->src, p->level, p->name);
}

/* Flushes the open slices before slice c, in order; the ones past them are empty. The
 * second half keeps its slices up to c_aside, and appends the others to its stage. */
static int flush_before(struct nx_lod_l0_run *p, int64_t c, struct nx_err *err)
{
	int64_t stop = c < p->c_lo + (int64_t)p->m ? c : p->c_lo + (int64_t)p->m;
	bool second = p->half && p->half->second;
	int rc = 0;

	for (; !rc && p->c_lo < stop; p->c_lo++) {
		if (second && p->c_lo <= p->half->c_aside)
			keep_slice(p, p->c_lo);
		else
			rc = nx__lod_l0_flush_to(slot(p, p->c_lo), p->d,
						 second ? p->half->stage : NULL, &p->app,
						 &p->rows, err);
	}
	if (!rc && p->c_lo < c)
		p->c_lo = c;
	return rc;
}

static int take_chunk(void *arg, const struct nx_dchunk *c, struct nx_err *err)
{
	struct nx_lod_l0_run *p = arg;
	size_t rows = nx_dchunk_rows(c);
	struct nx_lod_l0_cols cols;
	const int64_t *ss, *es;
	const uint64_t *s_valid, *e_valid;
	int rc = nx__lod_l0_cols_of(&cols, c, &ss, &es, &s_valid, &e_valid, p->name, err);

	for (size_t i = 0; i < rows && !rc; i++) {
		int64_t s, e, k;

		if (!nx_dchunk_valid(s_valid, i) || !nx_dchunk_valid(e_valid, i))
			return nx_errf(err, NX_EDB, "%s: an event without a start or an end",
				       p->name);
		s = ss[i];
		e = es[i];
		k = p->w == INT64_MAX ? 0 : nx__lod_floor_div(s, p->w);
		if (!p->started) {
			p->started = true;
			p->c_lo = k;
		}
		if (k < p->c_lo)
			return nx_errf(err, NX_EDB, "%s: the event starting at %" PRId64
				       " ns comes later than its row groups' start_ts "
				       "statistics allow", p->name, s);
		/* a row of slice k starts at k * w or later, and no row to come starts more
		 * than late <= (m - 1) * w before it: the slices before k - m + 1 are whole */
		if (k >= p->c_lo + (int64_t)p->m)
			rc = flush_before(p, k - (int64_t)p->m + 1, err);
		if (!rc)
			nx__lod_l0_fold_cols(slot(p, k), &cols, i, s, e);
		p->got[0]++;
		p->got[1] = s < p->got[1] ? s : p->got[1];
		p->got[2] = e > p->got[2] ? e : p->got[2];
	}
	return rc;
}

/* The passes run so far in this process. */
static atomic_uint passes;

static void run_free(struct nx_lod_l0_run *p)
{
	if (!p)
		return;
	nx_duck_appender_close(p->app, &(struct nx_err){ 0 }); /* a failed pass's, if open */
	for (size_t i = 0; i < p->m; i++)
		nx__lod_l0_slice_free(p->sl[i]);
	free(p->sl);
	free(p);
}

/* The pass (half: NULL, or one of two halves): see lod_levels.h. */
static int run(struct nx_duck *d, int src, const char *select, const char *cols,
	       const char *name, int level, int64_t first, int64_t last, int64_t n,
	       int64_t chunk, int64_t late, struct nx_lod_l0_half *half, int64_t *rows,
	       int64_t got[3], struct nx_err *err)
{
	static const enum nx_cell_kind kinds[] = { NX_CELL_INT, NX_CELL_TEXT, NX_CELL_INT,
						   NX_CELL_INT, NX_CELL_INT, NX_CELL_TEXT };
	struct nx_lod_l0_run *p = nx_xcalloc(1, sizeof(*p));
	/* a name of its own: a function stays registered in the database */
	char *fn = nx_xasprintf("nx_l0_fold%u", atomic_fetch_add(&passes, 1)), *sql;
	int64_t threads = 0;
	int rc;

	*p = (struct nx_lod_l0_run){ .d = d, .name = name, .half = half, .src = src,
				     .level = level, .got = { 0, INT64_MAX, INT64_MIN } };
	*rows = 0;
	if (level < 0 || level > 62 || late < 0) {
		free(fn);
		free(p);
		return nx_errf(err, NX_EUSAGE, "%s: no pyramid level %d (lateness %" PRId64 ")",
			       name, level, late);
	}
	p->w = nx__lod_slice_width(level, first, last, n, chunk);
	p->m = p->w == INT64_MAX ? 1 : (size_t)(late / p->w) + 2;
	p->sl = nx_xcalloc(p->m, sizeof(*p->sl));
	for (size_t i = 0; i < p->m; i++)
		p->sl[i] = nx__lod_l0_slice_new(src, level, name);
	if (half && half->second) {
		p->started = true;
		p->c_lo = half->c_first;
	}
	rc = nx_duck_query_i64(d, "SELECT current_setting('threads')", &threads, err);
	if (!rc && threads != 1)
		rc = nx_errf(err, NX_EUSAGE, "%s: the pass needs a database on one thread", name);
	if (!rc)
		rc = nx_duck_chunk_function(d, fn, kinds, NX_ARRAY_SIZE(kinds), take_chunk, p,
					    err);
	if (!rc) {
		sql = nx_xasprintf("%s tl.ev%d %sSELECT %s FROM (%s) WHERE %s(core, track, id, "
				   "start_ts, end_ts, label)", half ? "INSERT INTO" : "CREATE TABLE",
				   src, half ? "" : "AS ", cols, select, fn);
		rc = nx_duck_exec(d, sql, err);
		free(sql);
	}
	/* the first half's open slices wait for the second's (nx__lod_l0_half_join) */
	if (!rc && p->started && !(half && !half->second))
		rc = flush_before(p, p->c_lo + (int64_t)p->m, err);
	if (!rc && !(half && !half->second)) {
		rc = nx_duck_appender_close(p->app, err);
		p->app = NULL;
	}
	free(fn);
	*rows = p->rows;
	for (int i = 0; i < 3; i++)
		got[i] = p->got[i];
	if (!rc && half && !half->second)
		half->pass = p;
	else
		run_free(p);
	return rc;
}

int nx__lod_l0_pass(struct nx_duck *d, int src, const char *select, const char *cols,
		    const char *name, int level, int64_t first, int64_t last, int64_t n,
		    int64_t chunk, int64_t late, int64_t *rows, int64_t got[3], struct nx_err *err)
{
	return run(d, src, select, cols, name, level, first, last, n, chunk, late, NULL, rows,
		   got, err);
}

int nx__lod_l0_half(struct nx_duck *d, int src, const char *select, const char *cols,
		    const char *name, int level, int64_t first, int64_t last, int64_t n,
		    int64_t chunk, int64_t late, struct nx_lod_l0_half *half, struct nx_err *err)
{
	return run(d, src, select, cols, name, level, first, last, n, chunk, late, half,
		   &half->rows, half->got, err);
}

static void half_release(struct nx_lod_l0_half *h)
{
	run_free(h->pass);
	h->pass = NULL;
	for (size_t i = 0; i < h->nkept; i++)
		nx__lod_l0_slice_free(h->kept[i]);
	free(h->kept);
	free(h->kept_c);
	h->kept = NULL;
	h->kept_c = NULL;
	h->nkept = 0;
}

int nx__lod_l0_half_join(struct nx_duck *d, int rc, struct nx_lod_l0_half *first,
			 struct nx_lod_l0_half *second, int64_t *rows, int64_t got[3],
			 struct nx_err *err)
{
	struct nx_lod_l0_run *p = first->pass;

	if (!p) {
		half_release(second);
		return rc ? rc : nx_errf(err, NX_EUSAGE, "the first half of a pass was not run");
	}
	p->d = d;
	/* the kept slices come in slice order; the first half's rows fall in none after
	 * its open ones, and a slice it flushed must have no rows of the second */
	for (size_t i = 0; i < second->nkept && !rc; i++) {
		int64_t c = second->kept_c[i];

		if (!p->started) {
			p->started = true;
			p->c_lo = c;
		}
		if (c < p->c_lo && second->kept[i] && nx__lod_l0_count(second->kept[i]))
			rc = nx_errf(err, NX_EDB, "%s: an event of the second half falls in a time "
				     "slice the first half's rows had closed (its row groups' "
				     "start_ts statistics do not bound it)", p->name);
		else if (c >= p->c_lo + (int64_t)p->m)
			rc = flush_before(p, c - (int64_t)p->m + 1, err);
		if (!rc && c >= p->c_lo)
			nx__lod_l0_merge(slot(p, c), second->kept[i]);
	}
	if (!rc && p->started)
		rc = flush_before(p, p->c_lo + (int64_t)p->m, err);
	if (!rc) {
		rc = nx_duck_appender_close(p->app, err);
		p->app = NULL;
	}
	if (!rc) {
		*rows = p->rows + second->rows;
		got[0] = first->got[0] + second->got[0];
		got[1] = first->got[1] < second->got[1] ? first->got[1] : second->got[1];
		got[2] = first->got[2] > second->got[2] ? first->got[2] : second->got[2];
	}
	half_release(first);
	half_release(second);
	return rc;
}
