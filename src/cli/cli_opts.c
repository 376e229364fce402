/* SPDX-License-Identifier: MIT
 * cli_opts.c: the options shared by the subcommands (see cli_opts.h). */
#include "common/compat.h"
#include "cli/cli_opts.h"
#include "cli/cli_util.h"
#include "common/fsutil.h"

#include <string.h>

void nx_cli_common_init(struct nx_cli_common *co, const char *cmd)
{
	memset(co, 0, sizeof(*co));
	co->cmd = cmd;
	co->data_path = NX_CLI_DEFAULT_DATA_PATH;
}

bool nx_cli_common_opt(struct nx_cli_common *co, int c, const char *arg)
{
	switch (c) {
	case NX_CLI_OPT_DATA_PATH:
		co->data_path = arg;
		co->data_path_given = true;
		return true;
	case NX_CLI_OPT_DISPLAY_NAME:
		co->display_name = arg;
		return true;
	case 'q':
		co->quiet = true;
		return true;
	case 'h':
		co->help = true;
		return true;
	default:
		return false;
	}
}

int nx_cli_common_check(const struct nx_cli_common *co)
{
	if (nx_cli_data_path(co->cmd, co->data_path))
		return -1;
	if (co->display_name && nx_cli_name(co->cmd, co->display_name))
		return -1;
	return 0;
}

char *nx_cli_common_data_path(const struct nx_cli_common *co)
{
	return nx_expand_home(co->data_path);
}
