/* SPDX-License-Identifier: MIT
 * table_schema.c: the tableSchema answer. Fields come from the project's profile
 * schema (src/schema) with name, type, format, unit, required, example and
 * description, each annotated with the DuckDB type of the column when the
 * profile's parquet has it. Columns the schema does not know (or tables outside
 * the schema, e.g. from a newer ingest) are described from DuckDB alone. */
#include "common/compat.h"
#include "server/http.h"
#include "common/json_writer.h"
#include "schema/schema.h"

#include <string.h>
#include <strings.h>

static const struct nx_table *schema_table(const char *name)
{
	const struct nx_table *t = nx_schema_table(name);

	for (size_t i = 0; !t && i < nx_schema_table_count; i++)
		if (!strcasecmp(nx_schema_tables[i].name, name))
			t = &nx_schema_tables[i];
	return t;
}

/* The schema's JSON-ish type for a DuckDB column type. */
static const char *json_type(const char *duck)
{
	size_t n = strlen(duck);

	if (n > 2 && !strcmp(duck + n - 2, "[]"))
		return "array";
	if (strstr(duck, "INT"))
		return "integer";
	if (!strcmp(duck, "DOUBLE") || !strcmp(duck, "FLOAT") || !strncmp(duck, "DECIMAL", 7))
		return "number";
	if (!strcmp(duck, "BOOLEAN"))
		return "boolean";
	return "string";
}

static void str_or_null(struct nx_jw *jw, const char *key, const char *v)
{
	nx_jw_key(jw, key);
	if (v && *v)
		nx_jw_string(jw, v);
	else
		nx_jw_null(jw);
}

static const struct nx_pdb_column *find_col(const struct nx_pdb_column *c, size_t n,
					    const char *name)
{
	for (size_t i = 0; i < n; i++)
		if (!strcasecmp(c[i].name, name))
			return &c[i];
	return NULL;
}

static void schema_field(struct nx_jw *jw, const struct nx_field *f,
			 const struct nx_pdb_column *col)
{
	char enums[2048];

	nx_jw_object_begin(jw);
	nx_jw_key(jw, "name");
	nx_jw_string(jw, f->name);
	nx_jw_key(jw, "type");
	nx_jw_string(jw, f->type);
	str_or_null(jw, "format", f->format);
	nx_jw_key(jw, "required");
	nx_jw_bool(jw, f->required);
	str_or_null(jw, "unit", f->unit);
	str_or_null(jw, "example", f->example);
	str_or_null(jw, "description", f->description);
	if (f->enum_name && *f->enum_name) {
		nx_schema_enum_list(f->enum_name, enums, sizeof(enums));
		str_or_null(jw, "enum", enums);
	}
	str_or_null(jw, "column_type", col ? col->type : NULL);
	nx_jw_object_end(jw);
}

static void duck_field(struct nx_jw *jw, const struct nx_pdb_column *c)
{
	nx_jw_object_begin(jw);
	nx_jw_key(jw, "name");
	nx_jw_string(jw, c->name);
	nx_jw_key(jw, "type");
	nx_jw_string(jw, json_type(c->type));
	str_or_null(jw, "format", NULL);
	nx_jw_key(jw, "required");
	nx_jw_bool(jw, !c->nullable);
	str_or_null(jw, "unit", NULL);
	str_or_null(jw, "example", NULL);
	str_or_null(jw, "description", NULL);
	str_or_null(jw, "column_type", c->type);
	nx_jw_object_end(jw);
}

enum MHD_Result nx__search_table_schema(struct nx_req *rq, struct nx_profile *p,
					const char *table)
{
	const struct nx_table *st = schema_table(table);
	const struct nx_ptable *pt = nx__pfiles_find(&p->files, table);
	struct nx_pdb_column *cols = NULL;
	struct nx_strbuf sb = NX_STRBUF_INIT;
	struct nx_err err = { 0 };
	size_t ncols = 0;
	struct nx_jw jw;

	if (!st && !pt)
		return nx__reply_error(rq, 404, "table_not_found",
				       "'%.100s' is neither a table of profile '%s' nor of the "
				       "profile schema %s", table, p->name, nx_schema_version());
	if (pt && p->db && nx__pdb_describe(p->db, pt->name, &cols, &ncols, &err) &&
	    err.code != NX_ENOTFOUND)
		return nx__reply_nx_err(rq, &err);
	nx_jw_init(&jw, &sb, false);
	nx_jw_object_begin(&jw);
	nx_jw_key(&jw, "tableName");
	nx_jw_string(&jw, st ? st->name : pt->name);
	nx_jw_key(&jw, "schemaVersion");
	nx_jw_string(&jw, nx_schema_version());
	nx_jw_key(&jw, "inSchema");
	nx_jw_bool(&jw, st != NULL);
	nx_jw_key(&jw, "inProfile");
	nx_jw_bool(&jw, ncols > 0);
	str_or_null(&jw, "description", st ? st->description : NULL);
	nx_jw_key(&jw, "fields");
	nx_jw_array_begin(&jw);
	for (size_t i = 0; st && i < st->nfields; i++)
		schema_field(&jw, &st->fields[i], find_col(cols, ncols, st->fields[i].name));
	for (size_t i = 0; i < ncols; i++)
		if (!st || nx_schema_field_index(st, cols[i].name) < 0)
			duck_field(&jw, &cols[i]);
	nx_jw_array_end(&jw);
	nx_jw_object_end(&jw);
	nx__pdb_columns_free(cols, ncols);
	return nx__reply_json(rq, 200, &sb);
}
