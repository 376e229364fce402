/* SPDX-License-Identifier: MIT
 * duck_error.c: the cause of a failed DuckDB execution (see duck_error.h). */
#include "common/compat.h"
#include "db/duck_error.h"

#include <string.h>

const char *nx_duck_exec_error(duckdb_pending_result pending, duckdb_result *res)
{
	static const char closed[] = "Attempting to execute an unsuccessful or closed pending "
				     "query result\nError: ";
	const char *m = pending ? duckdb_pending_error(pending) : NULL, *cause;

	if (!m || !*m)
		m = duckdb_result_error(res);
	if (!m)
		return "query failed";
	cause = strstr(m, closed);
	return cause ? cause + sizeof(closed) - 1 : m;
}
