/* SPDX-License-Identifier: MIT
 * input.c: plain or gzip trace bytes as one decompressed stream (see input.h). */
#include "common/compat.h"
#include "trace/input.h"
#include "common/xalloc.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#define RAW_WINDOW (256 * 1024)
#define AHEAD_WINDOWS 4               /* inflated windows the thread may hold ready */
#define AHEAD_WINDOW (256 * 1024)

/* The inflating thread and the windows it filled. The thread alone touches the
 * stream's zlib state and raw window once it runs; everything below mu is guarded. */
struct nx_tin_ahead {
	pthread_t thread;
	pthread_mutex_t mu;
	pthread_cond_t ready, room;
	unsigned char *win[AHEAD_WINDOWS];
	size_t len[AHEAD_WINDOWS];
	size_t head, count, taken; /* taken: bytes of the head window already read */
	bool done;                 /* the thread has ended: rc and err are final */
	bool stop;                 /* the reader is closing: the thread must end */
	int rc;
	struct nx_err err;
};

static long read_gz(struct nx_tin *in, unsigned char *buf, size_t cap, struct nx_err *err);
static int ahead_start(struct nx_tin *in);

/* Moves more compressed (or plain) bytes into the raw window. */
static int fill_raw(struct nx_tin *in, struct nx_err *err)
{
	if (in->raw_pos < in->raw_len || in->raw_eof)
		return 0;
	in->raw_pos = 0;
	if (in->mem) {
		size_t n = in->mem_len - in->mem_pos;
		if (n > RAW_WINDOW)
			n = RAW_WINDOW;
		memcpy(in->raw, in->mem + in->mem_pos, n);
		in->mem_pos += n;
		in->raw_len = n;
	} else {
		in->raw_len = fread(in->raw, 1, RAW_WINDOW, in->fp);
		if (in->raw_len == 0 && ferror(in->fp))
			return nx_errf(err, -EIO, "cannot read '%s': %s", in->path,
				       strerror(errno));
	}
	in->raw_read += in->raw_len;
	if (in->raw_len == 0)
		in->raw_eof = true;
	return 0;
}

static int start(struct nx_tin *in, struct nx_err *err)
{
	int rc;

	in->raw = nx_xmalloc(RAW_WINDOW);
	rc = fill_raw(in, err);
	if (rc)
		return rc;
	in->gz = in->raw_len >= 2 && in->raw[0] == 0x1f && in->raw[1] == 0x8b;
	if (!in->gz)
		return 0;
	z_stream *z = nx_xcalloc(1, sizeof(*z));
	if (inflateInit2(z, 15 + 16) != Z_OK) {
		free(z);
		return nx_errf(err, NX_ECORRUPT, "'%s': cannot start gzip decoding", in->path);
	}
	in->z = z;
	ahead_start(in); /* without a thread, the reader inflates itself */
	return 0;
}

int nx_tin_open(struct nx_tin *in, const char *path, struct nx_err *err)
{
	memset(in, 0, sizeof(*in));
	in->path = path;
	in->fp = fopen(path, "rb");
	if (!in->fp)
		return nx_errf(err, -errno, "cannot open '%s': %s", path, strerror(errno));
	return start(in, err);
}

int nx_tin_open_mem(struct nx_tin *in, const void *buf, size_t len, const char *name,
		    struct nx_err *err)
{
	memset(in, 0, sizeof(*in));
	in->path = name;
	in->mem = buf;
	in->mem_len = len;
	return start(in, err);
}

static long read_plain(struct nx_tin *in, unsigned char *buf, size_t cap, struct nx_err *err)
{
	int rc = fill_raw(in, err);
	size_t n;

	if (rc)
		return rc;
	n = in->raw_len - in->raw_pos;
	if (n > cap)
		n = cap;
	memcpy(buf, in->raw + in->raw_pos, n);
	in->raw_pos += n;
	return (long)n;
}

/* Inflates into buf. A member ends with Z_STREAM_END; when more input follows, the
 * decoder is reset for the next member. The end of the file is clean only between
 * members. */
static long read_gz(struct nx_tin *in, unsigned char *buf, size_t cap, struct nx_err *err)
{
	z_stream *z = in->z;
	int rc;

	z->next_out = buf;
	z->avail_out = (uInt)cap;
	while (z->avail_out == cap) {
		if ((rc = fill_raw(in, err)))
			return rc;
		if (in->raw_eof) {
			if (!in->member_open)
				return 0;
			return nx_errf(err, NX_ETRUNC,
				       "'%s': the gzip stream ends early (after %" PRIu64
				       " compressed bytes)", in->path, in->raw_read);
		}
		z->next_in = in->raw + in->raw_pos;
		z->avail_in = (uInt)(in->raw_len - in->raw_pos);
		in->member_open = true;
		rc = inflate(z, Z_NO_FLUSH);
		in->raw_pos = in->raw_len - z->avail_in;
		if (rc == Z_STREAM_END) {
			in->member_open = false;
			inflateReset(z);
			continue;
		}
		if (rc != Z_OK && rc != Z_BUF_ERROR)
			return nx_errf(err, NX_ECORRUPT,
				       "'%s': corrupt gzip data near compressed byte %" PRIu64 ": %s",
				       in->path, in->raw_read - (in->raw_len - in->raw_pos),
				       z->msg ? z->msg : "inflate failed");
	}
	return (long)(cap - z->avail_out);
}

/* ---- the inflating thread ---------------------------------------------------------- */

static void *ahead_main(void *arg)
{
	struct nx_tin *in = arg;
	struct nx_tin_ahead *a = in->ahead;
	struct nx_err err = { 0 };
	size_t slot = 0;

	for (;;) {
		pthread_mutex_lock(&a->mu);
		while (a->count == AHEAD_WINDOWS && !a->stop)
			pthread_cond_wait(&a->room, &a->mu);
		bool stop = a->stop;
		slot = (a->head + a->count) % AHEAD_WINDOWS;
		pthread_mutex_unlock(&a->mu);
		/* The slot is free: the reader only touches windows already counted. */
		long n = stop ? 0 : read_gz(in, a->win[slot], AHEAD_WINDOW, &err);
		pthread_mutex_lock(&a->mu);
		if (n <= 0 || a->stop) {
			a->rc = n < 0 ? (int)n : 0;
			a->err = err;
			a->done = true;
			pthread_cond_signal(&a->ready);
			pthread_mutex_unlock(&a->mu);
			return NULL;
		}
		a->len[slot] = (size_t)n;
		a->count++;
		pthread_cond_signal(&a->ready);
		pthread_mutex_unlock(&a->mu);
	}
}

static void ahead_free(struct nx_tin_ahead *a)
{
	for (size_t i = 0; i < AHEAD_WINDOWS; i++)
		free(a->win[i]);
	pthread_cond_destroy(&a->room);
	pthread_cond_destroy(&a->ready);
	pthread_mutex_destroy(&a->mu);
	free(a);
}

/* Starts the thread; 0, or -1 when it could not start (the reader then inflates). */
static int ahead_start(struct nx_tin *in)
{
	struct nx_tin_ahead *a = nx_xcalloc(1, sizeof(*a));

	for (size_t i = 0; i < AHEAD_WINDOWS; i++)
		a->win[i] = nx_xmalloc(AHEAD_WINDOW);
	pthread_mutex_init(&a->mu, NULL);
	pthread_cond_init(&a->ready, NULL);
	pthread_cond_init(&a->room, NULL);
	in->ahead = a;
	if (pthread_create(&a->thread, NULL, ahead_main, in)) {
		in->ahead = NULL;
		ahead_free(a);
		return -1;
	}
	return 0;
}

/* Copies from the windows the thread filled; its error comes after its last window. */
static long read_ahead(struct nx_tin *in, unsigned char *buf, size_t cap, struct nx_err *err)
{
	struct nx_tin_ahead *a = in->ahead;
	long rc;

	pthread_mutex_lock(&a->mu);
	while (!a->count && !a->done)
		pthread_cond_wait(&a->ready, &a->mu);
	if (a->count) {
		size_t n = a->len[a->head] - a->taken;
		if (n > cap)
			n = cap;
		/* The window is counted, so the thread leaves it alone while it is copied. */
		pthread_mutex_unlock(&a->mu);
		memcpy(buf, a->win[a->head] + a->taken, n);
		pthread_mutex_lock(&a->mu);
		a->taken += n;
		if (a->taken == a->len[a->head]) {
			a->head = (a->head + 1) % AHEAD_WINDOWS;
			a->count--;
			a->taken = 0;
			pthread_cond_signal(&a->room);
		}
		rc = (long)n;
	} else {
		rc = a->rc;
		if (rc && err)
			*err = a->err;
	}
	pthread_mutex_unlock(&a->mu);
	return rc;
}

/* Stops and joins the thread, wherever it is. */
static void ahead_stop(struct nx_tin *in)
{
	struct nx_tin_ahead *a = in->ahead;

	pthread_mutex_lock(&a->mu);
	a->stop = true;
	pthread_cond_signal(&a->room);
	pthread_mutex_unlock(&a->mu);
	pthread_join(a->thread, NULL);
	ahead_free(a);
	in->ahead = NULL;
}

/* ---- reading ----------------------------------------------------------------------- */

long nx_tin_read(struct nx_tin *in, unsigned char *buf, size_t cap, struct nx_err *err)
{
	if (in->ahead)
		return read_ahead(in, buf, cap, err);
	return in->gz ? read_gz(in, buf, cap, err) : read_plain(in, buf, cap, err);
}

void nx_tin_close(struct nx_tin *in)
{
	if (in->ahead)
		ahead_stop(in);
	if (in->z) {
		inflateEnd(in->z);
		free(in->z);
	}
	if (in->fp)
		fclose(in->fp);
	free(in->raw);
	memset(in, 0, sizeof(*in));
}
