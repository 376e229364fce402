/* SPDX-License-Identifier: MIT
 * commands.h: the subcommands of neuron-explorer. Each lives in cmd_<name>.c, parses
 * its own options, prints its own --help, and returns the process exit status:
 * 0 success, 1 failure, 2 usage error. */
#ifndef NX_CLI_COMMANDS_H
#define NX_CLI_COMMANDS_H

int cmd_view(int argc, char **argv);
int cmd_capture(int argc, char **argv);
int cmd_recommend(int argc, char **argv);
int cmd_upload(int argc, char **argv);
int cmd_kernel(int argc, char **argv);
int cmd_fleet(int argc, char **argv);
int cmd_nki(int argc, char **argv);
int cmd_inspect(int argc, char **argv);

#include <stdio.h>

/* The program's name in messages: "neuron-explorer", or "neuron-profile" when called by
 * its old name (main.c). */
extern const char *nx_cli_prog;

/* Shared by the commands: print "<prog> <cmd>: <msg>" to stderr. */
void nx_cli_error(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Prints a usage or help text, with "neuron-explorer" in it written as nx_cli_prog. */
void nx_cli_usage(FILE *out, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

enum { NX_EXIT_OK = 0, NX_EXIT_FAIL = 1, NX_EXIT_USAGE = 2 };

#endif
