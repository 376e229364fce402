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
 * are those of the copy and of nx__lod_l0. (Appending the chunks of a streamed SELECT
 * to tl.ev<s> instead cost more CPU than the copy and the read-back together: DuckDB's
 * appender stores strings uncompressed, and the checkpoint compresses them again.) */
#include "common/compat.h"
#include "server/lod_levels.h"
#include "server/lod.h"
#include "common/xalloc.h"
#include "db/duck.h"

#include <inttypes.h>
#include <stdatomic.h>
#include <stdlib.h>

struct pass {
	struct nx_duck *d;
	const char *name;
	int64_t w;        /* slice width; INT64_MAX: one slice */
	size_t m;         /* slices open at most: c_lo .. c_lo + m - 1, slice c at c mod m */
	int64_t c_lo;     /* the first slice not yet flushed */
	bool started;     /* c_lo is set (by the first row) */
	struct nx_lod_l0_slice **sl;
	int64_t *rows;
	int64_t got[3];   /* count, first start, last end */
};

static struct nx_lod_l0_slice *slot(struct pass *p, int64_t c)
{
	int64_t m = (int64_t)p->m, r = c % m;

	return p->sl[r < 0 ? r + m : r];
}

/* Flushes the open slices before slice c, in order; the ones past them are empty. */
static int flush_before(struct pass *p, int64_t c, struct nx_err *err)
{
	int64_t stop = c < p->c_lo + (int64_t)p->m ? c : p->c_lo + (int64_t)p->m;
	int rc = 0;

	for (; !rc && p->c_lo < stop; p->c_lo++)
		rc = nx__lod_l0_flush(slot(p, p->c_lo), p->d, p->rows, err);
	if (!rc && p->c_lo < c)
		p->c_lo = c;
	return rc;
}

static int take_chunk(void *arg, const struct nx_dchunk *c, struct nx_err *err)
{
	struct pass *p = arg;
	size_t rows = nx_dchunk_rows(c);
	int rc = 0;

	for (size_t i = 0; i < rows && !rc; i++) {
		int64_t s, e, k;

		if (!nx_dchunk_i64(c, 3, i, &s) || !nx_dchunk_i64(c, 4, i, &e))
			return nx_errf(err, NX_EDB, "%s: an event without a start or an end",
				       p->name);
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
			rc = nx__lod_l0_fold(slot(p, k), c, i, err);
		p->got[0]++;
		p->got[1] = s < p->got[1] ? s : p->got[1];
		p->got[2] = e > p->got[2] ? e : p->got[2];
	}
	return rc;
}

/* The passes run so far in this process. */
static atomic_uint passes;

int nx__lod_l0_pass(struct nx_duck *d, int src, const char *select, const char *cols,
		    const char *name, int level, int64_t first, int64_t last, int64_t n,
		    int64_t chunk, int64_t late, int64_t *rows, int64_t got[3], struct nx_err *err)
{
	static const enum nx_cell_kind kinds[] = { NX_CELL_INT, NX_CELL_TEXT, NX_CELL_INT,
						   NX_CELL_INT, NX_CELL_INT, NX_CELL_TEXT };
	struct pass p = { .d = d, .name = name, .rows = rows,
			  .got = { 0, INT64_MAX, INT64_MIN } };
	/* a name of its own: a function stays registered in the database */
	char *fn = nx_xasprintf("nx_l0_fold%u", atomic_fetch_add(&passes, 1)), *sql;
	int64_t threads = 0;
	int rc;

	*rows = 0;
	if (level < 0 || level > 62 || late < 0) {
		free(fn);
		return nx_errf(err, NX_EUSAGE, "%s: no pyramid level %d (lateness %" PRId64 ")",
			       name, level, late);
	}
	p.w = nx__lod_slice_width(level, first, last, n, chunk);
	p.m = p.w == INT64_MAX ? 1 : (size_t)(late / p.w) + 2;
	p.sl = nx_xcalloc(p.m, sizeof(*p.sl));
	for (size_t i = 0; i < p.m; i++)
		p.sl[i] = nx__lod_l0_slice_new(src, level, name);
	rc = nx_duck_query_i64(d, "SELECT current_setting('threads')", &threads, err);
	if (!rc && threads != 1)
		rc = nx_errf(err, NX_EUSAGE, "%s: the pass needs a database on one thread", name);
	if (!rc)
		rc = nx_duck_chunk_function(d, fn, kinds, NX_ARRAY_SIZE(kinds), take_chunk, &p,
					    err);
	if (!rc) {
		sql = nx_xasprintf("CREATE TABLE tl.ev%d AS SELECT %s FROM (%s) WHERE %s(core, "
				   "track, id, start_ts, end_ts, label)", src, cols, select, fn);
		rc = nx_duck_exec(d, sql, err);
		free(sql);
	}
	if (!rc && p.started)
		rc = flush_before(&p, p.c_lo + (int64_t)p.m, err);
	for (size_t i = 0; i < p.m; i++)
		nx__lod_l0_slice_free(p.sl[i]);
	free(p.sl);
	free(fn);
	for (int i = 0; i < 3; i++)
		got[i] = p.got[i];
	return rc;
}
