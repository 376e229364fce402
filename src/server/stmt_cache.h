/* SPDX-License-Identifier: MIT
 * stmt_cache.h: the prepared SELECT statements of one pooled connection, kept by their
 * exact SQL text. DuckDB binds a statement over parquet files again at every
 * execution (its file readers never allow a cached plan), so preparing and then
 * executing binds twice; a statement taken from here is bound once per request, as
 * duckdb_query does. Only statements that passed the SELECT-only check are put here.
 * A profile's files never change under one database (a new version gets a new
 * database), so an entry stays valid as long as its connection; its tag tells the
 * caller when a table it reads has been copied into memory since (resident.h), and
 * the caller then prepares it again, bound to the copy.
 *
 * A kept statement holds its first parquet file open (DuckDB's reader from the bind),
 * so the process keeps at most NX_STMT_CACHE_TOTAL statements over all connections and
 * databases: with every profile's pool full, open files stay within the server's reserve
 * for DuckDB (FD_RESERVE in server.c). Past the cap a statement is simply not kept. */
#ifndef NX_SERVER_STMT_CACHE_H
#define NX_SERVER_STMT_CACHE_H

#include "common/compat.h"

#include <duckdb.h>

/* A statement is given out this many times, then prepared again: DuckDB 1.4.4
 * keeps about 1.6 KB per execution of a prepared statement over one of its own tables
 * until the statement is destroyed (200,000 executions of a one-row Summary copy took a
 * process from 33 to 363 MB; a statement over parquet files, bound anew every time,
 * keeps nothing). Preparing again every 128 executions keeps a statement under 210 KB
 * and costs one prepare, about 0.1 ms, per 128 requests. */
#define NX_STMT_CACHE_USES 128
#define NX_STMT_CACHE_SIZE 8        /* per connection */
#define NX_STMT_CACHE_TOTAL 128     /* per process */
#define NX_STMT_CACHE_SQL_MAX 16384 /* longer statements are not kept */

/* What the caller keeps with a statement: the resident.h candidates it reads (a mask),
 * and how many tables had been copied into memory when it was prepared. */
struct nx_stmt_tag {
	uint64_t reads;
	unsigned copies;
};

struct nx_stmt_cache {
	struct nx_stmt_entry {
		char *sql;
		duckdb_prepared_statement ps;
		struct nx_stmt_tag tag;
		unsigned uses;  /* times given out */
		uint64_t used; /* tick of the last lookup: the least recent goes first */
	} ent[NX_STMT_CACHE_SIZE];
	uint64_t tick;
};

/* The statement prepared for sql, or NULL; *tag gets the tag it was kept with. It
 * stays owned by the cache. After NX_STMT_CACHE_USES lookups have found an entry, the
 * next one destroys it and finds nothing, so that the caller prepares it again. */
duckdb_prepared_statement nx__stmt_cache_get(struct nx_stmt_cache *c, const char *sql,
					     struct nx_stmt_tag *tag);
/* Keeps ps with its tag for sql and returns true (the cache owns ps then, evicting the least recently
 * used entry when full); false when sql is too long to keep or the process already keeps
 * NX_STMT_CACHE_TOTAL statements and this cache has none to give up (ps stays the
 * caller's). */
bool nx__stmt_cache_put(struct nx_stmt_cache *c, const char *sql, duckdb_prepared_statement ps,
			struct nx_stmt_tag tag);
/* Destroys the entry holding ps (after an execution failed with it). */
void nx__stmt_cache_drop(struct nx_stmt_cache *c, duckdb_prepared_statement ps);
/* Destroys every entry (before the connection is closed). */
void nx__stmt_cache_clear(struct nx_stmt_cache *c);
/* Statements kept by the whole process (tests). */
int nx__stmt_cache_total(void);

#endif
