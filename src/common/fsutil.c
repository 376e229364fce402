/* SPDX-License-Identifier: MIT
 * fsutil.c: file-system helpers (see fsutil.h). */
#include "common/compat.h"
#include "common/fsutil.h"
#include "common/pathlist.h"
#include "common/xalloc.h"

#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
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

int nx_tmp_create(const char *path, char **tmp, int *fd, struct nx_err *err)
{
	char *dir = nx_dir_of(path);
	const char *base = strrchr(path, '/');
	int rc = 0;

	base = base ? base + 1 : path;
	*tmp = NULL;
	*fd = -1;
	for (unsigned i = 0; i < 1000; i++) {
		char *t = nx_xasprintf("%s/.%s.tmp-%d-%u", dir, base, (int)getpid(), i);

		*fd = open(t, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
		if (*fd >= 0) {
			*tmp = t;
			break;
		}
		int e = errno;
		free(t);
		if (e != EEXIST) {
			rc = nx_errf(err, -e, "cannot create a temporary file beside '%s': %s", path,
				     strerror(e));
			break;
		}
	}
	if (!rc && *fd < 0)
		rc = nx_errf(err, -EEXIST, "cannot create a temporary file beside '%s': 1000 "
			     "names taken", path);
	free(dir);
	return rc;
}

int nx_tmp_commit(const char *tmp, const char *path, struct nx_err *err)
{
	if (rename(tmp, path) == 0)
		return 0;
	int e = errno;
	unlink(tmp);
	return nx_errf(err, -e, "cannot replace '%s' (with '%s'): %s", path, tmp, strerror(e));
}

char *nx_dir_of(const char *path)
{
	const char *slash = strrchr(path, '/');

	if (!slash)
		return nx_xstrdup(".");
	if (slash == path)
		return nx_xstrdup("/");
	return nx_xstrndup(path, (size_t)(slash - path));
}

int nx_write_all(int fd, const void *data, size_t len, const char *name, struct nx_err *err)
{
	const uint8_t *p = data;

	while (len) {
		ssize_t n = write(fd, p, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return nx_errf(err, n < 0 ? -errno : -EIO, "cannot write '%s': %s", name,
				       n < 0 ? strerror(errno) : "nothing written");
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

int nx_write_file_atomic(const char *path, const void *data, size_t len, struct nx_err *err)
{
	char *tmp = NULL;
	int fd, rc;

	if ((rc = nx_tmp_create(path, &tmp, &fd, err)))
		return rc;
	rc = nx_write_all(fd, data, len, tmp, err);
	if (close(fd) != 0 && !rc)
		rc = nx_errf(err, -errno, "cannot write '%s': %s", tmp, strerror(errno));
	if (rc)
		unlink(tmp);
	else
		rc = nx_tmp_commit(tmp, path, err);
	free(tmp);
	return rc;
}

int nx_copy_file(const char *from, const char *to, struct nx_err *err)
{
	char buf[65536];
	int in = open(from, O_RDONLY | O_CLOEXEC), out = -1, rc = 0;

	if (in < 0)
		return nx_errf(err, -errno, "cannot open '%s': %s", from, strerror(errno));
	out = open(to, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
	if (out < 0) {
		rc = nx_errf(err, -errno, "cannot create '%s': %s", to, strerror(errno));
		close(in);
		return rc;
	}
	while (!rc) {
		ssize_t n = read(in, buf, sizeof(buf));

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			rc = nx_errf(err, -errno, "cannot read '%s': %s", from, strerror(errno));
		else if (n == 0)
			break;
		else
			rc = nx_write_all(out, buf, (size_t)n, to, err);
	}
	close(in);
	if (close(out) != 0 && !rc)
		rc = nx_errf(err, -errno, "cannot write '%s': %s", to, strerror(errno));
	if (rc)
		unlink(to);
	return rc;
}

int nx_lock_file(const char *path, bool wait, int *fd, struct nx_err *err)
{
	int rc = 0;

	*fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0666);
	if (*fd < 0)
		return nx_errf(err, -errno, "cannot open the lock '%s': %s", path, strerror(errno));
	while (flock(*fd, wait ? LOCK_EX : LOCK_EX | LOCK_NB) != 0) {
		if (errno == EINTR)
			continue;
		/* a file system without locks (NFS without lockd) runs unlocked, as before */
		if (errno == ENOLCK || errno == EOPNOTSUPP)
			break;
		rc = errno == EWOULDBLOCK ? -EBUSY : -errno;
		rc = nx_errf(err, rc, "cannot lock '%s': %s", path,
			     rc == -EBUSY ? "another process holds it" : strerror(-rc));
		close(*fd);
		*fd = -1;
		break;
	}
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

/* The temporary directories made by nx_make_temp_dir and not yet released, for
 * nx_temp_dirs_remove() (the thread that handles the signals ending a command): each is
 * made and listed, or removed and dropped, in one locked step (common/pathlist.h). */
static struct nx_path_list temp_dirs = NX_PATH_LIST_INIT;

int nx_make_temp_dir(const char *tag, char **out, struct nx_err *err)
{
	const char *base = getenv("TMPDIR");
	char *path = nx_xasprintf("%s/nx-%s-XXXXXX", base && *base ? base : "/tmp", tag);
	int rc = 0;

	*out = NULL;
	nx_path_list_lock(&temp_dirs);
	if (mkdtemp(path))
		nx_path_list_add(&temp_dirs, path);
	else
		rc = nx_errf(err, -errno, "cannot create a temporary directory '%s': %s", path,
			     strerror(errno));
	nx_path_list_unlock(&temp_dirs);
	if (rc)
		free(path);
	else
		*out = path;
	return rc;
}

void nx_temp_dir_release(char *path)
{
	struct nx_err ignored = { 0 };

	if (!path)
		return;
	nx_path_list_lock(&temp_dirs);
	nx_remove_tree(path, &ignored);
	nx_path_list_drop(&temp_dirs, path);
	nx_path_list_unlock(&temp_dirs);
	free(path);
}

void nx_temp_dirs_remove(void (*remove)(const char *path))
{
	/* the lock stays held: the process is ending, and no directory may be made or
	 * released from now on */
	nx_path_list_lock(&temp_dirs);
	nx_path_list_each(&temp_dirs, remove);
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
