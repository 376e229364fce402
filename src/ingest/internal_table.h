/* SPDX-License-Identifier: MIT
 * internal_table.h: the columns and the table of an internal table of the ingest (a
 * staging table of the derive SQL, a C merge's spill), typed like the schema's tables but
 * never published: no unit, enum, example or description. */
#ifndef NX_INGEST_INTERNAL_TABLE_H
#define NX_INGEST_INTERNAL_TABLE_H

#include "common/compat.h"
#include "schema/schema.h"

/* One column: its name, schema type ("integer", "string", "boolean") and format. */
#define NX_INTERNAL_FIELD(n, t, fmt)                                                            \
	{ .name = n, .type = t, .format = fmt, .unit = "", .enum_name = "", .example = "",      \
	  .description = "" }

/* The table `n` of the columns of the array `f`. */
#define NX_INTERNAL_TABLE(n, f)                                                                 \
	{ .name = n, .modality = "", .profile_kind = "", .description = "", .written = false,   \
	  .nfields = NX_ARRAY_SIZE(f), .fields = f }

#endif
