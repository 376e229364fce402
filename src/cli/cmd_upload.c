/* SPDX-License-Identifier: MIT
 * cmd_upload.c: `neuron-explorer upload --source-code PATH`. Attaches source code
 * to an ingested profile as <data-path>/profiles/global/<name>@latest/
 * source_folder.tar.gz, which the API serves under .../fs/ for source views. A
 * directory is packed (regular files only, in sorted order, paths relative to
 * it); a .tar.gz/.tgz file is stored as it is; any other file is packed alone.
 * The archive is written to a temporary sibling and renamed into place. */
#include "common/compat.h"
#include "cli/cli_util.h"
#include "cli/commands.h"
#include "common/fsutil.h"
#include "common/strbuf.h"
#include "common/xalloc.h"
#include "neff/tar.h"

#include <dirent.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define DEFAULT_DATA_PATH "~/.local/share/neuron-profile"
#define ARCHIVE "source_folder.tar.gz"
#define MAX_SOURCE_BYTES ((size_t)512 << 20)

static void usage(FILE *out)
{
	fprintf(out,
		"usage: neuron-explorer upload --source-code PATH --display-name NAME\n"
		"                              [--data-path DIR]\n"
		"\n"
		"Stores source code next to an ingested profile, as\n"
		"DIR/profiles/global/NAME@latest/" ARCHIVE ", where the API and the\n"
		"source views find it. PATH is a directory (packed as a gzipped tar), an\n"
		"existing .tar.gz/.tgz archive (stored as is), or a single file.\n"
		"\n"
		"options:\n"
		"      --source-code PATH   directory or file to attach\n"
		"      --display-name NAME  the profile, as given to 'view --display-name'\n"
		"                           (letters, digits, '-', '_' and '.' (not first), at\n"
		"                           most 200 characters, without '.tmp')\n"
		"      --data-path DIR      workspace of processed profiles (default %s)\n"
		"  -h, --help               show this help\n",
		DEFAULT_DATA_PATH);
}

struct packer {
	struct nx_strbuf tar;
	size_t files, skipped, bytes;
};

static int cmp_names(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Adds every regular file below dir (rel is its path inside the archive). */
static int pack_dir(struct packer *pk, const char *dir, const char *rel, struct nx_err *err)
{
	char **names = NULL;
	size_t n = 0, cap = 0;
	struct dirent *de;
	DIR *d = opendir(dir);
	int rc = 0;

	if (!d)
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
			rc = pack_dir(pk, path, name, err);
		} else if (!S_ISREG(st.st_mode)) {
			pk->skipped++; /* symlinks, sockets, devices */
		} else {
			char *data = NULL;
			size_t len = 0;

			rc = nx_read_file(path, &data, &len, err);
			if (!rc && pk->bytes + len > MAX_SOURCE_BYTES)
				rc = nx_errf(err, -EFBIG, "the sources exceed %zu MiB",
					     MAX_SOURCE_BYTES >> 20);
			if (!rc)
				rc = nx_tar_add(&pk->tar, name, data, len, err);
			if (!rc) {
				pk->files++;
				pk->bytes += len;
			}
			free(data);
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

/* Builds the gzipped archive for src into *gz. */
static int make_archive(const char *src, uint8_t **gz, size_t *gzlen, size_t *files,
			size_t *skipped, struct nx_err *err)
{
	struct packer pk = { NX_STRBUF_INIT, 0, 0, 0 };
	char *data = NULL;
	size_t len = 0;
	int rc;

	if (nx_is_dir(src)) {
		rc = pack_dir(&pk, src, "", err);
	} else if (is_archive_name(src)) {
		rc = nx_read_file(src, &data, &len, err);
		if (!rc && (len < 2 || (uint8_t)data[0] != 0x1f || (uint8_t)data[1] != 0x8b))
			rc = nx_errf(err, NX_ECORRUPT, "'%s' is not a gzip file", src);
		if (!rc) {
			*gz = (uint8_t *)data;
			*gzlen = len;
			*files = 1;
			*skipped = 0;
			return 0;
		}
		free(data);
		return rc;
	} else {
		const char *base = strrchr(src, '/');

		rc = nx_read_file(src, &data, &len, err);
		if (!rc)
			rc = nx_tar_add(&pk.tar, base ? base + 1 : src, data, len, err);
		pk.files = 1;
		free(data);
	}
	if (!rc && !pk.files)
		rc = nx_errf(err, NX_EUSAGE, "'%s' holds no regular files", src);
	if (!rc) {
		nx_tar_finish(&pk.tar);
		rc = nx_gzip((const uint8_t *)pk.tar.buf, pk.tar.len, gz, gzlen, err);
	}
	*files = pk.files;
	*skipped = pk.skipped;
	nx_strbuf_release(&pk.tar);
	return rc;
}

int cmd_upload(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "source-code", required_argument, NULL, 'c' },
		{ "data-path", required_argument, NULL, 'd' },
		{ "display-name", required_argument, NULL, 'N' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *src = NULL, *data_arg = DEFAULT_DATA_PATH, *name = NULL;
	char *data = NULL, *dir = NULL, *dest = NULL;
	struct nx_err err = { 0 };
	uint8_t *gz = NULL;
	size_t gzlen = 0, files = 0, skipped = 0;
	int c, ret = NX_EXIT_FAIL;

	optind = 1;
	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (c) {
		case 'c': src = optarg; break;
		case 'd': data_arg = optarg; break;
		case 'N': name = optarg; break;
		case 'h': usage(stdout); return NX_EXIT_OK;
		default: usage(stderr); return NX_EXIT_USAGE;
		}
	}
	if (optind < argc) {
		nx_cli_error("upload", "unexpected argument '%s'", argv[optind]);
		usage(stderr);
		return NX_EXIT_USAGE;
	}
	if (!src || !name) {
		nx_cli_error("upload", "--source-code and --display-name are required");
		usage(stderr);
		return NX_EXIT_USAGE;
	}
	if (nx_cli_name("upload", name) || nx_cli_data_path("upload", data_arg))
		return NX_EXIT_USAGE;
	data = nx_expand_home(data_arg);
	dir = nx_xasprintf("%s/profiles/global/%s@latest", data, name);
	if (!nx_is_dir(dir)) {
		nx_cli_error("upload", "no profile '%s' in '%s': ingest it first (neuron-explorer view "
			     "--ingest-only --display-name %s ...)", name, data, name);
		goto out;
	}
	if (!nx_is_dir(src) && !nx_is_file(src)) {
		nx_cli_error("upload", "'%s' is neither a directory nor a file", src);
		goto out;
	}
	dest = nx_path_join(dir, ARCHIVE);
	if (make_archive(src, &gz, &gzlen, &files, &skipped, &err) ||
	    nx_write_file_atomic(dest, gz, gzlen, &err)) {
		nx_cli_error("upload", "%s", err.msg);
		goto out;
	}
	printf("Stored %zu file%s from '%s' as %s (%zu bytes)%s\n", files, files == 1 ? "" : "s",
	       src, dest, gzlen, skipped ? "; skipped links and special files" : "");
	ret = NX_EXIT_OK;
out:
	free(gz);
	free(dest);
	free(dir);
	free(data);
	return ret;
}
