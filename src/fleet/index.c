/* SPDX-License-Identifier: MIT
 * index.c: the fleet index of a run (see fleet.h, docs/fleet.md). The manifest and the
 * task states become a DuckDB table; the done members' Summary, Warning and
 * SystemProfileEvents files are read as db/parquet_union.c groups them (files that share
 * a schema without union_by_name, whose reader per file grew the index by a megabyte per
 * member; the member is the <name>@latest directory of each file), a few hundred files
 * per statement (DuckDB keeps a column mapping per file of a scan); SQL builds FleetTask,
 * FleetProfile, FleetRank, FleetStraggler and FleetRun, which are written into a
 * temporary directory with the members list and published as
 * <data>/profiles/global/<run>@latest. */
#include "common/compat.h"
#include "fleet/fleet.h"
#include "common/fsutil.h"
#include "common/strbuf.h"
#include "common/xalloc.h"
#include "db/duck.h"
#include "db/parquet_union.h"
#include "ingest/ingest.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Framework-trace events that are training steps, and collectives. */
/* (used in printf formats, hence %%) */
#define IS_STEP "(name LIKE 'ProfilerStep#%%' OR regexp_matches(name, " \
		"'^(train[_ ]?)?step([ _#]?[0-9]+)?$', 'i'))"
#define IS_COLLECTIVE "regexp_matches(name, 'nccl|all_?reduce|all_?gather|reduce_?scatter|" \
		      "all_?to_?all|broadcast|collective|barrier|send_?recv|c10d', 'i')"

static const char device_sql[] =
	"CREATE TABLE fp0 AS SELECT t.profile, t.instance, t.pid, t.nc, t.model_id, "
	"  s.total_time, "
	"  coalesce(s.tensor_engine_active_time, 0) AS tensor_active_time, "
	"  coalesce(s.vector_engine_active_time, 0) AS vector_active_time, "
	"  coalesce(s.scalar_engine_active_time, 0) AS scalar_active_time, "
	"  coalesce(s.gpsimd_engine_active_time, 0) AS gpsimd_active_time, "
	"  coalesce(s.sync_engine_active_time, 0) AS sync_active_time, "
	"  coalesce(s.dma_active_time, 0) AS dma_active_time, "
	"  coalesce(s.cc_op_active_time, 0) AS collective_active_time, "
	"  s.dma_transfer_total_bytes AS dma_bytes, s.hbm_read_bytes, s.hbm_write_bytes, "
	"  s.hardware_flops, s.mfu_estimated_percent, "
	"  coalesce(w.n, 0) AS warning_count "
	"FROM task t JOIN summ s USING (profile) LEFT JOIN warn w USING (profile) "
	"WHERE t.kind = 'device';"
	"CREATE TABLE dmed AS SELECT median(total_time) AS m FROM fp0;"
	"CREATE TABLE dcomp AS UNPIVOT (SELECT profile, tensor_active_time AS tensor, "
	"  vector_active_time AS vector, scalar_active_time AS scalar, "
	"  gpsimd_active_time AS gpsimd, sync_active_time AS sync, dma_active_time AS dma, "
	"  collective_active_time AS collectives FROM fp0) "
	"  ON tensor, vector, scalar, gpsimd, sync, dma, collectives INTO NAME component VALUE t;"
	"CREATE TABLE dbest AS WITH cm AS (SELECT component, median(t) AS m FROM dcomp GROUP BY ALL) "
	"  SELECT profile, first(component ORDER BY t - cm.m DESC, component) AS component, "
	"         max(t - cm.m) AS d, "
	"         first(component ORDER BY t DESC, component) AS top "
	"  FROM dcomp JOIN cm USING (component) GROUP BY profile;"
	"CREATE TABLE FleetProfile AS SELECT fp0.profile, instance, pid, "
	"  (SELECT min(r.rank) FROM rankinfo r WHERE r.instance = fp0.instance "
	"     AND r.pid IS NOT DISTINCT FROM fp0.pid) AS rank, "
	"  nc, model_id, total_time, "
	"  CASE WHEN greatest(tensor_active_time, vector_active_time, scalar_active_time, "
	"    gpsimd_active_time, sync_active_time, dma_active_time) > 0 THEN dbest.top END "
	"    AS bottleneck_engine, "
	"  tensor_active_time, vector_active_time, scalar_active_time, gpsimd_active_time, "
	"  sync_active_time, dma_active_time, collective_active_time, dma_bytes, hbm_read_bytes, "
	"  hbm_write_bytes, hardware_flops, mfu_estimated_percent, warning_count, "
	"  total_time / nullif(dmed.m, 0) AS total_time_vs_median, "
	"  coalesce(total_time > dmed.m * (1 + %g / 100.0), false) AS straggler "
	"FROM fp0 CROSS JOIN dmed LEFT JOIN dbest USING (profile) ORDER BY fp0.profile;"
	"CREATE TABLE dstrag AS SELECT 'device' AS kind, p.profile, p.instance, p.pid, p.rank, "
	"  p.nc, 'total_time' AS metric, p.total_time AS value_s, dmed.m AS median_s, "
	"  100 * (p.total_time / dmed.m - 1) AS excess_percent, b.component AS explained_by, "
	"  b.d AS explained_s, b.d / nullif(p.total_time - dmed.m, 0) AS explained_share "
	"FROM FleetProfile p CROSS JOIN dmed JOIN dbest b USING (profile) WHERE p.straggler;";

static const char rank_sql[] =
	"CREATE TABLE steps AS SELECT profile, duration_ns FROM ev WHERE " IS_STEP
	"  AND duration_ns > 0;"
	"CREATE TABLE coll AS SELECT profile, name, duration_ns FROM ev WHERE " IS_COLLECTIVE
	"  AND duration_ns > 0;"
	"CREATE TABLE FleetRank AS SELECT t.profile, t.instance, t.pid, ri.rank, "
	"  coalesce(st.n, 0) AS step_count, st.total AS step_time_total_ns, "
	"  st.mean AS step_time_mean_ns, st.med AS step_time_median_ns, st.mx AS step_time_max_ns, "
	"  coalesce(c.n, 0) AS collective_count, coalesce(c.total, 0) AS collective_time_ns, "
	"  c.total / nullif(st.n, 0) AS collective_time_per_step_ns, c.top AS top_collective, "
	"  coalesce(e.n, 0) AS event_count, e.span AS span_ns, coalesce(w.n, 0) AS warning_count, "
	"  false AS straggler "
	"FROM task t JOIN rankinfo ri USING (profile) "
	"LEFT JOIN (SELECT profile, count(*) AS n, sum(duration_ns)::BIGINT AS total, "
	"    (sum(duration_ns) / count(*))::BIGINT AS mean, median(duration_ns)::BIGINT AS med, "
	"    max(duration_ns) AS mx FROM steps GROUP BY profile) st USING (profile) "
	"LEFT JOIN (SELECT profile, count(*) AS n, sum(duration_ns)::BIGINT AS total, "
	"    (SELECT first(name ORDER BY s DESC, name) FROM (SELECT name, sum(duration_ns) s "
	"      FROM coll c2 WHERE c2.profile = coll.profile GROUP BY name)) AS top "
	"    FROM coll GROUP BY profile) c USING (profile) "
	"LEFT JOIN (SELECT profile, count(*) AS n, max(end_ts) - min(start_ts) AS span FROM ev "
	"    WHERE name != 'trace_metadata' AND start_ts > 0 GROUP BY profile) e USING (profile) "
	"LEFT JOIN warn w USING (profile) WHERE t.kind = 'trace' ORDER BY t.profile;"
	"CREATE TABLE rmed AS SELECT median(step_time_mean_ns) AS m FROM FleetRank "
	"  WHERE step_count > 0;"
	"UPDATE FleetRank SET straggler = step_count > 0 AND "
	"  step_time_mean_ns > (SELECT m FROM rmed) * (1 + %g / 100.0);"
	"CREATE TABLE rcomp0 AS SELECT profile, 'collective ' || name AS component, "
	"  sum(duration_ns) AS t FROM coll GROUP BY ALL;"
	"CREATE TABLE rcomp AS "
	"  SELECT r.profile, k.component, coalesce(c.t, 0) / r.step_count AS t FROM FleetRank r "
	"    CROSS JOIN (SELECT DISTINCT component FROM rcomp0) k "
	"    LEFT JOIN rcomp0 c ON c.profile = r.profile AND c.component = k.component "
	"    WHERE r.step_count > 0 "
	"  UNION ALL SELECT profile, 'compute', (step_time_total_ns - collective_time_ns) / step_count "
	"    FROM FleetRank WHERE step_count > 0;"
	"CREATE TABLE rbest AS WITH cm AS (SELECT component, median(t) AS m FROM rcomp GROUP BY ALL) "
	"  SELECT profile, first(component ORDER BY t - cm.m DESC, component) AS component, "
	"         max(t - cm.m) AS d FROM rcomp JOIN cm USING (component) GROUP BY profile;"
	"CREATE TABLE rstrag AS SELECT 'rank' AS kind, r.profile, r.instance, r.pid, r.rank, "
	"  NULL::BIGINT AS nc, 'step_time' AS metric, r.step_time_mean_ns / 1e9 AS value_s, "
	"  rmed.m / 1e9 AS median_s, 100 * (r.step_time_mean_ns / rmed.m - 1) AS excess_percent, "
	"  b.component AS explained_by, b.d / 1e9 AS explained_s, "
	"  b.d / nullif(r.step_time_mean_ns - rmed.m, 0) AS explained_share "
	"FROM FleetRank r CROSS JOIN rmed JOIN rbest b USING (profile) WHERE r.straggler;";

/* The done members' files of one table. */
struct file_list {
	char **path;
	size_t n;
};

struct member_files {
	struct file_list summ, warn, ev;
};

static void add_file(struct file_list *l, char *path)
{
	l->path = nx_xrealloc(l->path, (l->n + 1) * sizeof(*l->path));
	l->path[l->n++] = path;
}

static void file_list_release(struct file_list *l)
{
	for (size_t i = 0; i < l->n; i++)
		free(l->path[i]);
	free(l->path);
}

/* Appends the statements creating table as "<head> FROM <the files of l> <tail>",
 * NX_PQ_UNION_FILES_PER_READ files at a time. */
static void add_union(struct nx_strbuf *sql, const char *table, const char *head,
		      const char *tail, const struct file_list *l)
{
	nx_pq_union_create(sql, table, head, tail, (const char *const *)l->path, l->n,
			   NX_PQ_UNION_FILES_PER_READ);
}

static void collect(const char *data_path, const struct nx_fleet_plan *p,
		    const enum nx_fleet_state *state, struct member_files *m)
{
	for (size_t i = 0; i < p->n; i++) {
		char *dir, *f;

		if (state[i] != NX_FLEET_DONE)
			continue;
		dir = nx_profile_dir(data_path, p->t[i].profile);
		f = nx_path_join(dir, p->t[i].kind == NX_FLEET_DEVICE ? "Summary.parquet"
								      : "SystemProfileEvents.parquet");
		if (nx_is_file(f))
			add_file(p->t[i].kind == NX_FLEET_DEVICE ? &m->summ : &m->ev, f);
		else
			free(f);
		f = nx_path_join(dir, "Warning.parquet");
		if (nx_is_file(f))
			add_file(&m->warn, f);
		else
			free(f);
		free(dir);
	}
}

static void add_i64(struct nx_strbuf *sb, int64_t v)
{
	if (v < 0)
		nx_strbuf_addstr(sb, ",NULL");
	else
		nx_strbuf_addf(sb, ",%" PRId64, v);
}

static int load_tasks(struct nx_duck *d, const struct nx_fleet_plan *p,
		      const enum nx_fleet_state *state, char *const *msg, struct nx_err *err)
{
	struct nx_strbuf sql = NX_STRBUF_INIT;
	int rc = 0;

	nx_strbuf_addstr(&sql, "CREATE TABLE task (task BIGINT, kind VARCHAR, profile VARCHAR, "
			       "instance VARCHAR, pid BIGINT, nc BIGINT, model_id BIGINT, "
			       "rank BIGINT, neff VARCHAR, input VARCHAR, status VARCHAR, "
			       "message VARCHAR);");
	/* One statement of 500 rows at a time: DuckDB parses every statement of a text
	 * before it runs the first, and a parsed row of values took about 7 KB (10 MB at
	 * 1,500 tasks when all went at once). */
	for (size_t i = 0; !rc && i < p->n; i++) {
		const struct nx_fleet_task *t = &p->t[i];

		nx_strbuf_addstr(&sql, i % 500 ? ",(" : "INSERT INTO task VALUES (");
		nx_strbuf_addf(&sql, "%zu,'%s',", i, t->kind == NX_FLEET_DEVICE ? "device" : "trace");
		nx_sql_quote(&sql, t->profile);
		nx_strbuf_addch(&sql, ',');
		nx_sql_quote(&sql, t->instance);
		add_i64(&sql, t->pid);
		add_i64(&sql, t->nc);
		add_i64(&sql, t->model);
		add_i64(&sql, t->rank);
		nx_strbuf_addch(&sql, ',');
		if (t->neff[0])
			nx_sql_quote(&sql, t->neff);
		else
			nx_strbuf_addstr(&sql, "NULL");
		nx_strbuf_addch(&sql, ',');
		nx_sql_quote(&sql, t->input);
		nx_strbuf_addf(&sql, ",'%s',", nx_fleet_state_name(state[i]));
		if (msg[i][0])
			nx_sql_quote(&sql, msg[i]);
		else
			nx_strbuf_addstr(&sql, "NULL");
		if (i % 500 == 499 || i + 1 == p->n) {
			nx_strbuf_addstr(&sql, ");");
			rc = nx_duck_exec(d, sql.buf, err);
			nx_strbuf_reset(&sql);
		} else {
			nx_strbuf_addch(&sql, ')');
		}
	}
	if (!rc && sql.len)
		rc = nx_duck_exec(d, sql.buf, err); /* no task: the table alone */
	nx_strbuf_release(&sql);
	return rc;
}

static int build_tables(struct nx_duck *d, const struct member_files *m, double threshold,
			struct nx_err *err)
{
	struct nx_strbuf sql = NX_STRBUF_INIT;
	int rc;

	/* The members' rows, in no particular order: kept in insertion order, every file
	 * would be a batch of its own, each with its own storage (0.8 MB per Summary
	 * file of 101 columns); the tables built from them order their rows themselves. */
	nx_strbuf_addstr(&sql, "SET preserve_insertion_order = false;");
	if (m->warn.n) {
		add_union(&sql, "warn", "SELECT profile, count(*) FILTER (WHERE category IS "
					"DISTINCT FROM 'Compiler Decision') AS n", "GROUP BY ALL",
			  &m->warn);
	} else {
		nx_strbuf_addstr(&sql, "CREATE TABLE warn (profile VARCHAR, n BIGINT);");
	}
	if (m->ev.n) {
		add_union(&sql, "ev", "SELECT profile, name, start_ts, end_ts, duration_ns, "
				      "extra_attributes_json", "", &m->ev);
	} else {
		nx_strbuf_addstr(&sql, "CREATE TABLE ev (profile VARCHAR, name VARCHAR, "
				       "start_ts BIGINT, end_ts BIGINT, duration_ns BIGINT, "
				       "extra_attributes_json VARCHAR);");
	}
	if (m->summ.n) {
		add_union(&sql, "summ", "SELECT *", "", &m->summ);
	}
	nx_strbuf_addstr(&sql, "RESET preserve_insertion_order;");
	/* The rank of a framework trace: its file name, else distributedInfo.rank. */
	nx_strbuf_addstr(&sql, "CREATE TABLE rankinfo AS SELECT t.profile, t.instance, t.pid, "
			       "coalesce(t.rank, (SELECT max(TRY_CAST(json_extract_string("
			       "e.extra_attributes_json, '$.args.distributedInfo.rank') AS BIGINT)) "
			       "FROM ev e WHERE e.profile = t.profile AND e.name = 'trace_metadata')) "
			       "AS rank FROM task t WHERE t.kind = 'trace' AND t.status = 'done';");
	if ((rc = nx_duck_exec(d, sql.buf, err)))
		goto out;
	nx_strbuf_reset(&sql);
	if (m->summ.n) {
		nx_strbuf_addf(&sql, device_sql, threshold);
		if ((rc = nx_duck_exec(d, sql.buf, err)))
			goto out;
		nx_strbuf_reset(&sql);
	}
	if (m->ev.n) {
		nx_strbuf_addf(&sql, rank_sql, threshold);
		if ((rc = nx_duck_exec(d, sql.buf, err)))
			goto out;
		nx_strbuf_reset(&sql);
	}
	nx_strbuf_addstr(&sql, "CREATE TABLE FleetStraggler AS SELECT * FROM (");
	if (m->summ.n)
		nx_strbuf_addstr(&sql, "SELECT * FROM dstrag UNION ALL ");
	if (m->ev.n)
		nx_strbuf_addstr(&sql, "SELECT * FROM rstrag UNION ALL ");
	nx_strbuf_addstr(&sql, "SELECT NULL::VARCHAR AS kind, NULL::VARCHAR AS profile, "
			       "NULL::VARCHAR AS instance, NULL::BIGINT AS pid, NULL::BIGINT AS rank, "
			       "NULL::BIGINT AS nc, NULL::VARCHAR AS metric, NULL::DOUBLE AS value_s, "
			       "NULL::DOUBLE AS median_s, NULL::DOUBLE AS excess_percent, "
			       "NULL::VARCHAR AS explained_by, NULL::DOUBLE AS explained_s, "
			       "NULL::DOUBLE AS explained_share WHERE false) "
			       "ORDER BY excess_percent DESC, profile;");
	nx_strbuf_addf(&sql, "CREATE TABLE FleetRun AS SELECT %s AS run, "
			     "(SELECT count(*) FROM task) AS task_count, "
			     "(SELECT count(*) FROM task WHERE status = 'done') AS done_count, "
			     "(SELECT count(*) FROM task WHERE status = 'failed') AS failed_count, "
			     "(SELECT count(*) FROM task WHERE status IN ('pending', 'running')) "
			     "  AS unfinished_count, "
			     "(SELECT count(*) FROM task WHERE kind = 'device' AND status = 'done') "
			     "  AS device_profiles, "
			     "(SELECT count(*) FROM task WHERE kind = 'trace' AND status = 'done') "
			     "  AS trace_profiles, "
			     "%g::DOUBLE AS threshold_percent, %s AS median_total_time, "
			     "%s AS median_step_time_ns, "
			     "(SELECT count(*) FROM FleetStraggler) AS straggler_count;",
		       "(SELECT NULL::VARCHAR)", threshold,
		       m->summ.n ? "(SELECT m FROM dmed)" : "NULL::DOUBLE",
		       m->ev.n ? "(SELECT m FROM rmed)::DOUBLE" : "NULL::DOUBLE");
	rc = nx_duck_exec(d, sql.buf, err);
out:
	nx_strbuf_release(&sql);
	return rc;
}

static int copy_table(struct nx_duck *d, const char *dir, const char *table, const char *order,
		      struct nx_err *err)
{
	char *sql = nx_xasprintf("SELECT * FROM %s%s%s", table, order ? " ORDER BY " : "",
				 order ? order : "");
	char *path = nx_xasprintf("%s/%s.parquet", dir, table);
	uint64_t rows = 0;
	int rc = nx_duck_copy_query(d, sql, path, &rows, err);

	free(sql);
	free(path);
	return rc;
}

int nx_fleet_index(const char *data_path, const char *run, double threshold,
		   struct nx_err *err)
{
	struct nx_fleet_plan p;
	struct member_files m = { { NULL, 0 }, { NULL, 0 }, { NULL, 0 } };
	enum nx_fleet_state *state = NULL;
	char **msg = NULL;
	struct nx_publish_plan pp = { 0 };
	struct nx_strbuf members = NX_STRBUF_INIT, sql = NX_STRBUF_INIT;
	struct nx_duck *d = NULL;
	int rc;

	if ((rc = nx_fleet_check_run(data_path, run, err)) ||
	    (rc = nx_fleet_manifest_read(data_path, run, &p, err)))
		return rc;
	state = nx_xcalloc(p.n, sizeof(*state));
	msg = nx_xcalloc(p.n, sizeof(*msg));
	for (size_t i = 0; i < p.n; i++) {
		struct nx_fleet_status st;

		nx_fleet_task_status(data_path, run, &p.t[i], &st);
		state[i] = st.state;
		msg[i] = nx_xstrdup(st.message);
		nx_fleet_status_release(&st);
		if (state[i] == NX_FLEET_DONE)
			nx_strbuf_addf(&members, "%s\n", p.t[i].profile);
	}
	collect(data_path, &p, state, &m);
	nx_publish_plan(&pp, data_path, run, NULL);
	if ((rc = nx_publish_prepare(&pp, err)))
		goto out;
	/* DuckDB's external file cache would keep what it read of every member's files
	 * (0.4 MB per Summary file) until memory runs short: each is read once here. */
	if ((rc = nx_duck_open(&d, 2, NULL, err)) ||
	    (rc = nx_duck_exec(d, "SET enable_external_file_cache = false", err)) ||
	    (rc = load_tasks(d, &p, state, msg, err)))
		goto out;
	if ((rc = build_tables(d, &m, threshold, err)))
		goto out;
	nx_strbuf_addstr(&sql, "UPDATE FleetRun SET run = ");
	nx_sql_quote(&sql, run);
	nx_strbuf_addstr(&sql, "; CREATE TABLE FleetTask AS SELECT * FROM task");
	if ((rc = nx_duck_exec(d, sql.buf, err)) ||
	    (rc = copy_table(d, pp.tmp, "FleetTask", "task", err)) ||
	    (m.summ.n && (rc = copy_table(d, pp.tmp, "FleetProfile", "profile", err))) ||
	    (m.ev.n && (rc = copy_table(d, pp.tmp, "FleetRank", "profile", err))) ||
	    (rc = copy_table(d, pp.tmp, "FleetStraggler", NULL, err)) ||
	    (rc = copy_table(d, pp.tmp, "FleetRun", NULL, err)))
		goto out;
	{
		char *mf = nx_path_join(pp.tmp, NX_FLEET_MEMBERS);
		rc = nx_write_file_atomic(mf, members.buf ? members.buf : "", members.len, err);
		free(mf);
		if (rc)
			goto out;
	}
	nx_duck_close(d);
	d = NULL;
	rc = nx_publish(&pp, err);
out:
	if (rc) {
		struct nx_err ignored = { 0 };
		nx_err_wrap(err, "building the fleet index of run '%s'", run);
		if (pp.tmp)
			nx_remove_tree(pp.tmp, &ignored);
	}
	nx_duck_close(d);
	for (size_t i = 0; msg && i < p.n; i++)
		free(msg[i]);
	free(msg);
	free(state);
	file_list_release(&m.summ);
	file_list_release(&m.warn);
	file_list_release(&m.ev);
	nx_strbuf_release(&members);
	nx_strbuf_release(&sql);
	nx_publish_plan_release(&pp);
	nx_fleet_plan_release(&p);
	return rc;
}
