/* SPDX-License-Identifier: MIT
 * duck_error.h: the message of a DuckDB statement that failed while it executed. */
#ifndef NX_DB_DUCK_ERROR_H
#define NX_DB_DUCK_ERROR_H

#include "common/compat.h"

#include <duckdb.h>

/* The cause of a failed execution of `pending` into `res`: when a task fails (an I/O
 * error such as a full disk), DuckDB's result reads "Invalid Input Error: Attempting to
 * execute an unsuccessful or closed pending query result" with the cause on the line
 * after; this returns the cause alone (a pointer into DuckDB's message). */
const char *nx_duck_exec_error(duckdb_pending_result pending, duckdb_result *res);

#endif
