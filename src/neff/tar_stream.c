/* SPDX-License-Identifier: MIT
 * tar_stream.c: a tar.gz written as a stream to a file descriptor (see tar.h): each
 * block of the archive goes through one zlib deflate stream and out in 64 KiB pieces, so
 * a member of any size costs two buffers. The gzip header carries no time and OS
 * "unknown", as nx_gzip's, and a comment when the caller gives one. */
#include "common/compat.h"
#include "neff/tar.h"
#include "common/fsutil.h"
#include "common/xalloc.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#define GZIP_WBITS (15 + 16)
#define PIECE 65536

struct nx_targz {
	z_stream zs;
	gz_header gzh; /* zlib keeps a pointer to it and reads it at the first deflate */
	int fd;
	char *where;
	uint64_t tar_bytes, gz_bytes;
	uint8_t out[PIECE];
};

/* Deflates n bytes (flush: Z_NO_FLUSH or Z_FINISH) and writes what comes out. */
static int deflate_out(struct nx_targz *w, const void *data, size_t n, int flush,
		       struct nx_err *err)
{
	int zrc, rc = 0;

	w->zs.next_in = (Bytef *)(uintptr_t)data;
	w->zs.avail_in = (uInt)n;
	w->tar_bytes += n;
	do {
		w->zs.next_out = w->out;
		w->zs.avail_out = PIECE;
		zrc = deflate(&w->zs, flush);
		if (zrc == Z_STREAM_ERROR)
			return nx_errf(err, -EIO, "'%s': gzip compression failed: %s", w->where,
				       w->zs.msg ? w->zs.msg : "zlib error");
		rc = nx_write_all(w->fd, w->out, PIECE - w->zs.avail_out, w->where, err);
		if (!rc)
			w->gz_bytes += PIECE - w->zs.avail_out;
	} while (!rc && (w->zs.avail_out == 0 || (flush == Z_FINISH && zrc != Z_STREAM_END)));
	return rc;
}

int nx_targz_open(struct nx_targz **wp, int fd, const char *where, struct nx_err *err)
{
	return nx_targz_open_comment(wp, fd, where, NULL, err);
}

int nx_targz_open_comment(struct nx_targz **wp, int fd, const char *where, const char *comment,
			  struct nx_err *err)
{
	struct nx_targz *w = nx_xcalloc(1, sizeof(*w));

	*wp = NULL;
	w->gzh.os = 255;
	w->gzh.comment = (Bytef *)(uintptr_t)comment;
	w->fd = fd;
	w->where = nx_xstrdup(where);
	if (deflateInit2(&w->zs, Z_DEFAULT_COMPRESSION, Z_DEFLATED, GZIP_WBITS, 8,
			 Z_DEFAULT_STRATEGY) != Z_OK) {
		free(w->where);
		free(w);
		return nx_errf(err, -ENOMEM, "cannot initialise zlib");
	}
	if (deflateSetHeader(&w->zs, &w->gzh) != Z_OK) {
		nx_targz_abort(w);
		return nx_errf(err, -ENOMEM, "cannot set the gzip header");
	}
	*wp = w;
	return 0;
}

static uint64_t padded(uint64_t n)
{
	return (n + NX_TAR_BLOCK - 1) / NX_TAR_BLOCK * NX_TAR_BLOCK;
}

uint64_t nx_targz_member_bytes(size_t name_len, uint64_t size)
{
	uint64_t n = NX_TAR_BLOCK + padded(size);

	if (name_len > 99)
		n += NX_TAR_BLOCK + padded(name_len + 1);
	return n;
}

uint64_t nx_targz_tar_bytes(const struct nx_targz *w)
{
	return w->tar_bytes;
}

static int pad_out(struct nx_targz *w, uint64_t n, struct nx_err *err)
{
	static const uint8_t zero[NX_TAR_BLOCK];
	size_t pad = (size_t)(padded(n) - n);

	return pad ? deflate_out(w, zero, pad, Z_NO_FLUSH, err) : 0;
}

/* A member's header (and its long name first when it needs one). */
static int member_header(struct nx_targz *w, const char *name, const char *in_name,
			 uint64_t size, struct nx_err *err)
{
	uint8_t h[NX_TAR_BLOCK];
	size_t nlen = strlen(name);
	int rc;

	if (nlen == 0)
		return nx_errf(err, NX_EUSAGE, "'%s': an empty member name", w->where);
	if (size > NX_TAR_MAX_MEMBER)
		return nx_errf(err, NX_EUSAGE, "'%s' is too large for a tar member (%llu bytes)",
			       in_name, (unsigned long long)size);
	if (nlen > 99) {
		nx_tar_header(h, "././@LongLink", nlen + 1, 'L');
		if ((rc = deflate_out(w, h, sizeof(h), Z_NO_FLUSH, err)) ||
		    (rc = deflate_out(w, name, nlen + 1, Z_NO_FLUSH, err)) ||
		    (rc = pad_out(w, nlen + 1, err)))
			return rc;
	}
	nx_tar_header(h, name, size, '0');
	return deflate_out(w, h, sizeof(h), Z_NO_FLUSH, err);
}

int nx_targz_add_mem(struct nx_targz *w, const char *name, const void *data, size_t len,
		     struct nx_err *err)
{
	int rc = member_header(w, name, name, len, err);

	if (!rc && len)
		rc = deflate_out(w, data, len, Z_NO_FLUSH, err);
	return rc ? rc : pad_out(w, len, err);
}

int nx_targz_add_fd(struct nx_targz *w, const char *name, int in_fd, const char *in_name,
		    uint64_t size, struct nx_err *err)
{
	uint8_t *buf;
	uint64_t done = 0;
	int rc;

	if ((rc = member_header(w, name, in_name, size, err)))
		return rc;
	buf = nx_xmalloc(PIECE);
	while (!rc && done < size) {
		size_t want = size - done < PIECE ? (size_t)(size - done) : PIECE;
		ssize_t k = read(in_fd, buf, want);

		if (k < 0 && errno == EINTR)
			continue;
		if (k < 0)
			rc = nx_errf(err, -errno, "cannot read '%s': %s", in_name, strerror(errno));
		else if (k == 0)
			rc = nx_errf(err, NX_ETRUNC, "'%s' ended at byte %llu of %llu: it changed "
				     "while it was packed", in_name, (unsigned long long)done,
				     (unsigned long long)size);
		else
			rc = deflate_out(w, buf, (size_t)k, Z_NO_FLUSH, err);
		done += k > 0 ? (uint64_t)k : 0;
	}
	free(buf);
	return rc ? rc : pad_out(w, size, err);
}

int nx_targz_close(struct nx_targz *w, uint64_t *gz_bytes, struct nx_err *err)
{
	static const uint8_t end[2 * NX_TAR_BLOCK];
	int rc = deflate_out(w, end, sizeof(end), Z_FINISH, err);

	if (!rc && gz_bytes)
		*gz_bytes = w->gz_bytes;
	nx_targz_abort(w);
	return rc;
}

void nx_targz_abort(struct nx_targz *w)
{
	if (!w)
		return;
	deflateEnd(&w->zs);
	free(w->where);
	free(w);
}
