/* SPDX-License-Identifier: MIT
 * duck_copy.c: DuckDB's COPY to zstd parquet driven from C: a query's rows, or a row
 * source's through the nx_source() table function, inline or run ahead, and the row
 * group sizes of the tables written from row sources (see duck.h, duck_copy.h). */
#include "common/compat.h"
#include "common/env_num.h"
#include "db/duck_copy.h"
#include "db/duck_conn.h"
#include "db/source_ahead.h"

#include <limits.h>
#include <stdlib.h>

void nx__copy_sql(struct nx_strbuf *sql, const char *select_sql, const char *path,
		  unsigned long row_group, const char *part, unsigned long part_groups)
{
	nx_strbuf_addf(sql, "COPY (%s) TO ", select_sql);
	nx_sql_quote(sql, path);
	nx_strbuf_addstr(sql, " (FORMAT parquet, COMPRESSION zstd");
	if (row_group)
		nx_strbuf_addf(sql, ", ROW_GROUP_SIZE %lu", row_group);
	if (part) {
		nx_strbuf_addf(sql, ", ROW_GROUPS_PER_FILE %lu, FILENAME_PATTERN ", part_groups);
		nx_sql_quote(sql, part);
	}
	nx_strbuf_addch(sql, ')');
}

int nx__copy_to(duckdb_connection con, const char *select_sql, const char *path,
		unsigned long row_group, const char *part, unsigned long part_groups,
		uint64_t *rows, struct nx_err *err)
{
	struct nx_strbuf sql = NX_STRBUF_INIT;
	int64_t n = 0;
	int rc;

	nx__copy_sql(&sql, select_sql, path, row_group, part, part_groups);
	rc = nx_duck_con_query_i64(con, sql.buf, &n, err);
	nx_strbuf_release(&sql);
	if (!rc && rows)
		*rows = (uint64_t)n;
	return rc;
}

int nx_duck_copy_query(struct nx_duck *d, const char *select_sql, const char *path,
		       uint64_t *rows, struct nx_err *err)
{
	return nx__copy_to(nx__duck_con(d), select_sql, path, 0, NULL, 0, rows, err);
}

unsigned long nx__source_row_group(unsigned long wanted)
{
	long long n = nx_env_whole_or("NX_INGEST_ROW_GROUP", LONG_MAX, "rows (0: the default)", 0);
	return n > 0 ? (unsigned long)n : wanted ? wanted : 32768UL;
}

unsigned long nx__part_row_groups(void)
{
	long long n = nx_env_whole_or("NX_INGEST_PART_GROUPS", LONG_MAX,
				      "row groups (0: the default)", 0);
	return n > 0 ? (unsigned long)n : 64UL;
}

int nx__copy_source(struct nx_duck *d, struct nx_row_source *src, struct nx_duck_ahead *a,
		    const char *path, const char *part, unsigned long row_group,
		    uint64_t *rows, struct nx_err *err)
{
	int rc;

	nx__duck_source_set(d, 0, src, a);
	rc = nx__copy_to(nx__duck_con(d), "SELECT * FROM nx_source(0)", path,
			 nx__source_row_group(row_group), part, nx__part_row_groups(), rows, err);
	nx_duck_ahead_stop(a);
	return nx__duck_source_end(d, 0, rc, err, err);
}

int nx_duck_copy_source(struct nx_duck *d, struct nx_row_source *src, const char *path,
			uint64_t *rows, struct nx_err *err)
{
	return nx__copy_source(d, src, NULL, path, NULL, 0, rows, err);
}

int nx_duck_copy_ahead(struct nx_duck *d, struct nx_duck_ahead *a, const char *path,
		       unsigned long row_group, uint64_t *rows, struct nx_err *err)
{
	if (a->own_strings) {
		nx_duck_ahead_stop(a);
		return nx_errf(err, NX_EUSAGE, "a source run ahead for our writer cannot be "
			       "copied by DuckDB's");
	}
	return nx__copy_source(d, a->src, a, path, NULL, row_group, rows, err);
}
