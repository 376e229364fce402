/* SPDX-License-Identifier: MIT
 * cmd_upload.c: placeholder for the 'upload' subcommand until it lands. */
#include "common/compat.h"
#include "cli/commands.h"

#include <stdio.h>
#include <string.h>

int cmd_upload(int argc, char **argv)
{
	if (argc > 1 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))) {
		printf("usage: neuron-explorer upload\n\nThis build does not implement 'upload' yet.\n");
		return NX_EXIT_OK;
	}
	nx_cli_error("upload", "this build does not implement 'upload' yet");
	return NX_EXIT_FAIL;
}
