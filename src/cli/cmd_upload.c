/* SPDX-License-Identifier: MIT
 * cmd_upload.c: `neuron-explorer upload --source-code PATH`. Attaches source code
 * to an ingested profile as <data-path>/profiles/global/<name>@latest/
 * source_folder.tar.gz, which the API serves under .../fs/ for source views. A
 * directory is packed (regular files only, in sorted order, paths relative to
 * it); a .tar.gz/.tgz file is stored as it is; any other file is packed alone.
 * The archive is written to a temporary sibling and renamed into place. */
#include "common/compat.h"
#include "cli/cli_opts.h"
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
		NX_CLI_DEFAULT_DATA_PATH);
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

/* The command line, as parsed. */
struct upload_args {
	struct nx_cli_common co;
	const char *src;
};

/* Returns an exit status; NX_EXIT_OK with co.help set when --help was answered. */
static int parse(int argc, char **argv, struct upload_args *a)
{
	static const struct option opts[] = {
		{ "source-code", required_argument, NULL, 'c' },
		NX_CLI_LONG_DATA_PATH,
		NX_CLI_LONG_DISPLAY_NAME,
		NX_CLI_LONG_HELP,
		{ NULL, 0, NULL, 0 },
	};
	int c;

	memset(a, 0, sizeof(*a));
	nx_cli_common_init(&a->co, "upload");
	optind = 1;
	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		if (c == 'c') {
			a->src = optarg;
		} else if (!nx_cli_common_opt(&a->co, c, optarg)) {
			usage(stderr);
			return NX_EXIT_USAGE;
		} else if (a->co.help) {
			usage(stdout);
			return NX_EXIT_OK;
		}
	}
	if (optind < argc) {
		nx_cli_error("upload", "unexpected argument '%s'", argv[optind]);
		usage(stderr);
		return NX_EXIT_USAGE;
	}
	if (!a->src || !a->co.display_name) {
		nx_cli_error("upload", "--source-code and --display-name are required");
		usage(stderr);
		return NX_EXIT_USAGE;
	}
	return nx_cli_common_check(&a->co) ? NX_EXIT_USAGE : NX_EXIT_OK;
}

/* The profile directory the archive goes to; checks that it and the source exist. */
static int prepare(const struct upload_args *a, char **dir)
{
	const char *name = a->co.display_name;
	char *data = nx_cli_common_data_path(&a->co);
	int rc = NX_EXIT_FAIL;

	*dir = nx_xasprintf("%s/profiles/global/%s@latest", data, name);
	if (!nx_is_dir(*dir))
		nx_cli_error("upload", "no profile '%s' in '%s': ingest it first (neuron-explorer "
			     "view --ingest-only --display-name %s ...)", name, data, name);
	else if (!nx_is_dir(a->src) && !nx_is_file(a->src))
		nx_cli_error("upload", "'%s' is neither a directory nor a file", a->src);
	else
		rc = NX_EXIT_OK;
	free(data);
	return rc;
}

/* Packs the source and stores it as dir/ARCHIVE. */
static int run(const char *src, const char *dir)
{
	struct nx_err err = { 0 };
	char *dest = nx_path_join(dir, ARCHIVE);
	uint8_t *gz = NULL;
	size_t gzlen = 0, files = 0, skipped = 0;
	int rc = NX_EXIT_OK;

	if (make_archive(src, &gz, &gzlen, &files, &skipped, &err) ||
	    nx_write_file_atomic(dest, gz, gzlen, &err)) {
		nx_cli_error("upload", "%s", err.msg);
		rc = NX_EXIT_FAIL;
	} else {
		printf("Stored %zu file%s from '%s' as %s (%zu bytes)%s\n", files,
		       files == 1 ? "" : "s", src, dest, gzlen,
		       skipped ? "; skipped links and special files" : "");
	}
	free(gz);
	free(dest);
	return rc;
}

int cmd_upload(int argc, char **argv)
{
	struct upload_args a;
	char *dir = NULL;
	int rc = parse(argc, argv, &a);

	if (rc || a.co.help)
		return rc;
	rc = prepare(&a, &dir);
	if (!rc)
		rc = run(a.src, dir);
	free(dir);
	return rc;
}
