/* SPDX-License-Identifier: MIT
 * duck_copy_parts.c: the ingest's choice of parquet writer, ours (db/parquet_write.h) or
 * DuckDB's (NX_INGEST_WRITER): a row source written whole (nx_duck_write_source), and a
 * large table copied as parts of a few million rows, by ours or by DuckDB's one COPY, or
 * two that each write some of its columns, joined side by side (see
 * nx_duck_copy_source_parts in duck.h; docs/memory.md, "Two writers" and "Our writer for
 * the raw tables"). */
#include "common/compat.h"
#include "common/env_num.h"
#include "db/duck_copy.h"
#include "db/duck_conn.h"
#include "db/parquet_write.h"
#include "db/parquet_zip.h"
#include "db/rowbuf.h"
#include "db/source_ahead.h"
#include "common/fsutil.h"
#include "common/xalloc.h"

#include <errno.h>
#include <stdio.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

/* Whose writer writes a table in parts: NX_INGEST_WRITER, `ours` (the default) or
 * `duckdb`; *ours is set for ours. */
static int part_writer_kind(bool *ours, struct nx_err *err)
{
	const char *v = getenv("NX_INGEST_WRITER");

	*ours = !v || !*v || !strcmp(v, "ours");
	if (*ours || !strcmp(v, "duckdb"))
		return 0;
	return nx_errf(err, NX_EUSAGE, "NX_INGEST_WRITER is '%s': it must be ours or duckdb", v);
}

int nx_duck_part_writer_check(struct nx_err *err)
{
	bool ours;

	return part_writer_kind(&ours, err);
}

int nx_duck_write_source(struct nx_duck *d, struct nx_row_source *src, const char *path,
			 uint64_t *rows, struct nx_err *err)
{
	bool ours;
	int rc = part_writer_kind(&ours, err);

	if (rc)
		return rc;
	return ours ? nx_pqw_write_source(src, path, rows, err)
		    : nx_duck_copy_source(d, src, path, rows, err);
}

int nx_duck_write_ahead(struct nx_duck *d, struct nx_row_source *src, const char *path,
			uint64_t *rows, struct nx_err *err)
{
	struct nx_duck_ahead *a = NULL;
	bool ours;
	int rc = part_writer_kind(&ours, err);

	if (!rc)
		rc = nx_duck_ahead_start(src, ours, &a, err);
	if (rc)
		return rc;
	return ours ? nx_pqw_write_ahead(a, path, 0, rows, err)
		    : nx_duck_copy_ahead(d, a, path, 0, rows, err);
}

/* Writers of a table written in parts: NX_INGEST_WRITERS (1 or 2), else 2. */
static unsigned part_writers(void)
{
	const char *v = getenv("NX_INGEST_WRITERS");

	return v && !strcmp(v, "1") ? 1 : 2;
}

/* The first column of a split copy's second writer: the columns before it and those
 * from it on cost about the same to encode. A column's weight is a guess from its type
 * (a string or list column costs DuckDB's writer about twice a number's: dictionary
 * analysis and copies); NX_INGEST_SPLIT_AT overrides it. 0: no split. */
static size_t split_column(const struct nx_table *t)
{
	const char *v = getenv("NX_INGEST_SPLIT_AT");
	size_t total = 0, sum = 0, at;

	if (v && *v) {
		long long n = nx_env_whole_or("NX_INGEST_SPLIT_AT", LONG_MAX,
					      "columns (0: no split)", 0);
		return n > 0 && (size_t)n < t->nfields ? (size_t)n : 0;
	}
	if (t->nfields < 2)
		return 0;
	for (size_t i = 0; i < t->nfields; i++)
		total += nx_rowbuf_coltype(&t->fields[i]) >= NX_COL_VARCHAR ? 2 : 1;
	for (at = 0; at + 1 < t->nfields && 2 * sum < total; at++)
		sum += nx_rowbuf_coltype(&t->fields[at]) >= NX_COL_VARCHAR ? 2 : 1;
	return at ? at : 1;
}

/* SELECT of columns [from, to) of the source in slot k. */
static char *columns_sql(const struct nx_table *t, size_t from, size_t to, unsigned k)
{
	struct nx_strbuf sql = NX_STRBUF_INIT;

	nx_strbuf_addstr(&sql, "SELECT ");
	for (size_t i = from; i < to; i++) {
		if (i > from)
			nx_strbuf_addstr(&sql, ", ");
		nx_sql_quote_ident(&sql, t->fields[i].name);
	}
	nx_strbuf_addf(&sql, " FROM nx_source(%u)", k);
	return nx_strbuf_detach(&sql, NULL);
}

/* One writer of a copy in parts: its COPY into a directory of its own. */
struct part_writer {
	duckdb_connection con;
	char *sql, *tmp;
	const char *pattern;
	duckdb_prepared_statement ps;
	duckdb_pending_result pending;
	bool done;
	uint64_t rows;
	int rc;
	struct nx_err err;
};

/* Prepares w's COPY as a pending query. */
static int part_start(struct part_writer *w)
{
	struct nx_strbuf sql = NX_STRBUF_INIT;
	int rc = 0;

	nx__copy_sql(&sql, w->sql, w->tmp, nx__source_row_group(0), w->pattern,
		     nx__part_row_groups());
	if (duckdb_prepare(w->con, sql.buf, &w->ps) != DuckDBSuccess)
		rc = nx_errf(&w->err, NX_EDB, "%s", duckdb_prepare_error(w->ps));
	else if (duckdb_pending_prepared(w->ps, &w->pending) != DuckDBSuccess)
		rc = nx_errf(&w->err, NX_EDB, "%s", duckdb_pending_error(w->pending));
	nx_strbuf_release(&sql);
	return w->rc = rc;
}

/* w's COPY has ended: its row count or its error. */
static void part_end(struct part_writer *w)
{
	duckdb_result res;

	w->done = true;
	if (w->rc)
		return;
	if (duckdb_execute_pending(w->pending, &res) != DuckDBSuccess) {
		const char *m = duckdb_result_error(&res);
		w->rc = nx_errf(&w->err, NX_EDB, "%s", nx_duck_error_cause(m ? m : "query failed"));
	} else if (duckdb_row_count(&res) > 0 && !duckdb_value_is_null(&res, 0, 0)) {
		w->rows = (uint64_t)duckdb_value_int64(&res, 0, 0);
	}
	duckdb_destroy_result(&res);
}

/* Runs both writers' COPYs to their ends. DuckDB's pipelines are its tasks, and this
 * thread and DuckDB's worker run whichever task is ready, of either COPY: two threads
 * for two writers, and no thread of our own (a thread that ends leaves what DuckDB's
 * allocator gave it mapped: 30 MB more at the next table's peak at 10M records). When
 * one COPY fails, the source stops, so the other ends too. */
static void part_write_both(struct part_writer w[2], struct nx_duck_ahead *a)
{
	long wait_ns = 10000;

	for (int k = 0; k < 2; k++)
		if (part_start(&w[k]))
			w[k].done = true;
	if (w[0].rc || w[1].rc)
		nx__ahead_cancel(a);
	while (!w[0].done || !w[1].done) {
		bool progress = false;
		for (int k = 0; k < 2; k++) {
			if (w[k].done)
				continue;
			duckdb_pending_state st = duckdb_pending_execute_task(w[k].pending);
			if (duckdb_pending_execution_is_finished(st)) {
				part_end(&w[k]);
				if (w[k].rc) /* the other must not wait for batches no one frees */
					nx__ahead_cancel(a);
				progress = true;
			} else if (st != DUCKDB_PENDING_NO_TASKS_AVAILABLE) {
				progress = true;
			}
		}
		if (progress) {
			wait_ns = 10000;
			continue;
		}
		nx_duck_idle_wait(&wait_ns);
	}
	for (int k = 0; k < 2; k++) {
		duckdb_destroy_pending(&w[k].pending);
		duckdb_destroy_prepare(&w[k].ps);
	}
}

/* The number of parts "<t>_<i>.parquet" in dir: DuckDB numbers them from 0 in write
 * order. */
static size_t count_parts(const char *dir, const char *t)
{
	size_t n = 0;

	for (;; n++) {
		char *name = nx_xasprintf("%s/%s_%zu.parquet", dir, t, n);
		bool have = nx_is_file(name);
		free(name);
		if (!have)
			return n;
	}
}

/* Part i of table t in dir (the caller frees it). */
static char *part_path(const char *dir, const char *t, size_t i)
{
	return nx_xasprintf("%s/%s_%zu.parquet", dir, t, i);
}

/* Moves the n parts of t from `from` to dir. */
static int move_parts(const char *from, const char *dir, const char *t, size_t n,
		      struct nx_err *err)
{
	int rc = 0;

	for (size_t i = 0; !rc && i < n; i++) {
		char *a = part_path(from, t, i), *b = part_path(dir, t, i);
		if (rename(a, b))
			rc = nx_errf(err, -errno, "cannot rename '%s': %s", a, strerror(errno));
		free(a);
		free(b);
	}
	return rc;
}

/* Joins part i of the left writer's columns with part i of the right's, every i,
 * into the left's files; *zipped is false, and nothing changed, when some row group
 * differs in size between the two (DuckDB also ends a row group at 1 KB per row of
 * its buffered data, which two writers of different columns may reach apart). */
static int zip_parts(const char *left, const char *right, const char *t, size_t n,
		     bool *zipped, struct nx_err *err)
{
	int rc = 0;

	*zipped = true;
	for (size_t i = 0; !rc && *zipped && i < n; i++) {
		char *a = part_path(left, t, i), *b = part_path(right, t, i);
		rc = nx_parquet_zip_check(a, b, zipped, err);
		free(a);
		free(b);
	}
	for (size_t i = 0; !rc && *zipped && i < n; i++) {
		char *a = part_path(left, t, i), *b = part_path(right, t, i);
		rc = nx_parquet_zip(a, b, err);
		free(a);
		free(b);
	}
	return rc;
}

/* The slow way to the same parts, for files that zip_parts cannot join: DuckDB reads
 * both writers' parts row by row side by side and writes them again into out. */
static int rewrite_parts(struct nx_duck *d, const char *left, size_t nl, const char *right,
			 size_t nr, const char *out, const char *pattern, const char *t,
			 uint64_t *rows, struct nx_err *err)
{
	struct nx_strbuf sql = NX_STRBUF_INIT;
	const char *dirs[2] = { left, right };
	size_t n[2] = { nl, nr };
	int rc;

	nx_strbuf_addstr(&sql, "SELECT * FROM ");
	for (int s = 0; s < 2; s++) {
		nx_strbuf_addstr(&sql, s ? " POSITIONAL JOIN read_parquet([" : "read_parquet([");
		for (size_t i = 0; i < n[s]; i++) {
			char *p = part_path(dirs[s], t, i);
			if (i)
				nx_strbuf_addstr(&sql, ", ");
			nx_sql_quote(&sql, p);
			free(p);
		}
		nx_strbuf_addstr(&sql, "])");
	}
	rc = nx__copy_to(nx__duck_con(d), sql.buf, out, nx__source_row_group(0), pattern,
			 nx__part_row_groups(), rows, err);
	nx_strbuf_release(&sql);
	return rc;
}

/* The split copy of nx_duck_copy_source_parts: columns [0, at) on the calling thread,
 * [at, n) on a thread of its own with the database's second connection, both reading
 * the batches of a, into tmp[0] and tmp[1]; then each part's two files are joined into
 * tmp[0]'s, or written again into tmp[2]. *from says which holds the *nparts parts. */
static int copy_split(struct nx_duck *d, struct nx_row_source *src, struct nx_duck_ahead *a,
		      size_t at, char *const tmp[3], uint64_t *rows, size_t *nparts, int *from,
		      struct nx_err *err)
{
	const struct nx_table *t = src->table;
	char *pattern = nx_xasprintf("%s_{i}", t->name);
	struct part_writer w[2];
	bool zipped = false;
	int rc = 0;

	if (!nx__duck_con2(d)) {
		nx_duck_ahead_stop(a);
		free(pattern);
		return nx_errf(err, NX_EDB, "cannot connect to DuckDB a second time");
	}
	memset(w, 0, sizeof(w));
	for (unsigned k = 0; k < 2; k++) {
		nx__duck_source_set(d, k, src, a);
		w[k].con = k ? nx__duck_con2(d) : nx__duck_con(d);
		w[k].sql = columns_sql(t, k ? at : 0, k ? t->nfields : at, k);
		w[k].tmp = tmp[k];
		w[k].pattern = pattern;
	}
	part_write_both(w, a);
	nx_duck_ahead_stop(a);
	rc = nx__duck_source_end(d, 0, w[0].rc, &w[0].err, err);
	rc = nx__duck_source_end(d, 1, rc ? rc : w[1].rc, rc ? err : &w[1].err, err);
	if (!rc && w[0].rows != w[1].rows)
		rc = nx_errf(err, NX_EDB, "the two writers of %s wrote %" PRIu64 " and %" PRIu64
			     " rows", t->name, w[0].rows, w[1].rows);
	size_t nl = rc ? 0 : count_parts(tmp[0], t->name);
	size_t nr = rc ? 0 : count_parts(tmp[1], t->name);
	/* NX_TEST_SPLIT_REWRITE=1 takes the slow way, for the tests: DuckDB 1.4.4 has not
	 * been seen to end the two writers' row groups apart */
	const char *test = getenv("NX_TEST_SPLIT_REWRITE");
	if (!rc && nl == nr && !(test && !strcmp(test, "1")))
		rc = zip_parts(tmp[0], tmp[1], t->name, nl, &zipped, err);
	*nparts = nl;
	*rows = w[0].rows;
	*from = 0;
	if (!rc && !zipped) {
		rc = rewrite_parts(d, tmp[0], nl, tmp[1], nr, tmp[2], pattern, t->name, rows, err);
		*nparts = rc ? 0 : count_parts(tmp[2], t->name);
		*from = 2;
	}
	for (unsigned k = 0; k < 2; k++)
		free(w[k].sql);
	free(pattern);
	return rc;
}

/* The parts of src written by DuckDB, by one COPY into tmp[0] or split by columns from
 * column at on (copy_split); *from says which of tmp holds the *nparts parts. */
static int duck_parts(struct nx_duck *d, struct nx_row_source *src, size_t at,
		      char *const tmp[3], uint64_t *rows, size_t *nparts, int *from,
		      struct nx_err *err)
{
	const char *t = src->table->name;
	char *pattern = nx_xasprintf("%s_{i}", t);
	struct nx_err ignored = { 0 };
	struct nx_duck_ahead *a = NULL;
	int64_t threads = 0;
	int rc;

	/* two writers need two threads to run their COPYs: one blocked on the source waits
	 * for the other to take its batch (part_write_both) */
	if (at && (nx_duck_con_query_i64(nx__duck_con(d),
					 "SELECT current_setting('threads')::BIGINT", &threads,
					 &ignored) || threads < 2))
		at = 0;
	rc = nx__ahead_begin(src, false, at ? 2 : 1, &a, err);
	if (!rc && at) {
		rc = copy_split(d, src, a, at, tmp, rows, nparts, from, err);
	} else if (!rc) {
		rc = nx__copy_source(d, src, a, tmp[0], pattern, 0, rows, err);
		*nparts = rc ? 0 : count_parts(tmp[0], t);
	}
	free(pattern);
	return rc;
}

int nx_duck_copy_source_parts(struct nx_duck *d, struct nx_row_source *src, const char *dir,
			      uint64_t *rows, struct nx_err *err)
{
	const char *t = src->table->name;
	size_t at = part_writers() > 1 ? split_column(src->table) : 0, nparts = 0;
	char *tmp[3];
	struct nx_err ignored = { 0 };
	struct nx_duck_ahead *a = NULL;
	uint64_t n = 0;
	int from = 0, rc;
	bool ours;

	if ((rc = part_writer_kind(&ours, err)))
		return rc;
	for (int k = 0; k < 3; k++) {
		char *name = nx_xasprintf(".%s.parts%d.tmp", t, k);
		tmp[k] = nx_path_join(dir, name);
		free(name);
		nx_remove_tree(tmp[k], &ignored);
	}
	/* The trace tables are the bulk of an ingest: their source decodes the trace on a
	 * thread of its own while our writer encodes on this one, or DuckDB on one thread,
	 * or on two that each write some of the columns (docs/memory.md, "Two writers",
	 * "Our writer for the raw tables"). */
	if (ours) {
		unsigned long rg = nx__source_row_group(0);
		rc = nx_mkdirs(tmp[0], err);
		if (!rc)
			rc = nx__ahead_begin(src, true, 1, &a, err);
		if (!rc)
			rc = nx_pqw_write_parts(a, tmp[0], (uint64_t)rg * nx__part_row_groups(), rg,
						&n, &nparts, err);
	} else {
		rc = duck_parts(d, src, at, tmp, &n, &nparts, &from, err);
	}
	if (!rc)
		rc = move_parts(tmp[from], dir, t, nparts, err);
	for (int k = 0; k < 3; k++) {
		nx_remove_tree(tmp[k], &ignored);
		free(tmp[k]);
	}
	if (rows)
		*rows = n;
	return rc;
}
