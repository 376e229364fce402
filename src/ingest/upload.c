/* SPDX-License-Identifier: MIT
 * upload.c: `neuron-explorer upload`: source code attached to a published profile as
 * <data>/profiles/global/<name>@latest/source_folder.tar.gz (see upload.h).
 *
 * Nothing is read whole. A directory is listed first (regular files, sorted, symbolic
 * links and special files left out) and its unpacked size known before a byte of it is
 * read; its files then stream through the tar.gz writer (neff/tar_stream.c) into a
 * hidden temporary beside the profile (nx_profile_tmp). A .tar.gz/.tgz is copied as it
 * is while zlib inflates it to count what it unpacks to. The one cap,
 * NX_SOURCE_ARCHIVE_MAX of unpacked bytes, is checked before reading where the sizes
 * tell (a directory, a single file, the gzip trailer of an archive) and while reading
 * otherwise. The archive is renamed into the profile under the data path's lock
 * (publish.c), so it lands in the version that is published, never in one being
 * replaced. */
#include "common/compat.h"
#include "ingest/upload.h"
#include "common/fsutil.h"
#include "common/le.h"
#include "common/source_archive.h"
#include "common/xalloc.h"
#include "ingest/ingest.h"
#include "neff/tar.h"

#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#define MAX_DEPTH 64
#define PIECE 65536

struct member {
	char *rel;  /* name in the archive */
	char *path; /* on disk */
	uint64_t size;
};

struct listing {
	struct member *m;
	size_t n, cap;
	size_t skipped;
	uint64_t tar_bytes;
};

static int cmp_names(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static void listing_release(struct listing *l)
{
	for (size_t i = 0; i < l->n; i++) {
		free(l->m[i].rel);
		free(l->m[i].path);
	}
	free(l->m);
	memset(l, 0, sizeof(*l));
}

/* Lists the regular files below dir (rel: their archive prefix) in sorted order. */
static int list_dir(struct listing *l, const char *dir, const char *rel, int depth,
		    struct nx_err *err)
{
	char **names = NULL;
	size_t n = 0, cap = 0;
	struct dirent *de;
	DIR *d;
	int rc = 0;

	if (depth > MAX_DEPTH)
		return nx_errf(err, NX_EUSAGE, "'%s' lies more than %d directories deep; upload "
			       "a directory nearer to the sources", dir, MAX_DEPTH);
	if (!(d = opendir(dir)))
		return nx_errf(err, -errno, "cannot open directory '%s': %s", dir, strerror(errno));
	while ((de = readdir(d))) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		NX_GROW(names, n + 1, cap);
		names[n++] = nx_xstrdup(de->d_name);
	}
	closedir(d);
	if (n)
		qsort(names, n, sizeof(*names), cmp_names);
	for (size_t i = 0; i < n && !rc; i++) {
		char *path = nx_path_join(dir, names[i]);
		char *name = *rel ? nx_xasprintf("%s/%s", rel, names[i]) : nx_xstrdup(names[i]);
		struct stat st;

		if (lstat(path, &st) != 0) {
			rc = nx_errf(err, -errno, "cannot stat '%s': %s", path, strerror(errno));
		} else if (S_ISDIR(st.st_mode)) {
			rc = list_dir(l, path, name, depth + 1, err);
		} else if (!S_ISREG(st.st_mode)) {
			l->skipped++; /* symbolic links, sockets, devices */
		} else {
			NX_GROW(l->m, l->n + 1, l->cap);
			l->m[l->n++] = (struct member){ name, path, (uint64_t)st.st_size };
			l->tar_bytes += nx_targz_member_bytes(strlen(name), (uint64_t)st.st_size);
			name = path = NULL;
		}
		free(path);
		free(name);
	}
	for (size_t i = 0; i < n; i++)
		free(names[i]);
	free(names);
	return rc;
}

static bool is_archive_name(const char *p)
{
	size_t n = strlen(p);
	return (n > 7 && !strcmp(p + n - 7, ".tar.gz")) || (n > 4 && !strcmp(p + n - 4, ".tgz"));
}

static int too_big(const char *src, uint64_t bytes, const char *how, struct nx_err *err)
{
	return nx_errf(err, -EFBIG, "'%s' %s %.1f MiB; a source archive may unpack to at most "
		       NX_SOURCE_ARCHIVE_MAX_TEXT " (nothing was stored)", src, how,
		       (double)bytes / (1 << 20));
}

/* The members of l through the tar.gz writer into fd. */
static int pack(const struct listing *l, int fd, const char *where, uint64_t *gz,
		struct nx_err *err)
{
	struct nx_targz *w = NULL;
	int rc = nx_targz_open(&w, fd, where, err);

	for (size_t i = 0; i < l->n && !rc; i++) {
		int in = open(l->m[i].path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);

		if (in < 0) {
			rc = nx_errf(err, -errno, "cannot open '%s': %s", l->m[i].path,
				     strerror(errno));
			break;
		}
		rc = nx_targz_add_fd(w, l->m[i].rel, in, l->m[i].path, l->m[i].size, err);
		close(in);
	}
	if (rc) {
		nx_targz_abort(w);
		return rc;
	}
	return nx_targz_close(w, gz, err);
}

/* Copies the gzip file src (size bytes) to fd as it is, inflating it on the way to check
 * that it is one whole gzip stream unpacking to at most the cap. */
static int copy_archive(const char *src, uint64_t size, int fd, const char *where,
			uint64_t *unpacked, struct nx_err *err)
{
	uint8_t *in = nx_xmalloc(PIECE), *out = nx_xmalloc(PIECE);
	int sfd = open(src, O_RDONLY | O_CLOEXEC), zrc = Z_OK, rc = 0;
	uint64_t done = 0;
	z_stream zs;

	memset(&zs, 0, sizeof(zs));
	*unpacked = 0;
	if (sfd < 0) {
		rc = nx_errf(err, -errno, "cannot open '%s': %s", src, strerror(errno));
		goto out_free;
	}
	if (inflateInit2(&zs, 15 + 16) != Z_OK) {
		rc = nx_errf(err, -ENOMEM, "cannot initialise zlib");
		goto out_close;
	}
	while (!rc && done < size) {
		ssize_t k = read(sfd, in, PIECE);

		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0) {
			rc = k < 0 ? nx_errf(err, -errno, "cannot read '%s': %s", src, strerror(errno))
				   : nx_errf(err, NX_ETRUNC, "'%s' ended at byte %llu of %llu", src,
					     (unsigned long long)done, (unsigned long long)size);
			break;
		}
		if (zrc == Z_STREAM_END) {
			rc = nx_errf(err, NX_ECORRUPT, "'%s': bytes follow the end of the gzip "
				     "stream (at byte %llu)", src, (unsigned long long)(done - zs.avail_in));
			break;
		}
		zs.next_in = in;
		zs.avail_in = (uInt)k;
		done += (uint64_t)k;
		while (!rc && zs.avail_in && zrc != Z_STREAM_END) {
			zs.next_out = out;
			zs.avail_out = PIECE;
			zrc = inflate(&zs, Z_NO_FLUSH);
			if (zrc != Z_OK && zrc != Z_STREAM_END && zrc != Z_BUF_ERROR)
				rc = nx_errf(err, NX_ECORRUPT, "'%s' is not a valid gzip file: %s (at "
					     "byte %llu)", src, zs.msg ? zs.msg : "bad data",
					     (unsigned long long)(done - zs.avail_in));
			*unpacked += PIECE - zs.avail_out;
			if (!rc && *unpacked > NX_SOURCE_ARCHIVE_MAX)
				rc = too_big(src, *unpacked, "unpacks to more than", err);
		}
		if (!rc && zrc == Z_STREAM_END && zs.avail_in)
			rc = nx_errf(err, NX_ECORRUPT, "'%s': bytes follow the end of the gzip stream "
				     "(at byte %llu)", src, (unsigned long long)(done - zs.avail_in));
		if (!rc)
			rc = nx_write_all(fd, in, (size_t)k, where, err);
	}
	if (!rc && zrc != Z_STREAM_END)
		rc = nx_errf(err, NX_ETRUNC, "'%s': the gzip stream is cut short", src);
	inflateEnd(&zs);
out_close:
	close(sfd);
out_free:
	free(in);
	free(out);
	return rc;
}

/* Checks a .tar.gz given as is before it is read: gzip magic, and the unpacked size its
 * trailer states (that of a single stream under 4 GiB; the copy checks it exactly). */
static int check_archive(const char *src, uint64_t size, struct nx_err *err)
{
	uint8_t head[2], tail[4];
	int fd = open(src, O_RDONLY | O_CLOEXEC), rc = 0;

	if (fd < 0)
		return nx_errf(err, -errno, "cannot open '%s': %s", src, strerror(errno));
	if (size < 18 || pread(fd, head, 2, 0) != 2 || head[0] != 0x1f || head[1] != 0x8b)
		rc = nx_errf(err, NX_ECORRUPT, "'%s' is named like a .tar.gz but is not a gzip "
			     "file", src);
	else if (pread(fd, tail, 4, (off_t)size - 4) != 4)
		rc = nx_errf(err, -EIO, "cannot read '%s': %s", src, strerror(errno));
	else if (nx_get_le32(tail) > NX_SOURCE_ARCHIVE_MAX)
		rc = too_big(src, nx_get_le32(tail), "unpacks to", err);
	else if (size > 2 * NX_SOURCE_ARCHIVE_MAX)
		rc = too_big(src, size, "holds", err);
	close(fd);
	return rc;
}

/* The archive for src into fd; fills st. */
static int make_archive(const char *src, const struct stat *sst, int fd, const char *where,
			struct nx_upload_stats *st, struct nx_err *err)
{
	struct listing l = { 0 };
	int rc;

	if (S_ISREG(sst->st_mode) && is_archive_name(src)) {
		st->as_is = true;
		st->files = 1;
		if ((rc = check_archive(src, (uint64_t)sst->st_size, err)))
			return rc;
		st->gz_bytes = (uint64_t)sst->st_size;
		return copy_archive(src, (uint64_t)sst->st_size, fd, where, &st->tar_bytes, err);
	}
	if (S_ISDIR(sst->st_mode)) {
		rc = list_dir(&l, src, "", 0, err);
		if (!rc && !l.n)
			rc = nx_errf(err, NX_EUSAGE, "'%s' holds no regular files", src);
	} else {
		const char *base = strrchr(src, '/');
		base = base && base[1] ? base + 1 : src;
		NX_GROW(l.m, 1, l.cap);
		l.m[l.n++] = (struct member){ nx_xstrdup(base), nx_xstrdup(src),
					      (uint64_t)sst->st_size };
		l.tar_bytes = nx_targz_member_bytes(strlen(base), (uint64_t)sst->st_size);
		rc = 0;
	}
	l.tar_bytes += 2 * NX_TAR_BLOCK;
	st->files = l.n;
	st->skipped = l.skipped;
	st->tar_bytes = l.tar_bytes;
	if (!rc && l.tar_bytes > NX_SOURCE_ARCHIVE_MAX)
		rc = too_big(src, l.tar_bytes, "packs to", err);
	if (!rc)
		rc = pack(&l, fd, where, &st->gz_bytes, err);
	listing_release(&l);
	return rc;
}

/* Renames the finished archive into the profile under the data path's lock. */
static int store(const char *data_path, const char *name, const char *tmp, char **dest,
		 struct nx_err *err)
{
	char *final = nx_profile_dir(data_path, name);
	int lock, rc = nx_profiles_lock(data_path, &lock, err);

	*dest = nx_path_join(final, NX_SOURCE_ARCHIVE);
	if (!rc && !nx_is_dir(final))
		rc = nx_errf(err, NX_ENOTFOUND, "profile '%s' was removed while its sources were "
			     "packed", name);
	if (!rc && rename(tmp, *dest) != 0)
		rc = nx_errf(err, -errno, "cannot store '%s': %s", *dest, strerror(errno));
	nx_profiles_unlock(lock);
	free(final);
	return rc;
}

int nx_upload_source(const char *data_path, const char *name, const char *src,
		     struct nx_upload_stats *st, char **dest, struct nx_err *err)
{
	char *final = nx_profile_dir(data_path, name), *tmp = NULL;
	struct stat sst;
	int fd = -1, rc;

	memset(st, 0, sizeof(*st));
	*dest = NULL;
	if ((rc = nx_check_display_name(name, err)))
		goto out;
	if (nx_is_file(data_path) || (!nx_is_dir(data_path) && access(data_path, F_OK) == 0)) {
		rc = nx_errf(err, NX_EUSAGE, "the data path '%s' is not a directory", data_path);
		goto out;
	}
	if (!nx_is_dir(final)) {
		st->no_profile = true;
		rc = nx_errf(err, NX_ENOTFOUND, "no profile '%s' in '%s'", name, data_path);
		goto out;
	}
	if (stat(src, &sst) != 0) {
		rc = errno == ENOENT ? nx_errf(err, NX_ENOTFOUND, "'%s': no such file or directory",
					       src)
				     : nx_errf(err, -errno, "cannot read '%s': %s", src,
					       strerror(errno));
		goto out;
	}
	if (!S_ISDIR(sst.st_mode) && !S_ISREG(sst.st_mode)) {
		rc = nx_errf(err, NX_EUSAGE, "'%s' is neither a directory nor a regular file", src);
		goto out;
	}
	nx_remove_stale_tmp(data_path);
	tmp = nx_profile_tmp(data_path, name);
	nx_profile_tmp_record(data_path, tmp);
	if ((fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666)) < 0) {
		rc = nx_errf(err, -errno, "cannot create '%s': %s", tmp, strerror(errno));
		goto out;
	}
	rc = make_archive(src, &sst, fd, tmp, st, err);
	if (close(fd) != 0 && !rc)
		rc = nx_errf(err, -errno, "cannot write '%s': %s", tmp, strerror(errno));
	fd = -1;
	if (!rc)
		rc = store(data_path, name, tmp, dest, err);
	if (rc)
		unlink(tmp);
	nx_profile_tmp_forget(data_path, tmp);
out:
	if (rc) {
		free(*dest);
		*dest = NULL;
	}
	free(final);
	free(tmp);
	return rc;
}
