/* SPDX-License-Identifier: MIT
 * out_file.c: a single output file written through a temporary sibling and renamed into
 * place, never over a file we did not write (see out_file.h). */
#include "common/compat.h"
#include "common/out_file.h"
#include "common/xalloc.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

#define MARK "output"

/* What a path holds, as far as writing it goes. */
enum target { T_ABSENT, T_STDOUT, T_IN_PLACE, T_REPLACE, T_REFUSED };

static bool ours(const char *path)
{
	char v[sizeof(MARK)];
	ssize_t n = lgetxattr(path, NX_OUT_FILE_XATTR, v, sizeof(v));

	return n == (ssize_t)strlen(MARK) && !memcmp(v, MARK, strlen(MARK));
}

/* The directory part of path ("." when it has none). */
static char *dir_of(const char *path)
{
	const char *slash = strrchr(path, '/');

	if (!slash)
		return nx_xstrdup(".");
	if (slash == path)
		return nx_xstrdup("/");
	return nx_xstrndup(path, (size_t)(slash - path));
}

static int writable_dir(const char *path, struct nx_err *err)
{
	char *dir = dir_of(path);
	struct stat st;
	int rc = 0;

	if (stat(dir, &st) != 0)
		rc = nx_errf(err, NX_EUSAGE, "cannot write '%s': directory '%s': %s", path, dir,
			     strerror(errno));
	else if (!S_ISDIR(st.st_mode))
		rc = nx_errf(err, NX_EUSAGE, "cannot write '%s': '%s' is not a directory", path,
			     dir);
	else if (access(dir, W_OK | X_OK) != 0)
		rc = nx_errf(err, NX_EUSAGE, "cannot write '%s': directory '%s': %s", path, dir,
			     strerror(errno));
	free(dir);
	return rc;
}

static enum target classify(const char *path, bool force, struct nx_err *err)
{
	struct stat st, to;

	if (!strcmp(path, "-"))
		return T_STDOUT;
	if (lstat(path, &st) != 0) {
		if (errno == ENOENT)
			return writable_dir(path, err) ? T_REFUSED : T_ABSENT;
		nx_errf(err, NX_EUSAGE, "cannot write '%s': %s", path, strerror(errno));
		return T_REFUSED;
	}
	if (S_ISLNK(st.st_mode) && stat(path, &to) == 0 &&
	    (S_ISCHR(to.st_mode) || S_ISFIFO(to.st_mode)))
		return T_IN_PLACE;
	if (S_ISCHR(st.st_mode) || S_ISFIFO(st.st_mode))
		return T_IN_PLACE;
	if (S_ISDIR(st.st_mode)) {
		nx_errf(err, NX_EUSAGE, "'%s' is a directory; this output format writes one file: "
			"name a file", path);
		return T_REFUSED;
	}
	if (S_ISLNK(st.st_mode) && !force) {
		nx_errf(err, NX_EUSAGE, "'%s' is a symbolic link; give --force to replace the link "
			"(its target is kept), or name another file", path);
		return T_REFUSED;
	}
	if (S_ISREG(st.st_mode) && !force && !ours(path)) {
		nx_errf(err, NX_EUSAGE, "'%s' exists and was not written by neuron-explorer; give "
			"--force to replace it, or name another file", path);
		return T_REFUSED;
	}
	if (!S_ISREG(st.st_mode) && !S_ISLNK(st.st_mode)) {
		nx_errf(err, NX_EUSAGE, "'%s' is neither a regular file nor a stream to write to",
			path);
		return T_REFUSED;
	}
	return writable_dir(path, err) ? T_REFUSED : T_REPLACE;
}

int nx_out_file_may_write(const char *path, bool force, struct nx_err *err)
{
	if (!path || !path[0])
		return nx_errf(err, NX_EUSAGE, "the output file name is empty");
	return classify(path, force, err) == T_REFUSED ? NX_EUSAGE : 0;
}

/* The process's umask, read without changing it (umask() would race with other threads
 * creating files). */
static mode_t current_umask(void)
{
	FILE *f = fopen("/proc/self/status", "re");
	char line[128];
	unsigned m = 022;

	if (!f)
		return 022;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "Umask: %o", &m) == 1)
			break;
	fclose(f);
	return (mode_t)m;
}

static void release(struct nx_out_file *f)
{
	free(f->path);
	free(f->tmp);
	memset(f, 0, sizeof(*f));
}

int nx_out_file_open(struct nx_out_file *f, const char *path, bool force, struct nx_err *err)
{
	int fd;

	memset(f, 0, sizeof(*f));
	if (!path || !path[0])
		return nx_errf(err, NX_EUSAGE, "the output file name is empty");
	switch (classify(path, force, err)) {
	case T_REFUSED:
		return NX_EUSAGE;
	case T_STDOUT:
		f->fp = stdout;
		f->path = nx_xstrdup(path);
		return 0;
	case T_IN_PLACE:
		if (!(f->fp = fopen(path, "we")))
			return nx_errf(err, -errno, "cannot open '%s': %s", path, strerror(errno));
		f->path = nx_xstrdup(path);
		return 0;
	case T_REPLACE:
		f->existed = true;
		break;
	case T_ABSENT:
		break;
	}
	f->path = nx_xstrdup(path);
	f->force = force;
	f->tmp = nx_xasprintf("%s.tmp-XXXXXX", path);
	fd = mkostemp(f->tmp, O_CLOEXEC);
	if (fd < 0) {
		int rc = nx_errf(err, -errno, "cannot create '%s': %s", f->tmp, strerror(errno));
		release(f);
		return rc;
	}
	/* mkostemp makes 0600; an output file gets the usual permissions */
	(void)fchmod(fd, 0666 & ~current_umask());
	/* the mark that lets a later run replace this file (see out_file.h) */
	(void)fsetxattr(fd, NX_OUT_FILE_XATTR, MARK, strlen(MARK), 0);
	if (!(f->fp = fdopen(fd, "w"))) {
		int rc = nx_errf(err, -errno, "cannot open '%s': %s", f->tmp, strerror(errno));
		close(fd);
		unlink(f->tmp);
		release(f);
		return rc;
	}
	return 0;
}

/* Puts the complete temporary file at its path, without replacing a file that is not
 * ours and appeared meanwhile. */
static int place(struct nx_out_file *f, struct nx_err *err)
{
	struct nx_err why = { 0 };

	if (!f->existed) {
		if (renameat2(AT_FDCWD, f->tmp, AT_FDCWD, f->path, RENAME_NOREPLACE) == 0)
			return 0;
		if (errno != EEXIST && errno != EINVAL && errno != ENOSYS)
			return nx_errf(err, -errno, "cannot rename '%s' to '%s': %s", f->tmp,
				       f->path, strerror(errno));
		if (errno != EEXIST && link(f->tmp, f->path) == 0) {
			unlink(f->tmp);
			return 0;
		}
	}
	/* the path holds something now: replace it only if the rule still allows it */
	if (classify(f->path, f->force, &why) == T_REFUSED)
		return nx_errf(err, NX_EUSAGE, "%s (it appeared while the output was written; it "
			       "is kept and nothing was written)", why.msg);
	if (rename(f->tmp, f->path) != 0)
		return nx_errf(err, -errno, "cannot rename '%s' to '%s': %s", f->tmp, f->path,
			       strerror(errno));
	return 0;
}

int nx_out_file_commit(struct nx_out_file *f, struct nx_err *err)
{
	int rc = 0;

	if (!f->fp)
		return nx_errf(err, NX_EUSAGE, "output file not open");
	if (fflush(f->fp) != 0 || ferror(f->fp))
		rc = nx_errf(err, -errno, "cannot write '%s': %s", f->tmp ? f->tmp : f->path,
			     strerror(errno));
	if (f->fp != stdout && fclose(f->fp) != 0 && !rc)
		rc = nx_errf(err, -errno, "cannot write '%s': %s", f->tmp ? f->tmp : f->path,
			     strerror(errno));
	f->fp = NULL;
	if (!rc && f->tmp)
		rc = place(f, err);
	if (rc && f->tmp)
		unlink(f->tmp);
	release(f);
	return rc;
}

void nx_out_file_abort(struct nx_out_file *f)
{
	if (f->fp && f->fp != stdout)
		fclose(f->fp);
	else if (f->fp)
		fflush(f->fp);
	if (f->tmp)
		unlink(f->tmp);
	release(f);
}
