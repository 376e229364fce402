/* SPDX-License-Identifier: MIT
 * view_dir.c: `view -d DIR` for cmd_view (see view_dir.h); turns library errors into
 * messages and exit statuses. */
#include "common/compat.h"
#include "cli/view_dir.h"
#include "cli/commands.h"
#include "cli/view_progress.h"
#include "cli/view_cache.h"
#include "ingest/ingest_dir.h"

#include <stdio.h>
#include <string.h>

int nx_view_dir(const char *dir, const char *data_path, const char *name,
		const char *output_dir, bool quiet, char **published)
{
	struct nx_trace_opts o = { 0 };
	struct nx_err err = { 0 };
	struct nx_view_progress vp;

	if (!dir || !dir[0]) {
		nx_cli_error("view", "-d needs a directory or a trace file");
		return NX_EXIT_USAGE;
	}
	o.input = dir;
	o.data_path = data_path;
	o.display_name = name;
	o.output_dir = output_dir;
	o.before_publish = &nx_view_cache_hook;
	nx_view_progress_init(&vp, quiet);
	o.progress = &vp.cb;
	if (nx_trace_ingest_dir(&o, published, &err)) {
		nx_view_progress_clear(&vp);
		nx_cli_error("view", "%s", err.msg);
		return err.code == NX_EUSAGE ? NX_EXIT_USAGE : NX_EXIT_FAIL;
	}
	return NX_EXIT_OK;
}
