/* SPDX-License-Identifier: MIT
 * test_server_sandbox.c: the query sandbox seen from a client. A corpus of
 * hostile statements must all be refused while the server keeps serving; a
 * runaway query must hit the timeout; oversized results must be cut. The server
 * runs with small limits so the tests are quick. */
#include "common/compat.h"
#include "server/server.h"
#include "db/duck.h"
#include "common/fsutil.h"
#include "helper/http_client.h"
#include "helper/server_fixture.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

#include "helper/asserts.h"
#include <jansson.h>
#include <pthread.h>

static char *data_dir;
static char *work_dir; /* the server's working directory, with a file in .tmp/ */
static char *k_dir;    /* the resolved directory of profile k */
static struct nx_server *srv;
static unsigned port;

static int setup(void **state)
{
	struct nx_server_opts o;
	char *path = NULL;
	FILE *f;

	(void)state;
	data_dir = nx_sfx_tmpdir("sandbox");
	work_dir = nx_sfx_tmpdir("sandbox-cwd");
	if (!data_dir || !work_dir || nx_sfx_make_profile(data_dir, "k", 2000) ||
	    nx_sfx_make_profile(data_dir, "other", 10))
		return -1;
	/* DuckDB's default spill directory is .tmp below the working directory, which it
	 * would also allow reading from */
	if (chdir(work_dir) != 0 || mkdir(".tmp", 0755) != 0 || !(f = fopen(".tmp/secret.txt", "w")))
		return -1;
	fputs("secret\n", f);
	fclose(f);
	if (asprintf(&path, "%s/profiles/global/k@latest", data_dir) < 0 ||
	    !(k_dir = realpath(path, NULL)))
		return -1;
	free(path);
	nx_sfx_opts(&o, data_dir);
	o.query_timeout_ms = 1500;
	o.max_result_rows = 500;
	o.max_result_bytes = 20000;
	if (!(srv = nx_sfx_start(&o, &port)))
		return -1;
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	nx_server_stop(srv);
	free(data_dir);
	free(work_dir);
	free(k_dir);
	return 0;
}

/* Sends one query for profile k; returns the parsed reply and its status. */
static json_t *query(const char *sql, int *status)
{
	json_t *j = nx_sfx_query(port, "k", sql, status);

	assert_non_null(j);
	return j;
}

static const char *error_code(json_t *j)
{
	return json_string_value(json_object_get(json_object_get(j, "error"), "code"));
}

static void test_hostile_corpus(void **state)
{
	char *sibling = NULL;
	static const char *const corpus[] = {
		"COPY (SELECT * FROM Instruction) TO '/tmp/nx-stolen.csv'",
		"COPY Summary TO 'Summary_copy.parquet' (FORMAT parquet)",
		"SELECT * FROM read_csv('/etc/passwd')",
		"SELECT * FROM read_csv_auto('/etc/passwd')",
		"SELECT * FROM read_text('/etc/hostname')",
		"SELECT * FROM read_blob('/etc/passwd')",
		"SELECT * FROM read_parquet('../other@latest/Summary.parquet')",
		"SELECT * FROM read_json('/proc/self/environ')",
		"SELECT * FROM glob('/*')",
		"SELECT * FROM sniff_csv('/etc/passwd')",
		"SELECT * FROM '/etc/passwd'",
		"ATTACH '/tmp/nx-evil.db' AS evil",
		"ATTACH ':memory:' AS m",
		"DETACH memory",
		"INSTALL httpfs",
		"LOAD httpfs",
		"FORCE INSTALL httpfs FROM 'http://example.invalid'",
		"PRAGMA enable_profiling",
		"PRAGMA threads=1",
		"SET enable_external_access = true",
		"SET allowed_directories = ['/']",
		"RESET lock_configuration",
		"SELECT 1; DROP VIEW Summary",
		"SELECT 1; SELECT 2",
		"DROP VIEW Summary",
		"CREATE TABLE t AS SELECT 1",
		"CREATE VIEW v AS SELECT 1",
		"CREATE MACRO m(x) AS x",
		"CREATE SECRET s (TYPE s3, KEY_ID 'a', SECRET 'b')",
		"INSERT INTO Summary VALUES (1)",
		"EXPORT DATABASE '/tmp/nx-export'",
		"CALL pragma_version()",
		"EXPLAIN ANALYZE SELECT 1",
		"CHECKPOINT",
		"BEGIN TRANSACTION",
		"USE memory",
		"SELECT * FROM query('DROP VIEW Summary')",
		"SELECT * FROM query_table('/etc/passwd')",
		/* every table function that opens a file */
		"SELECT * FROM parquet_metadata('/etc/passwd')",
		"SELECT * FROM parquet_schema('/etc/passwd')",
		"SELECT * FROM parquet_file_metadata('/etc/passwd')",
		"SELECT * FROM parquet_kv_metadata('/etc/passwd')",
		"SELECT * FROM parquet_bloom_probe('/etc/passwd', 'a', 1)",
		"SELECT * FROM read_json_objects('/etc/passwd')",
		"SELECT * FROM read_ndjson_objects('/etc/passwd')",
		"SELECT * FROM read_ndjson('/etc/passwd')",
		"SELECT * FROM read_json_auto('/etc/passwd')",
		/* other spellings of a path outside */
		"SELECT * FROM read_text('file:///etc/passwd')",
		"SELECT * FROM read_text('~/.bashrc')",
		"SELECT * FROM read_text('/proc/self/cwd/.tmp/secret.txt')",
		"SELECT * FROM read_text('.tmp/secret.txt')",
		"SELECT * FROM read_text('secret.txt')",
		"SELECT * FROM glob('*')",
		"SELECT * FROM glob('.tmp/*')",
		/* the network and extensions */
		"SELECT * FROM read_csv('http://127.0.0.1:1/x.csv')",
		"SELECT * FROM read_parquet('s3://bucket/x.parquet')",
		"INSTALL '/tmp/x.duckdb_extension'",
		"LOAD '/tmp/x.duckdb_extension'",
		"ATTACH 'md:'",
		"COPY Summary TO '.tmp/out.csv'",
		"COPY (SELECT 1) TO 'STDOUT'",
		/* settings that would reopen a door */
		"SET temp_directory = '/tmp'",
		"SET home_directory = '/'",
		"SET file_search_path = '/etc'",
		"RESET allowed_directories",
		"SELECT set_config('allowed_directories', '/')",
		"SELECT getenv('HOME')",
		"PRAGMA memory_limit = '1GB'",
		"CALL enable_logging()",
	};
	int status;
	json_t *j;

	(void)state;
	NX_ASSERT_CMP(asprintf(&sibling, "SELECT * FROM read_parquet('%s/profiles/global/other@latest/"
				       "Summary.parquet')", data_dir), >, 0);
	for (size_t i = 0; i <= NX_ARRAY_SIZE(corpus); i++) {
		const char *sql = i < NX_ARRAY_SIZE(corpus) ? corpus[i] : sibling;

		j = query(sql, &status);
		if (status < 400 || !error_code(j))
			fail_msg("'%s' was not refused (status %d)", sql, status);
		json_decref(j);
	}
	free(sibling);
	/* The same through the absolute paths of the working directory's .tmp/ and of a
	 * parent of the profile directory. */
	NX_ASSERT_CMP(asprintf(&sibling, "SELECT * FROM read_text('%s/.tmp/secret.txt')", work_dir),
		      >, 0);
	j = query(sibling, &status);
	assert_int_equal(status, 403);
	json_decref(j);
	free(sibling);
	NX_ASSERT_CMP(asprintf(&sibling, "SELECT * FROM glob('%s/../*')", k_dir), >, 0);
	j = query(sibling, &status);
	assert_int_equal(status, 403);
	json_decref(j);
	free(sibling);
	/* Nothing was written and the views are all still there. */
	assert_int_not_equal(access("/tmp/nx-stolen.csv", F_OK), 0);
	j = query("SELECT COUNT(*) FROM Summary", &status);
	assert_int_equal(status, 200);
	json_decref(j);
	j = query("SELECT current_setting('enable_external_access')", &status);
	assert_int_equal(status, 200);
	assert_true(json_is_false(json_array_get(json_array_get(json_object_get(j, "rows"), 0), 0)));
	json_decref(j);
}

/* The sandbox's settings as a query sees them: files can be read below the profile's
 * own directory and the database's private folder (its slices, and what it spills below
 * it: $TMPDIR/nx-serve-slices-X/spill) and nowhere else (not DuckDB's default spill
 * directory .tmp/ below the working directory), and no setting names another directory
 * of the machine. */
static void test_settings_name_only_the_profile(void **state)
{
	char *want = NULL, *scratch = NULL;
	const char *spill;
	json_t *j, *row;
	int status;
	size_t i;

	(void)state;
	j = query("SELECT current_setting('allowed_directories')::VARCHAR, "
		  "current_setting('allowed_paths')::VARCHAR, current_setting('temp_directory'), "
		  "current_setting('home_directory'), current_setting('secret_directory'), "
		  "current_setting('enable_external_access'), "
		  "current_setting('lock_configuration')", &status);
	assert_int_equal(status, 200);
	row = json_array_get(json_object_get(j, "rows"), 0);
	spill = json_string_value(json_array_get(row, 2));
	assert_non_null(strstr(spill, "/nx-serve-slices-"));
	assert_true(strlen(spill) > 6 && !strcmp(spill + strlen(spill) - 6, "/spill"));
	scratch = strndup(spill, strlen(spill) - 6);
	/* DuckDB lists them sorted: the folder below TMPDIR, its spill, the profile */
	NX_ASSERT_CMP(asprintf(&want, "[%s/, %s/, %s/]", scratch, spill, k_dir), >, 0);
	assert_string_equal(json_string_value(json_array_get(row, 0)), want);
	assert_string_equal(json_string_value(json_array_get(row, 1)), "[]");
	assert_string_equal(json_string_value(json_array_get(row, 3)), k_dir);
	assert_string_equal(json_string_value(json_array_get(row, 4)), "");
	assert_true(json_is_false(json_array_get(row, 5)));
	assert_true(json_is_true(json_array_get(row, 6)));
	json_decref(j);
	/* every setting that holds a path: the profile's own, or the time zone's name */
	j = query("SELECT name, value FROM duckdb_settings() WHERE value LIKE '%/%' ORDER BY name",
		  &status);
	assert_int_equal(status, 200);
	json_array_foreach(json_object_get(j, "rows"), i, row) {
		const char *name = json_string_value(json_array_get(row, 0));
		const char *value = json_string_value(json_array_get(row, 1));

		if (!strcmp(name, "TimeZone"))
			continue;
		if (strcmp(name, "allowed_directories") && strcmp(name, "home_directory") &&
		    strcmp(name, "temp_directory"))
			fail_msg("setting %s names a path: %s", name, value);
		if (!strstr(value, k_dir) && !strstr(value, scratch))
			fail_msg("setting %s names another directory: %s", name, value);
	}
	json_decref(j);
	/* nothing DuckDB derives from the home directory fails naming it */
	j = query("SELECT count(*) FROM duckdb_extensions()", &status);
	assert_int_equal(status, 200);
	json_decref(j);
	free(scratch);
	free(want);
}

/* Runs sql on profile name and expects a 403 whose message contains want. */
static void refused(const char *name, const char *sql, const char *want)
{
	int status;
	json_t *j = nx_sfx_query(port, name, sql, &status);
	const char *msg;

	assert_non_null(j);
	msg = json_string_value(json_object_get(json_object_get(j, "error"), "message"));
	if (status != 403 || !msg || !strstr(msg, want))
		fail_msg("%s on %s: status %d, message %s (wanted 403 naming '%s')", sql, name,
			 status, msg ? msg : "none", want);
	json_decref(j);
}

static int served(const char *name)
{
	int status;
	json_t *j = nx_sfx_query(port, name, "SELECT count(*) FROM Summary", &status);

	json_decref(j);
	return status;
}

/* DuckDB's allowed_directories compares path prefixes, so a link inside a profile
 * directory would lead out of it: a profile holding one (or a FIFO, or a device) is
 * refused, for SQL and for downloads alike, also when it appears after the profile was
 * opened, in its directory or in a subdirectory; once it is gone, the profile is
 * served again. */
static void test_links_refuse_the_profile(void **state)
{
	static const char *const via[] = { "read_text", "read_csv", "read_blob", "read_parquet",
					   "glob" };
	char *dir = NULL, *link = NULL, *sub = NULL, *sql = NULL, *outside = NULL;
	struct nx_http_resp r;

	(void)state;
	assert_int_equal(nx_sfx_make_profile(data_dir, "linked", 10), 0);
	NX_ASSERT_CMP(asprintf(&dir, "%s/profiles/global/linked@latest", data_dir), >, 0);
	NX_ASSERT_CMP(asprintf(&outside, "%s/profiles/global/other@latest/Summary.parquet",
			       data_dir), >, 0);
	assert_int_equal(served("linked"), 200); /* opened before the link appears */
	NX_ASSERT_CMP(asprintf(&link, "%s/Summary2.parquet", dir), >, 0);
	assert_int_equal(symlink(outside, link), 0);
	for (size_t i = 0; i < NX_ARRAY_SIZE(via); i++) {
		free(sql);
		NX_ASSERT_CMP(asprintf(&sql, "SELECT * FROM %s('%s')", via[i], link), >, 0);
		refused("linked", sql, "symbolic link, 'Summary2.parquet'");
	}
	refused("linked", "SELECT * FROM Summary", "symbolic link");
	assert_int_equal(nx_http_get(port, "/api/v1/profiles/namespace/global/profile_name/linked/"
				     "fs/Summary.parquet", &r), 0);
	assert_int_equal(r.status, 403);
	assert_non_null(strstr(r.body, "symbolic link"));
	nx_http_resp_free(&r);
	assert_int_equal(unlink(link), 0);
	assert_int_equal(served("linked"), 200);

	/* below a subdirectory, which the profile had when it was opened */
	NX_ASSERT_CMP(asprintf(&sub, "%s/sub", dir), >, 0);
	assert_int_equal(mkdir(sub, 0755), 0);
	assert_int_equal(served("linked"), 200);
	free(link);
	NX_ASSERT_CMP(asprintf(&link, "%s/sub/x.txt", dir), >, 0);
	assert_int_equal(symlink("/etc/passwd", link), 0);
	free(sql);
	NX_ASSERT_CMP(asprintf(&sql, "SELECT * FROM read_text('%s')", link), >, 0);
	refused("linked", sql, "'sub/x.txt'");
	assert_int_equal(unlink(link), 0);
	assert_int_equal(served("linked"), 200);
	/* a link to a directory, and a FIFO, which would block its reader */
	assert_int_equal(symlink("/etc", link), 0);
	refused("linked", "SELECT 1", "symbolic link");
	assert_int_equal(unlink(link), 0);
	assert_int_equal(mkfifo(link, 0644), 0);
	refused("linked", "SELECT 1", "neither a regular file nor a directory");
	assert_int_equal(unlink(link), 0);
	assert_int_equal(served("linked"), 200);
	free(dir);
	free(link);
	free(sub);
	free(sql);
	free(outside);
}

static void test_refusal_codes(void **state)
{
	int status;
	json_t *j;

	(void)state;
	j = query("SELECT 1; DROP VIEW Summary", &status);
	assert_int_equal(status, 403);
	assert_string_equal(error_code(j), "query_not_allowed");
	json_decref(j);
	j = query("SELECT * FROM read_csv('/etc/passwd')", &status);
	assert_int_equal(status, 403);
	assert_string_equal(error_code(j), "query_not_allowed");
	json_decref(j);
	j = query("SET threads = 1", &status);
	assert_int_equal(status, 403);
	json_decref(j);
	j = query("   ", &status);
	assert_int_equal(status, 400);
	json_decref(j);
	/* an error met while the query runs: DuckDB's cause, not its wrapper */
	j = query("SELECT sum(x) FROM (SELECT 9223372036854775807 - 10 + id AS x FROM "
		  "Instruction WHERE id < 100)", &status);
	assert_int_equal(status, 400);
	assert_string_equal(error_code(j), "query_error");
	assert_null(strstr(json_string_value(json_object_get(json_object_get(j, "error"),
							   "message")), "Attempting to execute"));
	assert_non_null(strstr(json_string_value(json_object_get(json_object_get(j, "error"),
								 "message")), "Overflow"));
	json_decref(j);
	j = query("SELECT '1'::BIT", &status);
	assert_int_equal(status, 400);
	assert_string_equal(error_code(j), "unsupported_type");
	json_decref(j);
}

static void test_timeout(void **state)
{
	struct timespec t0, t1;
	int status;
	json_t *j;

	(void)state;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	j = query("SELECT COUNT(*) FROM range(1000000000) a, range(1000000000) b", &status);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	assert_int_equal(status, 504);
	assert_string_equal(error_code(j), "query_timeout");
	json_decref(j);
	NX_ASSERT_CMP(t1.tv_sec - t0.tv_sec, <, 20);
	/* Also a query that is still streaming rows when the deadline passes. */
	j = query("SELECT a.range FROM range(100000000) a WHERE a.range * 7 % 1000003 = 0 "
		  "AND hash(a.range) % 2 = 5", &status);
	assert_true(status == 504 || status == 200);
	json_decref(j);
	j = query("SELECT 42", &status);
	assert_int_equal(status, 200);
	json_decref(j);
}

/* What the close hook saw in each DuckDB database the analysis opened. */
static struct {
	pthread_mutex_t lock;
	char *outside; /* a readable file outside every profile directory */
	const char *allowed; /* LIKE pattern of the one directory a database may read */
	int closed, external_on, outside_read, other_dirs;
	char *spill[4]; /* the databases' spill directories */
} seen = { .lock = PTHREAD_MUTEX_INITIALIZER };

/* The first cell's text into *(char **)arg. */
static void keep_text(void *arg, size_t row, const char *column, int kind, const char *text)
{
	char **out = arg;

	(void)column;
	if (!row && !*out && kind == NX_CELL_TEXT)
		*out = strdup(text);
}

static void on_duck_close(void *arg, struct nx_duck *d)
{
	struct nx_strbuf sql = NX_STRBUF_INIT;
	struct nx_err err = { 0 };
	int64_t ext = 1, n = 0, one_dir = 0;
	bool read_ok;

	(void)arg;
	if (nx_duck_query_i64(d, "SELECT current_setting('enable_external_access')::INT", &ext,
			      &err))
		ext = 1;
	/* the profile's directory, and the analysis's private spill directory, which DuckDB
	 * adds to the allowed ones: nothing else */
	nx_strbuf_addstr(&sql, "SELECT (len(current_setting('allowed_directories')) = 2 AND "
			       "len(list_filter(current_setting('allowed_directories'), "
			       "x -> x LIKE ");
	nx_sql_quote(&sql, seen.allowed);
	nx_strbuf_addstr(&sql, ")) = 1 AND current_setting('temp_directory') LIKE "
			       "'/%/nx-recommend-spill-%' AND list_contains("
			       "current_setting('allowed_directories'), "
			       "current_setting('temp_directory') || '/'))::INT");
	if (nx_duck_query_i64(d, sql.buf, &one_dir, &err))
		one_dir = 0;
	nx_strbuf_reset(&sql);
	nx_strbuf_addstr(&sql, "SELECT current_setting('temp_directory')");
	pthread_mutex_lock(&seen.lock);
	if (seen.closed < 4)
		nx_duck_query_cells(d, sql.buf, keep_text, &seen.spill[seen.closed], &err);
	pthread_mutex_unlock(&seen.lock);
	nx_strbuf_reset(&sql);
	nx_strbuf_addstr(&sql, "SELECT count(*) FROM read_text(");
	nx_sql_quote(&sql, seen.outside);
	nx_strbuf_addstr(&sql, ")");
	read_ok = !nx_duck_query_i64(d, sql.buf, &n, &err);
	nx_strbuf_release(&sql);
	pthread_mutex_lock(&seen.lock);
	seen.closed++;
	seen.external_on += ext != 0;
	seen.outside_read += read_ok;
	seen.other_dirs += !one_dir;
	pthread_mutex_unlock(&seen.lock);
}

/* GET .../analysis runs our own SQL, yet in the same sandbox as _search: the databases
 * it opens have external access off, may read one profile's directory only and cannot
 * read a file outside it; DuckDB spills into a private directory of the analysis, gone
 * once the reply is out. */
static void test_analysis_sandboxed(void **state)
{
	struct nx_http_resp r;
	char *global = NULL, *pattern = NULL;
	json_t *j;
	FILE *f;

	(void)state;
	NX_ASSERT_CMP(asprintf(&pattern, "%s/profiles/global", data_dir), >, 0);
	global = realpath(pattern, NULL);
	assert_non_null(global);
	free(pattern);
	NX_ASSERT_CMP(asprintf(&pattern, "%s/%%@latest/", global), >, 0);
	seen.allowed = pattern;
	NX_ASSERT_CMP(asprintf(&seen.outside, "%s/outside.txt", data_dir), >, 0);
	f = fopen(seen.outside, "w");
	assert_non_null(f);
	fputs("secret\n", f);
	fclose(f);
	nx__duck_set_close_hook(on_duck_close, NULL);
	assert_int_equal(nx_http_get(port, "/api/v1/profiles/namespace/global/profile_name/k/"
				     "analysis?compare=other", &r), 0);
	nx__duck_set_close_hook(NULL, NULL);
	if (r.status != 200)
		fail_msg("analysis answered %d: %.300s", r.status, r.body);
	j = json_loads(r.body, 0, NULL);
	assert_non_null(j);
	assert_string_equal(json_string_value(json_object_get(j, "kind")), "recommend_compare");
	json_decref(j);
	nx_http_resp_free(&r);
	assert_int_equal(seen.closed, 2); /* one database per compared profile */
	assert_int_equal(seen.external_on, 0);
	assert_int_equal(seen.outside_read, 0);
	assert_int_equal(seen.other_dirs, 0);
	for (int k = 0; k < 2; k++) {
		assert_non_null(seen.spill[k]);
		assert_false(nx_is_dir(seen.spill[k]));
		free(seen.spill[k]);
		seen.spill[k] = NULL;
	}
	free(seen.outside);
	free(pattern);
	free(global);
}

static json_t *get_report(const char *args, int want)
{
	struct nx_http_resp r;
	char path[256];
	json_t *j;

	snprintf(path, sizeof(path), "/api/v1/profiles/namespace/global/profile_name/k/analysis%s",
		 args);
	assert_int_equal(nx_http_get(port, path, &r), 0);
	if (r.status != want)
		fail_msg("%s answered %d: %.300s", path, r.status, r.body);
	j = json_loads(r.body, 0, NULL);
	assert_non_null(j);
	nx_http_resp_free(&r);
	return j;
}

/* part=bounds: the same bounds and bottleneck as the whole analysis, no findings, the same
 * reply again (kept), and the same bounds over a window; other
 * parts and part=bounds with Markdown or a comparison are refused. */
static void test_analysis_bounds_part(void **state)
{
	json_t *all = get_report("", 200), *b = get_report("?part=bounds", 200);
	json_t *ra = json_object_get(all, "report"), *rb = json_object_get(b, "report");

	(void)state;
	assert_string_equal(json_string_value(json_object_get(rb, "part")), "bounds");
	assert_null(json_object_get(rb, "findings"));
	assert_non_null(json_object_get(ra, "findings"));
	assert_true(json_equal(json_object_get(ra, "bottleneck"), json_object_get(rb, "bottleneck")));
	assert_true(json_equal(json_object_get(ra, "bounds"), json_object_get(rb, "bounds")));
	assert_true(json_equal(json_object_get(ra, "engines"), json_object_get(rb, "engines")));
	json_decref(all);
	all = get_report("?part=bounds", 200); /* kept with the profile version */
	assert_true(json_equal(all, b));
	json_decref(all);
	json_decref(b);
	/* with a window the bounds come from the raw tables: the passes run for them */
	all = get_report("?window=0:1000000000000000000", 200);
	b = get_report("?part=bounds&window=0:1000000000000000000", 200);
	ra = json_object_get(all, "report");
	rb = json_object_get(b, "report");
	assert_true(json_equal(json_object_get(ra, "bounds"), json_object_get(rb, "bounds")));
	assert_true(json_equal(json_object_get(ra, "engines"), json_object_get(rb, "engines")));
	json_decref(all);
	json_decref(b);
	json_decref(get_report("?part=findings", 400));
	json_decref(get_report("?part=bounds&format=markdown", 400));
	json_decref(get_report("?part=bounds&compare=other", 400));
}

static void test_caps(void **state)
{
	int status;
	json_t *j;

	(void)state;
	j = query("SELECT * FROM range(100000)", &status);
	assert_int_equal(status, 200);
	assert_true(json_is_true(json_object_get(j, "truncated")));
	assert_int_equal(json_integer_value(json_object_get(j, "row_count")), 500);
	assert_int_equal(json_array_size(json_object_get(j, "rows")), 500);
	assert_non_null(strstr(json_string_value(json_object_get(j, "message")), "500-row"));
	json_decref(j);
	j = query("SELECT repeat('x', 1000) FROM range(100)", &status);
	assert_int_equal(status, 200);
	assert_true(json_is_true(json_object_get(j, "truncated")));
	NX_ASSERT_CMP(json_array_size(json_object_get(j, "rows")), <, 20);
	assert_non_null(strstr(json_string_value(json_object_get(j, "message")), "byte"));
	json_decref(j);
	j = query("SELECT * FROM range(500)", &status);
	assert_false(json_is_true(json_object_get(j, "truncated")));
	assert_int_equal(json_integer_value(json_object_get(j, "row_count")), 500);
	json_decref(j);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_hostile_corpus),
		cmocka_unit_test(test_settings_name_only_the_profile),
		cmocka_unit_test(test_links_refuse_the_profile),
		cmocka_unit_test(test_refusal_codes),
		cmocka_unit_test(test_timeout),
		cmocka_unit_test(test_caps),
		cmocka_unit_test(test_analysis_sandboxed),
		cmocka_unit_test(test_analysis_bounds_part),
	};

	return nx_test_done(cmocka_run_group_tests_name("server_sandbox", tests, setup, teardown));
}
