/* SPDX-License-Identifier: MIT
 * test_derive_ref.c: derived tables whose SQL was replaced by C computed while the raw
 * tables stream, against that SQL, kept as the reference in tests/unit/reference/:
 *  - SbufUsage and PsumUsage (src/ingest/onchip_usage.c) against 54_sbuf_usage.sql and
 *    55_psum_usage.sql over the same occupancy rows (nx_OnchipAlloc): same timestamps,
 *    float32 values equal to one part in 10^6 (the summation order of an average is the
 *    only possible difference);
 *  - Summary, whose Instruction and DmaPacket aggregates now come from
 *    src/ingest/summary_sums.c, against the whole-SQL 80_summary.sql: every column
 *    identical;
 *  - PendingDma (src/ingest/pending_dma.c, counted while DmaPacketAggregated is written)
 *    against 52_pending_dma.sql: the same grid points, every value identical;
 *  - DmaPacketAggregated (src/ingest/dma_aggregated.c) against
 *    20_dma_packet_aggregated.sql: the same rows, every column identical, in the same
 *    (start_ts, id) order; also with at most one open transfer (NX_DMA_AGG_OPEN=1), so
 *    that transfers are written while others are open and a split one is detected;
 *  - DmaUsage and HbmUsage (src/ingest/dma_usage.c, counted in the same pass) against
 *    50_dma_usage.sql and 51_hbm_usage.sql over 49_throughput_grid.sql: every value
 *    identical (also with NX_DMA_AGG_OPEN);
 *  - Flow (its DGE_TRIGGER edges from src/ingest/flow_trigger.c, its SEMAPHORE edges
 *    from 39_flow_semaphore.sql, read in that order) against the single query it
 *    replaced, 40_flow.sql: the same rows, the file in that query's ORDER BY, also with
 *    the trigger edges sorted by DuckDB or joined in SQL (NX_FLOW_TRIG=sort, =sql);
 *  - Instruction's dma_trigger_* columns (src/ingest/dma_trigger.c) against SQL over
 *    DmaPacket and nx_DmaTransfer, and the tables the trigger spans feed unchanged when
 *    they are spilled in runs of two and read through blocks of three (NX_TRIG_RUN,
 *    NX_TRIG_BLOCK).
 * The trace tables written by two writers of some columns each (the default) and by one
 * give the same tables, the raw ones in the same row groups.
 * Each profile is ingested keeping its internal tables (.staging/), and the old SQL runs
 * over them. Profiles: the hand-checked fixture at two tick rates, the fixture without
 * DMA records, the fixture without semaphore records (Flow's trigger edges written as
 * Flow itself), and a simulated attention kernel. */
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
#include "db/table_files.h"
#include "derive/derive.h"
#include "db/profile_views.h"
#include "helper/fixture.h"
#include "helper/profile_db.h"
#include "ingest/ingest.h"
#include "schema/schema.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char *ingest_as(const char *neff, const char *ntff, const char *data, const char *name,
		       bool keep)
{
	struct nx_ingest_opts io = { 0 };
	struct nx_err err = { 0 };
	char *out = NULL;

	io.neff_path = neff;
	io.ntff_path = ntff;
	io.data_path = data;
	io.display_name = name;
	io.quiet = true;
	io.keep_staging = keep;
	if (nx_ingest(&io, &out, &err))
		fail_msg("%s", err.msg);
	return out;
}

static char *ingest_keep(const char *neff, const char *ntff, const char *data, const char *name)
{
	return ingest_as(neff, ntff, data, name, true);
}

/* A database over the profile and its staging tables with table ref: the reference SQL
 * file's query for `table` (after the macro file's definitions, when one is named). */
static struct nx_duck *open_with_reference(const char *profile, const char *table,
					   const char *file, const char *macro_file)
{
	struct nx_duck *d = NULL;
	struct nx_err err = { 0 };
	struct nx_strbuf ref = NX_STRBUF_INIT, q = NX_STRBUF_INIT;
	char *sql = nx_test_reference(file);
	char *macro = macro_file ? nx_test_reference(macro_file) : NULL;
	char *staging = nx_path_join(profile, ".staging");

	nx_test_use_profile(&d, profile);
	if (nx_db_create_views(d, staging, &err) || (macro && nx_duck_exec(d, macro, &err)) ||
	    nx_derive_project(d, table, sql, &ref, &err))
		fail_msg("%s", err.msg);
	nx_strbuf_addf(&q, "CREATE TABLE ref AS %s", ref.buf);
	if (nx_duck_exec(d, q.buf, &err))
		fail_msg("%s", err.msg);
	nx_strbuf_release(&ref);
	nx_strbuf_release(&q);
	free(sql);
	free(macro);
	free(staging);
	return d;
}

/* Compares `table` with the reference SQL file over the profile and its staging tables. */
static void compare(const char *profile, const char *table, const char *file,
		    const char *const *cols)
{
	struct nx_duck *d = open_with_reference(profile, table, file, NULL);
	struct nx_strbuf q = NX_STRBUF_INIT;

	double nref = nx_test_q(d, "SELECT count(*) FROM ref");
	nx_strbuf_reset(&q);
	nx_strbuf_addf(&q, "SELECT count(*) FROM \"%s\"", table);
	NX_ASSERT_CMP(nref, >, 0);
	NX_ASSERT_CMP(nx_test_q(d, q.buf), ==, nref);
	/* every row pairs up on (pcore_idx, timestamp) and every value agrees */
	nx_strbuf_reset(&q);
	nx_strbuf_addf(&q, "SELECT count(*) FROM ref r FULL JOIN \"%s\" c USING (pcore_idx, "
		       "timestamp) WHERE r.avg_util_percent IS NULL OR c.avg_util_percent IS NULL",
		       table);
	for (const char *const *c = cols; *c; c++)
		nx_strbuf_addf(&q, " OR abs(r.%s - c.%s) > 1e-6 * greatest(abs(r.%s), 1e-9)", *c, *c,
			       *c);
	assert_int_equal((int64_t)nx_test_q(d, q.buf), 0);
	/* and the tables are not trivially zero */
	nx_strbuf_reset(&q);
	nx_strbuf_addf(&q, "SELECT max(avg_util_percent) FROM \"%s\"", table);
	NX_ASSERT_CMP(nx_test_q(d, q.buf), >, 0);
	nx_duck_close(d);
	nx_strbuf_release(&q);
}

/* SbufAllocation against the SQL it replaced: the same rows, and the file in the
 * table's order (pcore_idx, start_ts, partition, start_address). */
static void compare_sbuf_allocation(const char *profile)
{
	struct nx_duck *d = open_with_reference(profile, "SbufAllocation", "53_sbuf_allocation.sql",
						NULL);
	struct nx_strbuf q = NX_STRBUF_INIT;
	char *path = nx_xasprintf("%s/SbufAllocation.parquet", profile);

	double n = nx_test_q(d, "SELECT count(*) FROM ref");
	NX_ASSERT_CMP(n, >, 0);
	NX_ASSERT_CMP(nx_test_q(d, "SELECT count(*) FROM SbufAllocation"), ==, n);
	assert_int_equal((int64_t)nx_test_q(d, "SELECT count(*) FROM (SELECT * FROM ref EXCEPT ALL "
					       "SELECT * FROM SbufAllocation)"), 0);
	assert_int_equal((int64_t)nx_test_q(d, "SELECT count(*) FROM (SELECT * FROM SbufAllocation "
					       "EXCEPT ALL SELECT * FROM ref)"), 0);
	NX_ASSERT_CMP(nx_test_q(d, "SELECT count(*) FROM SbufAllocation WHERE opcode IS NOT NULL"),
		      >, 0);
	nx_strbuf_addstr(&q, "SELECT count(*) FROM (SELECT pcore_idx, start_ts, partition, "
			     "start_address, lag((pcore_idx, start_ts, partition, start_address)) "
			     "OVER (ORDER BY file_row_number) AS prev FROM read_parquet(");
	nx_sql_quote(&q, path);
	nx_strbuf_addstr(&q, ", file_row_number = true)) WHERE prev > (pcore_idx, start_ts, "
			     "partition, start_address)");
	assert_int_equal((int64_t)nx_test_q(d, q.buf), 0);
	nx_duck_close(d);
	nx_strbuf_release(&q);
	free(path);
}

static const char *const sbuf_cols[] = { "avg_util_percent", "partition_0_util_percent",
	"partition_32_util_percent", "partition_64_util_percent", "partition_96_util_percent",
	NULL };
static const char *const psum_cols[] = { "avg_util_percent", "bank_0_util_percent",
	"bank_1_util_percent", "bank_2_util_percent", "bank_3_util_percent",
	"bank_4_util_percent", "bank_5_util_percent", "bank_6_util_percent",
	"bank_7_util_percent", NULL };

/* Summary: every column of the reference and the published row is the same value. */
static void compare_summary(const char *profile)
{
	struct nx_duck *d = open_with_reference(profile, "Summary", "80_summary.sql", NULL);
	struct nx_strbuf q = NX_STRBUF_INIT;
	const struct nx_table *t = nx_schema_table("Summary");

	assert_int_equal((int64_t)nx_test_q(d, "SELECT count(*) FROM ref"), 1);
	assert_int_equal((int64_t)nx_test_q(d, "SELECT count(*) FROM Summary"), 1);
	nx_strbuf_reset(&q);
	nx_strbuf_addstr(&q, "SELECT count(*) FROM ref r, Summary s WHERE false");
	for (size_t i = 0; i < t->nfields; i++)
		nx_strbuf_addf(&q, " OR r.\"%s\" IS DISTINCT FROM s.\"%s\"", t->fields[i].name,
			       t->fields[i].name);
	assert_int_equal((int64_t)nx_test_q(d, q.buf), 0);
	/* and the row is not empty */
	NX_ASSERT_CMP(nx_test_q(d, "SELECT tensor_engine_instruction_count FROM Summary"), >, 0);
	nx_duck_close(d);
	nx_strbuf_release(&q);
}

/* DmaPacketAggregated: the same rows as the reference, and the file in (start_ts, id)
 * order like the reference's ORDER BY. */
static void compare_dma_aggregated(const char *profile, bool dma)
{
	struct nx_duck *d = open_with_reference(profile, "DmaPacketAggregated",
						"20_dma_packet_aggregated.sql", NULL);
	struct nx_strbuf q = NX_STRBUF_INIT;
	char *file = nx_path_join(profile, "DmaPacketAggregated.parquet");
	const struct nx_table *t = nx_schema_table("DmaPacketAggregated");

	double n = nx_test_q(d, "SELECT count(*) FROM ref");
	assert_true(dma ? n > 0 : n == 0);
	NX_ASSERT_CMP(nx_test_q(d, "SELECT count(*) FROM DmaPacketAggregated"), ==, n);
	NX_ASSERT_CMP(nx_test_q(d, "SELECT count(DISTINCT id) FROM DmaPacketAggregated"), ==, n);
	nx_strbuf_reset(&q);
	nx_strbuf_addstr(&q, "SELECT count(*) FROM ref r FULL JOIN DmaPacketAggregated c USING (id) "
			     "WHERE r.start_ts IS NULL OR c.start_ts IS NULL");
	for (size_t i = 0; i < t->nfields; i++)
		nx_strbuf_addf(&q, " OR r.\"%s\" IS DISTINCT FROM c.\"%s\"", t->fields[i].name,
			       t->fields[i].name);
	assert_int_equal((int64_t)nx_test_q(d, q.buf), 0);
	if (dma) {
		nx_strbuf_reset(&q);
		nx_strbuf_addstr(&q, "SELECT count(*) FROM (SELECT start_ts, id, lag(start_ts) OVER w "
				     "AS ls, lag(id) OVER w AS li FROM read_parquet(");
		nx_sql_quote(&q, file);
		nx_strbuf_addstr(&q, ", file_row_number = true) WINDOW w AS (ORDER BY "
				     "file_row_number)) WHERE ls > start_ts OR (ls = start_ts AND li > id)");
		assert_int_equal((int64_t)nx_test_q(d, q.buf), 0);
	}
	nx_duck_close(d);
	nx_strbuf_release(&q);
	free(file);
}

/* PendingDma: one row per grid point in both, the same value at each, in the same
 * (pcore_idx, timestamp) order; and not all zero. */
static void compare_pending(const char *profile)
{
	struct nx_duck *d = open_with_reference(profile, "PendingDma", "52_pending_dma.sql", NULL);
	struct nx_strbuf q = NX_STRBUF_INIT;
	char *file = nx_path_join(profile, "PendingDma.parquet");

	double n = nx_test_q(d, "SELECT count(*) FROM ref");
	NX_ASSERT_CMP(n, >, 0);
	NX_ASSERT_CMP(nx_test_q(d, "SELECT count(*) FROM PendingDma"), ==, n);
	assert_int_equal((int64_t)nx_test_q(d, "SELECT count(*) FROM ref r FULL JOIN PendingDma c "
					       "USING (pcore_idx, timestamp) WHERE r.value IS NULL "
					       "OR c.value IS NULL OR r.value <> c.value"), 0);
	NX_ASSERT_CMP(nx_test_q(d, "SELECT max(value) FROM PendingDma"), >, 0);
	nx_strbuf_reset(&q);
	nx_strbuf_addstr(&q, "SELECT count(*) FROM (SELECT timestamp, lag(timestamp) OVER "
			     "(ORDER BY file_row_number) AS lt FROM read_parquet(");
	nx_sql_quote(&q, file);
	nx_strbuf_addstr(&q, ", file_row_number = true)) WHERE lt >= timestamp");
	assert_int_equal((int64_t)nx_test_q(d, q.buf), 0);
	nx_duck_close(d);
	nx_strbuf_release(&q);
	free(file);
}

/* Flow: the same edges as the reference's single query, and the file in its order
 * (out_table, out_id, in_table, in_id). kinds: the dependency types that must occur. */
static void compare_flow(const char *profile, int kinds)
{
	struct nx_duck *d = open_with_reference(profile, "Flow", "40_flow.sql", NULL);
	struct nx_strbuf q = NX_STRBUF_INIT;
	char *file = nx_path_join(profile, "Flow.parquet");

	double n = nx_test_q(d, "SELECT count(*) FROM ref");
	NX_ASSERT_CMP(nx_test_q(d, "SELECT count(*) FROM Flow"), ==, n);
	assert_int_equal((int64_t)nx_test_q(d, "SELECT count(*) FROM (SELECT * FROM ref EXCEPT ALL "
					       "SELECT * FROM Flow)"), 0);
	assert_int_equal((int64_t)nx_test_q(d, "SELECT count(*) FROM (SELECT * FROM Flow EXCEPT ALL "
					       "SELECT * FROM ref)"), 0);
	NX_ASSERT_CMP(nx_test_q(d, "SELECT count(*) FROM ref WHERE dependency_type = "
			       "'DGE_TRIGGER'"), >=, (kinds & 1) ? 1 : 0);
	NX_ASSERT_CMP(nx_test_q(d, "SELECT count(*) FROM ref WHERE dependency_type = "
			       "'SEMAPHORE'"), >=, (kinds & 2) ? 1 : 0);
	if (n > 0) {
		nx_strbuf_reset(&q);
		nx_strbuf_addstr(&q, "SELECT count(*) FROM (SELECT (out_table, out_id, in_table, in_id) "
				     "AS k, lag((out_table, out_id, in_table, in_id)) OVER (ORDER BY "
				     "file_row_number) AS lk FROM read_parquet(");
		nx_sql_quote(&q, file);
		nx_strbuf_addstr(&q, ", file_row_number = true)) WHERE lk > k");
		assert_int_equal((int64_t)nx_test_q(d, q.buf), 0);
	}
	nx_duck_close(d);
	nx_strbuf_release(&q);
	free(file);
}

/* Instruction.dma_trigger_start_ts / _end_ts / dma_wait_time_ns (src/ingest/dma_trigger.c)
 * against SQL over DmaPacket and nx_DmaTransfer: per triggering instruction, the first
 * start and the last end of the packets of the transfers it triggered, and the delay
 * from the instruction's end to that start (the packets of a transfer name its first
 * packet's trigger in these traces, and instruction ids are unique). */
static void compare_trigger_columns(const char *profile, bool dma)
{
	struct nx_duck *d = NULL;
	struct nx_err err = { 0 };
	char *staging = nx_path_join(profile, ".staging");

	nx_test_use_profile(&d, profile);
	if (nx_db_create_views(d, staging, &err) ||
	    nx_duck_exec(d, "CREATE TABLE ref AS SELECT x.trigger AS id, min(p.start_ts) AS s, "
			    "max(p.end_ts) AS e FROM DmaPacket p JOIN nx_DmaTransfer x ON "
			    "x.transfer = p.packet_aggregation_id WHERE x.trigger IS NOT NULL "
			    "GROUP BY x.trigger", &err))
		fail_msg("%s", err.msg);
	assert_int_equal((int64_t)nx_test_q(d, "SELECT count(*) - count(DISTINCT id) FROM "
					       "Instruction"), 0);
	double n = nx_test_q(d, "SELECT count(*) FROM Instruction WHERE dma_trigger_start_ts IS "
			     "NOT NULL");
	assert_true(dma ? n > 0 : n == 0);
	NX_ASSERT_CMP(nx_test_q(d, "SELECT count(*) FROM ref JOIN Instruction USING (id)"), ==, n);
	assert_int_equal((int64_t)nx_test_q(d, "SELECT count(*) FROM Instruction i LEFT JOIN ref r "
					       "USING (id) WHERE i.dma_trigger_start_ts IS DISTINCT "
					       "FROM r.s OR i.dma_trigger_end_ts IS DISTINCT FROM r.e "
					       "OR i.dma_wait_time_ns IS DISTINCT FROM r.s - i.end_ts"),
			 0);
	nx_duck_close(d);
	free(staging);
}

/* Table `table` of two profiles holds the same rows (as multisets). */
static void compare_same(const char *a, const char *b, const char *table)
{
	struct nx_duck *d = NULL;
	struct nx_err err = { 0 };
	struct nx_strbuf q = NX_STRBUF_INIT;
	char *fa = nx_xasprintf("%s/%s.parquet", a, table), *fb = nx_xasprintf("%s/%s.parquet", b, table);

	if (nx_duck_open(&d, 1, NULL, &err))
		fail_msg("%s", err.msg);
	for (int dir = 0; dir < 3; dir++) {
		nx_strbuf_reset(&q);
		if (dir == 2) {
			nx_strbuf_addstr(&q, "SELECT (SELECT count(*) FROM read_parquet(");
			nx_sql_quote(&q, fa);
			nx_strbuf_addstr(&q, ")) - (SELECT count(*) FROM read_parquet(");
			nx_sql_quote(&q, fb);
			nx_strbuf_addstr(&q, "))");
		} else {
			nx_strbuf_addstr(&q, "SELECT count(*) FROM (SELECT * FROM read_parquet(");
			nx_sql_quote(&q, dir ? fb : fa);
			nx_strbuf_addstr(&q, ") EXCEPT ALL SELECT * FROM read_parquet(");
			nx_sql_quote(&q, dir ? fa : fb);
			nx_strbuf_addstr(&q, "))");
		}
		assert_int_equal((int64_t)nx_test_q(d, q.buf), 0);
	}
	nx_duck_close(d);
	nx_strbuf_release(&q);
	free(fa);
	free(fb);
}

/* Every table of profile b holds the same rows as a's (but Metadata, which names the
 * profile and the time of its ingest); returns how many tables were compared. */
static size_t compare_tables(const char *a, const char *b)
{
	struct nx_table_file *f;
	struct nx_err err = { 0 };
	size_t n;

	if (nx_table_files_list(b, NULL, NULL, &f, &n, &err))
		fail_msg("%s", err.msg);
	for (size_t i = 0; i < n; i++)
		if (strcmp(f[i].table, "Metadata"))
			compare_same(a, b, f[i].table);
	nx_table_files_free(f, n);
	return n;
}

/* Every table of profile b holds the same rows as a's, and the raw trace tables in
 * the same order: b was ingested with its trace tables in parts of one row group,
 * joined at the end (db/parquet_concat.h). */
static void compare_all_tables(const char *a, const char *b)
{
	struct nx_table_file *f;
	struct nx_err err = { 0 };
	struct nx_duck *d = NULL;
	size_t n;

	if (nx_table_files_list(b, NULL, NULL, &f, &n, &err))
		fail_msg("%s", err.msg);
	NX_ASSERT_CMP(n, >, 40);
	for (size_t i = 0; i < n; i++) {
		assert_int_equal(f[i].index, -1); /* no part left */
		/* Metadata names the profile and the time of its ingest */
		if (strcmp(f[i].table, "Metadata"))
			compare_same(a, b, f[i].table);
	}
	nx_table_files_free(f, n);
	if (nx_duck_open(&d, 1, NULL, &err))
		fail_msg("%s", err.msg);
	/* row for row: the raw tables joined from parts, SbufAllocation out of the spilled
	 * sort; and the first two were joined from at least three parts */
	static const char *const ordered[] = { "Instruction", "DmaPacket", "SbufAllocation" };
	for (size_t t = 0; t < NX_ARRAY_SIZE(ordered); t++) {
		char *sql = nx_xasprintf("SELECT count(*) FROM (SELECT hash(x) AS h, row_number() OVER () "
				   "AS r FROM '%s/%s.parquet' x) p JOIN (SELECT hash(y) AS h, "
				   "row_number() OVER () AS r FROM '%s/%s.parquet' y) q USING (r) "
				   "WHERE p.h <> q.h", a, ordered[t], b, ordered[t]);
		assert_int_equal((int64_t)nx_test_q(d, sql), 0);
		free(sql);
		if (t == 2)
			break;
		sql = nx_xasprintf("SELECT count(DISTINCT row_group_id) FROM "
				   "parquet_metadata('%s/%s.parquet')", b, ordered[t]);
		NX_ASSERT_CMP(nx_test_q(d, sql), >=, 3);
		free(sql);
	}
	nx_duck_close(d);
}

/* The trace tables of a and b have the same row groups: rows and column chunks each. */
static void compare_row_groups(const char *a, const char *b)
{
	static const char *const raw[] = { "Instruction", "DmaPacket" };
	struct nx_err err = { 0 };
	struct nx_duck *d = NULL;

	if (nx_duck_open(&d, 1, NULL, &err))
		fail_msg("%s", err.msg);
	for (size_t t = 0; t < NX_ARRAY_SIZE(raw); t++) {
		char *sql = nx_xasprintf("SELECT count(*) FROM ((SELECT row_group_id, "
					 "row_group_num_rows, count(*) FROM parquet_metadata("
					 "'%s/%s.parquet') GROUP BY ALL) EXCEPT ALL (SELECT "
					 "row_group_id, row_group_num_rows, count(*) FROM "
					 "parquet_metadata('%s/%s.parquet') GROUP BY ALL))",
					 a, raw[t], b, raw[t]);
		assert_int_equal((int64_t)nx_test_q(d, sql), 0);
		free(sql);
	}
	nx_duck_close(d);
}

/* The trigger spans with two ids per run (so, many runs, merged over several levels,
 * one id in several runs) and three per cached block (a miss and a write-back almost
 * every lookup): the tables they feed are the same as with the defaults. */
static void check_trigger_spill(const char *neff, const char *ntff, const char *data,
				const char *name, const char *profile, bool dma)
{
	char *tiny = nx_xasprintf("%s-trig2", name);

	setenv("NX_TRIG_RUN", "2", 1);
	setenv("NX_TRIG_BLOCK", "3", 1);
	setenv("NX_FLOW_TRIG", "sort", 1); /* and Flow's trigger edges sorted by DuckDB */
	char *prof = ingest_keep(neff, ntff, data, tiny);
	unsetenv("NX_TRIG_RUN");
	unsetenv("NX_TRIG_BLOCK");
	unsetenv("NX_FLOW_TRIG");
	compare_trigger_columns(prof, dma);
	compare_flow(prof, dma ? 1 : 0);
	compare_same(profile, prof, "Instruction");
	if (dma) {
		compare_same(profile, prof, "DmaUsage");
		compare_same(profile, prof, "HbmUsage");
		compare_same(profile, prof, "DmaPacketAggregated");
		compare_same(profile, prof, "PendingDma");
		compare_same(profile, prof, "Flow");
	}
	free(prof);
	free(tiny);
}

/* DmaUsage or HbmUsage (src/ingest/dma_usage.c) against 50_dma_usage.sql or
 * 51_hbm_usage.sql over the macro of 49_throughput_grid.sql: the same grid points, every
 * value identical, in (pcore_idx, timestamp) order; and not all zero. */
static void compare_usage(const char *profile, const char *table, const char *file)
{
	struct nx_duck *d = open_with_reference(profile, table, file, "49_throughput_grid.sql");
	struct nx_strbuf q = NX_STRBUF_INIT;
	char *path = nx_xasprintf("%s/%s.parquet", profile, table);

	double n = nx_test_q(d, "SELECT count(*) FROM ref");
	NX_ASSERT_CMP(n, >, 0);
	nx_strbuf_reset(&q);
	nx_strbuf_addf(&q, "SELECT count(*) FROM \"%s\"", table);
	NX_ASSERT_CMP(nx_test_q(d, q.buf), ==, n);
	nx_strbuf_reset(&q);
	nx_strbuf_addf(&q, "SELECT count(*) FROM ref r FULL JOIN \"%s\" c USING (pcore_idx, "
		       "timestamp) WHERE r.current_throughput IS NULL OR c.current_throughput IS "
		       "NULL OR r.current_throughput <> c.current_throughput OR "
		       "r.total_transfer_bytes IS DISTINCT FROM c.total_transfer_bytes", table);
	assert_int_equal((int64_t)nx_test_q(d, q.buf), 0);
	nx_strbuf_reset(&q);
	nx_strbuf_addf(&q, "SELECT max(total_transfer_bytes) FROM \"%s\"", table);
	NX_ASSERT_CMP(nx_test_q(d, q.buf), >, 0);
	nx_strbuf_reset(&q);
	nx_strbuf_addstr(&q, "SELECT count(*) FROM (SELECT timestamp, lag(timestamp) OVER "
			     "(ORDER BY file_row_number) AS lt FROM read_parquet(");
	nx_sql_quote(&q, path);
	nx_strbuf_addstr(&q, ", file_row_number = true)) WHERE lt >= timestamp");
	assert_int_equal((int64_t)nx_test_q(d, q.buf), 0);
	nx_duck_close(d);
	nx_strbuf_release(&q);
	free(path);
}

static void check_profile(const char *profile, bool onchip, int flow_kinds)
{
	if (onchip) {
		compare_usage(profile, "DmaUsage", "50_dma_usage.sql");
		compare_usage(profile, "HbmUsage", "51_hbm_usage.sql");
	}
	compare_flow(profile, flow_kinds);
	compare_trigger_columns(profile, onchip);
	compare_dma_aggregated(profile, onchip);
	if (onchip)
		compare_pending(profile);
	if (onchip) {
		compare_sbuf_allocation(profile);
		compare(profile, "SbufUsage", "54_sbuf_usage.sql", sbuf_cols);
		compare(profile, "PsumUsage", "55_psum_usage.sql", psum_cols);
	}
	compare_summary(profile);
}

static void test_fixture(void **state)
{
	(void)state;
	char *dir = nx_test_dir("onchip-ref");
	char *data = nx_path_join(dir, "data");
	struct nx_fixture_opts fo;
	struct nx_err err = { 0 };

	/* 3: without SemaphoreUpdate rows, where the trigger edges are written as Flow
	 * itself (40_flow.sql skipped) */
	for (unsigned v = 0; v < 4; v++) {
		char name[32];
		snprintf(name, sizeof(name), "fix%u", v);
		char *sub = nx_path_join(dir, name);
		nx_fixture_opts_default(&fo);
		fo.ticks_per_ns = v == 1 ? 3 : 1;
		fo.dge_notifications = v != 2;
		fo.without_sem = v == 3;
		if (nx_mkdirs(sub, &err) || nx_fixture_write(sub, &fo, &err))
			fail_msg("%s", err.msg);
		char *neff = nx_path_join(sub, "fixture.neff"), *ntff = nx_path_join(sub, "fixture.ntff");
		char *prof = ingest_keep(neff, ntff, data, name);
		check_profile(prof, v != 2, v != 2 ? 1 : 0);
		check_trigger_spill(neff, ntff, data, name, prof, v != 2);
		/* the trigger edges are Flow's first part in staging, or Flow itself */
		char *part = nx_path_join(prof, ".staging/nx_FlowEdges_0.parquet");
		assert_int_equal(nx_is_file(part), v != 3);
		free(part);
		if (v == 3) { /* and so from the SQL join (nx_DmaTransfer written for it) */
			setenv("NX_FLOW_TRIG", "sql", 1);
			char *sql = ingest_keep(neff, ntff, data, "fix3-sql");
			unsetenv("NX_FLOW_TRIG");
			compare_flow(sql, 1);
			compare_same(prof, sql, "Flow");
			free(sql);
		}
		free(prof);
		/* one open transfer at most: early writes, and the split transfer found */
		setenv("NX_DMA_AGG_OPEN", "1", 1);
		strcat(name, "-open1");
		prof = ingest_keep(neff, ntff, data, name);
		unsetenv("NX_DMA_AGG_OPEN");
		compare_dma_aggregated(prof, v != 2);
		if (v != 2) {
			compare_pending(prof);
			compare_usage(prof, "DmaUsage", "50_dma_usage.sql");
			compare_usage(prof, "HbmUsage", "51_hbm_usage.sql");
		}
		free(prof);
		free(neff);
		free(ntff);
		free(sub);
	}
	free(data);
	free(dir);
}

/* A simulated kernel: many overlapping allocations, buckets wider than 100 ns. */
static void test_kernel(void **state)
{
	(void)state;
	const char *bin = nx_test_bin();
	char *dir = nx_test_dir("onchip-ref-kernel");
	assert_int_equal(nx_test_sh("mkdir -p %s && cd %s && %s kernel gen attention --size 512 "
				    "-o k.neff >/dev/null && NEURON_RT_ENABLE_DGE_NOTIFICATIONS=1 "
				    "%s capture -n k.neff -s k.ntff >/dev/null", dir, dir, bin, bin), 0);
	char *neff = nx_path_join(dir, "k.neff"), *ntff = nx_path_join(dir, "k.ntff");
	char *data = nx_path_join(dir, "data");
	char *prof = ingest_keep(neff, ntff, data, "k");
	check_profile(prof, true, 3);
	check_trigger_spill(neff, ntff, data, "k", prof, true);
	/* Flow's trigger edges from the SQL join, as for traces with repeated ids */
	setenv("NX_FLOW_TRIG", "sql", 1);
	char *sql = ingest_keep(neff, ntff, data, "k-sql");
	/* and in an ingest that keeps no staging: nx_DmaTransfer is then written for the
	 * join alone (ingest.c no longer writes it before DmaPacketAggregated), and goes
	 * with the staging folder */
	char *plain = ingest_as(neff, ntff, data, "k-plain", false);
	unsetenv("NX_FLOW_TRIG");
	compare_flow(sql, 3);
	NX_ASSERT_CMP(compare_tables(prof, plain), >, 40);
	char *staging = nx_path_join(plain, ".staging");
	assert_false(nx_is_dir(staging));
	free(staging);
	free(plain);
	free(sql);
	free(prof);
	setenv("NX_DMA_AGG_OPEN", "4", 1);
	prof = ingest_keep(neff, ntff, data, "k4");
	unsetenv("NX_DMA_AGG_OPEN");
	compare_dma_aggregated(prof, true);
	compare_pending(prof);
	compare_usage(prof, "DmaUsage", "50_dma_usage.sql");
	compare_usage(prof, "HbmUsage", "51_hbm_usage.sql");
	free(prof);
	free(data);
	free(neff);
	free(ntff);
	free(dir);
}

/* The trace tables written in parts of one row group (2048 rows) and joined at the end
 * (db/parquet_concat.h), with Flow's trigger edges joined in SQL over Instruction's
 * parts: every table as with the defaults, the raw ones in the same order; and by
 * DuckDB's writer instead of ours (NX_INGEST_WRITER=duckdb), one COPY or two: every
 * table the same, the raw ones in the same row groups. */
static void test_parts(void **state)
{
	(void)state;
	const char *bin = nx_test_bin();
	char *dir = nx_test_dir("derive-parts");
	assert_int_equal(nx_test_sh("mkdir -p %s && cd %s && %s kernel gen matmul_v0 --size 2048 "
				    "-q -o m.neff && %s capture --enable-dge-notifs -q -n m.neff "
				    "-s m.ntff >/dev/null", dir, dir, bin, bin), 0);
	char *neff = nx_path_join(dir, "m.neff"), *ntff = nx_path_join(dir, "m.ntff");
	char *data = nx_path_join(dir, "data");
	char *prof = ingest_keep(neff, ntff, data, "m");
	setenv("NX_FLOW_TRIG", "sql", 1);
	setenv("NX_INGEST_ROW_GROUP", "2048", 1);
	setenv("NX_INGEST_PART_GROUPS", "1", 1);
	setenv("NX_SBUF_SORT_BYTES", "480", 1); /* SbufAllocation's sort: runs of 10 rows */
	char *parts = ingest_keep(neff, ntff, data, "m-parts");
	/* the same by DuckDB's writer, with two COPYs and one (docs/memory.md, "Two
	 * writers"): the same rows in the same row groups */
	setenv("NX_INGEST_WRITER", "duckdb", 1);
	char *two = ingest_keep(neff, ntff, data, "m-two");
	setenv("NX_INGEST_WRITERS", "1", 1);
	char *one = ingest_keep(neff, ntff, data, "m-one");
	unsetenv("NX_INGEST_WRITERS");
	unsetenv("NX_INGEST_WRITER");
	unsetenv("NX_FLOW_TRIG");
	unsetenv("NX_INGEST_ROW_GROUP");
	unsetenv("NX_INGEST_PART_GROUPS");
	unsetenv("NX_SBUF_SORT_BYTES");
	compare_all_tables(prof, parts);
	compare_all_tables(one, parts);
	compare_row_groups(one, parts);
	compare_all_tables(two, parts);
	compare_row_groups(two, parts);
	free(one);
	free(two);
	free(parts);
	free(prof);
	free(data);
	free(neff);
	free(ntff);
	free(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fixture),
		cmocka_unit_test(test_kernel),
		cmocka_unit_test(test_parts),
	};
	return nx_test_done(cmocka_run_group_tests(tests, NULL, NULL));
}
