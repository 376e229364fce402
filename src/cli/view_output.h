/* SPDX-License-Identifier: MIT
 * view_output.h: the output formats of `view` other than parquet, written from a
 * published profile: summary-json and summary-text (export/summary_print.h), json
 * (export/json_export.h) and perfetto (export/perfetto.h), to stdout or to an output
 * file under the output rule of common/outpath.h. */
#ifndef NX_CLI_VIEW_OUTPUT_H
#define NX_CLI_VIEW_OUTPUT_H

#include "common/compat.h"

/* The json format's file when --output-file is not given (the old tool's default). */
#define NX_VIEW_JSON_DEFAULT_FILE "ntff.json"

/* The name of a format as given, with the old tool's names ("db") taken as ours; NULL
 * for an unknown one. */
const char *nx_view_format(const char *given);

/* Checks, before any work, that the export's output file may be written (force:
 * --force); *output_file gets the default file of the format when it needs one and none
 * was given, else NULL is stdout. Returns an exit status (the message printed). */
int nx_view_output_check(const char *format, const char **output_file, bool force);

/* Writes the export of format for the published profile `name` in dir to output_file
 * (NULL or "-": stdout). scratch: a
 * temporary directory the command already has (its files are the export's to use), or
 * NULL. Returns an exit status (the message printed). */
int nx_view_export(const char *dir, const char *name, const char *format,
		   const char *output_file, bool force, bool quiet, const char *scratch);

#endif
