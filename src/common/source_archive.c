/* SPDX-License-Identifier: MIT
 * source_archive.c: which source archives `view` made from a NEFF (source_archive.h): the
 * gzip header (RFC 1952) read as far as its comment. */
#include "common/compat.h"
#include "common/source_archive.h"

#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#define FEXTRA 4
#define FNAME 8
#define FCOMMENT 16

bool nx_source_archive_from_neff(const char *path)
{
	uint8_t h[1024];
	size_t want = sizeof(NX_SOURCE_FROM_NEFF), at = 10;
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n = fd < 0 ? -1 : read(fd, h, sizeof(h));

	if (fd >= 0)
		close(fd);
	if (n < 10 || h[0] != 0x1f || h[1] != 0x8b || h[2] != 8 || !(h[3] & FCOMMENT))
		return false;
	if ((h[3] & FEXTRA) && n < 12)
		return false;
	if (h[3] & FEXTRA)
		at += 2 + (size_t)(h[10] | h[11] << 8);
	if (h[3] & FNAME)
		while (at < (size_t)n && h[at++])
			;
	return at + want <= (size_t)n && !memcmp(h + at, NX_SOURCE_FROM_NEFF, want);
}
