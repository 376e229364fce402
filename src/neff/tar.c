/* SPDX-License-Identifier: MIT
 * tar.c: gzip through zlib, and a small ustar reader and writer (see tar.h).
 *
 * A ustar member is a 512-byte header block followed by its data padded to a whole
 * block. Header fields used here (offset, size): name (0, 100), mode (100, 8),
 * uid (108, 8), gid (116, 8), size (124, 12), mtime (136, 12), chksum (148, 8),
 * typeflag (156, 1), magic (257, 6), version (263, 2), prefix (345, 155). Numbers are
 * octal text. The checksum is the byte sum of the header with chksum read as spaces.
 * Two zero blocks end the archive. */
#include "common/compat.h"
#include "neff/tar.h"
#include "common/xalloc.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <zlib.h>

/* windowBits for zlib: 15-bit window, +16 selects the gzip wrapper. */
#define GZIP_WBITS (15 + 16)
/* zlib counts in uInt; feed big buffers in slices this large. */
#define ZCHUNK ((size_t)1 << 30)

int nx_gunzip(const char *where, const uint8_t *gz, size_t gzlen, size_t max_out, uint8_t **out,
	      size_t *out_len, struct nx_err *err)
{
	z_stream zs;
	uint8_t *buf = NULL;
	size_t cap = 0, in_off = 0;
	int zrc, rc = 0;

	*out = NULL;
	*out_len = 0;
	memset(&zs, 0, sizeof(zs));
	if (inflateInit2(&zs, GZIP_WBITS) != Z_OK)
		return nx_errf(err, -ENOMEM, "%s: cannot initialise zlib", where);
	for (;;) {
		if (zs.avail_in == 0 && in_off < gzlen) {
			size_t n = gzlen - in_off < ZCHUNK ? gzlen - in_off : ZCHUNK;
			zs.next_in = (Bytef *)(uintptr_t)(gz + in_off);
			zs.avail_in = (uInt)n;
			in_off += n;
		}
		if (zs.avail_out == 0) {
			/* The buffer is full: double it, up to max_out. */
			if (cap >= max_out) {
				rc = nx_errf(err, NX_ECORRUPT,
					     "%s: gzip data inflates to more than %zu bytes", where,
					     max_out);
				goto out;
			}
			size_t ncap = cap ? cap * 2 : (gzlen < 16384 ? 65536 : gzlen * 4);
			if (ncap > max_out)
				ncap = max_out;
			if (ncap - cap > ZCHUNK)
				ncap = cap + ZCHUNK;
			buf = nx_xrealloc(buf, ncap);
			zs.next_out = buf + cap;
			zs.avail_out = (uInt)(ncap - cap);
			cap = ncap;
		}
		zrc = inflate(&zs, Z_NO_FLUSH);
		if (zrc == Z_STREAM_END)
			break;
		if (zrc == Z_OK)
			continue;
		if (zrc == Z_BUF_ERROR && zs.avail_in == 0 && in_off >= gzlen) {
			rc = nx_errf(err, NX_ETRUNC,
				     "%s: gzip stream is truncated: it ends after %zu compressed "
				     "bytes (%lu bytes inflated)", where, gzlen,
				     (unsigned long)zs.total_out);
			goto out;
		}
		if (zrc == Z_BUF_ERROR && (zs.avail_in == 0 || zs.avail_out == 0))
			continue; /* refilled or grown on the next pass */
		if (zrc == Z_MEM_ERROR) {
			rc = nx_errf(err, -ENOMEM, "%s: zlib is out of memory", where);
			goto out;
		}
		rc = nx_errf(err, NX_ECORRUPT,
			     "%s: gzip data is corrupt at compressed byte %lu: %s", where,
			     (unsigned long)zs.total_in, zs.msg ? zs.msg : "bad data");
		goto out;
	}
	if (zs.total_in < gzlen) {
		rc = nx_errf(err, NX_ECORRUPT,
			     "%s: %zu bytes of unexpected data follow the gzip stream (which ends "
			     "at compressed byte %lu)", where, gzlen - (size_t)zs.total_in,
			     (unsigned long)zs.total_in);
		goto out;
	}
	*out_len = zs.total_out;
	*out = buf;
	buf = NULL;
out:
	inflateEnd(&zs);
	free(buf);
	return rc;
}

int nx_gzip(const uint8_t *data, size_t len, uint8_t **out, size_t *out_len, struct nx_err *err)
{
	z_stream zs;
	gz_header gzh;
	struct nx_strbuf sb = NX_STRBUF_INIT;
	size_t in_off = 0;
	int zrc, rc = 0;

	*out = NULL;
	*out_len = 0;
	memset(&zs, 0, sizeof(zs));
	memset(&gzh, 0, sizeof(gzh));
	gzh.os = 255; /* "unknown": keeps output identical across build hosts */
	if (deflateInit2(&zs, Z_DEFAULT_COMPRESSION, Z_DEFLATED, GZIP_WBITS, 8,
			 Z_DEFAULT_STRATEGY) != Z_OK)
		return nx_errf(err, -ENOMEM, "cannot initialise zlib");
	if (deflateSetHeader(&zs, &gzh) != Z_OK) {
		rc = nx_errf(err, -ENOMEM, "cannot set the gzip header");
		goto out;
	}
	do {
		if (zs.avail_in == 0 && in_off < len) {
			size_t n = len - in_off < ZCHUNK ? len - in_off : ZCHUNK;
			zs.next_in = (Bytef *)(uintptr_t)(data + in_off);
			zs.avail_in = (uInt)n;
			in_off += n;
		}
		nx_strbuf_grow(&sb, 65536);
		zs.next_out = (Bytef *)sb.buf + sb.len;
		zs.avail_out = 65536;
		zrc = deflate(&zs, in_off < len ? Z_NO_FLUSH : Z_FINISH);
		sb.len += 65536 - zs.avail_out;
		if (zrc != Z_OK && zrc != Z_STREAM_END && zrc != Z_BUF_ERROR) {
			rc = nx_errf(err, NX_ECORRUPT, "gzip compression failed: %s",
				     zs.msg ? zs.msg : "zlib error");
			goto out;
		}
	} while (zrc != Z_STREAM_END);
	*out = (uint8_t *)nx_strbuf_detach(&sb, out_len);
out:
	deflateEnd(&zs);
	nx_strbuf_release(&sb);
	return rc;
}

/* Parses an octal (or GNU base-256) number field; -1 when malformed. */
static int parse_num(const uint8_t *f, size_t n, uint64_t *v)
{
	size_t i = 0;

	*v = 0;
	if (f[0] & 0x80) {
		if (f[0] != 0x80)
			return -1; /* negative or wider than we accept */
		for (i = 1; i < n; i++) {
			if (*v >> 56)
				return -1;
			*v = *v << 8 | f[i];
		}
		return 0;
	}
	while (i < n && f[i] == ' ')
		i++;
	size_t first = i;
	for (; i < n && f[i] >= '0' && f[i] <= '7'; i++) {
		if (*v >> 61)
			return -1;
		*v = *v * 8 + (uint64_t)(f[i] - '0');
	}
	if (i == first)
		return -1;
	for (; i < n; i++)
		if (f[i] != ' ' && f[i] != '\0')
			return -1;
	return 0;
}

static bool all_zero(const uint8_t *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (p[i])
			return false;
	return true;
}

/* Applies the "path" record of a pax extended header to *path. */
static int pax_path(const char *where, size_t off, const uint8_t *p, size_t n, char **path,
		    struct nx_err *err)
{
	size_t i = 0;

	while (i < n) {
		size_t rec = 0, j = i;

		while (j < n && p[j] >= '0' && p[j] <= '9' && rec <= n)
			rec = rec * 10 + (size_t)(p[j++] - '0');
		if (j == i || j >= n || p[j] != ' ' || rec < j - i + 2 || rec > n - i ||
		    p[i + rec - 1] != '\n')
			return nx_errf(err, NX_ECORRUPT,
				       "%s: pax header at byte %zu: malformed record at offset %zu",
				       where, off, i);
		const char *kv = (const char *)p + j + 1;
		size_t kvlen = rec - (j - i) - 2;
		if (kvlen >= 5 && !memcmp(kv, "path=", 5)) {
			free(*path);
			*path = nx_xstrndup(kv + 5, kvlen - 5);
		}
		i += rec;
	}
	return 0;
}

/* A printable copy of a header's name field, for error messages. */
static void show_name(const uint8_t *h, char out[101])
{
	size_t i;

	for (i = 0; i < 100 && h[i]; i++)
		out[i] = (h[i] >= 0x20 && h[i] < 0x7f) ? (char)h[i] : '?';
	out[i] = '\0';
}

/* Checks one header block: checksum and size. */
static int check_header(const char *where, size_t off, const uint8_t *h, uint64_t *size,
			struct nx_err *err)
{
	uint64_t stored, usum = 0;
	int64_t ssum = 0;
	char shown[101];

	show_name(h, shown);
	if (parse_num(h + 148, 8, &stored) != 0)
		return nx_errf(err, NX_ECORRUPT,
			       "%s: tar member '%s' at byte %zu: checksum field is not a number",
			       where, shown, off);
	for (size_t i = 0; i < NX_TAR_BLOCK; i++) {
		uint8_t c = (i >= 148 && i < 156) ? ' ' : h[i];
		usum += c;
		ssum += (int8_t)c;
	}
	if (stored != usum && (int64_t)stored != ssum)
		return nx_errf(err, NX_ECORRUPT,
			       "%s: tar member '%s' at byte %zu: header checksum mismatch (stored %"
			       PRIu64 ", computed %" PRIu64 ")", where, shown, off, stored, usum);
	if (parse_num(h + 124, 12, size) != 0)
		return nx_errf(err, NX_ECORRUPT,
			       "%s: tar member '%s' at byte %zu: size field is not a number", where,
			       shown, off);
	return 0;
}

/* The name of a regular member: a pending long name, else prefix "/" name. */
static char *member_name(const uint8_t *h, char **pending)
{
	size_t nlen = strnlen((const char *)h, 100), plen = 0;
	char *name;

	if (*pending) {
		name = *pending;
		*pending = NULL;
		return name;
	}
	if (!memcmp(h + 257, "ustar", 5))
		plen = strnlen((const char *)h + 345, 155);
	if (plen)
		return nx_xasprintf("%.*s/%.*s", (int)plen, (const char *)h + 345, (int)nlen,
				    (const char *)h);
	return nx_xstrndup((const char *)h, nlen);
}

int nx_tar_parse(const char *where, const uint8_t *data, size_t len, struct nx_tar *tar,
		 struct nx_err *err)
{
	char *pending = NULL, *name;
	char shown[101];
	size_t off = 0;
	int rc = 0;

	memset(tar, 0, sizeof(*tar));
	while (off < len) {
		const uint8_t *h = data + off;
		uint64_t size = 0; /* set by check_header; gcc -O3 cannot see it */

		if (len - off < NX_TAR_BLOCK) {
			rc = nx_errf(err, NX_ETRUNC,
				     "%s: tar stream byte %zu: header block cut short (%zu of 512 "
				     "bytes)", where, off, len - off);
			goto out;
		}
		if (all_zero(h, NX_TAR_BLOCK))
			break; /* end-of-archive marker */
		rc = check_header(where, off, h, &size, err);
		if (rc)
			goto out;
		/* A long name from a preceding 'L' or pax header replaces the name field,
		 * which then holds a truncated copy. */
		if (!pending && strnlen((const char *)h, 100) == 100) {
			show_name(h, shown);
			rc = nx_errf(err, NX_ECORRUPT,
				     "%s: tar member '%s' at byte %zu: name is not NUL-terminated",
				     where, shown, off);
			goto out;
		}
		size_t left = len - off - NX_TAR_BLOCK;
		if (size > left) {
			show_name(h, shown);
			rc = nx_errf(err, NX_ETRUNC,
				     "%s: tar member '%s' at byte %zu: size %" PRIu64 " exceeds "
				     "the %zu bytes left in the archive", where,
				     pending ? pending : shown,
				     off, size, left);
			goto out;
		}
		const uint8_t *body = h + NX_TAR_BLOCK;
		switch (h[156]) {
		case '0': case '\0': case '7':
			name = member_name(h, &pending);
			if (!name[0]) {
				free(name);
				rc = nx_errf(err, NX_ECORRUPT,
					     "%s: tar member at byte %zu: empty name", where, off);
				goto out;
			}
			NX_GROW(tar->ents, tar->n + 1, tar->cap);
			tar->ents[tar->n++] =
				(struct nx_tar_entry){ name, body, (size_t)size, off };
			break;
		case 'L': /* GNU long name of the next member */
			free(pending);
			pending = nx_xstrndup((const char *)body, (size_t)size);
			break;
		case 'x': /* pax extended header of the next member */
			rc = pax_path(where, off, body, (size_t)size, &pending, err);
			if (rc)
				goto out;
			break;
		default:
			break; /* directories, links, pax globals: nothing to keep */
		}
		size_t padded = (size_t)((size + NX_TAR_BLOCK - 1) / NX_TAR_BLOCK * NX_TAR_BLOCK);
		off += NX_TAR_BLOCK + (padded < left ? padded : left);
	}
out:
	free(pending);
	if (rc)
		nx_tar_release(tar);
	return rc;
}

int nx_tar_read_gz(const char *where, const uint8_t *gz, size_t gzlen, struct nx_tar *tar,
		   struct nx_err *err)
{
	uint8_t *buf;
	size_t len;
	int rc;

	memset(tar, 0, sizeof(*tar));
	rc = nx_gunzip(where, gz, gzlen, NX_TAR_MAX_UNPACKED, &buf, &len, err);
	if (rc)
		return rc;
	rc = nx_tar_parse(where, buf, len, tar, err);
	if (rc) {
		free(buf);
		return rc;
	}
	tar->buf = buf;
	tar->len = len;
	return 0;
}

const struct nx_tar_entry *nx_tar_find(const struct nx_tar *tar, const char *name)
{
	/* Later members replace earlier ones of the same name, as tar extracts them. */
	for (size_t i = tar->n; i-- > 0;)
		if (!strcmp(tar->ents[i].name, name))
			return &tar->ents[i];
	return NULL;
}

void nx_tar_drop(struct nx_tar *tar, const struct nx_tar_entry *e)
{
	struct nx_tar_entry *m = &tar->ents[e - tar->ents];
	long page = sysconf(_SC_PAGESIZE);

	if (tar->buf && page > 0) {
		uintptr_t mask = (uintptr_t)page - 1;
		uintptr_t lo = ((uintptr_t)m->data + mask) & ~mask;
		uintptr_t hi = ((uintptr_t)m->data + m->size) & ~mask;
		if (hi > lo) /* whole pages of this member's data only: the buffer is ours */
			(void)madvise((void *)lo, hi - lo, MADV_DONTNEED);
	}
	m->data = NULL;
	m->size = 0;
}

void nx_tar_release(struct nx_tar *tar)
{
	for (size_t i = 0; i < tar->n; i++)
		free(tar->ents[i].name);
	free(tar->ents);
	free(tar->buf);
	memset(tar, 0, sizeof(*tar));
}

void nx_tar_header(uint8_t h[NX_TAR_BLOCK], const char *name, uint64_t size, char type)
{
	unsigned sum = 0;

	memset(h, 0, NX_TAR_BLOCK);
	memcpy(h, name, strnlen(name, 99));
	memcpy(h + 100, "0000644", 8);
	memcpy(h + 108, "0000000", 8);
	memcpy(h + 116, "0000000", 8);
	snprintf((char *)h + 124, 12, "%011llo", (unsigned long long)size);
	memcpy(h + 136, "00000000000", 12);
	memset(h + 148, ' ', 8);
	h[156] = (uint8_t)type;
	memcpy(h + 257, "ustar", 6);
	memcpy(h + 263, "00", 2);
	for (size_t i = 0; i < NX_TAR_BLOCK; i++)
		sum += h[i];
	snprintf((char *)h + 148, 8, "%06o", sum);
	h[155] = ' ';
}

int nx_tar_add(struct nx_strbuf *out, const char *name, const void *data, size_t len,
	       struct nx_err *err)
{
	uint8_t h[NX_TAR_BLOCK];
	size_t nlen = strlen(name);

	if (nlen == 0 || nlen > 99)
		return nx_errf(err, NX_EUSAGE, "tar member name '%s' must be 1..99 bytes", name);
	if ((uint64_t)len > NX_TAR_MAX_MEMBER)
		return nx_errf(err, NX_EUSAGE, "tar member '%s' is too large (%zu bytes)", name,
			       len);
	nx_tar_header(h, name, len, '0');
	nx_strbuf_add(out, h, sizeof(h));
	nx_strbuf_add(out, data, len);
	size_t pad = (NX_TAR_BLOCK - len % NX_TAR_BLOCK) % NX_TAR_BLOCK;
	nx_strbuf_grow(out, pad);
	memset(out->buf + out->len, 0, pad);
	out->len += pad;
	out->buf[out->len] = '\0';
	return 0;
}

void nx_tar_finish(struct nx_strbuf *out)
{
	nx_strbuf_grow(out, 2 * NX_TAR_BLOCK);
	memset(out->buf + out->len, 0, 2 * NX_TAR_BLOCK);
	out->len += 2 * NX_TAR_BLOCK;
	out->buf[out->len] = '\0';
}
