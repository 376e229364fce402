/* SPDX-License-Identifier: MIT
 * test_server_hardening.c: the server against hostile or unlucky input, through a
 * real server on a free loopback port: names holding quotes (every identifier and
 * literal built from a file or profile name is quoted), idle-connection floods,
 * oversized request lines and headers (JSON errors, not MHD's HTML), a long query
 * beside short ones, and damaged parquet files (the reply and the log name the file). */
#include "common/compat.h"
#include "server/http.h"
#include "server/server.h"
#include "helper/http_client.h"
#include "helper/server_fixture.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <pthread.h>
#include <netinet/in.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <unistd.h>
#include <cmocka.h>

#include "helper/asserts.h"
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

	(void)state;
	data_dir = nx_sfx_tmpdir("hardening");
	if (!data_dir || make_profiles())
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

/* A second server on the same data path with a short request deadline. */
static struct nx_server *start_short(unsigned request_timeout_s, unsigned query_timeout_ms)
{
	struct nx_server_opts o;
	struct nx_err err = { 0 };
	struct nx_server *s = NULL;

	nx_http_set_timeout(0); /* a failed test must not leave its client timeout behind */
	nx_server_opts_init(&o, data_dir);
	o.port = 0;
	o.quiet = true;
	o.request_timeout_s = request_timeout_s;
	o.query_timeout_ms = query_timeout_ms;
	if (nx_server_start(&s, &o, &err))
		fail_msg("cannot start the server: %s", err.msg);
	return s;
}

static int connect_idle(unsigned p)
{
	struct sockaddr_in a = { .sin_family = AF_INET };
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	if (fd < 0)
		return -1;
	a.sin_port = htons((unsigned short)p);
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (connect(fd, (struct sockaddr *)&a, sizeof(a)) != 0) {
		close(fd);
		return -1;
	}
	return fd;
}

/* True when the peer closed fd within timeout_s (EOF or reset), false on timeout. */
static bool closed_by_peer(int fd, unsigned timeout_s)
{
	struct timeval tv = { (time_t)timeout_s, 0 };
	char b[256];
	ssize_t r;

	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	do {
		r = recv(fd, b, sizeof(b), 0);
	} while (r > 0);
	return r == 0 || errno == ECONNRESET;
}

#define FLOOD 600

/* Hundreds of clients that connect and send nothing (or half a request) must not
 * lock others out: health and queries are answered at once, and the idle sockets are
 * closed by the server once the request deadline passes. */
static void test_idle_flood(void **state)
{
	struct nx_server *s = start_short(2, 0);
	unsigned p = nx_server_port(s);
	struct nx_http_resp r;
	struct rlimit rl;
	int fds[FLOOD], n = FLOOD, opened = 0, closed = 0;
	json_t *j;

	(void)state;
	/* Client and server sockets share this process's descriptor limit. */
	getrlimit(RLIMIT_NOFILE, &rl);
	rl.rlim_cur = rl.rlim_max;
	setrlimit(RLIMIT_NOFILE, &rl);
	getrlimit(RLIMIT_NOFILE, &rl);
	if (rl.rlim_cur < 2 * FLOOD + 300)
		n = (int)(rl.rlim_cur - 300) / 2;
	for (int i = 0; i < n; i++) {
		fds[i] = connect_idle(p);
		if (fds[i] < 0)
			break;
		if (i % 3 == 0) /* a third send a partial request line */
			(void)!send(fds[i], "GET /api/v1/hea", 15, MSG_NOSIGNAL);
		opened++;
	}
	assert_int_equal(opened, n);
	/* Locked out, a client waited 120 s; 30 s leaves room for sanitizer builds on a busy
	 * machine while still failing such a lock-out. */
	nx_http_set_timeout(30);
	assert_int_equal(nx_http_get(p, "/api/v1/health", &r), 0);
	assert_int_equal(r.status, 200);
	assert_non_null(strstr(r.body, "healthy"));
	nx_http_resp_free(&r);
	assert_int_equal(nx_http_post_json(p, "/api/v1/db/k/_search",
					   "{\"type\":\"databaseExplorerQuery\",\"query\":"
					   "\"SELECT count(*) AS n FROM Instruction\"}", &r), 0);
	assert_int_equal(r.status, 200);
	j = body_json(&r);
	assert_int_equal(json_integer_value(json_array_get(json_array_get(
				 json_object_get(j, "rows"), 0), 0)), 400);
	json_decref(j);
	nx_http_resp_free(&r);
	nx_http_set_timeout(0);
	for (int i = 0; i < opened; i++) {
		closed += closed_by_peer(fds[i], 30);
		close(fds[i]);
	}
	assert_int_equal(closed, opened);
	nx_server_stop(s);
}

/* A client that keeps sending a byte now and then never goes idle, yet still has to
 * finish its request within the deadline. */
static void test_trickle_closed(void **state)
{
	static const char head[] = "GET /api/v1/health HTTP/1.1\r\nHost: 127.0.0.1\r\nX: ";
	struct nx_server *s = start_short(2, 0);
	int fd = connect_idle(nx_server_port(s));
	bool closed = false;

	(void)state;
	NX_ASSERT_CMP(fd, >=, 0);
	assert_int_equal(send(fd, head, sizeof(head) - 1, MSG_NOSIGNAL), (ssize_t)sizeof(head) - 1);
	for (int i = 0; i < 60 && !closed; i++) {
		struct timeval tv = { 0, 300000 };
		char b[64];
		ssize_t r;

		if (send(fd, "a", 1, MSG_NOSIGNAL) != 1) {
			closed = true;
			break;
		}
		setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
		r = recv(fd, b, sizeof(b), 0);
		closed = r == 0 || (r < 0 && errno == ECONNRESET);
	}
	close(fd);
	assert_true(closed);
	nx_server_stop(s);
}

/* The deadline covers sending the request only: a query that runs longer than it still
 * gets its reply. */
static void test_slow_reply_kept(void **state)
{
	struct nx_server *s = start_short(1, 3000);
	json_t *j;

	(void)state;
	j = search(nx_server_port(s), "k",
		   json_pack("{s:s, s:s}", "type", "databaseExplorerQuery", "query",
			     "SELECT COUNT(*) FROM range(1000000000) a, range(1000000000) b"), 504);
	assert_string_equal(json_string_value(json_object_get(json_object_get(j, "error"), "code")),
			    "query_timeout");
	json_decref(j);
	nx_server_stop(s);
}

/* A query that runs on one connection holds up no other (each connection has its own
 * thread): while one runs to its timeout, a health check and a small query on other
 * connections are answered before it ends. */
struct long_query {
	unsigned port;
	int status;
	atomic_bool done;
};

static void *run_long_query(void *arg)
{
	struct long_query *q = arg;
	struct nx_http_resp r;

	q->status = -1;
	if (nx_http_post_json(q->port, "/api/v1/db/k/_search",
			      "{\"type\":\"databaseExplorerQuery\",\"query\":\"SELECT COUNT(*) "
			      "FROM range(1000000000) a, range(1000000000) b\"}", &r) == 0) {
		q->status = r.status;
		nx_http_resp_free(&r);
	}
	atomic_store(&q->done, true);
	return NULL;
}

static void test_long_query_holds_up_no_other(void **state)
{
	struct nx_server *s = start_short(2, 8000);
	struct long_query q = { .port = nx_server_port(s) };
	struct nx_http_resp r;
	pthread_t t;
	json_t *j;

	(void)state;
	assert_int_equal(pthread_create(&t, NULL, run_long_query, &q), 0);
	usleep(300 * 1000); /* lets the long query start; it then runs for 8 s */
	assert_int_equal(nx_http_get(q.port, "/api/v1/health", &r), 0);
	assert_int_equal(r.status, 200);
	nx_http_resp_free(&r);
	j = search(q.port, "k", json_pack("{s:s, s:s}", "type", "databaseExplorerQuery", "query",
					  "SELECT count(*) AS n FROM Instruction"), 200);
	assert_int_equal(json_integer_value(json_array_get(json_array_get(
				 json_object_get(j, "rows"), 0), 0)), 400);
	json_decref(j);
	assert_false(atomic_load(&q.done));
	pthread_join(t, NULL);
	assert_int_equal(q.status, 504);
	nx_server_stop(s);
}

/* NX_SERVER_QUERY_TIMEOUT sets how long a query may run, in seconds, and the 504 names
 * it; a value that is not such a number keeps the server from starting, naming it. */
static void test_query_timeout_env(void **state)
{
	static const char *const bad[] = { "0", "abc", "86401", "-5", "1.5" };
	struct nx_server_opts o;
	struct nx_err err = { 0 };
	struct nx_server *s;
	json_t *j;
	const char *msg;

	(void)state;
	assert_int_equal(setenv("NX_SERVER_QUERY_TIMEOUT", "1", 1), 0);
	s = start_short(10, 0); /* 0: the default, which the variable replaces */
	j = search(nx_server_port(s), "k",
		   json_pack("{s:s, s:s}", "type", "databaseExplorerQuery", "query",
			     "SELECT COUNT(*) FROM range(1000000000) a, range(1000000000) b"),
		   504);
	msg = json_string_value(json_object_get(json_object_get(j, "error"), "message"));
	assert_non_null(msg);
	if (!strstr(msg, "longer than the 1 s limit") || !strstr(msg, "NX_SERVER_QUERY_TIMEOUT"))
		fail_msg("the 504 does not name the limit and its variable: %s", msg);
	json_decref(j);
	nx_server_stop(s);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		assert_int_equal(setenv("NX_SERVER_QUERY_TIMEOUT", bad[i], 1), 0);
		nx_server_opts_init(&o, data_dir);
		o.port = 0;
		o.quiet = true;
		s = NULL;
		assert_int_equal(nx_server_start(&s, &o, &err), NX_EUSAGE);
		assert_null(s);
		if (!strstr(err.msg, "NX_SERVER_QUERY_TIMEOUT") || !strstr(err.msg, "seconds"))
			fail_msg("'%s': the error does not name the variable: %s", bad[i], err.msg);
	}
	unsetenv("NX_SERVER_QUERY_TIMEOUT");
}

/* Checks the documented error shape: JSON body, JSON content type, matching status. */
static void assert_json_error(const struct nx_http_resp *r, int status, const char *code)
{
	char ctype[128];
	json_t *j, *e;

	if (r->status != status)
		fail_msg("status %d (wanted %d): %.300s", r->status, status, r->body);
	assert_true(nx_http_header(r, "Content-Type", ctype, sizeof(ctype)));
	assert_string_equal(ctype, "application/json");
	j = body_json(r);
	e = json_object_get(j, "error");
	assert_string_equal(json_string_value(json_object_get(e, "code")), code);
	assert_int_equal(json_integer_value(json_object_get(e, "status")), status);
	assert_non_null(json_string_value(json_object_get(e, "message")));
	json_decref(j);
}

static char *repeat(char c, size_t n)
{
	char *s = malloc(n + 1);

	memset(s, c, n);
	s[n] = '\0';
	return s;
}

/* A long URI or a large header block is answered by us, in JSON, not by MHD in HTML,
 * up to the connection's buffer (NX_MHD_MEMORY, well above our limits); beyond it MHD
 * refuses the request itself, with the same status, and the server carries on. */
static void test_oversized_requests_json(void **state)
{
	static const size_t sizes[] = { 20000, 100000, 400000 };
	struct nx_http_resp r;

	(void)state;
	for (size_t i = 0; i < NX_ARRAY_SIZE(sizes); i++) {
		char *a = repeat('a', sizes[i]), *path = NULL, *hdr = NULL, *many = NULL;
		size_t nlines = sizes[i] / 20;
		bool ours = sizes[i] < NX_MHD_MEMORY;

		NX_ASSERT_CMP(asprintf(&path, "/api/v1/health?q=%s", a), >, 0);
		assert_int_equal(nx_http_get(port, path, &r), 0);
		if (ours)
			assert_json_error(&r, 414, "uri_too_long");
		else
			assert_int_equal(r.status, 414);
		nx_http_resp_free(&r);
		path[0] = '/';
		memcpy(path, "/api/v1/x/", 10);
		assert_int_equal(nx_http_get(port, path, &r), 0);
		if (ours)
			assert_json_error(&r, 414, "uri_too_long");
		else
			assert_int_equal(r.status, 414);
		nx_http_resp_free(&r);
		/* one huge header, then many small ones */
		NX_ASSERT_CMP(asprintf(&hdr, "X-Big: %s\r\n", a), >, 0);
		assert_int_equal(nx_http_request(port, "GET", "/api/v1/health", NULL, hdr, NULL, 0,
						 &r), 0);
		if (ours)
			assert_json_error(&r, 431, "headers_too_large");
		else
			assert_int_equal(r.status, 431);
		nx_http_resp_free(&r);
		many = malloc(nlines * 20 + 1);
		for (size_t k = 0; k < nlines; k++)
			snprintf(many + k * 20, 21, "X-%06zu: abcdefghi\r\n", k);
		assert_int_equal(nx_http_request(port, "GET", "/api/v1/health", NULL, many, NULL, 0,
						 &r), 0);
		if (ours)
			assert_json_error(&r, 431, "headers_too_large");
		else
			assert_int_equal(r.status, 431);
		nx_http_resp_free(&r);
		free(a);
		free(path);
		free(hdr);
		free(many);
	}
	/* Below the limits everything still works. */
	assert_int_equal(nx_http_request(port, "GET", "/api/v1/health", NULL,
					 "X-Fine: abcdefghijklmnopqrstuvwxyz\r\n", NULL, 0, &r), 0);
	assert_int_equal(r.status, 200);
	nx_http_resp_free(&r);
}

static void truncate_file(const char *name, const char *file, off_t keep)
{
	char *path = profile_path(name, file);

	assert_int_equal(truncate(path, keep), 0);
	free(path);
}

static json_t *query_status(unsigned p, const char *profile, const char *table, const char *sql,
			    int status)
{
	json_t *req = json_pack("{s:s, s:s}", "type", "databaseExplorerQuery", "query", sql);

	if (table)
		json_object_set_new(req, "tableName", json_string(table));
	return search(p, profile, req, status);
}

static const char *error_message(json_t *j, const char *code)
{
	json_t *e = json_object_get(j, "error");

	assert_string_equal(json_string_value(json_object_get(e, "code")), code);
	return json_string_value(json_object_get(e, "message"));
}

/* A served profile whose Instruction table has a truncated part: the replies and the
 * server's log name the damaged file, and the other tables still answer. */
static void test_damaged_table_named(void **state)
{
	char *log_path = NULL, *log = NULL;
	struct nx_server_opts o;
	struct nx_err err = { 0 };
	struct nx_server *s = NULL;
	struct nx_http_resp r;
	size_t log_len = 0;
	int saved, fd;
	unsigned p;
	FILE *f;
	json_t *j;

	(void)state;
	assert_int_equal(nx_sfx_make_profile(data_dir, "dmg", 300), 0);
	truncate_file("dmg", "Instruction_1.parquet", 100);
	truncate_file("dmg", "Summary.parquet", 0);
	/* a server that logs, with stderr captured */
	NX_ASSERT_CMP(asprintf(&log_path, "%s/server.log", data_dir), >, 0);
	fflush(stderr);
	saved = dup(2);
	fd = open(log_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	assert_true(saved >= 0 && fd >= 0);
	dup2(fd, 2);
	close(fd);
	nx_server_opts_init(&o, data_dir);
	o.port = 0;
	assert_int_equal(nx_server_start(&s, &o, &err), 0);
	p = nx_server_port(s);

	j = query_status(p, "dmg", NULL, "SELECT count(*) FROM Instruction", 500);
	assert_non_null(strstr(error_message(j, "table_unreadable"),
			       "Instruction_1.parquet is damaged"));
	assert_null(strstr(error_message(j, "table_unreadable"), "Instruction_0.parquet"));
	json_decref(j);
	j = query_status(p, "dmg", "Instruction", "SELECT * FROM Instruction LIMIT 1", 500);
	assert_non_null(strstr(error_message(j, "table_unreadable"), "Instruction_1.parquet"));
	json_decref(j);
	j = query_status(p, "dmg", NULL, "SELECT * FROM DmaPacket d JOIN summary s ON true", 500);
	assert_non_null(strstr(error_message(j, "table_unreadable"), "Summary.parquet is damaged"));
	json_decref(j);
	j = search(p, "dmg", json_pack("{s:s, s:s}", "type", "tableSchema", "tableName",
				       "Instruction"), 500);
	assert_non_null(strstr(error_message(j, "table_unreadable"), "Instruction_1.parquet"));
	json_decref(j);
	j = query_status(p, "dmg", NULL, "SELECT count(*) FROM DmaPacket", 200);
	json_decref(j);
	assert_int_equal(nx_http_get(p, "/api/v1/profiles/namespace/global/profile_name/dmg/"
				     "analysis", &r), 0);
	assert_int_equal(r.status, 500);
	assert_non_null(strstr(r.body, ".parquet"));
	nx_http_resp_free(&r);

	nx_server_stop(s);
	fflush(stderr);
	dup2(saved, 2);
	close(saved);
	f = fopen(log_path, "r");
	assert_non_null(f);
	NX_ASSERT_CMP(getdelim(&log, &log_len, '\0', f), >, 0);
	fclose(f);
	assert_non_null(strstr(log, "profile 'dmg'"));
	assert_non_null(strstr(log, "Instruction_1.parquet is damaged"));
	assert_non_null(strstr(log, "Summary.parquet is damaged"));
	assert_non_null(strstr(log, "500 table_unreadable"));
	free(log);
	free(log_path);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_quoted_names),
		cmocka_unit_test(test_oversized_requests_json),
		cmocka_unit_test(test_idle_flood),
		cmocka_unit_test(test_trickle_closed),
		cmocka_unit_test(test_slow_reply_kept),
		cmocka_unit_test(test_long_query_holds_up_no_other),
		cmocka_unit_test(test_query_timeout_env),
		cmocka_unit_test(test_damaged_table_named),
	};

	return nx_test_done(cmocka_run_group_tests_name("server_hardening", tests, setup, teardown));
}
