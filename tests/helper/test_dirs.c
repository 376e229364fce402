/* SPDX-License-Identifier: MIT
 * test_dirs.c: new directories for the tests, and their removal once all passed (see
 * test_dirs.h). */
#include "common/compat.h"
#include "helper/test_dirs.h"
#include "common/err.h"
#include "common/fsutil.h"
#include "common/xalloc.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static char **made;
static size_t n_made;

char *nx_test_fresh_dir(const char *prefix, const char *tag)
{
	const char *base = getenv("NX_TEST_TMP");
	struct nx_err err = { 0 };
	char *top, *dir;

	if (!base || !*base)
		base = "/tmp";
	if (nx_mkdirs(base, &err)) {
		fprintf(stderr, "test: %s\n", err.msg);
		return NULL;
	}
	top = nx_xasprintf("%s/%s%s-XXXXXX", base, prefix, tag);
	if (!mkdtemp(top)) {
		fprintf(stderr, "test: cannot make a directory '%s': %s\n", top, strerror(errno));
		free(top);
		return NULL;
	}
	made = nx_xrealloc(made, (n_made + 1) * sizeof(*made));
	made[n_made++] = top;
	dir = nx_path_join(top, tag);
	if (mkdir(dir, 0755) != 0) {
		fprintf(stderr, "test: cannot make a directory '%s': %s\n", dir, strerror(errno));
		free(dir);
		return NULL;
	}
	return dir;
}

int nx_test_done(int failed)
{
	struct nx_err err = { 0 };

	for (size_t i = 0; i < n_made; i++) {
		if (!failed && nx_remove_tree(made[i], &err))
			fprintf(stderr, "test: %s\n", err.msg);
		free(made[i]);
	}
	free(made);
	made = NULL;
	n_made = 0;
	return failed;
}

size_t nx_test_entries(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	size_t n = 0;

	if (!d)
		return (size_t)-1;
	while ((e = readdir(d)))
		n += strcmp(e->d_name, ".") && strcmp(e->d_name, "..");
	closedir(d);
	return n;
}
