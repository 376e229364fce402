/* SPDX-License-Identifier: MIT
 * cli_util.h: argument checks shared by the subcommands. Each prints its own message
 * ("neuron-explorer <cmd>: ...") and returns -1 on a bad value, so the caller only
 * returns NX_EXIT_USAGE. */
#ifndef NX_CLI_UTIL_H
#define NX_CLI_UTIL_H

#include "common/compat.h"

/* A decimal integer in [min, max]: no sign, no spaces, no overflow. */
int nx_cli_uint(const char *cmd, const char *flag, const char *arg, unsigned long long min,
		unsigned long long max, unsigned long long *out);

/* What getopt_long returned for an option it did not take (opterr = 0 and an optstring
 * starting with ':'): says which option, and where the help is; returns NX_EXIT_USAGE. */
int nx_cli_bad_option(const char *cmd, int c, char *const *argv);

/* A display name that follows the one naming rule (NX_NAME_RULE in ingest/ingest.h). */
int nx_cli_name(const char *cmd, const char *name);

/* The default display name of an input: its file name without directory, trailing
 * slashes and extensions (caller frees). */
char *nx_cli_default_name(const char *path);

/* A --data-path value: not empty (an empty one would put profiles under /profiles), and
 * not something other than a directory. */
int nx_cli_data_path(const char *cmd, const char *path);


/* A temporary data path $TMPDIR/nx-<what>-XXXXXX (or /tmp; nx_make_temp_dir), removed by
 * nx_cli_tmp_release() and also when SIGINT, SIGTERM or SIGHUP interrupts the command:
 * from the first call on, those signals are handled by a dedicated thread that removes
 * the directory and then ends the process with the signal's default action. Returns
 * NULL (message printed) on failure. Not for commands that serve (view's server waits
 * for the same signals). */
char *nx_cli_tmp_data_path(const char *cmd, const char *what);
void nx_cli_tmp_release(char *path);
/* The same for the output files being written (common/outpath.h): from this call on,
 * those signals remove their temporary files before ending the process. For the
 * commands that write output files (not those that serve). */
void nx_cli_guard_outputs(void);

#endif
