/* SPDX-License-Identifier: MIT
 * test_onchip_usage.c: SbufAllocation, SbufUsage and PsumUsage of the fixture profile
 * (tests/helper/fixture.c lists its timeline) against values computed by hand, the same
 * without DMA records, and invariants on a simulated kernel run through $NX_BIN.
 *
 * Hand computation for the fixture (trn2: 224 KiB per SBUF partition, PSUM banks of
 * 2 KiB; every access pattern starts at byte 0 of its partitions):
 *   packet 1000 (first of transfer 100, [20,80)) writes SBUF p0-63, bytes 0-1023 -> D0;
 *   its block also writes SBUF p64-127, bytes 0-1023 (descriptor 1) -> D1, at 20
 *   packets 1001 [30,90) and 1002 [90,95) (descriptor 1) extend D1's write end
 *   LDWEIGHTS [100,150), MATMUL [140,300) read bytes 0-255 / 0-1023: D0, D1 read to 300
 *   MATMUL writes PSUM bank 0 (128 x 512 fp32 = 2 KiB) at 140 -> P
 *   TENSOR_COPY [300,400) reads P (to 400), writes SBUF p0-127 bytes 0-1023 -> C;
 *     D0 and D1 are overwritten at 300 and end at max(write end, min(300, 300)) = 300
 *   ACTIVATE [400,450) reads and writes exactly C: an in-place update, C continues
 *   store packets 1003 [460,560) and 1004 [470,580) read C's p0-63 and p64-127
 *   MATMUL #2 [500,500) reads C bytes 0-255, writes 512 B of bank 0: a new,
 *     zero-length range; P keeps the rest and ends at its last read, 400.
 * SbufAllocation: D0 [20,300) and D1 [30,300) from DMA (tensor "a"), C [300,560) for
 * groups 0/32 and [300,580) for 64/96, each row 32 partitions x 1024 B = 1/224 of a
 * group. Buckets are 100 ns (the profile is 1000 ns long). */
#include "common/compat.h"
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "helper/asserts.h"

#include "common/fsutil.h"
#include "common/xalloc.h"
#include "db/duck.h"
#include "derive/derive.h"
#include "helper/fixture.h"
#include "helper/profile_db.h"
#include "ingest/ingest.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct ctx {
	char *dir, *data, *full, *nodma;
	struct nx_duck *d;
};

static int setup(void **state)
{
	struct ctx *c = nx_xcalloc(1, sizeof(*c));
	struct nx_fixture_opts fo;
	struct nx_err err = { 0 };

	c->dir = nx_test_dir("onchip");
	c->data = nx_path_join(c->dir, "data");
	nx_fixture_opts_default(&fo);
	fo.ticks_per_ns = 3; /* times must come out in ns whatever the tick rate */
	c->full = nx_test_ingest_fixture(c->dir, c->data, &fo, "full");
	fo.dge_notifications = false;
	c->nodma = nx_test_ingest_fixture(c->dir, c->data, &fo, "nodma");
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
	free(c);
	return 0;
}

#define EQ(c, sql, want) NX_EQ((c)->d, sql, want)
/* float columns: 7 significant digits */
#define NEAR(c, sql, want) NX_NEAR((c)->d, sql, want, 1e-3)

static void test_sbuf_allocation(void **state)
{
	struct ctx *c = *state;
	nx_test_use_profile(&c->d, c->full);
	EQ(c, "SELECT count(*) FROM SbufAllocation", 8);
	EQ(c, "SELECT count(*) FROM SbufAllocation WHERE op_source_type = 'dma'", 4);
	/* D0 holds groups 0 and 32, D1 groups 64 and 96 */
	EQ(c, "SELECT count(*) FROM SbufAllocation WHERE op_source_type = 'dma' AND start_ts = 20 "
	      "AND end_ts = 300 AND partition IN (0, 32)", 2);
	EQ(c, "SELECT count(*) FROM SbufAllocation WHERE op_source_type = 'dma' AND start_ts = 20 "
	      "AND end_ts = 300 AND partition IN (64, 96)", 2);
	EQ(c, "SELECT count(*) FROM SbufAllocation WHERE op_source_type = 'dma' AND queue_name = "
	      "'qSyncIO0' AND block_id = 0 AND tensor_name = 'a' AND opcode IS NULL", 4);
	EQ(c, "SELECT min(start_address) + max(end_address) FROM SbufAllocation", 1023);
	/* C: created by the TENSOR_COPY, continued in place by the ACTIVATE, read by the store */
	EQ(c, "SELECT count(*) FROM SbufAllocation WHERE op_source_type = 'instruction' AND "
	      "opcode = 'TENSOR_COPY' AND operands LIKE '%psum%' AND queue_name IS NULL AND "
	      "block_id IS NULL AND tensor_name IS NULL AND start_ts = 300", 4);
	EQ(c, "SELECT sum(end_ts) FROM SbufAllocation WHERE opcode = 'TENSOR_COPY'",
	   2 * 560 + 2 * 580);
	EQ(c, "SELECT count(DISTINCT partition) FROM SbufAllocation", 4);
	EQ(c, "SELECT max(pcore_idx) FROM SbufAllocation", 0);
}

static void test_sbuf_usage(void **state)
{
	struct ctx *c = *state;
	const double g = 1.0 / 224; /* one allocation row: 1024 of a partition's 229376 bytes */
	nx_test_use_profile(&c->d, c->full);
	EQ(c, "SELECT count(*) FROM SbufUsage", 11);
	EQ(c, "SELECT count(*) FROM SbufUsage s JOIN DmaUsage d USING (timestamp)", 11);
	/* [0,100): D0 and D1 live from 20 */
	NEAR(c, "SELECT partition_0_util_percent FROM SbufUsage WHERE timestamp = 0", 0.8 * g);
	NEAR(c, "SELECT partition_96_util_percent FROM SbufUsage WHERE timestamp = 0", 0.8 * g);
	NEAR(c, "SELECT avg_util_percent FROM SbufUsage WHERE timestamp = 0", 0.8 * g);
	/* [100,500): one range per group all the time (D until 300, then C) */
	NEAR(c, "SELECT min(avg_util_percent) FROM SbufUsage WHERE timestamp BETWEEN 100 AND 400", g);
	NEAR(c, "SELECT max(avg_util_percent) FROM SbufUsage WHERE timestamp BETWEEN 100 AND 400", g);
	/* [500,600): C lives to 560 in groups 0/32, to 580 in 64/96 */
	NEAR(c, "SELECT partition_32_util_percent FROM SbufUsage WHERE timestamp = 500", 0.6 * g);
	NEAR(c, "SELECT partition_64_util_percent FROM SbufUsage WHERE timestamp = 500", 0.8 * g);
	EQ(c, "SELECT max(avg_util_percent) FROM SbufUsage WHERE timestamp >= 600", 0);
	NEAR(c, "SELECT sum(partition_0_util_percent) FROM SbufUsage", 5.4 * g);
}

static void test_psum_usage(void **state)
{
	struct ctx *c = *state;
	nx_test_use_profile(&c->d, c->full);
	EQ(c, "SELECT count(*) FROM PsumUsage", 11);
	/* bank 0 is full (128 partitions x 2 KiB) from the MATMUL at 140 to the copy's end, 400 */
	NEAR(c, "SELECT bank_0_util_percent FROM PsumUsage WHERE timestamp = 100", 0.6);
	NEAR(c, "SELECT bank_0_util_percent FROM PsumUsage WHERE timestamp = 200", 1);
	NEAR(c, "SELECT bank_0_util_percent FROM PsumUsage WHERE timestamp = 300", 1);
	NEAR(c, "SELECT avg_util_percent FROM PsumUsage WHERE timestamp = 300", 0.125);
	/* the zero-length MATMUL at 500 occupies nothing */
	EQ(c, "SELECT sum(bank_0_util_percent) FROM PsumUsage WHERE timestamp >= 400", 0);
	EQ(c, "SELECT max(greatest(bank_1_util_percent, bank_2_util_percent, bank_3_util_percent, "
	      "bank_4_util_percent, bank_5_util_percent, bank_6_util_percent, bank_7_util_percent)) "
	      "FROM PsumUsage", 0);
}

static void test_without_dma(void **state)
{
	struct ctx *c = *state;
	nx_test_use_profile(&c->d, c->nodma);
	/* Only C remains; nothing reads it after the MATMUL at 500, so it ends there. */
	EQ(c, "SELECT count(*) FROM SbufAllocation", 4);
	EQ(c, "SELECT count(*) FROM SbufAllocation WHERE op_source_type = 'instruction' AND "
	      "start_ts = 300 AND end_ts = 500", 4);
	NEAR(c, "SELECT sum(avg_util_percent) FROM SbufUsage", 2.0 / 224);
	NEAR(c, "SELECT sum(bank_0_util_percent) FROM PsumUsage", 2.6);
}

/* A simulated kernel through the binary: fractions stay in [0, 1], SBUF never holds
 * more than its capacity, allocations are well formed, and PSUM is busy whenever a
 * MATMUL runs for a whole bucket. */
static void test_kernel_invariants(void **state)
{
	struct ctx *c = *state;
	const char *bin = nx_test_bin();
	char *dir = nx_path_join(c->dir, "kernel");
	assert_int_equal(nx_test_sh("mkdir -p %s && cd %s && %s kernel gen attention --size 512 "
				    "-o k.neff >/dev/null && NEURON_RT_ENABLE_DGE_NOTIFICATIONS=1 "
				    "%s capture -n k.neff -s k.ntff >/dev/null && %s view -n k.neff -s "
				    "k.ntff --data-path data --display-name k --ingest-only >/dev/null",
				    dir, dir, bin, bin, bin), 0);
	char *prof = nx_path_join(dir, "data/profiles/global/k@latest");
	nx_test_use_profile(&c->d, prof);
	NX_ASSERT_CMP(nx_test_q(c->d, "SELECT count(*) FROM SbufAllocation"), >, 0);
	EQ(c, "SELECT count(*) FROM SbufAllocation WHERE end_ts < start_ts OR end_address < "
	      "start_address OR partition NOT IN (0, 32, 64, 96) OR start_address < 0 OR "
	      "end_address >= 229376 OR op_source_type NOT IN ('dma', 'instruction')", 0);
	EQ(c, "SELECT count(*) FROM SbufAllocation WHERE (op_source_type = 'dma') <> "
	      "(block_id IS NOT NULL)", 0);
	EQ(c, "SELECT count(*) FROM SbufUsage WHERE least(partition_0_util_percent, "
	      "partition_32_util_percent, partition_64_util_percent, partition_96_util_percent) < -1e-6 "
	      "OR greatest(partition_0_util_percent, partition_32_util_percent, "
	      "partition_64_util_percent, partition_96_util_percent) > 1 + 1e-6", 0);
	EQ(c, "SELECT count(*) FROM PsumUsage WHERE least(bank_0_util_percent, bank_1_util_percent, "
	      "bank_2_util_percent, bank_3_util_percent, bank_4_util_percent, bank_5_util_percent, "
	      "bank_6_util_percent, bank_7_util_percent) < -1e-6 OR greatest(bank_0_util_percent, "
	      "bank_1_util_percent, bank_2_util_percent, bank_3_util_percent, bank_4_util_percent, "
	      "bank_5_util_percent, bank_6_util_percent, bank_7_util_percent) > 1 + 1e-6", 0);
	EQ(c, "SELECT (SELECT count(*) FROM SbufUsage) - (SELECT count(*) FROM DmaUsage)", 0);
	NX_ASSERT_CMP(nx_test_q(c->d, "SELECT count(*) FROM SbufUsage"), <=, 2000);
	/* Every bucket a MATMUL covers entirely shows PSUM in use. */
	EQ(c, "WITH w AS (SELECT min(timestamp) AS t0, (max(timestamp) - min(timestamp)) / "
	      "(count(*) - 1) AS w FROM PsumUsage) SELECT count(*) FROM PsumUsage u, w WHERE "
	      "u.avg_util_percent <= 0 AND EXISTS (SELECT 1 FROM Instruction i WHERE i.opcode = "
	      "'MATMUL' AND i.start_ts <= u.timestamp AND i.end_ts >= u.timestamp + w.w)", 0);
	NX_ASSERT_CMP(nx_test_q(c->d, "SELECT max(avg_util_percent) FROM PsumUsage"), >, 0);
	free(prof);
	free(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_sbuf_allocation),
		cmocka_unit_test(test_sbuf_usage),
		cmocka_unit_test(test_psum_usage),
		cmocka_unit_test(test_without_dma),
		cmocka_unit_test(test_kernel_invariants),
	};
	return nx_test_done(cmocka_run_group_tests(tests, setup, teardown));
}
