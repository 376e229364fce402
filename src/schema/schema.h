/* SPDX-License-Identifier: MIT
 * schema.h: the profile schema (Neuron Explorer profile schema 7.4.0) as data.
 *
 * The single source of truth is schema/profile-schema-7.4.0.tsv (+ tables and enums
 * TSVs) in the repository; the build compiles it into C (tools/gen_schema.c). From it
 * come: `--show-profile-schema` (OpenAPI YAML), the SchemaFields table of every
 * profile, the DuckDB column types every table is written with, the tableSchema API
 * answer and Metadata.profile_schema_version. */
#ifndef NX_SCHEMA_SCHEMA_H
#define NX_SCHEMA_SCHEMA_H

#include "common/compat.h"
#include <stdio.h>

#define NX_SCHEMA_VERSION "7.4.0"

struct nx_field {
	const char *name;
	const char *type;        /* integer, number, string, boolean, array, ref */
	const char *format;      /* int32/int64, float/double, array item type, ref name; "" if none */
	const char *unit;        /* "" if none */
	const char *enum_name;   /* name of the enum its values come from; "" if none */
	const char *example;     /* "" if none */
	const char *description;
	bool required;
	bool has_min, has_max;
	double min, max;
};

struct nx_table {
	const char *name;
	const char *modality;     /* timeline, time-series, ... */
	const char *profile_kind; /* device, system, both */
	const char *description;
	bool written;             /* false for transient API types (never a parquet file) */
	size_t nfields;
	const struct nx_field *fields;
};

struct nx_enum_value {
	const char *enum_name;
	const char *value;
	const char *description;
};

/* Generated tables (gen/schema_data.c). */
extern const struct nx_table nx_schema_tables[];
extern const size_t nx_schema_table_count;
extern const struct nx_enum_value nx_schema_enum_values[];
extern const size_t nx_schema_enum_value_count;

const char *nx_schema_version(void);
/* Exact, case-sensitive lookup; NULL when the table is not in the schema. */
const struct nx_table *nx_schema_table(const char *name);
/* Index of a field in its table, or -1. */
int nx_schema_field_index(const struct nx_table *t, const char *field);
/* DuckDB column type used to write the field: BIGINT, INTEGER, FLOAT, DOUBLE, VARCHAR,
 * BOOLEAN, BIGINT[], VARCHAR[]; NULL for fields that are never written (refs). */
const char *nx_schema_duck_type(const struct nx_field *f);
/* "a,b,c" list of the enum's values into buf; "" when the field has no enum. */
void nx_schema_enum_list(const char *enum_name, char *buf, size_t size);
/* Prints the OpenAPI YAML: a root document, then one '---' block per table and enum
 * whose top-level key is its name. */
void nx_schema_print_yaml(FILE *out);

#endif
