/* SPDX-License-Identifier: MIT
 * test_fuzz_regress.c: regression tests for what the libFuzzer targets (tests/fuzz)
 * found, one test per finding, each calling the same entry point as its fuzz target
 * and checking the clean error (or result) that the fixed code gives. Under the
 * ASan+UBSan build of scripts/test.sh each of them failed before its fix. */
#include "common/compat.h"
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "kernels/listing.h"
#include "neff/neff.h"

#include <string.h>

#define assert_contains(hay, needle)                                                       \
	do {                                                                              \
		if (!strstr((hay), (needle)))                                             \
			fail_msg("\"%s\" does not contain \"%s\"", (hay), (needle));     \
	} while (0)

/* fuzz_listing: an empty listing (or one without DMA blocks) passed a NULL block
 * array to memcpy while sorting the blocks by engine (listing_asm.c, resolve). */
static void test_listing_without_blocks(void **state)
{
	struct nx_neff neff;
	struct nx_err err = { 0 };
	int rc;
	(void)state;

	rc = nx_listing_assemble("empty.lst", "", 0, &neff, &err);
	if (rc == 0)
		nx_neff_release(&neff);
	else
		assert_contains(err.msg, "empty.lst");
	static const char noblocks[] = "kernel k\nsource k.py\nSync nop\n";
	assert_int_equal(nx_listing_assemble("nb.lst", noblocks, strlen(noblocks), &neff, &err), 0);
	assert_int_equal(neff.nblocks, 0);
	nx_neff_release(&neff);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_listing_without_blocks),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
