/* SPDX-License-Identifier: MIT
 * duck_conn.h: the raw-handle layer of the DuckDB boundary, for the modules that drive
 * DuckDB's C API themselves (the ingest connection in duck.c, the server's pooled,
 * interruptible profile databases). Opening with our configuration, running our own
 * statements and locking a database down to some directories happen here, once. */
#ifndef NX_DB_DUCK_CONN_H
#define NX_DB_DUCK_CONN_H

#include "common/compat.h"
#include "common/err.h"

#include <duckdb.h>

struct nx_duck_config {
	unsigned threads;         /* 0 lets DuckDB choose */
	const char *memory_limit; /* NULL keeps DuckDB's default */
};

/* Opens an in-memory database with cfg (NULL: defaults). Extensions are never
 * installed or loaded behind our back. */
int nx_duck_db_open(duckdb_database *db, const struct nx_duck_config *cfg, struct nx_err *err);

/* Runs one or more statements of our own (DDL, settings), discarding results; DuckDB's
 * message becomes err's on failure. */
int nx_duck_con_exec(duckdb_connection c, const char *sql, struct nx_err *err);

/* Runs the statements of sql one by one through nx_duck_execute_pending (so the
 * calling thread sleeps rather than spins while a one-threaded scan runs); *res gets
 * the last one's result, which the caller destroys (nothing to destroy on failure). */
int nx_duck_con_run(duckdb_connection c, const char *sql, duckdb_result *res,
		    struct nx_err *err);
/* The first column of the first row of sql's last statement as int64 (no row or NULL:
 * 0), or as a double (NaN). */
int nx_duck_con_query_i64(duckdb_connection c, const char *sql, int64_t *out,
			  struct nx_err *err);
int nx_duck_con_query_f64(duckdb_connection c, const char *sql, double *out,
			  struct nx_err *err);

/* The API server's databases parse each parquet footer once, not once per query (the
 * cache checks each file's modification time); the benchmarks that compare against
 * DuckDB directly run the same statement, so both sides read footers alike. */
#define NX_DUCK_FOOTER_CACHE_SQL "SET parquet_metadata_cache = true"

/* The wait between polls of a pending query with no task for this thread: sleeps
 * *wait_ns, then doubles it up to 0.5 ms (reset it to 10 us after progress). */
void nx_duck_idle_wait(long *wait_ns);

/* Executes a pending result to the end into *res, like duckdb_execute_pending, but
 * waits (short sleeps, 10 us growing to 250 us) while DuckDB has no task for this thread
 * instead of polling its scheduler in a tight loop: with a one-threaded scan (the
 * ingest's row sources) that loop kept a whole core busy for nothing. Returns
 * DuckDBError like duckdb_execute_pending; *res is then set and holds the error. */
duckdb_state nx_duck_execute_pending(duckdb_pending_result pending, duckdb_result *res);

/* DuckDB's message without the wrapper it puts around an error met while a pending
 * result executes ("Invalid Input Error: Attempting to execute an unsuccessful or
 * closed pending query result\nError: <the cause>"): the cause. */
const char *nx_duck_error_cause(const char *msg);

/* The cause of a failed execution of `pending` into `res` (an I/O error such as a full
 * disk, ...): the pending result's error, else the result's, through
 * nx_duck_error_cause. A pointer into DuckDB's message, or a fixed text. */
const char *nx_duck_exec_error(duckdb_pending_result pending, duckdb_result *res);

/* Locks the database of c down before anything reads a file: files can be read only
 * below dirs[0..n) (allowed_directories), all other external access is off and the
 * configuration is locked so no later statement can undo this. DuckDB spills into
 * temp_dir, a private directory the caller made (it joins the allowed directories),
 * or nowhere when NULL: a query then needs to fit DuckDB's memory limit. Nothing
 * else of the process (working directory, home directory) stays reachable: the home
 * directory becomes dirs[0] and persistent secrets are off. */
int nx_duck_con_sandbox(duckdb_connection c, const char *const *dirs, size_t n,
			const char *temp_dir, struct nx_err *err);

struct nx_duck;
/* The connection of a database opened by nx_duck_open (db/duck.h), for the files of
 * src/db that drive DuckDB's API on it. */
duckdb_connection nx__duck_con(struct nx_duck *d);
/* Its second connection, made when first asked for (NULL when DuckDB refuses it). */
duckdb_connection nx__duck_con2(struct nx_duck *d);
/* The connection of its appenders, likewise: an appender flushing on a connection ends
 * the streaming result being read on it. */
duckdb_connection nx__duck_con_app(struct nx_duck *d);

#endif
