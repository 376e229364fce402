/* SPDX-License-Identifier: MIT
 * user_query.h: a user's SQL (the SQL page's `_search` databaseExplorerQuery) that does
 * not fit the memory_limit of the profile's database (NX_SERVER_MEMORY_LIMIT, which the
 * UI's own routes keep) runs once more on a database of its own under a larger limit
 * (NX_SERVER_QUERY_MEMORY_LIMIT), one such query at a time per server: another gets a 503
 * `busy` meanwhile. The larger database is closed, and what it held given back, when the
 * query's reply ends (docs/api.md, "Memory"). */
#ifndef NX_SERVER_USER_QUERY_H
#define NX_SERVER_USER_QUERY_H

#include "server/profile_db.h"

/* The limit of a user's query run again, in *out (the caller frees it):
 * NX_SERVER_QUERY_MEMORY_LIMIT when set, else a quarter of the machine's memory or 2GB,
 * whichever is smaller; a value that is not a size is an NX_EUSAGE error naming the
 * variable. */
int nx__query_memory(char **out, struct nx_err *err);

/* nx__pdb_cursor_open, then nx__pdb_cursor_fill up to want bytes, on pdb; when that fails
 * with -ENOMEM (before any of the reply left), the same on nx__pdb_open_retry's database
 * under a deadline of lim's of its own (the first try failed early: 2 s of the 10M
 * profile's `count(DISTINCT id)`), or -EBUSY when another query holds it. Returns
 * as nx__pdb_cursor_fill (1: rows remain, 0: done, both with *q to close; < 0: error, out
 * as it was, *q NULL). */
struct nx_user_query;
int nx__uq_open(struct nx_pdb *pdb, const char *sql, const struct nx_query_limits *lim,
		size_t want, struct nx_user_query **q, struct nx_strbuf *out, struct nx_err *err);
/* nx__pdb_cursor_fill on the query's cursor. */
int nx__uq_fill(struct nx_user_query *q, struct nx_strbuf *out, size_t want,
		struct nx_err *err);
/* Closes the cursor, then the larger database if the query ran on it (NULL: nothing). */
void nx__uq_close(struct nx_user_query *q);

#endif
