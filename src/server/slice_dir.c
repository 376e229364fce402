/* SPDX-License-Identifier: MIT
 * slice_dir.c: the marked, locked folder of a profile database's slices, and the sweep of
 * the folders of dead servers (see slice_dir.h). */
#include "common/compat.h"
#include "server/slice_dir.h"
#include "common/fsutil.h"
#include "common/xalloc.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#define TAG "serve-slices"
#define PREFIX "nx-" TAG "-"
#define MARK ".nx-serve-slices"
#define MARK_HEAD "neuron-explorer serve-slices"

/* Process pid's start time (clock ticks since boot, field 22 of /proc/pid/stat); false when
 * there is no such process (or /proc cannot tell). */
static bool proc_start(long pid, unsigned long long *start)
{
	char path[64], buf[1024];
	const char *p;
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%ld/stat", pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return false;
	buf[n] = '\0';
	/* after the command's closing parenthesis: fields 3 (state) to 22 */
	p = strrchr(buf, ')');
	for (int field = 2; p && field < 22; field++)
		p = strchr(p + 1, ' ');
	return p && sscanf(p + 1, "%llu", start) == 1;
}

int nx__slice_dir_make(char **path, int *lock, struct nx_err *err)
{
	unsigned long long start = 0;
	char *tmp, *mark, *text;
	int rc;

	*lock = -1;
	if ((rc = nx_make_temp_dir(TAG, path, err)))
		return rc;
	tmp = nx_path_join(*path, MARK ".tmp");
	mark = nx_path_join(*path, MARK);
	proc_start((long)getpid(), &start);
	text = nx_xasprintf(MARK_HEAD "\npid %ld\nstart %llu\n", (long)getpid(), start);
	*lock = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (*lock < 0)
		rc = nx_errf(err, -errno, "cannot create '%s': %s", tmp, strerror(errno));
	else if (flock(*lock, LOCK_EX | LOCK_NB) != 0 && errno != ENOLCK && errno != EOPNOTSUPP)
		rc = nx_errf(err, -errno, "cannot lock '%s': %s", tmp, strerror(errno));
	else if (write(*lock, text, strlen(text)) != (ssize_t)strlen(text))
		rc = nx_errf(err, -EIO, "cannot write '%s'", tmp);
	else if (rename(tmp, mark) != 0)
		rc = nx_errf(err, -errno, "cannot rename '%s': %s", tmp, strerror(errno));
	free(text);
	free(mark);
	free(tmp);
	if (rc) {
		nx__slice_dir_release(*path, *lock);
		*path = NULL;
		*lock = -1;
	}
	return rc;
}

void nx__slice_dir_release(char *path, int lock)
{
	nx_temp_dir_release(path);
	if (lock >= 0)
		close(lock);
}

/* Whether the mark text names a process that no longer runs. */
static bool owner_gone(const char *text)
{
	long pid = 0;
	unsigned long long start = 0, now = 0;
	size_t head = strlen(MARK_HEAD);

	if (strncmp(text, MARK_HEAD "\n", head + 1) ||
	    sscanf(text + head + 1, "pid %ld\nstart %llu\n", &pid, &start) != 2 || pid <= 0)
		return false; /* not our mark, or one we cannot read: left alone */
	return !proc_start(pid, &now) || now != start;
}

/* Removes dir when it is a dead server's marked folder; true when it did. *failed is set
 * when it should have and could not. */
static bool sweep_one(const char *dir, bool *failed)
{
	char *mark = nx_path_join(dir, MARK), text[256];
	struct nx_err err = { 0 };
	struct stat st;
	bool gone = false;
	ssize_t n;
	int fd;

	*failed = false;
	if (lstat(dir, &st) != 0 || !S_ISDIR(st.st_mode) || st.st_uid != getuid()) {
		free(mark);
		return false;
	}
	fd = open(mark, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	free(mark);
	if (fd < 0)
		return false;
	if (!fstat(fd, &st) && S_ISREG(st.st_mode) && st.st_uid == getuid() &&
	    flock(fd, LOCK_EX | LOCK_NB) == 0 && (n = read(fd, text, sizeof(text) - 1)) > 0) {
		text[n] = '\0';
		gone = owner_gone(text);
	}
	if (gone && nx_remove_tree(dir, &err))
		*failed = true;
	close(fd);
	return gone && !*failed;
}

size_t nx__slice_dirs_sweep(struct nx_strbuf *log)
{
	const char *base = getenv("TMPDIR");
	DIR *d;
	struct dirent *e;
	size_t removed = 0;

	base = base && *base ? base : "/tmp";
	d = opendir(base);
	if (!d)
		return 0;
	while ((e = readdir(d))) {
		char *dir;
		bool failed;

		if (strncmp(e->d_name, PREFIX, strlen(PREFIX)))
			continue;
		dir = nx_path_join(base, e->d_name);
		if (sweep_one(dir, &failed)) {
			removed++;
			nx_strbuf_addf(log, "removed %s, the slices of a server that ended "
				       "without removing them\n", dir);
		} else if (failed) {
			nx_strbuf_addf(log, "cannot remove %s, the slices of a server that ended "
				       "without removing them\n", dir);
		}
		free(dir);
	}
	closedir(d);
	return removed;
}
