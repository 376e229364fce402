/* SPDX-License-Identifier: MIT
 * test_assert.c: NX_ASSERT in the build at hand. Where invariants are checked (NX_ASSERTS:
 * Debug, sanitizer, fuzz, coverage builds) a false condition aborts a child process with
 * "FILE:LINE: FUNCTION: invariant failed: COND" on its stderr; elsewhere the condition is
 * never evaluated. A true condition passes in both. */
#include "common/compat.h"
#include "common/assert.h"

#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

static int evaluated;

/* used: under NDEBUG NX_ASSERT only type-checks its condition, which clang then
 * calls an unneeded function */
__attribute__((used)) static int count_and_fail(void)
{
	evaluated++;
	return 0;
}

static void true_condition_passes(void **state)
{
	int x = 2;

	(void)state;
	NX_ASSERT(x == 2);
	NX_ASSERT(x > 1 && x < 3);
}

/* Runs NX_ASSERT(count_and_fail()) in a child with its stderr on a pipe; returns the
 * child's wait status and what it wrote. */
static int run_failing(char *out, size_t cap)
{
	int fds[2], status = 0;
	size_t len = 0;
	ssize_t n;
	pid_t pid;

	assert_int_equal(pipe(fds), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		close(fds[0]);
		dup2(fds[1], 2);
		NX_ASSERT(count_and_fail());
		_exit(evaluated == 0 ? 0 : 3);
	}
	close(fds[1]);
	while (len + 1 < cap && (n = read(fds[0], out + len, cap - 1 - len)) > 0)
		len += (size_t)n;
	out[len] = '\0';
	close(fds[0]);
	assert_int_equal(waitpid(pid, &status, 0), pid);
	return status;
}

static void false_condition(void **state)
{
	char out[512];
	int status = run_failing(out, sizeof(out));

	(void)state;
#ifdef NX_ASSERTS
	assert_true(WIFSIGNALED(status));
	assert_int_equal(WTERMSIG(status), SIGABRT);
	assert_non_null(strstr(out, "test_assert.c:"));
	assert_non_null(strstr(out, ": run_failing: invariant failed: count_and_fail()"));
#else
	/* compiled out: not evaluated, no output, the program goes on */
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
	assert_string_equal(out, "");
#endif
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(true_condition_passes),
		cmocka_unit_test(false_condition),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
