/* SPDX-License-Identifier: MIT
 * test_server_views.c: the endpoints of the web UI's views beyond the timeline's rows,
 * on a real server and parquet profiles written by DuckDB. The dependency chain
 * (.../timeline/chain): upstream from a waiting instruction along the SEMAPHORE edge of
 * the producer that ended last, from a transfer to its trigger, ending at the first
 * instruction that did not wait; its step limit, a cycle in Flow, an instruction with no
 * edge, a profile without Flow, and the 400s and 404s of bad requests with their
 * messages; the Flow edges of one event (.../timeline/flows) and its bad requests. The
 * memory view
 * (.../timeline/memory): SBUF allocations overlapping a window, the largest first, with
 * their total and their names; PSUM banks per bucket; a profile without those tables. */
#include "common/compat.h"
#include "server/server.h"
#include "helper/server_fixture.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include <jansson.h>

#define API "/api/v1/profiles/namespace/global/profile_name/"

static char *data_dir;
static struct nx_server *srv;
static unsigned port;

/* Profile "dev". Instructions (id, track, start, end, evt_wait_time_ns):
 *   1 Sync [100,110] 0: triggers transfer 10 [120,480]
 *   5 Scalar [200,300] 0
 *   2 Tensor [500,600] 300: released by transfer 10 (gap 20) and by 5 (gap 200)
 *   3 Vector [700,800] 50: released by 2 (gap 100)
 *   4 Vector [900,950] 0: has an edge from 3 but did not wait
 *   6 GpSimd [1000,1100] 10: no edge into it
 *   7, 8 wait on each other (a Flow no ingest writes: a cycle)
 * SbufAllocation: a [0,1000] bytes 0..1023 of partition group 0 (tensor a, by DMA),
 * b [500,2000] 1024..2047 of group 32 (an instruction's), c [3000,4000]. PsumUsage every
 * 100 ns from 0 to 900: bank 0 at i / 10, bank 1 at 0.5. Profile "bare": one
 * instruction, nothing else. */
static int make_profiles(const char *d)
{
	char *sql = NULL, *cmd = NULL;
	int rc;

	if (asprintf(&cmd, "mkdir -p '%s/profiles/global/dev@latest' '%s/profiles/global/"
			   "bare@latest'", d, d) < 0 || system(cmd) != 0)
		return -1;
	free(cmd);
	if (asprintf(&sql,
		"COPY (SELECT *, end_ts - start_ts AS duration_ns, 0::BIGINT AS pcore_idx FROM (VALUES "
		"(1, 'Sync', 'DMA_DIRECT2D', 100, 110, 0), (5, 'Scalar', 'ACTIVATE', 200, 300, 0), "
		"(2, 'Tensor', 'MATMUL', 500, 600, 300), (3, 'Vector', 'TENSOR_COPY', 700, 800, 50), "
		"(4, 'Vector', 'TENSOR_TENSOR', 900, 950, 0), (6, 'GpSimd', 'IOTA', 1000, 1100, 10), "
		"(7, 'Sync', 'NOP', 1200, 1210, 5), (8, 'Sync', 'NOP', 1300, 1310, 5)) v(id, "
		"timeline_track, opcode, start_ts, end_ts, evt_wait_time_ns) ORDER BY start_ts) TO "
		"'%s/profiles/global/dev@latest/Instruction.parquet' (FORMAT parquet);"
		"COPY (SELECT 10 AS id, 0::BIGINT AS pcore_idx, 'q0' AS queue_name, 'copy' AS op, "
		"'input' AS queue_type, 120 AS start_ts, 480 AS end_ts, 360 AS duration_ns) TO "
		"'%s/profiles/global/dev@latest/DmaPacketAggregated.parquet' (FORMAT parquet);"
		"COPY (SELECT * FROM (VALUES (1, 10, 'Instruction', 'DmaPacketAggregated', "
		"'DGE_TRIGGER', 10), (10, 2, 'DmaPacketAggregated', 'Instruction', 'SEMAPHORE', 20), "
		"(5, 2, 'Instruction', 'Instruction', 'SEMAPHORE', 200), (2, 3, 'Instruction', "
		"'Instruction', 'SEMAPHORE', 100), (3, 4, 'Instruction', 'Instruction', 'SEMAPHORE', "
		"100), (8, 7, 'Instruction', 'Instruction', 'SEMAPHORE', 1), (7, 8, 'Instruction', "
		"'Instruction', 'SEMAPHORE', 90)) v(in_id, out_id, in_table, out_table, "
		"dependency_type, gap_time) ORDER BY out_table, out_id) TO "
		"'%s/profiles/global/dev@latest/Flow.parquet' (FORMAT parquet);"
		"COPY (SELECT * FROM (VALUES (0, 1000, 0, 1023, 0, 'dma', NULL, NULL, 'q0', 4, 'a', "
		"NULL, 0), (500, 2000, 1024, 2047, 32, 'instruction', 'TENSOR_COPY', 'dst=x', NULL, "
		"NULL, NULL, NULL, 0), (3000, 4000, 0, 4095, 0, 'dma', NULL, NULL, 'q1', 5, 'c', NULL, "
		"0)) v(start_ts, end_ts, start_address, end_address, \"partition\", op_source_type, "
		"opcode, operands, queue_name, block_id, tensor_name, hlo_name, pcore_idx)) TO "
		"'%s/profiles/global/dev@latest/SbufAllocation.parquet' (FORMAT parquet);"
		"COPY (SELECT i * 100 AS timestamp, 0.3::FLOAT AS avg_util_percent, "
		"(i / 10)::FLOAT AS bank_0_util_percent, 0.5::FLOAT AS bank_1_util_percent, "
		"0::FLOAT AS bank_2_util_percent, 0::FLOAT AS bank_3_util_percent, "
		"0::FLOAT AS bank_4_util_percent, 0::FLOAT AS bank_5_util_percent, "
		"0::FLOAT AS bank_6_util_percent, 0::FLOAT AS bank_7_util_percent, 0::BIGINT AS "
		"pcore_idx FROM range(10) t(i)) TO '%s/profiles/global/dev@latest/PsumUsage.parquet' "
		"(FORMAT parquet);"
		"COPY (SELECT 1 AS id, 0::BIGINT AS pcore_idx, 'Tensor' AS timeline_track, "
		"'MATMUL' AS opcode, 0 AS start_ts, 10 AS end_ts, 10 AS duration_ns, "
		"0 AS evt_wait_time_ns) TO '%s/profiles/global/bare@latest/Instruction.parquet' "
		"(FORMAT parquet)",
		d, d, d, d, d, d) < 0)
		return -1;
	rc = nx_sfx_sql(sql);
	free(sql);
	return rc;
}

static int setup(void **state)
{
	struct nx_server_opts o;

	(void)state;
	data_dir = nx_sfx_tmpdir("views");
	if (!data_dir || make_profiles(data_dir))
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

static json_t *get_status(const char *path, int want)
{
	int st = 0;
	json_t *j = nx_sfx_get(port, path, &st);

	if (!j || st != want)
		fail_msg("GET %s: status %d, not %d", path, st, want);
	return j;
}

/* Checks that the chain of path has the steps "<table initial><id>" of want (e.g.
 * "I3 I2 D10 I1") and ends for the reason `end`. */
static void check_chain(const char *path, const char *want, const char *end)
{
	json_t *r = get_status(path, 200), *st;
	char got[256] = "";
	size_t i;

	json_array_foreach(json_object_get(r, "steps"), i, st) {
		char one[32];

		snprintf(one, sizeof(one), "%s%c%lld", i ? " " : "",
			 json_string_value(json_object_get(st, "table"))[0],
			 (long long)json_integer_value(json_object_get(st, "id")));
		strncat(got, one, sizeof(got) - strlen(got) - 1);
	}
	if (strcmp(got, want))
		fail_msg("%s: steps '%s', not '%s'", path, got, want);
	assert_string_equal(json_string_value(json_object_get(r, "end")), end);
	json_decref(r);
}

static void test_chain_walk(void **state)
{
	json_t *r, *steps, *st;

	(void)state;
	/* 3 waited on 2, which waited on transfer 10 (its latest producer), which 1
	 * triggered; 1 did not wait */
	check_chain(API "dev/timeline/chain?table=Instruction&id=3", "I3 I2 D10 I1",
		    "not_waiting");
	r = get_status(API "dev/timeline/chain?table=Instruction&id=3", 200);
	steps = json_object_get(r, "steps");
	st = json_array_get(steps, 0); /* the selected one: no edge below it */
	assert_true(json_is_null(json_object_get(st, "edge")));
	assert_int_equal(json_integer_value(json_object_get(st, "wait")), 50);
	assert_string_equal(json_string_value(json_object_get(st, "track")), "Vector");
	assert_string_equal(json_string_value(json_object_get(st, "label")), "TENSOR_COPY");
	st = json_array_get(steps, 2);
	assert_string_equal(json_string_value(json_object_get(st, "kind")), "dma");
	assert_string_equal(json_string_value(json_object_get(st, "edge")), "SEMAPHORE");
	assert_int_equal(json_integer_value(json_object_get(st, "gap")), 20);
	assert_int_equal(json_integer_value(json_object_get(st, "start")), 120);
	assert_int_equal(json_integer_value(json_object_get(st, "end")), 480);
	assert_true(json_is_null(json_object_get(st, "wait")));
	st = json_array_get(steps, 3);
	assert_string_equal(json_string_value(json_object_get(st, "edge")), "DGE_TRIGGER");
	assert_int_equal(json_integer_value(json_object_get(st, "gap")), 10);
	json_decref(r);
	/* from a transfer; the limit; an instruction that did not wait; no edge; a cycle */
	check_chain(API "dev/timeline/chain?table=DmaPacketAggregated&id=10", "D10 I1",
		    "not_waiting");
	check_chain(API "dev/timeline/chain?table=Instruction&id=3&max=2", "I3 I2", "limit");
	check_chain(API "dev/timeline/chain?table=Instruction&id=4", "I4", "not_waiting");
	check_chain(API "dev/timeline/chain?table=Instruction&id=6", "I6", "no_edge");
	check_chain(API "dev/timeline/chain?table=Instruction&id=7", "I7 I8", "cycle");
	/* a profile without Flow: the event alone */
	check_chain(API "bare/timeline/chain?table=Instruction&id=1", "I1", "no_flow");
}

static void test_chain_bad_requests(void **state)
{
	static const struct {
		const char *path;
		int status;
		const char *msg; /* in the error's message */
	} bad[] = {
		{ API "dev/timeline/chain?table=Instruction", 400, "id must be an integer" },
		{ API "dev/timeline/chain?table=Instruction&id=x1", 400, "id must be an integer" },
		{ API "dev/timeline/chain?table=Instruction&id=1.5", 400, "id must be an integer" },
		{ API "dev/timeline/chain?table=Instruction&id=", 400, "id must be an integer" },
		{ API "dev/timeline/chain?table=Instruction&id=9223372036854775808", 400,
		  "id must be an integer" },
		{ API "dev/timeline/chain?table=SystemProfileEvents&id=1", 400,
		  "table must be Instruction or DmaPacketAggregated" },
		{ API "dev/timeline/chain?table=DmaPacket&id=1", 400,
		  "table must be Instruction or DmaPacketAggregated" },
		{ API "dev/timeline/chain?table=&id=1", 400,
		  "table must be Instruction or DmaPacketAggregated" },
		{ API "dev/timeline/chain?id=1", 400, "table must be Instruction or DmaPacketAggregated" },
		{ API "dev/timeline/chain?table=Instruction&id=1&max=0", 400,
		  "max must be an integer from 1 to 256" },
		{ API "dev/timeline/chain?table=Instruction&id=1&max=257", 400,
		  "max must be an integer from 1 to 256" },
		{ API "dev/timeline/chain?table=Instruction&id=1&max=", 400,
		  "max must be an integer from 1 to 256" },
		{ API "dev/timeline/chain?table=Instruction&id=1&max=2x", 400,
		  "max must be an integer from 1 to 256" },
		{ API "dev/timeline/chain?table=Instruction&id=99", 404,
		  "no Instruction row with id 99" },
		{ API "bare/timeline/chain?table=DmaPacketAggregated&id=1", 404,
		  "profile 'bare' has no table 'DmaPacketAggregated'" },
		{ API "nope/timeline/chain?table=Instruction&id=1", 404, "nope" },
		/* .../timeline/flows reads the same event arguments */
		{ API "dev/timeline/flows?table=Instruction", 400, "id must be an integer" },
		{ API "dev/timeline/flows?table=Instruction&id=1.5", 400, "id must be an integer" },
		{ API "dev/timeline/flows?table=DmaPacket&id=1", 400,
		  "table must be Instruction or DmaPacketAggregated" },
		{ API "dev/timeline/flows?id=1", 400, "table must be Instruction or DmaPacketAggregated" },
		{ API "nope/timeline/flows?table=Instruction&id=1", 404, "nope" },
	};

	(void)state;
	for (size_t i = 0; i < NX_ARRAY_SIZE(bad); i++) {
		json_t *r = get_status(bad[i].path, bad[i].status);
		const char *msg = json_string_value(json_object_get(json_object_get(r, "error"),
								    "message"));

		assert_non_null(msg);
		if (!strstr(msg, bad[i].msg))
			fail_msg("GET %s: message '%s' lacks '%s'", bad[i].path, msg, bad[i].msg);
		json_decref(r);
	}
}

/* .../timeline/flows: the edges into and out of one event, both ends named. */
static void test_flows(void **state)
{
	json_t *r, *res;

	(void)state;
	/* instruction 2: released by transfer 10 and by 5, releases 3 */
	r = get_status(API "dev/timeline/flows?table=Instruction&id=2", 200);
	res = json_object_get(r, "result");
	assert_int_equal(json_integer_value(json_object_get(res, "row_count")), 3);
	json_decref(r);
	/* a profile without Flow answers null */
	r = get_status(API "bare/timeline/flows?table=Instruction&id=1", 200);
	assert_true(json_is_null(json_object_get(r, "result")));
	json_decref(r);
}

static void test_memory(void **state)
{
	json_t *r, *rows, *row, *psum;
	size_t i;

	(void)state;
	r = get_status(API "dev/timeline/memory?t0=0&t1=2500&px=25", 200);
	assert_int_equal(json_integer_value(json_object_get(r, "bucket")), 128);
	rows = json_object_get(json_object_get(r, "sbuf"), "rows");
	assert_int_equal(json_array_size(rows), 2);
	/* the largest first: b (1500 ns in the window x 1024 B) before a (1000 x 1024) */
	row = json_array_get(rows, 0);
	assert_int_equal(json_integer_value(json_array_get(row, 1)), 32);
	assert_int_equal(json_integer_value(json_array_get(row, 4)), 1024);
	assert_int_equal(json_integer_value(json_array_get(row, 5)), 2047);
	assert_string_equal(json_string_value(json_array_get(row, 6)), "instruction");
	assert_string_equal(json_string_value(json_array_get(row, 7)), "TENSOR_COPY");
	assert_string_equal(json_string_value(json_array_get(row, 9)), "dst=x");
	assert_int_equal(json_integer_value(json_array_get(row, 12)), 2);
	row = json_array_get(rows, 1);
	assert_string_equal(json_string_value(json_array_get(row, 7)), "a");
	assert_string_equal(json_string_value(json_array_get(row, 10)), "q0");
	assert_int_equal(json_integer_value(json_array_get(row, 11)), 4);
	/* PSUM per bucket of 128 ns from one window back: bank 0 is the largest sample */
	psum = json_object_get(json_object_get(r, "psum"), "rows");
	assert_true(json_array_size(psum) >= 5);
	json_array_foreach(psum, i, row) {
		long long ts = json_integer_value(json_array_get(row, 1));
		double b0 = json_real_value(json_array_get(row, 2));
		long long last = -1;

		assert_int_equal(ts % 128, 0);
		for (long long t = 0; t < 1000; t += 100)
			if (t >= ts && t < ts + 128)
				last = t;
		assert_true(last >= 0);
		assert_true(b0 > last / 1000.0 - 1e-6 && b0 < last / 1000.0 + 1e-6);
		assert_true(json_real_value(json_array_get(row, 3)) > 0.49);
	}
	json_decref(r);
	/* nothing in the window; a profile without the tables; bad windows */
	r = get_status(API "dev/timeline/memory?t0=5000&t1=6000&px=10", 200);
	assert_int_equal(json_array_size(json_object_get(json_object_get(r, "sbuf"), "rows")), 0);
	json_decref(r);
	r = get_status(API "bare/timeline/memory?t0=0&t1=100&px=10", 200);
	assert_true(json_is_null(json_object_get(r, "sbuf")));
	assert_true(json_is_null(json_object_get(r, "psum")));
	json_decref(r);
	json_decref(get_status(API "dev/timeline/memory?t0=10&t1=5&px=10", 400));
	json_decref(get_status(API "dev/timeline/memory?t0=0&t1=100", 400));
	json_decref(get_status(API "dev/timeline/memory?t0=0&t1=1e3&px=10", 400));
	json_decref(get_status(API "nope/timeline/memory?t0=0&t1=100&px=10", 404));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_chain_walk),
		cmocka_unit_test(test_chain_bad_requests),
		cmocka_unit_test(test_flows),
		cmocka_unit_test(test_memory),
	};

	return nx_test_done(cmocka_run_group_tests(tests, setup, teardown));
}
