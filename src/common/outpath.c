/* SPDX-License-Identifier: MIT
 * outpath.c: the rule for output paths (see outpath.h). */
#include "common/compat.h"
#include "common/outpath.h"
#include "common/fsutil.h"
#include "common/strbuf.h"
#include "common/xalloc.h"

#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Appends the components of rel to abs ("/..."), dropping "." and popping on "..". */
static void append_lexical(struct nx_strbuf *abs, const char *rel)
{
	const char *s = rel;

	while (*s) {
		size_t n = strcspn(s, "/");

		if (n == 0 || (n == 1 && s[0] == '.')) {
			/* nothing */
		} else if (n == 2 && s[0] == '.' && s[1] == '.') {
			char *slash = strrchr(abs->buf, '/');
			if (slash)
				abs->len = slash == abs->buf ? 1 : (size_t)(slash - abs->buf);
			abs->buf[abs->len] = '\0';
		} else {
			if (abs->len > 1)
				nx_strbuf_addch(abs, '/');
			nx_strbuf_add(abs, s, n);
		}
		s += n;
		while (*s == '/')
			s++;
	}
}

/* The absolute form of path: its longest existing prefix resolved (symbolic links
 * followed), the rest appended as written. */
static char *resolve(const char *path)
{
	char *p = nx_xstrdup(path), *real;
	struct nx_strbuf out = NX_STRBUF_INIT;
	size_t rest = strlen(path); /* offset of the part that does not exist */

	/* cut components off the end until what is left exists */
	while (!(real = realpath(*p ? p : ".", NULL))) {
		char *slash = strrchr(p, '/');

		if (!slash) {
			p[0] = '\0';
			rest = 0;
		} else if (slash == p) { /* "/x": "/" always exists */
			real = nx_xstrdup("/");
			rest = 1;
			break;
		} else {
			*slash = '\0';
			rest = (size_t)(slash - p) + 1;
		}
	}
	nx_strbuf_addstr(&out, real);
	append_lexical(&out, path + rest);
	free(real);
	free(p);
	return nx_strbuf_detach(&out, NULL);
}

/* a is b or lies below it */
static bool within(const char *a, const char *b)
{
	size_t n = strlen(b);

	if (!strcmp(b, "/"))
		return true;
	return !strncmp(a, b, n) && (a[n] == '\0' || a[n] == '/');
}

static bool dir_is_empty(const char *path)
{
	DIR *d = opendir(path);
	struct dirent *de;
	bool empty = true;

	if (!d)
		return false;
	while (empty && (de = readdir(d)))
		empty = !strcmp(de->d_name, ".") || !strcmp(de->d_name, "..");
	closedir(d);
	return empty;
}

static bool has_marker(const char *dir)
{
	char *m = nx_path_join(dir, NX_OUT_MARKER);
	struct stat st;
	bool ok = lstat(m, &st) == 0 && S_ISREG(st.st_mode);

	free(m);
	return ok;
}

/* The places no output may be: the current directory and its ancestors, the data path
 * with its ancestors, and the data path's published profiles. */
static int check_place(const char *path, const char *abs, const char *data_path,
		       struct nx_err *err)
{
	char *cwd = realpath(".", NULL);
	int rc = 0;

	if (cwd && within(cwd, abs))
		rc = nx_errf(err, NX_EUSAGE, "the output '%s' is the current directory or holds it; "
			     "give a new directory", path);
	free(cwd);
	if (rc || !data_path)
		return rc;
	char *data = resolve(data_path), *profiles = nx_path_join(data, "profiles");
	if (within(data, abs))
		rc = nx_errf(err, NX_EUSAGE, "the output '%s' is the data path '%s' or holds it; "
			     "give a new directory", path, data_path);
	else if (within(abs, profiles))
		rc = nx_errf(err, NX_EUSAGE, "the output '%s' lies in the data path's profiles "
			     "('%s'), where only profiles are published; give a directory elsewhere",
			     path, profiles);
	free(data);
	free(profiles);
	return rc;
}

int nx_out_dir_check(const char *path, const char *data_path, struct nx_err *err)
{
	struct stat st;
	char *abs;
	int rc;

	if (!path || !path[0])
		return nx_errf(err, NX_EUSAGE, "the output directory is empty; give a path");
	bool exists = lstat(path, &st) == 0;
	if (!exists && errno != ENOENT)
		return nx_errf(err, -errno, "cannot check the output '%s': %s", path,
			       strerror(errno));
	if (exists && S_ISLNK(st.st_mode))
		return nx_errf(err, NX_EUSAGE, "the output '%s' is a symbolic link; give the "
			       "directory itself or a new path", path);
	if (exists && !S_ISDIR(st.st_mode))
		return nx_errf(err, NX_EUSAGE, "the output '%s' exists and is not a directory; "
			       "give a new directory (the file was left as it is)", path);
	abs = resolve(path);
	rc = check_place(path, abs, data_path, err);
	free(abs);
	if (rc || !exists || has_marker(path) || dir_is_empty(path))
		return rc;
	return nx_errf(err, NX_EUSAGE, "the output '%s' already holds files that neuron-explorer "
		       "did not write (it has no " NX_OUT_MARKER " file); give a new or empty "
		       "directory (nothing in '%s' was changed)", path, path);
}

int nx_out_dir_mark(const char *dir, struct nx_err *err)
{
	static const char text[] =
		"This directory was written by neuron-explorer. The next run that writes to the\n"
		"same output path replaces it, with everything in it.\n";
	char *m = nx_path_join(dir, NX_OUT_MARKER);
	int rc = nx_write_file_atomic(m, text, sizeof(text) - 1, err);

	free(m);
	return rc;
}

int nx_out_file_check(const char *path, const char *what, nx_out_kind_fn ours, bool make_dir,
		      struct nx_err *err)
{
	uint8_t head[4096];
	struct stat st;
	ssize_t n;
	int fd, rc = 0;

	if (!path || !path[0])
		return nx_errf(err, NX_EUSAGE, "the output file name is empty");
	if (lstat(path, &st) != 0) {
		char *dir = nx_dir_of(path);

		if (errno != ENOENT && errno != ENOTDIR)
			rc = nx_errf(err, -errno, "cannot check the output '%s': %s", path,
				     strerror(errno));
		else if (make_dir && (rc = nx_mkdirs(dir, err)))
			nx_err_wrap(err, "creating the directory of the output '%s'", path);
		else if (!nx_is_dir(dir))
			rc = nx_errf(err, -ENOENT, "the directory of the output '%s' does not "
				     "exist", path);
		else if (access(dir, W_OK) != 0)
			rc = nx_errf(err, -errno, "cannot write the output '%s': its directory: %s",
				     path, strerror(errno));
		free(dir);
		return rc;
	}
	if (S_ISLNK(st.st_mode))
		return nx_errf(err, NX_EUSAGE, "the output '%s' is a symbolic link; give the file "
			       "itself or a new path", path);
	if (S_ISDIR(st.st_mode))
		return nx_errf(err, NX_EUSAGE, "the output '%s' is a directory; give the file to "
			       "write (e.g. '%s/%s')", path, path,
			       !strcmp(what, "an NTFF") ? "profile.ntff" : "out");
	if (!S_ISREG(st.st_mode))
		return nx_errf(err, NX_EUSAGE, "the output '%s' exists and is not a regular file",
			       path);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return nx_errf(err, NX_EUSAGE, "cannot read the existing output '%s' to check what "
			       "it holds: %s", path, strerror(errno));
	n = read(fd, head, sizeof(head));
	close(fd);
	if (n < 0 || !ours(head, (size_t)n))
		return nx_errf(err, NX_EUSAGE, "the output '%s' exists and is not %s that "
			       "neuron-explorer wrote; give a new file name (the file was left as "
			       "it is)", path, what);
	char *dir = nx_dir_of(path);
	if (access(dir, W_OK) != 0)
		rc = nx_errf(err, -errno, "cannot replace the output '%s': its directory: %s", path,
			     strerror(errno));
	free(dir);
	return rc;
}
