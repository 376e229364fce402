/* SPDX-License-Identifier: MIT
 * test_dump_shape.c: our profiles have the shape of real dumps, so scripts written
 * against those bind to ours. A simulator capture (kernel gen + capture + view through
 * the binary, $NX_BIN) and a framework-trace profile (view -d) are opened table by
 * table by file name, <Table>.parquet, with DuckDB and with hyparquet (an independent
 * reader): every stored schema table is there, zero-row ones included, with exactly
 * the schema's column names, order and types. The server lists and queries the empty
 * tables and `recommend` runs. Then the columns filled from our data are checked
 * against the tables they come from. */
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
#include "db/profile_views.h"
#include "helper/fixture.h"
#include "helper/http_client.h"
#include "neff/neff.h"
#include "schema/schema.h"
#include "server/server.h"

#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *bin, *src_dir;
static char *dir, *captured, *framework;

/* The first column of the first row of a query over the profile's files, as a double. */
static double q(const char *fmt, ...) NX_PRINTF(1, 2);
static double q(const char *fmt, ...)
{
	struct nx_duck *d = NULL;
	struct nx_err err = { 0 };
	va_list ap;
	char *sql = NULL;
	double v = NAN;

	va_start(ap, fmt);
	NX_ASSERT_CMP(vasprintf(&sql, fmt, ap), >=, 0);
	va_end(ap);
	assert_int_equal(nx_duck_open(&d, 1, NULL, &err), 0);
	if (nx_duck_query_f64(d, sql, &v, &err))
		fail_msg("%s: %s", sql, err.msg);
	nx_duck_close(d);
	free(sql);
	return v;
}

/* The same over views named after the tables of a profile. */
static double qp(const char *profile, const char *fmt, ...) NX_PRINTF(2, 3);
static double qp(const char *profile, const char *fmt, ...)
{
	struct nx_duck *d = NULL;
	struct nx_err err = { 0 };
	va_list ap;
	char *sql = NULL;
	double v = NAN;

	va_start(ap, fmt);
	NX_ASSERT_CMP(vasprintf(&sql, fmt, ap), >=, 0);
	va_end(ap);
	assert_int_equal(nx_duck_open(&d, 1, NULL, &err), 0);
	if (nx_db_create_views(d, profile, &err) || nx_duck_query_f64(d, sql, &v, &err))
		fail_msg("%s: %s", sql, err.msg);
	nx_duck_close(d);
	free(sql);
	return v;
}

/* read_parquet('<profile>/<Table>.parquet'), for use in q(). */
static char *tab(const char *profile, const char *table)
{
	return nx_xasprintf("read_parquet('%s/%s.parquet')", profile, table);
}

static int setup(void **state)
{
	(void)state;
	bin = nx_test_bin();
	src_dir = getenv("NX_SOURCE_DIR");
	if (!src_dir)
		return -1;
	dir = nx_test_dir("dump-shape");
	captured = nx_xasprintf("%s/data/profiles/global/mm@latest", dir);
	framework = nx_xasprintf("%s/data/profiles/global/fw@latest", dir);
	/* a capture of the naive matmul, with DMA packet records */
	if (nx_test_sh("cd %s && %s kernel gen matmul_v0 --size 512 -o mm.neff >/dev/null && "
		       "NEURON_RT_ENABLE_DGE_NOTIFICATIONS=1 %s capture -n mm.neff -s mm.ntff "
		       ">/dev/null && %s view -n mm.neff -s mm.ntff --data-path %s/data "
		       "--display-name mm --ingest-only -q >/dev/null",
		       dir, bin, bin, bin, dir))
		return -1;
	/* a framework trace alone: no device profile at all */
	if (nx_test_sh("mkdir -p %s/run && printf '%%s' '{\"traceEvents\": ["
		       "{\"ph\": \"X\", \"name\": \"step\", \"pid\": 1, \"tid\": 1, \"ts\": 10, "
		       "\"dur\": 5}, {\"ph\": \"X\", \"name\": \"matmul\", \"pid\": 1, \"tid\": 1, "
		       "\"ts\": 11, \"dur\": 2}]}' > %s/run/trace.json && "
		       "%s view -d %s/run --data-path %s/data --display-name fw --ingest-only -q "
		       ">/dev/null", dir, dir, bin, dir, dir))
		return -1;
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	free(dir);
	free(captured);
	free(framework);
	return 0;
}

/* ---- shape: DuckDB ----------------------------------------------------------------- */

struct describe {
	size_t n;
	char name[128][64];
	char type[128][32];
};

static void describe_cell(void *arg, size_t row, const char *column, int kind, const char *text)
{
	struct describe *d = arg;
	(void)kind;
	if (row >= 128)
		return;
	if (row + 1 > d->n)
		d->n = row + 1;
	if (!strcmp(column, "column_name"))
		snprintf(d->name[row], sizeof(d->name[row]), "%s", text);
	else if (!strcmp(column, "column_type"))
		snprintf(d->type[row], sizeof(d->type[row]), "%s", text);
}

/* Every stored table: the file exists, DuckDB reads it, columns and types in order. */
static void check_duckdb(const char *profile, size_t *empty)
{
	struct nx_duck *d = NULL;
	struct nx_err err = { 0 };

	assert_int_equal(nx_duck_open(&d, 1, NULL, &err), 0);
	*empty = 0;
	for (size_t t = 0; t < nx_schema_table_count; t++) {
		const struct nx_table *tb = &nx_schema_tables[t];
		char *path = nx_xasprintf("%s/%s.parquet", profile, tb->name);
		if (!tb->written) {
			if (nx_is_file(path))
				fail_msg("%s: the transient table %s was written", profile, tb->name);
			free(path);
			continue;
		}
		if (!nx_is_file(path))
			fail_msg("%s: no %s.parquet", profile, tb->name);
		struct describe ds = { 0 };
		char *sql = nx_xasprintf("DESCRIBE SELECT * FROM read_parquet('%s')", path);
		if (nx_duck_query_cells(d, sql, describe_cell, &ds, &err))
			fail_msg("%s: %s", path, err.msg);
		if (ds.n != tb->nfields)
			fail_msg("%s: %zu columns, the schema has %zu", path, ds.n, tb->nfields);
		for (size_t i = 0; i < tb->nfields; i++) {
			const struct nx_field *f = &tb->fields[i];
			if (strcmp(ds.name[i], f->name))
				fail_msg("%s: column %zu is '%s', the schema says '%s'", path, i,
					 ds.name[i], f->name);
			if (strcmp(ds.type[i], nx_schema_duck_type(f)))
				fail_msg("%s: %s is %s, the schema says %s", path, f->name, ds.type[i],
					 nx_schema_duck_type(f));
		}
		free(sql);
		sql = nx_xasprintf("SELECT count(*) FROM read_parquet('%s')", path);
		int64_t rows = -1;
		if (nx_duck_query_i64(d, sql, &rows, &err))
			fail_msg("%s: %s", path, err.msg);
		*empty += rows == 0;
		free(sql);
		free(path);
	}
	nx_duck_close(d);
}

static void test_captured_duckdb(void **state)
{
	size_t empty;
	(void)state;
	check_duckdb(captured, &empty);
	/* no collectives, no framework stack, no host samples in a capture */
	NX_ASSERT_CMP(empty, >=, 10);
	char *cc = tab(captured, "CcOp"), *hlo = tab(captured, "HloInstruction");
	NX_ASSERT_CMP(q("SELECT count(*) FROM %s", cc), ==, 0);
	NX_ASSERT_CMP(q("SELECT count(*) FROM %s", hlo), >=, 0);
	free(cc);
	free(hlo);
}

static void test_framework_duckdb(void **state)
{
	size_t empty;
	(void)state;
	check_duckdb(framework, &empty);
	/* every device table is empty; the events, metadata and schema tables are not */
	char *ev = tab(framework, "SystemProfileEvents"), *inst = tab(framework, "Instruction");
	NX_ASSERT_CMP(q("SELECT count(*) FROM %s", ev), ==, 2);
	NX_ASSERT_CMP(q("SELECT count(*) FROM %s", inst), ==, 0);
	NX_ASSERT_CMP(empty, >=, 40);
	free(ev);
	free(inst);
}

/* ---- shape: hyparquet ---------------------------------------------------------------- */

/* Parquet type hyparquet must report for a schema field: physical type, plus the
 * logical STRING for text; lists are a LIST group whose leaf has the item type. */
static void want_parquet(const struct nx_field *f, const char **phys, bool *list, bool *text)
{
	const char *dt = nx_schema_duck_type(f);
	*list = strstr(dt, "[]") != NULL;
	*text = !strncmp(dt, "VARCHAR", 7);
	*phys = !strncmp(dt, "BIGINT", 6) ? "INT64" : !strncmp(dt, "INTEGER", 7) ? "INT32"
	      : !strcmp(dt, "FLOAT") ? "FLOAT" : !strcmp(dt, "DOUBLE") ? "DOUBLE"
	      : !strcmp(dt, "BOOLEAN") ? "BOOLEAN" : "BYTE_ARRAY";
}

static void check_hyparquet(const char *profile)
{
	/* one node process for all tables (as tests/tools/check_parquet.mjs, whose column
	 * description it prints): the file name, then a JSON line with the schema and the
	 * row count read back */
	char *out = nx_xasprintf("%s/hyparquet-%s.txt", dir, profile == captured ? "mm" : "fw");
	assert_int_equal(nx_test_sh(
		"cd %s/tests/tools && node --input-type=module -e \""
		"import { asyncBufferFromFile, parquetMetadataAsync, parquetReadObjects } from 'hyparquet';"
		"import { compressors } from 'hyparquet-compressors';"
		"import { readdirSync } from 'fs';"
		"const dir = process.argv[1];"
		"for (const f of readdirSync(dir).filter(f => f.endsWith('.parquet')).sort()) {"
		"  const buf = await asyncBufferFromFile(dir + '/' + f);"
		"  const meta = await parquetMetadataAsync(buf);"
		"  const rows = await parquetReadObjects({ file: buf, compressors });"
		"  const columns = meta.schema.slice(1).map(s => ({ name: s.name, type: s.type ?? null,"
		"    logical: s.logical_type?.type ?? s.converted_type ?? null }));"
		"  console.log(f);"
		"  console.log(JSON.stringify({ num_rows: Number(meta.num_rows), read: rows.length,"
		"    columns }));"
		"}\" %s > %s.tmp && mv %s.tmp %s", src_dir, profile, out, out, out), 0);
	FILE *fp = fopen(out, "r");
	assert_non_null(fp);
	char *line = NULL;
	size_t cap = 0, seen = 0;
	char file[256] = "";
	while (getline(&line, &cap, fp) > 0) {
		line[strcspn(line, "\n")] = '\0';
		if (line[0] != '{') {
			snprintf(file, sizeof(file), "%s", line);
			continue;
		}
		char table[256];
		snprintf(table, sizeof(table), "%.*s", (int)(strlen(file) - 8), file);
		const struct nx_table *tb = nx_schema_table(table);
		if (!tb)
			fail_msg("%s: %s is not a schema table", profile, file);
		json_error_t je;
		json_t *j = json_loads(line, 0, &je);
		if (!j)
			fail_msg("%s: hyparquet output is not JSON: %s", file, je.text);
		json_t *cols = json_object_get(j, "columns");
		size_t k = 0;
		for (size_t i = 0; i < tb->nfields; i++) {
			const struct nx_field *f = &tb->fields[i];
			const char *phys;
			bool list, text;
			want_parquet(f, &phys, &list, &text);
			json_t *c = json_array_get(cols, k++);
			if (!c || strcmp(json_string_value(json_object_get(c, "name")), f->name))
				fail_msg("%s: column %zu is not '%s'", file, i, f->name);
			if (list) {
				const char *lg = json_string_value(json_object_get(c, "logical"));
				if (!lg || strcmp(lg, "LIST"))
					fail_msg("%s: %s is not a LIST", file, f->name);
				k++; /* the repeated "list" group */
				c = json_array_get(cols, k++);
				assert_non_null(c);
			}
			const char *ty = json_string_value(json_object_get(c, "type"));
			const char *lg = json_string_value(json_object_get(c, "logical"));
			if (!ty || strcmp(ty, phys))
				fail_msg("%s: %s has parquet type %s, want %s", file, f->name,
					 ty ? ty : "none", phys);
			if (text && (!lg || (strcmp(lg, "STRING") && strcmp(lg, "UTF8"))))
				fail_msg("%s: %s is not annotated as text", file, f->name);
		}
		if (k != json_array_size(cols))
			fail_msg("%s: %zu schema elements, expected %zu", file,
				 json_array_size(cols), k);
		/* every row decodes, zero-row files included */
		if (json_integer_value(json_object_get(j, "num_rows")) !=
		    json_integer_value(json_object_get(j, "read")))
			fail_msg("%s: hyparquet read %lld of %lld rows", file,
				 (long long)json_integer_value(json_object_get(j, "read")),
				 (long long)json_integer_value(json_object_get(j, "num_rows")));
		json_decref(j);
		seen++;
	}
	free(line);
	fclose(fp);
	remove(out);
	size_t written = 0;
	for (size_t t = 0; t < nx_schema_table_count; t++)
		written += nx_schema_tables[t].written;
	assert_int_equal(seen, written);
	free(out);
}

static void test_captured_hyparquet(void **state)
{
	(void)state;
	check_hyparquet(captured);
}

static void test_framework_hyparquet(void **state)
{
	(void)state;
	check_hyparquet(framework);
}

/* ---- empty tables are empty, not errors -------------------------------------------- */

static json_t *post(unsigned port, const char *profile, const char *body)
{
	struct nx_http_resp r;
	char path[256];
	json_error_t je;

	snprintf(path, sizeof(path), "/api/v1/db/%s/_search", profile);
	assert_int_equal(nx_http_post_json(port, path, body, &r), 0);
	if (r.status != 200)
		fail_msg("%s: status %d: %.300s", body, r.status, r.body);
	json_t *j = json_loads(r.body, 0, &je);
	nx_http_resp_free(&r);
	assert_non_null(j);
	return j;
}

static void test_server_and_recommend(void **state)
{
	struct nx_server_opts o;
	struct nx_server *srv = NULL;
	struct nx_err err = { 0 };
	char *data = nx_path_join(dir, "data");
	(void)state;

	nx_server_opts_init(&o, data);
	o.port = 0;
	o.quiet = true;
	o.threads = 1;
	if (nx_server_start(&srv, &o, &err))
		fail_msg("%s", err.msg);
	unsigned port = nx_server_port(srv);
	static const char *const profiles[] = { "mm", "fw" };
	for (size_t p = 0; p < NX_ARRAY_SIZE(profiles); p++) {
		json_t *j = post(port, profiles[p], "{\"type\":\"listDbFiles\"}");
		json_t *tables = json_object_get(j, "tables");
		size_t n = json_array_size(tables);
		bool cc = false;
		for (size_t i = 0; i < n; i++)
			cc |= !strcmp(json_string_value(json_object_get(json_array_get(tables, i),
									  "name")), "CcOp");
		assert_true(cc);
		assert_int_equal(n, nx_schema_table_count - 3);
		json_decref(j);
		j = post(port, profiles[p], "{\"type\":\"databaseExplorerQuery\",\"tableName\":"
			 "\"CcOp\",\"query\":\"SELECT count(*) AS n FROM CcOp\"}");
		assert_non_null(j);
		json_decref(j);
		j = post(port, profiles[p], "{\"type\":\"tableSchema\",\"tableName\":\"HloInstruction\"}");
		assert_true(json_is_true(json_object_get(j, "inProfile")));
		json_decref(j);
	}
	nx_server_stop(srv);
	/* recommend reads the capture; on the framework-only profile it says what is
	 * missing instead of failing on a missing file */
	assert_int_equal(nx_test_sh("%s recommend --data-path %s --display-name mm >%s/rec.md",
				    bin, data, dir), 0);
	assert_int_equal(nx_test_sh("%s recommend --data-path %s --display-name fw >%s/rec-fw.md "
				    "2>%s/rec-fw.err; test $? -eq 1 && grep -q 'no instructions and no DMA packets' "
				    "%s/rec-fw.err",
				    bin, data, dir, dir, dir), 0);
	free(data);
}

/* ---- filled columns ------------------------------------------------------------------ */

/* Per triggering instruction, what its DGE_TRIGGER edges and transfers say. */
#define TRIGGERS                                                                             \
	"WITH t AS (SELECT f.in_id AS id, min(a.start_ts) AS s, max(a.end_ts) AS e, "         \
	"min(f.gap_time) AS g, min(a.trigger) AS trig FROM Flow f JOIN DmaPacketAggregated a " \
	"ON a.id = f.out_id WHERE f.dependency_type = 'DGE_TRIGGER' GROUP BY f.in_id) "

static void test_dma_trigger_columns(void **state)
{
	(void)state;
	double n = qp(captured, "SELECT count(*) FROM Instruction WHERE dma_trigger_start_ts IS NOT NULL");
	NX_ASSERT_CMP(n, >, 0);
	/* exactly the instructions that triggered a transfer, and all three columns */
	NX_ASSERT_CMP(qp(captured, "SELECT count(DISTINCT in_id) FROM Flow WHERE dependency_type = "
				 "'DGE_TRIGGER'"), ==, n);
	NX_ASSERT_CMP(qp(captured, "SELECT count(*) FROM Instruction WHERE dma_trigger_end_ts IS NOT NULL "
				 "AND dma_wait_time_ns IS NOT NULL"), ==, n);
	/* the trigger (DmaPacketAggregated.trigger) lies inside the instruction, which ends
	 * before its transfers start; the span is that of its transfers; the wait is the
	 * delay from the instruction's end to the first transfer's start */
	NX_ASSERT_CMP(qp(captured, TRIGGERS "SELECT count(*) FROM Instruction i JOIN t USING (id) WHERE "
				 "i.dma_trigger_start_ts = t.s AND i.dma_trigger_end_ts = t.e AND "
				 "t.trig BETWEEN i.start_ts AND i.end_ts AND "
				 "i.end_ts <= i.dma_trigger_start_ts AND "
				 "i.dma_wait_time_ns = i.dma_trigger_start_ts - i.end_ts AND "
				 "i.dma_wait_time_ns = t.g"), ==, n);
	/* the waits add up to the trigger gaps of the Flow edges */
	NX_ASSERT_CMP(qp(captured, TRIGGERS "SELECT (SELECT sum(dma_wait_time_ns) FROM Instruction) - "
				 "(SELECT sum(g) FROM t)"), ==, 0);
	NX_ASSERT_CMP(qp(captured, "SELECT sum(dma_wait_time_ns) FROM Instruction"), >, 0);
}

/* MFU without HLO statistics follows the documented estimate (docs/derived-tables.md):
 * the kernel's own non-transpose matmul FLOPs over TE peak x total_time. */
static void test_mfu_formula(void **state)
{
	(void)state;
	static const char *const profiles[] = { "mm", "attention" };
	for (size_t i = 0; i < NX_ARRAY_SIZE(profiles); i++) {
		char *p = !strcmp(profiles[i], "mm") ? nx_xstrdup(captured)
			: nx_xasprintf("%s/data/profiles/global/%s@latest", dir, profiles[i]);
		if (strcmp(profiles[i], "mm"))
			assert_int_equal(nx_test_sh(
				"cd %s && %s kernel gen %s --size 512 -o %s.neff >/dev/null && "
				"NEURON_RT_ENABLE_DGE_NOTIFICATIONS=1 %s capture -n %s.neff -s %s.ntff "
				">/dev/null && %s view -n %s.neff -s %s.ntff --data-path %s/data "
				"--display-name %s --ingest-only -q >/dev/null", dir, bin, profiles[i],
				profiles[i], bin, profiles[i], profiles[i], bin, profiles[i],
				profiles[i], dir, profiles[i]), 0);
		double flops = qp(p, "SELECT sum(raw_flops) - sum(flops_transpose) FROM Instruction "
				     "WHERE opcode = 'MATMUL'");
		double peak = qp(p, "SELECT tensor_engine_num_rows * tensor_engine_num_cols * 2.0 * "
				    "tensor_engine_clock_freq * 1e9 FROM Metadata");
		double tt = qp(p, "SELECT total_time FROM Summary");
		double mfu = qp(p, "SELECT mfu_estimated_percent FROM Summary");
		double hfu = qp(p, "SELECT hfu_estimated_percent FROM Summary");
		double bytes = qp(p, "SELECT hbm_read_bytes + hbm_write_bytes FROM Summary");
		double hbm = qp(p, "SELECT hbm_ddr_bandwidth FROM Metadata");
		assert_true(flops > 0 && peak > 0 && tt > 0);
		NX_ASSERT_CMP(fabs(mfu - flops / (peak * tt)), <=, 1e-6 * mfu);
		assert_true(mfu > 0 && mfu <= hfu && mfu <= 1);
		double ceil_ = qp(p, "SELECT mfu_max_achievable_estimated_percent FROM Summary");
		NX_ASSERT_CMP(fabs(ceil_ - (flops / bytes) / (peak / hbm)), <=, 1e-6 * ceil_);
		NX_ASSERT_CMP(qp(p, "SELECT count(*) FROM Summary WHERE model_flops IS NULL AND "
				  "mfu_hlo_estimated_percent = 0 AND "
				  "mfu_hlo_max_achievable_estimated_percent = 0"), ==, 1);
		free(p);
	}
	/* attention transposes on the Tensor engine: those FLOPs count for HFU only */
	char *a = nx_xasprintf("%s/data/profiles/global/attention@latest", dir);
	NX_ASSERT_CMP(qp(a, "SELECT hfu_estimated_percent - mfu_estimated_percent FROM Summary"), >, 0);
	free(a);
}

/* BIR names are generated when the listing gives none, stable (I-<bir>_sg0000); the
 * ids tie each instruction to its statement (penguin) and kernel (HLO / framework). */
static void test_ids_and_names(void **state)
{
	(void)state;
	double n = qp(captured, "SELECT count(*) FROM Instruction");
	NX_ASSERT_CMP(n, >, 0);
	NX_ASSERT_CMP(qp(captured, "SELECT count(*) FROM Instruction WHERE bir_instruction_name = "
				 "'I-' || raw_bir_id || '_sg0000'"), ==, n);
	NX_ASSERT_CMP(qp(captured, "SELECT count(*) FROM Instruction i JOIN KernelInstructions k "
				 "USING (kernel_instruction_name) WHERE i.penguin_id = 'sg0000:' || "
				 "i.raw_penguin_id"), ==, n);
	NX_ASSERT_CMP(qp(captured, "SELECT count(*) FROM Instruction WHERE hlo_name = (SELECT "
				 "fully_qualified_function_name FROM KernelStackFrames WHERE "
				 "parent_stack_frame_id IS NULL) AND layer = hlo_name AND raw_hlo_id = "
				 "raw_framework_id AND hlo_attrs LIKE 'custom_call_target=\"%%'"), ==, n);
	/* stack_frame_ids -> StackFrame -> location -> interned file and function names:
	 * the kernel's own frame as KernelStackFrames has it */
	NX_ASSERT_CMP(qp(captured, "SELECT count(*) FROM Instruction i JOIN StackFrame f ON "
				 "i.stack_frame_ids = '[' || f.id || ']' JOIN StackFrameFileLocation l ON "
				 "l.id = f.file_location_id::VARCHAR JOIN StackFrameFunctionName fn ON "
				 "fn.id = l.function_name_id::VARCHAR JOIN StackFrameFileName fl ON "
				 "fl.id = l.file_name_id::VARCHAR JOIN KernelStackFrames k ON "
				 "k.fully_qualified_function_name = fn.name AND k.file_path = fl.name AND "
				 "k.line_number = l.line_number WHERE f.parent_frame_id = '0'"), ==, n);
}

/* The NEFF reader checks the bir_instructions of the debug info: names round-trip, and
 * a duplicate bir id, an empty name or an out-of-range id fail naming the member (the
 * writer reads every NEFF back before writing it, so it refuses them with the reader's
 * message). */
static void test_neff_bir_names(void **state)
{
	static const struct { int64_t id[2]; const char *name[2]; const char *msg; } cases[] = {
		{ { 2, 7 }, { "mm.0", "load" }, NULL },
		{ { 2, 2 }, { "mm.0", "mm.1" }, "bir_instructions[1].bir_id: bir id 2 is named twice" },
		{ { 2, 7 }, { "mm.0", "" }, "bir_instructions[1]" },
		{ { 2, 1LL << 33 }, { "mm.0", "big" }, "bir_instructions[1]" },
	};
	(void)state;
	for (size_t c = 0; c < NX_ARRAY_SIZE(cases); c++) {
		struct nx_neff n, back;
		struct nx_err err = { 0 };
		char *path = nx_xasprintf("%s/birs-%zu.neff", dir, c);

		nx_fixture_build_neff(&n, true);
		n.dbg.nbirs = 2;
		n.dbg.birs = nx_xcalloc(2, sizeof(*n.dbg.birs));
		for (int i = 0; i < 2; i++) {
			n.dbg.birs[i].bir_id = cases[c].id[i];
			n.dbg.birs[i].name = nx_xstrdup(cases[c].name[i]);
		}
		/* the writer reads its output back with the reader, which rejects bad input */
		int rc = nx_neff_write(path, &n, &err);
		memset(&back, 0, sizeof(back));
		if (!cases[c].msg) {
			if (rc)
				fail_msg("case %zu: %s", c, err.msg);
			assert_int_equal(nx_neff_read(path, &back, &err), 0);
			assert_int_equal(back.dbg.nbirs, 2);
			assert_int_equal(back.dbg.birs[1].bir_id, 7);
			assert_string_equal(back.dbg.birs[0].name, "mm.0");
		} else {
			NX_ASSERT_CMP(rc, <, 0);
			if (!strstr(err.msg, cases[c].msg) || !strstr(err.msg, "kernel_debug_info.json"))
				fail_msg("case %zu: '%s' lacks '%s'", c, err.msg, cases[c].msg);
		}
		nx_neff_release(&back);
		nx_neff_release(&n);
		free(path);
	}
}

/* The IR hierarchy tables roll up the instructions that carry its ids, and each level
 * points at an existing parent. */
static void test_ir_hierarchy(void **state)
{
	(void)state;
	static const char *const levels[][2] = {
		{ "BirInstruction", "raw_bir_id" }, { "PenguinInstruction", "raw_penguin_id" },
		{ "HloInstruction", "raw_hlo_id" }, { "FrameworkInstruction", "raw_framework_id" },
	};
	for (size_t l = 0; l < NX_ARRAY_SIZE(levels); l++) {
		const char *t = levels[l][0], *k = levels[l][1];
		double n = qp(captured, "SELECT count(*) FROM %s", t);
		NX_ASSERT_CMP(n, >, 0);
		NX_ASSERT_CMP(qp(captured, "SELECT count(DISTINCT %s) FROM Instruction", k), ==, n);
		/* span, totals and per-interval lists agree with the instructions */
		NX_ASSERT_CMP(qp(captured,
			       "WITH i AS (SELECT %s AS k, min(start_ts) AS s, max(end_ts) AS e, "
			       "sum(coalesce(tensor_elements, 0)) AS el, sum(coalesce(hbm_read_bytes, 0) "
			       "+ coalesce(hbm_write_bytes, 0)) AS hbm, sum(hbm_read_bytes) AS r "
			       "FROM Instruction GROUP BY 1) "
			       "SELECT count(*) FROM %s h JOIN i ON i.k = h.%s WHERE h.id = h.%s AND "
			       "h.start_ts = i.s AND h.end_ts = i.e AND list_sum(h.element_count_per_interval) "
			       "= i.el AND list_sum(h.hbm_transfer_size_per_interval) = i.hbm AND "
			       "h.hbm_read_bytes = i.r AND len(h.element_count_per_interval) = "
			       "len(from_json(h.time_intervals, '[[\"BIGINT\"]]')) AND "
			       "from_json(h.time_intervals, '[[\"BIGINT\"]]')[1][1] = i.s",
			       k, t, k, k), ==, n);
	}
	/* parents exist */
	NX_ASSERT_CMP(qp(captured, "SELECT count(*) FROM BirInstruction b LEFT JOIN PenguinInstruction p "
				 "USING (raw_penguin_id) WHERE p.id IS NULL"), ==, 0);
	NX_ASSERT_CMP(qp(captured, "SELECT count(*) FROM PenguinInstruction p LEFT JOIN HloInstruction h "
				 "USING (raw_hlo_id) WHERE h.id IS NULL"), ==, 0);
	NX_ASSERT_CMP(qp(captured, "SELECT count(*) FROM HloInstruction h LEFT JOIN FrameworkInstruction f "
				 "USING (raw_framework_id) WHERE f.id IS NULL"), ==, 0);
	NX_ASSERT_CMP(qp(captured, "SELECT count(*) FROM HloInstruction h JOIN Instruction i USING "
				 "(raw_hlo_id) WHERE h.hlo_name <> i.hlo_name"), ==, 0);
	/* the framework op counts its instructions per engine; the tree names it */
	NX_ASSERT_CMP(qp(captured, "SELECT sum(tensor_engine_instruction_count + "
				 "sync_engine_instruction_count + vector_engine_instruction_count + "
				 "scalar_engine_instruction_count + gpsimd_engine_instruction_count) FROM "
				 "FrameworkInstruction"), ==, qp(captured, "SELECT count(*) FROM Instruction"));
	NX_ASSERT_CMP(qp(captured, "SELECT count(*) FROM FrameworkNode n JOIN FrameworkInstruction f "
				 "ON n.node_name = f.framework_name AND n.children_ids = "
				 "'[' || f.raw_framework_id || ']' AND n.start_ts = f.start_ts AND "
				 "n.time_intervals = f.time_intervals AND n.parent_name = '' AND "
				 "n.total_time_tensor <> '[]'"), ==, 1);
}

/* A listing names its BIR instructions with name=; the NEFF carries the names and the
 * profile shows them; bad names fail with the listing's file and line. */
static void test_listing_names(void **state)
{
	(void)state;
	char *k = nx_xasprintf("%s/named", dir);
	assert_int_equal(nx_test_sh(
		"mkdir -p %s && cd %s && cat > k.txt <<'EOF'\n"
		"kernel tile\nsource kernels/tile.py\nframe tile kernels/tile.py:8\n"
		"tensor lhsT input bf16 128x128\ntensor rhs input bf16 128x512\n"
		"tensor result output bf16 128x512\n"
		"queue qSyncIO0 in Sync sem=1\nqueue qVectorIO0 out Vector sem=2\n"
		"block load_lhsT qSyncIO0\n  desc lhsT[0:128, 0:128] -> sbuf[0:128]+0\n"
		"block load_rhs qSyncIO0\n  desc rhs[0:128, 0:512] -> sbuf[0:128]+256\n"
		"block store qVectorIO0\n  desc sbuf[0:128]+1280 -> result[0:128, 0:512]\n"
		"@12 Sync dma_trigger block=load_lhsT name=load.lhsT\n"
		"@13 Sync dma_trigger block=load_rhs\n"
		"@14 Tensor ldweights src=sbuf[0:128]+0:bf16[128] wait=S[1]>=16 name=mm.0\n"
		"@14 Tensor matmul src=sbuf[0:128]+256:bf16[512] dst=psum[0:128]+0:fp32[512] "
		"wait=S[1]>=32 sig=S[3]++ name=mm.0\n"
		"@15 Vector tensor_copy src=psum[0:128]+0:fp32[512] dst=sbuf[0:128]+1280:bf16[512] "
		"wait=S[3]>=1\n"
		"@16 Vector dma_trigger block=store\n@17 Sync event_semaphore wait=S[2]>=16\n"
		"EOF\n"
		"%s kernel asm k.txt -o k.neff >/dev/null && NEURON_RT_ENABLE_DGE_NOTIFICATIONS=1 "
		"%s capture -n k.neff -s k.ntff >/dev/null && %s view -n k.neff -s k.ntff "
		"--output-file %s/p --ingest-only -q >/dev/null", k, k, bin, bin, bin, k), 0);
	char *p = nx_path_join(k, "p");
	NX_ASSERT_CMP(qp(p, "SELECT count(*) FROM Instruction WHERE bir_instruction_name = "
			  "'load.lhsT' AND opcode = 'DMA_DIRECT2D'"), ==, 1);
	NX_ASSERT_CMP(qp(p, "SELECT count(*) FROM Instruction WHERE bir_instruction_name = 'mm.0' "
			  "AND opcode IN ('LDWEIGHTS', 'MATMUL')"), ==, 2);
	NX_ASSERT_CMP(qp(p, "SELECT count(*) FROM Instruction WHERE bir_instruction_name = "
			  "'I-' || raw_bir_id || '_sg0000'"), ==, 4);
	/* bad input: an empty name, and a second name for one BIR instruction */
	assert_int_equal(nx_test_sh("cd %s && sed 's/name=load.lhsT/name=/' k.txt > bad1.txt && "
				    "! %s kernel asm bad1.txt -o bad1.neff 2>err1 && "
				    "grep -q 'bad1.txt:15: empty instruction name' err1", k, bin), 0);
	assert_int_equal(nx_test_sh("cd %s && sed 's/sig=S\\[3\\]++ name=mm.0/sig=S[3]++ name=mm.1/' "
				    "k.txt > bad2.txt && ! %s kernel asm bad2.txt -o bad2.neff 2>err2 && "
				    "grep -q \"bad2.txt:18: BIR instruction 2 is already named 'mm.0'\" err2",
				    k, bin), 0);
	free(p);
	free(k);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_captured_duckdb),
		cmocka_unit_test(test_framework_duckdb),
		cmocka_unit_test(test_captured_hyparquet),
		cmocka_unit_test(test_framework_hyparquet),
		cmocka_unit_test(test_server_and_recommend),
		cmocka_unit_test(test_dma_trigger_columns),
		cmocka_unit_test(test_ids_and_names),
		cmocka_unit_test(test_mfu_formula),
		cmocka_unit_test(test_listing_names),
		cmocka_unit_test(test_ir_hierarchy),
		cmocka_unit_test(test_neff_bir_names),
	};
	return nx_test_done(cmocka_run_group_tests(tests, setup, teardown));
}
