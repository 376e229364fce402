/* SPDX-License-Identifier: MIT
 * cmd_capture.c: placeholder for the 'capture' subcommand until it lands. */
#include "common/compat.h"
#include "cli/commands.h"

#include <stdio.h>
#include <string.h>

int cmd_capture(int argc, char **argv)
{
	if (argc > 1 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))) {
		printf("usage: neuron-explorer capture\n\nThis build does not implement 'capture' yet.\n");
		return NX_EXIT_OK;
	}
	nx_cli_error("capture", "this build does not implement 'capture' yet");
	return NX_EXIT_FAIL;
}
