/* SPDX-License-Identifier: MIT
 * test_server_api.c: end-to-end tests of the HTTP API server: a real server on a
 * free loopback port, real parquet profiles written by DuckDB, and a plain TCP
 * client. Covers every endpoint once for success and once per error class, the
 * seed workflows' requests verbatim, the int64 > 2^53 rule, and profiles that
 * appear or are replaced while the server runs. */
#include "common/compat.h"
#include "server/server.h"
#include "helper/http_client.h"
#include "helper/fixture.h"
#include "helper/server_fixture.h"
#include "neff/tar.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

#include "helper/asserts.h"
#include <jansson.h>

static char *data_dir;
static struct nx_server *srv;
static unsigned port;

static int setup(void **state)
{
	struct nx_server_opts o;

	(void)state;
	data_dir = nx_sfx_tmpdir("api");
	if (!data_dir || nx_sfx_make_profile(data_dir, "my-kernel", 1000))
		return -1;
	nx_sfx_opts(&o, data_dir);
	if (!(srv = nx_sfx_start(&o, &port)))
		return -1;
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	nx_server_stop(srv);
	free(data_dir);
	return 0;
}

/* Parses the reply body as JSON; fails the test when it is not. */
static json_t *body_json(const struct nx_http_resp *r)
{
	json_error_t je;
	json_t *j = json_loads(r->body ? r->body : "", 0, &je);

	if (!j)
		fail_msg("reply is not JSON (%s): %.300s", je.text, r->body ? r->body : "");
	return j;
}

/* Posts to /api/v1/db/<profile>/_search and checks the status. */
static json_t *search(const char *profile, const char *body, int want_status)
{
	struct nx_http_resp r;
	char path[256];
	json_t *j;

	snprintf(path, sizeof(path), "/api/v1/db/%s/_search", profile);
	assert_int_equal(nx_http_post_json(port, path, body, &r), 0);
	if (r.status != want_status)
		fail_msg("status %d (wanted %d): %.500s", r.status, want_status, r.body);
	j = body_json(&r);
	nx_http_resp_free(&r);
	return j;
}

static void assert_error(json_t *j, const char *code)
{
	json_t *e = json_object_get(j, "error");

	assert_non_null(e);
	assert_string_equal(json_string_value(json_object_get(e, "code")), code);
	NX_ASSERT_CMP(strlen(json_string_value(json_object_get(e, "message"))), >, 10);
}

static json_t *get_json(const char *path, int want_status)
{
	struct nx_http_resp r;
	json_t *j;

	assert_int_equal(nx_http_get(port, path, &r), 0);
	if (r.status != want_status)
		fail_msg("GET %s: status %d (wanted %d): %.300s", path, r.status, want_status,
			 r.body);
	j = body_json(&r);
	nx_http_resp_free(&r);
	return j;
}

static void test_health(void **state)
{
	struct nx_http_resp r;
	char ct[128];

	(void)state;
	assert_int_equal(nx_http_get(port, "/api/v1/health", &r), 0);
	assert_int_equal(r.status, 200);
	assert_non_null(strstr(r.body, "healthy"));
	assert_true(nx_http_header(&r, "Content-Type", ct, sizeof(ct)));
	assert_string_equal(ct, "application/json");
	assert_false(nx_http_header(&r, "Access-Control-Allow-Origin", ct, sizeof(ct)));
	nx_http_resp_free(&r);
}

static void test_not_found_and_method(void **state)
{
	struct nx_http_resp r;
	char allow[64];
	json_t *j;

	(void)state;
	j = get_json("/api/v1/nothing", 404);
	assert_error(j, "not_found");
	json_decref(j);
	assert_int_equal(nx_http_request(port, "DELETE", "/api/v1/health", NULL, NULL, NULL, 0, &r),
			 0);
	assert_int_equal(r.status, 405);
	assert_true(nx_http_header(&r, "Allow", allow, sizeof(allow)));
	assert_string_equal(allow, "GET");
	nx_http_resp_free(&r);
	/* GET on the search route: it exists, but only for POST. */
	j = get_json("/api/v1/db/my-kernel/_search", 405);
	assert_error(j, "method_not_allowed");
	json_decref(j);
}

/* The seed workflows' bodies, exactly as their curl commands send them. */
static void test_seed_queries(void **state)
{
	json_t *j, *rows;

	(void)state;
	j = search("my-kernel",
		   "{\"type\":\"databaseExplorerQuery\",\"tableName\":\"Summary\",\"query\":\"SELECT "
		   "total_time, mfu_estimated_percent, tensor_engine_active_time_percent, "
		   "dma_active_time_percent FROM Summary\"}", 200);
	assert_int_equal(json_integer_value(json_object_get(j, "row_count")), 1);
	json_decref(j);

	j = search("my-kernel",
		   "{\"type\":\"databaseExplorerQuery\",\"tableName\":\"Summary\",\"query\":\"SELECT "
		   "total_time, mfu_estimated_percent, tensor_engine_active_time_percent, "
		   "vector_engine_active_time_percent, dma_active_time_percent, hbm_read_bytes, "
		   "hbm_write_bytes FROM Summary\"}", 200);
	rows = json_object_get(j, "rows");
	assert_int_equal(json_array_size(json_object_get(j, "columns")), 7);
	assert_string_equal(json_string_value(json_object_get(
				    json_array_get(json_object_get(j, "columns"), 5), "type")),
			    "BIGINT");
	NX_ASSERT_CMP(json_real_value(json_array_get(json_array_get(rows, 0), 0)), ==, 1234.5);
	assert_int_equal(json_integer_value(json_array_get(json_array_get(rows, 0), 5)), 1048576);
	assert_false(json_is_true(json_object_get(j, "truncated")));
	json_decref(j);

	j = search("my-kernel",
		   "{\"type\":\"databaseExplorerQuery\",\"tableName\":\"Instruction\",\"query\":\"SELECT "
		   "engine, opcode, COUNT(*) as cnt, SUM(duration_ns) as total_dur_ns, "
		   "SUM(evt_wait_time_ns) as total_evt_wait_ns FROM Instruction GROUP BY engine, "
		   "opcode ORDER BY total_dur_ns DESC\"}", 200);
	rows = json_object_get(j, "rows");
	assert_int_equal(json_array_size(rows), 25);
	/* Both halves of the split table are read: the counts add up to 1000. */
	json_int_t total = 0;
	for (size_t i = 0; i < json_array_size(rows); i++)
		total += json_integer_value(json_array_get(json_array_get(rows, i), 2));
	assert_int_equal(total, 1000);
	json_decref(j);

	j = search("my-kernel",
		   "{\"type\":\"databaseExplorerQuery\",\"tableName\":\"Instruction\",\"query\":\"SELECT "
		   "bir_debug_info_source_location, engine, opcode, COUNT(*) as cnt, SUM(duration_ns) "
		   "as total_dur_ns FROM Instruction WHERE bir_debug_info_source_location IS NOT NULL "
		   "GROUP BY bir_debug_info_source_location, engine, opcode ORDER BY total_dur_ns "
		   "DESC LIMIT 10\"}", 200);
	assert_int_equal(json_array_size(json_object_get(j, "rows")), 10);
	assert_non_null(strstr(json_string_value(json_array_get(
				       json_array_get(json_object_get(j, "rows"), 0), 0)),
			       "kernel.py:"));
	json_decref(j);

	/* Shell quoting leaves a raw line break inside the JSON string here. */
	j = search("my-kernel",
		   "{\"type\":\"databaseExplorerQuery\",\"tableName\":\"SchemaFields\",\n"
		   "\"query\":\"SELECT table_name, field_name, field_description, field_unit\n"
		   "FROM SchemaFields WHERE field_name ILIKE '%matmul%'\"}", 200);
	assert_int_equal(json_array_size(json_object_get(j, "rows")), 0);
	json_decref(j);
	j = search("my-kernel",
		   "{\"type\":\"databaseExplorerQuery\",\"tableName\":\"SchemaFields\",\n"
		   "\"query\":\"SELECT table_name, field_name, field_description, field_unit\n"
		   "FROM SchemaFields WHERE field_description ILIKE '%matmul%'\"}", 200);
	assert_int_equal(json_array_size(json_object_get(j, "rows")), 2);
	json_decref(j);

	j = search("my-kernel",
		   "{\"type\":\"databaseExplorerQuery\",\"tableName\":\"DmaPacket\",\"query\":\"SELECT "
		   "COUNT(*) as cnt FROM DmaPacket\"}", 200);
	assert_int_equal(json_integer_value(json_array_get(
				 json_array_get(json_object_get(j, "rows"), 0), 0)), 25);
	json_decref(j);
}

static void test_int64_as_string(void **state)
{
	json_t *j, *row;

	(void)state;
	j = search("my-kernel",
		   "{\"type\":\"databaseExplorerQuery\",\"query\":\"SELECT id, id - 9007199254740000 "
		   "AS small, 'NaN'::DOUBLE AS nan, stack_frame_ids FROM Instruction WHERE id > "
		   "9000000000000000\"}", 200);
	row = json_array_get(json_object_get(j, "rows"), 0);
	assert_string_equal(json_string_value(json_array_get(row, 0)), "9007199254740993");
	assert_int_equal(json_integer_value(json_array_get(row, 1)), 993);
	assert_true(json_is_null(json_array_get(row, 2)));
	assert_true(json_is_array(json_array_get(row, 3)));
	json_decref(j);
	/* Exactly 2^53 is still exact in a double, one more is not. */
	j = search("my-kernel",
		   "{\"type\":\"databaseExplorerQuery\",\"query\":\"SELECT 9007199254740992::BIGINT, "
		   "-9007199254740993::BIGINT, 18446744073709551615::UBIGINT, "
		   "170141183460469231731687303715884105727::HUGEINT\"}", 200);
	row = json_array_get(json_object_get(j, "rows"), 0);
	assert_true(json_is_integer(json_array_get(row, 0)));
	assert_string_equal(json_string_value(json_array_get(row, 1)), "-9007199254740993");
	assert_string_equal(json_string_value(json_array_get(row, 2)), "18446744073709551615");
	assert_string_equal(json_string_value(json_array_get(row, 3)),
			    "170141183460469231731687303715884105727");
	json_decref(j);
}

static void test_list_db_files(void **state)
{
	json_t *j, *tables, *inst = NULL;

	(void)state;
	j = search("my-kernel", "{\"type\": \"listDbFiles\"}", 200);
	tables = json_object_get(j, "tables");
	assert_int_equal(json_array_size(tables), 4);
	for (size_t i = 0; i < json_array_size(tables); i++)
		if (!strcmp(json_string_value(json_object_get(json_array_get(tables, i), "name")),
			    "Instruction"))
			inst = json_array_get(tables, i);
	assert_non_null(inst);
	assert_int_equal(json_array_size(json_object_get(inst, "files")), 2);
	/* each table's rows, from its files' footers, are its count(*) */
	for (size_t i = 0; i < json_array_size(tables); i++) {
		json_t *t = json_array_get(tables, i), *c;
		char body[256];

		snprintf(body, sizeof(body), "{\"type\": \"databaseExplorerQuery\", \"query\": "
			 "\"SELECT count(*) FROM %s\"}", json_string_value(json_object_get(t, "name")));
		c = search("my-kernel", body, 200);
		assert_true(json_is_integer(json_object_get(t, "rows")));
		assert_int_equal(json_integer_value(json_object_get(t, "rows")),
				 json_integer_value(json_array_get(json_array_get(
					 json_object_get(c, "rows"), 0), 0)));
		json_decref(c);
	}
	json_decref(j);
	j = search("no-such-profile", "{\"type\": \"listDbFiles\"}", 404);
	assert_error(j, "not_found");
	json_decref(j);
}

static void test_table_schema(void **state)
{
	json_t *j, *f;
	bool found = false;

	(void)state;
	j = search("my-kernel", "{\"type\":\"tableSchema\",\"tableName\":\"Instruction\"}", 200);
	assert_true(json_is_true(json_object_get(j, "inSchema")));
	f = json_object_get(j, "fields");
	NX_ASSERT_CMP(json_array_size(f), >, 5);
	for (size_t i = 0; i < json_array_size(f); i++) {
		json_t *x = json_array_get(f, i);
		if (strcmp(json_string_value(json_object_get(x, "name")), "duration_ns"))
			continue;
		found = true;
		assert_non_null(json_object_get(x, "type"));
		assert_non_null(json_object_get(x, "required"));
		assert_non_null(json_object_get(x, "unit"));
		assert_non_null(json_object_get(x, "description"));
		assert_string_equal(json_string_value(json_object_get(x, "column_type")), "BIGINT");
	}
	assert_true(found);
	json_decref(j);
	/* A table of the schema this profile lacks: schema fields, no columns. */
	j = search("my-kernel", "{\"type\":\"tableSchema\",\"tableName\":\"CcOp\"}", 200);
	assert_false(json_is_true(json_object_get(j, "inProfile")));
	json_decref(j);
	j = search("my-kernel", "{\"type\":\"tableSchema\",\"tableName\":\"NoSuchTable\"}", 404);
	assert_error(j, "table_not_found");
	json_decref(j);
	j = search("my-kernel", "{\"type\":\"tableSchema\"}", 400);
	assert_error(j, "bad_request");
	json_decref(j);
}

static void test_bad_bodies(void **state)
{
	json_t *j;

	(void)state;
	j = search("my-kernel", "{\"type\":", 400);
	assert_error(j, "invalid_json");
	json_decref(j);
	j = search("my-kernel", "[1,2]", 400);
	assert_error(j, "bad_request");
	json_decref(j);
	j = search("my-kernel", "", 400);
	assert_error(j, "bad_request");
	json_decref(j);
	j = search("my-kernel", "{\"type\":\"dropEverything\"}", 400);
	assert_error(j, "unknown_type");
	json_decref(j);
	j = search("my-kernel", "{\"type\":\"databaseExplorerQuery\"}", 400);
	assert_error(j, "bad_request");
	json_decref(j);
	j = search("my-kernel", "{\"type\":\"databaseExplorerQuery\",\"query\":42}", 400);
	assert_error(j, "bad_request");
	json_decref(j);
	j = search("my-kernel",
		   "{\"type\":\"databaseExplorerQuery\",\"tableName\":\"Nope\",\"query\":\"SELECT 1\"}",
		   404);
	assert_error(j, "table_not_found");
	json_decref(j);
	j = search("my-kernel", "{\"type\":\"databaseExplorerQuery\",\"query\":\"SELEC 1\"}", 400);
	assert_error(j, "query_error");
	json_decref(j);
	j = search("my-kernel",
		   "{\"type\":\"databaseExplorerQuery\",\"query\":\"SELECT * FROM NoTable\"}", 400);
	assert_error(j, "query_error");
	json_decref(j);
}

static void test_oversized_body(void **state)
{
	size_t n = (1 << 20) + 10;
	char *big = malloc(n + 1);
	struct nx_http_resp r;
	json_t *j;

	(void)state;
	memset(big, ' ', n);
	big[n] = '\0';
	assert_int_equal(nx_http_post_json(port, "/api/v1/db/my-kernel/_search", big, &r), 0);
	assert_int_equal(r.status, 413);
	j = body_json(&r);
	assert_error(j, "payload_too_large");
	json_decref(j);
	nx_http_resp_free(&r);
	free(big);
	/* The server is still fine. */
	j = get_json("/api/v1/health", 200);
	json_decref(j);
}

static void test_host_and_origin(void **state)
{
	static const char *const bad[] = { "evil.example", "localhost.evil.example",
					   "127.0.0.1.nip.io:3002", "localhost:99999999",
					   "10.0.0.1" };
	static const char *const good[] = { "localhost", "localhost:3002", "127.0.0.1:1",
					    "[::1]:3002", "LOCALHOST" };
	struct nx_http_resp r;

	(void)state;
	for (size_t i = 0; i < NX_ARRAY_SIZE(bad); i++) {
		assert_int_equal(nx_http_request(port, "GET", "/api/v1/health", bad[i], NULL, NULL,
						 0, &r), 0);
		assert_int_equal(r.status, 403);
		assert_non_null(strstr(r.body, "forbidden_host"));
		nx_http_resp_free(&r);
	}
	for (size_t i = 0; i < NX_ARRAY_SIZE(good); i++) {
		assert_int_equal(nx_http_request(port, "GET", "/api/v1/health", good[i], NULL, NULL,
						 0, &r), 0);
		assert_int_equal(r.status, 200);
		nx_http_resp_free(&r);
	}
	assert_int_equal(nx_http_request(port, "POST", "/api/v1/db/my-kernel/_search", NULL,
					 "Origin: http://attacker.example\r\n",
					 "{\"type\":\"listDbFiles\"}", 22, &r), 0);
	assert_int_equal(r.status, 403);
	assert_non_null(strstr(r.body, "forbidden_origin"));
	nx_http_resp_free(&r);
	assert_int_equal(nx_http_request(port, "GET", "/api/v1/health", NULL,
					 "Origin: http://localhost:3001\r\n", NULL, 0, &r), 0);
	assert_int_equal(r.status, 200);
	nx_http_resp_free(&r);
}

static void test_profiles_listing(void **state)
{
	json_t *j, *p;

	(void)state;
	j = get_json("/api/v1/profiles", 200);
	p = json_array_get(json_object_get(j, "profiles"), 0);
	assert_string_equal(json_string_value(json_object_get(p, "name")), "my-kernel");
	assert_true(json_is_true(json_object_get(p, "has_source_code")));
	json_decref(j);
	j = get_json("/api/v1/profiles/namespace/global/profile_name/my-kernel", 200);
	assert_int_equal(json_array_size(json_object_get(j, "tables")), 4);
	json_decref(j);
	j = get_json("/api/v1/profiles/namespace/global/profile_name/absent", 404);
	assert_error(j, "not_found");
	json_decref(j);
}

static void test_artifacts(void **state)
{
	json_t *j, *a;

	(void)state;
	j = get_json("/api/v1/profiles/namespace/global/profile_name/my-kernel/artifacts"
		     "?types=source-code", 200);
	a = json_array_get(json_object_get(j, "artifacts"), 0);
	assert_string_equal(json_string_value(json_object_get(a, "type")), "source-code");
	assert_string_equal(json_string_value(json_object_get(a, "name")), "source_folder.tar.gz");
	/* the one cap of an attached archive, which `upload` enforces and the UI follows */
	assert_int_equal(json_integer_value(json_object_get(a, "unpacked_limit")), 64 << 20);
	assert_int_equal(json_array_size(json_object_get(j, "artifacts")), 1);
	json_decref(j);
	j = get_json("/api/v1/profiles/namespace/global/profile_name/my-kernel/artifacts", 200);
	assert_int_equal(json_array_size(json_object_get(j, "artifacts")), 1 + 5);
	json_decref(j);
	j = get_json("/api/v1/profiles/namespace/global/profile_name/my-kernel/artifacts"
		     "?types=core-dump", 400);
	assert_error(j, "bad_request");
	json_decref(j);
	j = get_json("/api/v1/profiles/namespace/private/profile_name/my-kernel/artifacts", 404);
	assert_error(j, "not_found");
	json_decref(j);
	j = get_json("/api/v1/profiles/namespace/global/profile_name/gone/artifacts", 404);
	assert_error(j, "not_found");
	json_decref(j);
}

static void test_fs_download(void **state)
{
	struct nx_http_resp r;
	char ct[64];
	json_t *j;

	(void)state;
	assert_int_equal(nx_http_get(port, "/api/v1/profiles/namespace/global/profile_name/"
					   "my-kernel/fs/source_folder.tar.gz", &r), 0);
	assert_int_equal(r.status, 200);
	assert_int_equal(r.body_len, 11);
	assert_memory_equal(r.body, "fake-tar-gz", 11);
	assert_true(nx_http_header(&r, "Content-Type", ct, sizeof(ct)));
	assert_string_equal(ct, "application/gzip");
	nx_http_resp_free(&r);
	assert_int_equal(nx_http_get(port, "/api/v1/profiles/namespace/global/profile_name/"
					   "my-kernel/fs/Summary.parquet", &r), 0);
	assert_int_equal(r.status, 200);
	assert_memory_equal(r.body, "PAR1", 4);
	nx_http_resp_free(&r);
	j = get_json("/api/v1/profiles/namespace/global/profile_name/my-kernel/fs/missing.tgz", 404);
	assert_error(j, "not_found");
	json_decref(j);
}

/* Escapes through names and paths: lexical checks, then symlinks. */
static void test_traversal(void **state)
{
	static const char *const fs_bad[] = {
		"/api/v1/profiles/namespace/global/profile_name/my-kernel/fs/../../../etc/passwd",
		"/api/v1/profiles/namespace/global/profile_name/my-kernel/fs/%2e%2e/%2e%2e/x",
		"/api/v1/profiles/namespace/global/profile_name/my-kernel/fs//etc/passwd",
		"/api/v1/profiles/namespace/global/profile_name/my-kernel/fs/a/./b",
	};
	static const char *const name_bad[] = {
		"/api/v1/db/../_search", "/api/v1/db/.hidden/_search",
		"/api/v1/db/x.tmp.1/_search", "/api/v1/db/..%2f..%2fetc/_search",
		"/api/v1/db/a%5cb/_search", "/api/v1/db/a%01b/_search",
	};
	/* names that C strings or the router would shorten to another file: refused */
	static const char *const cut[] = {
		"/api/v1/profiles/namespace/global/profile_name/my-kernel/fs/Summary.parquet%00.txt",
		"/api/v1/profiles/namespace/global/profile_name/my-kernel/fs/Summary.parquet/",
		"/api/v1/profiles/namespace/global/profile_name/my-kernel%00x/fs/Summary.parquet",
		"/api/v1/profiles/namespace/global/profile_name/my-kernel/timeline/tracks?dma=%00",
	};
	char *link = NULL, *cmd = NULL;
	struct nx_http_resp r;

	(void)state;
	for (size_t i = 0; i < NX_ARRAY_SIZE(cut); i++) {
		json_t *j;

		assert_int_equal(nx_http_get(port, cut[i], &r), 0);
		if (r.status != 400)
			fail_msg("%s: status %d: %.200s", cut[i], r.status, r.body);
		j = json_loads(r.body, 0, NULL);
		assert_non_null(j);
		assert_non_null(strstr(json_string_value(json_object_get(json_object_get(j, "error"),
									 "message")),
				       i == 1 ? "ends with '/'" : "%00"));
		json_decref(j);
		nx_http_resp_free(&r);
	}
	for (size_t i = 0; i < NX_ARRAY_SIZE(fs_bad); i++) {
		assert_int_equal(nx_http_get(port, fs_bad[i], &r), 0);
		if (r.status != 400 && r.status != 404)
			fail_msg("%s: status %d", fs_bad[i], r.status);
		assert_null(strstr(r.body, "root:"));
		nx_http_resp_free(&r);
	}
	for (size_t i = 0; i < NX_ARRAY_SIZE(name_bad); i++) {
		assert_int_equal(nx_http_request(port, "POST", name_bad[i], NULL, NULL,
						 "{\"type\":\"listDbFiles\"}", 22, &r), 0);
		if (r.status != 400 && r.status != 404)
			fail_msg("%s: status %d", name_bad[i], r.status);
		nx_http_resp_free(&r);
	}
	/* A symlink inside the profile pointing outside, and a profile that is a
	 * symlink to a directory outside the data path. */
	NX_ASSERT_CMP(asprintf(&link, "%s/profiles/global/my-kernel@latest/evil.txt", data_dir), >, 0);
	assert_int_equal(symlink("/etc/passwd", link), 0);
	assert_int_equal(nx_http_get(port, "/api/v1/profiles/namespace/global/profile_name/"
					   "my-kernel/fs/evil.txt", &r), 0);
	assert_int_equal(r.status, 403);
	assert_null(strstr(r.body, "root:"));
	assert_non_null(strstr(r.body, "symbolic link, 'evil.txt'"));
	nx_http_resp_free(&r);
	unlink(link);
	free(link);
	NX_ASSERT_CMP(asprintf(&cmd, "mkdir -p '%s-outside' && ln -s '%s-outside' "
				   "'%s/profiles/global/escape@latest'", data_dir, data_dir,
			     data_dir), >, 0);
	assert_int_equal(system(cmd), 0);
	free(cmd);
	json_decref(search("escape", "{\"type\":\"listDbFiles\"}", 403));
}

static void test_profile_added_and_replaced(void **state)
{
	json_t *j;

	(void)state;
	j = search("late-kernel", "{\"type\":\"listDbFiles\"}", 404);
	json_decref(j);
	/* An in-progress directory is invisible. */
	char *tmp = NULL;
	NX_ASSERT_CMP(asprintf(&tmp, "%s/profiles/global/.late-kernel.tmp", data_dir), >, 0);
	assert_int_equal(mkdir(tmp, 0755), 0);
	j = get_json("/api/v1/profiles", 200);
	assert_int_equal(json_array_size(json_object_get(j, "profiles")), 1);
	json_decref(j);
	rmdir(tmp);
	free(tmp);

	assert_int_equal(nx_sfx_make_profile(data_dir, "late-kernel", 10), 0);
	j = search("late-kernel",
		   "{\"type\":\"databaseExplorerQuery\",\"tableName\":\"Instruction\","
		   "\"query\":\"SELECT COUNT(*) FROM Instruction\"}", 200);
	assert_int_equal(json_integer_value(json_array_get(
				 json_array_get(json_object_get(j, "rows"), 0), 0)), 10);
	json_decref(j);
	/* Re-ingest under the same name: the next request sees the new data. */
	assert_int_equal(nx_sfx_make_profile(data_dir, "late-kernel", 40), 0);
	j = search("late-kernel",
		   "{\"type\":\"databaseExplorerQuery\",\"tableName\":\"Instruction\","
		   "\"query\":\"SELECT COUNT(*) FROM Instruction\"}", 200);
	assert_int_equal(json_integer_value(json_array_get(
				 json_array_get(json_object_get(j, "rows"), 0), 0)), 40);
	json_decref(j);
	j = get_json("/api/v1/profiles", 200);
	NX_ASSERT_CMP(json_array_size(json_object_get(j, "profiles")), >=, 2);
	json_decref(j);
}

/* `upload` stores an archive that the /fs/ route then serves. */
static void test_upload(void **state)
{
	const char *bin = nx_test_bin();
	char *src = NULL, *cmd = NULL;
	struct nx_http_resp r;
	struct nx_tar tar = { 0 };
	struct nx_err err = { 0 };
	const struct nx_tar_entry *e;

	(void)state;
	NX_ASSERT_CMP(asprintf(&src, "%s-src", data_dir), >, 0);
	NX_ASSERT_CMP(asprintf(&cmd, "mkdir -p '%s/pkg' && printf 'def k():\\n  pass\\n' > "
				   "'%s/kernel.py' && printf 'x = 1\\n' > '%s/pkg/util.py'",
			     src, src, src), >, 0);
	assert_int_equal(system(cmd), 0);
	free(cmd);
	NX_ASSERT_CMP(asprintf(&cmd, "'%s' upload --source-code '%s' --data-path '%s' "
				   "--display-name my-kernel >/dev/null", bin, src, data_dir), >, 0);
	assert_int_equal(system(cmd), 0);
	free(cmd);
	assert_int_equal(nx_http_get(port, "/api/v1/profiles/namespace/global/profile_name/"
					   "my-kernel/fs/source_folder.tar.gz", &r), 0);
	assert_int_equal(r.status, 200);
	assert_int_equal(nx_tar_read_gz("reply", (const uint8_t *)r.body, r.body_len, &tar, &err),
			 0);
	e = nx_tar_find(&tar, "pkg/util.py");
	assert_non_null(e);
	assert_memory_equal(e->data, "x = 1\n", 6);
	assert_non_null(nx_tar_find(&tar, "kernel.py"));
	nx_tar_release(&tar);
	nx_http_resp_free(&r);
	/* Usage errors exit 2, failures 1. */
	NX_ASSERT_CMP(asprintf(&cmd, "'%s' upload --data-path '%s' 2>/dev/null", bin, data_dir), >, 0);
	assert_int_equal(WEXITSTATUS(system(cmd)), 2);
	free(cmd);
	NX_ASSERT_CMP(asprintf(&cmd, "'%s' upload --source-code '%s' --data-path '%s' "
				   "--display-name absent 2>/dev/null", bin, src, data_dir), >, 0);
	assert_int_equal(WEXITSTATUS(system(cmd)), 1);
	free(cmd);
	free(src);
}

static void test_start_errors(void **state)
{
	struct nx_server_opts o;
	struct nx_server *s2 = NULL;
	struct nx_err err = { 0 };
	char want[64];

	(void)state;
	nx_server_opts_init(&o, data_dir);
	o.port = port;
	o.quiet = true;
	assert_int_not_equal(nx_server_start(&s2, &o, &err), 0);
	snprintf(want, sizeof(want), "port %u on 127.0.0.1 is already in use", port);
	assert_non_null(strstr(err.msg, want));
	assert_null(s2);
	nx_err_clear(&err);
	o.port = 0;
	o.host = "0.0.0.0";
	assert_int_not_equal(nx_server_start(&s2, &o, &err), 0);
	assert_non_null(strstr(err.msg, "loopback"));
	nx_err_clear(&err);
	o.host = NULL;
	o.data_path = "/nonexistent/data/path";
	assert_int_not_equal(nx_server_start(&s2, &o, &err), 0);
	assert_non_null(strstr(err.msg, "/nonexistent/data/path"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_health),
		cmocka_unit_test(test_not_found_and_method),
		cmocka_unit_test(test_seed_queries),
		cmocka_unit_test(test_int64_as_string),
		cmocka_unit_test(test_list_db_files),
		cmocka_unit_test(test_table_schema),
		cmocka_unit_test(test_bad_bodies),
		cmocka_unit_test(test_oversized_body),
		cmocka_unit_test(test_host_and_origin),
		cmocka_unit_test(test_profiles_listing),
		cmocka_unit_test(test_artifacts),
		cmocka_unit_test(test_fs_download),
		cmocka_unit_test(test_traversal),
		cmocka_unit_test(test_profile_added_and_replaced),
		cmocka_unit_test(test_upload),
		cmocka_unit_test(test_start_errors),
	};

	return nx_test_done(cmocka_run_group_tests_name("server_api", tests, setup, teardown));
}
