/* SPDX-License-Identifier: MIT
 * test_ir_rollup.c: the IR hierarchy tables written in C (src/ingest/ir_rollup.c) from a
 * hand-made Instruction table: overlapping, touching and disjoint intervals of one node,
 * nodes that merge one level up, rows without the whole id chain dropped, rows in no
 * time order. Every row is checked against values worked out by hand, and each table
 * against the SQL it replaced (tests/unit/reference/84-88), EXCEPT ALL both ways. */
#include "common/compat.h"
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "common/fsutil.h"
#include "common/strbuf.h"
#include "common/xalloc.h"
#include "db/duck.h"
#include "db/profile_views.h"
#include "derive/derive.h"
#include "helper/fixture.h"
#include "helper/profile_db.h"
#include "helper/test_dirs.h"
#include "ingest/context.h"
#include "ingest/ir_rollup.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* (bir, penguin, hlo, framework, start, end, elements, transposed, hbm read, hbm write,
 * sbuf read, opcode, engine), in no time order:
 * - BIR 1: [0,10] and [5,15] overlap, [15,20] touches them, [30,40] apart: [[0,20],[30,40]];
 * - BIR 2 (Penguin 10 too): [20,25] touches BIR 1's first interval one level up;
 * - BIR 3 (Penguin 11): [100,110];
 * - a row without a Penguin id and one without an HLO id: in no table. */
static const char rows_sql[] =
	"SELECT * FROM (VALUES "
	"(1, 10, 100, 1000, 30, 40, 8, 0, 0, 0, 0, 'NOP', 'Sync', 'b1', 'p10'),"
	"(1, 10, 100, 1000, 0, 10, 1, 0, 5, 0, 7, 'LDWEIGHTS', 'Tensor', 'b1', 'p10'),"
	"(2, 10, 100, 1000, 20, 25, 16, 0, 0, 0, 0, 'COPY', 'GpSimd', 'b2', 'p10'),"
	"(1, 10, 100, 1000, 5, 15, 2, 1, 0, 3, 4, 'MATMUL', 'Tensor', 'b1', 'p10'),"
	"(3, 11, 100, 1000, 100, 110, 32, 0, 0, 0, 0, 'ADD', 'Vector', 'b3', 'p11'),"
	"(1, 10, 100, 1000, 15, 20, 4, 0, 0, 0, 0, 'ACTIVATE', 'Scalar', 'b1', 'p10'),"
	"(4, NULL, 100, 1000, 0, 200, 64, 0, 9, 9, 9, 'ADD', 'Vector', 'b4', NULL),"
	"(5, 12, NULL, 1000, 0, 200, 128, 0, 9, 9, 9, 'ADD', 'Vector', 'b5', 'p12')"
	") t(raw_bir_id, raw_penguin_id, raw_hlo_id, raw_framework_id, start_ts, end_ts, "
	"tensor_elements, tensor_elements_transpose, hbm_read_bytes, hbm_write_bytes, "
	"sbuf_read_bytes, opcode, engine, bir_instruction_name, kernel_instruction_name)";

struct fixture {
	char *dir;
	struct nx_duck *d;
};

static int setup(void **state)
{
	struct fixture *f = nx_xcalloc(1, sizeof(*f));
	struct nx_ingest_ctx c;
	struct nx_err err = { 0 };
	char *path;

	f->dir = nx_test_dir("ir_rollup");
	path = nx_path_join(f->dir, "Instruction.parquet");
	f->d = nx_test_duck();
	if (nx_db_create_empty_views(f->d, f->dir, &err))
		fail_msg("%s", err.msg);
	/* the schema's Instruction with these columns set; the names and the pcore as the
	 * ingest gives them */
	nx_test_exf(f->d, "COPY (SELECT * FROM Instruction UNION ALL BY NAME SELECT r.* "
			  "REPLACE (r.start_ts::BIGINT AS start_ts), 0::BIGINT AS pcore_idx, "
			  "'kernel' AS hlo_name, 'kernel' AS layer FROM (%s) r) TO '%s' "
			  "(FORMAT parquet)", rows_sql, path);
	memset(&c, 0, sizeof(c));
	c.stage = "derive";
	c.isums.chain_n = 6;
	if (nx_ir_rollup_write(&c, f->d, f->dir, &err))
		fail_msg("%s", err.msg);
	nx_test_use_profile(&f->d, f->dir);
	free(path);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;

	nx_duck_close(f->d);
	free(f->dir);
	free(f);
	return 0;
}

/* The rows of `table` as text, in the file's order. */
static char *rows_text(struct fixture *f, const char *table, const char *cols)
{
	char *sql = nx_xasprintf("SELECT string_agg(concat_ws('|', %s), ';' ORDER BY "
				 "file_row_number) FROM read_parquet('%s/%s.parquet', "
				 "file_row_number = true)", cols, f->dir, table);
	struct nx_strbuf sb = NX_STRBUF_INIT;
	struct nx_duck_cursor *cur;
	const struct nx_dchunk *ch;
	struct nx_err err = { 0 };
	const char *s;
	size_t len;

	if (nx_duck_cursor_open(f->d, sql, false, &cur, &err) ||
	    nx_duck_cursor_next(cur, &ch, &err) || !ch)
		fail_msg("%s: %s", sql, err.msg);
	if (nx_dchunk_str(ch, 0, 0, &s, &len))
		nx_strbuf_add(&sb, s, len);
	nx_duck_cursor_close(cur);
	free(sql);
	return nx_strbuf_detach(&sb, NULL);
}

#define COLS "id, raw_bir_id, raw_penguin_id, raw_hlo_id, raw_framework_id, start_ts, " \
	     "end_ts, time_intervals, element_count_per_interval, "                       \
	     "transpose_element_count_per_interval, hbm_transfer_size_per_interval, "      \
	     "hbm_read_bytes, hbm_write_bytes, sbuf_read_bytes, sbuf_write_bytes, "        \
	     "load_weight_bytes, modular_flow_invocation_idx"

static void expect_rows(struct fixture *f, const char *table, const char *cols,
			const char *want)
{
	char *got = rows_text(f, table, cols);

	if (strcmp(got, want))
		fail_msg("%s:\n got  %s\n want %s", table, got, want);
	free(got);
}

static void test_bir(void **state)
{
	expect_rows(*state, "BirInstruction", COLS ", bir_name, pcore_idx",
		    "1|1|10|100|1000|0|40|[[0,20],[30,40]]|[7, 8]|[1, 0]|[8, 0]|5|3|11|0|7|0|b1|0;"
		    "2|2|10|100|1000|20|25|[[20,25]]|[16]|[0]|[0]|0|0|0|0|0|0|b2|0;"
		    "3|3|11|100|1000|100|110|[[100,110]]|[32]|[0]|[0]|0|0|0|0|0|0|b3|0");
}

static void test_penguin(void **state)
{
	expect_rows(*state, "PenguinInstruction", COLS ", penguin_name",
		    "10|-1|10|100|1000|0|40|[[0,25],[30,40]]|[23, 8]|[1, 0]|[8, 0]|5|3|11|0|7|0|p10;"
		    "11|-1|11|100|1000|100|110|[[100,110]]|[32]|[0]|[0]|0|0|0|0|0|0|p11");
}

static void test_hlo_and_framework(void **state)
{
	expect_rows(*state, "HloInstruction", COLS ", hlo_name",
		    "100|-1|-1|100|1000|0|110|[[0,25],[30,40],[100,110]]|[23, 8, 32]|"
		    "[1, 0, 0]|[8, 0, 0]|5|3|11|0|7|0|kernel");
	expect_rows(*state, "FrameworkInstruction",
		    COLS ", framework_name, tensor_engine_instruction_count, "
		    "scalar_engine_instruction_count, sync_engine_instruction_count, "
		    "gpsimd_engine_instruction_count, vector_engine_instruction_count",
		    "1000|-1|-1|-1|1000|0|110|[[0,25],[30,40],[100,110]]|[23, 8, 32]|"
		    "[1, 0, 0]|[8, 0, 0]|5|3|11|0|7|0|kernel|2|1|1|1|1");
}

/* Each table against the SQL it replaced, over the same Instruction rows. */
static void test_same_as_sql(void **state)
{
	struct fixture *f = *state;
	static const char *const ref[][2] = {
		{ "BirInstruction", "85_bir_instruction.sql" },
		{ "PenguinInstruction", "86_penguin_instruction.sql" },
		{ "HloInstruction", "87_hlo_instruction.sql" },
		{ "FrameworkInstruction", "88_framework_instruction.sql" },
	};
	struct nx_err err = { 0 };
	char *macro = nx_test_reference("84_ir_rollup.sql");

	if (nx_duck_exec(f->d, macro, &err))
		fail_msg("%s", err.msg);
	for (size_t i = 0; i < NX_ARRAY_SIZE(ref); i++) {
		char *sql = nx_test_reference(ref[i][1]);
		struct nx_strbuf proj = NX_STRBUF_INIT;

		if (nx_derive_project(f->d, ref[i][0], sql, &proj, &err))
			fail_msg("%s", err.msg);
		nx_test_exf(f->d, "CREATE OR REPLACE TABLE ref AS %s", proj.buf);
		assert_int_equal(nx_test_qi(f->d, "SELECT count(*) FROM ref"),
				 nx_test_qi(f->d, "SELECT count(*) FROM %s", ref[i][0]));
		assert_int_equal(nx_test_qi(f->d, "SELECT count(*) FROM (SELECT * FROM ref "
						  "EXCEPT ALL SELECT * FROM %s)", ref[i][0]), 0);
		assert_int_equal(nx_test_qi(f->d, "SELECT count(*) FROM (SELECT * FROM %s "
						  "EXCEPT ALL SELECT * FROM ref)", ref[i][0]), 0);
		nx_strbuf_release(&proj);
		free(sql);
	}
	free(macro);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_bir),
		cmocka_unit_test(test_penguin),
		cmocka_unit_test(test_hlo_and_framework),
		cmocka_unit_test(test_same_as_sql),
	};
	return nx_test_done(cmocka_run_group_tests(tests, setup, teardown));
}
