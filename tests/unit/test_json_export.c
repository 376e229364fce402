/* SPDX-License-Identifier: MIT
 * test_json_export.c: the legacy JSON export (export/json_export.h) of hand-made profiles
 * written by DuckDB: an Instruction table of more row groups than a slice holds is
 * exported the same, byte for byte, read slice by slice or whole, and as one file or as
 * split parts; the document loads (jansson) with every record, the durations sum to the
 * table's, text with quotes, backslashes, control bytes and UTF-8 comes back as it was;
 * a damaged table, a full disk and a fleet index give errors naming what failed. */
#include "common/compat.h"
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "common/fsutil.h"
#include "common/xalloc.h"
#include "db/duck.h"
#include "export/json_export.h"
#include "helper/asserts.h"
#include "helper/fixture.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define ROWS 140000 /* 69 row groups of 2048 rows: more than one slice */

static char *dir;
static struct nx_duck *d;

static void ex(const char *fmt, ...) NX_PRINTF(1, 2);
static void ex(const char *fmt, ...)
{
	struct nx_err err = { 0 };
	char *sql = NULL;
	va_list ap;

	va_start(ap, fmt);
	if (vasprintf(&sql, fmt, ap) < 0)
		fail();
	va_end(ap);
	if (nx_duck_exec(d, sql, &err))
		fail_msg("%s: %s", sql, err.msg);
	free(sql);
}

/* The Instruction rows: a quote, a backslash, a newline, a tab and UTF-8 in the text. */
static const char rows_sql[] =
	"SELECT range * 10 AS start_ts, range * 10 + 3 + range % 7 AS end_ts, "
	"3 + range % 7 AS duration_ns, (['Tensor', 'Vector', 'Sync'])[1 + range % 3] AS engine, "
	"CASE WHEN range % 4 = 0 THEN NULL ELSE 'Track' || (range % 4) END AS timeline_track, "
	"'MATMUL' AS opcode, 'a\"b\\c' || chr(10) || chr(9) || 'é→' || range AS operands, "
	"range AS id, range % 512 AS pc, 'sg00:' || range AS bir_id, 0 AS pcore_idx, "
	"'hlo' AS hlo_name, NULL::VARCHAR AS layer, 'k.py:' || (range % 90) AS nki_source_location, "
	"range % 5 AS evt_wait_time_ns FROM range(140000)"; /* ROWS */

static char *profile(const char *name)
{
	char *p = nx_path_join(dir, name);
	struct nx_err err = { 0 };

	if (nx_mkdirs(p, &err))
		fail_msg("%s", err.msg);
	ex("COPY (SELECT 1.5e-05::FLOAT AS total_time, 7::BIGINT AS event_count) TO "
	   "'%s/Summary.parquet' (FORMAT parquet)", p);
	return p;
}

/* Exports p to dir/<out>; returns the error code. */
static int export_to(const char *p, const char *out, bool slices, struct nx_err *err)
{
	char *path = nx_path_join(dir, out), *scratch = nx_path_join(dir, "scratch");
	struct nx_json_opts o = { .scratch = slices ? scratch : NULL };
	struct nx_json_stats st = { 0 };
	struct nx_err ignored = { 0 };
	FILE *f = fopen(path, "w");
	int rc;

	assert_non_null(f);
	nx_mkdirs(scratch, &ignored);
	rc = nx_export_json(p, f, &o, &st, err);
	if (fclose(f) && !rc)
		fail_msg("close %s", path);
	if (!rc) {
		NX_ASSERT_CMP(st.instructions, ==, ROWS);
		NX_ASSERT_CMP(st.records, ==, ROWS + 1);
	}
	/* the slices are gone */
	assert_int_equal(rmdir(scratch), 0);
	free(path);
	free(scratch);
	return rc;
}

static char *slurp(const char *name)
{
	char *path = nx_path_join(dir, name), *t = NULL;
	struct nx_err err = { 0 };

	if (nx_read_file(path, &t, NULL, &err))
		fail_msg("%s", err.msg);
	free(path);
	return t;
}

static void test_slices_whole_and_parts_agree(void **state)
{
	struct nx_err err = { 0 };
	char *one = profile("one"), *split = profile("split");

	(void)state;
	ex("COPY (%s) TO '%s/Instruction.parquet' (FORMAT parquet, ROW_GROUP_SIZE 2048)",
	   rows_sql, one);
	ex("COPY (%s WHERE range < 50000) TO '%s/Instruction_0.parquet' (FORMAT parquet, "
	   "ROW_GROUP_SIZE 2048)", rows_sql, split);
	ex("COPY (%s WHERE range >= 50000) TO '%s/Instruction_1.parquet' (FORMAT parquet, "
	   "ROW_GROUP_SIZE 2048)", rows_sql, split);
	assert_int_equal(export_to(one, "sliced.json", true, &err), 0);
	assert_int_equal(export_to(one, "whole.json", false, &err), 0);
	assert_int_equal(export_to(split, "split.json", true, &err), 0);
	char *a = slurp("sliced.json"), *b = slurp("whole.json"), *c = slurp("split.json");
	assert_string_equal(a, b);
	assert_string_equal(a, c);
	free(a);
	free(b);
	free(c);
	free(one);
	free(split);
}

static void test_document_loads(void **state)
{
	char *path = nx_path_join(dir, "sliced.json");
	json_error_t je;
	json_t *doc = json_load_file(path, 0, &je);
	int64_t sum = 0;

	(void)state;
	if (!doc)
		fail_msg("%s line %d: %s", path, je.line, je.text);
	json_t *ins = json_object_get(doc, "instruction");
	assert_true(json_is_array(ins));
	NX_ASSERT_CMP(json_array_size(ins), ==, ROWS);
	for (size_t i = 0; i < json_array_size(ins); i++)
		sum += json_integer_value(json_object_get(json_array_get(ins, i), "duration"));
	int64_t want = 0;
	for (int64_t r = 0; r < ROWS; r++)
		want += 3 + r % 7;
	NX_ASSERT_CMP(sum, ==, want);
	json_t *r5 = json_array_get(ins, 5);
	assert_string_equal(json_string_value(json_object_get(r5, "operands")),
			    "a\"b\\c\n\t\xc3\xa9\xe2\x86\x92" "5");
	assert_string_equal(json_string_value(json_object_get(r5, "label")), "Track1");
	/* timeline_track NULL: the engine */
	assert_string_equal(json_string_value(json_object_get(json_array_get(ins, 4), "label")),
			    "Vector");
	assert_true(json_is_null(json_object_get(r5, "layer")));
	NX_ASSERT_CMP(json_integer_value(json_object_get(json_array_get(ins, ROWS - 1),
							 "timestamp")), ==, (ROWS - 1) * 10);
	json_t *sum0 = json_array_get(json_object_get(doc, "summary"), 0);
	/* a FLOAT column: 9 significant digits, as summary-json has it: the same float32 */
	assert_true((float)json_real_value(json_object_get(sum0, "total_time")) == 1.5e-05f);
	NX_ASSERT_CMP(json_integer_value(json_object_get(sum0, "event_count")), ==, 7);
	/* tables the profile lacks: empty members, all present */
	const char *empty[] = { "dma", "dma_packet", "semaphore", "error", "throttle",
				"neff_node", "trace_events" };
	for (size_t i = 0; i < NX_ARRAY_SIZE(empty); i++) {
		json_t *m = json_object_get(doc, empty[i]);
		assert_true(json_is_array(m) && json_array_size(m) == 0);
	}
	json_t *info = json_object_get(doc, "profile_info");
	assert_true(json_is_object(info) && json_object_size(info) == 0);
	json_decref(doc);
	free(path);
}

static void test_errors(void **state)
{
	struct nx_err err = { 0 };
	char *dmg = profile("damaged"), *fleet = profile("fleet");
	char *one = nx_path_join(dir, "one");

	(void)state;
	/* a table cut short: refused with the table and the profile named */
	ex("COPY (%s) TO '%s/Instruction.parquet' (FORMAT parquet, ROW_GROUP_SIZE 2048)",
	   rows_sql, dmg);
	char *ip = nx_path_join(dmg, "Instruction.parquet");
	assert_int_equal(truncate(ip, 3000), 0);
	assert_int_not_equal(export_to(dmg, "dmg.json", true, &err), 0);
	assert_non_null(strstr(err.msg, "reading table Instruction of '"));
	assert_non_null(strstr(err.msg, "damaged"));
	/* a full disk */
	FILE *full = fopen("/dev/full", "w");
	if (full) {
		struct nx_json_opts o = { 0 };
		assert_int_not_equal(nx_export_json(one, full, &o, NULL, &err), 0);
		assert_non_null(strstr(err.msg, "cannot write the JSON output"));
		fclose(full);
	}
	/* a fleet run's index */
	char *members = nx_path_join(fleet, "fleet-members.txt");
	FILE *m = fopen(members, "w");
	assert_non_null(m);
	fputs("a\n", m);
	fclose(m);
	assert_int_equal(export_to(fleet, "fleet.json", true, &err), NX_EUSAGE);
	assert_non_null(strstr(err.msg, "index of a fleet run"));
	free(members);
	free(ip);
	free(dmg);
	free(fleet);
	free(one);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_slices_whole_and_parts_agree),
		cmocka_unit_test(test_document_loads),
		cmocka_unit_test(test_errors),
	};
	struct nx_err err = { 0 };

	dir = nx_test_dir("json_export");
	if (nx_duck_open(&d, 1, NULL, &err)) {
		fprintf(stderr, "%s\n", err.msg);
		return 1;
	}
	int rc = cmocka_run_group_tests(tests, NULL, NULL);
	nx_duck_close(d);
	free(dir);
	return nx_test_done(rc);
}
