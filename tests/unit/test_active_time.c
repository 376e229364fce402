/* SPDX-License-Identifier: MIT
 * test_active_time.c: the streaming interval merge behind ActiveTime, OpcodeSummary and
 * the Summary unions, on hand-made interval sets: overlapping, nested, touching,
 * zero-length, engines with nothing, and the instruction/DMA union; a spill that cannot
 * be written names its file and the reason. */
#include "common/compat.h"
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "helper/asserts.h"

#include "common/fsutil.h"
#include "helper/fixture.h"
#include "ingest/active_time.h"
#include "neff/neff.h"

#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

static char *dir;

static int setup(void **state)
{
	(void)state;
	dir = nx_test_dir("active");
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	free(dir);
	return 0;
}

static void test_unions(void **state)
{
	struct nx_active a;
	struct nx_err err = { 0 };
	char *spill = nx_path_join(dir, "a.bin");
	(void)state;

	assert_int_equal(nx_active_init(&a, spill, 0, &err), 0);
	/* Tensor: [0,100) holds [10,20) nested and [50,150) overlapping -> [0,150);
	 * [150,160) touches it -> [0,160); [200,200) is empty; [300,310) alone. */
	nx_active_add(&a, NX_ENGINE_TENSOR, NX_OP_MATMUL, 0, 100);
	nx_active_add(&a, NX_ENGINE_TENSOR, NX_OP_LDWEIGHTS, 10, 20);
	nx_active_add(&a, NX_ENGINE_VECTOR, NX_OP_TENSOR_COPY, 40, 60);
	nx_active_add(&a, NX_ENGINE_TENSOR, NX_OP_MATMUL, 50, 150);
	nx_active_add(&a, NX_ENGINE_TENSOR, NX_OP_MATMUL, 150, 160);
	nx_active_add(&a, NX_ENGINE_TENSOR, NX_OP_MATMUL, 200, 200);
	nx_active_add(&a, NX_ENGINE_TENSOR, NX_OP_MATMUL, 300, 310);
	nx_active_add(&a, 99, NX_OP_MATMUL, 0, 1000); /* bad engine: ignored */
	assert_int_equal(nx_active_finish(&a, &err), 0);

	/* DMA: static [100,250) and hardware-dynamic [240,260), [400,410) */
	nx_active_add_dma(&a, NX_QT_INPUT, 100, 250);
	nx_active_add_dma(&a, NX_QT_HARDWARE_DYNAMIC, 240, 260);
	nx_active_add_dma(&a, NX_QT_HARDWARE_DYNAMIC, 400, 410);
	assert_int_equal(nx_active_finish_all(&a, &err), 0);

	const struct nx_op_acc *mm = &a.op[NX_ENGINE_TENSOR][NX_OP_MATMUL];
	assert_int_equal(mm->count, 5);
	assert_int_equal(mm->time, 100 + 100 + 10 + 0 + 10);
	assert_int_equal(mm->active, 160 + 10);
	assert_int_equal(a.op[NX_ENGINE_TENSOR][NX_OP_LDWEIGHTS].active, 10);
	assert_int_equal(a.op[NX_ENGINE_GPSIMD][NX_OP_MATMUL].count, 0);
	assert_int_equal(a.nruns, 3); /* tensor [0,160), [300,310); vector [40,60) */
	assert_int_equal(a.any_inst.total, 160 + 10);
	assert_int_equal(a.dma[NX_DMA_ALL].total, 160 + 10);
	assert_int_equal(a.dma[NX_DMA_STATIC].total, 150);
	assert_int_equal(a.dma[NX_DMA_HARDWARE].total, 30);
	assert_int_equal(a.dma[NX_DMA_DYNAMIC].total, 30);
	assert_int_equal(a.dma[NX_DMA_SOFTWARE].total, 0);
	/* union of [0,160) [300,310) and [100,260) [400,410) = [0,260) + 10 + 10 */
	assert_int_equal(a.all_ns, 260 + 10 + 10);
	nx_active_release(&a);
	assert_false(nx_is_file(spill));
	free(spill);
}

static void test_bad_spill_path(void **state)
{
	struct nx_active a;
	struct nx_err err = { 0 };
	(void)state;
	NX_ASSERT_CMP(nx_active_init(&a, "/nonexistent/dir/a.bin", 0, &err), <, 0);
	assert_non_null(strstr(err.msg, "/nonexistent/dir/a.bin"));
	nx_active_release(&a);
}

/* A spill that cannot be written (here: past a file size limit, as a full disk would
 * stop it) is an error with the reason and the file, not a bare "cannot write". */
static void test_spill_write_fails(void **state)
{
	struct nx_active a;
	struct nx_err err = { 0 };
	char *spill = nx_path_join(dir, "full.bin");
	struct rlimit old, small = { 4096, 4096 };
	void (*was)(int) = signal(SIGXFSZ, SIG_IGN);
	(void)state;

	assert_int_equal(nx_active_init(&a, spill, 0, &err), 0);
	assert_int_equal(getrlimit(RLIMIT_FSIZE, &old), 0);
	small.rlim_max = old.rlim_max;
	assert_int_equal(setrlimit(RLIMIT_FSIZE, &small), 0);
	/* disjoint instructions: every one closes a run of each spill */
	for (int64_t i = 0; i < 100000; i++)
		nx_active_add(&a, NX_ENGINE_TENSOR, NX_OP_MATMUL, 10 * i, 10 * i + 5);
	int rc = nx_active_finish(&a, &err);
	assert_int_equal(setrlimit(RLIMIT_FSIZE, &old), 0);
	signal(SIGXFSZ, was);
	assert_int_equal(rc, -EFBIG);
	assert_non_null(strstr(err.msg, "cannot write the interval spill file '"));
	assert_non_null(strstr(err.msg, "full.bin"));
	assert_non_null(strstr(err.msg, strerror(EFBIG)));
	nx_active_release(&a);
	free(spill);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_unions),
		cmocka_unit_test(test_bad_spill_path),
		cmocka_unit_test(test_spill_write_fails),
	};
	return nx_test_done(cmocka_run_group_tests(tests, setup, teardown));
}
