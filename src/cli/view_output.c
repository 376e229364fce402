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
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

bool nx_view_format_known(const char *format)
{
	return !strcmp(format, "parquet") || !strcmp(format, "summary-json") ||
	       !strcmp(format, "summary-text") || !strcmp(format, "perfetto");
}

/* The summary into output_file, through a temporary sibling. */
static int write_file(const char *profile_dir, bool json, const char *output_file,
		      struct nx_err *err)
{
	char *tmp = NULL;
	FILE *out = NULL;
	int fd, rc = nx_tmp_create(output_file, &tmp, &fd, err);

	if (rc)
		return rc;
	if (!(out = fdopen(fd, "w"))) {
		rc = nx_errf(err, -errno, "cannot write '%s': %s", tmp, strerror(errno));
		close(fd);
	}
	if (!rc)
		rc = nx_summary_print(profile_dir, json, out, err);
	if (out && fclose(out) != 0 && !rc)
		rc = nx_errf(err, -errno, "cannot write '%s': %s", tmp, strerror(errno));
	if (rc)
		unlink(tmp);
	else
		rc = nx_tmp_commit(tmp, output_file, err);
	free(tmp);
	return rc;
}

int nx_view_print_summary(const char *profile_dir, const char *name, const char *format,
			  const char *output_file)
{
	struct nx_err err = { 0 };
	bool json = !strcmp(format, "summary-json");
	int rc;

	if (output_file) {
		rc = write_file(profile_dir, json, output_file, &err);
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
