/* SPDX-License-Identifier: MIT
 * test_e2e_kernels.c: the whole device-side pipeline through the binary ($NX_BIN):
 * every library kernel is generated at a small size, captured on the simulator with DGE
 * notifications, ingested, and checked with SQL: the profile invariants hold, the naive
 * matmul has the DMA rows and matmul counts its loops imply, the planted kernels are
 * bound by the planted engine in ActiveTime, V0 -> V1 -> V2 gets faster, and a capture
 * without DGE notifications yields an empty DmaPacket table and a Warning. */
#include "common/compat.h"
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "helper/asserts.h"

#include "common/fsutil.h"
#include "common/xalloc.h"
#include "db/duck.h"
#include "db/profile_views.h"
#include "helper/fixture.h"
#include "helper/invariants.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *bin;
static char *dir;

/* gen + capture + ingest; returns the profile directory. */
static char *profile(const char *kernel, int size, bool dge)
{
	char *p = nx_xasprintf("%s/data/profiles/global/%s-%d%s@latest", dir, kernel, size,
			       dge ? "" : "-nodge");
	int rc = nx_test_sh(
		"cd %s && %s kernel gen %s --size %d -o %s-%d.neff >/dev/null && "
		"%s %s capture -n %s-%d.neff -s %s-%d%s.ntff >/dev/null && "
		"%s view -n %s-%d.neff -s %s-%d%s.ntff --data-path %s/data --display-name %s-%d%s "
		"--ingest-only -q >/dev/null",
		dir, bin, kernel, size, kernel, size,
		dge ? "NEURON_RT_ENABLE_DGE_NOTIFICATIONS=1" : "env -u NEURON_RT_ENABLE_DGE_NOTIFICATIONS",
		bin, kernel, size, kernel, size, dge ? "" : "-nodge",
		bin, kernel, size, kernel, size, dge ? "" : "-nodge", dir, kernel, size,
		dge ? "" : "-nodge");
	if (rc != 0)
		fail_msg("pipeline failed for %s (size %d)", kernel, size);
	return p;
}

static double q(const char *prof, const char *sql)
{
	struct nx_duck *d = NULL;
	struct nx_err err = { 0 };
	double v = NAN;

	assert_int_equal(nx_duck_open(&d, 1, NULL, &err), 0);
	if (nx_db_profile_views(d, prof, &err) || nx_duck_query_f64(d, sql, &v, &err))
		fail_msg("%s: %s: %s", prof, sql, err.msg);
	nx_duck_close(d);
	return v;
}

/* The engine with the largest busy time (DMA included), as the analysis defines it. */
static const char *bottleneck(const char *prof)
{
	static const char *const names[] = { "tensor", "vector", "scalar", "gpsimd", "dma" };
	double best = -1;
	const char *who = "?";
	for (size_t i = 0; i < NX_ARRAY_SIZE(names); i++) {
		char sql[256];
		if (!strcmp(names[i], "dma"))
			snprintf(sql, sizeof(sql), "SELECT coalesce(dma_active_time, 0) * 1e9 FROM Summary");
		else
			snprintf(sql, sizeof(sql),
				 "SELECT coalesce(sum(duration_ns), 0) FROM ActiveTime WHERE engine = '%s'",
				 names[i]);
		double v = q(prof, sql);
		if (v > best) {
			best = v;
			who = names[i];
		}
	}
	return who;
}

static int setup(void **state)
{
	(void)state;
	bin = nx_test_bin();
	dir = nx_test_dir("e2e-kernels");
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	free(dir);
	return 0;
}

static void test_every_kernel_invariants(void **state)
{
	static const struct { const char *name; int size; } ks[] = {
		{ "matmul_v0", 512 }, { "matmul_v1", 1024 }, { "matmul_v2", 1024 },
		{ "matmul_transpose", 512 }, { "softmax", 512 }, { "layernorm", 512 },
		{ "attention", 512 }, { "dma_tiny", 512 }, { "vector_bound", 512 },
		{ "serial_sem", 512 },
	};
	(void)state;
	for (size_t i = 0; i < NX_ARRAY_SIZE(ks); i++) {
		char *p = profile(ks[i].name, ks[i].size, true);
		nx_check_profile_invariants(p);
		NX_ASSERT_CMP(q(p, "SELECT count(*) FROM Metadata WHERE is_simulation"), ==, 1);
		NX_ASSERT_CMP(q(p, "SELECT count(*) FROM Instruction WHERE bir_debug_info_source_location "
				 "IS NULL"), ==, 0);
		free(p);
	}
}

/* V0 at size S: (S/128) m-tiles x (S/512) n-tiles x (S/128) k-tiles, one matmul and two
 * loads (128x128 lhsT, 128x512 rhs) each. */
static void test_matmul_v0_counts(void **state)
{
	(void)state;
	const int s = 512, m = s / 128, n = s / 512, k = s / 128;
	char *p = profile("matmul_v0", s, true);
	NX_ASSERT_CMP(q(p, "SELECT count(*) FROM Instruction WHERE opcode = 'MATMUL'"), ==, m * n * k);
	NX_ASSERT_CMP(q(p, "SELECT count(*) FROM DmaPacketAggregated WHERE source = '[[INPUT]]'"), ==, 2 * m * n * k);
	/* A transfer's packets include the 16 four-byte semaphore writes that end it. */
	NX_ASSERT_CMP(q(p, "SELECT sum(transfer_bytes) FROM DmaPacketAggregated WHERE source = '[[INPUT]]'"), ==, (double)m * n * k * (128 * 128 * 2 + 128 * 512 * 2 + 2 * 16 * 4));
	NX_ASSERT_CMP(q(p, "SELECT sum(transfer_bytes) FROM DmaPacket WHERE transfer_bytes > 4 AND "
			 "queue_type = 'input'"), ==, (double)m * n * k * (128 * 128 * 2 + 128 * 512 * 2));
	NX_ASSERT_CMP(q(p, "SELECT count(*) FROM Flow WHERE dependency_type = 'DGE_TRIGGER'"), ==, q(p, "SELECT count(*) FROM DmaPacketAggregated"));
	assert_string_equal(bottleneck(p), "dma");
	free(p);
}

static void test_planted_bottlenecks(void **state)
{
	(void)state;
	char *p = profile("dma_tiny", 512, true);
	assert_string_equal(bottleneck(p), "dma");
	free(p);
	p = profile("vector_bound", 512, true);
	assert_string_equal(bottleneck(p), "vector");
	free(p);
	/* serial_sem: engines mostly wait on each other: large semaphore waits. */
	p = profile("serial_sem", 512, true);
	NX_ASSERT_CMP(q(p, "SELECT sum(evt_wait_time_ns) FROM Instruction"), >, 0);
	NX_ASSERT_CMP(q(p, "SELECT count(*) FROM Flow WHERE dependency_type = 'SEMAPHORE'"), >, 0);
	/* recommend quotes the planted line's code from the kernel sources */
	assert_int_equal(nx_test_sh("%s recommend --data-path %s/data --display-name serial_sem-512 "
				    "--nki-source-root %s/kernels | grep -q 'serial_sem.py:29 .*nl.load(lhsT'",
				    bin, dir, getenv("NX_SOURCE_DIR")), 0);
	free(p);
}

static void test_matmul_series_gets_faster(void **state)
{
	(void)state;
	char *v0 = profile("matmul_v0", 1024, true), *v1 = profile("matmul_v1", 1024, true);
	char *v2 = profile("matmul_v2", 1024, true);
	double t0 = q(v0, "SELECT total_time FROM Summary"), t1 = q(v1, "SELECT total_time FROM Summary");
	double t2 = q(v2, "SELECT total_time FROM Summary");
	if (!(t0 > t1 && t1 > t2))
		fail_msg("total_time V0 %g, V1 %g, V2 %g should fall", t0, t1, t2);
	assert_string_equal(bottleneck(v0), "dma");
	assert_string_equal(bottleneck(v2), "tensor");
	free(v0);
	free(v1);
	free(v2);
}

/* The seed workflow's Python snippets: the tables it opens by file name exist, and its
 * DuckDB query (LDWEIGHTS/MATMUL overlap) runs verbatim on views made as it makes them. */
static void test_seed_python_snippets(void **state)
{
	static const char *const tables[] = { "Summary", "Instruction", "ActiveTime", "Metadata",
					       "DmaPacket", "DmaPacketAggregated", "TensorInfo",
					       "Flow" };
	struct nx_duck *d = NULL;
	struct nx_err err = { 0 };
	char sql[1024];
	double lw_before = 0;
	(void)state;

	char *p = profile("matmul_v1", 1024, true);
	for (size_t i = 0; i < NX_ARRAY_SIZE(tables); i++) {
		char *f = nx_xasprintf("%s/%s.parquet", p, tables[i]);
		if (!nx_is_file(f))
			fail_msg("%s is missing", f);
		free(f);
	}
	assert_int_equal(nx_duck_open(&d, 1, NULL, &err), 0);
	snprintf(sql, sizeof(sql), "CREATE VIEW Instruction AS SELECT * FROM '%s/Instruction.parquet'", p);
	assert_int_equal(nx_duck_exec(d, sql, &err), 0);
	snprintf(sql, sizeof(sql), "CREATE VIEW DmaPacket AS SELECT * FROM '%s/DmaPacket.parquet'", p);
	assert_int_equal(nx_duck_exec(d, sql, &err), 0);
	if (nx_duck_query_f64(d,
		"SELECT count(*) FILTER (WHERE rel = 'lw_before') FROM ("
		"    SELECT\n"
		"        CASE WHEN lw.end_ts <= mm.start_ts THEN 'lw_before'\n"
		"             WHEN lw.start_ts >= mm.end_ts THEN 'lw_after'\n"
		"             ELSE 'overlap' END as rel,\n"
		"        COUNT(*) as cnt\n"
		"    FROM Instruction mm\n"
		"    JOIN Instruction lw ON mm.bir_id = lw.bir_id\n"
		"    WHERE mm.opcode = 'MATMUL' AND lw.opcode = 'LDWEIGHTS'\n"
		"      AND mm.tensor_instruction_type = 'REGULAR'\n"
		"      AND lw.tensor_instruction_type = 'REGULAR'\n"
		"    GROUP BY rel\n"
		")", &lw_before, &err))
		fail_msg("%s", err.msg);
	NX_ASSERT_CMP(lw_before, ==, 1);
	nx_duck_close(d);
	free(p);
}

static void test_no_dge(void **state)
{
	(void)state;
	char *p = profile("matmul_v0", 512, false);
	char *f = nx_path_join(p, "DmaPacket.parquet");
	assert_true(nx_is_file(f));
	NX_ASSERT_CMP(q(p, "SELECT count(*) FROM DmaPacket"), ==, 0);
	NX_ASSERT_CMP(q(p, "SELECT count(*) FROM Warning WHERE category = 'Missing Data' AND message "
			 "LIKE '%NEURON_RT_ENABLE_DGE_NOTIFICATIONS%'"), ==, 1);
	NX_ASSERT_CMP(q(p, "SELECT hbm_read_bytes FROM Summary"), >, 0);
	nx_check_profile_invariants(p);
	free(f);
	free(p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_every_kernel_invariants),
		cmocka_unit_test(test_matmul_v0_counts),
		cmocka_unit_test(test_planted_bottlenecks),
		cmocka_unit_test(test_matmul_series_gets_faster),
		cmocka_unit_test(test_seed_python_snippets),
		cmocka_unit_test(test_no_dge),
	};
	return nx_test_done(cmocka_run_group_tests(tests, setup, teardown));
}
