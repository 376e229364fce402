/* SPDX-License-Identifier: MIT
 * duck_conn.c: opening, statement execution and the sandbox (see duck_conn.h). */
#include "common/compat.h"
#include "db/duck_conn.h"
#include "db/duck.h"
#include "common/strbuf.h"
#include "common/xalloc.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

int nx_duck_db_open(duckdb_database *db, const struct nx_duck_config *cfg, struct nx_err *err)
{
	duckdb_config c = NULL;
	char *open_err = NULL;
	char buf[32];
	int rc = 0;

	*db = NULL;
	if (duckdb_create_config(&c) != DuckDBSuccess)
		return nx_errf(err, NX_EDB, "cannot create a DuckDB configuration");
	if (cfg && cfg->threads) {
		snprintf(buf, sizeof(buf), "%u", cfg->threads);
		duckdb_set_config(c, "threads", buf);
	}
	if (cfg && cfg->memory_limit)
		duckdb_set_config(c, "memory_limit", cfg->memory_limit);
	duckdb_set_config(c, "autoinstall_known_extensions", "false");
	duckdb_set_config(c, "autoload_known_extensions", "false");
	if (duckdb_open_ext(NULL, db, c, &open_err) != DuckDBSuccess) {
		rc = nx_errf(err, NX_EDB, "cannot open DuckDB: %s", open_err ? open_err : "?");
		*db = NULL;
	}
	duckdb_free(open_err);
	duckdb_destroy_config(&c);
	return rc;
}

void nx_duck_idle_wait(long *wait_ns)
{
	struct timespec ts = { 0, *wait_ns };

	nanosleep(&ts, NULL);
	if (*wait_ns < 250000)
		*wait_ns *= 2;
}

duckdb_state nx_duck_execute_pending(duckdb_pending_result pending, duckdb_result *res)
{
	long wait_ns = 10000;

	for (;;) {
		duckdb_pending_state st = duckdb_pending_execute_task(pending);

		if (duckdb_pending_execution_is_finished(st))
			break;
		if (st != DUCKDB_PENDING_NO_TASKS_AVAILABLE) {
			wait_ns = 10000;
			continue;
		}
		nx_duck_idle_wait(&wait_ns);
	}
	return duckdb_execute_pending(pending, res);
}

const char *nx_duck_error_cause(const char *msg)
{
	static const char wrap[] = "Attempting to execute an unsuccessful or closed pending "
				   "query result\nError: ";
	const char *at = msg ? strstr(msg, wrap) : NULL;

	return at && at[sizeof(wrap) - 1] ? at + sizeof(wrap) - 1 : msg;
}

const char *nx_duck_exec_error(duckdb_pending_result pending, duckdb_result *res)
{
	const char *m = pending ? duckdb_pending_error(pending) : NULL;

	if (!m || !*m)
		m = duckdb_result_error(res);
	return m ? nx_duck_error_cause(m) : "query failed";
}

int nx_duck_con_exec(duckdb_connection c, const char *sql, struct nx_err *err)
{
	duckdb_result res;
	int rc = 0;

	if (duckdb_query(c, sql, &res) != DuckDBSuccess) {
		const char *m = duckdb_result_error(&res);
		rc = nx_errf(err, NX_EDB, "%s", m ? m : "query failed");
	}
	duckdb_destroy_result(&res);
	return rc;
}

int nx_duck_con_run(duckdb_connection con, const char *sql, duckdb_result *res,
		    struct nx_err *err)
{
	duckdb_extracted_statements ext = NULL;
	idx_t n = duckdb_extract_statements(con, sql, &ext);
	int rc = 0;

	if (n == 0) {
		const char *m = duckdb_extract_statements_error(ext);
		rc = nx_errf(err, NX_EDB, "%s", m ? m : "the query holds no statement");
	}
	for (idx_t i = 0; !rc && i < n; i++) {
		duckdb_prepared_statement ps = NULL;
		duckdb_pending_result pending = NULL;

		if (duckdb_prepare_extracted_statement(con, ext, i, &ps) != DuckDBSuccess) {
			const char *m = duckdb_prepare_error(ps);
			rc = nx_errf(err, NX_EDB, "%s", m ? m : "query failed");
		} else if (duckdb_pending_prepared(ps, &pending) != DuckDBSuccess) {
			const char *m = duckdb_pending_error(pending);
			rc = nx_errf(err, NX_EDB, "%s", m ? m : "query failed");
		} else if (nx_duck_execute_pending(pending, res) != DuckDBSuccess) {
			rc = nx_errf(err, NX_EDB, "%s", nx_duck_exec_error(pending, res));
			duckdb_destroy_result(res);
		} else if (i + 1 < n) {
			duckdb_destroy_result(res);
		}
		duckdb_destroy_pending(&pending);
		duckdb_destroy_prepare(&ps);
	}
	duckdb_destroy_extracted(&ext);
	return rc;
}

/* The first value of sql's result into *i (NULL or no row: 0) or *f (NaN), whichever
 * is not NULL. */
static int first_value(duckdb_connection con, const char *sql, int64_t *i, double *f,
		       struct nx_err *err)
{
	duckdb_result res;
	int rc = nx_duck_con_run(con, sql, &res, err);

	if (rc)
		return rc;
	bool cell = duckdb_row_count(&res) > 0 && duckdb_column_count(&res) > 0 &&
		    !duckdb_value_is_null(&res, 0, 0);
	if (i)
		*i = cell ? duckdb_value_int64(&res, 0, 0) : 0;
	if (f)
		*f = cell ? duckdb_value_double(&res, 0, 0) : NAN;
	duckdb_destroy_result(&res);
	return 0;
}

int nx_duck_con_query_i64(duckdb_connection con, const char *sql, int64_t *out,
			  struct nx_err *err)
{
	return first_value(con, sql, out, NULL, err);
}

int nx_duck_con_query_f64(duckdb_connection con, const char *sql, double *out,
			  struct nx_err *err)
{
	return first_value(con, sql, NULL, out, err);
}

/* Appends dir with one trailing slash: a prefix of /data/p then does not also allow
 * /data/p2. */
static void add_dir(struct nx_strbuf *sql, const char *dir)
{
	size_t len = strlen(dir);

	while (len > 1 && dir[len - 1] == '/')
		len--;
	char *slash = nx_xasprintf("%.*s/", (int)len, dir);
	nx_sql_quote(sql, slash);
	free(slash);
}

int nx_duck_con_sandbox(duckdb_connection c, const char *const *dirs, size_t n,
			const char *temp_dir, struct nx_err *err)
{
	struct nx_strbuf sql = NX_STRBUF_INIT;
	int rc;

	/* Settings DuckDB would otherwise derive from the process: its spill directory
	 * (".tmp" below the working directory, which it would also add to the allowed
	 * directories), the home directory (named by the errors of duckdb_extensions())
	 * and the store of persistent secrets under it. */
	nx_strbuf_addstr(&sql, "SET temp_directory = ");
	nx_sql_quote(&sql, temp_dir ? temp_dir : "");
	nx_strbuf_addstr(&sql, "; SET secret_directory = ''; SET allow_persistent_secrets = false; "
			       "SET home_directory = ");
	nx_sql_quote(&sql, n ? dirs[0] : "");
	nx_strbuf_addstr(&sql, "; SET allowed_directories = [");
	for (size_t i = 0; i < n; i++) {
		if (i)
			nx_strbuf_addch(&sql, ',');
		add_dir(&sql, dirs[i]);
	}
	nx_strbuf_addstr(&sql, "]; SET enable_external_access = false; "
			       "SET lock_configuration = true");
	rc = nx_duck_con_exec(c, sql.buf, err);
	nx_strbuf_release(&sql);
	return rc;
}
