/* SPDX-License-Identifier: MIT
 * cmd_recommend.c: placeholder for the 'recommend' subcommand until it lands. */
#include "common/compat.h"
#include "cli/commands.h"

#include <stdio.h>
#include <string.h>

int cmd_recommend(int argc, char **argv)
{
	if (argc > 1 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))) {
		printf("usage: neuron-explorer recommend\n\nThis build does not implement 'recommend' yet.\n");
		return NX_EXIT_OK;
	}
	nx_cli_error("recommend", "this build does not implement 'recommend' yet");
	return NX_EXIT_FAIL;
}
