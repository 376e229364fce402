/* SPDX-License-Identifier: MIT
 * ext_sort.c: external merge sort of fixed-size records (see ext_sort.h). */
#include "common/compat.h"
#include "common/ext_sort.h"
#include "common/xalloc.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define IO_BYTES ((size_t)64 << 10)

struct nx_xsort_run {
	int fd;
	uint64_t count; /* records in the file */
	uint64_t next;  /* the next record of the file to read into buf */
	char *buf;      /* records [pos, n) of buf are still to merge */
	size_t n, pos;
};

static int fail(struct nx_xsort *s, int code, const char *what, struct nx_err *err)
{
	if (!s->rc) {
		s->rc = nx_errf(&s->err, code, "sort spill in '%s': %s: %s", s->dir, what,
				strerror(-code));
	}
	if (err)
		*err = s->err;
	return s->rc;
}

void nx_xsort_init(struct nx_xsort *s, const char *dir, size_t size, nx_xsort_cmp cmp,
		   size_t mem_bytes)
{
	memset(s, 0, sizeof(*s));
	s->dir = nx_xstrdup(dir);
	s->size = size;
	s->cmp = cmp;
	s->cap = mem_bytes / size ? mem_bytes / size : 1;
	s->buf = nx_xmalloc(s->cap * size);
}

static int new_file(struct nx_xsort *s, int *fd, struct nx_err *err)
{
	char *path = nx_xasprintf("%s/.xsort-XXXXXX", s->dir);

	*fd = mkstemp(path);
	if (*fd >= 0)
		unlink(path);
	free(path);
	return *fd < 0 ? fail(s, -errno, "cannot create a run", err) : 0;
}

static int write_all(struct nx_xsort *s, int fd, const char *p, size_t len, struct nx_err *err)
{
	while (len) {
		ssize_t w = write(fd, p, len);
		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0)
			return fail(s, -errno, "cannot write a run", err);
		p += w;
		len -= (size_t)w;
	}
	return 0;
}

/* Reads the run's next records into its buffer (r->n = 0 at the end of the file). */
static int run_fill(struct nx_xsort *s, struct nx_xsort_run *r, struct nx_err *err)
{
	size_t per = IO_BYTES / s->size ? IO_BYTES / s->size : 1;
	uint64_t left = r->count - r->next;
	size_t want = (left < per ? (size_t)left : per) * s->size, got = 0;

	if (!r->buf)
		r->buf = nx_xmalloc(per * s->size);
	while (got < want) {
		ssize_t n = pread(r->fd, r->buf + got, want - got,
				  (off_t)(r->next * s->size + got));
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return fail(s, n < 0 ? -errno : -EIO, "cannot read a run back", err);
		got += (size_t)n;
	}
	r->next += want / s->size;
	r->n = want / s->size;
	r->pos = 0;
	return 0;
}

static const void *peek(const struct nx_xsort *s, size_t run)
{
	const struct nx_xsort_run *r = &s->runs[run];
	return r->buf + r->pos * s->size;
}

/* Heap order: the smaller record, then the earlier run. */
static bool before(const struct nx_xsort *s, size_t a, size_t b)
{
	int c = s->cmp(peek(s, a), peek(s, b));
	return c < 0 || (c == 0 && a < b);
}

static void sift_down(struct nx_xsort *s, size_t i)
{
	for (;;) {
		size_t l = 2 * i + 1, m = i;
		if (l < s->nheap && before(s, s->heap[l], s->heap[m]))
			m = l;
		if (l + 1 < s->nheap && before(s, s->heap[l + 1], s->heap[m]))
			m = l + 1;
		if (m == i)
			return;
		size_t t = s->heap[i];
		s->heap[i] = s->heap[m];
		s->heap[m] = t;
		i = m;
	}
}

/* Starts merging every run: fills their buffers and builds the heap. */
static int merge_start(struct nx_xsort *s, struct nx_err *err)
{
	int rc;

	free(s->heap);
	s->heap = nx_xcalloc(s->nruns ? s->nruns : 1, sizeof(*s->heap));
	s->nheap = 0;
	for (size_t i = 0; i < s->nruns; i++) {
		if ((rc = run_fill(s, &s->runs[i], err)))
			return rc;
		if (s->runs[i].n)
			s->heap[s->nheap++] = i;
	}
	for (size_t i = s->nheap / 2; i-- > 0;)
		sift_down(s, i);
	return 0;
}

/* Pops the smallest record into rec: 1, or 0 when every run is drained. */
static int merge_pop(struct nx_xsort *s, void *rec, struct nx_err *err)
{
	if (!s->nheap)
		return 0;
	size_t top = s->heap[0];
	struct nx_xsort_run *r = &s->runs[top];
	int rc;

	memcpy(rec, peek(s, top), s->size);
	if (++r->pos == r->n && (rc = run_fill(s, r, err)))
		return rc;
	if (!r->n)
		s->heap[0] = s->heap[--s->nheap];
	sift_down(s, 0);
	return 1;
}

static void close_runs(struct nx_xsort *s)
{
	for (size_t i = 0; i < s->nruns; i++) {
		close(s->runs[i].fd);
		free(s->runs[i].buf);
	}
	s->nruns = 0;
}

/* Merges every run into one (so that no more than NX_XSORT_FANIN are ever open). */
static int merge_all(struct nx_xsort *s, struct nx_err *err)
{
	char *out = nx_xmalloc(IO_BYTES + s->size);
	size_t fill = 0;
	uint64_t total = 0;
	int fd, rc;

	if ((rc = new_file(s, &fd, err))) {
		free(out);
		return rc;
	}
	rc = merge_start(s, err);
	while (!rc && (rc = merge_pop(s, out + fill, err)) == 1) {
		rc = 0;
		fill += s->size;
		total++;
		if (fill >= IO_BYTES) {
			rc = write_all(s, fd, out, fill, err);
			fill = 0;
		}
	}
	if (!rc && fill)
		rc = write_all(s, fd, out, fill, err);
	free(out);
	close_runs(s);
	if (rc) {
		close(fd);
		return rc;
	}
	s->runs[0] = (struct nx_xsort_run){ .fd = fd, .count = total };
	s->nruns = 1;
	s->spilled += total;
	return 0;
}

/* Sorts the buffer and writes it as a run. */
static int spill(struct nx_xsort *s, struct nx_err *err)
{
	int fd, rc;

	qsort(s->buf, s->n, s->size, s->cmp);
	if ((rc = new_file(s, &fd, err)))
		return rc;
	if ((rc = write_all(s, fd, s->buf, s->n * s->size, err))) {
		close(fd);
		return rc;
	}
	if (!s->runs)
		s->runs = nx_xcalloc(NX_XSORT_FANIN, sizeof(*s->runs));
	s->runs[s->nruns++] = (struct nx_xsort_run){ .fd = fd, .count = s->n };
	s->spilled += s->n;
	s->n = 0;
	return s->nruns == NX_XSORT_FANIN ? merge_all(s, err) : 0;
}

int nx_xsort_add(struct nx_xsort *s, const void *rec, struct nx_err *err)
{
	int rc;

	if (s->rc)
		return fail(s, s->rc, "", err);
	if (s->n == s->cap && (rc = spill(s, err)))
		return rc;
	memcpy(s->buf + s->n * s->size, rec, s->size);
	s->n++;
	s->count++;
	return 0;
}

int nx_xsort_finish(struct nx_xsort *s, struct nx_err *err)
{
	int rc;

	if (s->rc)
		return fail(s, s->rc, "", err);
	s->finished = true;
	if (!s->nruns) {
		qsort(s->buf, s->n, s->size, s->cmp);
		return 0;
	}
	if (s->n && (rc = spill(s, err)))
		return rc;
	free(s->buf);
	s->buf = NULL;
	return merge_start(s, err);
}

int nx_xsort_next(struct nx_xsort *s, void *rec, struct nx_err *err)
{
	if (s->rc)
		return fail(s, s->rc, "", err);
	if (!s->nruns) {
		if (s->pos == s->n)
			return 0;
		memcpy(rec, s->buf + s->pos++ * s->size, s->size);
		return 1;
	}
	return merge_pop(s, rec, err);
}

void nx_xsort_release(struct nx_xsort *s)
{
	close_runs(s);
	free(s->runs);
	free(s->heap);
	free(s->buf);
	free(s->dir);
	memset(s, 0, sizeof(*s));
}
