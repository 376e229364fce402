/* SPDX-License-Identifier: MIT
 * parquet_union.h: one table read from many profiles' parquet files of it (a fleet
 * run's members), in memory that does not grow with the number of files when they
 * share a schema. DuckDB's read_parquet(..., union_by_name=true) opens every file and
 * keeps a reader per file while it binds and scans (about 0.4 MB per small Summary
 * file); read without it, DuckDB binds on the first file and opens the others one at a
 * time. So the files are first grouped by the schema in their footers (read here, in C,
 * one at a time): each group is read plainly and the groups are joined by column name.
 * Many different schemas, or a file that is not a parquet file, fall back to
 * union_by_name over them all (whose errors name a damaged file's path). */
#ifndef NX_DB_PARQUET_UNION_H
#define NX_DB_PARQUET_UNION_H

#include "common/compat.h"
#include "common/strbuf.h"

/* Up to this many schemas are read group by group; more fall back to union_by_name. */
#define NX_PQ_UNION_GROUPS 8

/* Sets group[i] to the schema group of paths[i]: files whose footers hold the same
 * schema list (byte for byte) share one, numbered from 0 in order of first appearance.
 * Returns the number of groups; 0 when a file cannot be read as parquet or there would
 * be more than max groups. */
size_t nx_pq_schema_groups(const char *const *paths, size_t n, size_t max, size_t *group);

/* Appends a SELECT (no trailing ';') of the files paths[0..n), n > 0, as one table: a
 * leading `profile` column, the <member>@latest directory name of each file, then the
 * files' columns matched by name, as read_parquet(..., union_by_name=true) would give
 * them. */
void nx_pq_union_select(struct nx_strbuf *sql, const char *const *paths, size_t n);

/* Files read by one statement of nx_pq_union_create in the fleet index: DuckDB keeps a
 * column mapping per file of a scan until the statement ends (about 5 KB per Summary
 * file), so reading every member at once grew the index by that per member. */
#define NX_PQ_UNION_FILES_PER_READ 256

/* Appends statements, each ending in ';', that create the table `table` as
 * "<head> FROM (<the union of paths[0..n)>) <tail>" (head: "SELECT ...", tail: "" or a
 * GROUP BY ...), reading at most `per` files per statement. When every file holds the
 * same schema, the first part creates the table and each next part is inserted into
 * it; else each part becomes a table of its own (<table>__part<k>, dropped at the end)
 * and the parts are joined by column name, as one read would have joined the files.
 * tail is applied to each part alone: it may group by a column of the file (the
 * profile), not across files. */
void nx_pq_union_create(struct nx_strbuf *sql, const char *table, const char *head,
			const char *tail, const char *const *paths, size_t n, size_t per);

#endif
