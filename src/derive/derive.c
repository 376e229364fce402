/* SPDX-License-Identifier: MIT
 * derive.c: runs the embedded derive SQL over the raw tables (see derive.h). */
#include "common/compat.h"
#include "derive/derive.h"
#include "derive/sql_files.h"
#include "db/profile_views.h"
#include "common/env_num.h"
#include "common/fsutil.h"
#include "common/strbuf.h"
#include "common/xalloc.h"
#include "schema/schema.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

int nx_derive_project(struct nx_duck *d, const char *table, const char *select_sql,
		      struct nx_strbuf *out, struct nx_err *err)
{
	const struct nx_table *t = nx_schema_table(table);
	char **cols = NULL;
	size_t ncols = 0;
	int rc;

	if (!t)
		return nx_errf(err, NX_EUSAGE, "derive: %s is not a schema table", table);
	rc = nx_duck_columns(d, select_sql, &cols, &ncols, err);
	if (rc)
		return nx_err_wrap(err, "derive %s", table);
	nx_strbuf_addstr(out, "SELECT ");
	for (size_t i = 0; i < t->nfields; i++) {
		const struct nx_field *f = &t->fields[i];
		bool have = false;
		for (size_t k = 0; k < ncols; k++)
			have |= !strcmp(cols[k], f->name);
		nx_strbuf_addstr(out, i ? ", CAST(" : "CAST(");
		if (have) {
			nx_strbuf_addstr(out, "q.");
			nx_sql_quote_ident(out, f->name);
		} else {
			nx_strbuf_addstr(out, "NULL");
		}
		nx_strbuf_addf(out, " AS %s) AS ", nx_schema_duck_type(f));
		nx_sql_quote_ident(out, f->name);
	}
	nx_strbuf_addf(out, " FROM (%s) q", select_sql);
	for (size_t k = 0; k < ncols; k++)
		free(cols[k]);
	free(cols);
	return 0;
}

/* Reads "-- key: value" from the header lines of a SQL file. */
static bool header_value(const char *text, const char *key, char *out, size_t size)
{
	size_t klen = strlen(key);
	for (const char *p = text; p && !strncmp(p, "--", 2); p = strchr(p, '\n'), p = p ? p + 1 : NULL) {
		const char *q = p + 2;
		while (*q == ' ')
			q++;
		if (strncmp(q, key, klen) || q[klen] != ':')
			continue;
		q += klen + 1;
		while (*q == ' ')
			q++;
		size_t n = strcspn(q, "\r\n");
		if (n >= size)
			n = size - 1;
		memcpy(out, q, n);
		out[n] = '\0';
		return true;
	}
	return false;
}

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* A query that ran out of DuckDB's buffer pool (a join or sort that could not spill
 * enough) is run once more with NX_DERIVE_RETRY_MEMORY_LIMIT (default 1GB), then the
 * session's limit is restored. Seen on a 100M-record trace in DmaPacketAggregated. */
static int retry_with_more_memory(struct nx_duck *d, const char *sql, const char *path,
				  uint64_t *rows, struct nx_err *err)
{
	char set[96];
	int rc;

	snprintf(set, sizeof(set), "SET memory_limit = '%s'",
		 nx_env_size_or("NX_DERIVE_RETRY_MEMORY_LIMIT", "1GB"));
	memset(err, 0, sizeof(*err));
	rc = nx_duck_exec(d, set, err);
	if (!rc)
		rc = nx_duck_copy_query(d, sql, path, rows, err);
	struct nx_err ignored = { 0 };
	snprintf(set, sizeof(set), "SET memory_limit = '%s'", nx_derive_memory_limit());
	nx_duck_exec(d, set, &ignored);
	return rc;
}

const char *nx_derive_memory_limit(void)
{
	return nx_env_size_or("NX_DERIVE_MEMORY_LIMIT", "128MB");
}

/* Whether a file's "-- empty when:" condition (a SELECT of one value) holds: a value that
 * is not 0 (NULL counts as 0: the query then runs). */
static int is_empty(struct nx_duck *d, const char *cond_sql, bool *empty, struct nx_err *err)
{
	char *sql = nx_xasprintf("SELECT CAST((%s) AS BIGINT)", cond_sql);
	int64_t v = 0;
	int rc = nx_duck_query_i64(d, sql, &v, err);

	free(sql);
	if (rc)
		return nx_err_wrap(err, "its '-- empty when:' condition");
	*empty = v != 0;
	return 0;
}

/* The settings a file's header gives its one query, set before it and reset after:
 * - "-- memory: 64MB": its own buffer pool (its sort or join spills sooner);
 * - "-- optimizers off: join_order": DuckDB's optimizers it goes without (Summary's
 *   one-row cross join: its join order search took half of its time, and no order
 *   changes its one row);
 * - "-- threads: 1": fewer of DuckDB's threads (FrameworkNode's ordered aggregates: each
 *   thread holds every group's lists until they merge). */
struct own_settings {
	bool memory, optimizers, threads;
	int64_t threads_before;
};

static int own_apply(struct nx_duck *d, const char *text, struct own_settings *o,
		     struct nx_err *err)
{
	char v[64], set[128];
	int rc = 0;

	if (header_value(text, "memory", v, sizeof(v)) && v[0] &&
	    strspn(v, "0123456789KMGB") == strlen(v)) {
		snprintf(set, sizeof(set), "SET memory_limit = '%s'", v);
		if ((rc = nx_duck_exec(d, set, err)))
			return rc;
		o->memory = true;
	}
	if (header_value(text, "optimizers off", v, sizeof(v)) && v[0] &&
	    strspn(v, "abcdefghijklmnopqrstuvwxyz_,") == strlen(v)) {
		snprintf(set, sizeof(set), "SET disabled_optimizers = '%s'", v);
		if ((rc = nx_duck_exec(d, set, err)))
			return rc;
		o->optimizers = true;
	}
	if (header_value(text, "threads", v, sizeof(v)) && v[0] && strlen(v) < 4 &&
	    strspn(v, "0123456789") == strlen(v)) {
		snprintf(set, sizeof(set), "SET threads = %s", v);
		if ((rc = nx_duck_query_i64(d, "SELECT current_setting('threads')::BIGINT",
					    &o->threads_before, err)) ||
		    (rc = nx_duck_exec(d, set, err)))
			return rc;
		o->threads = true;
	}
	return 0;
}

/* Sets back what own_apply set; returns rc, or the reset's error when rc was 0 (after
 * an error, the reset's own is ignored: the first one is the one to report). */
static int own_reset(struct nx_duck *d, const struct own_settings *o, int rc,
		     struct nx_err *err)
{
	struct nx_err ignored = { 0 };
	struct nx_err *e = rc ? &ignored : err;
	char set[96];
	int r = 0;

	if (o->threads) {
		snprintf(set, sizeof(set), "SET threads = %" PRId64, o->threads_before);
		r = nx_duck_exec(d, set, e) ? 1 : r;
	}
	if (o->optimizers)
		r = nx_duck_exec(d, "SET disabled_optimizers = ''", e) ? 1 : r;
	if (o->memory) {
		snprintf(set, sizeof(set), "SET memory_limit = '%s'", nx_derive_memory_limit());
		r = nx_duck_exec(d, set, e) ? 1 : r;
	}
	return rc ? rc : r ? err->code : 0;
}

int nx_derive_run(struct nx_duck *d, const char *dir, const char *staging,
		  const struct nx_progress *progress, nx_derive_note_fn note, void *note_arg,
		  struct nx_err *err)
{
	return nx_derive_run_files(d, dir, staging, nx_sql_files, nx_sql_file_count, progress,
				   note, note_arg, err);
}

int nx_derive_run_files(struct nx_duck *d, const char *dir, const char *staging,
			const struct nx_sql_file *files, size_t nfiles,
			const struct nx_progress *progress, nx_derive_note_fn note,
			void *note_arg, struct nx_err *err)
{
	const char *dirs[] = { dir, staging, NULL };
	int rc = nx_db_create_views(d, dir, err);

	if (!rc && staging)
		rc = nx_db_create_views(d, staging, err);
	if (!rc)
		rc = nx_db_create_empty_views(d, dir, err);

	for (size_t i = 0; !rc && i < nfiles; i++) {
		const struct nx_sql_file *f = &files[i];
		char table[128], requires[512], empty_when[512], missing[128] = "";
		struct nx_strbuf sql = NX_STRBUF_INIT;
		uint64_t rows = 0;
		double t0 = now_s();

		if (header_value(f->text, "macro", table, sizeof(table))) {
			/* a macro shared by the table files after it: defined, nothing written */
			rc = nx_duck_exec(d, f->text, err);
			if (rc)
				nx_err_wrap(err, "derive macro %s (%s)", table, f->name);
			continue;
		}
		bool stage = header_value(f->text, "stage", table, sizeof(table));
		if (!stage && !header_value(f->text, "table", table, sizeof(table))) {
			rc = nx_errf(err, NX_EUSAGE, "derive SQL %s has neither a '-- table:', a "
				     "'-- stage:' nor a '-- macro:' line", f->name);
			break;
		}
		if (stage && !staging)
			continue;
		if (header_value(f->text, "requires", requires, sizeof(requires))) {
			char *save = NULL;
			for (char *tok = strtok_r(requires, ", ", &save); tok;
			     tok = strtok_r(NULL, ", ", &save)) {
				if (!nx_db_table_has_file(dirs, tok)) {
					snprintf(missing, sizeof(missing), "%s", tok);
					break;
				}
			}
		}
		if (missing[0]) {
			if (note)
				note(note_arg, table, missing);
			continue;
		}
		/* "-- empty when: SELECT ...": a condition, read off what the ingest already
		 * counted, under which the query gives no rows; then it is not run (no file,
		 * as for a query that gives none) */
		if (!stage && header_value(f->text, "empty when", empty_when, sizeof(empty_when))) {
			bool empty = false;
			rc = is_empty(d, empty_when, &empty, err);
			if (rc) {
				nx_err_wrap(err, "derive %s (%s)", table, f->name);
				break;
			}
			if (empty) {
				struct nx_progress_event ev = { .kind = NX_PROGRESS_TABLE,
					.stage = "derive", .table = table, .how = "derived",
					.rows = 0, .seconds = now_s() - t0 };
				nx_progress_emit(progress, &ev);
				continue;
			}
		}
		if (stage) {
			/* an internal table for a later file: the query as it is, into the
			 * staging folder, kept when empty (its view must exist) */
			char *path = nx_xasprintf("%s/%s.parquet", staging, table);
			struct own_settings own = { 0 };
			rc = own_apply(d, f->text, &own, err);
			if (!rc)
				rc = nx_duck_copy_query(d, f->text, path, &rows, err);
			rc = own_reset(d, &own, rc, err);
			if (!rc) /* a few small files: all, for a part of a split one */
				rc = nx_db_create_views(d, staging, err);
			if (rc)
				nx_err_wrap(err, "derive %s (%s)", table, f->name);
			free(path);
			struct nx_progress_event ev = { .kind = NX_PROGRESS_TABLE, .stage = "derive",
				.table = table, .how = "staging", .rows = rows,
				.seconds = now_s() - t0 };
			if (!rc)
				nx_progress_emit(progress, &ev);
			continue;
		}
		rc = nx_derive_project(d, table, f->text, &sql, err);
		struct own_settings own = { 0 };
		if (!rc)
			rc = own_apply(d, f->text, &own, err);
		if (!rc) {
			char *path = nx_xasprintf("%s/%s.parquet", dir, table);
			rc = nx_duck_copy_query(d, sql.buf, path, &rows, err);
			if (rc && strstr(err->msg, "Out of Memory"))
				rc = retry_with_more_memory(d, sql.buf, path, &rows, err);
			if (!rc && rows == 0)
				remove(path);
			else if (!rc) /* its view only: the other files have not changed */
				rc = nx_db_create_table_view(d, dir, table, err);
			if (rc)
				nx_err_wrap(err, "derive %s (%s)", table, f->name);
			free(path);
		}
		rc = own_reset(d, &own, rc, err);
		if (!rc) {
			struct nx_progress_event ev = { .kind = NX_PROGRESS_TABLE, .stage = "derive",
				.table = table, .how = "derived", .rows = rows, .seconds = now_s() - t0 };
			nx_progress_emit(progress, &ev);
		}
		nx_strbuf_release(&sql);
	}
	return rc;
}
