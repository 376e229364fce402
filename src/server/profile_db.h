/* SPDX-License-Identifier: MIT
 * profile_db.h: one sandboxed, read-only DuckDB database per profile. Opening
 * creates an in-memory database, locks the engine down (only the profile directory
 * is readable, no other external access, configuration frozen), and then creates
 * one view per table of the profile directory (a fleet run's union views, and those
 * of large tables, read as slices cut into a private folder, when a statement first
 * names their table); a small table that queries keep
 * reading is later swapped for an in-memory copy (resident.h). Queries must be a
 * single SELECT as DuckDB's own parser classifies it; they run under a watchdog
 * deadline and their JSON reply is cut at row and byte caps. Connections are pooled
 * per database. */
#ifndef NX_SERVER_PROFILE_DB_H
#define NX_SERVER_PROFILE_DB_H

#include "common/compat.h"
#include "common/err.h"
#include "common/strbuf.h"
#include "server/profile_files.h"
#include "server/watchdog.h"

#include <duckdb.h>

struct nx_pdb;

/* Error codes of nx__pdb_query, beyond the usual ones:
 *   NX_ECORRUPT a table the query uses has a damaged parquet file (named)
 *   -EACCES     the statement is refused (not a single SELECT, or the sandbox said no)
 *   -ETIMEDOUT  the query ran past the deadline and was interrupted
 *   -ENOTSUP    a result column has a type the JSON encoder does not render
 *   NX_EDB      DuckDB rejected the SQL (syntax, unknown table or column, ...) */

struct nx_query_limits {
	unsigned timeout_ms;
	uint64_t max_rows;
	uint64_t max_bytes;
	struct nx_watchdog *wd;
};

/* dir is the resolved profile directory; files its scan (borrowed: it must outlive
 * the database, whose fleet union views are made from it on first use). threads = 0
 * lets DuckDB use every core. Tables whose view cannot be created (damaged or
 * truncated parquet) get no view; nx__pdb_broken() describes them (a fleet run's
 * union tables only once a query named them), and queries or schema requests that
 * use them fail with NX_ECORRUPT and that description, which names the damaged
 * files. */
int nx__pdb_open(struct nx_pdb **out, const char *dir, const struct nx_pfiles *files,
		 unsigned threads, struct nx_err *err);
void nx__pdb_free(struct nx_pdb **pdb);

/* A database of its own for running again, alone, a user's query that did not fit the
 * profile's database's memory_limit (user_query.h): the same sandbox, views and tables
 * (large tables read from parent's slices, cut once) under the limit
 * NX_SERVER_QUERY_MEMORY_LIMIT gave parent, spilling to a folder of its own; beyond it a
 * query fails with -ENOMEM naming both limits and both variables. parent must outlive
 * it. */
int nx__pdb_open_retry(struct nx_pdb **out, struct nx_pdb *parent, struct nx_err *err);
/* Whether a query on pdb that did not fit may run again on nx__pdb_open_retry's database:
 * a profile's (not a fleet run's, nor a timeline cache's) under a limit of ours. */
bool nx__pdb_retries(const struct nx_pdb *pdb);
/* pdb's memory_limit, as set ("DuckDB's default" when none). */
const char *nx__pdb_memory(const struct nx_pdb *pdb);
/* The limit of that database ("none" when it has none). */
const char *nx__pdb_query_memory(const struct nx_pdb *pdb);

/* A database of our own making (the timeline cache, lod.h): the DuckDB file `file`
 * attached read-only as `tl`, then the same lock-down with dir as the only readable
 * directory. No views: queries name tl.<table>. */
int nx__pdb_open_attached(struct nx_pdb **out, const char *file, const char *dir,
			  unsigned threads, struct nx_err *err);

/* Per skipped table: "table T cannot be read: F is damaged ... (DuckDB: ...)";
 * borrowed, NULL after the last. */
const char *nx__pdb_broken(struct nx_pdb *pdb, size_t i);

/* Runs sql and appends {"columns":[...],"rows":[...],"row_count":N,"truncated":B
 * [,"message":...]} to out. On error out is left as it was. */
int nx__pdb_query(struct nx_pdb *pdb, const char *sql, const struct nx_query_limits *lim,
		  struct nx_strbuf *out, struct nx_err *err);

/* The same query, read piece by piece so a large result never sits whole in memory:
 * open writes {"columns":[...],"rows":[ to out (on error out is left as it was, as
 * above); each fill appends rows until at least `want` more bytes were added, then
 * returns 1 while rows remain, or writes the rest of the object, applying the same
 * caps, and returns 0; a negative return is an error met while fetching (the text
 * already handed out is then incomplete). close releases the result, the deadline and
 * the connection; the cursor holds one connection of the pool and its deadline until
 * then. */
struct nx_pdb_cursor;
int nx__pdb_cursor_open(struct nx_pdb *pdb, const char *sql, const struct nx_query_limits *lim,
			struct nx_pdb_cursor **cur, struct nx_strbuf *out, struct nx_err *err);
int nx__pdb_cursor_fill(struct nx_pdb_cursor *cur, struct nx_strbuf *out, size_t want,
			struct nx_err *err);
void nx__pdb_cursor_close(struct nx_pdb_cursor *cur);

/* Runs sql (one SELECT, under lim's deadline) and hands each result chunk to fn, which
 * returns 0 or a negative code with err filled. More than lim->max_rows rows is -E2BIG;
 * the byte cap is fn's to keep. */
typedef int (*nx__pdb_chunk_fn)(void *arg, duckdb_data_chunk chunk, struct nx_err *err);
int nx__pdb_query_chunks(struct nx_pdb *pdb, const char *sql, const struct nx_query_limits *lim,
			 nx__pdb_chunk_fn fn, void *arg, struct nx_err *err);

struct nx_pdb_column {
	char *name;
	char *type;
	bool nullable;
};

/* The columns of a view, as DuckDB sees them. *cols is freed with
 * nx__pdb_columns_free. Returns NX_ENOTFOUND for an unknown table. */
int nx__pdb_describe(struct nx_pdb *pdb, const char *table, struct nx_pdb_column **cols,
		     size_t *n, struct nx_err *err);
void nx__pdb_columns_free(struct nx_pdb_column *cols, size_t n);

#endif
