/* SPDX-License-Identifier: MIT
 * test_server_cache.c: the timeline cache's stamp and what the server does with a cache
 * it cannot trust (lod.h, lod_cache.c, timeline_cache.c), on real servers (free loopback
 * ports) over real profiles: a cache of another profile copied in, one truncated or
 * overwritten before the server starts, one truncated while it is served, and a build
 * that fails for lack of space are each noticed, logged with the reason and built again
 * (the failed one at a later request); what earlier servers left (the private directory
 * of a dead one, the cache of a deleted profile) is removed when a server starts, and
 * what a live process owns is kept. Every reply is checked against the profile's own
 * rows, so a wrong cache cannot pass. */
#include "common/compat.h"
#include "server/server.h"
#include "helper/asserts.h"
#include "helper/http_client.h"
#include "helper/server_fixture.h"

#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>
#include <jansson.h>

static char *data_dir, *log_path;

/* Runs a shell command built from fmt; its exit status. */
static int sh(const char *fmt, ...)
{
	char *cmd = NULL;
	va_list ap;
	int rc;

	va_start(ap, fmt);
	rc = vasprintf(&cmd, fmt, ap);
	va_end(ap);
	assert_true(rc > 0);
	rc = system(cmd);
	free(cmd);
	return rc;
}

static int setup(void **state)
{
	(void)state;
	data_dir = nx_sfx_tmpdir("cache");
	if (!data_dir || asprintf(&log_path, "%s.log", data_dir) < 0)
		return -1;
	/* "a": the timeline profile; "b": the same without DMA transfers, so a cache of
	 * one shown for the other is seen at once */
	if (nx_sfx_make_timeline_profile(data_dir, "a", true) ||
	    nx_sfx_make_timeline_profile(data_dir, "b", true) ||
	    sh("rm '%s/profiles/global/b@latest/DmaPacketAggregated.parquet'", data_dir))
		return -1;
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	free(data_dir);
	free(log_path);
	return 0;
}

/* A server on data_dir that logs to log_path and retries a failed build at once. */
static struct nx_server *start_server(unsigned *port)
{
	struct nx_server *s = nx_sfx_start_logged(data_dir, log_path, port);

	assert_non_null(s);
	return s;
}

static void stop_server(struct nx_server *s)
{
	nx_sfx_stop_logged(s);
}

static bool logged(const char *text)
{
	return nx_sfx_logged(log_path, text);
}

static json_t *get_json(unsigned port, const char *path)
{
	struct nx_http_resp r;
	json_t *j;

	assert_int_equal(nx_http_get(port, path, &r), 0);
	if (r.status != 200)
		fail_msg("GET %s: status %d: %.300s", path, r.status, r.body);
	j = json_loads(r.body, 0, NULL);
	assert_non_null(j);
	nx_http_resp_free(&r);
	return j;
}

/* Checks the timeline of profile name on port against its tables: the tracks (cached
 * or not, as want_cached) count the events of Instruction and DmaPacketAggregated, and
 * a window of the whole profile holds every instruction. */
static void check_profile(unsigned port, const char *name, bool want_cached)
{
	char path[256];
	json_t *r, *row, *src, *t;
	long long instr = 0, dma = 0, n = 0;
	size_t i;
	int status;
	bool has_dma;

	snprintf(path, sizeof(path), "/api/v1/profiles/namespace/global/profile_name/%s/timeline/"
		 "tracks", name);
	r = get_json(port, path);
	if (json_is_true(json_object_get(r, "cached")) != want_cached)
		fail_msg("%s: cached is %s", name, want_cached ? "false" : "true");
	json_array_foreach(json_object_get(r, "rows"), i, row) {
		const char *kind = json_string_value(json_array_get(row, 0));

		if (!strcmp(kind, "instruction"))
			instr += json_integer_value(json_array_get(row, 3));
		if (!strcmp(kind, "dma"))
			dma += json_integer_value(json_array_get(row, 3));
	}
	json_decref(r);
	r = nx_sfx_query(port, name, "SELECT count(*) FROM Instruction", &status);
	assert_int_equal(status, 200);
	assert_int_equal(instr, json_integer_value(json_array_get(json_array_get(
					json_object_get(r, "rows"), 0), 0)));
	json_decref(r);
	has_dma = !strcmp(name, "a");
	assert_int_equal(dma, has_dma ? 1000 : 0);
	/* a window of everything, from the pyramid: the buckets count every instruction */
	snprintf(path, sizeof(path), "/api/v1/profiles/namespace/global/profile_name/%s/timeline"
		 "?t0=0&t1=524288&px=100", name);
	r = get_json(port, path);
	src = json_object_get(r, "instruction");
	json_array_foreach(json_object_get(src, "tracks"), i, t) {
		json_t *c = json_object_get(t, "count"), *v;
		size_t k;

		json_array_foreach(c, k, v)
			n += json_integer_value(v);
	}
	assert_int_equal(n, instr);
	assert_int_equal(json_object_get(r, "dma") != NULL, has_dma);
	json_decref(r);
}

/* The cache directory of profile name (its only one), into buf. */
static void cache_dir(const char *name, char *buf, size_t n)
{
	char *cmd = NULL;
	FILE *p;

	assert_true(asprintf(&cmd, "ls -d '%s/.cache/timeline/%s@'v*", data_dir, name) > 0);
	p = popen(cmd, "r");
	assert_non_null(p);
	assert_non_null(fgets(buf, (int)n, p));
	buf[strcspn(buf, "\n")] = '\0';
	pclose(p);
	free(cmd);
}

/* A first server builds both caches; they carry their stamp. */
static void test_built_with_a_stamp(void **state)
{
	char dir[512];
	unsigned port;
	struct nx_server *s = start_server(&port);

	(void)state;
	check_profile(port, "a", true);
	check_profile(port, "b", true);
	stop_server(s);
	cache_dir("a", dir, sizeof(dir));
	assert_int_equal(sh("grep -qx 'neuron-explorer timeline cache' '%s/timeline.stamp' && "
			    "grep -qx 'format 12' '%s/timeline.stamp' && "
			    "grep -qx 'profile a' '%s/timeline.stamp' && "
			    "grep -qx \"bytes $(stat -c %%s '%s/timeline.duckdb')\" "
			    "'%s/timeline.stamp'", dir, dir, dir, dir, dir), 0);
}

/* Caches damaged or swapped while no server ran: each is noticed when the next server
 * opens it, logged, and built again; the replies are the profile's own. */
static void test_found_unusable(void **state)
{
	static const struct {
		const char *what, *cmd, *logged;
	} cases[] = {
		{ "another profile's cache copied in",
		  "cp \"$A\"/timeline.duckdb \"$A\"/timeline.stamp \"$B\"/",
		  "was built for profile 'a'" },
		{ "another profile's database alone copied in",
		  "cp \"$A\"/timeline.duckdb \"$B\"/", "bytes where its stamp says" },
		{ "truncated", "truncate -s 65536 \"$B\"/timeline.duckdb",
		  "65536 bytes where its stamp says" },
		{ "garbage of the same size",
		  "head -c $(stat -c %s \"$B\"/timeline.duckdb) /dev/urandom > \"$B\"/g && "
		  "mv \"$B\"/g \"$B\"/timeline.duckdb", "timeline.duckdb cannot be read" },
		{ "garbage after the header",
		  "dd if=/dev/urandom of=\"$B\"/timeline.duckdb bs=4096 seek=3 "
		  "count=$(( $(stat -c %s \"$B\"/timeline.duckdb) / 4096 - 3 )) conv=notrunc "
		  "2>/dev/null", "" },
		{ "the stamp removed (a build that did not finish)", "rm \"$B\"/timeline.stamp",
		  "it has no stamp" },
		{ "a stamp of another format",
		  "sed -i 's/^format 12$/format 3/' \"$B\"/timeline.stamp",
		  "it is in format 3, not 12" },
		{ "the stamp of another version",
		  "sed -i 's/^version /version 1/' \"$B\"/timeline.stamp",
		  "another version of the profile" },
	};
	char a[512], b[512];
	unsigned port;

	(void)state;
	for (size_t i = 0; i < NX_ARRAY_SIZE(cases); i++) {
		struct nx_server *s;

		cache_dir("a", a, sizeof(a));
		cache_dir("b", b, sizeof(b));
		if (sh("A='%s' B='%s'; %s", a, b, cases[i].cmd))
			fail_msg("%s: the command failed", cases[i].what);
		s = start_server(&port);
		check_profile(port, "b", true);
		check_profile(port, "a", true);
		stop_server(s);
		if (!logged("the timeline cache of profile 'b' ") || !logged(cases[i].logged))
			fail_msg("%s: not logged as such", cases[i].what);
	}
}

/* A cache truncated while it is served: the request that meets it gets its reply from
 * a cache built again, and so do the next ones. */
static void test_truncated_while_served(void **state)
{
	char b[512];
	unsigned port;
	struct nx_server *s = start_server(&port);

	(void)state;
	check_profile(port, "b", true);
	cache_dir("b", b, sizeof(b));
	assert_int_equal(sh("truncate -s 8192 '%s/timeline.duckdb'", b), 0);
	check_profile(port, "b", true);
	check_profile(port, "b", true);
	stop_server(s);
	assert_true(logged("is damaged: "));
	assert_true(logged("changed from"));
	assert_true(logged("to 8192 bytes while served"));
}

/* A build that fails for lack of space (a file size limit stands for a full disk)
 * leaves nothing behind; the profile's tables serve meanwhile; a later request builds
 * the cache. */
static void test_failed_build_is_retried(void **state)
{
	struct rlimit old, small;
	struct nx_server *s;
	unsigned port;
	struct stat st;

	(void)state;
	assert_int_equal(sh("rm -rf '%s/.cache/timeline'/a@v*", data_dir), 0);
	s = start_server(&port);
	signal(SIGXFSZ, SIG_IGN); /* a write beyond the limit fails with EFBIG instead */
	assert_int_equal(getrlimit(RLIMIT_FSIZE, &old), 0);
	assert_int_equal(stat(log_path, &st), 0);
	small = old;
	small.rlim_cur = (rlim_t)st.st_size + 256 * 1024; /* the log still fits */
	assert_int_equal(setrlimit(RLIMIT_FSIZE, &small), 0);
	check_profile(port, "a", false);
	assert_int_equal(setrlimit(RLIMIT_FSIZE, &old), 0);
	signal(SIGXFSZ, SIG_DFL);
	assert_true(logged("the timeline cache of profile 'a' cannot be built: "));
	assert_true(logged("tried again after"));
	assert_int_not_equal(sh("ls -a '%s/.cache/timeline' | grep -q '^\\.a@'", data_dir), 0);
	check_profile(port, "a", true);
	stop_server(s);
}

/* What earlier servers left: the private directories of dead processes and the caches
 * of deleted profiles go when a server starts; a live process's directory, and the
 * caches of profiles that exist (any version), stay. */
static void test_leftovers_cleaned_at_start(void **state)
{
	char host[256], *dead = NULL, *live = NULL, *old = NULL, *gone = NULL, *other = NULL;
	char *legacy = NULL;
	struct nx_server *s;
	unsigned port;
	pid_t child;

	(void)state;
	if (gethostname(host, sizeof(host)) != 0 || !host[0])
		snprintf(host, sizeof(host), "localhost");
	for (char *c = host; *c; c++)
		if (*c == '/' || *c == '-')
			*c = '_';
	{
		/* a process that is gone for sure: a shell that said its PID and ended
		 * (popen, not fork: fork would run DuckDB's prefork handlers, which TSan's
		 * lock tracking cannot follow) */
		FILE *f = popen("echo $$", "r");
		int pid = 0;

		assert_non_null(f);
		assert_int_equal(fscanf(f, "%d", &pid), 1);
		assert_int_equal(pclose(f), 0);
		child = (pid_t)pid;
		assert_true(child > 0);
	}
	assert_true(asprintf(&dead, "%s/.cache/timeline/.a@v4-1-2-3.000000000.tmp-%s-%d-0",
			     data_dir, host, (int)child) > 0);
	assert_true(asprintf(&old, "%s/.cache/timeline/.b@v4-1-2-3.000000000.old-%s-%d-7",
			     data_dir, host, (int)child) > 0);
	assert_true(asprintf(&live, "%s/.cache/timeline/.a@v4-1-2-3.000000000.tmp-%s-%d-1",
			     data_dir, host, (int)getpid()) > 0);
	assert_true(asprintf(&legacy, "%s/.cache/timeline/.b@v3-1-2-3.000000000.tmp-%d-4",
			     data_dir, (int)child) > 0);
	assert_true(asprintf(&gone, "%s/.cache/timeline/deleted@v4-1-2-3.000000000", data_dir) > 0);
	assert_true(asprintf(&other, "%s/.cache/timeline/a@v3-1-2-3.000000000", data_dir) > 0);
	assert_int_equal(sh("mkdir -p '%s' '%s' '%s' '%s' '%s' '%s' && touch "
			    "'%s/timeline.duckdb' '%s/timeline.duckdb'", dead, old, legacy, live, gone,
			    other, dead, gone), 0);
	s = start_server(&port);
	stop_server(s);
	assert_int_not_equal(access(dead, F_OK), 0);
	assert_int_not_equal(access(old, F_OK), 0);
	assert_int_not_equal(access(legacy, F_OK), 0);
	assert_int_not_equal(access(gone, F_OK), 0);
	assert_int_equal(access(live, F_OK), 0);
	assert_int_equal(access(other, F_OK), 0);
	assert_true(logged("the private directory of a process that is gone"));
	assert_true(logged("the cache of a deleted profile"));
	assert_int_equal(sh("rm -rf '%s' '%s'", live, other), 0);
	free(dead);
	free(old);
	free(legacy);
	free(live);
	free(gone);
	free(other);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_built_with_a_stamp),
		cmocka_unit_test(test_found_unusable),
		cmocka_unit_test(test_truncated_while_served),
		cmocka_unit_test(test_failed_build_is_retried),
		cmocka_unit_test(test_leftovers_cleaned_at_start),
	};

	return nx_test_done(cmocka_run_group_tests_name("server_cache", tests, setup, teardown));
}
