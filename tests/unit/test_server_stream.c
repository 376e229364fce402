/* SPDX-License-Identifier: MIT
 * test_server_stream.c: query results larger than the server's in-memory reply go to
 * the client piece by piece (chunked) as DuckDB produces them. The body must be the
 * very text a buffered reply carries, and the row and byte caps must cut a streamed
 * result the same way. Results here are a few MB, well past the streaming threshold. */
#include "common/compat.h"
#include "server/server.h"
#include "common/strbuf.h"
#include "helper/http_client.h"
#include "helper/server_fixture.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <cmocka.h>
#include <jansson.h>
#include "helper/asserts.h"

static char *data_dir;

static struct nx_server *start(uint64_t max_rows, uint64_t max_bytes)
{
	struct nx_server_opts o;
	struct nx_server *s;
	unsigned port;

	nx_sfx_opts(&o, data_dir);
	if (max_rows)
		o.max_result_rows = max_rows;
	if (max_bytes)
		o.max_result_bytes = max_bytes;
	s = nx_sfx_start(&o, &port);
	assert_non_null(s);
	return s;
}

static int setup(void **state)
{
	(void)state;
	data_dir = nx_sfx_tmpdir("stream");
	return data_dir && !nx_sfx_make_profile(data_dir, "k", 100) ? 0 : -1;
}

static int teardown(void **state)
{
	(void)state;
	free(data_dir);
	return 0;
}

static void post(struct nx_server *s, const char *sql, struct nx_http_resp *r)
{
	json_t *req = json_pack("{s:s, s:s}", "type", "databaseExplorerQuery", "query", sql);
	char *body = json_dumps(req, 0);

	assert_int_equal(nx_http_post_json(nx_server_port(s), "/api/v1/db/k/_search", body, r), 0);
	assert_int_equal(r->status, 200);
	free(body);
	json_decref(req);
}

/* The reply text for SELECT i, repeat('x', w) AS s FROM range(n) t(i), first m rows. */
static char *expected(unsigned n, unsigned m, unsigned w, const char *tail)
{
	struct nx_strbuf sb = NX_STRBUF_INIT;
	char *pad = calloc(w + 1, 1);

	memset(pad, 'x', w);
	nx_strbuf_addstr(&sb, "{\"columns\":[{\"name\":\"i\",\"type\":\"BIGINT\"},"
			      "{\"name\":\"s\",\"type\":\"VARCHAR\"}],\"rows\":[");
	for (unsigned i = 0; i < m && i < n; i++)
		nx_strbuf_addf(&sb, "%s[%u,\"%s\"]", i ? "," : "", i, pad);
	nx_strbuf_addf(&sb, "],\"row_count\":%u,\"truncated\":%s}\n", m < n ? m : n, tail);
	free(pad);
	return nx_strbuf_detach(&sb, NULL);
}

static void test_streamed_body_is_the_buffered_one(void **state)
{
	struct nx_server *s = start(0, 0);
	struct nx_http_resp r;
	char te[32] = "";
	char *want;

	(void)state;
	/* 20000 rows of about 210 bytes: 4 MB, streamed */
	post(s, "SELECT i, repeat('x', 200) AS s FROM range(20000) t(i) ORDER BY i", &r);
	assert_true(nx_http_header(&r, "Transfer-Encoding", te, sizeof(te)));
	assert_string_equal(te, "chunked");
	want = expected(20000, 20000, 200, "false");
	assert_int_equal(r.body_len, strlen(want));
	assert_memory_equal(r.body, want, r.body_len);
	free(want);
	nx_http_resp_free(&r);
	/* a small result is still one buffer with its length */
	post(s, "SELECT i, repeat('x', 200) AS s FROM range(10) t(i) ORDER BY i", &r);
	assert_false(nx_http_header(&r, "Transfer-Encoding", te, sizeof(te)));
	assert_true(nx_http_header(&r, "Content-Length", te, sizeof(te)));
	want = expected(10, 10, 200, "false");
	assert_string_equal(r.body, want);
	free(want);
	nx_http_resp_free(&r);
	nx_server_stop(s);
}

static void test_caps_cut_a_streamed_result(void **state)
{
	struct nx_server *s = start(15000, 0);
	struct nx_http_resp r;
	json_t *j;
	char *want;

	(void)state;
	post(s, "SELECT i, repeat('x', 200) AS s FROM range(20000) t(i) ORDER BY i", &r);
	want = expected(20000, 15000, 200, "true,\"message\":\"result cut at the 15000-row "
			"limit; add LIMIT, filter or aggregate to see everything\"");
	assert_int_equal(r.body_len, strlen(want));
	assert_memory_equal(r.body, want, r.body_len);
	free(want);
	nx_http_resp_free(&r);
	nx_server_stop(s);

	s = start(0, 1000000); /* about 4700 rows of 211 bytes */
	post(s, "SELECT i, repeat('x', 200) AS s FROM range(20000) t(i) ORDER BY i", &r);
	j = json_loads(r.body, 0, NULL);
	assert_non_null(j);
	assert_true(json_is_true(json_object_get(j, "truncated")));
	json_int_t n = json_integer_value(json_object_get(j, "row_count"));
	NX_ASSERT_CMP(n, >, 4000);
	NX_ASSERT_CMP(n, <, 5000);
	assert_int_equal((json_int_t)json_array_size(json_object_get(j, "rows")), n);
	assert_non_null(strstr(json_string_value(json_object_get(j, "message")), "1000000-byte"));
	json_decref(j);
	nx_http_resp_free(&r);
	nx_server_stop(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_streamed_body_is_the_buffered_one),
		cmocka_unit_test(test_caps_cut_a_streamed_result),
	};

	return nx_test_done(cmocka_run_group_tests_name("server_stream", tests, setup, teardown));
}
