/* SPDX-License-Identifier: MIT
 * view_output.c: `view`'s exports (see view_output.h): the output file (or stdout) is
 * opened through the output-file writer of common/outpath.h (its temporary file removed
 * if the command is interrupted), the export written, then the file put in place. */
#include "common/compat.h"
#include "cli/view_output.h"
#include "cli/cli_output.h"
#include "cli/cli_util.h"
#include "cli/commands.h"
#include "cli/view_progress.h"
#include "common/outpath.h"
#include "common/strbuf.h"
#include "common/xalloc.h"
#include "export/json_export.h"
#include "export/perfetto.h"
#include "export/summary_print.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *nx_view_format(const char *given)
{
	static const char *const known[] = { "parquet", "json", "summary-json", "summary-text",
					     "perfetto" };

	if (!strcmp(given, "db")) /* the old tool's database output: our parquet tables */
		return "parquet";
	for (size_t i = 0; i < NX_ARRAY_SIZE(known); i++)
		if (!strcmp(given, known[i]))
			return known[i];
	return NULL;
}

/* The output rule's kind of an export format, and the rule's flags for view. */
static enum nx_cli_out kind_of(const char *format)
{
	return !strcmp(format, "json")	       ? NX_CLI_OUT_JSON
	       : !strcmp(format, "perfetto")     ? NX_CLI_OUT_PERFETTO
	       : !strcmp(format, "summary-json") ? NX_CLI_OUT_SUMMARY_JSON
						 : NX_CLI_OUT_SUMMARY_TEXT;
}

static unsigned flags_of(bool force)
{
	return NX_OUT_STREAM | NX_OUT_CAN_FORCE | (force ? NX_OUT_FORCE : 0);
}

int nx_view_output_check(const char *format, const char **output_file, bool force)
{
	if (!strcmp(format, "parquet"))
		return NX_EXIT_OK;
	if (!*output_file && !strcmp(format, "json"))
		*output_file = NX_VIEW_JSON_DEFAULT_FILE;
	if (!*output_file)
		return NX_EXIT_OK; /* stdout */
	return nx_cli_out_file("view", *output_file, kind_of(format), flags_of(force));
}

/* The json export, its large tables read in slices under scratch (a temporary directory
 * of its own when scratch is NULL). */
static int write_json(const char *dir, FILE *out, const char *scratch, bool quiet,
		      struct nx_json_stats *st, struct nx_err *err)
{
	struct nx_view_progress vp;
	struct nx_json_opts o = { .progress = &vp.cb, .scratch = scratch };
	char *own = NULL;
	int rc;

	if (!scratch && !(o.scratch = own = nx_cli_tmp_data_path("view", "json")))
		return nx_errf(err, NX_EUSAGE, "no temporary directory for the export");
	nx_view_progress_init(&vp, quiet);
	rc = nx_export_json(dir, out, &o, st, err);
	nx_view_progress_clear(&vp);
	nx_cli_tmp_release(own);
	return rc;
}

/* Writes the export to out; *what gets the line saying what was written (or NULL). */
static int write_export(const char *dir, const char *name, const char *format, FILE *out,
			const char *scratch, bool quiet, char **what, struct nx_err *err)
{
	int rc;

	*what = NULL;
	if (!strcmp(format, "json")) {
		struct nx_json_stats st;
		rc = write_json(dir, out, scratch, quiet, &st, err);
		if (!rc)
			*what = nx_xasprintf("%" PRIu64 " records (%" PRIu64 " instructions)",
					     st.records, st.instructions);
		return rc;
	}
	if (!strcmp(format, "perfetto")) {
		struct nx_export_stats st;
		rc = nx_export_perfetto_stream(dir, out, &st, err);
		if (!rc)
			*what = nx_xasprintf("%" PRIu64 " trace events (Chrome JSON: open it in "
					     "https://ui.perfetto.dev)", st.events);
		return rc;
	}
	struct nx_strbuf text = NX_STRBUF_INIT; /* a summary is made whole, then written */
	rc = nx_summary_format(dir, name, !strcmp(format, "summary-json"), &text, err);
	if (!rc)
		fputs(nx_strbuf_str(&text), out);
	nx_strbuf_release(&text);
	return rc;
}

int nx_view_export(const char *dir, const char *name, const char *format,
		   const char *output_file, bool force, bool quiet, const char *scratch)
{
	const char *path = output_file ? output_file : "-";
	struct nx_err err = { 0 };
	struct nx_out_file f;
	char *what = NULL;
	int rc;

	nx_cli_guard_outputs();
	if (nx_out_file_open(&f, path, nx_cli_out_kind(kind_of(format)), flags_of(force), &err)) {
		nx_cli_error("view", "%s", err.msg);
		return err.code == NX_EUSAGE ? NX_EXIT_USAGE : NX_EXIT_FAIL;
	}
	rc = write_export(dir, name, format, f.fp, scratch, quiet, &what, &err);
	if (rc)
		nx_out_file_abort(&f);
	else
		rc = nx_out_file_commit(&f, &err);
	if (rc) {
		nx_cli_error("view", "%s", err.msg);
		free(what);
		return err.code == NX_EUSAGE ? NX_EXIT_USAGE : NX_EXIT_FAIL;
	}
	if (what && !quiet)
		fprintf(stderr, "Wrote %s to %s\n", what, strcmp(path, "-") ? path : "stdout");
	free(what);
	return NX_EXIT_OK;
}
