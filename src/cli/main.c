/* SPDX-License-Identifier: MIT
 * main.c: entry point of the neuron-explorer binary. Handles the global options
 * (--version, --help, --show-profile-schema) and dispatches to a subcommand. */
#include "common/compat.h"
#include "cli/commands.h"
#include "schema/schema.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

struct nx_cmd {
	const char *name;
	int (*fn)(int argc, char **argv);
	const char *summary;
};

static const struct nx_cmd cmds[] = {
	{ "view", cmd_view, "ingest a NEFF + NTFF into parquet tables and serve the query API" },
	{ "capture", cmd_capture, "execute a NEFF on the NeuronCore simulator and write an NTFF" },
	{ "recommend", cmd_recommend, "compute performance bounds, gaps and source-line findings" },
	{ "upload", cmd_upload, "attach a source archive to an ingested profile" },
	{ "kernel", cmd_kernel, "pack kernel listings into NEFFs and generate library kernels" },
	{ "fleet", cmd_fleet, "ingest a whole run locally or on Slurm; index, stragglers, export" },
	{ "nki", cmd_nki, "run NKI kernels (Python) on the simulator: the shim's path, nki run" },
};

void nx_cli_error(const char *cmd, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "neuron-explorer%s%s: ", cmd ? " " : "", cmd ? cmd : "");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

static void usage(FILE *out)
{
	fprintf(out, "usage: neuron-explorer [--version] [--help] [--show-profile-schema]\n"
		     "                       <command> [<args>]\n\ncommands:\n");
	for (size_t i = 0; i < NX_ARRAY_SIZE(cmds); i++)
		fprintf(out, "  %-10s %s\n", cmds[i].name, cmds[i].summary);
	fprintf(out, "\nRun 'neuron-explorer <command> --help' for the options of a command.\n");
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		usage(stderr);
		return NX_EXIT_USAGE;
	}
	const char *a = argv[1];
	if (!strcmp(a, "--version") || !strcmp(a, "-v") || !strcmp(a, "version")) {
		printf("neuron-explorer %s (profile schema %s)\n", NX_VERSION, nx_schema_version());
		return NX_EXIT_OK;
	}
	if (!strcmp(a, "--help") || !strcmp(a, "-h") || !strcmp(a, "help")) {
		usage(stdout);
		return NX_EXIT_OK;
	}
	if (!strcmp(a, "--show-profile-schema")) {
		nx_schema_print_yaml(stdout);
		return NX_EXIT_OK;
	}
	for (size_t i = 0; i < NX_ARRAY_SIZE(cmds); i++)
		if (!strcmp(a, cmds[i].name))
			return cmds[i].fn(argc - 1, argv + 1);
	nx_cli_error(NULL, "'%s' is not a command", a);
	usage(stderr);
	return NX_EXIT_USAGE;
}
