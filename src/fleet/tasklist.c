/* SPDX-License-Identifier: MIT
 * tasklist.c: the task lists of a fleet submission (see fleet.h). Line i holds the
 * manifest row of the task that array element (or local task) i runs, then a tab and
 * spaces up to one length for every line. A task finds its row at i times that length:
 * it reads the first line (for the length) and its own, never the whole manifest, so
 * what a task reads stays the same when the run grows (reading the manifest made the
 * tasks of a run read it, together, in the square of its size). */
#include "common/compat.h"
#include "fleet/fleet.h"
#include "common/fsutil.h"
#include "common/strbuf.h"
#include "common/xalloc.h"

#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* A row holds two paths, a member name, an instance and numbers: far less than this. */
#define LINE_MAX_BYTES 16384

int nx_fleet_list_write(const char *path, const struct nx_fleet_plan *p, const size_t *idx,
			size_t n, struct nx_err *err)
{
	struct nx_strbuf rows = NX_STRBUF_INIT, out = NX_STRBUF_INIT;
	size_t *end = nx_xcalloc(n ? n : 1, sizeof(*end)), width = 0;
	int rc;

	for (size_t i = 0; i < n; i++) {
		size_t start = rows.len;

		nx_fleet_row(&rows, idx[i], &p->t[idx[i]]);
		end[i] = rows.len;
		if (end[i] - start + 2 > width)
			width = end[i] - start + 2; /* the row, a tab, the line end */
	}
	if (width > LINE_MAX_BYTES) {
		rc = nx_errf(err, NX_EUSAGE, "'%s': a task's row is %zu bytes long, more than "
			     "the %d a task list holds", path, width, LINE_MAX_BYTES);
		goto out;
	}
	for (size_t i = 0; i < n; i++) {
		size_t start = i ? end[i - 1] : 0, len = end[i] - start;

		nx_strbuf_add(&out, rows.buf + start, len);
		nx_strbuf_addch(&out, '\t');
		for (size_t k = len + 2; k < width; k++)
			nx_strbuf_addch(&out, ' ');
		nx_strbuf_addch(&out, '\n');
	}
	rc = nx_write_file_atomic(path, out.buf ? out.buf : "", out.len, err);
out:
	free(end);
	nx_strbuf_release(&rows);
	nx_strbuf_release(&out);
	return rc;
}

/* The length of every line of the list: that of its first line. */
static int line_width(int fd, const char *path, off_t size, size_t *width, struct nx_err *err)
{
	char *buf = nx_xmalloc(LINE_MAX_BYTES);
	size_t want = size < LINE_MAX_BYTES ? (size_t)size : LINE_MAX_BYTES;
	ssize_t got = pread(fd, buf, want, 0);
	char *nl = got > 0 ? memchr(buf, '\n', (size_t)got) : NULL;
	int rc = 0;

	if (got < 0)
		rc = nx_errf(err, -errno, "cannot read '%s': %s", path, strerror(errno));
	else if (!nl)
		rc = nx_errf(err, NX_ECORRUPT, "'%s': line 1: no line end in its first %zd bytes: "
			     "not a fleet task list", path, got);
	else
		*width = (size_t)(nl - buf) + 1;
	free(buf);
	return rc;
}

int nx_fleet_list_read(const char *path, const char *run, size_t k, struct nx_fleet_task *t,
		       size_t *number, struct nx_err *err)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC), rc;
	size_t width = 0, len;
	struct stat st;
	char *line = NULL;
	ssize_t got;

	memset(t, 0, sizeof(*t));
	if (fd < 0 || fstat(fd, &st) != 0) {
		rc = nx_errf(err, NX_ENOTFOUND, "cannot read the task list '%s': %s", path,
			     strerror(errno));
		goto out;
	}
	if (st.st_size == 0) {
		rc = nx_errf(err, NX_ETRUNC, "'%s': empty file: not a fleet task list", path);
		goto out;
	}
	if ((rc = line_width(fd, path, st.st_size, &width, err)))
		goto out;
	if ((size_t)st.st_size % width) {
		rc = nx_errf(err, NX_ECORRUPT, "'%s': %lld bytes are not whole lines of %zu bytes "
			     "(truncated, or not a fleet task list)", path, (long long)st.st_size,
			     width);
		goto out;
	}
	if (k >= (size_t)st.st_size / width) {
		rc = nx_errf(err, NX_EUSAGE, "'%s' has %zu task(s): there is no line %zu", path,
			     (size_t)st.st_size / width, k + 1);
		goto out;
	}
	line = nx_xmalloc(width + 1);
	got = pread(fd, line, width, (off_t)(k * width));
	if (got != (ssize_t)width) {
		rc = nx_errf(err, got < 0 ? -errno : NX_ETRUNC, "cannot read line %zu of '%s': %s",
			     k + 1, path, got < 0 ? strerror(errno) : "short read");
		goto out;
	}
	line[width] = '\0';
	len = width - 1; /* the line end */
	while (len && line[len - 1] == ' ')
		len--;
	if (line[width - 1] != '\n' || !len || line[len - 1] != '\t' ||
	    memchr(line, '\n', width - 1)) {
		rc = nx_errf(err, NX_ECORRUPT, "'%s': line %zu: not a padded task row", path,
			     k + 1);
		goto out;
	}
	line[len - 1] = '\0';
	rc = nx_fleet_row_parse(run, line, path, k + 1, number, t, err);
out:
	if (fd >= 0)
		close(fd);
	free(line);
	return rc;
}
