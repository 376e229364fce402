/* SPDX-License-Identifier: MIT
 * tar.h: the NEFF payload: a ustar archive inside one gzip stream.
 *
 * The reader works on memory: it inflates the whole gzip stream (bounded by
 * NX_TAR_MAX_UNPACKED), then indexes the archive without copying member data. The
 * writer builds a deterministic archive (mtime 0, uid/gid 0, mode 0644, members in
 * the order added) and a gzip stream whose header carries no time or OS. */
#ifndef NX_NEFF_TAR_H
#define NX_NEFF_TAR_H

#include "common/compat.h"
#include "common/err.h"
#include "common/strbuf.h"

#define NX_TAR_BLOCK 512u
/* Refuse to inflate more than this: a few hundred compressed bytes can claim gigabytes. */
#define NX_TAR_MAX_UNPACKED ((size_t)2 << 30)

/* One regular-file member; data points into the archive buffer. */
struct nx_tar_entry {
	char *name;
	const uint8_t *data;
	size_t size;
	uint64_t offset; /* byte offset of the member's header in the uncompressed tar */
};

struct nx_tar {
	uint8_t *buf; /* inflated archive owned by this struct, or NULL when borrowed */
	size_t len;
	size_t n, cap;
	struct nx_tar_entry *ents;
};

/* Inflates one gzip stream of gzlen bytes. Fails with NX_ETRUNC when the stream ends
 * early, NX_ECORRUPT on bad data or bytes after the stream's end. `where` starts every
 * error message (e.g. the NEFF file name). *out is malloc'd on success. */
int nx_gunzip(const char *where, const uint8_t *gz, size_t gzlen, size_t max_out, uint8_t **out,
	      size_t *out_len, struct nx_err *err);
/* Compresses data as one gzip stream (header mtime 0, OS "unknown"). */
int nx_gzip(const uint8_t *data, size_t len, uint8_t **out, size_t *out_len, struct nx_err *err);

/* Indexes an uncompressed archive of len bytes. The entries borrow `data`, which must
 * outlive `tar`. Regular files become entries; directories, links and pax global
 * headers are skipped; GNU long names ('L') and pax "path" records are honoured.
 * Errors name the member and the byte offset of its header. On failure tar is
 * released. */
int nx_tar_parse(const char *where, const uint8_t *data, size_t len, struct nx_tar *tar,
		 struct nx_err *err);
/* nx_gunzip then nx_tar_parse; the tar owns the inflated buffer. */
int nx_tar_read_gz(const char *where, const uint8_t *gz, size_t gzlen, struct nx_tar *tar,
		   struct nx_err *err);
/* Member by exact name, or NULL. */
const struct nx_tar_entry *nx_tar_find(const struct nx_tar *tar, const char *name);
/* Done with member e (one of tar's entries): the whole pages of its data go back to the
 * system (madvise MADV_DONTNEED, when the tar owns its buffer), and it reads as empty
 * from now on. A NEFF's big JSON members are dropped once parsed. */
void nx_tar_drop(struct nx_tar *tar, const struct nx_tar_entry *e);
void nx_tar_release(struct nx_tar *tar);

/* The largest member the 11 octal digits of a ustar size field hold. */
#define NX_TAR_MAX_MEMBER 077777777777ull

/* Fills the ustar header block of a member: name (at most 99 bytes are used), size,
 * type '0' (a regular file) or 'L' (a GNU long name: the data is the name). Mode 0644,
 * uid/gid 0, mtime 0. */
void nx_tar_header(uint8_t h[NX_TAR_BLOCK], const char *name, uint64_t size, char type);

/* Appends one regular-file member to an archive being built in `out`. Names longer
 * than 99 bytes fail with NX_EUSAGE. */
int nx_tar_add(struct nx_strbuf *out, const char *name, const void *data, size_t len,
	       struct nx_err *err);
/* Appends the two zero blocks that end an archive. */
void nx_tar_finish(struct nx_strbuf *out);

/* A tar.gz written as a stream (tar_stream.c): members go through zlib to a file
 * descriptor as they come, so memory stays at a few buffers whatever their size. Names
 * longer than 99 bytes get a GNU long-name member first (nx_tar_parse, tar(1) and the
 * web UI read them). Members are laid out as nx_tar_add lays them out. */
struct nx_targz;
/* `where` (the output's name) starts error messages. */
int nx_targz_open(struct nx_targz **w, int fd, const char *where, struct nx_err *err);
/* Same, the gzip header carrying comment (a constant string, or NULL: none). */
int nx_targz_open_comment(struct nx_targz **w, int fd, const char *where, const char *comment,
			  struct nx_err *err);
/* Adds the regular file open as in_fd, reading exactly size bytes from it (a file that
 * ends early is an error naming in_name). */
int nx_targz_add_fd(struct nx_targz *w, const char *name, int in_fd, const char *in_name,
		    uint64_t size, struct nx_err *err);
/* Adds a regular file of len bytes from memory. */
int nx_targz_add_mem(struct nx_targz *w, const char *name, const void *data, size_t len,
		     struct nx_err *err);
/* The tar bytes so far (headers, data, padding). */
uint64_t nx_targz_tar_bytes(const struct nx_targz *w);
/* Ends the archive and frees w; *gz_bytes (may be NULL) gets the bytes written to fd. */
int nx_targz_close(struct nx_targz *w, uint64_t *gz_bytes, struct nx_err *err);
void nx_targz_abort(struct nx_targz *w);
/* The tar bytes a member of name_len and size bytes takes, long-name member included. */
uint64_t nx_targz_member_bytes(size_t name_len, uint64_t size);

#endif
