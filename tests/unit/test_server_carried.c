/* SPDX-License-Identifier: MIT
 * test_server_carried.c: the timeline cache that `view` builds into a profile before
 * publishing it (server/lod_carried.c), and the counters' pyramid (tl.ctr_lod), on real
 * servers (free loopback ports) over profiles ingested by the real binary:
 *   - a profile ingested by `view` carries its cache, stamped as carried, and a server
 *     answers its first timeline request from it without building one;
 *   - that cache, and the one built the same way into a larger profile whose wide
 *     windows come from the pyramid, give the replies a server gives from the cache it
 *     builds itself, for a set of windows of every timeline endpoint;
 *   - a carried cache with an old stamp, another format, a truncated database or no
 *     stamp is not used: the server logs why and builds its own; one damaged while
 *     served likewise, and the profile is never written;
 *   - the counters' replies from the pyramid (wide windows) and from the cache's values
 *     (narrow ones) equal those a server without a cache computes from the profile's
 *     tables at full resolution;
 *   - the build's bounds from the environment: bad values refused, the smallest slices
 *     giving the same cache. */
#include "common/compat.h"
#include "server/server.h"
#include "server/lod_carried.h"
#include "db/duck.h"
#include "helper/asserts.h"
#include "helper/fixture.h"
#include "helper/http_client.h"
#include "helper/profile_db.h"
#include "helper/server_fixture.h"

#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>
#include <jansson.h>

#define NWIN 9

static char *data_dir, *log_path, *saved;
/* the profiles whose carried cache is compared with the server's own: "v" (ingested by
 * view) and "t" (the timeline profile, with a pyramid, its cache built as view does) */
static const char *const names[2] = { "v", "t" };
/* their windows, and the replies from the carried caches */
static char *want[2][NWIN];
static char *paths[2][NWIN];

/* "c": counters only, three semaphores on two cores, one value per time. */
static int make_counter_profile(void)
{
	char *sql = NULL;
	int rc;

	if (nx_test_sh("mkdir -p '%s/profiles/global/c@latest'", data_dir) ||
	    asprintf(&sql, "COPY (SELECT (i %% 2)::BIGINT AS pcore_idx, (i * 37 + i %% 3)::BIGINT "
			   "AS timestamp, (i %% 3)::BIGINT AS id, ((i * 7919) %% 101)::DOUBLE / 4 AS "
			   "value FROM range(60000) t(i)) TO '%s/profiles/global/c@latest/"
			   "SemaphoreUpdate.parquet' (FORMAT parquet, ROW_GROUP_SIZE 8192)",
		     data_dir) < 0)
		return -1;
	rc = nx_sfx_sql(sql);
	free(sql);
	return rc;
}

/* "v": the fixture pair ingested by `view`. */
static int ingest_with_view(void)
{
	struct nx_fixture_opts fo;
	struct nx_err err = { 0 };
	char *in = nx_test_dir("carried-in");
	int rc;

	nx_fixture_opts_default(&fo);
	fo.with_debug_info = true;
	rc = !in || nx_fixture_write(in, &fo, &err);
	if (!rc)
		rc = nx_test_sh("'%s' view -n '%s/fixture.neff' -s '%s/fixture.ntff' --data-path '%s' "
				"--display-name v --ingest-only > '%s.view' 2>&1",
				nx_test_bin(), in, in, data_dir, data_dir);
	free(in);
	return rc;
}

/* "t": the timeline profile, written in a staging directory where its cache is built
 * as view builds it (nx_lod_build_carried), then renamed into place as view publishes. */
static int make_timeline_profile(void)
{
	char *stage = NULL, *dir = NULL;
	struct nx_err err = { 0 };
	uint64_t events = 0;
	int rc;

	if (asprintf(&stage, "%s.stage", data_dir) < 0 ||
	    asprintf(&dir, "%s/profiles/global/t@latest", stage) < 0)
		return -1;
	rc = nx_sfx_make_timeline_profile(stage, "t", true) ||
	     nx_lod_build_carried(dir, "t", &events, NULL, &err) || events != 34000 ||
	     nx_test_sh("mv '%s' '%s/profiles/global/t@latest'", dir, data_dir);
	if (err.msg[0])
		fprintf(stderr, "%s\n", err.msg);
	free(stage);
	free(dir);
	return rc;
}

static int setup(void **state)
{
	(void)state;
	data_dir = nx_sfx_tmpdir("carried");
	if (!data_dir || asprintf(&log_path, "%s.log", data_dir) < 0 ||
	    asprintf(&saved, "%s.timeline-saved", data_dir) < 0)
		return -1;
	return make_counter_profile() || ingest_with_view() || make_timeline_profile();
}

static int teardown(void **state)
{
	(void)state;
	for (size_t k = 0; k < 2; k++)
		for (size_t i = 0; i < NWIN; i++) {
			free(want[k][i]);
			free(paths[k][i]);
		}
	free(data_dir);
	free(log_path);
	free(saved);
	return 0;
}

/* The body of GET path (status 200), caller frees. */
static char *get_body(unsigned port, const char *path)
{
	struct nx_http_resp r;
	char *body;

	assert_int_equal(nx_http_get(port, path, &r), 0);
	if (r.status != 200)
		fail_msg("GET %s: status %d: %.300s", path, r.status, r.body);
	body = strdup(r.body);
	nx_http_resp_free(&r);
	assert_non_null(body);
	return body;
}

static bool cached(unsigned port, const char *name)
{
	char *path = NULL, *body;
	json_t *j;
	bool c;

	assert_true(asprintf(&path, "/api/v1/profiles/namespace/global/profile_name/%s/timeline/"
				    "tracks", name) > 0);
	body = get_body(port, path);
	j = json_loads(body, 0, NULL);
	assert_non_null(j);
	c = json_is_true(json_object_get(j, "cached"));
	json_decref(j);
	free(body);
	free(path);
	return c;
}

/* Whether the server built a cache of profile name under the data path. */
static bool built_by_server(const char *name)
{
	return nx_test_sh("ls -d '%s/.cache/timeline/%s@'v* > /dev/null 2>&1", data_dir, name) == 0;
}

/* The windows asked of profile k: its tracks, lines, and windows of its events and
 * counters over its whole span and narrower ones. */
static void plan_windows(unsigned port, size_t k)
{
	static const char *const what[NWIN] = {
		"tracks", "lines", "timeline?t0=%lld&t1=%lld&px=100",
		"timeline?t0=%lld&t1=%lld&px=3", "timeline?t0=%lld&t1=%lld&px=2000",
		"timeline/counters?t0=%lld&t1=%lld&px=50",
		"timeline/counters?t0=%lld&t1=%lld&px=2000",
		"timeline?t0=%lld&t1=%lld&px=40", "timeline/aggregate?t0=%lld&t1=%lld",
	};
	json_t *r, *row;
	long long t0, t1;
	int status;

	r = nx_sfx_query(port, names[k], "SELECT min(start_ts), max(end_ts) FROM Instruction",
			 &status);
	assert_int_equal(status, 200);
	row = json_array_get(json_object_get(r, "rows"), 0);
	t0 = json_integer_value(json_array_get(row, 0));
	t1 = json_integer_value(json_array_get(row, 1));
	json_decref(r);
	assert_true(t1 > t0);
	for (size_t i = 0; i < NWIN; i++) {
		char *tail = NULL;
		long long a = i == 7 ? t0 + (t1 - t0) / 3 : t0, b = i == 7 ? t0 + (t1 - t0) / 2 : t1;

		assert_true(asprintf(&tail, what[i], a, b + 1) > 0);
		assert_true(asprintf(&paths[k][i], "/api/v1/profiles/namespace/global/profile_name/"
				     "%s/%s", names[k],
				     i < 2 ? (i ? "timeline/lines" : "timeline/tracks") : tail) > 0);
		free(tail);
	}
}

/* Every window of profile k answers what its carried cache answered. */
static void check_same_replies(unsigned port, size_t k)
{
	for (size_t i = 0; i < NWIN; i++) {
		char *body = get_body(port, paths[k][i]);

		if (strcmp(body, want[k][i]))
			fail_msg("GET %s:\n%.600s\nwhere the carried cache gave\n%.600s",
				 paths[k][i], body, want[k][i]);
		free(body);
	}
}

/* `view` left a cache in the profile, stamped as carried; the first request reads it
 * and nothing is built. */
static void test_view_carries_its_cache(void **state)
{
	const char *profile_fmt = "%s/profiles/global/v@latest/.timeline";
	struct nx_server *s;
	unsigned port;

	(void)state;
	assert_int_equal(nx_test_sh("grep -q '^  timeline_cache ' '%s.view'", data_dir), 0);
	assert_int_equal(nx_test_sh("d=$(printf '%s' '%s'); grep -qx 'format 12' \"$d/timeline.stamp\" && "
			    "grep -qx 'profile v' \"$d/timeline.stamp\" && "
			    "grep -qx 'version carried' \"$d/timeline.stamp\" && "
			    "grep -qx \"bytes $(stat -c %%s \"$d/timeline.duckdb\")\" "
			    "\"$d/timeline.stamp\"", profile_fmt, data_dir), 0);
	assert_int_equal(nx_test_sh("cp -a '%s/profiles/global/v@latest/.timeline' '%s'", data_dir, saved),
			 0);
	s = nx_sfx_start_logged(data_dir, log_path, &port);
	assert_non_null(s);
	for (size_t k = 0; k < 2; k++) {
		assert_true(cached(port, names[k]));
		plan_windows(port, k);
		for (size_t i = 0; i < NWIN; i++)
			want[k][i] = get_body(port, paths[k][i]);
	}
	nx_sfx_stop_logged(s);
	assert_false(built_by_server("v"));
	assert_false(built_by_server("t"));
	assert_false(nx_sfx_logged(log_path, "the timeline cache of profile"));
	/* "t"'s wide windows come from its pyramid */
	assert_non_null(strstr(want[1][2], "\"lod\":true"));
}

/* The cache the server built of profile name, attached as tl to a database of its own
 * (*path gets its file). */
static struct nx_duck *open_server_cache(const char *name, char *path, size_t size)
{
	struct nx_duck *d = NULL;
	struct nx_err err = { 0 };
	char *sql = NULL;
	FILE *p;

	assert_true(asprintf(&sql, "ls -d '%s/.cache/timeline/'%s@v*/timeline.duckdb", data_dir,
			     name) > 0);
	p = popen(sql, "r");
	free(sql);
	assert_non_null(p);
	assert_non_null(fgets(path, (int)size, p));
	pclose(p);
	path[strcspn(path, "\n")] = '\0';
	assert_true(asprintf(&sql, "ATTACH '%s' AS tl (READ_ONLY)", path) > 0);
	if (nx_duck_open(&d, 1, NULL, &err) || nx_duck_exec(d, sql, &err))
		fail_msg("%s: %s", path, err.msg);
	free(sql);
	return d;
}

/* The value of query sql over the cache the server built of profile name. */
static int64_t server_cache_i64(const char *name, const char *sql)
{
	struct nx_err err = { 0 };
	char path[512];
	struct nx_duck *d = open_server_cache(name, path, sizeof(path));
	int64_t n = -1;

	if (nx_duck_query_i64(d, sql, &n, &err))
		fail_msg("%s: %s", path, err.msg);
	nx_duck_close(d);
	return n;
}

/* The cache a server builds itself (the carried one set aside) answers the same, byte for
 * byte, and so does one whose events of the tables in start order are read in place from
 * the profile (NX_LOD_EVENTS_IN_PLACE=1): no tl.ev0 then; and one whose tl.ev<s> keep
 * their text as VARCHAR (NX_LOD_TEXT_COLUMNS=1), where the others hold ENUMs. */
static void test_same_as_the_servers_own(void **state)
{
	static const char enum_sql[] = "SELECT count(*) FROM duckdb_columns() WHERE "
				       "database_name = 'tl' AND table_name = 'ev0' AND "
				       "column_name IN ('track', 'label') AND data_type LIKE 'ENUM%'";
	struct nx_server *s;
	unsigned port;

	(void)state;
	for (int way = 0; way < 3; way++) {
		bool in_place = way == 1, text = way == 2;

		for (size_t k = 0; k < 2; k++)
			assert_int_equal(nx_test_sh("mv '%s/profiles/global/%s@latest/.timeline' "
						    "'%s.away-%s'", data_dir, names[k], data_dir,
						    names[k]), 0);
		if (in_place)
			setenv("NX_LOD_EVENTS_IN_PLACE", "1", 1);
		if (text)
			setenv("NX_LOD_TEXT_COLUMNS", "1", 1);
		s = nx_sfx_start_logged(data_dir, log_path, &port);
		assert_non_null(s);
		for (size_t k = 0; k < 2; k++) {
			assert_true(cached(port, names[k]));
			check_same_replies(port, k);
		}
		nx_sfx_stop_logged(s);
		unsetenv("NX_LOD_EVENTS_IN_PLACE");
		unsetenv("NX_LOD_TEXT_COLUMNS");
		for (size_t k = 0; k < 2; k++) {
			assert_true(built_by_server(names[k]));
			/* tl.ev0 unless read in place, which "v"'s Instruction is (in start
			 * order; "t"'s is not, so it is copied either way) */
			assert_int_equal(server_cache_i64(names[k], "SELECT count(*) FROM "
							  "duckdb_tables() WHERE database_name = "
							  "'tl' AND table_name = 'ev0'"),
					 !in_place || k == 1);
			assert_int_equal(server_cache_i64(names[k], "SELECT ordered::INT FROM tl.meta "
							  "WHERE src = 0"), k == 0);
			/* the copied events' track and label as ENUMs, unless text */
			if (!in_place || k == 1)
				assert_int_equal(server_cache_i64(names[k], enum_sql), text ? 0 : 2);
			assert_int_equal(nx_test_sh("mv '%s.away-%s' '%s/profiles/global/%s@latest/"
						    ".timeline' && rm -rf '%s/.cache/timeline'/%s@v*",
						    data_dir, names[k], data_dir, names[k], data_dir,
						    names[k]), 0);
		}
	}
}

/* A carried cache that does not pass its checks is left in place and not used: the
 * server logs why, builds its own, and answers the same. */
static void test_unusable_carried_cache(void **state)
{
	static const struct {
		const char *what, *cmd, *logged;
	} cases[] = {
		{ "a stamp of an older version", "sed -i 's/^version carried$/version 1-2-3/' "
		  "\"$T\"/timeline.stamp", "it was built for another version of the profile" },
		{ "an older format", "sed -i 's/^format 12$/format 9/' \"$T\"/timeline.stamp",
		  "it is in format 9, not 12" },
		{ "another profile's", "sed -i 's/^profile v$/profile w/' \"$T\"/timeline.stamp",
		  "it was built for profile 'w'" },
		{ "truncated", "truncate -s 16384 \"$T\"/timeline.duckdb",
		  "16384 bytes where its stamp says" },
		{ "no stamp", "rm \"$T\"/timeline.stamp", "it has no stamp" },
		{ "garbage of the same size",
		  "head -c $(stat -c %s \"$T\"/timeline.duckdb) /dev/urandom > \"$T\"/g && "
		  "mv \"$T\"/g \"$T\"/timeline.duckdb", "timeline.duckdb cannot be read" },
	};
	unsigned port;

	(void)state;
	for (size_t i = 0; i < NX_ARRAY_SIZE(cases); i++) {
		struct nx_server *s;

		if (nx_test_sh("T='%s/profiles/global/v@latest/.timeline'; rm -rf \"$T\" && cp -a '%s' "
		       "\"$T\" && %s", data_dir, saved, cases[i].cmd))
			fail_msg("%s: the command failed", cases[i].what);
		s = nx_sfx_start_logged(data_dir, log_path, &port);
		assert_non_null(s);
		check_same_replies(port, 0);
		nx_sfx_stop_logged(s);
		if (!nx_sfx_logged(log_path, "the timeline cache of profile 'v' was not used "
					     "(the one in the profile") ||
		    !nx_sfx_logged(log_path, cases[i].logged) ||
		    !nx_sfx_logged(log_path, "built again"))
			fail_msg("%s: not logged as such", cases[i].what);
		assert_true(built_by_server("v"));
		assert_int_equal(nx_test_sh("test -d '%s/profiles/global/v@latest/.timeline' && "
				    "rm -rf '%s/.cache/timeline'/v@v*", data_dir, data_dir), 0);
	}
	assert_int_equal(nx_test_sh("rm -rf '%s/profiles/global/v@latest/.timeline' && cp -a '%s' "
			    "'%s/profiles/global/v@latest/.timeline'", data_dir, saved, data_dir), 0);
}

/* A carried cache truncated while served: the server stops using it (the profile
 * keeps it), builds its own and answers the same. */
static void test_carried_damaged_while_served(void **state)
{
	struct nx_server *s;
	unsigned port;

	(void)state;
	s = nx_sfx_start_logged(data_dir, log_path, &port);
	assert_non_null(s);
	check_same_replies(port, 0);
	assert_false(built_by_server("v"));
	assert_int_equal(nx_test_sh("truncate -s 8192 '%s/profiles/global/v@latest/.timeline/"
			    "timeline.duckdb'", data_dir), 0);
	check_same_replies(port, 0);
	check_same_replies(port, 0);
	nx_sfx_stop_logged(s);
	assert_true(built_by_server("v"));
	assert_true(nx_sfx_logged(log_path, "to 8192 bytes while served") ||
		    nx_sfx_logged(log_path, "was not used (the one in"));
	assert_int_equal(nx_test_sh("test -f '%s/profiles/global/v@latest/.timeline/timeline.duckdb'",
			    data_dir), 0);
}

/* The finest and coarsest level of the counters' pyramid of "c"'s cache. */
static void pyramid_levels(int64_t *lo, int64_t *hi)
{
	struct nx_err err = { 0 };
	char path[512];
	struct nx_duck *d = open_server_cache("c", path, sizeof(path));

	if (nx_duck_query_i64(d, "SELECT lo FROM tl.meta WHERE src = -1", lo, &err) ||
	    nx_duck_query_i64(d, "SELECT hi FROM tl.meta WHERE src = -1", hi, &err))
		fail_msg("%s: %s", path, err.msg);
	nx_duck_close(d);
}

/* The counters of "c" from its cache (pyramid or values) and from its table, for
 * windows whose buckets are coarser than the pyramid's finest level, finer, and wider
 * than its coarsest: the same replies. */
static void test_counter_pyramid_matches_full_resolution(void **state)
{
	static const struct {
		long long t0, t1, px;
	} win[] = {
		{ 0, 2220100, 100 }, { 0, 2220100, 1000 }, { 0, 2220100, 7 },
		{ 1000000, 1300000, 10 }, { 1000000, 1300000, 300 }, { 500000, 501000, 50 },
		{ -1099511627776, 1099511627776, 1 }, { 1900000, 2500000, 64 },
	};
	char *from_cache[NX_ARRAY_SIZE(win)], *path = NULL;
	int64_t lo = 0, hi = 0;
	bool finer = false, coarser = false;
	struct nx_server *s;
	unsigned port;

	(void)state;
	s = nx_sfx_start_logged(data_dir, log_path, &port);
	assert_non_null(s);
	assert_true(cached(port, "c"));
	for (size_t i = 0; i < NX_ARRAY_SIZE(win); i++) {
		assert_true(asprintf(&path, "/api/v1/profiles/namespace/global/profile_name/c/"
				     "timeline/counters?t0=%lld&t1=%lld&px=%lld", win[i].t0,
				     win[i].t1, win[i].px) > 0);
		from_cache[i] = get_body(port, path);
		free(path);
	}
	nx_sfx_stop_logged(s);
	pyramid_levels(&lo, &hi);
	assert_true(lo > 0 && lo < hi);
	for (size_t i = 0; i < NX_ARRAY_SIZE(win); i++) {
		json_t *j = json_loads(from_cache[i], 0, NULL);
		json_int_t bucket = json_integer_value(json_object_get(j, "bucket"));

		assert_true(json_array_size(json_object_get(j, "series")) == 6);
		finer |= bucket < ((json_int_t)1 << lo);
		coarser |= bucket >= ((json_int_t)1 << lo);
		json_decref(j);
	}
	assert_true(finer && coarser);
	/* no cache: the server reads the profile's table */
	assert_int_equal(nx_test_sh("mv '%s/.cache/timeline' '%s/.cache/timeline.away' && "
			    "ln -s /proc/self/nonexistent '%s/.cache/timeline'", data_dir, data_dir,
			    data_dir), 0);
	s = nx_sfx_start_logged(data_dir, log_path, &port);
	assert_non_null(s);
	assert_false(cached(port, "c"));
	for (size_t i = 0; i < NX_ARRAY_SIZE(win); i++) {
		char *body;

		assert_true(asprintf(&path, "/api/v1/profiles/namespace/global/profile_name/c/"
				     "timeline/counters?t0=%lld&t1=%lld&px=%lld", win[i].t0,
				     win[i].t1, win[i].px) > 0);
		body = get_body(port, path);
		if (strcmp(body, from_cache[i]))
			fail_msg("GET %s:\n%.600s\nwhere the cache gave\n%.600s", path, body,
				 from_cache[i]);
		free(body);
		free(path);
		free(from_cache[i]);
	}
	nx_sfx_stop_logged(s);
	assert_int_equal(nx_test_sh("rm '%s/.cache/timeline' && mv '%s/.cache/timeline.away' "
			    "'%s/.cache/timeline'", data_dir, data_dir, data_dir), 0);
}

/* The build's bounds from the environment (server/lod.h): a value that is not one is
 * refused, naming the variable, and leaves no cache; the smallest slices, with DuckDB's
 * allocator purged every millisecond, give the cache the default ones give, row for row. */
static void test_bounds_from_environment(void **state)
{
	static const char *const bad[][2] = {
		{ "NX_LOD_CHUNK_ROWS", "abc" },       { "NX_LOD_CHUNK_ROWS", "9999" },
		{ "NX_LOD_CHUNK_ROWS", "100000001" }, { "NX_LOD_CHUNK_ROWS", "12x" },
		{ "NX_LOD_CHUNK_ROWS", "-500000" },   { "NX_LOD_SLICE_GROUPS", "-1" },
		{ "NX_LOD_SLICE_GROUPS", "64k" },     { "NX_LOD_SLICE_GROUPS", "1000001" },
		{ "NX_LOD_PURGE_MS", "-1" },          { "NX_LOD_PURGE_MS", "100ms" },
		{ "NX_LOD_PURGE_MS", "60001" },
		{ "NX_LOD_MEMORY_LIMIT", "160MB..................................." },
		{ "NX_LOD_MEMORY_LIMIT", "lots" },    { "NX_LOD_MEMORY_LIMIT", "160" },
		{ "NX_LOD_MEMORY_LIMIT", "0MB" },
	};
	static const char *const tables[] = { "lod0", "tracks", "meta", "ctr", "ctr_lod" };
	char *copy[2] = { NULL, NULL };
	struct nx_err err = { 0 };
	struct nx_duck *d = NULL;
	uint64_t events = 0;

	(void)state;
	for (int k = 0; k < 2; k++) {
		assert_true(asprintf(&copy[k], "%s.bounds%d/profiles/global/t@latest", data_dir,
				     k) > 0);
		assert_int_equal(nx_test_sh("mkdir -p '%s' && cp '%s/profiles/global/t@latest'/*"
					    ".parquet '%s/'", copy[k], data_dir, copy[k]), 0);
	}
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		nx_err_clear(&err);
		assert_int_equal(setenv(bad[i][0], bad[i][1], 1), 0);
		assert_int_equal(nx_lod_build_carried(copy[0], "t", &events, NULL, &err), NX_EUSAGE);
		unsetenv(bad[i][0]);
		if (!strstr(err.msg, bad[i][0]))
			fail_msg("%s=%s: %s", bad[i][0], bad[i][1], err.msg);
		assert_int_equal(nx_test_sh("test ! -e '%s/.timeline'", copy[0]), 0);
	}
	nx_err_clear(&err);
	assert_int_equal(nx_lod_build_carried(copy[0], "t", &events, NULL, &err), 0);
	/* and DuckDB's allocator purged every millisecond while it builds */
	assert_int_equal(setenv("NX_LOD_CHUNK_ROWS", "10000", 1), 0);
	assert_int_equal(setenv("NX_LOD_PURGE_MS", "1", 1), 0);
	assert_int_equal(nx_lod_build_carried(copy[1], "t", &events, NULL, &err), 0);
	unsetenv("NX_LOD_CHUNK_ROWS");
	unsetenv("NX_LOD_PURGE_MS");
	assert_int_equal(events, 34000);
	assert_int_equal(nx_duck_open(&d, 1, "256MB", &err), 0);
	nx_test_exf(d, "ATTACH '%s/.timeline/timeline.duckdb' AS a (READ_ONLY); ATTACH "
		    "'%s/.timeline/timeline.duckdb' AS b (READ_ONLY)", copy[0], copy[1]);
	for (size_t i = 0; i < sizeof(tables) / sizeof(tables[0]); i++) {
		assert_true(nx_test_qi(d, "SELECT count(*) FROM a.%s", tables[i]) > 0);
		assert_int_equal(nx_test_qi(d, "SELECT count(*) FROM (SELECT * FROM a.%s EXCEPT "
					    "ALL SELECT * FROM b.%s)", tables[i], tables[i]), 0);
		assert_int_equal(nx_test_qi(d, "SELECT count(*) FROM (SELECT * FROM b.%s EXCEPT "
					    "ALL SELECT * FROM a.%s)", tables[i], tables[i]), 0);
	}
	nx_duck_close(d);
	assert_int_equal(nx_test_sh("rm -rf '%s.bounds0' '%s.bounds1'", data_dir, data_dir), 0);
	free(copy[0]);
	free(copy[1]);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_view_carries_its_cache),
		cmocka_unit_test(test_same_as_the_servers_own),
		cmocka_unit_test(test_unusable_carried_cache),
		cmocka_unit_test(test_carried_damaged_while_served),
		cmocka_unit_test(test_counter_pyramid_matches_full_resolution),
		cmocka_unit_test(test_bounds_from_environment),
	};

	return nx_test_done(cmocka_run_group_tests_name("server_carried", tests, setup, teardown));
}
