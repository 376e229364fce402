/* SPDX-License-Identifier: MIT
 * test_ingest.c: ingest of the known fixture NEFF + NTFF pair (tests/helper/fixture.c)
 * through the real pipeline: parquet files written by DuckDB, read back through DuckDB
 * and compared with the hand-computed values; bad inputs fail cleanly and never damage
 * a previously published profile. */
#include "common/compat.h"
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "helper/asserts.h"

#include "common/fsutil.h"
#include "common/xalloc.h"
#include "db/duck.h"
#include "helper/fixture.h"
#include "ingest/dma_block.h"
#include "ingest/ingest.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct ctx {
	char *dir;   /* test directory with fixture.neff / fixture.ntff */
	char *data;  /* data path */
	char *prof;  /* published profile directory */
	struct nx_duck *d;
};

static int ingest_fixture(struct ctx *c, const struct nx_fixture_opts *fo, const char *name,
			  struct nx_err *err)
{
	struct nx_ingest_opts io = { 0 };
	char *neff = nx_path_join(c->dir, "fixture.neff"), *ntff = nx_path_join(c->dir, "fixture.ntff");
	int rc = nx_fixture_write(c->dir, fo, err);

	if (!rc) {
		io.neff_path = neff;
		io.ntff_path = ntff;
		io.data_path = c->data;
		io.display_name = name;
		io.quiet = true;
		free(c->prof);
		c->prof = NULL;
		rc = nx_ingest(&io, &c->prof, err);
	}
	free(neff);
	free(ntff);
	return rc;
}

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

/* Path of a table file in the published profile. */
static char *tfile(struct ctx *c, const char *table)
{
	return nx_xasprintf("'%s/%s.parquet'", c->prof, table);
}

#define Q(c, table, fmt, ...)                                                                \
	({                                                                                   \
		char *t_ = tfile(c, table);                                                  \
		int64_t v_ = q64(c, fmt, t_, ##__VA_ARGS__);                                 \
		free(t_);                                                                    \
		v_;                                                                          \
	})

static int setup(void **state)
{
	struct ctx *c = nx_xcalloc(1, sizeof(*c));
	struct nx_err err = { 0 };

	c->dir = nx_test_dir("ingest");
	c->data = nx_path_join(c->dir, "data");
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
	free(c->prof);
	free(c);
	return 0;
}

static void test_tables_and_values(void **state)
{
	struct ctx *c = *state;
	struct nx_fixture_opts fo;
	struct nx_err err = { 0 };

	nx_fixture_opts_default(&fo);
	if (ingest_fixture(c, &fo, "fixture", &err))
		fail_msg("%s", err.msg);
	assert_non_null(strstr(c->prof, "/profiles/global/fixture@latest"));

	assert_int_equal(Q(c, "Instruction", "SELECT count(*) FROM %s"), 7);
	assert_int_equal(Q(c, "Instruction", "SELECT count(*) FROM %s WHERE engine = 'Tensor'"), 3);
	assert_int_equal(Q(c, "Instruction", "SELECT evt_wait_time_ns FROM %s WHERE id = 3"), 40);
	assert_int_equal(Q(c, "Instruction", "SELECT duration_ns FROM %s WHERE id = 3"), 160);
	assert_int_equal(Q(c, "Instruction", "SELECT count(*) FROM %s WHERE opcode = 'MATMUL' "
					     "AND nki_source_location = 'kernels/fixture.py:16' AND id = 3"), 1);
	assert_int_equal(Q(c, "Instruction", "SELECT count(*) FROM %s WHERE "
					     "bir_debug_info_source_location LIKE 'kernels/fixture.py:%%'"), 7);
	/* MATMUL 128x128x512 BF16: 2*K*M*N flops. */
	assert_int_equal(Q(c, "Instruction", "SELECT raw_flops FROM %s WHERE id = 3"),
			 2LL * 128 * 128 * 512);
	assert_int_equal(Q(c, "Instruction", "SELECT adjusted_flops FROM %s WHERE id = 3"),
			 2LL * 128 * 128 * 512);
	assert_int_equal(Q(c, "Instruction", "SELECT count(*) FROM %s WHERE id = 7 AND "
					     "tensor_instruction_type = 'TRANSPOSE' AND flops_transpose > 0"), 1);
	assert_int_equal(Q(c, "Instruction", "SELECT hbm_read_bytes FROM %s WHERE id = 1"), 131072);
	assert_int_equal(Q(c, "Instruction", "SELECT hbm_write_bytes FROM %s WHERE id = 6"), 131072);
	assert_int_equal(Q(c, "Instruction", "SELECT input_queue_bytes FROM %s WHERE id = 1"), 131072);
	assert_int_equal(Q(c, "Instruction", "SELECT count(*) FROM %s WHERE id = 5 AND "
					     "upper(scalar_activation_fn) = 'EXP'"), 1);
	/* Operands carry the analysis conventions: N after src=, K*M at the end. */
	assert_int_equal(Q(c, "Instruction", "SELECT count(*) FROM %s WHERE id = 3 AND "
					     "regexp_extract(operands, '(\\d+)\\*(\\d+)\\s*$', 1) = '128' AND "
					     "regexp_extract(operands, 'src=\\S+\\[[\\d,\\-]+\\]\\[(\\d+),', 1) = '512'"), 1);

	assert_int_equal(Q(c, "DmaPacket", "SELECT count(*) FROM %s"), 5);
	assert_int_equal(Q(c, "DmaPacket", "SELECT sum(transfer_bytes) FROM %s WHERE queue_type = 'input'"),
			 2 * 65536 + 4);
	assert_int_equal(Q(c, "DmaPacket", "SELECT count(*) FROM %s WHERE variable = 'a'"), 3);
	assert_int_equal(Q(c, "DmaPacket", "SELECT count(DISTINCT packet_aggregation_id) FROM %s"), 2);

	assert_int_equal(Q(c, "SemaphoreUpdate", "SELECT count(*) FROM %s WHERE id = '10' AND "
						 "update_source = 'AXI' AND update_operation_type = 'sem_inc'"), 1);
	assert_int_equal(Q(c, "Throttle", "SELECT duration FROM %s WHERE k = 1 AND n = 2"), 50);
	assert_int_equal(Q(c, "Error", "SELECT count(*) FROM %s WHERE type = 'Custom Notification'"), 1);
	assert_int_equal(Q(c, "ExecutionInfo", "SELECT execution_end_ts - execution_start_ts FROM %s"), 1000);
	assert_int_equal(Q(c, "ExecutionInfo", "SELECT row_count FROM %s"), 7);

	assert_int_equal(Q(c, "NeffHeader", "SELECT count(*) FROM %s WHERE uuid = "
					    "'a0a1a2a3a4a5a6a7a8a9aaabacadaeaf' AND network_name = 'fixture_kernel'"), 1);
	assert_int_equal(Q(c, "TensorInfo", "SELECT sum(size) FROM %s WHERE type IN ('IN','OUT')"), 262144);
	assert_int_equal(Q(c, "DmaQueuesInfo", "SELECT count(*) FROM %s"), 2);
	assert_int_equal(Q(c, "KernelInstructions", "SELECT count(*) FROM %s"), 6);
	/* depths walk the parents by id: frame 2 under frame 1, iteration variable 7 alone */
	assert_int_equal(Q(c, "KernelInstructions", "SELECT count(*) FROM %s WHERE "
						    "stack_frame_id = 2 AND stack_frame_depth = 2"), 6);
	assert_int_equal(Q(c, "KernelInstructions", "SELECT count(*) FROM %s WHERE "
						    "iteration_variables_id = 7 AND "
						    "iteration_variable_depth = 1"), 3);
	assert_int_equal(Q(c, "KernelInstructions", "SELECT count(*) FROM %s WHERE "
						    "iteration_variables_id IS NULL AND "
						    "iteration_variable_depth IS NULL"), 3);
	assert_int_equal(Q(c, "KernelStackFrames", "SELECT count(*) FROM %s WHERE parent_stack_frame_id IS NULL"), 1);
	assert_int_equal(Q(c, "KernelIterationVariables", "SELECT count(*) FROM %s WHERE variable_name = 'k'"), 1);

	assert_int_equal(Q(c, "Metadata", "SELECT count(*) FROM %s WHERE profile_schema_version = '7.4.0' "
					  "AND is_simulation AND ticks_per_nanosec = 1 AND first_hw_timestamp = 0 "
					  "AND last_hw_timestamp = 1000 AND tensor_engine_num_rows = 128"), 1);
	assert_int_equal(Q(c, "SchemaFields", "SELECT count(*) FROM %s"), 656);
	assert_int_equal(Q(c, "SchemaFields", "SELECT count(DISTINCT table_name) FROM %s"), 52);
	assert_int_equal(Q(c, "SchemaFields", "SELECT count(*) FROM %s WHERE table_name = 'DmaPacket' AND "
					      "field_name = 'queue_type' AND field_enum_values LIKE 'instruction,input,%%'"), 1);

	/* Column types follow the schema exactly. */
	assert_int_equal(q64(c, "SELECT count(*) FROM (DESCRIBE SELECT * FROM '%s/Instruction.parquet') "
				"WHERE (column_name = 'start_ts' AND column_type = 'BIGINT') OR "
				"(column_name = 'engine' AND column_type = 'VARCHAR')", c->prof), 2);
	assert_int_equal(q64(c, "SELECT count(*) FROM (DESCRIBE SELECT * FROM '%s/DmaPacket.parquet') "
				"WHERE (column_name = 'packet_idx' AND column_type = 'INTEGER') OR "
				"(column_name = 'throughput' AND column_type = 'FLOAT')", c->prof), 2);
	/* No warnings for a complete profile: a Warning file with no rows. */
	char *w = nx_path_join(c->prof, "Warning.parquet");
	assert_true(nx_is_file(w));
	free(w);
	assert_int_equal(Q(c, "Warning", "SELECT count(*) FROM %s"), 0);
}

static void test_ticks_per_ns(void **state)
{
	struct ctx *c = *state;
	struct nx_fixture_opts fo;
	struct nx_err err = { 0 };

	nx_fixture_opts_default(&fo);
	fo.ticks_per_ns = 4;
	if (ingest_fixture(c, &fo, "ticks", &err))
		fail_msg("%s", err.msg);
	assert_int_equal(Q(c, "Instruction", "SELECT end_ts FROM %s WHERE id = 3"), 300);
	assert_int_equal(Q(c, "Metadata", "SELECT ticks_per_nanosec FROM %s"), 4);
}

static void test_no_dge_and_bad_ids_warn(void **state)
{
	struct ctx *c = *state;
	struct nx_fixture_opts fo;
	struct nx_err err = { 0 };

	nx_fixture_opts_default(&fo);
	fo.dge_notifications = false;
	fo.with_debug_info = false;
	fo.bogus_inst = 3;
	if (ingest_fixture(c, &fo, "nodge", &err))
		fail_msg("%s", err.msg);
	char *p = nx_path_join(c->prof, "DmaPacket.parquet");
	assert_true(nx_is_file(p));
	free(p);
	assert_int_equal(Q(c, "DmaPacket", "SELECT count(*) FROM %s"), 0);
	assert_int_equal(Q(c, "Warning", "SELECT count(*) FROM %s WHERE message LIKE "
					 "'%%NEURON_RT_ENABLE_DGE_NOTIFICATIONS=1%%'"), 1);
	assert_int_equal(Q(c, "Warning", "SELECT count(*) FROM %s WHERE message LIKE '%%kernel_debug_info%%'"), 1);
	assert_int_equal(Q(c, "Warning", "SELECT count(*) FROM %s WHERE message LIKE '3 instruction records%%'"), 1);
	assert_int_equal(Q(c, "Instruction", "SELECT count(*) FROM %s WHERE opcode = 'UNKNOWN'"), 3);
	assert_int_equal(Q(c, "Instruction", "SELECT count(*) FROM %s WHERE bir_debug_info_source_location IS NULL"), 10);
}

/* A bad second ingest must fail cleanly and leave the published profile as it was. */
static void test_failures_keep_previous(void **state)
{
	struct ctx *c = *state;
	struct nx_fixture_opts fo;
	struct nx_err err = { 0 };
	struct nx_ingest_opts io = { 0 };
	char *neff = nx_path_join(c->dir, "fixture.neff"), *ntff = nx_path_join(c->dir, "fixture.ntff");
	char *prof = NULL;

	nx_fixture_opts_default(&fo);
	if (ingest_fixture(c, &fo, "keep", &err))
		fail_msg("%s", err.msg);
	prof = nx_xstrdup(c->prof);

	/* uuid mismatch */
	fo.mismatched_uuid = true;
	nx_err_clear(&err);
	assert_int_equal(ingest_fixture(c, &fo, "keep", &err), NX_EMISMATCH);
	assert_non_null(strstr(err.msg, "fixture.ntff"));
	assert_non_null(strstr(err.msg, "uuid"));

	/* truncated NTFF: cut the file in half */
	fo.mismatched_uuid = false;
	nx_err_clear(&err);
	assert_int_equal(nx_fixture_write(c->dir, &fo, &err), 0);
	assert_int_equal(nx_test_sh("truncate -s 300 '%s'", ntff), 0);
	io.neff_path = neff;
	io.ntff_path = ntff;
	io.data_path = c->data;
	io.display_name = "keep";
	io.quiet = true;
	nx_err_clear(&err);
	NX_ASSERT_CMP(nx_ingest(&io, NULL, &err), <, 0);
	assert_non_null(strstr(err.msg, "fixture.ntff"));
	assert_non_null(strstr(err.msg, "byte"));

	/* missing file */
	io.ntff_path = "/nonexistent/p.ntff";
	nx_err_clear(&err);
	NX_ASSERT_CMP(nx_ingest(&io, NULL, &err), <, 0);
	assert_non_null(strstr(err.msg, "/nonexistent/p.ntff"));

	/* bad display name */
	io.ntff_path = ntff;
	io.display_name = "../escape";
	nx_err_clear(&err);
	assert_int_equal(nx_ingest(&io, NULL, &err), NX_EUSAGE);

	/* The first profile is intact and no temporary directory is left behind (the data
	 * path's publication lock stays). */
	free(c->prof);
	c->prof = prof;
	assert_int_equal(Q(c, "Instruction", "SELECT count(*) FROM %s"), 7);
	assert_int_equal(nx_test_sh("test -z \"$(ls -A '%s/profiles/global' | grep -v '^keep@latest$' | "
				    "grep -v '@latest$' | grep -v '^\\.publish\\.lock$' | "
				    "grep -v '^\\.in-progress$')\"", c->data), 0);
	free(neff);
	free(ntff);
}

static void test_republish_replaces(void **state)
{
	struct ctx *c = *state;
	struct nx_fixture_opts fo;
	struct nx_err err = { 0 };

	nx_fixture_opts_default(&fo);
	if (ingest_fixture(c, &fo, "again", &err))
		fail_msg("%s", err.msg);
	fo.bogus_inst = 2;
	if (ingest_fixture(c, &fo, "again", &err))
		fail_msg("%s", err.msg);
	assert_int_equal(Q(c, "Instruction", "SELECT count(*) FROM %s"), 9);
}

/* The occupancy pass runs on an idle-priority thread beside the raw stage and the
 * ingest's thread takes it over wherever it is when the raw stage ends (before it has
 * read the trace's bounds, or part way): SbufAllocation, SbufUsage and PsumUsage come
 * out the same every way. */
static void test_onchip_handoff(void **state)
{
	static const char *const modes[] = { NULL, "bounds", "1", "4" };
	static const char *const tables[] = { "SbufAllocation", "SbufUsage", "PsumUsage" };
	struct ctx *c = *state;
	struct nx_fixture_opts fo;
	struct nx_err err = { 0 };
	int64_t want[3][2] = { { 0 } };

	nx_fixture_opts_default(&fo);
	for (size_t m = 0; m < NX_ARRAY_SIZE(modes); m++) {
		if (modes[m])
			setenv("NX_TEST_ONCHIP_HANDOFF", modes[m], 1);
		else
			unsetenv("NX_TEST_ONCHIP_HANDOFF");
		if (ingest_fixture(c, &fo, "handoff", &err))
			fail_msg("%s (mode %s)", err.msg, modes[m] ? modes[m] : "none");
		for (size_t t = 0; t < NX_ARRAY_SIZE(tables); t++) {
			int64_t n = Q(c, tables[t], "SELECT count(*) FROM %s");
			int64_t h = Q(c, tables[t], "SELECT (sum(hash(t)) %% 1000000007)::BIGINT "
						    "FROM read_parquet(%s) t");
			if (!modes[m]) {
				assert_true(n > 0);
				want[t][0] = n;
				want[t][1] = h;
			}
			assert_int_equal(n, want[t][0]);
			assert_int_equal(h, want[t][1]);
		}
	}
	unsetenv("NX_TEST_ONCHIP_HANDOFF");
}

/* The NEFF's parts are freed as the ingest goes (the statics and the debug info once the
 * raw tables are written, the rest after the occupancy pass's tables): the tables written
 * after each point still carry its facts. SbufAllocation takes every instruction's
 * opcode and operands (those of the Instruction table) and every DMA block's queue and
 * tensor; the IR hierarchy tables, derived after the NEFF is gone, every instruction. */
static void test_tables_after_neff_freed(void **state)
{
	struct ctx *c = *state;
	struct nx_fixture_opts fo;
	struct nx_err err = { 0 };

	nx_fixture_opts_default(&fo);
	if (ingest_fixture(c, &fo, "freed", &err))
		fail_msg("%s", err.msg);
	int64_t inst = Q(c, "SbufAllocation", "SELECT count(*) FROM %s WHERE "
					    "op_source_type = 'instruction'");
	int64_t dma = Q(c, "SbufAllocation", "SELECT count(*) FROM %s WHERE "
					   "op_source_type = 'dma'");
	assert_true(inst > 0 && dma > 0);
	assert_int_equal(q64(c, "SELECT count(*) FROM '%s/SbufAllocation.parquet' s WHERE "
			     "op_source_type = 'instruction' AND s.operands <> '' AND EXISTS "
			     "(SELECT 1 FROM '%s/Instruction.parquet' i WHERE i.opcode = s.opcode AND "
			     "i.operands = s.operands)", c->prof, c->prof), inst);
	assert_int_equal(Q(c, "SbufAllocation", "SELECT count(*) FROM %s WHERE op_source_type = "
					       "'dma' AND queue_name IS NOT NULL AND block_id IS "
					       "NOT NULL AND tensor_name IS NOT NULL"), dma);
	assert_int_equal(Q(c, "PenguinInstruction", "SELECT count(*) FROM %s"),
			 Q(c, "KernelInstructions", "SELECT count(*) FROM %s"));
	assert_int_equal(Q(c, "BirInstruction", "SELECT count(*) FROM %s"),
			 Q(c, "Instruction", "SELECT count(DISTINCT bir_id) FROM %s"));
}

/* The texts of all blocks at once (DmaPacketAggregated's) are each block's texts, with
 * one copy of each distinct string: equal texts of any two blocks are the same string. */
static void test_block_texts_once(void **state)
{
	struct nx_neff n;
	struct nx_dma_block_texts all;
	size_t shared = 0;

	(void)state;
	nx_fixture_build_neff(&n, true);
	nx_dma_block_texts_init(&all, &n);
	assert_int_equal(all.n, n.nblocks);
	assert_true(n.nblocks >= 2);
	for (size_t i = 0; i < n.nblocks; i++) {
		struct nx_dma_block_text one;
		const struct nx_dma_block_text *t = &all.t[i];

		nx_dma_block_text(&n, i, &one);
		const char *want[] = { one.semaphore_id, one.source, one.dest, one.read_parts,
				       one.read_shape, one.read_offset, one.read_steps,
				       one.write_parts, one.write_shape, one.write_offset,
				       one.write_steps, one.transpose_size, one.variable };
		const char *got[] = { t->semaphore_id, t->source, t->dest, t->read_parts,
				      t->read_shape, t->read_offset, t->read_steps, t->write_parts,
				      t->write_shape, t->write_offset, t->write_steps,
				      t->transpose_size, t->variable };
		for (size_t k = 0; k < NX_ARRAY_SIZE(want); k++) {
			if (!want[k])
				assert_null(got[k]);
			else
				assert_string_equal(got[k], want[k]);
		}
		assert_int_equal(t->block_id, one.block_id);
		assert_int_equal(t->bytes, one.bytes);
		assert_int_equal(t->read_nparts, one.read_nparts);
		assert_int_equal(t->write_nparts, one.write_nparts);
		assert_ptr_equal(t->queue, one.queue);
		nx_dma_block_text_release(&one);
		for (size_t j = 0; j < i; j++) {
			const char *a[] = { t->source, t->read_shape, t->read_steps, t->write_steps };
			const char *b[] = { all.t[j].source, all.t[j].read_shape, all.t[j].read_steps,
					    all.t[j].write_steps };
			for (size_t k = 0; k < NX_ARRAY_SIZE(a); k++)
				if (a[k] && b[k] && !strcmp(a[k], b[k])) {
					assert_ptr_equal(a[k], b[k]);
					shared++;
				}
		}
	}
	assert_true(shared > 0);
	nx_dma_block_texts_release(&all);
	nx_neff_release(&n);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_tables_and_values),
		cmocka_unit_test(test_ticks_per_ns),
		cmocka_unit_test(test_no_dge_and_bad_ids_warn),
		cmocka_unit_test(test_failures_keep_previous),
		cmocka_unit_test(test_republish_replaces),
		cmocka_unit_test(test_onchip_handoff),
		cmocka_unit_test(test_tables_after_neff_freed),
		cmocka_unit_test(test_block_texts_once),
	};
	return nx_test_done(cmocka_run_group_tests(tests, setup, teardown));
}
