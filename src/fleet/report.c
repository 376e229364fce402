/* SPDX-License-Identifier: MIT
 * report.c: `fleet report`: the run's stragglers and its slowest members first, as
 * text, read from the published fleet index with DuckDB (see fleet.h). */
#include "common/compat.h"
#include "fleet/fleet.h"
#include "common/fsutil.h"
#include "common/strbuf.h"
#include "common/xalloc.h"
#include "db/duck.h"
#include "analysis/recommend.h"
#include "ingest/ingest.h"

#include <stdlib.h>
#include <string.h>

static void line_cb(void *arg, size_t row, const char *column, int kind, const char *text)
{
	struct nx_strbuf *out = arg;

	(void)row;
	(void)column;
	if (kind != NX_CELL_NULL)
		nx_strbuf_addf(out, "%s\n", text);
}

/* Appends the lines query produces (one text column) to out. */
static int lines(struct nx_duck *d, const char *dir, const char *fmt, const char *table,
		 struct nx_strbuf *out, struct nx_err *err)
{
	char *path = nx_xasprintf("%s/%s.parquet", dir, table);
	struct nx_strbuf src = NX_STRBUF_INIT, sql = NX_STRBUF_INIT;
	int rc = 0;

	if (nx_is_file(path)) {
		nx_strbuf_addstr(&src, "read_parquet(");
		nx_sql_quote(&src, path);
		nx_strbuf_addch(&src, ')');
		nx_strbuf_addf(&sql, fmt, src.buf);
		rc = nx_duck_query_cells(d, sql.buf, line_cb, out, err);
	}
	nx_strbuf_release(&src);
	nx_strbuf_release(&sql);
	free(path);
	return rc;
}

static void name_cb(void *arg, size_t row, const char *column, int kind, const char *text)
{
	struct nx_strbuf *out = arg;

	(void)row;
	(void)column;
	if (kind == NX_CELL_TEXT)
		nx_strbuf_addf(out, "%s\n", text);
}

int nx_fleet_recommend(const char *data_path, const char *run, unsigned n,
		       const struct nx_recommend_opts *o, struct nx_strbuf *out, struct nx_err *err)
{
	struct nx_strbuf names = NX_STRBUF_INIT, sql = NX_STRBUF_INIT;
	char *dir = nx_profile_dir(data_path, run);
	char *path = nx_xasprintf("%s/FleetProfile.parquet", dir);
	struct nx_recommend_member *mem = NULL;
	struct nx_duck *d = NULL;
	size_t count = 0, cap = 0;
	int rc = 0;

	if (nx_is_file(path)) {
		nx_strbuf_addstr(&sql, "SELECT profile FROM read_parquet(");
		nx_sql_quote(&sql, path);
		nx_strbuf_addstr(&sql, ") ORDER BY total_time DESC, profile");
		if (n)
			nx_strbuf_addf(&sql, " LIMIT %u", n);
		if (!(rc = nx_duck_open(&d, 1, NULL, err)))
			rc = nx_duck_query_cells(d, sql.buf, name_cb, &names, err);
	}
	for (char *nm = names.buf, *nl; !rc && nm && *nm; nm = nl + 1) {
		nl = strchr(nm, '\n');
		*nl = '\0';
		NX_GROW(mem, count + 1, cap);
		mem[count].name = nm;
		mem[count++].dir = nx_profile_dir(data_path, nm);
	}
	if (!rc)
		rc = nx_recommend_members(o, run, mem, count, out, err);
	for (size_t i = 0; i < count; i++)
		free((char *)mem[i].dir);
	free(mem);
	nx_duck_close(d);
	nx_strbuf_release(&names);
	nx_strbuf_release(&sql);
	free(path);
	free(dir);
	return rc;
}

int nx_fleet_report(const char *data_path, const char *run, unsigned top, unsigned recommend,
		    struct nx_strbuf *out, struct nx_err *err)
{
	char *dir = nx_profile_dir(data_path, run);
	char *members = nx_path_join(dir, NX_FLEET_MEMBERS);
	char limit[64];
	struct nx_duck *d = NULL;
	int rc;

	snprintf(limit, sizeof(limit), " LIMIT %u", top ? top : 1000000000u);
	if (!nx_is_file(members)) {
		rc = nx_errf(err, NX_ENOTFOUND, "'%s' is not a fleet index (no %s); run "
			     "'neuron-explorer fleet index' first", dir, NX_FLEET_MEMBERS);
		goto out;
	}
	if ((rc = nx_duck_open(&d, 1, NULL, err)))
		goto out;
	rc = lines(d, dir,
		   "SELECT format('Run {}: {} tasks ({} done, {} failed, {} unfinished); {} device "
		   "profiles, {} framework traces; stragglers: more than {}%% over the median', run, "
		   "task_count, done_count, failed_count, unfinished_count, device_profiles, "
		   "trace_profiles, threshold_percent) FROM %s", "FleetRun", out, err);
	if (!rc)
		nx_strbuf_addstr(out, "\nStragglers (largest excess first):\n");
	if (!rc)
		rc = lines(d, dir,
			   "SELECT format('  {} {} (instance {}{}{}): {} {} us, +{}%% over the median "
			   "{} us; most of the difference: {} (+{} us, {}%% of it)', kind, profile, "
			   "coalesce(instance, '?'), CASE WHEN nc IS NULL THEN '' ELSE ', nc ' || nc END, "
			   "CASE WHEN rank IS NULL THEN '' ELSE ', rank ' || rank END, metric, "
			   "round(value_s * 1e6, 3), round(excess_percent, 1), round(median_s * 1e6, 3), "
			   "explained_by, round(explained_s * 1e6, 3), "
			   "round(100 * coalesce(explained_share, 0), 0)::BIGINT) FROM %s "
			   "ORDER BY excess_percent DESC, profile", "FleetStraggler", out, err);
	if (!rc) {
		char *q = nx_xasprintf(
			"SELECT format('  {}. {}  total {} us  bottleneck {}  instance {}  nc {}{}{}{}', "
			"row_number() OVER (ORDER BY total_time DESC, profile), profile, "
			"round(total_time * 1e6, 3), coalesce(bottleneck_engine, '-'), instance, nc, "
			"CASE WHEN rank IS NULL THEN '' ELSE '  rank ' || rank END, "
			"CASE WHEN mfu_estimated_percent IS NULL THEN '' ELSE '  MFU ' || "
			"round(100 * mfu_estimated_percent, 1) || '%%%%' END, "
			"CASE WHEN straggler THEN '  STRAGGLER' ELSE '' END) FROM %%s "
			"ORDER BY total_time DESC, profile%s", limit);
		nx_strbuf_addstr(out, "\nDevice profiles, slowest first:\n");
		rc = lines(d, dir, q, "FleetProfile", out, err);
		free(q);
	}
	if (!rc) {
		char *q = nx_xasprintf(
			"SELECT format('  {}  rank {}  instance {}  {} steps, mean {} us, "
			"collectives {} us per step{}{}', profile, coalesce(rank::VARCHAR, '?'), "
			"instance, step_count, round(step_time_mean_ns / 1e3, 3), "
			"round(coalesce(collective_time_per_step_ns, 0) / 1e3, 3), "
			"CASE WHEN top_collective IS NULL THEN '' ELSE ' (mostly ' || top_collective "
			"|| ')' END, CASE WHEN straggler THEN '  STRAGGLER' ELSE '' END) FROM %%s "
			"ORDER BY step_time_mean_ns DESC NULLS LAST, profile%s", limit);
		nx_strbuf_addstr(out, "\nFramework-trace ranks, slowest step first:\n");
		rc = lines(d, dir, q, "FleetRank", out, err);
		free(q);
	}
	if (!rc && recommend) {
		struct nx_recommend_opts o;
		nx_recommend_opts_init(&o);
		o.threads = 1;
		nx_strbuf_addch(out, '\n');
		rc = nx_fleet_recommend(data_path, run, recommend, &o, out, err);
	}
out:
	nx_duck_close(d);
	free(dir);
	free(members);
	return rc;
}
