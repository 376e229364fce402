/* SPDX-License-Identifier: MIT
 * profile_views.c: views over a profile directory's table files (see profile_views.h).
 * Names and paths that come from the directory are always quoted (nx_sql_quote_ident,
 * nx_sql_quote), never pasted into the SQL text. */
#include "common/compat.h"
#include "db/profile_views.h"
#include "common/fsutil.h"
#include "common/strbuf.h"
#include "common/xalloc.h"
#include "schema/schema.h"

#include <dirent.h>
#include <stdlib.h>
#include <string.h>

/* Table name of a parquet file: "Instruction.parquet" or "Instruction_3.parquet". */
static bool table_of_file(const char *file, char *out, size_t size)
{
	size_t len = strlen(file);
	if (len < 9 || strcmp(file + len - 8, ".parquet") || file[0] == '.')
		return false;
	len -= 8;
	size_t us = len;
	while (us > 0 && file[us - 1] >= '0' && file[us - 1] <= '9')
		us--;
	if (us < len && us > 1 && file[us - 1] == '_')
		len = us - 1;
	if (len >= size)
		return false;
	memcpy(out, file, len);
	out[len] = '\0';
	return true;
}

int nx_db_create_views(struct nx_duck *d, const char *dir, struct nx_err *err)
{
	DIR *dp = opendir(dir);
	struct dirent *de;
	int rc = 0;

	if (!dp)
		return nx_errf(err, -errno, "cannot list '%s'", dir);
	while (!rc && (de = readdir(dp))) {
		char table[256];
		if (!table_of_file(de->d_name, table, sizeof(table)))
			continue;
		struct nx_strbuf sql = NX_STRBUF_INIT, glob = NX_STRBUF_INIT;
		bool split = strcmp(de->d_name + strlen(table), ".parquet") != 0;
		nx_strbuf_addf(&glob, "%s/%s%s", dir, table, split ? "_*.parquet" : ".parquet");
		/* The table name comes from a file name: quoted, never pasted. */
		nx_strbuf_addstr(&sql, "CREATE OR REPLACE VIEW ");
		nx_sql_quote_ident(&sql, table);
		nx_strbuf_addstr(&sql, " AS SELECT * FROM read_parquet(");
		nx_sql_quote(&sql, glob.buf);
		nx_strbuf_addstr(&sql, ")");
		rc = nx_duck_exec(d, sql.buf, err);
		nx_strbuf_release(&sql);
		nx_strbuf_release(&glob);
	}
	closedir(dp);
	return rc;
}

/* A table "exists" for a derive file when it has a parquet file (split or not) in one
 * of the directories. */
bool nx_db_table_has_file(const char *const *dirs, const char *name)
{
	for (; *dirs; dirs++) {
		char *one = nx_xasprintf("%s/%s.parquet", *dirs, name);
		char *split = nx_xasprintf("%s/%s_0.parquet", *dirs, name);
		bool found = nx_is_file(one) || nx_is_file(split);
		free(one);
		free(split);
		if (found)
			return true;
	}
	return false;
}

int nx_db_create_empty_views(struct nx_duck *d, const char *dir, struct nx_err *err)
{
	const char *dirs[] = { dir, NULL };
	int rc = 0;

	for (size_t t = 0; !rc && t < nx_schema_table_count; t++) {
		const struct nx_table *tab = &nx_schema_tables[t];
		if (!tab->written || nx_db_table_has_file(dirs, tab->name))
			continue;
		struct nx_strbuf sql = NX_STRBUF_INIT;
		nx_strbuf_addstr(&sql, "CREATE OR REPLACE VIEW ");
		nx_sql_quote_ident(&sql, tab->name);
		nx_strbuf_addstr(&sql, " AS SELECT ");
		for (size_t i = 0; i < tab->nfields; i++) {
			const char *ty = nx_schema_duck_type(&tab->fields[i]);
			nx_strbuf_addf(&sql, "%sCAST(NULL AS %s) AS ", i ? ", " : "",
				       ty ? ty : "VARCHAR");
			nx_sql_quote_ident(&sql, tab->fields[i].name);
		}
		nx_strbuf_addstr(&sql, " WHERE false");
		rc = nx_duck_exec(d, sql.buf, err);
		nx_strbuf_release(&sql);
	}
	return rc;
}

int nx_db_profile_views(struct nx_duck *d, const char *dir, struct nx_err *err)
{
	int rc = nx_db_create_views(d, dir, err);

	return rc ? rc : nx_db_create_empty_views(d, dir, err);
}
