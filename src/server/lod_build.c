/* SPDX-License-Identifier: MIT
 * lod_build.c: writes the timeline's level-of-detail pyramid of one profile
 * (docs/ui.md "Level of detail"). Per source table, the finest level L0 is grouped
 * from the raw rows by (core, track, start_ts // 2^L0); every coarser level is grouped
 * from the level below (counts and busy times add, first/last and the longest event
 * combine), so the raw table is read once. L0 is chosen so that a window of px
 * buckets of 2^(L0-1) ns holds on average at most LOD_K / 2 * px events: requests
 * finer than L0 read the raw rows of their window, coarser ones read one level of
 * the pyramid. Each level goes to its own scratch file, and one streaming copy joins
 * them, ordered by (source, level, k), into TimelineLod.parquet, so DuckDB's row-group
 * statistics skip everything but the requested level and window. */
#include "common/compat.h"
#include "server/lod.h"
#include "common/fsutil.h"
#include "common/strbuf.h"
#include "common/xalloc.h"
#include "db/duck.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* average events per finest-level bucket per window pixel (see above) */
#define LOD_K 32

const struct nx_lod_source nx__lod_sources[NX_LOD_NSRC] = {
	{ "Instruction", "timeline_track", "opcode" },
	{ "DmaPacketAggregated", "queue_name", "COALESCE(op, queue_type)" },
	{ "DmaPacket", "queue_name", "'packet'" },
	{ "SystemProfileEvents",
	  "concat_ws(' / ', instance_id, 'pid ' || process_id, 'tid ' || thread_id)", "name" },
};

static int create_view(struct nx_duck *d, const char *dir, const struct nx_ptable *t,
		       struct nx_err *err)
{
	struct nx_strbuf sql = NX_STRBUF_INIT;
	int rc;

	nx_strbuf_addstr(&sql, "CREATE VIEW ");
	nx_sql_quote_ident(&sql, t->name);
	nx_strbuf_addstr(&sql, " AS SELECT * FROM read_parquet([");
	for (size_t i = 0; i < t->nfiles; i++) {
		char *p = nx_path_join(dir, t->files[i]);

		if (i)
			nx_strbuf_addch(&sql, ',');
		nx_sql_quote(&sql, p);
		free(p);
	}
	nx_strbuf_addstr(&sql, "])");
	rc = nx_duck_exec(d, sql.buf, err);
	nx_strbuf_release(&sql);
	return rc;
}

static int ceil_log2(double x)
{
	int l = 0;

	while (l < 62 && ldexp(1.0, l) < x)
		l++;
	return l;
}

/* The SELECT of level `level` of source s: from the raw table, or from `below`. */
static void level_sql(struct nx_strbuf *sql, int s, int level, const char *below)
{
	const struct nx_lod_source *src = &nx__lod_sources[s];

	nx_strbuf_addf(sql, "SELECT source, core, track, %d::INTEGER AS level, k, count, busy, "
			    "first_ts, last_ts, r.id AS id, r.s AS start_ts, r.e AS end_ts, "
			    "r.l AS label FROM (SELECT ", level);
	if (!below) {
		nx_sql_quote(sql, src->table);
		nx_strbuf_addf(sql, " AS source, pcore_idx::BIGINT AS core, (%s)::VARCHAR AS track, "
				    "start_ts // %" PRId64 " AS k, count(*)::BIGINT AS count, "
				    "sum(end_ts - start_ts)::BIGINT AS busy, min(start_ts) AS first_ts, "
				    "max(end_ts) AS last_ts, arg_max({'id': id::BIGINT, 's': start_ts, "
				    "'e': end_ts, 'l': (%s)::VARCHAR}, (end_ts - start_ts, -id)) AS r "
				    "FROM ",
			       src->track, (int64_t)1 << level, src->label);
		nx_sql_quote_ident(sql, src->table);
		nx_strbuf_addstr(sql, " WHERE start_ts IS NOT NULL AND end_ts IS NOT NULL");
	} else {
		nx_strbuf_addstr(sql, "source, core, track, k // 2 AS k, sum(count)::BIGINT AS count, "
				      "sum(busy)::BIGINT AS busy, min(first_ts) AS first_ts, "
				      "max(last_ts) AS last_ts, arg_max({'id': id, 's': start_ts, "
				      "'e': end_ts, 'l': label}, (end_ts - start_ts, -id)) AS r "
				      "FROM read_parquet(");
		nx_sql_quote(sql, below);
		nx_strbuf_addch(sql, ')');
	}
	nx_strbuf_addstr(sql, " GROUP BY ALL) ORDER BY k, core, track");
}

/* Writes the levels of source s into scratch files; appends their paths to files. */
static int build_source(struct nx_duck *d, int s, const char *scratch, char ***files,
			size_t *nfiles, int lv[2], struct nx_err *err)
{
	const char *table = nx__lod_sources[s].table;
	struct nx_strbuf sql = NX_STRBUF_INIT;
	int64_t n = 0, lo = 0, hi = 0;
	int rc, top;

	nx_strbuf_addstr(&sql, "SELECT count(*) FROM ");
	nx_sql_quote_ident(&sql, table);
	rc = nx_duck_query_i64(d, sql.buf, &n, err);
	nx_strbuf_reset(&sql);
	nx_strbuf_addstr(&sql, "SELECT min(start_ts) FROM ");
	nx_sql_quote_ident(&sql, table);
	if (!rc)
		rc = nx_duck_query_i64(d, sql.buf, &lo, err);
	nx_strbuf_reset(&sql);
	nx_strbuf_addstr(&sql, "SELECT max(end_ts) FROM ");
	nx_sql_quote_ident(&sql, table);
	if (!rc)
		rc = nx_duck_query_i64(d, sql.buf, &hi, err);
	nx_strbuf_release(&sql);
	if (rc)
		return rc;
	/* one level past the one whose bucket spans the profile, for views wider than it */
	top = ceil_log2((double)(hi > lo ? hi - lo : 1)) + 1;
	lv[0] = n > 0 ? ceil_log2((double)LOD_K * (double)(hi - lo) / (double)n) : top + 1;
	lv[1] = top;
	for (int l = lv[0]; l <= top; l++) {
		char *path = nx_xasprintf("%s/%d-%d.parquet", scratch, s, l);
		uint64_t rows = 0;

		nx_strbuf_reset(&sql);
		level_sql(&sql, s, l, l > lv[0] ? (*files)[*nfiles - 1] : NULL);
		rc = nx_duck_copy_query(d, sql.buf, path, &rows, err);
		nx_strbuf_release(&sql);
		*files = nx_xrealloc(*files, (*nfiles + 1) * sizeof(**files));
		(*files)[(*nfiles)++] = path;
		if (rc)
			return rc;
	}
	return 0;
}

int nx__lod_build(const char *dir, const struct nx_pfiles *files, const char *out_dir,
		  int levels[NX_LOD_NSRC][2], uint64_t *rows, struct nx_err *err)
{
	char *scratch = nx_path_join(out_dir, ".scratch");
	char *out = nx_path_join(out_dir, NX_LOD_TABLE ".parquet");
	struct nx_strbuf sql = NX_STRBUF_INIT;
	struct nx_duck *d = NULL;
	char **parts = NULL;
	size_t nparts = 0;
	int rc;

	*rows = 0;
	for (int s = 0; s < NX_LOD_NSRC; s++)
		levels[s][0] = 1, levels[s][1] = 0;
	if ((rc = nx_mkdirs(scratch, err)) || (rc = nx_duck_open(&d, 2, "1GB", err)))
		goto out;
	nx_strbuf_addstr(&sql, "SET preserve_insertion_order = true; SET temp_directory = ");
	nx_sql_quote(&sql, scratch);
	if ((rc = nx_duck_exec(d, sql.buf, err)))
		goto out;
	for (int s = 0; s < NX_LOD_NSRC && !rc; s++) {
		const struct nx_ptable *t = nx__pfiles_find(files, nx__lod_sources[s].table);

		if (!t || t->members || !t->nfiles)
			continue;
		rc = create_view(d, dir, t, err);
		if (!rc)
			rc = build_source(d, s, scratch, &parts, &nparts, levels[s], err);
	}
	if (rc)
		goto out;
	nx_strbuf_reset(&sql);
	if (!nparts) {
		nx_strbuf_addstr(&sql, "SELECT NULL::VARCHAR AS source, NULL::BIGINT AS core, "
				       "NULL::VARCHAR AS track, NULL::INTEGER AS level, NULL::BIGINT AS k, "
				       "NULL::BIGINT AS count, NULL::BIGINT AS busy, NULL::BIGINT AS "
				       "first_ts, NULL::BIGINT AS last_ts, NULL::BIGINT AS id, "
				       "NULL::BIGINT AS start_ts, NULL::BIGINT AS end_ts, "
				       "NULL::VARCHAR AS label WHERE false");
	} else {
		nx_strbuf_addstr(&sql, "SELECT * FROM read_parquet([");
		for (size_t i = 0; i < nparts; i++) {
			if (i)
				nx_strbuf_addch(&sql, ',');
			nx_sql_quote(&sql, parts[i]);
		}
		nx_strbuf_addstr(&sql, "])");
	}
	rc = nx_duck_copy_query(d, sql.buf, out, rows, err);
out:
	if (rc)
		nx_err_wrap(err, "cannot build the timeline summary of %s", dir);
	nx_duck_close(d);
	for (size_t i = 0; i < nparts; i++)
		free(parts[i]);
	free(parts);
	{
		struct nx_err ignored = { 0 };
		nx_remove_tree(scratch, &ignored);
	}
	nx_strbuf_release(&sql);
	free(scratch);
	free(out);
	return rc;
}
