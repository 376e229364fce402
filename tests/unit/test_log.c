/* SPDX-License-Identifier: MIT
 * test_log.c: the logging facility (common/log.h): level names, the level's filter, the
 * sink, escaping of outside text; and the real server's log going through it (a request
 * logged at info, nothing at warn, a URL's control bytes escaped, a profile's opening at
 * debug). */
#include "common/compat.h"
#include "common/log.h"
#include "common/strbuf.h"
#include "helper/http_client.h"
#include "helper/server_fixture.h"

#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

/* Lines the sink received, each followed by '\n'; the server's threads call it. */
static pthread_mutex_t lines_lock = PTHREAD_MUTEX_INITIALIZER;
static struct nx_strbuf lines = NX_STRBUF_INIT;

static void capture(void *arg, enum nx_log_level level, const char *line)
{
	pthread_mutex_lock(&lines_lock);
	nx_strbuf_addf(&lines, "%s %s\n", nx_log_level_name(level), line);
	pthread_mutex_unlock(&lines_lock);
	(void)arg;
}

static char *take_lines(void)
{
	pthread_mutex_lock(&lines_lock);
	char *s = nx_strbuf_detach(&lines, NULL);
	pthread_mutex_unlock(&lines_lock);
	return s;
}

static void level_names(void **state)
{
	enum nx_log_level l = NX_LOG_INFO;

	(void)state;
	assert_int_equal(nx_log_parse_level("error", &l), 0);
	assert_int_equal(l, NX_LOG_ERROR);
	assert_int_equal(nx_log_parse_level("WARN", &l), 0);
	assert_int_equal(l, NX_LOG_WARN);
	assert_int_equal(nx_log_parse_level("Info", &l), 0);
	assert_int_equal(l, NX_LOG_INFO);
	assert_int_equal(nx_log_parse_level("debug", &l), 0);
	assert_int_equal(l, NX_LOG_DEBUG);
	assert_int_equal(nx_log_parse_level("verbose", &l), -1);
	assert_int_equal(nx_log_parse_level("", &l), -1);
	assert_int_equal(nx_log_parse_level(NULL, &l), -1);
	assert_int_equal(l, NX_LOG_DEBUG); /* untouched by a bad name */
	for (int i = NX_LOG_ERROR; i <= NX_LOG_DEBUG; i++) {
		assert_int_equal(nx_log_parse_level(nx_log_level_name((enum nx_log_level)i), &l), 0);
		assert_int_equal(l, i);
	}
}

static void filter_and_sink(void **state)
{
	char *got;

	(void)state;
	nx_log_set_sink(capture, NULL);
	nx_log_set_level(NX_LOG_WARN);
	assert_true(nx_log_enabled(NX_LOG_ERROR));
	assert_true(nx_log_enabled(NX_LOG_WARN));
	assert_false(nx_log_enabled(NX_LOG_INFO));
	nx_log(NX_LOG_ERROR, "e %d", 1);
	nx_log(NX_LOG_WARN, "w %s", "two");
	nx_log(NX_LOG_INFO, "i");
	nx_log(NX_LOG_DEBUG, "d");
	got = take_lines();
	assert_string_equal(got, "error e 1\nwarn w two\n");
	free(got);
	nx_log_set_level(NX_LOG_DEBUG);
	nx_log(NX_LOG_INFO, "i");
	nx_log(NX_LOG_DEBUG, "d");
	got = take_lines();
	assert_string_equal(got, "info i\ndebug d\n");
	free(got);
	nx_log_set_level(NX_LOG_INFO);
	nx_log_set_sink(NULL, NULL);
}

static void escaping(void **state)
{
	struct nx_strbuf sb = NX_STRBUF_INIT;

	(void)state;
	nx_log_escaped(&sb, "/a b\n\"x\"\\\x7f\x01z");
	assert_string_equal(nx_strbuf_str(&sb), "/a b\\x0a\\x22x\\x22\\x5c\\x7f\\x01z");
	nx_strbuf_release(&sb);
}

/* GETs path; returns the status. */
static int get(unsigned port, const char *path)
{
	struct nx_http_resp r;
	int status;

	assert_int_equal(nx_http_get(port, path, &r), 0);
	status = r.status;
	nx_http_resp_free(&r);
	return status;
}

/* The server's access log at info and at warn. */
static void server_access_log(void **state)
{
	char *dir = nx_sfx_tmpdir("log");
	struct nx_server_opts o;
	struct nx_server *s;
	unsigned port;
	char *got;

	(void)state;
	nx_sfx_opts(&o, dir);
	o.quiet = false;
	nx_log_set_sink(capture, NULL);
	s = nx_sfx_start(&o, &port);
	assert_non_null(s);

	nx_log_set_level(NX_LOG_INFO);
	assert_int_equal(get(port, "/api/v1/health"), 200);
	int status = get(port, "/api/v1/no\x01such");
	assert_true(status == 404 || status == 400);
	nx_server_stop(s); /* every request completed and logged */
	got = take_lines();
	assert_non_null(strstr(got, "info neuron-explorer api: GET \"/api/v1/health\" 200 "));
	assert_non_null(strstr(got, "info neuron-explorer api: GET \"/api/v1/no\\x01such\" 4"));
	free(got);

	s = nx_sfx_start(&o, &port);
	assert_non_null(s);
	nx_log_set_level(NX_LOG_WARN);
	assert_int_equal(get(port, "/api/v1/health"), 200);
	nx_server_stop(s);
	got = take_lines();
	assert_null(strstr(got, "/api/v1/health"));
	free(got);

	/* at debug, the opening of a profile's database too */
	assert_int_equal(nx_sfx_make_profile(dir, "k", 10), 0);
	s = nx_sfx_start(&o, &port);
	assert_non_null(s);
	nx_log_set_level(NX_LOG_DEBUG);
	json_t *j = nx_sfx_query(port, "k", "SELECT 1 AS one", &status);
	assert_non_null(j);
	assert_int_equal(status, 200);
	json_decref(j);
	nx_server_stop(s);
	got = take_lines();
	assert_non_null(strstr(got, "debug neuron-explorer api: profile 'k' opened from "));
	assert_non_null(strstr(got, "info neuron-explorer api: POST \"/api/v1/db/k/_search\" 200 "));
	free(got);

	nx_log_set_level(NX_LOG_INFO);
	nx_log_set_sink(NULL, NULL);
	free(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(level_names),
		cmocka_unit_test(filter_and_sink),
		cmocka_unit_test(escaping),
		cmocka_unit_test(server_access_log),
	};
	return nx_test_done(cmocka_run_group_tests(tests, NULL, NULL));
}
