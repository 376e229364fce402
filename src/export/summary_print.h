/* SPDX-License-Identifier: MIT
 * summary_print.h: the summary exports of `view`, made as text that src/cli writes out,
 * with one entry per device profile the published profile stands for
 * (export/profile_set.h: itself; a directory-mode profile's further pairs; a fleet run's
 * members), each keyed by that profile's name:
 *   summary-json: one JSON object whose members are named after the profiles, each
 *     holding that profile's Summary fields and values ({"NAME": {"total_time": ...}});
 *   summary-text: the fixed-order key/value table of each, preceded by a
 *     `profile_name` line when there are several.
 * Profiles without a Summary row (framework traces only) have no entry; a profile with
 * none at all is an NX_ENOTFOUND error. */
#ifndef NX_EXPORT_SUMMARY_PRINT_H
#define NX_EXPORT_SUMMARY_PRINT_H

#include "common/compat.h"
#include "common/err.h"
#include "common/outpath.h"
#include <stdio.h>

/* The documents these exports wrote, recognised by their first NX_OUT_HEAD bytes (the
 * output rule's kinds): summary-json is an object holding "total_time" as a key of its
 * first member's object (or as its own first key: the flat shape of earlier versions);
 * summary-text starts with the total_time line, or with a profile_name line followed
 * by one. */
extern const struct nx_out_kind nx_summary_json_out_kind, nx_summary_text_out_kind;

struct nx_strbuf;
/* Appends the export to out (the JSON document ends with a newline, as does each text
 * line); nothing on failure. dir: the published profile's directory; name: its name. */
int nx_summary_format(const char *dir, const char *name, bool json, struct nx_strbuf *out,
		      struct nx_err *err);

#endif
