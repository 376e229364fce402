/* SPDX-License-Identifier: MIT
 * test_ctx_drop.c: what the ingest context's drops free is read only through accessors
 * that check it was not dropped (src/ingest/context.h): after nx_ctx_drop_statics, the
 * statics and the debug info; after nx_ctx_drop_neff, the NEFF and the operands too. A
 * read after its drop aborts a child process with the invariant's report. The accessors
 * are inline, so this file compiles them with NX_ASSERTS whatever the build (which the
 * build's own NX_ASSERTS turns on in the library's readers, debug and sanitizer builds). */
#include "common/compat.h"
#ifndef NX_ASSERTS
#define NX_ASSERTS 1
#endif
#include "ingest/context.h"

#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

enum read_what { READ_NEFF, READ_OPERANDS, READ_DBG, READ_STATICS };

/* Reads `what` of c in a child with its stderr on a pipe: the child's wait status, and
 * what it wrote in out. */
static int read_in_child(const struct nx_ingest_ctx *c, enum read_what what, char *out,
			 size_t cap)
{
	int fds[2], status = 0;
	size_t len = 0;
	ssize_t n;
	pid_t pid;

	assert_int_equal(pipe(fds), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		const void *p = NULL;
		close(fds[0]);
		dup2(fds[1], 2);
		switch (what) {
		case READ_NEFF: p = nx_ctx_neff(c); break;
		case READ_OPERANDS: p = nx_ctx_operands(c, 0); break;
		case READ_DBG: p = nx_ctx_dbg(c); break;
		case READ_STATICS: p = nx_ctx_statics(c, 0); break;
		}
		(void)p;
		_exit(0);
	}
	close(fds[1]);
	while (len + 1 < cap && (n = read(fds[0], out + len, cap - 1 - len)) > 0)
		len += (size_t)n;
	out[len] = '\0';
	close(fds[0]);
	assert_int_equal(waitpid(pid, &status, 0), pid);
	return status;
}

static void expect_read(const struct nx_ingest_ctx *c, enum read_what what, bool allowed)
{
	char out[512];
	int status = read_in_child(c, what, out, sizeof(out));

	if (allowed) {
		assert_true(WIFEXITED(status));
		assert_int_equal(WEXITSTATUS(status), 0);
		assert_string_equal(out, "");
	} else {
		assert_true(WIFSIGNALED(status));
		assert_int_equal(WTERMSIG(status), SIGABRT);
		assert_non_null(strstr(out, "invariant failed: !c->"));
		assert_non_null(strstr(out, "_dropped"));
	}
}

static void test_reads_after_drops_fail(void **state)
{
	struct nx_ingest_ctx c;

	(void)state;
	memset(&c, 0, sizeof(c));
	for (int w = READ_NEFF; w <= READ_STATICS; w++)
		expect_read(&c, (enum read_what)w, true);
	nx_ctx_drop_statics(&c);
	expect_read(&c, READ_NEFF, true);
	expect_read(&c, READ_OPERANDS, true);
	expect_read(&c, READ_DBG, false);
	expect_read(&c, READ_STATICS, false);
	nx_ctx_drop_neff(&c);
	for (int w = READ_NEFF; w <= READ_STATICS; w++)
		expect_read(&c, (enum read_what)w, false);
	nx_ctx_release(&c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_reads_after_drops_fail),
	};
	return cmocka_run_group_tests_name("ctx_drop", tests, NULL, NULL);
}
