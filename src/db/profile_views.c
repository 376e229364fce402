/* SPDX-License-Identifier: MIT
 * profile_views.c: views over a profile directory's table files (see profile_views.h).
 * Names and paths that come from the directory are always quoted (nx_sql_quote_ident,
 * nx_sql_quote), never pasted into the SQL text. */
#include "common/compat.h"
#include "db/profile_views.h"
#include "db/table_files.h"
#include "common/fsutil.h"
#include "common/strbuf.h"
#include "common/xalloc.h"
#include "schema/schema.h"

#include <stdlib.h>
#include <string.h>

/* read_parquet([...]) over files [0, n) of one table, in read order. */
static void add_scan(struct nx_strbuf *sql, const char *dir, const struct nx_table_file *f,
		     size_t n)
{
	nx_strbuf_addstr(sql, "read_parquet([");
	for (size_t i = 0; i < n; i++) {
		char *path = nx_path_join(dir, f[i].file);

		if (i)
			nx_strbuf_addch(sql, ',');
		nx_sql_quote(sql, path);
		free(path);
	}
	nx_strbuf_addstr(sql, "])");
}

/* CREATE OR REPLACE VIEW "<T>" over files [0, n) of one table. */
static int create_view(struct nx_duck *d, const char *dir, const struct nx_table_file *f,
		       size_t n, struct nx_err *err)
{
	struct nx_strbuf sql = NX_STRBUF_INIT;
	int rc;

	/* The table name comes from a file name: quoted, never pasted. */
	nx_strbuf_addstr(&sql, "CREATE OR REPLACE VIEW ");
	nx_sql_quote_ident(&sql, f[0].table);
	nx_strbuf_addstr(&sql, " AS SELECT * FROM ");
	add_scan(&sql, dir, f, n);
	rc = nx_duck_exec(d, sql.buf, err);
	nx_strbuf_release(&sql);
	return rc;
}

/* *f, *n: the files of dir (nx_table_files_list), and [*first, *first + *run) the run of
 * table's among them; not one is an error naming both (nothing then to free). */
static int table_run(const char *dir, const char *table, struct nx_table_file **f, size_t *n,
		     size_t *first, size_t *run, struct nx_err *err)
{
	size_t i, k = 0;
	int rc = nx_table_files_list(dir, NULL, NULL, f, n, err);

	if (rc)
		return rc;
	for (i = 0; i < *n && strcmp((*f)[i].table, table); i++)
		;
	while (i + k < *n && !strcmp((*f)[i + k].table, table))
		k++;
	if (!k) {
		nx_table_files_free(*f, *n);
		return nx_errf(err, NX_ENOTFOUND, "'%s' has no file of table %s", dir, table);
	}
	*first = i;
	*run = k;
	return 0;
}

int nx_db_add_table_scan(struct nx_strbuf *sql, const char *dir, const char *table,
			 struct nx_err *err)
{
	struct nx_table_file *f;
	size_t n, i, run;
	int rc = table_run(dir, table, &f, &n, &i, &run, err);

	if (rc)
		return rc;
	add_scan(sql, dir, &f[i], run);
	nx_table_files_free(f, n);
	return 0;
}

int nx_db_create_views(struct nx_duck *d, const char *dir, struct nx_err *err)
{
	struct nx_table_file *f;
	size_t n, run;
	int rc = nx_table_files_list(dir, NULL, NULL, &f, &n, err);

	for (size_t i = 0; !rc && i < n; i += run) {
		for (run = 1; i + run < n && !strcmp(f[i].table, f[i + run].table); run++)
			;
		rc = create_view(d, dir, &f[i], run, err);
	}
	nx_table_files_free(f, n);
	return rc;
}

int nx_db_create_table_view(struct nx_duck *d, const char *dir, const char *table,
			    struct nx_err *err)
{
	struct nx_table_file *f;
	size_t n, i, run;
	int rc = table_run(dir, table, &f, &n, &i, &run, err);

	if (rc)
		return rc;
	rc = create_view(d, dir, &f[i], run, err);
	nx_table_files_free(f, n);
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
