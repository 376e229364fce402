/* SPDX-License-Identifier: MIT
 * test_server_resident.c: small tables copied into memory once read often
 * (server/resident.h). Which tables a statement names, from its SQL tokens; then on a
 * real DuckDB over real parquet files: the copy is made at the third read and holds
 * the same rows and column types as the view; a copy past the profile's memory
 * budget or past the per-table cap, a table past the row limit and a table whose file
 * is damaged stay views, with nothing left behind. Then through the real server: replies are the same before and after the
 * copy, tableSchema too, and a long query on the view runs to its right answer while
 * another connection makes the copy. */
#include "common/compat.h"
#include "server/resident.h"
#include "common/strbuf.h"
#include "server/server.h"
#include "helper/http_client.h"
#include "helper/server_fixture.h"

#include <fcntl.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include <jansson.h>

static void test_mask(void **state)
{
	struct nx_resident r;

	(void)state;
	nx__resident_init(&r, NX_RESIDENT_BUDGET);
	nx__resident_add(&r, "Summary", 1000);
	nx__resident_add(&r, "SchemaFields", 1000);
	nx__resident_add(&r, "Instruction", 1000);
	nx__resident_add(&r, "Big", NX_RESIDENT_FILE_BYTES + 1); /* too large: no candidate */
	assert_int_equal(r.n, 3);
	assert_int_equal(nx__resident_mask(&r, "SELECT * FROM Summary"), 1);
	assert_int_equal(nx__resident_mask(&r, "select total_time from summary"), 1);
	assert_int_equal(nx__resident_mask(&r, "SELECT * FROM \"Summary\""), 1);
	assert_int_equal(nx__resident_mask(&r, "SELECT * FROM main.Summary"), 1);
	assert_int_equal(nx__resident_mask(&r, "SELECT * FROM Summary s JOIN SchemaFields f "
					       "ON true"), 3);
	assert_int_equal(nx__resident_mask(&r, "SELECT count(*) FROM Instruction WHERE "
					       "opcode = 'it''s in Summary'"), 4);
	/* literals, comments and longer or shorter names are not the table */
	assert_int_equal(nx__resident_mask(&r, "SELECT 'Summary' AS s"), 0);
	assert_int_equal(nx__resident_mask(&r, "SELECT 1 -- FROM Summary\n"), 0);
	assert_int_equal(nx__resident_mask(&r, "SELECT 1 /* FROM Summary */"), 0);
	assert_int_equal(nx__resident_mask(&r, "SELECT * FROM SummaryX, xSummary, Summary2"), 0);
	assert_int_equal(nx__resident_mask(&r, "SELECT * FROM \"Sum\"\"mary\""), 0);
	assert_int_equal(nx__resident_mask(&r, "SELECT * FROM Big"), 0);
	/* unterminated literal or comment: the rest is skipped, nothing read past the end */
	assert_int_equal(nx__resident_mask(&r, "SELECT 'Summary"), 0);
	assert_int_equal(nx__resident_mask(&r, "SELECT 1 /* Summary"), 0);
	assert_int_equal(nx__resident_mask(&r, ""), 0);
	nx__resident_release(&r);

	/* at most NX_RESIDENT_MAX candidates, one bit each */
	nx__resident_init(&r, NX_RESIDENT_BUDGET);
	for (int i = 0; i < NX_RESIDENT_MAX + 5; i++) {
		char name[16];
		snprintf(name, sizeof(name), "T%d", i);
		nx__resident_add(&r, name, 10);
	}
	assert_int_equal(r.n, NX_RESIDENT_MAX);
	assert_true(nx__resident_mask(&r, "SELECT * FROM T63") == (uint64_t)1 << 63);
	assert_int_equal(nx__resident_mask(&r, "SELECT * FROM T64"), 0);
	nx__resident_release(&r);
}

/* A DuckDB with a view T over dir/T.parquet, written from `select`. */
struct db {
	duckdb_database db;
	duckdb_connection c;
	char *dir;
};

static void sql_ok(duckdb_connection c, const char *sql)
{
	duckdb_result res;

	if (duckdb_query(c, sql, &res) == DuckDBError)
		fail_msg("%s: %s", sql, duckdb_result_error(&res));
	duckdb_destroy_result(&res);
}

/* The first value of sql's result as text (caller frees), or NULL when it fails. */
static char *sql_text(duckdb_connection c, const char *sql)
{
	duckdb_result res;
	char *s = NULL, *v;

	if (duckdb_query(c, sql, &res) == DuckDBSuccess && duckdb_row_count(&res) > 0) {
		v = duckdb_value_varchar(&res, 0, 0);
		s = strdup(v ? v : "NULL");
		duckdb_free(v);
	}
	duckdb_destroy_result(&res);
	return s;
}

static void db_open(struct db *d, const char *tag, const char *select)
{
	char sql[1024];

	d->dir = nx_sfx_tmpdir(tag);
	assert_non_null(d->dir);
	assert_int_equal(duckdb_open(NULL, &d->db), DuckDBSuccess);
	assert_int_equal(duckdb_connect(d->db, &d->c), DuckDBSuccess);
	snprintf(sql, sizeof(sql), "COPY (%s) TO '%s/T.parquet' (FORMAT parquet)", select, d->dir);
	sql_ok(d->c, sql);
	snprintf(sql, sizeof(sql), "CREATE VIEW T AS SELECT * FROM read_parquet('%s/T.parquet')",
		 d->dir);
	sql_ok(d->c, sql);
}

static void db_close(struct db *d)
{
	duckdb_disconnect(&d->c);
	duckdb_close(&d->db);
	free(d->dir);
}

/* "VIEW" or "BASE TABLE" for T, and how many tables and views there are in all. */
static void assert_kind(struct db *d, const char *kind)
{
	char *k = sql_text(d->c, "SELECT table_type FROM information_schema.tables "
				 "WHERE table_name = 'T'");
	char *n = sql_text(d->c, "SELECT count(*) FROM information_schema.tables");

	assert_non_null(k);
	assert_string_equal(k, kind);
	assert_string_equal(n, "1"); /* no temporary copy left behind */
	free(k);
	free(n);
}

#define ROWS_MD5 "SELECT md5(string_agg(t::VARCHAR, '|' ORDER BY id)) FROM T t"
#define TYPES "SELECT string_agg(column_name || ' ' || column_type, ', ') FROM (DESCRIBE T)"

static const char rows_select[] =
	"SELECT i AS id, i * 0.5 AS x, 'name ' || i AS s, [i, i + 1] AS l,"
	" TIMESTAMP '2026-01-01' + INTERVAL (i) SECOND AS ts,"
	" CASE WHEN i % 3 = 0 THEN NULL ELSE i END AS maybe FROM range(100) r(i)";

static void test_copy_at_third_read(void **state)
{
	struct nx_resident r;
	struct db d;
	uint64_t mask;
	char *md5, *types, *s;

	(void)state;
	db_open(&d, "resident-copy", rows_select);
	md5 = sql_text(d.c, ROWS_MD5);
	types = sql_text(d.c, TYPES);
	nx__resident_init(&r, NX_RESIDENT_BUDGET);
	nx__resident_add(&r, "T", 4096);
	mask = nx__resident_mask(&r, "SELECT * FROM t");
	assert_int_equal(mask, 1);
	for (int i = 1; i < NX_RESIDENT_AFTER; i++) {
		nx__resident_read(&r, d.c, mask);
		assert_int_equal(nx__resident_state(&r, "T"), NX_RS_VIEW);
		assert_kind(&d, "VIEW");
	}
	nx__resident_read(&r, d.c, mask);
	assert_int_equal(nx__resident_state(&r, "T"), NX_RS_RESIDENT);
	assert_int_equal(nx__resident_copies(&r), 1);
	assert_kind(&d, "BASE TABLE");
	s = sql_text(d.c, ROWS_MD5);
	assert_string_equal(s, md5);
	free(s);
	s = sql_text(d.c, TYPES);
	assert_string_equal(s, types);
	free(s);
	/* later reads change nothing */
	nx__resident_read(&r, d.c, mask);
	assert_int_equal(nx__resident_copies(&r), 1);
	assert_kind(&d, "BASE TABLE");
	free(md5);
	free(types);
	nx__resident_release(&r);
	db_close(&d);
}

/* Reads T NX_RESIDENT_AFTER times under budget and checks it stayed a view with its rows. */
static void assert_stays_view(struct db *d, int64_t budget)
{
	struct nx_resident r;
	char *before = sql_text(d->c, "SELECT count(*) FROM T"), *after;

	nx__resident_init(&r, budget);
	nx__resident_add(&r, "T", 4096);
	for (int i = 0; i < NX_RESIDENT_AFTER + 1; i++)
		nx__resident_read(&r, d->c, 1);
	assert_int_equal(nx__resident_state(&r, "T"), NX_RS_STAYS_VIEW);
	assert_int_equal(nx__resident_copies(&r), 0);
	assert_kind(d, "VIEW");
	after = sql_text(d->c, "SELECT count(*) FROM T");
	if (before || after) {
		assert_non_null(before);
		assert_non_null(after);
		assert_string_equal(before, after);
	}
	/* the connection is usable: no transaction was left open */
	sql_ok(d->c, "BEGIN TRANSACTION");
	sql_ok(d->c, "COMMIT");
	free(before);
	free(after);
	nx__resident_release(&r);
}

static void test_over_budget_stays_view(void **state)
{
	struct db d;

	(void)state;
	db_open(&d, "resident-budget", rows_select);
	assert_stays_view(&d, 1); /* one byte: any copy is over */
	db_close(&d);
}

/* Over the per-table cap, though far under the profile's budget: 3,000 rows of 21
 * columns (DuckDB gives each column 256 KiB blocks past 2,048 rows: 5.6 MB, not even
 * tried), and 2,000 rows of 4 KB strings (8 MB, copied, measured and rolled back). */
static void test_large_in_memory_stays_view(void **state)
{
	struct db d;
	struct nx_strbuf sel = NX_STRBUF_INIT;

	(void)state;
	nx_strbuf_addstr(&sel, "SELECT i AS id");
	for (int k = 0; k < 20; k++)
		nx_strbuf_addf(&sel, ", i + %d AS c%d", k, k);
	nx_strbuf_addstr(&sel, " FROM range(3000) r(i)");
	db_open(&d, "resident-wide", sel.buf);
	assert_stays_view(&d, NX_RESIDENT_BUDGET);
	db_close(&d);
	nx_strbuf_release(&sel);
	db_open(&d, "resident-long",
		"SELECT i AS id, repeat(md5(i::VARCHAR), 128) AS s FROM range(2000) r(i)");
	assert_stays_view(&d, NX_RESIDENT_BUDGET);
	db_close(&d);
}

static void test_too_many_rows_stays_view(void **state)
{
	struct db d;
	char select[128];

	(void)state;
	snprintf(select, sizeof(select), "SELECT i AS id FROM range(%d) r(i)", NX_RESIDENT_ROWS + 1);
	db_open(&d, "resident-rows", select);
	assert_stays_view(&d, NX_RESIDENT_BUDGET);
	db_close(&d);
}

/* The footer is intact but the data pages are overwritten: DuckDB cannot read the rows,
 * so neither the view nor a copy can. The table stays a view, which fails as before. */
static void test_damaged_stays_view(void **state)
{
	struct db d;
	char path[512], junk[2048];
	struct stat st;
	duckdb_result res;
	int fd;

	(void)state;
	db_open(&d, "resident-damaged",
		"SELECT i AS id, md5(i::VARCHAR) AS s FROM range(20000) r(i)");
	snprintf(path, sizeof(path), "%s/T.parquet", d.dir);
	assert_int_equal(stat(path, &st), 0);
	memset(junk, 0x5a, sizeof(junk));
	fd = open(path, O_WRONLY);
	assert_true(fd >= 0);
	assert_int_equal(pwrite(fd, junk, sizeof(junk), st.st_size / 4), (ssize_t)sizeof(junk));
	close(fd);
	assert_int_equal(duckdb_query(d.c, "SELECT max(s) FROM T", &res), DuckDBError);
	duckdb_destroy_result(&res);
	assert_stays_view(&d, NX_RESIDENT_BUDGET);
	assert_int_equal(duckdb_query(d.c, "SELECT max(s) FROM T", &res), DuckDBError);
	duckdb_destroy_result(&res);
	db_close(&d);
}

/* Through the server. */
static unsigned port;

static char *reply(const char *sql)
{
	int status;
	json_t *j = nx_sfx_query(port, "k", sql, &status);
	char *s;

	assert_non_null(j);
	assert_int_equal(status, 200);
	s = json_dumps(j, JSON_SORT_KEYS);
	json_decref(j);
	return s;
}

static char *schema_reply(const char *table)
{
	struct nx_http_resp r;
	char body[128];
	char *s;

	snprintf(body, sizeof(body), "{\"type\":\"tableSchema\",\"tableName\":\"%s\"}", table);
	assert_int_equal(nx_http_post_json(port, "/api/v1/db/k/_search", body, &r), 0);
	assert_int_equal(r.status, 200);
	s = strdup(r.body);
	nx_http_resp_free(&r);
	return s;
}

static char *kind(const char *table)
{
	char sql[256];

	snprintf(sql, sizeof(sql), "SELECT table_type FROM information_schema.tables WHERE "
				   "table_name = '%s'", table);
	return reply(sql);
}

struct long_query {
	char *reply;
};

static void *run_long(void *arg)
{
	struct long_query *q = arg;
	int status;
	json_t *j = nx_sfx_query(port, "k", "SELECT sum(range % 7) AS n FROM "
				 "(SELECT * FROM DmaPacket LIMIT 1), range(60000000)",
				 &status);

	if (j && status == 200)
		q->reply = json_dumps(json_object_get(j, "rows"), 0);
	json_decref(j);
	return NULL;
}

static void test_through_server(void **state)
{
	static const char *queries[] = {
		"SELECT * FROM Summary",
		("SELECT engine, opcode, count(*) AS n, sum(duration_ns) AS d FROM Instruction "
		 "GROUP BY ALL ORDER BY ALL"),
		"SELECT * FROM Instruction ORDER BY id LIMIT 20",
	};
	char *dir = nx_sfx_tmpdir("resident-server");
	char *first[NX_ARRAY_SIZE(queries)], *schema, *s, *view, *table;
	struct nx_server_opts o;
	struct nx_server *srv;
	struct long_query lq = { 0 };
	pthread_t th;

	(void)state;
	assert_non_null(dir);
	assert_int_equal(nx_sfx_make_profile(dir, "k", 500), 0);
	nx_sfx_opts(&o, dir);
	assert_non_null(srv = nx_sfx_start(&o, &port));
	view = kind("Summary");
	schema = schema_reply("Instruction");
	for (size_t q = 0; q < NX_ARRAY_SIZE(queries); q++)
		first[q] = reply(queries[q]);
	for (int i = 0; i < NX_RESIDENT_AFTER + 1; i++)
		for (size_t q = 0; q < NX_ARRAY_SIZE(queries); q++) {
			s = reply(queries[q]);
			assert_string_equal(s, first[q]);
			free(s);
		}
	table = kind("Summary");
	assert_string_not_equal(view, table);
	assert_non_null(strstr(view, "VIEW"));
	assert_non_null(strstr(table, "BASE TABLE"));
	free(table);
	table = kind("Instruction"); /* two small files, one copy */
	assert_non_null(strstr(table, "BASE TABLE"));
	free(table);
	s = schema_reply("Instruction");
	assert_string_equal(s, schema);
	free(s);
	free(view);

	/* DmaPacket's second read is a long query; its third, on another connection,
	 * makes the copy while the long one runs on the view, and both answer right. */
	view = kind("DmaPacket");
	assert_non_null(strstr(view, "VIEW"));
	free(view);
	s = reply("SELECT count(*) AS n FROM DmaPacket");
	free(s);
	assert_int_equal(pthread_create(&th, NULL, run_long, &lq), 0);
	usleep(50 * 1000);
	for (int i = 0; i < NX_RESIDENT_AFTER; i++) {
		s = reply("SELECT count(*) AS n FROM DmaPacket");
		free(s);
	}
	table = kind("DmaPacket");
	assert_non_null(strstr(table, "BASE TABLE"));
	free(table);
	pthread_join(th, NULL);
	assert_non_null(lq.reply);
	assert_string_equal(lq.reply, "[[179999994]]"); /* 21 * 8571428 + 0+1+2+3 */
	free(lq.reply);

	for (size_t q = 0; q < NX_ARRAY_SIZE(queries); q++)
		free(first[q]);
	free(schema);
	nx_server_stop(srv);
	free(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_mask),
		cmocka_unit_test(test_copy_at_third_read),
		cmocka_unit_test(test_over_budget_stays_view),
		cmocka_unit_test(test_large_in_memory_stays_view),
		cmocka_unit_test(test_too_many_rows_stays_view),
		cmocka_unit_test(test_damaged_stays_view),
		cmocka_unit_test(test_through_server),
	};

	return nx_test_done(cmocka_run_group_tests(tests, NULL, NULL));
}
