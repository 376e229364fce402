/* SPDX-License-Identifier: MIT
 * test_env_num.c: whole numbers and memory sizes from the environment (common/env_num.h).
 * nx_env_whole: unset and empty leave the value, 0 to max are taken, anything else (words,
 * a sign, a unit, past max, past the range of long long) is an NX_EUSAGE error naming the
 * variable and the value; nx_env_range the same within min..max. nx_env_whole_or: the
 * value, or the default with a warning naming the variable. nx_env_size: a number above
 * zero and a unit DuckDB's memory_limit takes, or an error naming the variable;
 * nx_env_size_or: the value or the default with a warning. */
#include "common/compat.h"
#include "common/env_num.h"
#include "common/log.h"
#include "common/strbuf.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

static struct nx_strbuf lines = NX_STRBUF_INIT;

static void capture(void *arg, enum nx_log_level level, const char *line)
{
	nx_strbuf_addf(&lines, "%s %s\n", nx_log_level_name(level), line);
	(void)arg;
}

static void test_whole(void **state)
{
	static const char *const bad[] = { "x", "-1", "12MB", "101", "1e3",
					   "99999999999999999999999" };
	struct nx_err err = { 0 };
	long long n = 7;

	(void)state;
	unsetenv("NX_TEST_NUM");
	assert_int_equal(nx_env_whole("NX_TEST_NUM", 100, "things", &n, &err), 0);
	assert_int_equal(n, 7);
	setenv("NX_TEST_NUM", "", 1);
	assert_int_equal(nx_env_whole("NX_TEST_NUM", 100, "things", &n, &err), 0);
	assert_int_equal(n, 7);
	setenv("NX_TEST_NUM", "0", 1);
	assert_int_equal(nx_env_whole("NX_TEST_NUM", 100, "things", &n, &err), 0);
	assert_int_equal(n, 0);
	setenv("NX_TEST_NUM", "100", 1);
	assert_int_equal(nx_env_whole("NX_TEST_NUM", 100, "things", &n, &err), 0);
	assert_int_equal(n, 100);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		setenv("NX_TEST_NUM", bad[i], 1);
		n = 3;
		assert_int_equal(nx_env_whole("NX_TEST_NUM", 100, "things", &n, &err), NX_EUSAGE);
		assert_int_equal(n, 3);
		assert_non_null(strstr(err.msg, "NX_TEST_NUM"));
		assert_non_null(strstr(err.msg, "whole number of things from 0 to 100"));
	}
	unsetenv("NX_TEST_NUM");
}

static void test_whole_or(void **state)
{
	(void)state;
	nx_log_set_sink(capture, NULL);
	unsetenv("NX_TEST_NUM");
	assert_int_equal(nx_env_whole_or("NX_TEST_NUM", 100, "things", 42), 42);
	setenv("NX_TEST_NUM", "9", 1);
	assert_int_equal(nx_env_whole_or("NX_TEST_NUM", 100, "things", 42), 9);
	assert_int_equal(lines.len, 0);
	setenv("NX_TEST_NUM", "9 things", 1);
	assert_int_equal(nx_env_whole_or("NX_TEST_NUM", 100, "things", 42), 42);
	assert_non_null(strstr(nx_strbuf_str(&lines), "warn NX_TEST_NUM is '9 things'"));
	assert_non_null(strstr(nx_strbuf_str(&lines), "using 42"));
	nx_log_set_sink(NULL, NULL);
	nx_strbuf_release(&lines);
	unsetenv("NX_TEST_NUM");
}

static void test_range(void **state)
{
	static const char *const bad[] = { "9", "21", "+12", " 12", "12 ", "0x10", "" };
	struct nx_err err = { 0 };
	long long n = 7;

	(void)state;
	setenv("NX_TEST_NUM", "10", 1);
	assert_int_equal(nx_env_range("NX_TEST_NUM", 10, 20, "rows", &n, &err), 0);
	assert_int_equal(n, 10);
	setenv("NX_TEST_NUM", "20", 1);
	assert_int_equal(nx_env_range("NX_TEST_NUM", 10, 20, "rows", &n, &err), 0);
	assert_int_equal(n, 20);
	for (size_t i = 0; i + 1 < sizeof(bad) / sizeof(bad[0]); i++) {
		setenv("NX_TEST_NUM", bad[i], 1);
		n = 3;
		assert_int_equal(nx_env_range("NX_TEST_NUM", 10, 20, "rows", &n, &err), NX_EUSAGE);
		assert_int_equal(n, 3);
		assert_non_null(strstr(err.msg, "NX_TEST_NUM is '"));
		assert_non_null(strstr(err.msg, "whole number of rows from 10 to 20"));
	}
	unsetenv("NX_TEST_NUM");
}

static void test_size(void **state)
{
	static const char *const good[] = { "160MB", "1.5GiB", "1 GB", "2048kb", "4096B",
					    "1TiB", "0.5GB" };
	static const char *const bad[] = { "lots", "12", "0MB", "0.0GB", "-1GB", "1e3MB",
					   "1.GB", ".5GB", "1.5", "MB", "1 GB ", " 1GB",
					   "1 PB", "1GBs", "1 234MB", "100000000000000000000000000MB" };
	struct nx_err err = { 0 };
	const char *v = "x";

	(void)state;
	for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		setenv("NX_TEST_SIZE", good[i], 1);
		v = NULL;
		assert_true(nx_size_text_ok(good[i]));
		assert_int_equal(nx_env_size("NX_TEST_SIZE", &v, &err), 0);
		assert_string_equal(v, good[i]);
	}
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		setenv("NX_TEST_SIZE", bad[i], 1);
		v = "kept";
		if (nx_size_text_ok(bad[i]))
			fail_msg("'%s' taken as a size", bad[i]);
		assert_int_equal(nx_env_size("NX_TEST_SIZE", &v, &err), NX_EUSAGE);
		assert_string_equal(v, "kept");
		assert_non_null(strstr(err.msg, "NX_TEST_SIZE is '"));
		assert_non_null(strstr(err.msg, "give a size such as 160MB"));
	}
	unsetenv("NX_TEST_SIZE");
	assert_int_equal(nx_env_size("NX_TEST_SIZE", &v, &err), 0);
	assert_string_equal(v, "kept");
	setenv("NX_TEST_SIZE", "", 1);
	assert_int_equal(nx_env_size("NX_TEST_SIZE", &v, &err), 0);
	assert_string_equal(v, "kept");
	unsetenv("NX_TEST_SIZE");
}

static void test_size_or(void **state)
{
	(void)state;
	nx_log_set_sink(capture, NULL);
	unsetenv("NX_TEST_SIZE");
	assert_string_equal(nx_env_size_or("NX_TEST_SIZE", "128MB"), "128MB");
	setenv("NX_TEST_SIZE", "64MiB", 1);
	assert_string_equal(nx_env_size_or("NX_TEST_SIZE", "128MB"), "64MiB");
	assert_int_equal(lines.len, 0);
	setenv("NX_TEST_SIZE", "64", 1);
	assert_string_equal(nx_env_size_or("NX_TEST_SIZE", "128MB"), "128MB");
	assert_non_null(strstr(nx_strbuf_str(&lines), "warn NX_TEST_SIZE is '64'"));
	assert_non_null(strstr(nx_strbuf_str(&lines), "using 128MB"));
	nx_log_set_sink(NULL, NULL);
	nx_strbuf_release(&lines);
	unsetenv("NX_TEST_SIZE");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_whole),
		cmocka_unit_test(test_whole_or),
		cmocka_unit_test(test_range),
		cmocka_unit_test(test_size),
		cmocka_unit_test(test_size_or),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
