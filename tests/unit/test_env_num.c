/* SPDX-License-Identifier: MIT
 * test_env_num.c: whole numbers from the environment (common/env_num.h). nx_env_whole:
 * unset and empty leave the value, 0 to max are taken, anything else (words, a sign, a
 * unit, past max, past the range of long long) is an NX_EUSAGE error naming the variable
 * and the value. nx_env_whole_or: the value, or the default with a warning naming the
 * variable. */
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

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_whole),
		cmocka_unit_test(test_whole_or),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
