/* SPDX-License-Identifier: MIT
 * test_server_timeline.c: the web UI's timeline endpoints end to end on a real server
 * (free loopback port) and real parquet profiles written by DuckDB: the timeline cache
 * (lod.h) is built on first use, and every window's reply, whichever way it was made
 * (pyramid level, rows bucketed in C, rows bucketed by DuckDB after a dense burst, raw
 * rows), equals what this test computes itself from the window's rows fetched with
 * _search (replies give times as offsets from the window's start, ends as durations).
 * The same rows written out of start order (so the cache sorts them) give the same
 * replies. Also: counters, the box-selection aggregate (durations clipped to the box),
 * the search's comparisons and its source_location field, the per-line summary, and the profile's own tables serving when there is no
 * cache. */
#include "common/compat.h"
#include "server/server.h"
#include "helper/asserts.h"
#include "helper/http_client.h"
#include "helper/server_fixture.h"

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

#define SPAN 400000 /* the profile runs from 0 to about this, in ns */

static char *data_dir;
static struct nx_server *srv;
static unsigned port;

static int make_profile(const char *name, bool ordered)
{
	return nx_sfx_make_timeline_profile(data_dir, name, ordered);
}

static int setup(void **state)
{
	struct nx_server_opts o;

	(void)state;
	data_dir = nx_sfx_tmpdir("timeline");
	if (!data_dir || make_profile("tl", true) || make_profile("tl-shuffled", false))
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

static json_t *get_json(const char *path)
{
	struct nx_http_resp r;
	json_error_t je;
	json_t *j;

	assert_int_equal(nx_http_get(port, path, &r), 0);
	if (r.status != 200)
		fail_msg("GET %s: status %d: %.300s", path, r.status, r.body);
	j = json_loads(r.body, 0, &je);
	if (!j)
		fail_msg("GET %s: not JSON (%s)", path, je.text);
	nx_http_resp_free(&r);
	return j;
}

static json_t *query(const char *profile, const char *sql)
{
	struct nx_http_resp r;
	char path[128];
	json_t *body = json_pack("{s:s,s:s}", "type", "databaseExplorerQuery", "query", sql), *j;
	char *txt = json_dumps(body, 0);

	snprintf(path, sizeof(path), "/api/v1/db/%s/_search", profile);
	assert_int_equal(nx_http_post_json(port, path, txt, &r), 0);
	if (r.status != 200)
		fail_msg("query %s: status %d: %.300s", sql, r.status, r.body);
	j = json_loads(r.body, 0, NULL);
	assert_non_null(j);
	nx_http_resp_free(&r);
	json_decref(body);
	free(txt);
	return j;
}

/* One bucket or event as this test computes it. */
struct ev {
	long long core, id, s, e, n, busy, last;
	char track[32], label[32];
};

static int cmp_ev(const void *a, const void *b)
{
	const struct ev *x = a, *y = b;
	int c;

	if (x->core != y->core)
		return x->core < y->core ? -1 : 1;
	if ((c = strcmp(x->track, y->track)))
		return c;
	if (x->s != y->s)
		return x->s < y->s ? -1 : 1;
	return x->id < y->id ? -1 : x->id > y->id;
}

static long long floor_div(long long a, long long b)
{
	return a / b - (a % b != 0 && (a < 0) != (b < 0));
}

/* What a window of Instruction should show: from the rows of the window (overlapping
 * it; starting in it when from_lod), per track raw events when there are at most
 * raw_limit, else per bucket of the start the longest event (ties: lowest id), count,
 * busy and last end. Returns the entries sorted. */
static struct ev *expect(const char *profile, long long t0, long long t1, long long bucket,
			 long long raw_limit, bool from_lod, size_t *n)
{
	char sql[512];
	json_t *j, *row;
	struct ev *v, *out;
	size_t nv, i, no = 0;

	snprintf(sql, sizeof(sql),
		 "SELECT pcore_idx, timeline_track, id, start_ts, end_ts, opcode FROM Instruction "
		 "WHERE %s ORDER BY pcore_idx, timeline_track, start_ts, id",
		 from_lod ? "start_ts >= %lld AND start_ts < %lld" : "start_ts < %lld AND end_ts > %lld");
	{
		char q[600];

		if (from_lod)
			snprintf(q, sizeof(q), sql, t0, t1);
		else
			snprintf(q, sizeof(q), sql, t1, t0);
		j = query(profile, q);
	}
	nv = json_array_size(json_object_get(j, "rows"));
	v = calloc(nv ? nv : 1, sizeof(*v));
	out = calloc(nv ? nv : 1, sizeof(*out));
	json_array_foreach(json_object_get(j, "rows"), i, row) {
		v[i].core = json_integer_value(json_array_get(row, 0));
		snprintf(v[i].track, sizeof(v[i].track), "%s", json_string_value(json_array_get(row, 1)));
		v[i].id = json_integer_value(json_array_get(row, 2));
		v[i].s = json_integer_value(json_array_get(row, 3));
		v[i].e = json_integer_value(json_array_get(row, 4));
		snprintf(v[i].label, sizeof(v[i].label), "%s", json_string_value(json_array_get(row, 5)));
		v[i].n = 1;
		v[i].busy = v[i].e - v[i].s;
		v[i].last = v[i].e;
	}
	json_decref(j);
	for (i = 0; i < nv;) {
		size_t k = i;

		while (k < nv && v[k].core == v[i].core && !strcmp(v[k].track, v[i].track))
			k++;
		if ((long long)(k - i) <= raw_limit && !from_lod) {
			while (i < k)
				out[no++] = v[i++];
			continue;
		}
		while (i < k) {
			struct ev b = v[i];
			long long key = floor_div(v[i].s, bucket);

			for (i++; i < k && floor_div(v[i].s, bucket) == key; i++) {
				long long d = v[i].e - v[i].s, bd = b.e - b.s;

				if (d > bd || (d == bd && v[i].id < b.id)) {
					long long n0 = b.n, busy = b.busy, last = b.last;

					b = v[i];
					b.n = n0, b.busy = busy, b.last = last;
				}
				b.n++;
				b.busy += v[i].e - v[i].s;
				if (v[i].e > b.last)
					b.last = v[i].e;
			}
			out[no++] = b;
		}
	}
	free(v);
	qsort(out, no, sizeof(*out), cmp_ev);
	*n = no;
	return out;
}

/* The instruction entries of a timeline reply, sorted; *lod says how they were made. */
static struct ev *got(json_t *r, bool *lod, bool *bins, size_t *n)
{
	json_t *src = json_object_get(r, "instruction"), *labels = json_object_get(r, "labels");
	json_t *t;
	struct ev *v = NULL;
	size_t i, nv = 0, cap = 0;
	long long t0 = json_integer_value(json_object_get(r, "t0"));

	assert_non_null(src);
	*lod = json_is_true(json_object_get(src, "lod"));
	*bins = false;
	json_array_foreach(json_object_get(src, "tracks"), i, t) {
		bool b = !strcmp(json_string_value(json_object_get(t, "mode")), "bins");
		size_t m = json_array_size(json_object_get(t, "id"));

		*bins = *bins || b;
		assert_int_equal(json_integer_value(json_object_get(t, "n")), m);
		for (size_t k = 0; k < m; k++) {
			struct ev *e;
#define AT(name) json_integer_value(json_array_get(json_object_get(t, name), k))
			if (nv == cap)
				v = realloc(v, (cap = cap ? 2 * cap : 256) * sizeof(*v));
			e = &v[nv++];
			e->core = json_integer_value(json_object_get(t, "core"));
			snprintf(e->track, sizeof(e->track), "%s", json_string_value(json_object_get(t, "track")));
			e->id = AT("id");
			e->s = t0 + AT("start");
			e->e = e->s + AT("dur");
			snprintf(e->label, sizeof(e->label), "%s",
				 json_string_value(json_array_get(labels, (size_t)AT("label"))));
			e->n = b ? AT("count") : 1;
			e->busy = b ? AT("busy") : e->e - e->s;
			e->last = b ? t0 + AT("last") : e->e;
#undef AT
		}
	}
	qsort(v, nv, sizeof(*v), cmp_ev);
	*n = nv;
	return v;
}

/* GET .../timeline for the window and compares it with expect(); returns how it was
 * made: 'L' pyramid, 'B' bucketed rows, 'R' raw rows only. */
static char check_window(const char *profile, long long t0, long long t1, int px)
{
	char path[256];
	json_t *r;
	struct ev *a, *b;
	size_t na, nb;
	bool lod, bins;
	long long bucket, s0, s1;

	snprintf(path, sizeof(path),
		 "/api/v1/profiles/namespace/global/profile_name/%s/timeline?t0=%lld&t1=%lld&px=%d",
		 profile, t0, t1, px);
	r = get_json(path);
	bucket = json_integer_value(json_object_get(r, "bucket"));
	s0 = json_integer_value(json_object_get(r, "t0"));
	s1 = json_integer_value(json_object_get(r, "t1"));
	assert_true(s0 <= t0 && s1 >= t1 && s0 % bucket == 0 && s1 % bucket == 0);
	assert_true(bucket * px >= t1 - t0 && (bucket == 1 || bucket / 2 * px < t1 - t0));
	a = got(r, &lod, &bins, &na);
	b = expect(profile, s0, s1, bucket, 3LL * px, lod, &nb);
	if (na != nb)
		fail_msg("%s [%lld, %lld) px %d (%s): %zu entries, expected %zu", profile, t0, t1, px,
			 lod ? "lod" : "rows", na, nb);
	for (size_t i = 0; i < na; i++) {
		if (a[i].core != b[i].core || strcmp(a[i].track, b[i].track) || a[i].id != b[i].id ||
		    a[i].s != b[i].s || a[i].e != b[i].e || strcmp(a[i].label, b[i].label) ||
		    a[i].n != b[i].n || a[i].busy != b[i].busy || a[i].last != b[i].last)
			fail_msg("%s [%lld, %lld) px %d entry %zu: got %lld %s id %lld [%lld, %lld) %s "
				 "n %lld busy %lld last %lld, expected id %lld [%lld, %lld) %s n %lld "
				 "busy %lld last %lld", profile, t0, t1, px, i, a[i].core, a[i].track,
				 a[i].id, a[i].s, a[i].e, a[i].label, a[i].n, a[i].busy, a[i].last,
				 b[i].id, b[i].s, b[i].e, b[i].label, b[i].n, b[i].busy, b[i].last);
	}
	free(a);
	free(b);
	json_decref(r);
	return lod ? 'L' : bins ? 'B' : 'R';
}

static void test_tracks_build_the_cache(void **state)
{
	json_t *r, *row;
	size_t i, seen = 0;
	char path[512];
	struct stat st;

	(void)state;
	r = get_json("/api/v1/profiles/namespace/global/profile_name/tl/timeline/tracks");
	assert_true(json_is_true(json_object_get(r, "cached")));
	json_array_foreach(json_object_get(r, "rows"), i, row) {
		const char *kind = json_string_value(json_array_get(row, 0));
		const char *track = json_string_value(json_array_get(row, 2));

		if (!strcmp(kind, "instruction") && json_integer_value(json_array_get(row, 1)) == 0 &&
		    !strcmp(track, "Tensor"))
			seen++, assert_true(json_integer_value(json_array_get(row, 3)) > 9000);
		if (!strcmp(kind, "dma"))
			seen++, assert_int_equal(json_integer_value(json_array_get(row, 3)), 500);
		if (!strcmp(kind, "counter"))
			seen++, assert_string_equal(track, "SbufUsage");
	}
	assert_int_equal(seen, 4);
	/* instructions of core 0 first, in engine order */
	assert_string_equal(json_string_value(json_array_get(json_array_get(json_object_get(r, "rows"), 0), 2)),
			    "Tensor");
	json_decref(r);
	snprintf(path, sizeof(path), "ls %s/.cache/timeline/tl@v12-*/timeline.duckdb > /dev/null",
		 data_dir);
	assert_int_equal(system(path), 0);
	snprintf(path, sizeof(path), "%s/profiles/global/tl@latest/timeline.duckdb", data_dir);
	assert_int_not_equal(stat(path, &st), 0); /* never inside the profile */
}

static void test_windows_match_their_rows(void **state)
{
	static const struct {
		long long t0, t1;
		int px;
	} w[] = {
		/* pyramid levels */
		{ 0, SPAN, 1000 },	   { 0, SPAN, 50 },	     { 100000, 300000, 400 },
		/* finer than the pyramid: rows bucketed in C, or by DuckDB in the burst */
		{ 12345, 67890, 300 },	   { 150000, 151000, 100 },  { 199900, 200600, 16 },
		{ 199950, 200100, 8 },	   { 1000, 1300, 1000 },
		{ 250000, 250001, 10 },	   { -5000, 50, 30 },	     { 390000, 460000, 700 },
		{ 5000, 7560, 10 },
	};
	char how[2][NX_ARRAY_SIZE(w) + 1];

	(void)state;
	for (int p = 0; p < 2; p++) {
		for (size_t i = 0; i < NX_ARRAY_SIZE(w); i++)
			how[p][i] = check_window(p ? "tl-shuffled" : "tl", w[i].t0, w[i].t1, w[i].px);
		how[p][NX_ARRAY_SIZE(w)] = '\0';
	}
	/* every way of making a window was exercised, the same way in both profiles */
	assert_string_equal(how[0], how[1]);
	assert_non_null(strchr(how[0], 'L'));
	assert_non_null(strchr(how[0], 'B'));
	assert_non_null(strchr(how[0], 'R'));
}

static void test_counters(void **state)
{
	json_t *r, *s;

	(void)state;
	r = get_json("/api/v1/profiles/namespace/global/profile_name/tl/timeline/counters"
		     "?t0=100000&t1=200000&px=10");
	assert_int_equal(json_integer_value(json_object_get(r, "bucket")), 16384);
	s = json_array_get(json_object_get(r, "series"), 0);
	assert_string_equal(json_string_value(json_object_get(s, "track")), "SbufUsage");
	/* the value before the window (snapped to 98304): the sample at 98000, 0.8 */
	assert_true(json_number_value(json_object_get(s, "before")) > 0.79 &&
		    json_number_value(json_object_get(s, "before")) < 0.81);
	/* buckets of 16384 ns from 98304: each holds a 0.9 sample, the maximum */
	for (size_t i = 0; i < json_array_size(json_object_get(s, "ts")); i++) {
		assert_int_equal(json_integer_value(json_array_get(json_object_get(s, "ts"), i)) % 16384, 0);
		assert_true(json_number_value(json_array_get(json_object_get(s, "hi"), i)) > 0.89);
	}
	assert_true(json_array_size(json_object_get(s, "ts")) >= 6);
	json_decref(r);
}

static void test_aggregate_and_search(void **state)
{
	json_t *r, *q, *row;
	size_t i;
	long long n = 0, busy = 0;

	(void)state;
	r = get_json("/api/v1/profiles/namespace/global/profile_name/tl/timeline/aggregate"
		     "?t0=10000&t1=90000");
	json_array_foreach(json_object_get(json_object_get(r, "result"), "rows"), i, row) {
		if (strcmp(json_string_value(json_array_get(row, 0)), "instruction"))
			continue;
		n += json_integer_value(json_array_get(row, 4));
		busy += json_integer_value(json_array_get(row, 5));
	}
	json_decref(r);
	/* busy: clipped to the window */
	q = query("tl", "SELECT count(*), sum(least(end_ts, 90000) - greatest(start_ts, 10000)) "
			"FROM Instruction WHERE start_ts < 90000 AND end_ts > 10000");
	row = json_array_get(json_object_get(q, "rows"), 0);
	assert_int_equal(n, json_integer_value(json_array_get(row, 0)));
	assert_int_equal(busy, json_integer_value(json_array_get(row, 1)));
	json_decref(q);

	/* per source line, from the cache, as the aggregate over Instruction */
	r = get_json("/api/v1/profiles/namespace/global/profile_name/tl/timeline/lines");
	q = query("tl", "SELECT loc, count(*), sum(duration_ns), min(start_ts), max(end_ts), "
			"0, 0, 0, NULL, NULL FROM "
			"(SELECT coalesce(bir_debug_info_source_location, nki_source_location) AS loc, "
			"end_ts - start_ts AS duration_ns, start_ts, end_ts FROM Instruction) "
			"WHERE loc IS NOT NULL GROUP BY loc ORDER BY 3 DESC, loc");
	assert_int_equal(json_array_size(json_object_get(json_object_get(r, "result"), "rows")), 7);
	assert_true(json_equal(json_object_get(json_object_get(r, "result"), "rows"),
			       json_object_get(q, "rows")));
	json_decref(q);
	json_decref(r);

	r = get_json("/api/v1/profiles/namespace/global/profile_name/tl/timeline/search"
		     "?field=source_location&value=k.py%3A3");
	q = query("tl", "SELECT count(*) FROM Instruction WHERE bir_debug_info_source_location = 'k.py:3'");
	row = json_array_get(json_object_get(json_object_get(r, "result"), "rows"), 0);
	assert_int_equal(json_integer_value(json_array_get(row, 6)),
			 json_integer_value(json_array_get(json_array_get(json_object_get(q, "rows"), 0), 0)));
	json_decref(q);
	json_decref(r);
}

/* 0 when the shell command succeeds. */
static int sh(const char *fmt, const char *a, const char *b)
{
	char cmd[1024];

	snprintf(cmd, sizeof(cmd), fmt, a, b);
	return system(cmd);
}

/* GET path: its status, and its error message contains want (when not NULL). */
static void expect_status(const char *path, int status, const char *want)
{
	struct nx_http_resp r;

	assert_int_equal(nx_http_get(port, path, &r), 0);
	if (r.status != status || (want && !strstr(r.body, want)))
		fail_msg("GET %s: status %d (wanted %d naming '%s'): %.300s", path, r.status, status,
			 want ? want : "", r.body);
	nx_http_resp_free(&r);
}

/* Windows at the bounds of the parameters (+-2^61 ns, 1 to 16384 px) are served, with
 * no overflow in the window arithmetic (the ASan+UBSan build checks); beyond them, and
 * an unknown dma, are a 400 naming the bound; a profile whose times reach the ends of
 * int64 is served too. */
static void test_window_bounds(void **state)
{
#define TL "/api/v1/profiles/namespace/global/profile_name/"
#define LO "-2305843009213693952"
#define HI "2305843009213693952"
	static const char *const ok[] = {
		"/timeline?t0=" LO "&t1=" HI "&px=1",
		"/timeline?t0=" LO "&t1=" HI "&px=16384",
		"/timeline?t0=" LO "&t1=-2305843009213693951&px=3",
		"/timeline?t0=2305843009213693951&t1=" HI "&px=3",
		"/timeline/counters?t0=" LO "&t1=" HI "&px=1",
		"/timeline/counters?t0=" LO "&t1=" HI "&px=16384",
		"/timeline/counters?t0=" LO "&t1=-2305843009213693900&px=7",
		"/timeline/counters?t0=2305843009213693900&t1=" HI "&px=1",
		"/timeline/aggregate?t0=" LO "&t1=" HI,
		"/timeline/tracks?dma=packets",
		"/timeline/tracks?dma=transfers",
	};
	static const struct {
		const char *q, *why;
	} bad[] = {
		{ "/timeline?t0=-2305843009213693953&t1=0&px=10", "2^61" },
		{ "/timeline?t0=0&t1=2305843009213693953&px=10", "2^61" },
		{ "/timeline?t0=0&t1=9223372036854775807&px=10", "2^61" },
		{ "/timeline?t0=0&t1=99999999999999999999&px=10", "2^61" },
		{ "/timeline?t0=5&t1=5&px=10", "t0 < t1" },
		{ "/timeline?t0=0&t1=1.5&px=10", "integers" },
		{ "/timeline?t0=0&t1=100&px=0", "1 to 16384" },
		{ "/timeline?t0=0&t1=100&px=16385", "1 to 16384" },
		{ "/timeline?t0=0&t1=100&px=10&dma=zzz", "dma must be" },
		{ "/timeline/counters?t0=-9223372036854775808&t1=0&px=10", "2^61" },
		{ "/timeline/counters?t0=0&t1=100", "1 to 16384" },
		{ "/timeline/aggregate?t0=0&t1=2305843009213693953", "2^61" },
		{ "/timeline/aggregate?t0=0&t1=100&dma=zzz", "dma must be" },
		{ "/timeline/tracks?dma=zzz", "dma must be" },
	};
	const char *profiles[] = { "tl", "tl-extreme" };
	char path[512];

	(void)state;
	/* events and samples at the ends of int64, beside ordinary ones */
	assert_int_equal(sh("mkdir -p '%s/profiles/global/%s@latest'", data_dir, "tl-extreme"), 0);
	snprintf(path, sizeof(path), "%s/profiles/global/tl-extreme@latest", data_dir);
	{
		char *sql = NULL;

		NX_ASSERT_CMP(asprintf(&sql,
			"CREATE TABLE i AS SELECT * FROM (VALUES "
			"(1, 0, 'Tensor', 'A', -9223372036854775807, 9223372036854775807),"
			"(2, 0, 'Tensor', 'B', -9223372036854775807, -9223372036854775806),"
			"(3, 0, 'Tensor', 'C', 9223372036854775806, 9223372036854775807),"
			"(4, 0, 'Vector', 'D', 100, 200),"
			"(5, 0, 'Vector', 'E', -100, 9223372036854775807)) "
			"t(id, pcore_idx, timeline_track, opcode, start_ts, end_ts);"
			"COPY (SELECT id::BIGINT AS id, pcore_idx::BIGINT AS pcore_idx, timeline_track, "
			"opcode, start_ts::BIGINT AS start_ts, end_ts::BIGINT AS end_ts FROM i "
			"ORDER BY start_ts) TO '%s/Instruction.parquet' (FORMAT parquet);"
			"COPY (SELECT 0::BIGINT AS pcore_idx, ts::BIGINT AS timestamp, 0.5 AS "
			"avg_util_percent FROM (VALUES (-9223372036854775807), (0), "
			"(9223372036854775807)) t(ts)) TO '%s/SbufUsage.parquet' (FORMAT parquet)",
			path, path), >, 0);
		assert_int_equal(nx_sfx_sql(sql), 0);
		free(sql);
	}
	for (size_t k = 0; k < NX_ARRAY_SIZE(profiles); k++) {
		for (size_t i = 0; i < NX_ARRAY_SIZE(ok); i++) {
			snprintf(path, sizeof(path), TL "%s%s", profiles[k], ok[i]);
			json_decref(get_json(path));
		}
		for (size_t i = 0; i < NX_ARRAY_SIZE(bad); i++) {
			snprintf(path, sizeof(path), TL "%s%s", profiles[k], bad[i].q);
			expect_status(path, 400, bad[i].why);
		}
	}
	/* the extreme profile has its cache, without the events beyond the bound; its
	 * counters hold the value before the window */
	{
		json_t *r = get_json(TL "tl-extreme/timeline/tracks"), *row;
		size_t i;

		assert_true(json_is_true(json_object_get(r, "cached")));
		json_array_foreach(json_object_get(r, "rows"), i, row)
			if (!strcmp(json_string_value(json_array_get(row, 2)), "Vector"))
				assert_int_equal(json_integer_value(json_array_get(row, 3)), 1);
		json_decref(r);
		r = get_json(TL "tl-extreme/timeline/counters?t0=200&t1=1000&px=10");
		assert_true(json_number_value(json_object_get(
				    json_array_get(json_object_get(r, "series"), 0), "before")) == 0.5);
		json_decref(r);
	}
#undef TL
#undef LO
#undef HI
}

static int status_of(const char *path)
{
	struct nx_http_resp r;
	int st;

	assert_int_equal(nx_http_get(port, path, &r), 0);
	st = r.status;
	nx_http_resp_free(&r);
	return st;
}

/* The search's total for table/field/op/value against the same count by SQL. */
static void search_counts(const char *args, const char *where)
{
	char path[256], sql[256];
	json_t *r, *q, *row;
	json_int_t total = 0;

	snprintf(path, sizeof(path), "/api/v1/profiles/namespace/global/profile_name/tl/timeline/"
		 "search?%s", args);
	r = get_json(path);
	row = json_array_get(json_object_get(json_object_get(r, "result"), "rows"), 0);
	if (row)
		total = json_integer_value(json_array_get(row, 6));
	snprintf(sql, sizeof(sql), "SELECT count(*) FROM Instruction WHERE %s", where);
	q = query("tl", sql);
	assert_true(total > 0);
	assert_int_equal(total, json_integer_value(json_array_get(json_array_get(json_object_get(q,
								 "rows"), 0), 0)));
	json_decref(q);
	json_decref(r);
}

static void test_search_comparisons(void **state)
{
	const char *base = "/api/v1/profiles/namespace/global/profile_name/tl/timeline/search";
	char path[256];

	(void)state;
	search_counts("field=start_ts&op=lt&value=1000", "start_ts < 1000");
	search_counts("field=start_ts&op=ge&value=200100", "start_ts >= 200100");
	search_counts("field=opcode&op=ne&value=MATMUL", "opcode <> 'MATMUL'");
	search_counts("field=opcode&op=contains&value=aTm", "opcode ILIKE '%atm%'");
	search_counts("field=opcode&value=IOTA", "opcode = 'IOTA'");
	search_counts("field=source_location&op=contains&value=K.PY%3A", "bir_debug_info_source_location "
		      "IS NOT NULL");
	/* a number field against text, an unknown op or field, a line of a transfer in a
	 * profile without Flow: 400, naming what is wrong */
	snprintf(path, sizeof(path), "%s?field=start_ts&op=gt&value=abc", base);
	assert_int_equal(status_of(path), 400);
	snprintf(path, sizeof(path), "%s?field=start_ts&op=like&value=1", base);
	assert_int_equal(status_of(path), 400);
	snprintf(path, sizeof(path), "%s?field=nosuch&op=eq&value=1", base);
	assert_int_equal(status_of(path), 400);
	snprintf(path, sizeof(path), "%s?field=source_location&op=lt&value=k.py%%3A1", base);
	assert_int_equal(status_of(path), 400);
	snprintf(path, sizeof(path), "%s?table=DmaPacketAggregated&field=source_location&value=k.py%%3A1",
		 base);
	assert_int_equal(status_of(path), 400);
}

static struct nx_server *start_second(void)
{
	struct nx_server_opts o;
	struct nx_server *s;
	unsigned p;

	nx_sfx_opts(&o, data_dir);
	s = nx_sfx_start(&o, &p);
	assert_non_null(s);
	return s;
}

/* nx_server_warm_timeline builds the cache of a profile before any request asks; the
 * timeline request then finds it; a second warm-up on the same server is refused. */
static void test_warm_builds_the_cache(void **state)
{
	struct nx_server *s2;
	struct nx_err err = { 0 };
	struct nx_http_resp r;
	char path[256];
	int tries = 0;

	(void)state;
	assert_int_equal(make_profile("tl-warm", true), 0);
	s2 = start_second();
	assert_int_equal(nx_server_warm_timeline(s2, "tl-warm", &err), 0);
	NX_ASSERT_CMP(nx_server_warm_timeline(s2, "tl-warm", &err), <, 0);
	while (sh("ls %s/.cache/timeline/%s@v12-*/timeline.duckdb > /dev/null 2>&1", data_dir,
		  "tl-warm") != 0 && tries++ < 1200)
		usleep(50 * 1000); /* up to a minute for a build of 40k rows */
	assert_int_equal(sh("ls %s/.cache/timeline/%s@v12-*/timeline.duckdb > /dev/null", data_dir,
			    "tl-warm"), 0);
	snprintf(path, sizeof(path), "/api/v1/profiles/namespace/global/profile_name/tl-warm/"
		 "timeline/tracks");
	assert_int_equal(nx_http_get(nx_server_port(s2), path, &r), 0);
	assert_int_equal(r.status, 200);
	assert_non_null(strstr(r.body, "\"cached\":true"));
	nx_http_resp_free(&r);
	nx_server_stop(s2);
}

/* Stopping a server while its warm-up builds interrupts or finishes the build, never
 * leaves a half-built cache: no private build directory remains, and a cache directory
 * that exists holds its database. */
static void test_stop_during_warm_up(void **state)
{
	struct nx_server *s2;
	struct nx_err err = { 0 };

	(void)state;
	assert_int_equal(make_profile("tl-stop", true), 0);
	s2 = start_second();
	assert_int_equal(nx_server_warm_timeline(s2, "tl-stop", &err), 0);
	nx_server_stop(s2);
	assert_int_not_equal(sh("ls -a %s/.cache/timeline | grep -q '^\\.%s@.*tmp-'", data_dir,
				"tl-stop"), 0);
	assert_int_equal(sh("for d in %s/.cache/timeline/%s@v12-*; do [ ! -e \"$d\" ] || "
			    "{ [ -f \"$d/timeline.duckdb\" ] && [ -f \"$d/timeline.stamp\" ]; } || exit 1; done",
			    data_dir, "tl-stop"), 0);
}

/* Without a cache (its directory cannot be made), the profile's own tables serve the
 * same replies. */
static void test_without_cache(void **state)
{
	char cmd[512];
	json_t *r;

	(void)state;
	snprintf(cmd, sizeof(cmd), "cp -r '%s/profiles/global/tl@latest' '%s/profiles/global/"
		 "tl-nocache@latest' && rm -rf '%s/.cache/timeline' && "
		 "ln -s /proc/self/nonexistent '%s/.cache/timeline'",
		 data_dir, data_dir, data_dir, data_dir);
	assert_int_equal(system(cmd), 0);
	r = get_json("/api/v1/profiles/namespace/global/profile_name/tl-nocache/timeline/tracks");
	assert_false(json_is_true(json_object_get(r, "cached")));
	json_decref(r);
	r = get_json("/api/v1/profiles/namespace/global/profile_name/tl-nocache/timeline/lines");
	assert_int_equal(json_array_size(json_object_get(json_object_get(r, "result"), "rows")), 7);
	json_decref(r);
	assert_int_equal(check_window("tl-nocache", 0, SPAN, 500), 'B');
	assert_int_equal(check_window("tl-nocache", 199950, 200100, 8), 'B');
	assert_int_equal(check_window("tl-nocache", 1000, 1300, 1000), 'R');
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_tracks_build_the_cache),
		cmocka_unit_test(test_windows_match_their_rows),
		cmocka_unit_test(test_counters),
		cmocka_unit_test(test_aggregate_and_search),
		cmocka_unit_test(test_window_bounds),
		cmocka_unit_test(test_search_comparisons),
		cmocka_unit_test(test_warm_builds_the_cache),
		cmocka_unit_test(test_stop_during_warm_up),
		cmocka_unit_test(test_without_cache),
	};

	return nx_test_done(cmocka_run_group_tests(tests, setup, teardown));
}
