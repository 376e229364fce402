/* SPDX-License-Identifier: MIT
 * user_query.c: a user's query run once more under a larger memory limit (see
 * user_query.h). */
#include "common/compat.h"
#include "server/user_query.h"
#include "common/env_num.h"
#include "common/xalloc.h"
#include "db/duck_alloc.h"

#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The default limit: a quarter of the machine's memory, at most QUERY_MEMORY_MAX bytes
 * (DuckDB's GB are 10^9 bytes). At 10M records `count(DISTINCT id)` of Instruction needed
 * 512MB (docs/memory.md, "The server's memory: users' SQL and flatness"). */
#define QUERY_MEMORY_MAX 2000000000ULL

/* Set while a query runs again: one at a time per server (the flag is the process's). */
static atomic_bool alone;

struct nx_user_query {
	struct nx_pdb_cursor *cur;
	struct nx_pdb *retry; /* the larger database, closed with the query */
};

int nx__query_memory(char **out, struct nx_err *err)
{
	const char *set = NULL;
	long pages = sysconf(_SC_PHYS_PAGES), size = sysconf(_SC_PAGESIZE);
	unsigned long long quarter;

	*out = NULL;
	if (nx_env_size("NX_SERVER_QUERY_MEMORY_LIMIT", &set, err))
		return err->code;
	if (set) {
		*out = nx_xstrdup(set);
		return 0;
	}
	quarter = pages > 0 && size > 0 ? (unsigned long long)pages * (unsigned long long)size / 4
					: QUERY_MEMORY_MAX;
	if (quarter >= QUERY_MEMORY_MAX)
		*out = nx_xstrdup("2GB");
	else
		*out = nx_xasprintf("%lluMB", quarter / 1000000 ? quarter / 1000000 : 1);
	return 0;
}

/* Open and first fill on db; on error the cursor is closed and out cut back. */
static int attempt(struct nx_pdb *db, const char *sql, const struct nx_query_limits *lim,
		   size_t want, struct nx_pdb_cursor **cur, struct nx_strbuf *out,
		   struct nx_err *err)
{
	size_t start = out->len;
	int rc = nx__pdb_cursor_open(db, sql, lim, cur, out, err);

	if (!rc)
		rc = nx__pdb_cursor_fill(*cur, out, want, err);
	if (rc < 0) {
		nx__pdb_cursor_close(*cur);
		*cur = NULL;
		out->len = start;
		if (out->buf)
			out->buf[start] = '\0';
	}
	return rc;
}

int nx__uq_open(struct nx_pdb *pdb, const char *sql, const struct nx_query_limits *lim,
		size_t want, struct nx_user_query **q, struct nx_strbuf *out, struct nx_err *err)
{
	struct nx_pdb_cursor *cur = NULL;
	struct nx_pdb *retry = NULL;
	int rc = attempt(pdb, sql, lim, want, &cur, out, err);

	*q = NULL;
	if (rc == -ENOMEM && nx__pdb_retries(pdb)) {
		if (atomic_exchange(&alone, true))
			return nx_errf(err, -EBUSY,
				       "the query needs more memory than the server's limit of %s "
				       "per profile (NX_SERVER_MEMORY_LIMIT), and another query runs "
				       "under the larger limit of %s (NX_SERVER_QUERY_MEMORY_LIMIT), "
				       "one at a time: send it again when that one has answered",
				       nx__pdb_memory(pdb), nx__pdb_query_memory(pdb));
		memset(err, 0, sizeof(*err));
		rc = nx__pdb_open_retry(&retry, pdb, err);
		if (!rc)
			rc = attempt(retry, sql, lim, want, &cur, out, err);
		if (rc < 0) {
			nx__pdb_free(&retry);
			nx_duck_alloc_purge();
			atomic_store(&alone, false);
			return rc;
		}
	}
	if (rc < 0)
		return rc;
	*q = nx_xcalloc(1, sizeof(**q));
	(*q)->cur = cur;
	(*q)->retry = retry;
	return rc;
}

int nx__uq_fill(struct nx_user_query *q, struct nx_strbuf *out, size_t want,
		struct nx_err *err)
{
	return nx__pdb_cursor_fill(q->cur, out, want, err);
}

void nx__uq_close(struct nx_user_query *q)
{
	if (!q)
		return;
	nx__pdb_cursor_close(q->cur);
	if (q->retry) {
		nx__pdb_free(&q->retry);
		nx_duck_alloc_purge(); /* what it held goes back to the system now */
		atomic_store(&alone, false);
	}
	free(q);
}
