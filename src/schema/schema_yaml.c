/* SPDX-License-Identifier: MIT
 * schema_yaml.c: prints the schema as OpenAPI YAML for --show-profile-schema. The
 * stream is a root document (top-level key `openapi`) followed by one '---' block per
 * table and per enum whose single top-level key is that name, so a splitter can write
 * one <Name>.yaml per block. */
#include "common/compat.h"
#include "schema/schema.h"

#include <string.h>

/* Writes s as a double-quoted YAML scalar. */
static void yq(FILE *out, const char *s)
{
	fputc('"', out);
	for (; *s; s++) {
		if (*s == '"' || *s == '\\')
			fputc('\\', out);
		fputc(*s, out);
	}
	fputc('"', out);
}

static void print_root(FILE *out)
{
	fprintf(out, "openapi: 3.0.3\n"
		     "info:\n"
		     "  title: \"Neuron Explorer profile schema\"\n"
		     "  version: \"%s\"\n"
		     "  description: \"Tables written by neuron-explorer when it ingests a profile."
		     " Each table is one parquet file <Table>.parquet (or <Table>_<n>.parquet) in"
		     " <data-path>/profiles/global/<name>@latest/. Time fields are integer"
		     " nanoseconds unless the unit says seconds; x-unit gives the unit.\"\n"
		     "paths: {}\n"
		     "components:\n"
		     "  schemas:\n",
		NX_SCHEMA_VERSION);
	for (size_t i = 0; i < nx_schema_table_count; i++)
		fprintf(out, "    %s:\n      $ref: \"%s.yaml#/%s\"\n", nx_schema_tables[i].name,
			nx_schema_tables[i].name, nx_schema_tables[i].name);
	const char *last = "";
	for (size_t i = 0; i < nx_schema_enum_value_count; i++) {
		const char *e = nx_schema_enum_values[i].enum_name;
		if (strcmp(e, last))
			fprintf(out, "    %s:\n      $ref: \"%s.yaml#/%s\"\n", e, e, e);
		last = e;
	}
}

static void print_field(FILE *out, const struct nx_field *f)
{
	fprintf(out, "    %s:\n      description: ", f->name);
	yq(out, f->description);
	fputc('\n', out);
	if (!strcmp(f->type, "ref")) {
		fprintf(out, "      $ref: \"#/components/schemas/%s\"\n", f->format);
	} else if (!strcmp(f->type, "array")) {
		fprintf(out, "      type: array\n      items:\n");
		if (!strcmp(f->format, "int64"))
			fprintf(out, "        type: integer\n        format: int64\n");
		else if (!strcmp(f->format, "string"))
			fprintf(out, "        type: string\n");
		else
			fprintf(out, "        $ref: \"#/components/schemas/%s\"\n", f->format);
	} else {
		fprintf(out, "      type: %s\n", f->type);
		if (f->format[0])
			fprintf(out, "      format: %s\n", f->format);
	}
	if (f->enum_name[0]) {
		fprintf(out, "      x-enum: %s\n      enum:\n", f->enum_name);
		for (size_t i = 0; i < nx_schema_enum_value_count; i++)
			if (!strcmp(nx_schema_enum_values[i].enum_name, f->enum_name)) {
				fprintf(out, "        - ");
				yq(out, nx_schema_enum_values[i].value);
				fputc('\n', out);
			}
	}
	if (f->unit[0]) {
		fprintf(out, "      x-unit: ");
		yq(out, f->unit);
		fputc('\n', out);
	}
	if (f->has_min)
		fprintf(out, "      minimum: %g\n", f->min);
	if (f->has_max)
		fprintf(out, "      maximum: %g\n", f->max);
	if (f->example[0]) {
		fprintf(out, "      example: ");
		yq(out, f->example);
		fputc('\n', out);
	}
}

static void print_table(FILE *out, const struct nx_table *t)
{
	bool any_required = false;

	fprintf(out, "---\n%s:\n  description: ", t->name);
	yq(out, t->description);
	fprintf(out, "\n  type: object\n  x-modality: %s\n  x-profile-kind: %s\n", t->modality,
		t->profile_kind);
	if (!t->written)
		fprintf(out, "  x-transient: true\n");
	for (size_t i = 0; i < t->nfields; i++)
		any_required |= t->fields[i].required;
	if (any_required) {
		fprintf(out, "  required:\n");
		for (size_t i = 0; i < t->nfields; i++)
			if (t->fields[i].required)
				fprintf(out, "    - %s\n", t->fields[i].name);
	}
	fprintf(out, "  properties:\n");
	for (size_t i = 0; i < t->nfields; i++)
		print_field(out, &t->fields[i]);
}

static void print_enums(FILE *out)
{
	const char *last = "";

	for (size_t i = 0; i < nx_schema_enum_value_count; i++) {
		const struct nx_enum_value *v = &nx_schema_enum_values[i];
		if (strcmp(v->enum_name, last)) {
			fprintf(out, "---\n%s:\n  description: \"Enumeration %s; values listed in"
				     " enum, each explained in x-enum-descriptions.\"\n"
				     "  type: string\n  enum:\n", v->enum_name, v->enum_name);
			for (size_t j = i; j < nx_schema_enum_value_count &&
					   !strcmp(nx_schema_enum_values[j].enum_name, v->enum_name); j++) {
				fprintf(out, "    - ");
				yq(out, nx_schema_enum_values[j].value);
				fputc('\n', out);
			}
			fprintf(out, "  x-enum-descriptions:\n");
			last = v->enum_name;
		}
		fprintf(out, "    ");
		yq(out, v->value);
		fprintf(out, ": ");
		yq(out, v->description);
		fputc('\n', out);
	}
}

void nx_schema_print_yaml(FILE *out)
{
	print_root(out);
	for (size_t i = 0; i < nx_schema_table_count; i++)
		print_table(out, &nx_schema_tables[i]);
	print_enums(out);
}
