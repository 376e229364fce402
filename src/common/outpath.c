/* SPDX-License-Identifier: MIT
 * outpath.c: the rule for output paths, and the writer of an output file (see
 * outpath.h). */
#include "common/compat.h"
#include "common/outpath.h"
#include "common/fsutil.h"
#include "common/pathlist.h"
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

bool nx_out_same_path(const char *a, const char *b)
{
	struct stat sa, sb;
	char *ra, *rb;
	bool same;

	if (stat(a, &sa) == 0 && stat(b, &sb) == 0)
		return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
	ra = resolve(a);
	rb = resolve(b);
	same = !strcmp(ra, rb);
	free(ra);
	free(rb);
	return same;
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

/* What an output file's path holds, as far as writing it goes. */
enum target { T_ABSENT, T_REPLACE, T_IN_PLACE, T_STDOUT };

/* The directory of a path that does not exist: created with NX_OUT_MAKE_DIR, and it
 * must be a directory we may write in. */
static int check_dir_of(const char *path, unsigned flags, struct nx_err *err)
{
	char *dir = nx_dir_of(path);
	struct stat st;
	int rc = 0;

	if ((flags & NX_OUT_MAKE_DIR) && (rc = nx_mkdirs(dir, err)))
		nx_err_wrap(err, "creating the directory of the output '%s'", path);
	else if (stat(dir, &st) != 0)
		rc = nx_errf(err, -ENOENT, "the directory of the output '%s' does not exist", path);
	else if (!S_ISDIR(st.st_mode))
		rc = nx_errf(err, -ENOTDIR, "the directory of the output '%s' ('%s') is not a "
			     "directory", path, dir);
	else if (access(dir, W_OK | X_OK) != 0)
		rc = nx_errf(err, -errno, "cannot write the output '%s': its directory: %s", path,
			     strerror(errno));
	free(dir);
	return rc;
}

/* Whether the regular file at path holds what kind writes. */
static int recognise(const char *path, const struct nx_out_kind *kind, bool *ours,
		     struct nx_err *err)
{
	uint8_t head[NX_OUT_HEAD];
	size_t n = 0;
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);

	if (fd < 0)
		return nx_errf(err, NX_EUSAGE, "cannot read the existing output '%s' to check what "
			       "it holds: %s", path, strerror(errno));
	while (n < sizeof(head)) {
		ssize_t got = read(fd, head + n, sizeof(head) - n);

		if (got < 0 && errno == EINTR)
			continue;
		if (got <= 0)
			break;
		n += (size_t)got;
	}
	close(fd);
	*ours = kind->ours(head, n);
	return 0;
}

/* Says what path holds and whether the rule lets it be written (0, *t set) or not (the
 * error). */
static int classify(const char *path, const struct nx_out_kind *kind, unsigned flags,
		    enum target *t, struct nx_err *err)
{
	bool stream = flags & NX_OUT_STREAM, ours = false;
	struct stat st, to;
	int rc;

	if (!path || !path[0])
		return nx_errf(err, NX_EUSAGE, "the output file name is empty");
	if (!strcmp(path, "-")) {
		*t = T_STDOUT;
		return stream ? 0 : nx_errf(err, NX_EUSAGE, "'-' (stdout) cannot take %s; give a "
					    "file name", kind->what);
	}
	if (lstat(path, &st) != 0) {
		if (errno != ENOENT && errno != ENOTDIR)
			return nx_errf(err, -errno, "cannot check the output '%s': %s", path,
				       strerror(errno));
		*t = T_ABSENT;
		return check_dir_of(path, flags, err);
	}
	*t = T_IN_PLACE;
	if (S_ISLNK(st.st_mode) && stream && stat(path, &to) == 0 &&
	    (S_ISCHR(to.st_mode) || S_ISFIFO(to.st_mode)))
		return 0;
	if (S_ISLNK(st.st_mode))
		return nx_errf(err, NX_EUSAGE, "the output '%s' is a symbolic link; give the file "
			       "itself or a new path (a link is never replaced nor written "
			       "through)", path);
	if (S_ISDIR(st.st_mode))
		return nx_errf(err, NX_EUSAGE, "the output '%s' is a directory; give the file to "
			       "write (e.g. '%s/%s')", path, path,
			       !strcmp(kind->what, "an NTFF") ? "profile.ntff" : "out");
	if ((S_ISCHR(st.st_mode) || S_ISFIFO(st.st_mode)) && stream)
		return 0;
	if (!S_ISREG(st.st_mode))
		return nx_errf(err, NX_EUSAGE, "the output '%s' exists and is not a regular file",
			       path);
	*t = T_REPLACE;
	if (!(flags & NX_OUT_FORCE) && (rc = recognise(path, kind, &ours, err)))
		return rc;
	if (!ours && !(flags & NX_OUT_FORCE))
		return nx_errf(err, NX_EUSAGE, "the output '%s' exists and is not %s that "
			       "neuron-explorer wrote; give a new file name%s (the file was left "
			       "as it is)", path, kind->what,
			       flags & NX_OUT_CAN_FORCE ? ", or --force to replace it" : "");
	char *dir = nx_dir_of(path);
	rc = access(dir, W_OK | X_OK) == 0 ? 0
		: nx_errf(err, -errno, "cannot replace the output '%s': its directory: %s", path,
			  strerror(errno));
	free(dir);
	return rc;
}

int nx_out_file_check(const char *path, const struct nx_out_kind *kind, unsigned flags,
		      struct nx_err *err)
{
	enum target t;

	return classify(path, kind, flags, &t, err);
}

/* The temporaries being written, for nx_out_file_remove_temporaries(): each is created
 * and listed in one locked step (common/pathlist.h). */
static struct nx_path_list tmps = NX_PATH_LIST_INIT;

static void forget_tmp(const char *tmp)
{
	nx_path_list_lock(&tmps);
	nx_path_list_drop(&tmps, tmp);
	nx_path_list_unlock(&tmps);
}

static void unlink_path(const char *path)
{
	unlink(path);
}

void nx_out_file_remove_temporaries(void)
{
	nx_path_list_lock(&tmps);
	nx_path_list_each(&tmps, unlink_path);
	nx_path_list_unlock(&tmps);
}

static void release(struct nx_out_file *f)
{
	if (f->tmp)
		forget_tmp(f->tmp);
	free(f->path);
	free(f->tmp);
	memset(f, 0, sizeof(*f));
	f->fd = -1;
}

int nx_out_file_open(struct nx_out_file *f, const char *path, const struct nx_out_kind *kind,
		     unsigned flags, struct nx_err *err)
{
	enum target t;
	int rc;

	memset(f, 0, sizeof(*f));
	f->fd = -1;
	if ((rc = classify(path, kind, flags, &t, err)))
		return rc;
	f->path = nx_xstrdup(path);
	f->kind = kind;
	f->flags = flags & ~NX_OUT_MAKE_DIR;
	f->existed = t == T_REPLACE;
	if (t == T_STDOUT) {
		f->fp = stdout;
		f->fd = STDOUT_FILENO;
		return 0;
	}
	if (t == T_IN_PLACE) {
		f->fd = open(path, O_WRONLY | O_CLOEXEC | O_NOCTTY);
		if (f->fd < 0)
			rc = nx_errf(err, -errno, "cannot open the output '%s': %s", path,
				     strerror(errno));
	} else {
		nx_path_list_lock(&tmps);
		if (!(rc = nx_tmp_create(path, &f->tmp, &f->fd, err)))
			nx_path_list_add(&tmps, f->tmp);
		nx_path_list_unlock(&tmps);
	}
	if (!rc && !(f->fp = fdopen(f->fd, "w")))
		rc = nx_errf(err, -errno, "cannot open the output '%s': %s", path, strerror(errno));
	if (rc) {
		if (f->fd >= 0)
			close(f->fd);
		if (f->tmp)
			unlink(f->tmp);
		release(f);
	}
	return rc;
}

/* Puts the complete temporary file at its path, without replacing what the rule keeps
 * and appeared (or changed) while it was written. */
static int place(struct nx_out_file *f, struct nx_err *err)
{
	struct nx_err why = { 0 };
	enum target t;

	if (!f->existed) {
		if (renameat2(AT_FDCWD, f->tmp, AT_FDCWD, f->path, RENAME_NOREPLACE) == 0)
			return 0;
		/* a file system without RENAME_NOREPLACE: a hard link does not replace either */
		if (errno != EEXIST && link(f->tmp, f->path) == 0) {
			unlink(f->tmp);
			return 0;
		}
	}
	if (classify(f->path, f->kind, f->flags, &t, &why))
		return nx_errf(err, why.code, "%s (found when the finished output was to be put "
			       "in place: what is there is kept, and nothing was written)", why.msg);
	if (t != T_ABSENT && t != T_REPLACE)
		return nx_errf(err, NX_EUSAGE, "the output '%s' became a special file while it was "
			       "written; it is kept, and nothing was written", f->path);
	return nx_tmp_commit(f->tmp, f->path, err);
}

int nx_out_file_commit(struct nx_out_file *f, struct nx_err *err)
{
	const char *name = f->tmp ? f->tmp : f->path;
	int rc = 0;

	if (!f->fp) {
		release(f);
		return nx_errf(err, NX_EUSAGE, "the output file is not open");
	}
	if (fflush(f->fp) != 0 || ferror(f->fp))
		rc = nx_errf(err, -errno, "cannot write the output '%s': %s",
			     f->fp == stdout ? "stdout" : name, strerror(errno));
	if (f->fp != stdout && fclose(f->fp) != 0 && !rc)
		rc = nx_errf(err, -errno, "cannot write the output '%s': %s", name,
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
	if (f->fp == stdout)
		fflush(stdout);
	else if (f->fp)
		fclose(f->fp);
	if (f->tmp)
		unlink(f->tmp);
	release(f);
}

int nx_out_file_write(const char *path, const struct nx_out_kind *kind, unsigned flags,
		      const void *data, size_t len, struct nx_err *err)
{
	struct nx_out_file f;
	int rc = nx_out_file_open(&f, path, kind, flags, err);

	if (rc)
		return rc;
	if (fwrite(data, 1, len, f.fp) != len) {
		rc = nx_errf(err, -errno, "cannot write the output '%s': %s",
			     f.tmp ? f.tmp : path, strerror(errno));
		nx_out_file_abort(&f);
		return rc;
	}
	return nx_out_file_commit(&f, err);
}
