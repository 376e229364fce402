/* SPDX-License-Identifier: MIT
 * cli_output.c: output paths checked before any work (see cli_output.h). */
#include "common/compat.h"
#include "cli/cli_output.h"
#include "cli/commands.h"
#include "export/json_export.h"
#include "export/perfetto.h"
#include "export/summary_print.h"
#include "kernels/library.h"
#include "neff/neff.h"
#include "ntff/ntff.h"

static const struct nx_out_kind *const kinds[] = {
	[NX_CLI_OUT_NEFF] = &nx_neff_out_kind,
	[NX_CLI_OUT_NTFF] = &nx_ntff_out_kind,
	[NX_CLI_OUT_LISTING] = &nx_listing_out_kind,
	[NX_CLI_OUT_SUMMARY_JSON] = &nx_summary_json_out_kind,
	[NX_CLI_OUT_SUMMARY_TEXT] = &nx_summary_text_out_kind,
	[NX_CLI_OUT_PERFETTO] = &nx_perfetto_out_kind,
	[NX_CLI_OUT_JSON] = &nx_json_out_kind,
};

const struct nx_out_kind *nx_cli_out_kind(enum nx_cli_out kind)
{
	return kinds[kind];
}

int nx_cli_out_file(const char *cmd, const char *path, enum nx_cli_out kind, unsigned flags)
{
	struct nx_err err = { 0 };

	if (!nx_out_file_check(path, kinds[kind], flags, &err))
		return NX_EXIT_OK;
	nx_cli_error(cmd, "%s", err.msg);
	return err.code == NX_EUSAGE ? NX_EXIT_USAGE : NX_EXIT_FAIL;
}

int nx_cli_out_dir(const char *cmd, const char *path, const char *data_path)
{
	struct nx_err err = { 0 };

	if (!nx_out_dir_check(path, data_path, &err))
		return NX_EXIT_OK;
	nx_cli_error(cmd, "%s", err.msg);
	return err.code == NX_EUSAGE ? NX_EXIT_USAGE : NX_EXIT_FAIL;
}
