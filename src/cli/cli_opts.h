/* SPDX-License-Identifier: MIT
 * cli_opts.h: the options several subcommands share, handled in one place:
 * --data-path (with its one default), --display-name, -q/--quiet and -h/--help.
 * A command lists the ones it accepts in its getopt table with the NX_CLI_LONG_*
 * entries, passes every option to nx_cli_common_opt() first, and checks the values
 * with nx_cli_common_check() once parsing is done. */
#ifndef NX_CLI_OPTS_H
#define NX_CLI_OPTS_H

#include "common/compat.h"

#include <getopt.h>

/* Where processed profiles live unless --data-path says otherwise. */
#define NX_CLI_DEFAULT_DATA_PATH "~/.local/share/neuron-profile"

/* getopt values of the common long options without a short form */
enum { NX_CLI_OPT_DATA_PATH = 0x1000, NX_CLI_OPT_DISPLAY_NAME };

#define NX_CLI_LONG_DATA_PATH { "data-path", required_argument, NULL, NX_CLI_OPT_DATA_PATH }
#define NX_CLI_LONG_DISPLAY_NAME                                                                \
	{ "display-name", required_argument, NULL, NX_CLI_OPT_DISPLAY_NAME }
#define NX_CLI_LONG_QUIET { "quiet", no_argument, NULL, 'q' }
#define NX_CLI_LONG_HELP { "help", no_argument, NULL, 'h' }

struct nx_cli_common {
	const char *cmd;          /* "view", "kernel gen", ...: prefix of the messages */
	const char *data_path;    /* --data-path as given, or NX_CLI_DEFAULT_DATA_PATH */
	bool data_path_given;
	const char *display_name; /* --display-name, NULL when not given */
	bool quiet;               /* -q */
	bool help;                /* -h: the caller prints its usage to stdout */
};

void nx_cli_common_init(struct nx_cli_common *co, const char *cmd);

/* Takes getopt's result c (and optarg) when it is a common option: returns true when
 * it was one. */
bool nx_cli_common_opt(struct nx_cli_common *co, int c, const char *arg);

/* After parsing: the data path is not empty and the display name (when given) follows
 * the naming rule. Prints the message and returns -1 otherwise. */
int nx_cli_common_check(const struct nx_cli_common *co);

/* The data path with ~ expanded (caller frees). */
char *nx_cli_common_data_path(const struct nx_cli_common *co);

#endif
