/* SPDX-License-Identifier: MIT
 * json_export.h: `view --output-format json`: the legacy parsable JSON of neuron-profile,
 * one object whose members are arrays of records, one per event kind:
 *   {"summary": [{...Summary fields...}], "instruction": [{"timestamp", "duration",
 *    "label", "hlo_name", "opcode", "operands", ...}, ...], "dma": [...], ...}
 * (every member and field, and the table it comes from: docs/formats/json.md).
 * Written streaming: each table is read through DuckDB chunk by chunk and its records
 * written as they come, one per line; a table file of many row groups is read slice by
 * slice (db/parquet_slice.h), so that DuckDB never holds a large file's whole footer
 * either: memory stays flat whatever the profile's size. */
#ifndef NX_EXPORT_JSON_EXPORT_H
#define NX_EXPORT_JSON_EXPORT_H

#include "common/compat.h"
#include "common/err.h"
#include "common/outpath.h"
#include "common/progress.h"

#include <stdio.h>

struct nx_json_stats {
	uint64_t records;      /* records written in total, over every member */
	uint64_t instructions; /* of them, in "instruction" */
};

/* Row groups per slice of a large table file (32768 rows each in our profiles). */
#define NX_JSON_SLICE_GROUPS 64

struct nx_json_opts {
	/* ROWS events while a member is written (stage "json") and a TABLE event when it is
	 * done (table: the member's key); may be NULL */
	const struct nx_progress *progress;
	/* a private directory for the slices of large table files (one at a time); NULL
	 * reads every file whole */
	const char *scratch;
};

/* A document this export wrote, recognised by its first member (the output rule's kind). */
extern const struct nx_out_kind nx_json_out_kind;

/* Writes the profile in dir to out. A fleet run's index (it has no events of its own)
 * is refused with NX_EUSAGE; read or write errors name the table or the stream. */
int nx_export_json(const char *dir, FILE *out, const struct nx_json_opts *o,
		   struct nx_json_stats *stats, struct nx_err *err);

#endif
