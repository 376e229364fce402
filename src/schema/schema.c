/* SPDX-License-Identifier: MIT
 * schema.c: lookups over the compiled schema tables and the mapping from schema
 * types to the DuckDB column types every table is written with. */
#include "common/compat.h"
#include "schema/schema.h"

#include <stdio.h>
#include <string.h>

const char *nx_schema_version(void)
{
	return NX_SCHEMA_VERSION;
}

const struct nx_table *nx_schema_table(const char *name)
{
	for (size_t i = 0; i < nx_schema_table_count; i++)
		if (!strcmp(nx_schema_tables[i].name, name))
			return &nx_schema_tables[i];
	return NULL;
}

int nx_schema_field_index(const struct nx_table *t, const char *field)
{
	for (size_t i = 0; i < t->nfields; i++)
		if (!strcmp(t->fields[i].name, field))
			return (int)i;
	return -1;
}

const char *nx_schema_duck_type(const struct nx_field *f)
{
	if (!strcmp(f->type, "integer"))
		return !strcmp(f->format, "int32") ? "INTEGER" : "BIGINT";
	if (!strcmp(f->type, "number"))
		return !strcmp(f->format, "double") ? "DOUBLE" : "FLOAT";
	if (!strcmp(f->type, "string"))
		return "VARCHAR";
	if (!strcmp(f->type, "boolean"))
		return "BOOLEAN";
	if (!strcmp(f->type, "array")) {
		if (!strcmp(f->format, "int64"))
			return "BIGINT[]";
		if (!strcmp(f->format, "string"))
			return "VARCHAR[]";
	}
	return NULL;
}

void nx_schema_enum_list(const char *enum_name, char *buf, size_t size)
{
	size_t len = 0;

	if (size)
		buf[0] = '\0';
	if (!enum_name || !enum_name[0])
		return;
	for (size_t i = 0; i < nx_schema_enum_value_count; i++) {
		const struct nx_enum_value *v = &nx_schema_enum_values[i];
		if (strcmp(v->enum_name, enum_name))
			continue;
		int n = snprintf(buf + len, size > len ? size - len : 0, "%s%s", len ? "," : "",
				 v->value);
		if (n < 0 || (size_t)n >= size - len)
			return;
		len += (size_t)n;
	}
}
