/* SPDX-License-Identifier: MIT
 * main.c: entry point of the neuron-explorer binary (also installed as neuron-profile, the
 * tool's name until Neuron 2.29: argv[0] picks the name its messages use, nothing else).
 * Handles the global options (--version, --help, --show-profile-schema, --log-level) and
 * the log level of NX_LOG, and dispatches to a subcommand. */
#include "common/compat.h"
#include "cli/commands.h"
#include "common/log.h"
#include "schema/schema.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NAME "neuron-explorer"
#define OLD_NAME "neuron-profile"

const char *nx_cli_prog = NAME;

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
	{ "inspect", cmd_inspect, "run a program's NKI kernels, keeping their device profiles "
				  "and a host trace" },
};

void nx_cli_error(const char *cmd, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "%s%s%s: ", nx_cli_prog, cmd ? " " : "", cmd ? cmd : "");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

void nx_cli_usage(FILE *out, const char *fmt, ...)
{
	va_list ap;
	char *text = NULL;
	size_t name = strlen(NAME);

	va_start(ap, fmt);
	if (vasprintf(&text, fmt, ap) < 0)
		text = NULL;
	va_end(ap);
	if (!text)
		return;
	for (const char *p = text, *hit; *p; p = hit + name) {
		if (!(hit = strstr(p, NAME)) || !strcmp(nx_cli_prog, NAME)) {
			fputs(p, out);
			break;
		}
		fwrite(p, 1, (size_t)(hit - p), out);
		fputs(nx_cli_prog, out);
	}
	free(text);
}

static void usage(FILE *out)
{
	nx_cli_usage(out, "usage: neuron-explorer [--version] [--help] [--show-profile-schema]\n"
			  "                       [--log-level LEVEL] <command> [<args>]\n\n"
			  "commands:\n");
	for (size_t i = 0; i < NX_ARRAY_SIZE(cmds); i++)
		fprintf(out, "  %-10s %s\n", cmds[i].name, cmds[i].summary);
	fprintf(out, "\n--log-level LEVEL  what the server logs on stderr: " NX_LOG_LEVELS "\n"
		     "                   (default info: the access log; warn: warnings and errors)\n"
		     "environment: NX_LOG=LEVEL sets the same (--log-level wins)\n");
	nx_cli_usage(out, "\nRun 'neuron-explorer <command> --help' for the options of a "
			  "command.\n");
	if (strcmp(nx_cli_prog, NAME))
		fprintf(out, "\n%s is the old name of neuron-explorer: the same program, the same "
			"commands and options.\n", nx_cli_prog);
}

/* The name the program was called by: the old name when argv[0] ends in it. */
static const char *prog_name(const char *argv0)
{
	const char *base = argv0 ? strrchr(argv0, '/') : NULL;

	base = base ? base + 1 : argv0;
	return base && !strcmp(base, OLD_NAME) ? OLD_NAME : NAME;
}

/* Sets the log level from `from` (an option or NX_LOG); 0, or -1 with a message. */
static int set_log_level(const char *from, const char *name)
{
	enum nx_log_level level;

	if (nx_log_parse_level(name, &level)) {
		nx_cli_error(NULL, "%s: '%s' is not a log level (%s)", from, name ? name : "",
			     NX_LOG_LEVELS);
		return -1;
	}
	nx_log_set_level(level);
	return 0;
}

int main(int argc, char **argv)
{
	const char *env = getenv("NX_LOG");

	nx_cli_prog = prog_name(argc > 0 ? argv[0] : NULL);
	if (env && *env && set_log_level("NX_LOG", env))
		return NX_EXIT_USAGE;
	/* --log-level LEVEL or --log-level=LEVEL before the command */
	while (argc >= 2 && !strncmp(argv[1], "--log-level", 11) &&
	       (argv[1][11] == '\0' || argv[1][11] == '=')) {
		int used = argv[1][11] == '=' ? 1 : 2;
		if (set_log_level("--log-level", used == 1 ? argv[1] + 12 : argv[2]))
			return NX_EXIT_USAGE;
		argc -= used;
		argv += used;
	}
	if (argc < 2) {
		usage(stderr);
		return NX_EXIT_USAGE;
	}
	const char *a = argv[1];
	if (!strcmp(a, "--version") || !strcmp(a, "-v") || !strcmp(a, "version")) {
		printf("%s %s (profile schema %s)\n", nx_cli_prog, NX_VERSION, nx_schema_version());
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
