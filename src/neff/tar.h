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
void nx_tar_release(struct nx_tar *tar);

/* Appends one regular-file member to an archive being built in `out`. Names longer
 * than 99 bytes fail with NX_EUSAGE. */
int nx_tar_add(struct nx_strbuf *out, const char *name, const void *data, size_t len,
	       struct nx_err *err);
/* Appends the two zero blocks that end an archive. */
void nx_tar_finish(struct nx_strbuf *out);

#endif
