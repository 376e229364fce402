/* SPDX-License-Identifier: MIT
 * view_output.c: summary-json and summary-text output of `view`: exactly the fields
 * and values of the profile's Summary table, read back from its parquet file. */
#include "common/compat.h"
#include "cli/view_output.h"
#include "cli/commands.h"
#include "export/summary_print.h"

#include <stdio.h>
#include <string.h>

bool nx_view_format_known(const char *format)
{
	return !strcmp(format, "parquet") || !strcmp(format, "summary-json") ||
	       !strcmp(format, "summary-text") || !strcmp(format, "perfetto");
}

int nx_view_print_summary(const char *profile_dir, const char *format, const char *output_file)
{
	struct nx_err err = { 0 };
	FILE *out = stdout;

	if (output_file && !(out = fopen(output_file, "w"))) {
		nx_cli_error("view", "cannot write '%s'", output_file);
		return NX_EXIT_FAIL;
	}
	int rc = nx_summary_print(profile_dir, !strcmp(format, "summary-json"), out, &err);
	if (out != stdout && fclose(out) != 0 && !rc)
		rc = nx_errf(&err, -EIO, "cannot write '%s'", output_file);
	if (rc) {
		nx_cli_error("view", "%s", err.msg);
		return NX_EXIT_FAIL;
	}
	return NX_EXIT_OK;
}
