/* SPDX-License-Identifier: MIT
 * view_output.c: summary-json and summary-text output of `view`: exactly the fields
 * and values of the profile's Summary table, read back from its parquet file, printed
 * to stdout or written to the output file through a temporary sibling (a failure
 * leaves the file as it was). */
#include "common/compat.h"
#include "cli/view_output.h"
#include "cli/commands.h"
#include "common/fsutil.h"
#include "export/summary_print.h"

#include <stdio.h>
#include <string.h>

bool nx_view_format_known(const char *format)
{
	return !strcmp(format, "parquet") || !strcmp(format, "summary-json") ||
	       !strcmp(format, "summary-text") || !strcmp(format, "perfetto");
}

struct summary_job {
	const char *profile_dir;
	bool json;
};

static int summary_job(void *arg, FILE *out, struct nx_err *err)
{
	struct summary_job *j = arg;

	return nx_summary_print(j->profile_dir, j->json, out, err);
}

int nx_view_print_summary(const char *profile_dir, const char *name, const char *format,
			  const char *output_file)
{
	struct nx_err err = { 0 };
	bool json = !strcmp(format, "summary-json");
	int rc;

	if (output_file) {
		struct summary_job j = { profile_dir, json };
		rc = nx_write_stream_atomic(output_file, summary_job, &j, &err);
	} else {
		rc = nx_summary_print(profile_dir, json, stdout, &err);
		if (!rc && fflush(stdout) != 0)
			rc = nx_errf(&err, -errno, "cannot write the summary to stdout: %s",
				     strerror(errno));
	}
	if (rc == NX_ENOTFOUND)
		nx_cli_error("view", "profile '%s' has no device Summary: it holds framework traces "
			     "only, no NEFF/NTFF pair; %s describes a device profile (--output-format "
			     "perfetto exports the trace's events)", name, format);
	else if (rc)
		nx_cli_error("view", "%s", err.msg);
	return rc ? NX_EXIT_FAIL : NX_EXIT_OK;
}
