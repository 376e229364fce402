/* SPDX-License-Identifier: MIT
 * test_publish_sweep.c: the removal of dead publications' temporaries in a data path
 * (ingest/publish.c) on real directories and processes: a publication removes the
 * temporary of a process that has ended when it was recorded, and its record; it keeps
 * a live process's temporary, another host's, and every file or directory that is not
 * a temporary of ours (in profiles/global and in the records alike), and it does not
 * list profiles/global (an unrecorded dead temporary stays); a server's sweep at start
 * removes that one too, and still nothing else. */
#include "common/compat.h"
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "common/fsutil.h"
#include "common/xalloc.h"
#include "helper/fixture.h"
#include "ingest/ingest.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static char *dir;

static bool exists(const char *fmt, const char *arg)
{
	char *p = nx_xasprintf(fmt, dir, arg);
	struct stat st;
	bool r = lstat(p, &st) == 0;

	free(p);
	return r;
}

/* The temporary of profile name made by a process that has ended now (recorded or
 * not), holding a file; its base name, newly allocated. */
static char *dead_tmp(const char *data, const char *name, bool record)
{
	int fds[2];
	char buf[512] = { 0 };
	pid_t pid;
	int status;

	assert_int_equal(pipe(fds), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		char *tmp = nx_profile_tmp(data, name), *f = nx_path_join(tmp, "Summary.parquet");
		FILE *fp;

		if (record)
			nx_profile_tmp_record(data, tmp);
		if (mkdir(tmp, 0777) || !(fp = fopen(f, "w")))
			_exit(1);
		fputs("x", fp);
		fclose(fp);
		if (write(fds[1], strrchr(tmp, '/') + 1, strlen(strrchr(tmp, '/') + 1)) < 0)
			_exit(1);
		_exit(0);
	}
	close(fds[1]);
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	assert_true(read(fds[0], buf, sizeof(buf) - 1) > 0);
	close(fds[0]);
	return nx_xstrdup(buf);
}

static void test_sweeps(void **state)
{
	char *data = nx_path_join(dir, "dp"), *g = nx_path_join(data, "profiles/global");
	char *recorded, *unrecorded, *live = nx_profile_tmp(data, "live");
	const char *foreign[] = { "notes.txt", "mine@latest", ".mine.tmp-1", ".x@latest.tmp-abc",
				  ".y@latest.tmp-999999@another-host", ".z@latest.tmp-1x" };

	(void)state;
	assert_int_equal(nx_test_sh("mkdir -p '%s/" NX_TMP_RECORDS "' '%s/mine@latest'", g, g), 0);
	recorded = dead_tmp(data, "gone", true);
	unrecorded = dead_tmp(data, "lost", false);
	nx_profile_tmp_record(data, live);
	assert_int_equal(mkdir(live, 0777), 0);
	for (size_t i = 0; i < sizeof(foreign) / sizeof(foreign[0]); i++) {
		/* each in profiles/global, and a record of the same name */
		assert_int_equal(nx_test_sh("touch '%s/%s' '%s/" NX_TMP_RECORDS "/%s'", g,
					    foreign[i], g, foreign[i]), 0);
	}
	assert_true(exists("%s/dp/profiles/global/" NX_TMP_RECORDS "/%s", recorded));

	/* a publication: the recorded dead one goes with its record, nothing else */
	nx_remove_stale_tmp(data);
	assert_false(exists("%s/dp/profiles/global/%s", recorded));
	assert_false(exists("%s/dp/profiles/global/" NX_TMP_RECORDS "/%s", recorded));
	assert_true(exists("%s/dp/profiles/global/%s", unrecorded));
	assert_true(exists("%s/dp/profiles/global/%s", strrchr(live, '/') + 1));
	assert_true(exists("%s/dp/profiles/global/" NX_TMP_RECORDS "/%s", strrchr(live, '/') + 1));
	for (size_t i = 0; i < sizeof(foreign) / sizeof(foreign[0]); i++) {
		assert_true(exists("%s/dp/profiles/global/%s", foreign[i]));
		assert_true(exists("%s/dp/profiles/global/" NX_TMP_RECORDS "/%s", foreign[i]));
	}

	/* a server starting: every dead temporary of this host, nothing else */
	nx_remove_stale_tmp_all(data);
	assert_false(exists("%s/dp/profiles/global/%s", unrecorded));
	assert_true(exists("%s/dp/profiles/global/%s", strrchr(live, '/') + 1));
	for (size_t i = 0; i < sizeof(foreign) / sizeof(foreign[0]); i++)
		assert_true(exists("%s/dp/profiles/global/%s", foreign[i]));

	/* the live one, once published elsewhere and gone, drops its record */
	assert_int_equal(rmdir(live), 0);
	nx_profile_tmp_forget(data, live);
	assert_false(exists("%s/dp/profiles/global/" NX_TMP_RECORDS "/%s", strrchr(live, '/') + 1));
	free(recorded);
	free(unrecorded);
	free(live);
	free(g);
	free(data);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_sweeps),
	};

	dir = nx_test_dir("publish_sweep");
	int rc = cmocka_run_group_tests(tests, NULL, NULL);
	free(dir);
	return nx_test_done(rc);
}
