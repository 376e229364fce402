/* SPDX-License-Identifier: MIT
 * scan_extent.c: what the bounds alone need of the two large tables (see scan.h), for
 * the bounds-only analysis (the web UI's profile list): their row counts, first start
 * and last end, in one query each, instead of the passes. The passes run after all,
 * once, should the bounds need more of the raw tables (nx__rec_scan_passes). */
#include "common/compat.h"
#include "analysis/scan.h"
#include "db/profile_views.h"
#include "common/strbuf.h"

#include <string.h>

struct extent {
	int64_t n;
	bool lo_set, hi_set;
	int64_t lo, hi;
};

static int extent_chunk(void *arg, const struct nx_dchunk *c, struct nx_err *err)
{
	struct extent *x = arg;

	(void)err;
	if (!nx_dchunk_rows(c))
		return 0;
	if (!nx_dchunk_i64(c, 0, 0, &x->n))
		x->n = 0;
	x->lo_set = nx_dchunk_i64(c, 1, 0, &x->lo);
	x->hi_set = nx_dchunk_i64(c, 2, 0, &x->hi);
	return 0;
}

/* The extent of dir's table (zero rows when it has no file). */
static int table_extent(struct nx_duck *d, const char *dir, const char *table,
			struct extent *x, struct nx_err *err)
{
	struct nx_strbuf sql = NX_STRBUF_INIT;
	struct nx_err ignored = { 0 };
	int rc = 0;

	memset(x, 0, sizeof(*x));
	nx_strbuf_addstr(&sql, "SELECT count(*)::BIGINT, min(start_ts)::BIGINT, "
			       "max(end_ts)::BIGINT FROM ");
	if (!nx_db_add_table_scan(&sql, dir, table, &ignored))
		rc = nx_duck_scan(d, sql.buf, extent_chunk, x, err);
	nx_strbuf_release(&sql);
	return rc;
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
