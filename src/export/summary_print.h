/* SPDX-License-Identifier: MIT
 * summary_print.h: the summary exports of `view`: a profile's Summary table as JSON
 * (summary-json: exactly its fields and values) or as a fixed-order key/value text table
 * (summary-text), written to a stream the caller opens. */
#ifndef NX_EXPORT_SUMMARY_PRINT_H
#define NX_EXPORT_SUMMARY_PRINT_H

#include "common/compat.h"
#include "common/err.h"
#include <stdio.h>

/* NX_ENOTFOUND, with nothing written, when the profile has no device Summary (that of a
 * profile of framework traces only has no row). */
int nx_summary_print(const char *profile_dir, bool json, FILE *out, struct nx_err *err);

#endif
