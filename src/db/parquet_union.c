/* SPDX-License-Identifier: MIT
 * parquet_union.c: many profiles' parquet files of one table as one SELECT, grouped by
 * the schema in their footers so that DuckDB reads each group without union_by_name
 * (see parquet_union.h). */
#include "common/compat.h"
#include "db/parquet_union.h"
#include "common/xalloc.h"
#include "db/duck.h"
#include "db/parquet_footer.h"

#include <stdlib.h>
#include <string.h>

/* The member of a file: the <name>@latest directory holding it. */
#define PROFILE_OF_FILE "regexp_extract(filename, '([^/]*)@latest/[^/]*$', 1)"

struct schema {
	uint8_t *bytes;
	size_t len;
};

/* The bytes of the schema list in the footer of the parquet file at path (caller frees
 * s->bytes); nonzero when it cannot be read as parquet. */
static int read_schema(const char *path, struct schema *s)
{
	struct nx_pq_file f;
	struct nx_pq_head h;
	struct nx_err ignored = { 0 };
	uint8_t *footer = NULL;
	int rc = nx_pq_open(&f, path, &ignored);

	if (!rc)
		rc = nx_pq_read_footer(&f, &footer, &ignored);
	if (!rc)
		rc = nx_pq_scan(&f, footer, &h, &ignored);
	if (!rc) {
		s->len = h.schema[1] - h.schema[0];
		s->bytes = nx_xmalloc(s->len);
		memcpy(s->bytes, footer + h.schema[0], s->len);
	}
	free(footer);
	nx_pq_close(&f);
	return rc;
}

size_t nx_pq_schema_groups(const char *const *paths, size_t n, size_t max, size_t *group)
{
	struct schema *seen = nx_xcalloc(max ? max : 1, sizeof(*seen));
	size_t ngroups = 0;

	for (size_t i = 0; i < n; i++) {
		struct schema s;
		size_t g;

		if (read_schema(paths[i], &s)) {
			ngroups = 0;
			break;
		}
		for (g = 0; g < ngroups; g++)
			if (seen[g].len == s.len && !memcmp(seen[g].bytes, s.bytes, s.len))
				break;
		if (g < ngroups) {
			free(s.bytes);
		} else if (ngroups < max) {
			seen[ngroups++] = s;
		} else {
			free(s.bytes);
			ngroups = 0;
			break;
		}
		group[i] = g;
	}
	for (size_t g = 0; g < max; g++)
		free(seen[g].bytes);
	free(seen);
	return ngroups;
}

/* Appends one read_parquet of the files of group g (all of them when g is SIZE_MAX, then
 * with union_by_name). */
static void add_read(struct nx_strbuf *sql, const char *const *paths, size_t n,
		     const size_t *group, size_t g)
{
	size_t k = 0;

	nx_strbuf_addstr(sql, "SELECT " PROFILE_OF_FILE " AS profile, * EXCLUDE (filename) "
			      "FROM read_parquet([");
	for (size_t i = 0; i < n; i++) {
		if (g != SIZE_MAX && group[i] != g)
			continue;
		if (k++)
			nx_strbuf_addch(sql, ',');
		nx_sql_quote(sql, paths[i]);
	}
	nx_strbuf_addstr(sql, g == SIZE_MAX ? "], filename=true, union_by_name=true)"
					    : "], filename=true)");
}

void nx_pq_union_select(struct nx_strbuf *sql, const char *const *paths, size_t n)
{
	size_t *group = nx_xcalloc(n ? n : 1, sizeof(*group));
	size_t ngroups = nx_pq_schema_groups(paths, n, NX_PQ_UNION_GROUPS, group);

	if (!ngroups)
		add_read(sql, paths, n, group, SIZE_MAX);
	for (size_t g = 0; g < ngroups; g++) {
		if (g)
			nx_strbuf_addstr(sql, " UNION ALL BY NAME ");
		add_read(sql, paths, n, group, g);
	}
	free(group);
}

/* Whether every file of paths[0..n) holds the same schema in its footer. */
static bool same_schema(const char *const *paths, size_t n)
{
	size_t *group = nx_xcalloc(n ? n : 1, sizeof(*group));
	bool one = nx_pq_schema_groups(paths, n, 1, group) == 1;

	free(group);
	return one;
}

/* Appends "CREATE TABLE <name> AS <head> FROM (<union of paths>) <tail>;". */
static void create_from(struct nx_strbuf *sql, const char *name, const char *head,
			const char *tail, const char *const *paths, size_t n)
{
	nx_strbuf_addstr(sql, "CREATE TABLE ");
	nx_sql_quote_ident(sql, name);
	nx_strbuf_addf(sql, " AS %s FROM (", head);
	nx_pq_union_select(sql, paths, n);
	nx_strbuf_addf(sql, ") %s;", tail);
}

void nx_pq_union_create(struct nx_strbuf *sql, const char *table, const char *head,
			const char *tail, const char *const *paths, size_t n, size_t per)
{
	size_t parts;

	if (!per || n <= per) {
		create_from(sql, table, head, tail, paths, n);
		return;
	}
	parts = (n + per - 1) / per;
	if (same_schema(paths, n)) {
		/* one table, the parts added to it: a part table costs DuckDB a first segment
		 * per column even for a few rows (about 1.8 MB for 256 Summary rows of 102
		 * columns), and all of them lived until the last was read */
		create_from(sql, table, head, tail, paths, per);
		for (size_t k = 1; k < parts; k++) {
			size_t first = k * per;

			nx_strbuf_addstr(sql, "INSERT INTO ");
			nx_sql_quote_ident(sql, table);
			nx_strbuf_addf(sql, " %s FROM (", head);
			nx_pq_union_select(sql, paths + first, n - first < per ? n - first : per);
			nx_strbuf_addf(sql, ") %s;", tail);
		}
		return;
	}
	for (size_t k = 0; k < parts; k++) {
		char *part = nx_xasprintf("%s__part%zu", table, k);
		size_t first = k * per;

		create_from(sql, part, head, tail, paths + first, n - first < per ? n - first : per);
		free(part);
	}
	nx_strbuf_addstr(sql, "CREATE TABLE ");
	nx_sql_quote_ident(sql, table);
	nx_strbuf_addstr(sql, " AS ");
	for (size_t k = 0; k < parts; k++)
		nx_strbuf_addf(sql, "%sSELECT * FROM \"%s__part%zu\"", k ? " UNION ALL BY NAME " : "",
			       table, k);
	nx_strbuf_addch(sql, ';');
	for (size_t k = 0; k < parts; k++)
		nx_strbuf_addf(sql, "DROP TABLE \"%s__part%zu\";", table, k);
}
