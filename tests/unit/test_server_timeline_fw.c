/* SPDX-License-Identifier: MIT
 * test_server_timeline_fw.c: framework events on the web UI's timeline, on a real server
 * and a SystemProfileEvents table written by DuckDB at Unix-epoch times (beyond 2^53 ns):
 * the timeline cache puts nested and overlapping slices of a stream on depth lanes (a
 * track each, listed with their stream and lane), never two overlapping events on one
 * lane, leaves the metadata rows (ph M, at time 0) out of the tracks and their bounds,
 * and sends times beyond 2^53 as strings, so that a browser keeps every digit; offsets in
 * a window are exact, raw and in buckets. And a device profile's DMA transfers by source
 * line: the per-line summary's DMA columns and the search of the transfers of a line go
 * through Flow's trigger edges to the triggering instruction's line, with and without the
 * timeline cache, and in a window (clipped); semaphore rows in natural order (sem 2
 * before sem 10); the warning band of transfers under 512 B per partition. */
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
#include <cmocka.h>
#include <jansson.h>

#define T0 1700000000000000000LL
#define STREAM "run / pid 1 / tid 1"

static char *data_dir;
static struct nx_server *srv;
static unsigned port;

/* Stream tid 1: 1 [0,1000] holds 10 [0,10] (same start, shorter), 2 [100,400] holding
 * 3 [150,200], and 4 [500,900]; then 5 [2000,3000], 6 [2500,3500] and 7 [3200,4000]
 * overlap without nesting. Stream tid 2: 9 [50,60]. Row 8 is a metadata row at 0. */
static const struct {
	int id, tid, lane;
	long long s, e;
} rows[] = {
	{ 1, 1, 0, 0, 1000 },	 { 10, 1, 1, 0, 10 },	  { 2, 1, 1, 100, 400 },
	{ 3, 1, 2, 150, 200 },	 { 4, 1, 1, 500, 900 },	  { 5, 1, 0, 2000, 3000 },
	{ 6, 1, 1, 2500, 3500 }, { 7, 1, 2, 3200, 4000 }, { 9, 2, 0, 50, 60 },
};

static int setup(void **state)
{
	struct nx_server_opts o;
	char *sql = NULL, *cmd = NULL;
	int rc;

	(void)state;
	data_dir = nx_sfx_tmpdir("timeline-fw");
	if (!data_dir || asprintf(&cmd, "mkdir -p '%s/profiles/global/fw@latest'", data_dir) < 0 ||
	    system(cmd) != 0)
		return -1;
	free(cmd);
	if (asprintf(&sql,
		     "CREATE TABLE e (id BIGINT, name VARCHAR, start_ts BIGINT, end_ts BIGINT, "
		     "duration_ns BIGINT, pcore_idx BIGINT, instance_id VARCHAR, process_id BIGINT, "
		     "thread_id BIGINT, extra_attributes_json VARCHAR);"
		     "INSERT INTO e SELECT id, 'ev' || id, %lld + s, %lld + e, e - s, NULL, 'run', 1, "
		     "tid, '{\"ph\":\"X\"}' FROM (VALUES (1,1,0,1000),(10,1,0,10),(2,1,100,400),"
		     "(3,1,150,200),(4,1,500,900),(5,1,2000,3000),(6,1,2500,3500),(7,1,3200,4000),"
		     "(9,2,50,60)) v(id, tid, s, e);"
		     "INSERT INTO e VALUES (8, 'process_name', 0, 0, 0, NULL, 'run', 1, 1, "
		     "'{\"ph\":\"M\",\"args\":{\"name\":\"python\"}}');"
		     "COPY (SELECT * FROM e ORDER BY start_ts, id) TO "
		     "'%s/profiles/global/fw@latest/SystemProfileEvents.parquet' (FORMAT parquet)",
		     T0, T0, data_dir) < 0)
		return -1;
	rc = nx_sfx_sql(sql);
	free(sql);
	if (rc)
		return -1;
	nx_sfx_opts(&o, data_dir);
	return (srv = nx_sfx_start(&o, &port)) ? 0 : -1;
}

static int teardown(void **state)
{
	(void)state;
	nx_server_stop(srv);
	free(data_dir);
	return 0;
}

static int status_of(const char *path)
{
	int st = 0;

	json_decref(nx_sfx_get(port, path, &st));
	return st;
}

static json_t *get_json(const char *path)
{
	int st = 0;
	json_t *j = nx_sfx_get(port, path, &st);

	if (!j || st != 200)
		fail_msg("GET %s: status %d", path, st);
	return j;
}

/* The lane a test row is on, or -1. */
static int lane_of(long long id)
{
	for (size_t i = 0; i < NX_ARRAY_SIZE(rows); i++)
		if (rows[i].id == id)
			return rows[i].lane;
	return -1;
}

static void track_name(char *out, size_t n, int tid, int lane)
{
	if (lane)
		snprintf(out, n, "run / pid 1 / tid %d / depth %d", tid, lane);
	else
		snprintf(out, n, "run / pid 1 / tid %d", tid);
}

static void test_tracks_are_lanes(void **state)
{
	json_t *r = get_json("/api/v1/profiles/namespace/global/profile_name/fw/timeline/tracks");
	json_t *cols = json_object_get(r, "columns"), *row;
	int seen[3] = { 0 };
	size_t i;

	(void)state;
	assert_string_equal(json_string_value(json_object_get(json_array_get(cols, 6), "name")),
			    "stream");
	assert_string_equal(json_string_value(json_object_get(json_array_get(cols, 7), "name")),
			    "lane");
	assert_int_equal(json_array_size(json_object_get(r, "rows")), 4);
	json_array_foreach(json_object_get(r, "rows"), i, row) {
		const char *track = json_string_value(json_array_get(row, 2));
		const char *stream = json_string_value(json_array_get(row, 6));
		json_int_t lane = json_integer_value(json_array_get(row, 7));
		char want[96];

		/* starts and ends beyond 2^53 are strings; none is the metadata row's 0 */
		assert_true(json_is_string(json_array_get(row, 4)));
		assert_true(strtoll(json_string_value(json_array_get(row, 4)), NULL, 10) >= T0);
		if (!strcmp(stream, STREAM)) {
			assert_in_range(lane, 0, 2);
			track_name(want, sizeof(want), 1, (int)lane);
			assert_string_equal(track, want);
			seen[lane]++;
			/* in order: the stream's lanes one after the other, lane 0 first */
			assert_int_equal((json_int_t)i, lane);
		} else {
			assert_string_equal(track, "run / pid 1 / tid 2");
			assert_int_equal(lane, 0);
		}
	}
	assert_int_equal(seen[0] + seen[1] + seen[2], 3);
	assert_string_equal(json_string_value(json_array_get(json_array_get(json_object_get(r, "rows"),
									    0), 4)),
			    "1700000000000000000");
	json_decref(r);
}

/* Checks a window's framework tracks against the rows: per lane the right events, exact
 * offsets from the reply's t0 (a string), no overlap within a lane. Returns the events
 * counted (a bucket counts its events). */
static long long check_window(long long t0, long long t1, int px)
{
	char path[256];
	json_t *r, *tr;
	long long total = 0, rt0;
	size_t i;

	snprintf(path, sizeof(path),
		 "/api/v1/profiles/namespace/global/profile_name/fw/timeline?t0=%lld&t1=%lld&px=%d",
		 t0, t1, px);
	r = get_json(path);
	assert_true(json_is_string(json_object_get(r, "t0")));
	rt0 = strtoll(json_string_value(json_object_get(r, "t0")), NULL, 10);
	assert_true(rt0 <= t0 && rt0 > t0 - (t1 - t0));
	json_array_foreach(json_object_get(json_object_get(r, "framework"), "tracks"), i, tr) {
		const char *track = json_string_value(json_object_get(tr, "track"));
		bool bins = !strcmp(json_string_value(json_object_get(tr, "mode")), "bins");
		json_t *ids = json_object_get(tr, "id"), *st = json_object_get(tr, "start");
		json_t *dur = json_object_get(tr, "dur");
		long long se[16][2];
		int lane = strstr(track, "/ depth ") ? atoi(strstr(track, "/ depth ") + 8) : 0;

		for (size_t k = 0; k < json_array_size(ids); k++) {
			long long id = json_integer_value(json_array_get(ids, k));
			long long s = rt0 + json_integer_value(json_array_get(st, k));
			long long e = s + json_integer_value(json_array_get(dur, k));

			assert_int_equal(lane_of(id), lane);
			for (size_t x = 0; x < NX_ARRAY_SIZE(rows); x++)
				if (rows[x].id == id) {
					assert_true(s == T0 + rows[x].s);
					assert_true(e == T0 + rows[x].e);
				}
			if (!bins) {
				assert_true(k < 16);
				for (size_t m = 0; m < k; m++) /* no overlap within a lane */
					assert_true(e <= se[m][0] || s >= se[m][1]);
				se[k][0] = s;
				se[k][1] = e;
				total++;
			} else {
				total += json_integer_value(json_array_get(json_object_get(tr, "count"), k));
			}
		}
	}
	json_decref(r);
	return total;
}

static void test_windows_by_lane(void **state)
{
	(void)state;
	/* raw rows: every event once, each on its lane; then buckets of a 2-pixel view */
	assert_int_equal(check_window(T0, T0 + 5000, 1000), 9);
	assert_int_equal(check_window(T0, T0 + 5000, 2), 9);
	assert_int_equal(check_window(T0 + 160, T0 + 170, 100), 3); /* 1, 2 and 3 overlap it */
}

/* Device profile "dma": instructions on lines a.py:1 (ids 1, 2: DMA triggers) and a.py:2
 * (id 3, none); transfers 10 and 11 triggered by 1, 12 by 2, 13 by nobody; a SEMAPHORE
 * edge from transfer 12 to instruction 3, which triggers nothing. */
static void make_dma_profile(const char *name)
{
	char *sql = NULL, *cmd = NULL;
	const char *d = data_dir;

	assert_true(asprintf(&cmd, "mkdir -p '%s/profiles/global/%s@latest'", d, name) > 0);
	assert_int_equal(system(cmd), 0);
	free(cmd);
	assert_true(asprintf(&sql,
		"COPY (SELECT * FROM (VALUES (1, 0, 'Sync', 'DMA_DIRECT2D', 100, 110, 10, 'k/a.py:1'),"
		"(2, 0, 'Sync', 'DMA_DIRECT2D', 200, 205, 5, 'k/a.py:1'),"
		"(3, 0, 'Vector', 'TENSOR_COPY', 900, 1000, 100, 'k/a.py:2')) v(id, pcore_idx, "
		"timeline_track, opcode, start_ts, end_ts, duration_ns, bir_debug_info_source_location),"
		" (SELECT NULL::VARCHAR AS nki_source_location)) TO "
		"'%s/profiles/global/%s@latest/Instruction.parquet' (FORMAT parquet);"
		"COPY (SELECT *, end_ts - start_ts AS duration_ns FROM (VALUES (10, 0, 'q0', 'copy', "
		"'input', 120, 420, 4096, 16), (11, 0, 'q1', 'copy', 'input', 130, 330, 1024, NULL), "
		"(12, 0, 'q0', 'copy', 'input', 430, 830, 2048, 2), (13, 0, 'q1', 'copy', 'input', 840, "
		"850, 64, NULL)) v(id, pcore_idx, queue_name, op, queue_type, start_ts, end_ts, "
		"transfer_bytes, write_num_sbuf_partitions)) TO "
		"'%s/profiles/global/%s@latest/DmaPacketAggregated.parquet' (FORMAT parquet);"
		"COPY (SELECT * FROM (VALUES (1, 10, 'Instruction', 'DmaPacketAggregated', "
		"'DGE_TRIGGER', 10), (1, 11, 'Instruction', 'DmaPacketAggregated', 'DGE_TRIGGER', 20), "
		"(2, 12, 'Instruction', 'DmaPacketAggregated', 'DGE_TRIGGER', 225), (12, 3, "
		"'DmaPacketAggregated', 'Instruction', 'SEMAPHORE', 70)) v(in_id, out_id, in_table, "
		"out_table, dependency_type, gap_time)) TO '%s/profiles/global/%s@latest/Flow.parquet' "
		"(FORMAT parquet);"
		"COPY (SELECT * FROM (VALUES (0, 10, 100, 1.0), (0, 2, 100, 1.0), (0, 9, 150, 2.0)) "
		"v(pcore_idx, id, timestamp, value)) TO "
		"'%s/profiles/global/%s@latest/SemaphoreUpdate.parquet' (FORMAT parquet)",
		d, name, d, name, d, name, d, name) > 0);
	assert_int_equal(nx_sfx_sql(sql), 0);
	free(sql);
}

static void check_dma_lines(const char *name)
{
	char path[256];
	json_t *r, *row;
	size_t i;
	int seen = 0;

	snprintf(path, sizeof(path), "/api/v1/profiles/namespace/global/profile_name/%s/timeline/"
		 "lines", name);
	r = get_json(path);
	json_array_foreach(json_object_get(json_object_get(r, "result"), "rows"), i, row) {
		const char *loc = json_string_value(json_array_get(row, 0));

		if (!strcmp(loc, "k/a.py:1")) {
			/* n, dur, then DMA: 3 transfers, 7168 bytes, 900 ns, 120 .. 830 */
			assert_int_equal(json_integer_value(json_array_get(row, 1)), 2);
			assert_int_equal(json_integer_value(json_array_get(row, 5)), 3);
			assert_int_equal(json_integer_value(json_array_get(row, 6)), 7168);
			assert_int_equal(json_integer_value(json_array_get(row, 7)), 900);
			assert_int_equal(json_integer_value(json_array_get(row, 8)), 120);
			assert_int_equal(json_integer_value(json_array_get(row, 9)), 830);
			seen++;
		} else {
			assert_string_equal(loc, "k/a.py:2");
			assert_int_equal(json_integer_value(json_array_get(row, 5)), 0);
			assert_true(json_is_null(json_array_get(row, 8)));
			seen++;
		}
	}
	assert_int_equal(seen, 2);
	/* the busiest first: line 1 has 15 ns of instructions and 900 ns of DMA */
	assert_string_equal(json_string_value(json_array_get(json_array_get(json_object_get(
		json_object_get(r, "result"), "rows"), 0), 0)), "k/a.py:1");
	json_decref(r);
	/* the transfers of a line, as a finding names it (a suffix) */
	snprintf(path, sizeof(path), "/api/v1/profiles/namespace/global/profile_name/%s/timeline/"
		 "search?table=DmaPacketAggregated&field=source_location&value=a.py%%3A1", name);
	r = get_json(path);
	assert_int_equal(json_array_size(json_object_get(json_object_get(r, "result"), "rows")), 3);
	json_array_foreach(json_object_get(json_object_get(r, "result"), "rows"), i, row)
		assert_in_range(json_integer_value(json_array_get(row, 0)), 10, 12);
	assert_string_equal(json_string_value(json_object_get(r, "kind")), "dma");
	json_decref(r);
}

/* Value tracks in natural order: sem 2, sem 9, sem 10 (not 10, 2, 9). */
static void check_natural_order(const char *name)
{
	char path[256];
	json_t *r, *row;
	size_t i;
	const char *want[] = { "sem 2", "sem 9", "sem 10" };
	size_t k = 0;

	snprintf(path, sizeof(path), "/api/v1/profiles/namespace/global/profile_name/%s/timeline/"
		 "tracks", name);
	r = get_json(path);
	json_array_foreach(json_object_get(r, "rows"), i, row) {
		const char *t = json_string_value(json_array_get(row, 2));

		if (strncmp(t, "sem ", 4))
			continue;
		assert_true(k < 3);
		assert_string_equal(t, want[k++]);
	}
	assert_int_equal(k, 3);
	json_decref(r);
}

/* The small-DMA band: transfers 10 (4096 B over 16 partitions) and 13 (64 B) move fewer
 * than 512 B per partition, 11 (1024 B, no SBUF side) and 12 (1024 B per partition) not. */
static void test_small_dma(void **state)
{
	json_t *r, *res_rows;

	(void)state;
	r = get_json("/api/v1/profiles/namespace/global/profile_name/dma/timeline/small-dma"
		     "?t0=0&t1=2048&px=2048");
	res_rows = json_object_get(json_object_get(r, "result"), "rows");
	assert_int_equal(json_integer_value(json_object_get(r, "bucket")), 1);
	assert_int_equal(json_integer_value(json_object_get(r, "bytes_per_partition_below")), 512);
	assert_int_equal(json_array_size(res_rows), 2);
	/* core, queue, bucket start, small, all */
	assert_string_equal(json_string_value(json_array_get(json_array_get(res_rows, 0), 1)), "q0");
	assert_int_equal(json_integer_value(json_array_get(json_array_get(res_rows, 0), 2)), 120);
	assert_string_equal(json_string_value(json_array_get(json_array_get(res_rows, 1), 1)), "q1");
	assert_int_equal(json_integer_value(json_array_get(json_array_get(res_rows, 1), 2)), 840);
	json_decref(r);
	r = get_json("/api/v1/profiles/namespace/global/profile_name/dma/timeline/small-dma"
		     "?t0=0&t1=2048&px=1");
	res_rows = json_object_get(json_object_get(r, "result"), "rows");
	assert_int_equal(json_array_size(res_rows), 2);
	for (size_t i = 0; i < 2; i++) {
		assert_int_equal(json_integer_value(json_array_get(json_array_get(res_rows, i), 3)), 1);
		assert_int_equal(json_integer_value(json_array_get(json_array_get(res_rows, i), 4)), 2);
	}
	json_decref(r);
	/* a profile without transfers: null; bad bounds: 400 */
	r = get_json("/api/v1/profiles/namespace/global/profile_name/fw/timeline/small-dma"
		     "?t0=0&t1=10&px=10");
	assert_true(json_is_null(json_object_get(r, "result")));
	json_decref(r);
	assert_int_equal(status_of("/api/v1/profiles/namespace/global/profile_name/dma/timeline/"
				   "small-dma?t0=10&t1=5&px=10"), 400);
}

/* The per-line summary of a window: events overlapping it, durations clipped to it. */
static void test_lines_of_a_window(void **state)
{
	json_t *r = get_json("/api/v1/profiles/namespace/global/profile_name/dma/timeline/lines"
			     "?t0=150&t1=250");
	json_t *res_rows = json_object_get(json_object_get(r, "result"), "rows"), *row;

	(void)state;
	assert_int_equal(json_array_size(res_rows), 1);
	row = json_array_get(res_rows, 0);
	assert_string_equal(json_string_value(json_array_get(row, 0)), "k/a.py:1");
	assert_int_equal(json_integer_value(json_array_get(row, 1)), 1);   /* instruction 2 */
	assert_int_equal(json_integer_value(json_array_get(row, 2)), 5);
	assert_int_equal(json_integer_value(json_array_get(row, 5)), 2);   /* transfers 10, 11 */
	assert_int_equal(json_integer_value(json_array_get(row, 6)), 5120);
	assert_int_equal(json_integer_value(json_array_get(row, 7)), 200); /* 100 + 100 */
	json_decref(r);
	assert_int_equal(status_of("/api/v1/profiles/namespace/global/profile_name/dma/timeline/"
				   "lines?t0=5"), 400);
}

static void test_dma_by_line(void **state)
{
	char cmd[512];

	(void)state;
	make_dma_profile("dma");
	check_dma_lines("dma");
	check_natural_order("dma");
	/* the same from the profile's tables, without a cache */
	snprintf(cmd, sizeof(cmd), "cp -r '%s/profiles/global/dma@latest' '%s/profiles/global/"
		 "dma-nocache@latest' && rm -rf '%s/.cache/timeline' && "
		 "ln -s /proc/self/nonexistent '%s/.cache/timeline'",
		 data_dir, data_dir, data_dir, data_dir);
	assert_int_equal(system(cmd), 0);
	check_dma_lines("dma-nocache");
	check_natural_order("dma-nocache");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_tracks_are_lanes),
		cmocka_unit_test(test_windows_by_lane),
		cmocka_unit_test(test_dma_by_line),
		cmocka_unit_test(test_small_dma),
		cmocka_unit_test(test_lines_of_a_window),
	};

	return nx_test_done(cmocka_run_group_tests(tests, setup, teardown));
}
