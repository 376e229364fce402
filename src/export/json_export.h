/* SPDX-License-Identifier: MIT
 * json_export.h: `view --output-format json`: the legacy parsable JSON of neuron-profile,
 * one object whose members are arrays of records, one per event kind:
 *   {"summary": [{...Summary fields...}], "instruction": [{"timestamp", "duration",
 *    "label", "hlo_name", "opcode", "operands", ...}, ...], "dma": [...], ...}
 * (every member and field, and the table it comes from: docs/formats/json.md).
 * Written streaming: each table is read through DuckDB chunk by chunk and its records
 * written as they come, one per line, so memory stays flat whatever the profile's size. */
#ifndef NX_EXPORT_JSON_EXPORT_H
#define NX_EXPORT_JSON_EXPORT_H

#include "common/compat.h"
#include "common/err.h"
#include "common/progress.h"

#include <stdio.h>

struct nx_json_stats {
	uint64_t records;      /* records written in total, over every member */
	uint64_t instructions; /* of them, in "instruction" */
};

/* Writes the profile in dir to out. progress (may be NULL) gets ROWS events while a
 * member is written (stage "json") and a TABLE event when it is done (table: the
 * member's key). A fleet run's index (it has no events of its own) is refused with
 * NX_EUSAGE; read or write errors name the table or the stream. */
int nx_export_json(const char *dir, FILE *out, const struct nx_progress *progress,
		   struct nx_json_stats *stats, struct nx_err *err);

#endif
