/* SPDX-License-Identifier: MIT
 * onchip_rows.c: the occupancy rows logged until the usage grid is known (see
 * onchip_rows.h). A row is four varints: unit * 2 + mem, then zigzag-encoded its start
 * minus the previous row's start, its end minus its start, and its bytes. The buffer
 * spills whole rows only. */
#include "common/compat.h"
#include "ingest/onchip_rows.h"
#include "common/xalloc.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define IO_BYTES ((size_t)64 << 10)
#define ROW_MAX 40 /* four varints of at most 10 bytes */

static int fail(struct nx_onchip_rows *q, int code, const char *what)
{
	if (!q->rc)
		q->rc = nx_errf(&q->err, code, "occupancy rows spill in '%s': %s: %s", q->dir,
				what, strerror(-code));
	return q->rc;
}

void nx_onchip_rows_init(struct nx_onchip_rows *q, const char *dir)
{
	memset(q, 0, sizeof(*q));
	q->dir = nx_xstrdup(dir);
	q->buf = nx_xmalloc(IO_BYTES);
	q->fd = -1;
}

/* Writes the buffer out and empties it; after an error the rows are dropped (the error
 * is kept for the replay). */
static void flush(struct nx_onchip_rows *q)
{
	const unsigned char *p = q->buf;
	size_t len = q->n;

	q->n = 0;
	if (q->rc)
		return;
	if (q->fd < 0) {
		char *path = nx_xasprintf("%s/.onchip-rows-XXXXXX", q->dir);
		q->fd = mkstemp(path);
		if (q->fd >= 0)
			unlink(path);
		free(path);
		if (q->fd < 0) {
			fail(q, -errno, "cannot create the file");
			return;
		}
	}
	while (len) {
		ssize_t w = write(q->fd, p, len);
		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0) {
			fail(q, -errno, "cannot write");
			return;
		}
		p += w;
		len -= (size_t)w;
		q->spilled += (uint64_t)w;
	}
}

static unsigned char *put(unsigned char *p, uint64_t v)
{
	while (v >= 0x80) {
		*p++ = (unsigned char)(v | 0x80);
		v >>= 7;
	}
	*p++ = (unsigned char)v;
	return p;
}

static uint64_t zig(int64_t v)
{
	return ((uint64_t)v << 1) ^ (uint64_t)(v >> 63);
}

static int64_t unzig(uint64_t v)
{
	return (int64_t)(v >> 1) ^ -(int64_t)(v & 1);
}

void nx_onchip_rows_add(struct nx_onchip_rows *q, int mem, unsigned unit, int64_t start,
			int64_t end, int64_t bytes, int64_t capacity)
{
	if (mem < 0 || mem >= NX_USAGE_NMEM)
		return;
	if (capacity > q->capacity[mem])
		q->capacity[mem] = capacity;
	if (q->n + ROW_MAX > IO_BYTES)
		flush(q);
	unsigned char *p = q->buf + q->n;
	p = put(p, (uint64_t)unit * 2 + (uint64_t)mem);
	p = put(p, zig((int64_t)((uint64_t)start - (uint64_t)q->prev_start)));
	p = put(p, zig((int64_t)((uint64_t)end - (uint64_t)start)));
	p = put(p, zig(bytes));
	q->n = (size_t)(p - q->buf);
	q->prev_start = start;
	q->rows++;
}

/* Reads the next varint at *p (before lim) into *v; false past lim. */
static bool get(const unsigned char **p, const unsigned char *lim, uint64_t *v)
{
	uint64_t x = 0;

	for (unsigned s = 0; *p < lim && s < 64; s += 7) {
		unsigned char b = *(*p)++;
		x |= (uint64_t)(b & 0x7f) << s;
		if (!(b & 0x80)) {
			*v = x;
			return true;
		}
	}
	return false;
}

/* Replays the rows in buf[0, len) and returns the bytes used: every whole row. */
static size_t replay_buf(struct nx_onchip_rows *q, struct nx_onchip_usage *u,
			 const unsigned char *buf, size_t len, int64_t *prev, uint64_t *left)
{
	const unsigned char *p = buf, *lim = buf + len;

	while (*left) {
		const unsigned char *at = p;
		uint64_t mu, ds, de, b;
		if (!get(&p, lim, &mu) || !get(&p, lim, &ds) || !get(&p, lim, &de) ||
		    !get(&p, lim, &b))
			return (size_t)(at - buf);
		int64_t start = (int64_t)((uint64_t)*prev + (uint64_t)unzig(ds));
		int mem = (int)(mu & 1);
		nx_onchip_usage_add(u, mem, (unsigned)(mu >> 1), start,
				    (int64_t)((uint64_t)start + (uint64_t)unzig(de)), unzig(b),
				    q->capacity[mem]);
		*prev = start;
		(*left)--;
	}
	return (size_t)(p - buf);
}

int nx_onchip_rows_replay(struct nx_onchip_rows *q, struct nx_onchip_usage *u,
			  struct nx_err *err)
{
	int64_t prev = 0;
	uint64_t left = q->rows;

	if (q->fd >= 0) {
		/* the file, then what is left in the buffer */
		unsigned char *rb = nx_xmalloc(IO_BYTES);
		size_t have = 0;
		uint64_t off = 0;
		while (!q->rc && off < q->spilled) {
			size_t want = IO_BYTES - have;
			if (want > q->spilled - off)
				want = (size_t)(q->spilled - off);
			ssize_t got = pread(q->fd, rb + have, want, (off_t)off);
			if (got < 0 && errno == EINTR)
				continue;
			if (got <= 0) {
				fail(q, got < 0 ? -errno : -EIO, "cannot read back");
				break;
			}
			off += (uint64_t)got;
			have += (size_t)got;
			size_t used = replay_buf(q, u, rb, have, &prev, &left);
			memmove(rb, rb + used, have - used);
			have -= used;
		}
		if (!q->rc && have)
			fail(q, -EIO, "a row cut short");
		free(rb);
	}
	if (!q->rc && q->n && replay_buf(q, u, q->buf, q->n, &prev, &left) != q->n)
		fail(q, -EIO, "a row cut short");
	if (!q->rc && left)
		fail(q, -EIO, "rows missing");
	if (q->rc && err)
		*err = q->err;
	return q->rc;
}

void nx_onchip_rows_release(struct nx_onchip_rows *q)
{
	if (q->fd >= 0)
		close(q->fd);
	free(q->buf);
	free(q->dir);
	memset(q, 0, sizeof(*q));
	q->fd = -1;
}
