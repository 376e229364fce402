/* SPDX-License-Identifier: MIT
 * view_output.h: the non-parquet output formats of `view` (summary-json,
 * summary-text), printed from a published profile's Summary table. */
#ifndef NX_CLI_VIEW_OUTPUT_H
#define NX_CLI_VIEW_OUTPUT_H

#include "common/compat.h"

bool nx_view_format_known(const char *format);
/* Prints the summary of the profile `name` (in profile_dir) in `format` to output_file
 * (or stdout); returns an exit status (1, printing nothing, for a profile without a
 * device Summary). */
int nx_view_print_summary(const char *profile_dir, const char *name, const char *format,
			  const char *output_file);

#endif
