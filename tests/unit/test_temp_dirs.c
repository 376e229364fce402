/* SPDX-License-Identifier: MIT
 * test_temp_dirs.c: the private temporary directories of common/fsutil: nx_make_temp_dir
 * makes one under $TMPDIR, nx_temp_dir_release removes it whole, and nx_temp_dirs_remove
 * (what a command's signal thread calls) reaches exactly the ones not yet released. */
#include "common/compat.h"
#include "common/err.h"
#include "common/fsutil.h"
#include "common/xalloc.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

static char *seen[8];
static size_t n_seen;

static void record(const char *path)
{
	if (n_seen < 8)
		seen[n_seen++] = nx_xstrdup(path);
}

static bool exists(const char *path)
{
	struct stat st;

	return lstat(path, &st) == 0;
}

static void test_release_and_remove(void **state)
{
	(void)state;
	struct nx_err err = { 0 };
	char base[] = "/tmp/nx-test-temp-dirs-XXXXXX";
	char *a = NULL, *b = NULL, *file;
	FILE *f;

	assert_non_null(mkdtemp(base));
	setenv("TMPDIR", base, 1);
	assert_int_equal(nx_make_temp_dir("t", &a, &err), 0);
	assert_int_equal(nx_make_temp_dir("t", &b, &err), 0);
	assert_int_equal(strncmp(a, base, strlen(base)), 0);
	assert_string_not_equal(a, b);
	/* released: removed whole, its contents included, and forgotten */
	file = nx_path_join(a, "spill.bin");
	assert_non_null(f = fopen(file, "w"));
	fclose(f);
	free(file);
	char *a_path = nx_xstrdup(a);
	nx_temp_dir_release(a);
	assert_false(exists(a_path));
	/* the one left is what the signal thread removes */
	nx_temp_dirs_remove(record);
	assert_int_equal(n_seen, 1);
	assert_string_equal(seen[0], b);
	assert_true(exists(b));
	rmdir(b);
	rmdir(base);
	free(seen[0]);
	free(a_path);
	free(b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_release_and_remove),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
