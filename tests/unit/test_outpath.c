/* SPDX-License-Identifier: MIT
 * test_outpath.c: the output-file rule and writer (common/outpath.h) on real files: a
 * new file appears whole with the usual permissions; a file of the kind (recognised by
 * its content) is replaced; a user's file is refused (replaced with force), a symbolic
 * link and a directory are refused even with force; /dev/null, a FIFO and "-" are
 * written in place only for stream outputs; an aborted or failed write leaves nothing;
 * a user's file that appears while we write is kept, one of the kind is replaced; an
 * interrupted command's temporaries can be removed; and every kind the tool writes is
 * recognised from its first bytes, a user's look-alike not. */
#include "common/compat.h"
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "common/fsutil.h"
#include "common/outpath.h"
#include "common/xalloc.h"
#include "export/json_export.h"
#include "export/perfetto.h"
#include "export/summary_print.h"
#include "helper/fixture.h"
#include "kernels/library.h"
#include "neff/neff.h"
#include "ntff/ntff.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static char *dir;

/* The test's kind: a file starting with "OURS". */
static bool is_ours(const uint8_t *h, size_t n)
{
	return n >= 4 && !memcmp(h, "OURS", 4);
}

static const struct nx_out_kind test_kind = { "a test file", is_ours };

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

/* Writes text to path through the writer; returns the error code. */
static int write_through(const char *path, unsigned flags, const char *text,
			 struct nx_err *err)
{
	struct nx_out_file f;
	int rc = nx_out_file_open(&f, path, &test_kind, flags, err);

	if (rc)
		return rc;
	fputs(text, f.fp);
	return nx_out_file_commit(&f, err);
}

static void test_new_file(void **state)
{
	char *p = path_of("new.out");
	struct nx_err err = { 0 };
	struct stat st;

	(void)state;
	umask(022);
	assert_int_equal(nx_out_file_check(p, &test_kind, 0, &err), 0);
	assert_int_equal(write_through(p, 0, "OURS 1\n", &err), 0);
	assert_file(p, "OURS 1\n");
	assert_int_equal(stat(p, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0644);
	/* of the kind: replaced without force, recognised by its content alone */
	assert_int_equal(nx_out_file_check(p, &test_kind, 0, &err), 0);
	assert_int_equal(write_through(p, 0, "OURS 2\n", &err), 0);
	assert_file(p, "OURS 2\n");
	/* the whole-buffer form */
	assert_int_equal(nx_out_file_write(p, &test_kind, 0, "OURS 3\n", 7, &err), 0);
	assert_file(p, "OURS 3\n");
	assert_no_tmp();
	free(p);
}

static void test_user_file(void **state)
{
	char *p = path_of("user.out");
	struct nx_err err = { 0 };

	(void)state;
	put(p, "mine\n");
	assert_int_equal(nx_out_file_check(p, &test_kind, 0, &err), NX_EUSAGE);
	assert_string_equal(strstr(err.msg, "user.out' exists"),
			    "user.out' exists and is not a test file that neuron-explorer wrote; "
			    "give a new file name (the file was left as it is)");
	assert_int_equal(nx_out_file_check(p, &test_kind, NX_OUT_CAN_FORCE, &err), NX_EUSAGE);
	assert_non_null(strstr(err.msg, "give a new file name, or --force to replace it"));
	assert_int_equal(write_through(p, NX_OUT_CAN_FORCE, "OURS\n", &err), NX_EUSAGE);
	assert_file(p, "mine\n");
	assert_int_equal(write_through(p, NX_OUT_FORCE, "OURS forced\n", &err), 0);
	assert_file(p, "OURS forced\n");
	/* a user's file that cannot be read is refused without force, replaced with it */
	put(p, "secret\n");
	assert_int_equal(chmod(p, 0), 0);
	if (geteuid() != 0) {
		assert_int_equal(nx_out_file_check(p, &test_kind, 0, &err), NX_EUSAGE);
		assert_non_null(strstr(err.msg, "cannot read the existing output"));
	}
	assert_int_equal(write_through(p, NX_OUT_FORCE, "OURS again\n", &err), 0);
	assert_file(p, "OURS again\n");
	assert_no_tmp();
	free(p);
}

static void test_refused_kinds(void **state)
{
	char *d = path_of("adir"), *target = path_of("target.txt"), *link = path_of("link.out");
	char *ours_link = path_of("ours-link.out");
	char *deep = path_of("missing/x.out"), *under_file = path_of("target.txt/x.out");
	struct nx_err err = { 0 };
	struct stat st;

	(void)state;
	assert_int_equal(mkdir(d, 0755), 0);
	assert_int_equal(nx_out_file_check(d, &test_kind, NX_OUT_FORCE, &err), NX_EUSAGE);
	assert_non_null(strstr(err.msg, "adir' is a directory; give the file to write"));
	put(target, "OURS target\n");
	/* a link is refused even with force, even to a file of the kind: neither the link
	 * nor its target changes */
	assert_int_equal(symlink("target.txt", link), 0);
	assert_int_equal(symlink("target.txt", ours_link), 0);
	assert_int_equal(nx_out_file_check(link, &test_kind, 0, &err), NX_EUSAGE);
	assert_non_null(strstr(err.msg, "link.out' is a symbolic link"));
	assert_int_equal(write_through(link, NX_OUT_FORCE | NX_OUT_STREAM, "x", &err), NX_EUSAGE);
	assert_int_equal(lstat(link, &st), 0);
	assert_true(S_ISLNK(st.st_mode));
	assert_file(target, "OURS target\n");
	assert_int_equal(nx_out_file_check(deep, &test_kind, 0, &err), -ENOENT);
	assert_non_null(strstr(err.msg, "the directory of the output '"));
	assert_non_null(strstr(err.msg, "missing/x.out' does not exist"));
	assert_false(nx_is_file(deep));
	assert_int_equal(nx_out_file_check(under_file, &test_kind, NX_OUT_FORCE, &err), -ENOTDIR);
	assert_non_null(strstr(err.msg, "is not a directory"));
	assert_int_equal(nx_out_file_check("", &test_kind, 0, &err), NX_EUSAGE);
	assert_string_equal(err.msg, "the output file name is empty");
	assert_no_tmp();
	free(d);
	free(target);
	free(link);
	free(ours_link);
	free(deep);
	free(under_file);
}

static void test_make_dir(void **state)
{
	char *p = path_of("made/a/b.out"), *top = path_of("made");
	struct nx_err err = { 0 };

	(void)state;
	assert_int_equal(nx_out_file_check(p, &test_kind, NX_OUT_MAKE_DIR, &err), 0);
	assert_true(nx_is_dir(top));
	assert_int_equal(write_through(p, 0, "OURS\n", &err), 0);
	assert_file(p, "OURS\n");
	free(p);
	free(top);
}

static void test_streams(void **state)
{
	char *fifo = path_of("pipe"), *devlink = path_of("null-link");
	struct nx_err err = { 0 };
	struct stat st;

	(void)state;
	/* only a stream output goes to a device, a FIFO or stdout */
	assert_int_equal(write_through("/dev/null", 0, "gone\n", &err), NX_EUSAGE);
	assert_non_null(strstr(err.msg, "'/dev/null' exists and is not a regular file"));
	assert_int_equal(nx_out_file_check("-", &test_kind, 0, &err), NX_EUSAGE);
	assert_non_null(strstr(err.msg, "'-' (stdout) cannot take a test file"));
	assert_int_equal(write_through("/dev/null", NX_OUT_STREAM, "gone\n", &err), 0);
	assert_int_equal(stat("/dev/null", &st), 0);
	assert_true(S_ISCHR(st.st_mode));
	/* a link to a device (as /dev/stdout is) is written through, in place */
	assert_int_equal(symlink("/dev/null", devlink), 0);
	assert_int_equal(write_through(devlink, NX_OUT_STREAM, "gone\n", &err), 0);
	assert_int_equal(lstat(devlink, &st), 0);
	assert_true(S_ISLNK(st.st_mode));
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
	assert_int_equal(write_through(fifo, NX_OUT_STREAM, "fifo\n", &err), 0);
	int status = 0;
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	assert_int_equal(stat(fifo, &st), 0);
	assert_true(S_ISFIFO(st.st_mode));
	assert_int_equal(nx_out_file_check("-", &test_kind, NX_OUT_STREAM, &err), 0);
	assert_no_tmp();
	free(fifo);
	free(devlink);
}

static void test_abort_and_race(void **state)
{
	char *p = path_of("aborted.out"), *q = path_of("raced.out");
	struct nx_out_file f;
	struct nx_err err = { 0 };

	(void)state;
	assert_int_equal(nx_out_file_open(&f, p, &test_kind, 0, &err), 0);
	assert_non_null(nx_out_file_tmp(&f));
	fputs("half", f.fp);
	nx_out_file_abort(&f);
	assert_false(nx_is_file(p));
	assert_no_tmp();
	/* a user's file appears at the path while we write: it is kept, ours dropped */
	assert_int_equal(nx_out_file_open(&f, q, &test_kind, 0, &err), 0);
	fputs("OURS mine\n", f.fp);
	put(q, "theirs\n");
	assert_int_equal(nx_out_file_commit(&f, &err), NX_EUSAGE);
	assert_non_null(strstr(err.msg, "found when the finished output was to be put in place"));
	assert_file(q, "theirs\n");
	assert_no_tmp();
	/* a file of the kind appears (another run writing the same path): replaced */
	unlink(q);
	assert_int_equal(nx_out_file_open(&f, q, &test_kind, 0, &err), 0);
	fputs("OURS last\n", f.fp);
	put(q, "OURS other run\n");
	assert_int_equal(nx_out_file_commit(&f, &err), 0);
	assert_file(q, "OURS last\n");
	/* ours at open, a user's file at commit: kept */
	assert_int_equal(nx_out_file_open(&f, q, &test_kind, 0, &err), 0);
	fputs("OURS next\n", f.fp);
	put(q, "theirs now\n");
	assert_int_equal(nx_out_file_commit(&f, &err), NX_EUSAGE);
	assert_file(q, "theirs now\n");
	assert_no_tmp();
	free(p);
	free(q);
}

/* What the signal thread of the command line does when the command is interrupted. */
static void test_remove_temporaries(void **state)
{
	char *p = path_of("interrupted.out"), *q = path_of("other.out");
	struct nx_out_file f, g;
	struct nx_err err = { 0 };

	(void)state;
	assert_int_equal(nx_out_file_open(&f, p, &test_kind, 0, &err), 0);
	assert_int_equal(nx_out_file_open(&g, q, &test_kind, 0, &err), 0);
	assert_true(nx_is_file(nx_out_file_tmp(&f)) && nx_is_file(nx_out_file_tmp(&g)));
	nx_out_file_remove_temporaries();
	assert_no_tmp();
	assert_false(nx_is_file(p) || nx_is_file(q));
	nx_out_file_abort(&f);
	/* a commit finds its temporary gone and fails, leaving nothing */
	assert_int_not_equal(nx_out_file_commit(&g, &err), 0);
	assert_false(nx_is_file(q));
	nx_out_file_remove_temporaries(); /* nothing open: nothing to do */
	free(p);
	free(q);
}

static bool kind_says(const struct nx_out_kind *k, const char *head)
{
	return k->ours((const uint8_t *)head, strlen(head));
}

/* Each kind the tool writes, from its writer's first bytes; look-alikes refused. */
static void test_kinds(void **state)
{
	const struct nx_out_kind *sj = &nx_summary_json_out_kind, *st = &nx_summary_text_out_kind;
	uint8_t neff[16] = { 2, 0, 0, 0, 0, 0, 0, 0, 0, 4, 0, 0, 0, 0, 0, 0 };

	(void)state;
	assert_true(nx_neff_out_kind.ours(neff, sizeof(neff)));
	neff[9] = 8;
	assert_false(nx_neff_out_kind.ours(neff, sizeof(neff)));
	assert_false(nx_neff_out_kind.ours(neff, 8));
	assert_true(kind_says(&nx_ntff_out_kind, "\x89NTFF\r\n\x1a rest"));
	assert_false(kind_says(&nx_ntff_out_kind, "\x89NTF"));
	assert_true(kind_says(&nx_listing_out_kind, "# k: s\n# generated by 'neuron-explorer "
				   "kernel gen k'\nkernel k\n"));
	assert_false(kind_says(&nx_listing_out_kind, "kernel k\nsource x.py\n"));
	/* summary-json: the nested shape (keys with quotes and braces in strings too), the
	 * flat shape of earlier versions; not total_time as a value, nor at another depth */
	assert_true(kind_says(sj, "{\n  \"k\": {\n    \"total_time\": 1.5,\n"));
	assert_true(kind_says(sj, "{\"a\":{\"x\":\"}\\\"\",\"total_time\" : 2}}"));
	assert_true(kind_says(sj, "{\n  \"total_time\": 0.25,\n  \"x\": 1\n}\n"));
	assert_false(kind_says(sj, "{\"total_time\": 3}"));
	assert_false(kind_says(sj, "{\"k\": \"total_time\", \"v\": {\"a\": 1}}"));
	assert_false(kind_says(sj, "{\"k\": {\"v\": {\"total_time\": 1}}}"));
	assert_false(kind_says(sj, "{\"k\": {\"v\": 1}}, {\"total_time\": 1}"));
	assert_false(kind_says(sj, "[{\"total_time\": 1}]"));
	assert_false(kind_says(sj, ""));
	assert_true(kind_says(st, "total_time                                   1.5\n"));
	assert_true(kind_says(st, "profile_name      a\ntotal_time        1.5\n"));
	assert_false(kind_says(st, "profile_name      a\nnotes\n"));
	assert_true(kind_says(&nx_perfetto_out_kind, "{\"traceEvents\":[\n{\"ph\":\"M\"}"));
	assert_false(kind_says(&nx_perfetto_out_kind, "{\"traceEvents\": []}"));
	assert_true(kind_says(&nx_json_out_kind, "{\"summary\":[\n{\"total_time\":1}"));
	assert_false(kind_says(&nx_json_out_kind, "{\"summary\": \"mine\"}"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_new_file),
		cmocka_unit_test(test_user_file),
		cmocka_unit_test(test_refused_kinds),
		cmocka_unit_test(test_make_dir),
		cmocka_unit_test(test_streams),
		cmocka_unit_test(test_abort_and_race),
		cmocka_unit_test(test_remove_temporaries),
		cmocka_unit_test(test_kinds),
	};

	dir = nx_test_dir("outpath");
	int rc = cmocka_run_group_tests(tests, NULL, NULL);
	free(dir);
	return nx_test_done(rc);
}
