/* SPDX-License-Identifier: MIT
 * cmd_upload.c: `neuron-explorer upload --source-code PATH`. Attaches source code
 * to an ingested profile as <data-path>/profiles/global/<name>@latest/
 * source_folder.tar.gz, which the API serves under .../fs/ for source views
 * (ingest/upload.c does the work, streamed, within one cap). */
#include "common/compat.h"
#include "cli/cli_opts.h"
#include "cli/cli_util.h"
#include "cli/commands.h"
#include "common/source_archive.h"
#include "ingest/upload.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void usage(FILE *out)
{
	fprintf(out,
		"usage: neuron-explorer upload --source-code PATH --display-name NAME\n"
		"                              [--data-path DIR]\n"
		"\n"
		"Stores source code next to an ingested profile, as\n"
		"DIR/profiles/global/NAME@latest/" NX_SOURCE_ARCHIVE ", where the API and the\n"
		"source views find it. PATH is a directory (packed as a gzipped tar: its regular\n"
		"files, without symbolic links), an existing .tar.gz/.tgz archive (stored as\n"
		"is), or a single file. The archive may unpack to at most "
		NX_SOURCE_ARCHIVE_MAX_TEXT " (the web UI\n"
		"unpacks it in the browser); a larger one is refused before it is read. The\n"
		"archive stays attached when the profile is ingested again, until the next\n"
		"upload replaces it.\n"
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
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":h", opts, NULL)) != -1) {
		if (c == 'c') {
			a->src = optarg;
		} else if (!nx_cli_common_opt(&a->co, c, optarg)) {
			return nx_cli_bad_option("upload", c, argv);
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

int cmd_upload(int argc, char **argv)
{
	struct upload_args a;
	struct nx_upload_stats st;
	struct nx_err err = { 0 };
	char *data, *dest = NULL;
	int rc = parse(argc, argv, &a);

	if (rc || a.co.help)
		return rc;
	data = nx_cli_common_data_path(&a.co);
	rc = nx_upload_source(data, a.co.display_name, a.src, &st, &dest, &err);
	if (rc && st.no_profile)
		nx_cli_error("upload", "%s: ingest it first (%s view --ingest-only "
			     "--data-path %s --display-name %s ...)", err.msg, nx_cli_prog,
			     a.co.data_path, a.co.display_name);
	else if (rc)
		nx_cli_error("upload", "%s", err.msg);
	else if (st.as_is)
		printf("Stored '%s' as %s (%llu bytes, unpacking to %llu)\n", a.src, dest,
		       (unsigned long long)st.gz_bytes, (unsigned long long)st.tar_bytes);
	else
		printf("Stored %zu file%s from '%s' as %s (%llu bytes)%s\n", st.files,
		       st.files == 1 ? "" : "s", a.src, dest, (unsigned long long)st.gz_bytes,
		       st.skipped ? "; skipped links and special files" : "");
	free(dest);
	free(data);
	return !rc ? NX_EXIT_OK : err.code == NX_EUSAGE ? NX_EXIT_USAGE : NX_EXIT_FAIL;
}
