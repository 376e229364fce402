/* SPDX-License-Identifier: MIT
 * test_server_hardening.c: the server against hostile or unlucky input, through a
 * real server on a free loopback port: names holding quotes (every identifier and
 * literal built from a file or profile name is quoted), idle-connection floods,
 * oversized request lines and headers (JSON errors, not MHD's HTML), and damaged
 * parquet files (the reply and the log name the file). */
#include "common/compat.h"
#include "server/server.h"
#include "helper/http_client.h"
#include "helper/server_fixture.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <unistd.h>
#include <cmocka.h>
#include <jansson.h>

#define ODD_PROFILE "o'q\"x"
#define ODD_PROFILE_URL "o%27q%22x"
#define ODD_TABLE "Odd\"Tab'le"

static char *data_dir;
static struct nx_server *srv;
static unsigned port;

static int copy_file(const char *from, const char *to)
{
	char buf[65536];
	int in = open(from, O_RDONLY), out;
	ssize_t n;

	if (in < 0)
		return -1;
	out = open(to, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (out < 0) {
		close(in);
		return -1;
	}
	while ((n = read(in, buf, sizeof(buf))) > 0)
		if (write(out, buf, (size_t)n) != n) {
			n = -1;
			break;
		}
	close(in);
	close(out);
	return n < 0 ? -1 : 0;
}

static char *profile_path(const char *name, const char *file)
{
	char *p = NULL;

	if (asprintf(&p, "%s/profiles/global/%s@latest%s%s", data_dir, name, file ? "/" : "",
		     file ? file : "") < 0)
		return NULL;
	return p;
}

/* Profile "k"; profile ODD_PROFILE (made as "tmpodd", then renamed, since the fixture
 * passes names to the shell) with an extra table ODD_TABLE. */
static int make_profiles(void)
{
	char *from, *to, *a, *b;
	int rc;

	if (nx_sfx_make_profile(data_dir, "k", 400) || nx_sfx_make_profile(data_dir, "tmpodd", 50))
		return -1;
	from = profile_path("tmpodd", "DmaPacket.parquet");
	to = profile_path("tmpodd", ODD_TABLE ".parquet");
	a = profile_path("tmpodd", NULL);
	b = profile_path(ODD_PROFILE, NULL);
	rc = copy_file(from, to) || rename(a, b) ? -1 : 0;
	free(from);
	free(to);
	free(a);
	free(b);
	return rc;
}

static int setup(void **state)
{
	struct nx_server_opts o;
	struct nx_err err = { 0 };

	(void)state;
	data_dir = nx_sfx_tmpdir("hardening");
	if (!data_dir || make_profiles())
		return -1;
	nx_server_opts_init(&o, data_dir);
	o.port = 0;
	o.quiet = true;
	if (nx_server_start(&srv, &o, &err)) {
		fprintf(stderr, "%s\n", err.msg);
		return -1;
	}
	port = nx_server_port(srv);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	nx_server_stop(srv);
	free(data_dir);
	return 0;
}

static json_t *body_json(const struct nx_http_resp *r)
{
	json_error_t je;
	json_t *j = json_loads(r->body ? r->body : "", 0, &je);

	if (!j)
		fail_msg("reply %d is not JSON (%s): %.300s", r->status, je.text,
			 r->body ? r->body : "");
	return j;
}

static json_t *search(unsigned p, const char *profile_url, json_t *req, int want_status)
{
	struct nx_http_resp r;
	char path[256], *body = json_dumps(req, 0);
	json_t *j;

	snprintf(path, sizeof(path), "/api/v1/db/%s/_search", profile_url);
	assert_int_equal(nx_http_post_json(p, path, body, &r), 0);
	if (r.status != want_status)
		fail_msg("status %d (wanted %d): %.500s", r.status, want_status, r.body);
	j = body_json(&r);
	nx_http_resp_free(&r);
	free(body);
	json_decref(req);
	return j;
}

/* A profile name and a table file name holding both quote characters: the views, the
 * sandbox and the analysis quote them instead of pasting them into SQL. */
static void test_quoted_names(void **state)
{
	struct nx_http_resp r;
	json_t *j, *rows;

	(void)state;
	j = search(port, ODD_PROFILE_URL,
		   json_pack("{s:s, s:s}", "type", "databaseExplorerQuery", "query",
			     "SELECT count(*) FROM \"Odd\"\"Tab'le\""), 200);
	rows = json_object_get(j, "rows");
	assert_int_equal(json_integer_value(json_array_get(json_array_get(rows, 0), 0)), 25);
	json_decref(j);
	j = search(port, ODD_PROFILE_URL,
		   json_pack("{s:s, s:s}", "type", "tableSchema", "tableName", ODD_TABLE), 200);
	assert_true(json_is_true(json_object_get(j, "inProfile")));
	json_decref(j);
	assert_int_equal(nx_http_get(port, "/api/v1/profiles/namespace/global/profile_name/"
				     ODD_PROFILE_URL "/analysis", &r), 0);
	if (r.status != 200)
		fail_msg("analysis answered %d: %.400s", r.status, r.body);
	j = body_json(&r);
	assert_string_equal(json_string_value(json_object_get(j, "kind")), "recommend");
	json_decref(j);
	nx_http_resp_free(&r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_quoted_names),
	};

	return cmocka_run_group_tests_name("server_hardening", tests, setup, teardown);
}
