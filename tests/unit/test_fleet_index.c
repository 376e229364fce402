/* SPDX-License-Identifier: MIT
 * test_fleet_index.c: the fleet index of a run of 30 members (20 NEFF/NTFF pairs, 10
 * framework traces) whose Summary, Warning and SystemProfileEvents files are real parquet
 * files written by DuckDB, built by nx_fleet_index. The members' files are grouped by
 * the schema in their footers (db/parquet_union.c): the same rows come out when every
 * member shares a schema (read without union_by_name), when some members' columns come
 * in another order or with one more (groups joined by name), and when there are more
 * schemas than groups (union_by_name over all), and when they are read a few files at a
 * time (the parts inserted into one table when they share a schema, else joined by
 * name); a member file that is not parquet fails
 * the index with an error naming it, and leaves the published index as it was. */
#include "common/compat.h"
#include "helper/test_dirs.h"
#include "common/fsutil.h"
#include "common/strbuf.h"
#include "common/xalloc.h"
#include "db/duck.h"
#include "db/parquet_union.h"
#include "fleet/fleet.h"
#include "ingest/ingest.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#define RUN "r"
#define NDEV 20
#define NTRACE 10

static char *tmp, *data;   /* this test's directory, its data path */
static struct nx_duck *db; /* writes the members' files, compares the indexes */

static const char *const index_tables[] = { "FleetTask", "FleetProfile", "FleetRank",
					    "FleetStraggler", "FleetRun" };

static void exec(const char *sql)
{
	struct nx_err err = { 0 };

	if (nx_duck_exec(db, sql, &err))
		fail_msg("%s\n%s", err.msg, sql);
}

static int64_t query_i64(const char *sql)
{
	struct nx_err err = { 0 };
	int64_t v = 0;

	if (nx_duck_query_i64(db, sql, &v, &err))
		fail_msg("%s\n%s", err.msg, sql);
	return v;
}

static char *member_name(bool device, int i)
{
	return nx_xasprintf(RUN "-%s%d-0000abcd", device ? "d" : "t", i);
}

/* <member dir>/<table>.parquet, newly allocated. */
static char *member_file(bool device, int i, const char *table)
{
	char *name = member_name(device, i), *dir = nx_profile_dir(data, name);
	char *path = nx_xasprintf("%s/%s.parquet", dir, table);

	free(dir);
	free(name);
	return path;
}

/* Writes the result of select to path as parquet. */
static void copy_to(const char *select, const char *path)
{
	struct nx_strbuf sql = NX_STRBUF_INIT;

	nx_strbuf_addf(&sql, "COPY (%s) TO ", select);
	nx_sql_quote(&sql, path);
	nx_strbuf_addstr(&sql, " (FORMAT parquet)");
	exec(sql.buf);
	nx_strbuf_release(&sql);
}

/* The columns of a device member's Summary (cols: what comes first, then the others). */
static void write_summary(int i, const char *cols)
{
	char *path = member_file(true, i, "Summary");
	/* member 7 is the straggler: twice the time, in its vector engine */
	double total = i == 7 ? 2.0 : 1.0 + 0.01 * i, vector = i == 7 ? 1.2 : 0.2;
	char *select = nx_xasprintf(
		"SELECT %s FROM (SELECT %g::DOUBLE AS total_time, 0.5::DOUBLE AS "
		"tensor_engine_active_time, %g::DOUBLE AS vector_engine_active_time, "
		"0.1::DOUBLE AS scalar_engine_active_time, NULL::DOUBLE AS "
		"gpsimd_engine_active_time, 0.05::DOUBLE AS sync_engine_active_time, "
		"0.3::DOUBLE AS dma_active_time, NULL::DOUBLE AS cc_op_active_time, "
		"%d::BIGINT AS dma_transfer_total_bytes, 1000::BIGINT AS hbm_read_bytes, "
		"2000::BIGINT AS hbm_write_bytes, 123456::BIGINT AS hardware_flops, "
		"0.25::DOUBLE AS mfu_estimated_percent, 'matmul' AS kernel_name)",
		cols, total, vector, 4096 * (i + 1));

	copy_to(select, path);
	free(select);
	free(path);
}

static void write_warning(bool device, int i, const char *cols)
{
	char *path = member_file(device, i, "Warning");
	char *select = nx_xasprintf(
		"SELECT %s FROM (SELECT * FROM (VALUES ('Compiler Decision', 'kept'), "
		"('DMA', 'small transfers %d')) v(category, message) LIMIT %d)",
		cols, i, 1 + i % 2);

	copy_to(select, path);
	free(select);
	free(path);
}

/* A trace member's events: 4 steps with an all_reduce in each (rank 4 slower), and its
 * metadata row. */
static void write_events(int i, const char *extra)
{
	char *path = member_file(false, i, "SystemProfileEvents");
	int ar = i == 4 ? 6000 : 2000;
	char *select = nx_xasprintf(
		"SELECT name, start_ts, start_ts + duration_ns AS end_ts, duration_ns, "
		"extra_attributes_json%s FROM ("
		"SELECT 'ProfilerStep#' || k AS name, 1000 + k * 20000 AS start_ts, "
		"(10000 + %d)::BIGINT AS duration_ns, NULL::VARCHAR AS extra_attributes_json "
		"FROM range(4) t(k) UNION ALL "
		"SELECT 'nccl:all_reduce', 9200 + k * 20000, %d::BIGINT, NULL FROM range(4) t(k) "
		"UNION ALL SELECT 'trace_metadata', 0, 0::BIGINT, "
		"'{\"args\":{\"distributedInfo\":{\"rank\":%d}}}')",
		extra, ar, ar, i);

	copy_to(select, path);
	free(select);
	free(path);
}

static void put_status(const char *profile)
{
	struct nx_err err = { 0 };
	char *path = nx_xasprintf("%s/fleet/" RUN "/status/%s.done", data, profile);
	static const char line[] = "h1\t77\t-\t1.000\t10\t\n";

	if (nx_write_file_atomic(path, line, strlen(line), &err))
		fail_msg("%s", err.msg);
	free(path);
}

/* The run: its manifest, done status files and the members' files. */
static void make_run(void)
{
	struct nx_fleet_plan p = { .run = (char *)RUN };
	struct nx_err err = { 0 };

	p.n = NDEV + NTRACE;
	p.t = nx_xcalloc(p.n, sizeof(*p.t));
	for (size_t k = 0; k < p.n; k++) {
		struct nx_fleet_task *t = &p.t[k];
		bool device = k < NDEV;
		int i = device ? (int)k : (int)k - NDEV;
		char *dir;

		t->kind = device ? NX_FLEET_DEVICE : NX_FLEET_TRACE;
		t->profile = member_name(device, i);
		t->instance = nx_xasprintf("ip-10-0-0-%d", device ? i / 2 : i);
		t->pid = 4000 + (device ? i / 2 : i);
		t->nc = device ? i % 2 : -1;
		t->model = device ? 0 : -1;
		t->rank = device || i == 9 ? -1 : i; /* rank 9 from its metadata row */
		t->neff = nx_xstrdup(device ? "/run/x.neff" : "");
		t->input = nx_xasprintf("/run/%s%d", device ? "core" : "trace", i);
		dir = nx_profile_dir(data, t->profile);
		if (nx_mkdirs(dir, &err))
			fail_msg("%s", err.msg);
		free(dir);
		if (device)
			write_summary(i, "*");
		else
			write_events(i, "");
		if (i % 3 != 1)
			write_warning(device, i, "*");
	}
	if (nx_fleet_manifest_write(data, &p, &err))
		fail_msg("%s", err.msg);
	for (size_t k = 0; k < p.n; k++)
		put_status(p.t[k].profile);
	for (size_t k = 0; k < p.n; k++)
		nx_fleet_task_release(&p.t[k]);
	free(p.t);
}

/* The number of schema groups of one table's files over the members that have it. */
static size_t groups_of(bool device, int n, const char *table)
{
	char **paths = nx_xcalloc((size_t)n, sizeof(*paths));
	size_t *group = nx_xcalloc((size_t)n, sizeof(*group)), k = 0, ng;

	for (int i = 0; i < n; i++) {
		paths[k] = member_file(device, i, table);
		if (nx_is_file(paths[k]))
			k++;
		else
			free(paths[k]);
	}
	ng = nx_pq_schema_groups((const char *const *)paths, k, NX_PQ_UNION_GROUPS, group);
	for (size_t i = 0; i < k; i++)
		free(paths[i]);
	free(paths);
	free(group);
	return ng;
}

static void build_index(void)
{
	struct nx_err err = { 0 };

	if (nx_fleet_index(data, RUN, 10, &err))
		fail_msg("%s", err.msg);
}

/* The published index table's file. */
static char *index_file(const char *table)
{
	char *dir = nx_profile_dir(data, RUN);
	char *path = nx_xasprintf("%s/%s.parquet", dir, table);

	free(dir);
	return path;
}

/* Keeps a copy of the published index's tables as tables ref_<T>. */
static void keep_reference(void)
{
	for (size_t i = 0; i < NX_ARRAY_SIZE(index_tables); i++) {
		struct nx_strbuf sql = NX_STRBUF_INIT;
		char *path = index_file(index_tables[i]);

		nx_strbuf_addf(&sql, "CREATE OR REPLACE TABLE ref_%s AS SELECT * FROM read_parquet(",
			       index_tables[i]);
		nx_sql_quote(&sql, path);
		nx_strbuf_addch(&sql, ')');
		exec(sql.buf);
		nx_strbuf_release(&sql);
		free(path);
	}
}

/* The published index holds the reference's rows, column for column. */
static void check_same_as_reference(void)
{
	for (size_t i = 0; i < NX_ARRAY_SIZE(index_tables); i++) {
		struct nx_strbuf sql = NX_STRBUF_INIT;
		char *path = index_file(index_tables[i]);

		nx_strbuf_addstr(&sql, "SELECT (SELECT count(*) FROM (SELECT * FROM read_parquet(");
		nx_sql_quote(&sql, path);
		nx_strbuf_addf(&sql, ") EXCEPT ALL SELECT * FROM ref_%s)) + (SELECT count(*) FROM "
				     "(SELECT * FROM ref_%s EXCEPT ALL SELECT * FROM read_parquet(",
			       index_tables[i], index_tables[i]);
		nx_sql_quote(&sql, path);
		nx_strbuf_addstr(&sql, ")))");
		if (query_i64(sql.buf) != 0)
			fail_msg("%s differs from the single-schema index", index_tables[i]);
		nx_strbuf_release(&sql);
		free(path);
	}
}

static int setup(void **state)
{
	struct nx_err err = { 0 };

	(void)state;
	tmp = nx_test_fresh_dir("", "fleet-index");
	if (!tmp)
		fail_msg("no test directory");
	data = nx_path_join(tmp, "data");
	if (nx_mkdirs(data, &err) || nx_duck_open(&db, 2, NULL, &err))
		fail_msg("%s", err.msg);
	make_run();
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	nx_duck_close(db);
	free(data);
	free(tmp);
	return 0;
}

static int64_t differing_rows(const char *a, const char *b);
static void create_in_parts(const char *table, const char *head, const char *tail,
			    size_t per);

/* Every member shares a schema: one group per table, and the index's rows. */
static void one_schema(void **state)
{
	(void)state;
	assert_int_equal(groups_of(true, NDEV, "Summary"), 1);
	assert_int_equal(groups_of(false, NTRACE, "SystemProfileEvents"), 1);
	assert_int_equal(groups_of(true, NDEV, "Warning"), 1);
	build_index();
	keep_reference();
	assert_int_equal(query_i64("SELECT count(*) FROM ref_FleetProfile"), NDEV);
	assert_int_equal(query_i64("SELECT count(*) FROM ref_FleetRank"), NTRACE);
	assert_int_equal(query_i64("SELECT count(*) FROM ref_FleetTask"), NDEV + NTRACE);
	/* the planted straggler core and rank, explained */
	assert_int_equal(query_i64("SELECT count(*) FROM ref_FleetStraggler WHERE "
				   "(profile = 'r-d7-0000abcd' AND explained_by = 'vector') OR "
				   "(profile = 'r-t4-0000abcd' AND "
				   " explained_by = 'collective nccl:all_reduce')"), 2);
	assert_int_equal(query_i64("SELECT count(*) FROM ref_FleetStraggler"), 2);
	/* warnings without Compiler Decision rows; rank 9 from its metadata row */
	assert_int_equal(query_i64("SELECT sum(warning_count) FROM ref_FleetProfile"),
			 query_i64("SELECT count(*) FROM range(20) t(i) WHERE i % 3 != 1 "
				   "AND i % 2 = 1"));
	assert_int_equal(query_i64("SELECT rank FROM ref_FleetRank WHERE "
				   "profile = 'r-t9-0000abcd'"), 9);
	assert_int_equal(query_i64("SELECT min(rank) FROM ref_FleetProfile WHERE "
				   "instance = 'ip-10-0-0-3'"), 3);
	/* one schema read in parts: the parts after the first are inserted into the table,
	 * the same rows and columns as one read, and no part table */
	create_in_parts("whole1", "SELECT *", "", 0);
	create_in_parts("parts1", "SELECT *", "", 7);
	create_in_parts("grouped1", "SELECT profile, count(*) AS n", "GROUP BY ALL", 3);
	assert_int_equal(query_i64("SELECT count(*) FROM parts1"), NDEV);
	assert_int_equal(differing_rows("whole1", "parts1"), 0);
	assert_int_equal(query_i64("SELECT count(*) FROM (SELECT column_name, data_type, "
				   "ordinal_position FROM information_schema.columns WHERE table_name "
				   "= 'whole1' EXCEPT ALL SELECT column_name, data_type, "
				   "ordinal_position FROM information_schema.columns WHERE table_name "
				   "= 'parts1')"), 0);
	assert_int_equal(query_i64("SELECT count(*) FROM grouped1 WHERE n = 1"), NDEV);
	assert_int_equal(query_i64("SELECT count(*) FROM duckdb_tables() WHERE "
				   "table_name LIKE '%__part%'"), 0);
	exec("DROP TABLE whole1; DROP TABLE parts1; DROP TABLE grouped1");
}

/* Some members' columns in another order, one with a column more: a few groups joined
 * by name give the same rows. */
static void a_few_schemas(void **state)
{
	(void)state;
	write_summary(5, "kernel_name, mfu_estimated_percent, * EXCLUDE "
			 "(kernel_name, mfu_estimated_percent)");
	write_summary(12, "*, 42 AS added_later");
	write_warning(true, 3, "message, category");
	write_events(2, ", 'x' AS added_later");
	assert_int_equal(groups_of(true, NDEV, "Summary"), 3);
	assert_int_equal(groups_of(true, NDEV, "Warning"), 2);
	assert_int_equal(groups_of(false, NTRACE, "SystemProfileEvents"), 2);
	build_index();
	check_same_as_reference();
}

/* Rows of "SELECT * FROM a EXCEPT ALL SELECT * FROM b" and the other way round. */
static int64_t differing_rows(const char *a, const char *b)
{
	char *sql = nx_xasprintf("SELECT (SELECT count(*) FROM (SELECT * FROM %s EXCEPT ALL "
				 "SELECT * FROM %s)) + (SELECT count(*) FROM (SELECT * FROM %s "
				 "EXCEPT ALL SELECT * FROM %s))", a, b, b, a);
	int64_t n = query_i64(sql);

	free(sql);
	return n;
}

/* Creates table as head FROM the device members' Summary files tail, per files a time. */
static void create_in_parts(const char *table, const char *head, const char *tail,
			    size_t per)
{
	struct nx_strbuf sql = NX_STRBUF_INIT;
	char *paths[NDEV];

	for (int i = 0; i < NDEV; i++)
		paths[i] = member_file(true, i, "Summary");
	nx_pq_union_create(&sql, table, head, tail, (const char *const *)paths, NDEV, per);
	exec(sql.buf);
	for (int i = 0; i < NDEV; i++)
		free(paths[i]);
	nx_strbuf_release(&sql);
}

/* The members read a few files at a time, parts of different schemas (those of
 * a_few_schemas) joined by name: the rows and columns of one read of them all. */
static void read_in_parts(void **state)
{
	(void)state;
	create_in_parts("whole", "SELECT *", "", 0);
	create_in_parts("parts", "SELECT *", "", 7);
	assert_int_equal(query_i64("SELECT count(*) FROM parts"), NDEV);
	assert_int_equal(query_i64("SELECT count(*) FROM parts WHERE added_later = 42"), 1);
	assert_int_equal(differing_rows("whole", "parts"), 0);
	assert_int_equal(query_i64("SELECT count(*) FROM (SELECT column_name, data_type, "
				   "ordinal_position FROM information_schema.columns WHERE table_name "
				   "= 'whole' EXCEPT ALL SELECT column_name, data_type, "
				   "ordinal_position FROM information_schema.columns WHERE table_name "
				   "= 'parts')"), 0);
	assert_int_equal(query_i64("SELECT count(*) FROM information_schema.columns WHERE "
				   "table_name = 'parts' AND column_name = 'added_later'"), 1);
	/* a tail grouping by the member, applied to each part; no part table is left */
	create_in_parts("grouped", "SELECT profile, count(*) AS n", "GROUP BY ALL", 3);
	assert_int_equal(query_i64("SELECT count(*) FROM grouped WHERE n = 1"), NDEV);
	assert_int_equal(query_i64("SELECT count(*) FROM duckdb_tables() WHERE "
				   "table_name LIKE '%__part%'"), 0);
	exec("DROP TABLE whole; DROP TABLE parts; DROP TABLE grouped");
}

/* More schemas than groups: union_by_name over every file, the same rows. */
static void many_schemas(void **state)
{
	(void)state;
	for (int i = 0; i <= NX_PQ_UNION_GROUPS; i++) {
		char *cols = nx_xasprintf("*, %d AS extra_%d", i, i);

		write_summary(i, cols);
		free(cols);
	}
	assert_int_equal(groups_of(true, NDEV, "Summary"), 0);
	build_index();
	check_same_as_reference();
}

/* A member file that is not parquet: the index fails naming it, the published one stays. */
static void damaged_member(void **state)
{
	struct nx_err err = { 0 };
	char *path = member_file(true, 11, "Summary");
	static const char junk[] = "this is not a parquet file";

	(void)state;
	assert_int_equal(unlink(path), 0);
	assert_int_equal(nx_write_file_atomic(path, junk, strlen(junk), &err), 0);
	assert_int_equal(groups_of(true, NDEV, "Summary"), 0);
	assert_int_not_equal(nx_fleet_index(data, RUN, 10, &err), 0);
	assert_non_null(strstr(err.msg, "building the fleet index of run 'r'"));
	if (!strstr(err.msg, "r-d11-0000abcd@latest/Summary.parquet"))
		fail_msg("the damaged file is not named: %s", err.msg);
	check_same_as_reference();
	free(path);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(one_schema),
		cmocka_unit_test(a_few_schemas),
		cmocka_unit_test(read_in_parts),
		cmocka_unit_test(many_schemas),
		cmocka_unit_test(damaged_member),
	};
	return nx_test_done(cmocka_run_group_tests(tests, setup, teardown));
}
