/* SPDX-License-Identifier: MIT
 * cmd_kernel.c: placeholder for the 'kernel' subcommand until it lands. */
#include "common/compat.h"
#include "cli/commands.h"

#include <stdio.h>
#include <string.h>

int cmd_kernel(int argc, char **argv)
{
	if (argc > 1 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))) {
		printf("usage: neuron-explorer kernel\n\nThis build does not implement 'kernel' yet.\n");
		return NX_EXIT_OK;
	}
	nx_cli_error("kernel", "this build does not implement 'kernel' yet");
	return NX_EXIT_FAIL;
}
