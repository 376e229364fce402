/* SPDX-License-Identifier: MIT
 * test_derive.c: the derived tables of the fixture profile (tests/helper/fixture.c
 * lists its timeline) against values computed by hand, edge cases (overlapping and
 * nested instructions, zero-length ones, an engine with no instructions, a profile
 * without DMA records), the profile invariants, and summary-json / summary-text. */
#include "common/compat.h"
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "export/summary_print.h"
#include "common/fsutil.h"
#include "common/xalloc.h"
#include "db/duck.h"
#include "derive/derive.h"
#include "helper/fixture.h"
#include "helper/invariants.h"
#include "helper/profile_db.h"
#include "ingest/ingest.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct ctx {
	char *dir, *data, *full, *nodma, *nodebug;
	struct nx_duck *d;
};

static int setup(void **state)
{
	struct ctx *c = nx_xcalloc(1, sizeof(*c));
	struct nx_fixture_opts fo;
	struct nx_err err = { 0 };

	c->dir = nx_test_dir("derive");
	c->data = nx_path_join(c->dir, "data");
	nx_fixture_opts_default(&fo);
	c->full = nx_test_ingest_fixture(c->dir, c->data, &fo, "full");
	fo.dge_notifications = false;
	c->nodma = nx_test_ingest_fixture(c->dir, c->data, &fo, "nodma");
	nx_fixture_opts_default(&fo);
	fo.with_debug_info = false;
	c->nodebug = nx_test_ingest_fixture(c->dir, c->data, &fo, "nodebug");
	assert_int_equal(nx_duck_open(&c->d, 1, NULL, &err), 0);
	*state = c;
	return 0;
}

static int teardown(void **state)
{
	struct ctx *c = *state;
	nx_duck_close(c->d);
	free(c->dir);
	free(c->data);
	free(c->full);
	free(c->nodma);
	free(c->nodebug);
	free(c);
	return 0;
}

#define EQ(c, sql, want) NX_EQ((c)->d, sql, want)
#define NEAR(c, sql, want) NX_NEAR((c)->d, sql, want, 1e-9)

static void test_active_time(void **state)
{
	struct ctx *c = *state;
	nx_test_use_profile(&c->d, c->full);
	/* Tensor: LDWEIGHTS [100,150) and MATMUL [140,300) overlap -> one run [100,300);
	 * the zero-length MATMUL at 500 adds nothing. */
	EQ(c, "SELECT count(*) FROM ActiveTime WHERE engine = 'tensor'", 1);
	EQ(c, "SELECT start_ts FROM ActiveTime WHERE engine = 'tensor'", 100);
	EQ(c, "SELECT duration_ns FROM ActiveTime WHERE engine = 'tensor'", 200);
	/* Sync: two separate runs of 10 ns. */
	EQ(c, "SELECT count(*) FROM ActiveTime WHERE engine = 'sync'", 2);
	EQ(c, "SELECT sum(duration_ns) FROM ActiveTime WHERE engine = 'sync'", 20);
	/* GpSimd ran nothing: no rows, and 0 in Summary. */
	EQ(c, "SELECT count(*) FROM ActiveTime WHERE engine = 'gpsimd'", 0);
	EQ(c, "SELECT gpsimd_engine_active_time FROM Summary", 0);
	EQ(c, "SELECT gpsimd_engine_instruction_count FROM Summary", 0);
}

static void test_opcode_summary(void **state)
{
	struct ctx *c = *state;
	nx_test_use_profile(&c->d, c->full);
	EQ(c, "SELECT instruction_count FROM OpcodeSummary WHERE opcode = 'MATMUL'", 2);
	EQ(c, "SELECT instruction_time_ns FROM OpcodeSummary WHERE opcode = 'MATMUL'", 160);
	EQ(c, "SELECT active_time_ns FROM OpcodeSummary WHERE opcode = 'MATMUL'", 160);
	NEAR(c, "SELECT active_time_percent FROM OpcodeSummary WHERE opcode = 'MATMUL'", 0.16);
	EQ(c, "SELECT sum(instruction_count) FROM OpcodeSummary", 7);
}

static void test_dma_aggregation_and_flow(void **state)
{
	struct ctx *c = *state;
	nx_test_use_profile(&c->d, c->full);
	EQ(c, "SELECT count(*) FROM DmaPacketAggregated", 2);
	EQ(c, "SELECT transfer_bytes FROM DmaPacketAggregated WHERE id = 100", 2 * 65536 + 4);
	EQ(c, "SELECT duration_ns FROM DmaPacketAggregated WHERE id = 100", 75);
	EQ(c, "SELECT count(*) FROM DmaPacketAggregated WHERE id = 100 AND source = '[[INPUT]]' "
	      "AND dest = '[SB]' AND variable = 'a' AND write_num_sbuf_partitions = 128 "
	      "AND trigger = 10 AND completion = 20 AND queue_type = 'input'", 1);
	EQ(c, "SELECT count(*) FROM DmaPacketAggregated WHERE id = 101 AND source = '[[SB]]' "
	      "AND dest = '[OUTPUT]' AND read_num_sbuf_partitions = 128", 1);
	EQ(c, "SELECT count(*) FROM Flow WHERE dependency_type = 'DGE_TRIGGER'", 2);
	EQ(c, "SELECT gap_time FROM Flow WHERE in_table = 'Instruction' AND out_id = 101", 0);
	/* MATMUL id 3 waited on semaphore 10, released by transfer 100 (ended at 95). */
	EQ(c, "SELECT count(*) FROM Flow WHERE in_table = 'DmaPacketAggregated' AND in_id = 100 "
	      "AND out_table = 'Instruction' AND out_id = 3 AND gap_time = 45", 1);
}

static void test_summary(void **state)
{
	struct ctx *c = *state;
	nx_test_use_profile(&c->d, c->full);
	NEAR(c, "SELECT total_time FROM Summary", 1000e-9);
	NEAR(c, "SELECT dma_active_time FROM Summary", 195e-9);
	NEAR(c, "SELECT dma_active_time_percent FROM Summary", 0.195);
	EQ(c, "SELECT dma_transfer_total_bytes FROM Summary", 4 * 65536);
	EQ(c, "SELECT dma_transfer_count FROM Summary", 2);
	EQ(c, "SELECT hardware_flops FROM Summary", 2LL * 128 * 128 * 512 + 2LL * 128 * 128 * 128);
	EQ(c, "SELECT transpose_flops FROM Summary", 2LL * 128 * 128 * 128);
	NEAR(c, "SELECT mm_arithmetic_intensity FROM Summary", 64.0);
	EQ(c, "SELECT hbm_read_bytes FROM Summary", 131072);
	EQ(c, "SELECT hbm_write_bytes FROM Summary", 131072);
	EQ(c, "SELECT inputs_outputs_weights_size_bytes FROM Summary", 131072 * 2 + 32768);
	NEAR(c, "SELECT tensor_engine_active_time FROM Summary", 200e-9);
	NEAR(c, "SELECT total_active_time FROM Summary", 565e-9);
	NEAR(c, "SELECT total_exec_time FROM Summary", 570e-9);
	EQ(c, "SELECT matmul_instruction_count FROM Summary", 2);
	/* no HLO statistics: model_flops NULL, HLO MFU 0, MFU estimated from the kernel's
	 * own non-transpose matmul FLOPs (docs/derived-tables.md) */
	EQ(c, "SELECT count(*) FROM Summary WHERE model_flops IS NULL AND "
	      "mfu_hlo_estimated_percent = 0", 1);
	NEAR(c, "SELECT s.mfu_estimated_percent * m.tensor_engine_num_rows * m.tensor_engine_num_cols "
		"* 2 * m.tensor_engine_clock_freq * 1e9 * s.total_time FROM Summary s, Metadata m",
	     2.0 * 128 * 128 * 512);
	NEAR(c, "SELECT max_achievable_util_with_throttling_percent FROM ThrottleSummary "
		"WHERE throttle_type = 'all'", 1 - 50 * 0.5 / 1000.0);
	EQ(c, "SELECT usage_bytes FROM HbmUsageSummaryByType WHERE usage_type = 'Weights'", 32768);
	EQ(c, "SELECT max(total_transfer_bytes) FROM DmaUsage", 4 * 65536 + 4);
	EQ(c, "SELECT max(value) FROM PendingDma", 1);
}

static void test_no_dma_profile(void **state)
{
	struct ctx *c = *state;
	nx_test_use_profile(&c->d, c->nodma);
	/* Every schema table has a file; DmaPacketAggregated has no rows. */
	char *p = nx_path_join(c->nodma, "DmaPacketAggregated.parquet");
	assert_true(nx_is_file(p));
	free(p);
	EQ(c, "SELECT count(*) FROM DmaPacketAggregated", 0);
	EQ(c, "SELECT count(*) FROM Summary WHERE dma_active_time IS NULL AND "
	      "dma_transfer_total_bytes IS NULL AND tensor_engine_active_time > 0", 1);
	EQ(c, "SELECT count(*) FROM Flow WHERE dependency_type = 'DGE_TRIGGER'", 0);
}

/* The IR hierarchy tables hold one row per id of the instructions that carry the whole
 * id chain. With kernel debug entries (the full fixture) the four roll-ups run
 * (src/ingest/ir_rollup.c); without them no instruction carries the chain, the ingest
 * counts none (nx_InstSums.chain_n), so they do not run and the tables are the zero-row
 * files of every schema table. */
static void test_ir_hierarchy_rows(void **state)
{
	struct ctx *c = *state;
	static const char *const levels[][2] = {
		{ "BirInstruction", "raw_bir_id" }, { "PenguinInstruction", "raw_penguin_id" },
		{ "HloInstruction", "raw_hlo_id" }, { "FrameworkInstruction", "raw_framework_id" },
	};
	static const char chain[] = "raw_bir_id IS NOT NULL AND raw_penguin_id IS NOT NULL AND "
				    "raw_hlo_id IS NOT NULL AND raw_framework_id IS NOT NULL";
	const char *profiles[] = { c->full, c->nodebug };

	for (size_t p = 0; p < NX_ARRAY_SIZE(profiles); p++) {
		nx_test_use_profile(&c->d, profiles[p]);
		int64_t n = nx_test_qi(c->d, "SELECT count(*) FROM Instruction WHERE %s", chain);
		assert_true(nx_test_qi(c->d, "SELECT count(*) FROM Instruction") > 0);
		assert_true(p == 0 ? n > 0 : n == 0);
		for (size_t l = 0; l < NX_ARRAY_SIZE(levels); l++) {
			char *f = nx_xasprintf("%s.parquet", levels[l][0]);
			char *path = nx_path_join(profiles[p], f);

			assert_true(nx_is_file(path));
			assert_int_equal(nx_test_qi(c->d, "SELECT count(*) FROM %s", levels[l][0]),
					 nx_test_qi(c->d, "SELECT count(DISTINCT %s) FROM Instruction "
							  "WHERE %s", levels[l][1], chain));
			free(path);
			free(f);
		}
	}
}

static void test_invariants(void **state)
{
	struct ctx *c = *state;
	nx_check_profile_invariants(c->full);
	nx_check_profile_invariants(c->nodma);
}

static void test_summary_outputs(void **state)
{
	struct ctx *c = *state;
	struct nx_err err = { 0 };
	struct nx_strbuf out = NX_STRBUF_INIT;
	char *text = NULL;

	assert_int_equal(nx_summary_format(c->full, "full", true, &out, &err), 0);
	text = nx_strbuf_detach(&out, NULL);
	/* The Summary under the profile's name, as the real tool nests it. */
	static const char head[] = "{\n  \"full\": {\n    \"total_time\": ";
	assert_true(!strncmp(text, head, strlen(head)));
	assert_non_null(strstr(text, "\"model_flops\": null"));
	assert_non_null(strstr(text, "\"matmul_instruction_count\": 2"));
	/* Exactly the Summary fields: 101 keys, and the profile's. */
	size_t keys = 0;
	for (const char *s = text; (s = strstr(s, "\": ")); s++)
		keys++;
	assert_int_equal(keys, 102);
	free(text);
	assert_int_equal(nx_summary_format(c->full, "full", false, &out, &err), 0);
	text = nx_strbuf_detach(&out, NULL);
	assert_true(!strncmp(text, "total_time ", 11));
	free(text);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_active_time),
		cmocka_unit_test(test_opcode_summary),
		cmocka_unit_test(test_dma_aggregation_and_flow),
		cmocka_unit_test(test_summary),
		cmocka_unit_test(test_no_dma_profile),
		cmocka_unit_test(test_ir_hierarchy_rows),
		cmocka_unit_test(test_invariants),
		cmocka_unit_test(test_summary_outputs),
	};
	return nx_test_done(cmocka_run_group_tests(tests, setup, teardown));
}
