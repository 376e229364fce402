/* SPDX-License-Identifier: MIT
 * export.c: `fleet export`: a run's member tables as hive-style partitions that Spark,
 * Trino or DuckDB scan as one dataset (see fleet.h, docs/fleet.md). Each table is one
 * DuckDB COPY ... (FORMAT parquet, PARTITION_BY (instance, nc)) over all the members'
 * files of that table (read by schema group, db/parquet_union.h), with the member's
 * name as a `profile` column; the run's own index tables are copied unpartitioned.
 * Built in a temporary sibling of the output
 * directory and renamed into place; the output directory follows the output rule
 * (common/outpath.h): new, empty, or an earlier export. */
#include "common/compat.h"
#include "fleet/fleet.h"
#include "common/fsutil.h"
#include "common/outpath.h"
#include "common/strbuf.h"
#include "common/xalloc.h"
#include "db/duck.h"
#include "db/parquet_union.h"
#include "ingest/ingest.h"
#include "db/table_files.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

struct table_files {
	char *name;
	char **paths;
	size_t n;
};

/* A member's table file is a regular file of its own (a symlink is not followed). */
static bool plain_file(void *arg, const char *dir, const char *file, uint64_t *bytes)
{
	char *path = nx_path_join(dir, file);
	struct stat st;
	bool ok = lstat(path, &st) == 0 && S_ISREG(st.st_mode);

	(void)arg;
	*bytes = ok ? (uint64_t)st.st_size : 0;
	free(path);
	return ok;
}

static struct table_files *find_table(struct table_files **v, size_t *n, size_t *cap,
				      const char *name)
{
	for (size_t i = 0; i < *n; i++)
		if (!strcmp((*v)[i].name, name))
			return &(*v)[i];
	NX_GROW(*v, *n + 1, *cap);
	struct table_files *t = &(*v)[(*n)++];
	t->name = nx_xstrdup(name);
	t->paths = NULL;
	t->n = 0;
	return t;
}

static int copy_partitioned(struct nx_duck *d, const struct table_files *t, const char *out,
			    struct nx_err *err)
{
	struct nx_strbuf sql = NX_STRBUF_INIT;
	char *dir = nx_path_join(out, t->name);
	int rc;

	nx_strbuf_addstr(&sql, "COPY (SELECT coalesce(nullif(m.instance, ''), 'unknown') AS instance, "
			       "coalesce(m.nc, -1) AS nc, f.* FROM (");
	nx_pq_union_select(&sql, (const char *const *)t->paths, t->n);
	nx_strbuf_addstr(&sql, ") f JOIN member m USING (profile) ORDER BY instance, nc, profile) TO ");
	nx_sql_quote(&sql, dir);
	nx_strbuf_addstr(&sql, " (FORMAT parquet, COMPRESSION zstd, PARTITION_BY (instance, nc), "
			       "FILENAME_PATTERN 'part{i}')");
	rc = nx_duck_exec(d, sql.buf, err);
	if (rc)
		nx_err_wrap(err, "exporting table %s", t->name);
	nx_strbuf_release(&sql);
	free(dir);
	return rc;
}

/* The index profile's own tables: out/<T>/part0.parquet. */
static int copy_index(struct nx_duck *d, const char *index_dir, const char *out,
		      struct nx_err *err)
{
	static const char *const tables[] = { "FleetTask", "FleetProfile", "FleetRank",
					      "FleetStraggler", "FleetRun" };
	int rc = 0;

	for (size_t i = 0; i < NX_ARRAY_SIZE(tables) && !rc; i++) {
		char *src = nx_xasprintf("%s/%s.parquet", index_dir, tables[i]);
		char *dir = nx_path_join(out, tables[i]);
		char *dst = nx_path_join(dir, "part0.parquet");
		struct nx_strbuf sql = NX_STRBUF_INIT;
		uint64_t rows;

		if (nx_is_file(src)) {
			nx_strbuf_addstr(&sql, "SELECT * FROM read_parquet(");
			nx_sql_quote(&sql, src);
			nx_strbuf_addch(&sql, ')');
			rc = nx_mkdirs(dir, err);
			if (!rc)
				rc = nx_duck_copy_query(d, sql.buf, dst, &rows, err);
		}
		nx_strbuf_release(&sql);
		free(src);
		free(dir);
		free(dst);
	}
	return rc;
}

int nx_fleet_export(const char *data_path, const char *run, const char *out, size_t *ntables,
		    struct nx_err *err)
{
	struct nx_fleet_plan p;
	struct table_files *tv = NULL;
	size_t nt = 0, tcap = 0;
	struct nx_strbuf sql = NX_STRBUF_INIT;
	struct nx_duck *d = NULL;
	char *index_dir = nx_profile_dir(data_path, run);
	char *members = nx_path_join(index_dir, NX_FLEET_MEMBERS);
	struct nx_publish_plan pp = { 0 };
	int rc;

	*ntables = 0;
	nx_publish_plan(&pp, data_path, NULL, out);
	if ((rc = nx_out_dir_check(out, data_path, err)))
		goto out_nop;
	if ((rc = nx_fleet_manifest_read(data_path, run, &p, err)))
		goto out_nop;
	if (!nx_is_file(members)) {
		rc = nx_errf(err, NX_ENOTFOUND, "run '%s' has no fleet index (%s); run "
			     "'neuron-explorer fleet index' first", run, members);
		goto out;
	}
	nx_strbuf_addstr(&sql, "CREATE TABLE member (profile VARCHAR, instance VARCHAR, nc BIGINT);");
	for (size_t i = 0; i < p.n; i++) {
		struct nx_fleet_status st;
		struct nx_table_file *tf;
		size_t ntf;
		char *dir, *real;

		nx_fleet_task_status(data_path, run, &p.t[i], &st);
		bool done = st.state == NX_FLEET_DONE;
		nx_fleet_status_release(&st);
		if (!done)
			continue;
		dir = nx_profile_dir(data_path, p.t[i].profile);
		real = realpath(dir, NULL);
		free(dir);
		if (!real)
			continue;
		if ((rc = nx_table_files_list(real, plain_file, NULL, &tf, &ntf, err))) {
			free(real);
			goto out;
		}
		for (size_t k = 0; k < ntf; k++) {
			struct table_files *t = find_table(&tv, &nt, &tcap, tf[k].table);

			t->paths = nx_xrealloc(t->paths, (t->n + 1) * sizeof(*t->paths));
			t->paths[t->n++] = nx_path_join(real, tf[k].file);
		}
		nx_table_files_free(tf, ntf);
		free(real);
		nx_strbuf_addstr(&sql, "INSERT INTO member VALUES (");
		nx_sql_quote(&sql, p.t[i].profile);
		nx_strbuf_addch(&sql, ',');
		nx_sql_quote(&sql, p.t[i].instance);
		if (p.t[i].nc >= 0)
			nx_strbuf_addf(&sql, ",%" PRId64 ");", p.t[i].nc);
		else
			nx_strbuf_addstr(&sql, ",NULL);");
	}
	/* each member file is read once: DuckDB's external file cache would keep them all */
	if ((rc = nx_publish_prepare(&pp, err)) || (rc = nx_duck_open(&d, 2, "1GB", err)) ||
	    (rc = nx_duck_exec(d, "SET enable_external_file_cache = false", err)) ||
	    (rc = nx_duck_exec(d, sql.buf, err)))
		goto out;
	for (size_t i = 0; i < nt && !rc; i++)
		rc = copy_partitioned(d, &tv[i], pp.tmp, err);
	if (!rc)
		rc = copy_index(d, index_dir, pp.tmp, err);
	nx_duck_close(d);
	d = NULL;
	if (!rc)
		rc = nx_publish(&pp, err);
	if (!rc)
		*ntables = nt;
out:
	if (rc) {
		struct nx_err ignored = { 0 };
		nx_remove_tree(pp.tmp, &ignored);
	}
	nx_fleet_plan_release(&p);
out_nop:
	nx_duck_close(d);
	for (size_t i = 0; i < nt; i++) {
		free(tv[i].name);
		for (size_t k = 0; k < tv[i].n; k++)
			free(tv[i].paths[k]);
		free(tv[i].paths);
	}
	free(tv);
	nx_strbuf_release(&sql);
	free(index_dir);
	free(members);
	nx_publish_plan_release(&pp);
	return rc;
}
