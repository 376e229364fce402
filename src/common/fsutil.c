/* SPDX-License-Identifier: MIT
 * fsutil.c: file-system helpers (see fsutil.h). */
#include "common/compat.h"
#include "common/fsutil.h"
#include "common/xalloc.h"

#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int nx_read_file(const char *path, char **data, size_t *len, struct nx_err *err)
{
	FILE *f = fopen(path, "rb");
	char *buf = NULL;
	size_t cap = 0, n = 0;

	if (!f)
		return nx_errf(err, -errno, "cannot open '%s': %s", path, strerror(errno));
	for (;;) {
		if (cap - n < 65536) {
			cap = cap ? cap * 2 : 65536;
			buf = nx_xrealloc(buf, cap + 1);
		}
		size_t got = fread(buf + n, 1, cap - n, f);
		n += got;
		if (got == 0)
			break;
	}
	if (ferror(f)) {
		int e = errno;
		fclose(f);
		free(buf);
		return nx_errf(err, -e, "cannot read '%s': %s", path, strerror(e));
	}
	fclose(f);
	buf[n] = '\0';
	*data = buf;
	if (len)
		*len = n;
	return 0;
}

int nx_write_file_atomic(const char *path, const void *data, size_t len, struct nx_err *err)
{
	char *tmp = nx_xasprintf("%s.tmp.%d", path, (int)getpid());
	FILE *f = fopen(tmp, "wb");
	int rc = 0;

	if (!f) {
		rc = nx_errf(err, -errno, "cannot create '%s': %s", tmp, strerror(errno));
		goto out;
	}
	if (len && fwrite(data, 1, len, f) != len) {
		rc = nx_errf(err, -EIO, "cannot write '%s': %s", tmp, strerror(errno));
		fclose(f);
		unlink(tmp);
		goto out;
	}
	if (fclose(f) != 0) {
		rc = nx_errf(err, -EIO, "cannot write '%s': %s", tmp, strerror(errno));
		unlink(tmp);
		goto out;
	}
	if (rename(tmp, path) != 0) {
		rc = nx_errf(err, -errno, "cannot rename '%s' to '%s': %s", tmp, path,
			     strerror(errno));
		unlink(tmp);
	}
out:
	free(tmp);
	return rc;
}

int nx_mkdirs(const char *path, struct nx_err *err)
{
	char *p = nx_xstrdup(path);
	int rc = 0;

	for (char *s = p + 1; ; s++) {
		if (*s == '/' || *s == '\0') {
			char c = *s;
			*s = '\0';
			if (mkdir(p, 0755) != 0 && errno != EEXIST) {
				rc = nx_errf(err, -errno, "cannot create directory '%s': %s", p,
					     strerror(errno));
				break;
			}
			*s = c;
			if (!c)
				break;
		}
	}
	if (!rc && !nx_is_dir(path))
		rc = nx_errf(err, -ENOTDIR, "'%s' exists and is not a directory", path);
	free(p);
	return rc;
}

int nx_remove_tree(const char *path, struct nx_err *err)
{
	struct stat st;
	DIR *d;
	struct dirent *de;
	int rc = 0;

	if (lstat(path, &st) != 0)
		return errno == ENOENT ? 0 : nx_errf(err, -errno, "cannot stat '%s'", path);
	if (!S_ISDIR(st.st_mode)) {
		if (unlink(path) != 0)
			return nx_errf(err, -errno, "cannot remove '%s': %s", path, strerror(errno));
		return 0;
	}
	d = opendir(path);
	if (!d)
		return nx_errf(err, -errno, "cannot open directory '%s'", path);
	while (!rc && (de = readdir(d))) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		char *child = nx_path_join(path, de->d_name);
		rc = nx_remove_tree(child, err);
		free(child);
	}
	closedir(d);
	if (!rc && rmdir(path) != 0)
		rc = nx_errf(err, -errno, "cannot remove directory '%s': %s", path, strerror(errno));
	return rc;
}

bool nx_is_dir(const char *path)
{
	struct stat st;
	return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

bool nx_is_file(const char *path)
{
	struct stat st;
	return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

char *nx_path_join(const char *a, const char *b)
{
	size_t la = strlen(a);
	if (la && a[la - 1] == '/')
		return nx_xasprintf("%s%s", a, b);
	return nx_xasprintf("%s/%s", a, b);
}

char *nx_expand_home(const char *path)
{
	const char *home = getenv("HOME");
	if (path[0] == '~' && (path[1] == '/' || path[1] == '\0') && home)
		return nx_xasprintf("%s%s", home, path + 1);
	return nx_xstrdup(path);
}
