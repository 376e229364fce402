/* SPDX-License-Identifier: MIT
 * cli_output.h: the output paths of the commands, checked against the one output rule
 * (common/outpath.h) before any work: which kind of file each output is (the module that
 * writes a kind recognises its files by their first bytes), and the message and exit
 * status of a refusal. */
#ifndef NX_CLI_OUTPUT_H
#define NX_CLI_OUTPUT_H

#include "common/compat.h"
#include "common/outpath.h"

enum nx_cli_out {
	NX_CLI_OUT_NEFF,         /* kernel gen/asm -o */
	NX_CLI_OUT_NTFF,         /* capture -s */
	NX_CLI_OUT_LISTING,      /* kernel gen/asm --listing */
	NX_CLI_OUT_SUMMARY_JSON, /* view --output-format summary-json --output-file */
	NX_CLI_OUT_SUMMARY_TEXT, /* ... summary-text */
	NX_CLI_OUT_PERFETTO,     /* ... perfetto */
	NX_CLI_OUT_JSON,         /* ... json */
};

const struct nx_out_kind *nx_cli_out_kind(enum nx_cli_out kind);

/* An output file of the given kind, with the rule's flags (NX_OUT_*). Prints the refusal
 * as "neuron-explorer <cmd>: ..." and returns its exit status (2 for a refusal, 1 for
 * an error such as a missing directory), or 0. */
int nx_cli_out_file(const char *cmd, const char *path, enum nx_cli_out kind, unsigned flags);

/* An output directory (view --output-file with parquet, fleet export -o); data_path is
 * protected. Prints the refusal and returns 2, or 0. */
int nx_cli_out_dir(const char *cmd, const char *path, const char *data_path);

#endif
