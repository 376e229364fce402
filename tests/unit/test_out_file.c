/* SPDX-License-Identifier: MIT
 * test_out_file.c: the single-output-file rule (common/out_file.h) on real files: a new
 * file appears whole with its mark and the usual permissions; our own file is replaced;
 * a user's file, a symbolic link and a directory are refused (the first two replaced
 * with force, the link's target kept); /dev/null and a FIFO are written in place; an
 * aborted or failed write leaves nothing; a file that appears while we write is kept. */
#include "common/compat.h"
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "common/fsutil.h"
#include "common/out_file.h"
#include "common/xalloc.h"
#include "helper/fixture.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <sys/xattr.h>
#include <unistd.h>

static char *dir;

static char *path_of(const char *name)
{
	return nx_path_join(dir, name);
}

/* The file at path holds exactly text. */
static void assert_file(const char *path, const char *text)
{
	char *t = NULL;
	struct nx_err err = { 0 };

	if (nx_read_file(path, &t, NULL, &err))
		fail_msg("%s", err.msg);
	assert_string_equal(t, text);
	free(t);
}

static void put(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	assert_non_null(f);
	fputs(text, f);
	assert_int_equal(fclose(f), 0);
}

/* No temporary file of ours is left in the test directory. */
static void assert_no_tmp(void)
{
	DIR *d = opendir(dir);
	struct dirent *de;

	assert_non_null(d);
	while ((de = readdir(d)))
		if (strstr(de->d_name, ".tmp-"))
			fail_msg("temporary file left: %s", de->d_name);
	closedir(d);
}

/* Writes text to path through the rule; returns the error code. */
static int write_through(const char *path, bool force, const char *text, struct nx_err *err)
{
	struct nx_out_file f;
	int rc = nx_out_file_open(&f, path, force, err);

	if (rc)
		return rc;
	fputs(text, f.fp);
	return nx_out_file_commit(&f, err);
}

static void test_new_file(void **state)
{
	char *p = path_of("new.json");
	struct nx_err err = { 0 };
	struct stat st;
	char mark[16] = { 0 };

	(void)state;
	umask(022);
	assert_int_equal(nx_out_file_may_write(p, false, &err), 0);
	assert_int_equal(write_through(p, false, "{}\n", &err), 0);
	assert_file(p, "{}\n");
	assert_int_equal(stat(p, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0644);
	if (getxattr(p, NX_OUT_FILE_XATTR, mark, sizeof(mark) - 1) > 0)
		assert_string_equal(mark, "output");
	/* ours: replaced without force */
	assert_int_equal(nx_out_file_may_write(p, false, &err), 0);
	assert_int_equal(write_through(p, false, "[]\n", &err), 0);
	assert_file(p, "[]\n");
	assert_no_tmp();
	free(p);
}

static void test_user_file(void **state)
{
	char *p = path_of("user.json");
	struct nx_err err = { 0 };

	(void)state;
	put(p, "mine\n");
	assert_int_equal(nx_out_file_may_write(p, false, &err), NX_EUSAGE);
	assert_non_null(strstr(err.msg, "user.json' exists and was not written by neuron-explorer"));
	assert_non_null(strstr(err.msg, "--force"));
	assert_int_equal(write_through(p, false, "x", &err), NX_EUSAGE);
	assert_file(p, "mine\n");
	assert_int_equal(write_through(p, true, "forced\n", &err), 0);
	assert_file(p, "forced\n");
	assert_no_tmp();
	free(p);
}

static void test_refused_kinds(void **state)
{
	char *d = path_of("adir"), *target = path_of("target.txt"), *link = path_of("link.json");
	char *deep = path_of("missing/x.json"), *under_file = path_of("target.txt/x.json");
	struct nx_err err = { 0 };
	struct stat st;

	(void)state;
	assert_int_equal(mkdir(d, 0755), 0);
	assert_int_equal(nx_out_file_may_write(d, true, &err), NX_EUSAGE);
	assert_non_null(strstr(err.msg, "is a directory"));
	put(target, "target\n");
	assert_int_equal(symlink("target.txt", link), 0);
	assert_int_equal(nx_out_file_may_write(link, false, &err), NX_EUSAGE);
	assert_non_null(strstr(err.msg, "symbolic link"));
	/* forced: the link is replaced by the file; its target is kept */
	assert_int_equal(write_through(link, true, "new\n", &err), 0);
	assert_int_equal(lstat(link, &st), 0);
	assert_true(S_ISREG(st.st_mode));
	assert_file(target, "target\n");
	assert_int_equal(nx_out_file_may_write(deep, false, &err), NX_EUSAGE);
	assert_non_null(strstr(err.msg, "missing': No such file or directory"));
	assert_int_equal(nx_out_file_may_write(under_file, false, &err), NX_EUSAGE);
	assert_non_null(strstr(err.msg, "Not a directory"));
	assert_int_equal(nx_out_file_may_write("", false, &err), NX_EUSAGE);
	assert_no_tmp();
	free(d);
	free(target);
	free(link);
	free(deep);
	free(under_file);
}

static void test_streams(void **state)
{
	char *fifo = path_of("pipe");
	struct nx_err err = { 0 };
	struct stat st;

	(void)state;
	assert_int_equal(write_through("/dev/null", false, "gone\n", &err), 0);
	assert_int_equal(stat("/dev/null", &st), 0);
	assert_true(S_ISCHR(st.st_mode));
	/* a FIFO is written in place: its reader gets the text */
	assert_int_equal(mkfifo(fifo, 0600), 0);
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		char buf[64] = { 0 };
		FILE *r = fopen(fifo, "r");
		size_t n = r ? fread(buf, 1, sizeof(buf) - 1, r) : 0;
		_exit(n == 5 && !strcmp(buf, "fifo\n") ? 0 : 1);
	}
	assert_int_equal(write_through(fifo, false, "fifo\n", &err), 0);
	int status = 0;
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	assert_int_equal(stat(fifo, &st), 0);
	assert_true(S_ISFIFO(st.st_mode));
	free(fifo);
	assert_int_equal(nx_out_file_may_write("-", false, &err), 0);
	assert_no_tmp();
}

static void test_abort_and_race(void **state)
{
	char *p = path_of("aborted.json"), *q = path_of("raced.json");
	struct nx_out_file f;
	struct nx_err err = { 0 };

	(void)state;
	assert_int_equal(nx_out_file_open(&f, p, false, &err), 0);
	assert_non_null(nx_out_file_tmp(&f));
	fputs("half", f.fp);
	nx_out_file_abort(&f);
	assert_false(nx_is_file(p));
	assert_no_tmp();
	/* someone creates the path while we write: theirs is kept, ours dropped */
	assert_int_equal(nx_out_file_open(&f, q, false, &err), 0);
	fputs("ours\n", f.fp);
	put(q, "theirs\n");
	assert_int_equal(nx_out_file_commit(&f, &err), NX_EUSAGE);
	assert_non_null(strstr(err.msg, "appeared while the output was written"));
	assert_file(q, "theirs\n");
	assert_no_tmp();
	free(p);
	free(q);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_new_file),
		cmocka_unit_test(test_user_file),
		cmocka_unit_test(test_refused_kinds),
		cmocka_unit_test(test_streams),
		cmocka_unit_test(test_abort_and_race),
	};

	dir = nx_test_dir("out_file");
	int rc = cmocka_run_group_tests(tests, NULL, NULL);
	free(dir);
	return rc;
}
