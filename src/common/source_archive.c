/* SPDX-License-Identifier: MIT
 * source_archive.c: which source archives `view` made from a NEFF (source_archive.h): zlib
 * reads the gzip header (RFC 1952) and hands back its comment; nothing is inflated. */
#include "common/compat.h"
#include "common/source_archive.h"

#include <fcntl.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

bool nx_source_archive_from_neff(const char *path)
{
	uint8_t h[1024], out[1];
	/* one byte more than the marker: a longer comment fills it and then differs */
	char comment[sizeof(NX_SOURCE_FROM_NEFF) + 1] = { 0 };
	gz_header g = { .comment = (Bytef *)comment, .comm_max = sizeof(comment) };
	z_stream z = { 0 };
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n = fd < 0 ? -1 : read(fd, h, sizeof(h));

	if (fd >= 0)
		close(fd);
	if (n < 10 || inflateInit2(&z, 16 + MAX_WBITS) != Z_OK)
		return false;
	z.next_in = h;
	z.avail_in = (uInt)n;
	z.next_out = out;
	z.avail_out = sizeof(out);
	/* Z_BLOCK returns once the header is read (g.done 1); a cut or bad header leaves 0 */
	if (inflateGetHeader(&z, &g) == Z_OK)
		(void)inflate(&z, Z_BLOCK);
	inflateEnd(&z);
	return g.done == 1 && !memcmp(comment, NX_SOURCE_FROM_NEFF, sizeof(NX_SOURCE_FROM_NEFF));
}
