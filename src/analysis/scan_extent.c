/* SPDX-License-Identifier: MIT
 * scan_extent.c: what the bounds alone need of the two large tables (see scan.h), for
 * the bounds-only analysis (the web UI's profile list): their row counts, first start
 * and last end, in one pass over two columns each, instead of the passes. The passes
 * run after all, once, should the bounds need more of the raw tables
 * (nx__rec_scan_passes). */
#include "common/compat.h"
#include "analysis/scan.h"
#include "db/profile_views.h"

#include <stdlib.h>
#include <string.h>

struct extent {
	int64_t n;
	bool lo_set, hi_set;
	int64_t lo, hi;
};

/* Counts a batch's rows and widens the extent; a column the table lacks is an error:
 * the passes then read the table (its NULLs) instead. */
static int extent_batch(void *arg, const struct nx_pqr_batch *b, struct nx_err *err)
{
	struct extent *x = arg;
	int64_t v;

	if (b->col[0].kind == NX_PQR_NULL || b->col[1].kind == NX_PQR_NULL)
		return nx_errf(err, NX_ENOTFOUND, "no start_ts or end_ts column");
	x->n += (int64_t)b->rows;
	for (size_t r = 0; r < b->rows; r++) {
		if (nx__rec_i64(b, 0, r, &v) && (!x->lo_set || v < x->lo)) {
			x->lo = v;
			x->lo_set = true;
		}
		if (nx__rec_i64(b, 1, r, &v) && (!x->hi_set || v > x->hi)) {
			x->hi = v;
			x->hi_set = true;
		}
	}
	return 0;
}

static void extent_reset(void *arg)
{
	memset(arg, 0, sizeof(struct extent));
}

/* The extent from the footers' statistics: the row groups' row counts, least start_ts
 * and greatest end_ts; false when they do not tell (then the rows are read). Not when
 * NX_REC_READ=duckdb asks every read of DuckDB. */
static bool footer_extent(const char *dir, const char *table,
			  const struct nx_rec_colspec cols[2], struct extent *x)
{
	const char *how = getenv("NX_REC_READ");
	struct nx_pqr_range r[2];
	struct nx_err ignored = { 0 };

	if ((how && !strcmp(how, "duckdb")) ||
	    nx__rec_read_ranges(dir, table, cols, 2, &x->n, r, &ignored))
		return false;
	x->lo_set = r[0].set;
	x->lo = r[0].lo;
	x->hi_set = r[1].set;
	x->hi = r[1].hi;
	return true;
}

/* The extent of dir's table (zero rows when it has no file): from its footers when their
 * statistics tell (tens of ms for the 11 MB footer of the 70M-row Instruction.parquet of
 * a 100M-record profile, against 2.4 s for the pass), else in one pass over its two
 * columns by the C reader (scan.h): through DuckDB, a query over the whole file held its
 * whole footer, 111 MB at 100M records, in the server's process (the web UI's
 * bottleneck). */
static int table_extent(struct nx_duck *d, const char *dir, const char *table,
			struct extent *x, struct nx_err *err)
{
	static const struct nx_rec_colspec cols[] = { { "start_ts", NX_REC_BIGINT },
						      { "end_ts", NX_REC_BIGINT } };
	const char *dirs[] = { dir, NULL };

	memset(x, 0, sizeof(*x));
	if (!nx_db_table_has_file(dirs, table) || footer_extent(dir, table, cols, x))
		return 0;
	memset(x, 0, sizeof(*x));
	return nx__rec_read_pass(d, dir, table, cols, 2, NULL, extent_reset, extent_batch, x,
				 err);
}

int nx__rec_scan_extents(struct nx_duck *d, struct nx_rec_scan *sc, struct nx_err *err)
{
	struct extent in, pk;
	int rc = table_extent(d, sc->dir, "Instruction", &in, err);

	if (!rc)
		rc = table_extent(d, sc->dir, "DmaPacket", &pk, err);
	if (rc)
		return nx_err_wrap(err, "the extents of Instruction and DmaPacket");
	sc->insts = in.n;
	/* not counted without the pass: as the bounds-only data-quality counts always were */
	sc->with_source = sc->with_wait = in.n;
	sc->in_lo_set = in.lo_set;
	sc->in_lo = in.lo;
	sc->in_hi_set = in.hi_set;
	sc->in_hi = in.hi;
	sc->packets = pk.n;
	sc->pk_lo_set = pk.lo_set;
	sc->pk_lo = pk.lo;
	sc->pk_hi_set = pk.hi_set;
	sc->pk_hi = pk.hi;
	return 0;
}

int nx__rec_scan_passes(struct nx_duck *d, struct nx_rec_scan *sc, struct nx_err *err)
{
	int rc;

	if (sc->passes_done)
		return 0;
	/* Instruction first: the DmaPacket pass sums the busy time per transfer only for
	 * the transfers that pass found attributed to a line */
	rc = nx__rec_scan_instructions(d, sc, err);
	if (!rc)
		rc = nx__rec_scan_packets(d, sc, err);
	if (!rc)
		sc->passes_done = true;
	return rc;
}
