/* SPDX-License-Identifier: MIT
 * test_trace_ingest.c: framework-trace ingest end to end. Every vendored trace
 * (tests/data/framework-traces, see its SOURCES.md) ingests with the row count its
 * event count implies and the documented warnings; malformed inputs fail or warn as
 * docs/framework-traces.md says; directory mode pairs a NEFF/NTFF by hash next to
 * several traces; the Perfetto export reads back through our own reader with the same
 * event count. Values are read back from the parquet files through DuckDB. */
#include "common/compat.h"
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "helper/asserts.h"

#include "common/fsutil.h"
#include "common/strbuf.h"
#include "common/xalloc.h"
#include "db/duck.h"
#include "export/perfetto.h"
#include "helper/fixture.h"
#include "ingest/ingest_dir.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct ctx {
	char *dir;        /* this run's scratch directory */
	char *shared;     /* the vendored framework traces */
	struct nx_duck *d;
};

static int64_t q64(struct ctx *c, const char *fmt, ...) NX_PRINTF(2, 3);
static int64_t q64(struct ctx *c, const char *fmt, ...)
{
	va_list ap;
	char *sql = NULL;
	int64_t v = -1;
	struct nx_err err = { 0 };

	va_start(ap, fmt);
	NX_ASSERT_CMP(vasprintf(&sql, fmt, ap), >=, 0);
	va_end(ap);
	if (nx_duck_query_i64(c->d, sql, &v, &err))
		fail_msg("query failed: %s\n%s", err.msg, sql);
	free(sql);
	return v;
}

/* Ingests input as the profile at dir/<tag>; returns the code. */
static int ingest(struct ctx *c, const char *input, const char *tag, char **out,
		  struct nx_err *err)
{
	struct nx_trace_opts o = { 0 };
	char *target = nx_path_join(c->dir, tag);

	o.input = input;
	o.output_dir = target;
	int rc = nx_trace_ingest_dir(&o, NULL, err);
	*out = target;
	return rc;
}

static char *shared(struct ctx *c, const char *file)
{
	return nx_path_join(c->shared, file);
}

/* Row counts: events - E - e + 1 when the file has top-level members besides
 * traceEvents (the trace_metadata row); see docs/framework-traces.md. */
static const struct expect {
	const char *file;
	int64_t events, rows, warnings, flow_rows;
} expected[] = {
	{ "hta_alexnet_a100.json.gz", 1408, 1409, 1, 500 },
	{ "hta_amd_mi250_rocm62.json.gz", 220, 221, 1, 45 },
	{ "hta_cpu_only_rank34of300.pt.trace.json.gz", 30, 31, 0, 0 },
	{ "hta_large_uint64_arg.pt.trace.json.gz", 2, 3, 0, 0 },
	{ "hta_nccl_rank0of2_a100.json.gz", 40573, 40574, 1, 13600 },
	{ "hta_rank0of16_a100_80g.json.gz", 108936, 108937, 1, 41671 },
	{ "kineto_h100_docs_trace.json", 75, 76, 1, 4 },
	{ "kineto_resnet50_v100_2021-06.pt.trace.json.gz", 75718, 75719, 0, 18192 },
	{ "ss_chrome69_simple_array.json", 1364, 1224, 1, 6 },
	{ "ss_edge_mismatched-name.json", 2, 1, 1, 0 },
	{ "ss_edge_simple-partial.json", 6, 4, 2, 0 },
	{ "ss_edge_unbalanced-args.json", 4, 2, 0, 0 },
	{ "ss_edge_zero-duration-events.json", 7, 4, 1, 0 },
	{ "tl_h100_bert_small.json.gz", 2551, 2552, 1, 193 },
	{ "tl_h100_owlv2_large.json.gz", 132152, 132153, 1, 14457 },
};

static void test_shared_traces(void **state)
{
	struct ctx *c = *state;

	for (size_t i = 0; i < NX_ARRAY_SIZE(expected); i++) {
		const struct expect *e = &expected[i];
		struct nx_err err = { 0 };
		char *in = shared(c, e->file), *out = NULL;
		if (ingest(c, in, e->file, &out, &err))
			fail_msg("%s: %s", e->file, err.msg);
		int64_t rows = q64(c, "SELECT count(*) FROM '%s/SystemProfileEvents.parquet'", out);
		int64_t ids = q64(c, "SELECT count(DISTINCT id) FROM '%s/SystemProfileEvents.parquet'", out);
		int64_t fw = q64(c, "SELECT count(*) FROM '%s/SystemProfileEvents.parquet' "
				    "WHERE trace_event_source = 'framework'", out);
		int64_t flows = q64(c, "SELECT count(*) FROM '%s/SystemProfileEvents.parquet' "
				       "WHERE len(flow_id) = 1", out);
		int64_t warn = 0;
		char *wpath = nx_path_join(out, "Warning.parquet");
		if (nx_is_file(wpath))
			warn = q64(c, "SELECT count(*) FROM '%s'", wpath);
		if (rows != e->rows || ids != rows || fw != rows || warn != e->warnings ||
		    flows != e->flow_rows)
			fail_msg("%s: rows %" PRId64 " (want %" PRId64 "), ids %" PRId64
				 ", warnings %" PRId64 " (want %" PRId64 "), flow rows %" PRId64
				 " (want %" PRId64 ")", e->file, rows, e->rows, ids, warn, e->warnings,
				 flows, e->flow_rows);
		assert_int_equal(q64(c, "SELECT count(*) FROM '%s/SystemProfileMetadata.parquet'", out), 1);
		assert_int_equal(q64(c, "SELECT count(*) FROM '%s/Metadata.parquet'", out), 1);
		NX_ASSERT_CMP(q64(c, "SELECT count(*) FROM '%s/SchemaFields.parquet'", out), >, 600);
		assert_int_equal(q64(c, "SELECT count(*) FROM '%s/SystemProfileEvents.parquet' "
				     "WHERE NOT json_valid(extra_attributes_json)", out), 0);
		/* The device memory the reader took from the top-level members is what SQL
		 * finds in the metadata rows it wrote. */
		assert_int_equal(q64(c, "SELECT hbm_capacity_bytes FROM "
				     "'%s/SystemProfileMetadata.parquet'", out),
				 q64(c, "SELECT coalesce(max(TRY_CAST(json_extract_string("
					"extra_attributes_json, '$.args.deviceProperties[0]."
					"totalGlobalMem') AS BIGINT)), 0) FROM "
					"'%s/SystemProfileEvents.parquet' WHERE name = "
					"'trace_metadata'", out));
		free(wpath);
		free(in);
		free(out);
	}
}

static void test_values(void **state)
{
	struct ctx *c = *state;
	struct nx_err err = { 0 };
	char *in, *out;

	/* A uint64 above INT64_MAX survives exactly in extra_attributes_json. */
	in = shared(c, "hta_large_uint64_arg.pt.trace.json.gz");
	assert_int_equal(ingest(c, in, "uint64", &out, &err), 0);
	assert_int_equal(q64(c, "SELECT count(*) FROM '%s/SystemProfileEvents.parquet' WHERE "
			     "name = 'record_param_comms' AND start_ts = 200000 AND duration_ns = 100000 "
			     "AND extra_attributes_json LIKE '%%\"Comms Id\":10159970886766084423%%'", out), 1);
	free(in);
	free(out);
	/* Float microseconds become exact nanoseconds; string pids map to stable ids and
	 * keep their text; the metadata row carries distributedInfo. */
	in = shared(c, "hta_cpu_only_rank34of300.pt.trace.json.gz");
	assert_int_equal(ingest(c, in, "cpu", &out, &err), 0);
	assert_int_equal(q64(c, "SELECT start_ts FROM '%s/SystemProfileEvents.parquet' WHERE id = 1", out),
			 1212075548353304LL);
	assert_int_equal(q64(c, "SELECT duration_ns FROM '%s/SystemProfileEvents.parquet' WHERE id = 1", out),
			 173209713LL);
	assert_int_equal(q64(c, "SELECT count(DISTINCT process_id) FROM '%s/SystemProfileEvents.parquet' "
			     "WHERE extra_attributes_json LIKE '%%\"pid\":\"Spans\"%%'", out), 1);
	NX_ASSERT_CMP(q64(c, "SELECT min(process_id) FROM '%s/SystemProfileEvents.parquet' "
			"WHERE extra_attributes_json LIKE '%%\"pid\":\"Spans\"%%'", out), >=, (1LL << 62));
	assert_int_equal(q64(c, "SELECT json_extract(extra_attributes_json, '$.args.distributedInfo.rank')::BIGINT "
			     "FROM '%s/SystemProfileEvents.parquet' WHERE name = 'trace_metadata'", out), 34);
	free(in);
	free(out);
	/* B/E pairs by stack, zero-length X kept. */
	in = shared(c, "ss_edge_zero-duration-events.json");
	assert_int_equal(ingest(c, in, "zero", &out, &err), 0);
	assert_int_equal(q64(c, "SELECT count(*) FROM '%s/SystemProfileEvents.parquet' WHERE "
			     "(name, start_ts, end_ts) IN (('A', 0, 2000), ('B', 1000, 1000), "
			     "('C', 2000, 10000), ('D', 3000, 3000))", out), 4);
	free(in);
	free(out);
}

/* hbm_capacity_bytes: the largest deviceProperties[0].totalGlobalMem over the files of
 * a directory, written as an integer, a number or a string holding one; others and
 * files without it do not count; none at all is 0. */
static void test_capacity(void **state)
{
	static const char *const files[][2] = {
		{ "a.trace.json", "[{\"totalGlobalMem\": \"4096\"}]" },
		{ "b.trace.json", "[{\"totalGlobalMem\": 8192}, {\"totalGlobalMem\": 99999}]" },
		{ "c.trace.json", "[{\"totalGlobalMem\": \"16384 bytes\"}]" },
		{ "d.trace.json", "[{\"totalGlobalMem\": 6000.4}]" },
		{ "e.trace.json", "[]" },
	};
	struct ctx *c = *state;
	struct nx_err err = { 0 };
	char *dir = nx_path_join(c->dir, "capacity-in"), *out;

	assert_int_equal(nx_mkdirs(dir, &err), 0);
	for (size_t i = 0; i < NX_ARRAY_SIZE(files); i++) {
		char *path = nx_path_join(dir, files[i][0]);
		char *text = nx_xasprintf("{\"traceEvents\": [{\"ph\": \"X\", \"name\": \"k\", "
					  "\"ts\": 1, \"dur\": 2, \"pid\": 1, \"tid\": 1}], "
					  "\"deviceProperties\": %s}", files[i][1]);
		assert_int_equal(nx_write_file_atomic(path, text, strlen(text), &err), 0);
		free(text);
		free(path);
	}
	assert_int_equal(ingest(c, dir, "capacity", &out, &err), 0);
	assert_int_equal(q64(c, "SELECT hbm_capacity_bytes FROM '%s/SystemProfileMetadata.parquet'",
			     out), 8192);
	free(out);
	/* Without the two largest: the number, rounded; then nothing usable: 0. */
	static const int64_t want[] = { 6000, 0 };
	static const char *const gone[][2] = { { "a.trace.json", "b.trace.json" },
					       { "d.trace.json", NULL } };
	for (size_t k = 0; k < 2; k++) {
		char *tag = nx_xasprintf("capacity-%zu", k);
		for (size_t i = 0; i < 2 && gone[k][i]; i++) {
			char *path = nx_path_join(dir, gone[k][i]);
			assert_int_equal(remove(path), 0);
			free(path);
		}
		assert_int_equal(ingest(c, dir, tag, &out, &err), 0);
		assert_int_equal(q64(c, "SELECT hbm_capacity_bytes FROM "
				     "'%s/SystemProfileMetadata.parquet'", out), want[k]);
		free(out);
		free(tag);
	}
	free(dir);
}

/* The documented policy for malformed input. */
static void test_malformed(void **state)
{
	struct ctx *c = *state;
	struct nx_err err = { 0 };
	char *in, *out, *path;

	in = shared(c, "hta_chakra_et_NOT_A_TRACE.json.gz");
	assert_int_equal(ingest(c, in, "chakra", &out, &err), NX_ECORRUPT);
	assert_non_null(strstr(err.msg, "hta_chakra_et_NOT_A_TRACE.json.gz' is not a Chrome trace"));
	assert_false(nx_is_dir(out));
	free(in);
	free(out);
	/* A missing closing bracket is a truncation: complete events are kept. */
	in = shared(c, "ss_edge_simple-partial.json");
	assert_int_equal(ingest(c, in, "partial", &out, &err), 0);
	assert_int_equal(q64(c, "SELECT count(*) FROM '%s/Warning.parquet' WHERE category = 'Missing Data' "
			     "AND message LIKE '%%at byte 419: the JSON ends early%%6 complete events%%'", out), 1);
	free(in);
	free(out);
	/* A trailing comma is a grammar error: fatal, with the byte offset. */
	path = nx_path_join(c->dir, "trailing.json");
	static const char trailing[] = "{\"traceEvents\": [{\"ph\": \"X\", \"ts\": 1, \"dur\": 2},]}";
	assert_int_equal(nx_write_file_atomic(path, trailing, strlen(trailing), &err), 0);
	assert_int_equal(ingest(c, path, "trailing", &out, &err), 0);
	assert_int_equal(q64(c, "SELECT count(*) FROM '%s/Warning.parquet' WHERE message LIKE "
			     "'%%1 trailing commas before a closing '']'' (the first at byte 48)%%'", out), 1);
	free(out);
	free(path);
	/* Anomalies become Warning rows; unknown phases are kept. */
	path = nx_path_join(c->dir, "odd.json");
	static const char odd[] =
		"[{\"ph\":\"E\",\"ts\":1,\"pid\":1,\"tid\":1},{\"ph\":\"X\",\"ts\":5,\"dur\":-3,\"pid\":1,"
		"\"tid\":1},{\"ph\":\"B\",\"name\":\"open\",\"ts\":2,\"pid\":1,\"tid\":1},{\"ph\":\"f\","
		"\"id\":9,\"ts\":3,\"pid\":1,\"tid\":1},{\"ph\":\"Q\",\"ts\":4,\"pid\":\"p\",\"tid\":1},"
		"{\"ph\":\"b\",\"id\":\"0x10\",\"cat\":\"c\",\"name\":\"a\",\"ts\":1,\"pid\":1,\"tid\":2},"
		"{\"ph\":\"e\",\"id\":\"0x10\",\"cat\":\"c\",\"name\":\"a\",\"ts\":7,\"pid\":1,\"tid\":3},"
		"7]";
	assert_int_equal(nx_write_file_atomic(path, odd, strlen(odd), &err), 0);
	assert_int_equal(ingest(c, path, "odd", &out, &err), 0);
	assert_int_equal(q64(c, "SELECT count(*) FROM '%s/SystemProfileEvents.parquet'", out), 5);
	assert_int_equal(q64(c, "SELECT end_ts FROM '%s/SystemProfileEvents.parquet' WHERE name = 'open'", out), 7000);
	assert_int_equal(q64(c, "SELECT duration_ns FROM '%s/SystemProfileEvents.parquet' WHERE name = 'a'", out), 6000);
	assert_int_equal(q64(c, "SELECT count(*) FROM '%s/Warning.parquet'", out), 6);
	static const char *const want[] = { "1 E events have no open B", "1 B events have no matching E",
					    "negative duration", "not in the Trace Event Format (''Q''",
					    "1 flow end (f) events", "are not objects" };
	for (size_t i = 0; i < NX_ARRAY_SIZE(want); i++)
		if (q64(c, "SELECT count(*) FROM '%s/Warning.parquet' WHERE contains(message, '%s')",
			out, want[i]) != 1)
			fail_msg("no warning containing '%s'", want[i]);
	free(out);
	free(path);
	/* A gzip file cut short keeps the events before the cut. */
	in = shared(c, "hta_alexnet_a100.json.gz");
	path = nx_path_join(c->dir, "cut.json.gz");
	assert_int_equal(nx_test_sh("head -c 12000 '%s' > '%s'", in, path), 0);
	assert_int_equal(ingest(c, path, "cut", &out, &err), 0);
	int64_t rows = q64(c, "SELECT count(*) FROM '%s/SystemProfileEvents.parquet'", out);
	assert_true(rows > 0 && rows < 1408);
	assert_int_equal(q64(c, "SELECT count(*) FROM '%s/Warning.parquet' WHERE category = 'Missing Data' "
			     "AND message LIKE '%%gzip stream ends early%%'", out), 1);
	free(in);
	free(out);
	free(path);
}

/* Directory mode: traces in several layouts plus a NEFF/NTFF pair matched by hash,
 * then the Perfetto export read back by our own reader. */
static void test_directory_and_perfetto(void **state)
{
	struct ctx *c = *state;
	struct nx_err err = { 0 };
	struct nx_fixture_opts fo;
	char *root = nx_path_join(c->dir, "capture"), *out;
	char *cap = nx_xasprintf("%s/i-0abc_pid_42", root);
	char *docs = shared(c, "kineto_h100_docs_trace.json");
	char *cpu = shared(c, "hta_cpu_only_rank34of300.pt.trace.json.gz");
	char *ub = shared(c, "ss_edge_unbalanced-args.json");

	assert_int_equal(nx_mkdirs(cap, &err), 0);
	nx_fixture_opts_default(&fo);
	assert_int_equal(nx_fixture_write(cap, &fo, &err), 0);
	assert_int_equal(nx_test_sh("cd '%s' && mv fixture.neff neff_1234567.neff && "
				    "mv fixture.ntff 1234567_instid_0_vnc_0.ntff && cp '%s' trace.json && "
				    "mkdir -p ../plugins/profile/run1 ../lone ../x && "
				    "cp '%s' ../plugins/profile/run1/host.pt.trace.json.gz && "
				    "cp '%s' ../x/neuron_framework_trace_rank_3.json && "
				    "cp 1234567_instid_0_vnc_0.ntff ../lone/999_instid_0_vnc_1.ntff",
				    cap, docs, cpu, ub), 0);
	if (ingest(c, root, "dirmode", &out, &err))
		fail_msg("%s", err.msg);
	int64_t fw = q64(c, "SELECT count(*) FROM '%s/SystemProfileEvents.parquet'", out);
	assert_int_equal(fw, 76 + 31 + 2);
	assert_int_equal(q64(c, "SELECT count(DISTINCT id) FROM '%s/SystemProfileEvents.parquet'", out), fw);
	assert_int_equal(q64(c, "SELECT count(*) FROM '%s/SystemProfileEvents.parquet' "
			     "WHERE instance_id = 'i-0abc'", out), 76);
	assert_int_equal(q64(c, "SELECT count(*) FROM '%s/DeviceProfileList.parquet' WHERE "
			     "device_profile_name = '1234567_instid_0_vnc_0' AND instance_id = 'i-0abc' "
			     "AND process_id = 42 AND nc_id = 0", out), 1);
	int64_t inst = q64(c, "SELECT count(*) FROM '%s/Instruction.parquet'", out);
	int64_t dma = q64(c, "SELECT count(*) FROM '%s/DmaPacket.parquet'", out);
	assert_true(inst > 0 && dma > 0);
	assert_int_equal(q64(c, "SELECT ntff_version FROM '%s/SystemProfileMetadata.parquet'", out),
			 q64(c, "SELECT ntff_version FROM '%s/Metadata.parquet'", out));
	assert_int_equal(q64(c, "SELECT count(*) FROM '%s/Warning.parquet' WHERE "
			     "message LIKE '%%999_instid_0_vnc_1.ntff'' has no NEFF%%'", out), 1);
	/* Perfetto export and round trip through our own reader. */
	struct nx_export_stats st;
	char *json = nx_path_join(c->dir, "dirmode.perfetto.json"), *back;
	if (nx_export_perfetto_ex(out, json, &st, &err))
		fail_msg("%s", err.msg);
	assert_int_equal(st.framework, fw);
	assert_int_equal(st.instructions, inst);
	assert_int_equal(st.dma, dma);
	assert_int_equal(st.events, st.framework + st.instructions + st.dma + st.names);
	if (ingest(c, json, "roundtrip", &back, &err))
		fail_msg("%s", err.msg);
	assert_int_equal(q64(c, "SELECT count(*) FROM '%s/SystemProfileEvents.parquet'", back),
			 (int64_t)st.events);
	assert_int_equal(q64(c, "SELECT count(*) FROM '%s/SystemProfileEvents.parquet' WHERE len(flow_id) = 1",
			     back),
			 q64(c, "SELECT count(*) FROM '%s/SystemProfileEvents.parquet' WHERE len(flow_id) = 1",
			     out));
	assert_int_equal(q64(c, "SELECT sum(duration_ns) FROM '%s/SystemProfileEvents.parquet'", back),
			 q64(c, "SELECT sum(duration_ns) FROM '%s/SystemProfileEvents.parquet'", out) +
			 q64(c, "SELECT sum(duration_ns) FROM '%s/Instruction.parquet'", out) +
			 q64(c, "SELECT sum(duration_ns) FROM '%s/DmaPacket.parquet'", out));
	free(back);
	free(json);
	free(out);
	/* Nothing to ingest is an error; nothing is published. */
	char *empty = nx_path_join(c->dir, "empty");
	assert_int_equal(nx_mkdirs(empty, &err), 0);
	assert_int_equal(ingest(c, empty, "none", &out, &err), NX_ENOTFOUND);
	assert_false(nx_is_dir(out));
	free(out);
	free(empty);
	free(root);
	free(cap);
	free(docs);
	free(cpu);
	free(ub);
}

static int setup(void **state)
{
	struct ctx *c = nx_xcalloc(1, sizeof(*c));
	const char *src = getenv("NX_SOURCE_DIR");
	struct nx_err err = { 0 };

	c->dir = nx_test_dir("trace");
	c->shared = nx_xasprintf("%s/tests/data/framework-traces", src && *src ? src : ".");
	if (nx_duck_open(&c->d, 2, NULL, &err))
		return -1;
	*state = c;
	return 0;
}

static int teardown(void **state)
{
	struct ctx *c = *state;
	struct nx_err err = { 0 };

	nx_duck_close(c->d);
	nx_remove_tree(c->dir, &err);
	free(c->dir);
	free(c->shared);
	free(c);
	return 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_shared_traces),
		cmocka_unit_test(test_values),
		cmocka_unit_test(test_capacity),
		cmocka_unit_test(test_malformed),
		cmocka_unit_test(test_directory_and_perfetto),
	};
	return nx_test_done(cmocka_run_group_tests(tests, setup, teardown));
}
