/* SPDX-License-Identifier: MIT
 * lod_lanes.c: the depth lanes of the framework events (lod.h), so that nested and
 * overlapping slices of one stream are drawn on rows of their own, as trace viewers do.
 * The events of each stream are read in start order (ties: the longer first, then the
 * lower id) through a streaming query, and each one goes to the lane equal to the
 * number of events still open on a stack when it starts: an event pops the events
 * that ended by its start off the top of the stack and is pushed. A slice nested in
 * another therefore lies one lane below its parent, and two events of one lane never
 * overlap (whatever was on that lane before was popped, so it ended by then). Lanes
 * stop at NX_LOD_MAX_LANE (deeper events share the last one). Only events off lane 0
 * are written, as "id,start_ts,lane" lines of a CSV file that the build then joins. */
#include "common/compat.h"
#include "server/lod.h"
#include "common/strbuf.h"
#include "common/xalloc.h"
#include "db/duck.h"
#include "db/duck_stream.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct lanes {
	FILE *csv;
	char *track;     /* the stream being read */
	size_t tlen;
	int64_t *ends;   /* the stack: ends of the open events */
	size_t n, cap;
	uint64_t laned;  /* rows written */
	bool bad;        /* a write failed */
};

static int lane_row(void *arg, const struct nx_dcell *c, size_t ncols)
{
	struct lanes *l = arg;
	int64_t s = c[1].i, e = c[2].i;
	size_t lane;

	(void)ncols;
	if (c[0].kind != NX_D_TEXT || !l->track || c[0].len != l->tlen ||
	    memcmp(c[0].s, l->track, l->tlen)) {
		free(l->track);
		l->track = c[0].kind == NX_D_TEXT ? nx_xstrndup(c[0].s, c[0].len) : NULL;
		l->tlen = l->track ? c[0].len : 0;
		l->n = 0;
	}
	while (l->n && l->ends[l->n - 1] <= s)
		l->n--;
	lane = l->n < NX_LOD_MAX_LANE ? l->n : NX_LOD_MAX_LANE;
	NX_GROW(l->ends, l->n + 1, l->cap);
	l->ends[l->n++] = e > s ? e : s;
	if (lane && fprintf(l->csv, "%" PRId64 ",%" PRId64 ",%zu\n", c[3].i, s, lane) < 0)
		l->bad = true;
	l->laned += lane > 0;
	return 0;
}

int nx__lod_lanes(const char *dir, const struct nx_ptable *t, const char *csv_path,
		  uint64_t *laned, struct nx_err *err)
{
	const struct nx_lod_source *src = &nx__lod_sources[NX_LOD_SRC_FW];
	struct nx_strbuf sql = NX_STRBUF_INIT;
	struct lanes l = { 0 };
	int rc;

	l.csv = fopen(csv_path, "wx");
	if (!l.csv)
		return nx_errf(err, -errno, "cannot create '%s': %s", csv_path, strerror(errno));
	nx_strbuf_addf(&sql, "SELECT (%s)::VARCHAR, start_ts::BIGINT, end_ts::BIGINT, id::BIGINT "
			     "FROM read_parquet(", src->track);
	nx__lod_file_list(&sql, dir, t);
	nx_strbuf_addf(&sql, ") WHERE %s ORDER BY 1, 2, 3 DESC, 4", NX_LOD_FW_DRAWN);
	rc = nx_duck_stream(sql.buf, lane_row, &l, err);
	if (fclose(l.csv) && !rc)
		l.bad = true;
	if (!rc && l.bad)
		rc = nx_errf(err, -EIO, "cannot write '%s'", csv_path);
	*laned = l.laned;
	free(l.track);
	free(l.ends);
	nx_strbuf_release(&sql);
	return rc;
}
