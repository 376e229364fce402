/* SPDX-License-Identifier: MIT
 * test_duck_source.c: the nx_source() row path of db/duck.c into real parquet files read
 * back by DuckDB: list cells (VARCHAR[] split like string_split, BIGINT[]), NULLs and
 * row order, both inline (nx_duck_copy_source) and with the source run ahead on its own
 * thread (nx_duck_ahead_start + nx_duck_copy_ahead, with its row group size): its error reaches the
 * caller as it was written, and a copy that fails on DuckDB's side stops the producer.
 * A source started before its database opens (nx_duck_ahead_start) is written whole by
 * nx_duck_copy_ahead, and one never copied stops with its queue full. A table written in
 * parts by two writers of its columns is the table one writer writes. */
#include "common/compat.h"
#include "common/fsutil.h"
#include "common/xalloc.h"
#include "db/duck.h"
#include "db/source_ahead.h"
#include "helper/fixture.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <cmocka.h>

/* A source of SystemProfileEvents rows: id 1..rows, name, flow_id; fails with a message
 * naming its row when it reaches fail_at (0: never). With long_lists every flow_id
 * holds 100 items. */
struct evsrc {
	struct nx_colmap map;
	int64_t next, rows, fail_at;
	int calls;
	bool long_lists;
};

static int ev_next(void *self, struct nx_rowbuf *b, struct nx_err *err)
{
	struct evsrc *s = self;
	size_t n = 0, cap = nx_rowbuf_capacity(b);
	const int *c = s->map.idx;
	char text[256];

	__atomic_add_fetch(&s->calls, 1, __ATOMIC_RELEASE); /* read by the test's thread */
	for (; n < cap && s->next <= s->rows; n++, s->next++) {
		int64_t id = s->next;
		if (id == s->fail_at)
			return nx_errf(err, NX_ECORRUPT, "'events.json': bad event at row %" PRId64,
				       id);
		nx_rowbuf_i64(b, (size_t)c[0], n, id);
		snprintf(text, sizeof(text), "e%" PRId64, id);
		nx_rowbuf_str(b, (size_t)c[1], n, text);
		if (s->long_lists) {
			memset(text, ',', 99);
			snprintf(text + 99, sizeof(text) - 99, "%" PRId64, id);
			nx_rowbuf_strlist(b, (size_t)c[2], n, text, ',');
			continue;
		}
		switch (id % 5) {
		case 0:
			break; /* NULL */
		case 1:
			snprintf(text, sizeof(text), "%" PRId64 ",x", id);
			nx_rowbuf_strlist(b, (size_t)c[2], n, text, ',');
			break;
		case 2:
			nx_rowbuf_strlist(b, (size_t)c[2], n, "", ',');
			break;
		case 3:
			nx_rowbuf_strlist(b, (size_t)c[2], n, ",y,", ',');
			break;
		default:
			nx_rowbuf_str(b, (size_t)c[2], n, "one"); /* a scalar: one item */
			break;
		}
	}
	return (int)n;
}

static void ev_init(struct evsrc *s, struct nx_row_source *src, int64_t rows, int64_t fail_at)
{
	static const char *const names[] = { "id", "name", "flow_id", NULL };
	struct nx_err err = { 0 };

	memset(s, 0, sizeof(*s));
	assert_int_equal(nx_colmap_init(&s->map, "SystemProfileEvents", names, &err), 0);
	s->next = 1;
	s->rows = rows;
	s->fail_at = fail_at;
	src->table = s->map.table;
	src->self = s;
	src->next = ev_next;
	src->keys = NULL;
}

static int64_t q(struct nx_duck *d, const char *fmt, const char *path)
{
	struct nx_err err = { 0 };
	char *sql = nx_xasprintf(fmt, path);
	int64_t v = -1;

	if (nx_duck_query_i64(d, sql, &v, &err))
		fail_msg("%s: %s", sql, err.msg);
	free(sql);
	return v;
}

static void check_events(struct nx_duck *d, const char *path, int64_t rows)
{
	assert_int_equal(q(d, "SELECT count(*) FROM read_parquet('%s')", path), rows);
	assert_int_equal(q(d, "SELECT count(*) FROM (DESCRIBE SELECT * FROM read_parquet('%s')) "
			      "WHERE column_name = 'flow_id' AND column_type = 'VARCHAR[]'", path),
			 1);
	/* every row in order, every cell as string_split would make it */
	assert_int_equal(q(d, "SELECT count(*) FROM read_parquet('%s', file_row_number = true) "
			      "WHERE id <> file_row_number + 1 OR name <> 'e' || id OR flow_id "
			      "IS DISTINCT FROM CASE id % 5 WHEN 0 THEN NULL "
			      "WHEN 1 THEN string_split(id || ',x', ',') WHEN 2 THEN [''] "
			      "WHEN 3 THEN ['', 'y', ''] ELSE ['one'] END", path), 0);
	assert_int_equal(q(d, "SELECT count(*) FROM read_parquet('%s') WHERE id % 5 = 0 "
			      "AND flow_id IS NULL", path), rows / 5);
}

/* A source run ahead, started right before its copy. */
static int copy_ahead(struct nx_duck *d, struct nx_row_source *src, const char *path,
		      unsigned long row_group, uint64_t *rows, struct nx_err *err)
{
	struct nx_duck_ahead *a;
	int rc = nx_duck_ahead_start(src, false, &a, err);

	return rc ? rc : nx_duck_copy_ahead(d, a, path, row_group, rows, err);
}

/* Each test gets a fresh directory and a database. */
struct fx {
	char *dir;
	struct nx_duck *d;
};

static int fx_setup(void **state)
{
	struct fx *f = nx_xcalloc(1, sizeof(*f));
	struct nx_err err = { 0 };

	f->dir = nx_test_dir("duck_source");
	*state = f;
	return nx_duck_open(&f->d, 2, NULL, &err) ? -1 : 0;
}

static int fx_teardown(void **state)
{
	struct fx *f = *state;

	nx_duck_close(f->d);
	free(f->dir);
	free(f);
	return 0;
}

static void test_list_columns(void **state)
{
	struct fx *f = *state;
	char *dir = f->dir;
	struct nx_duck *d = f->d;
	char *inl = nx_xasprintf("%s/inline.parquet", dir);
	char *ahd = nx_xasprintf("%s/ahead.parquet", dir);
	struct nx_err err = { 0 };
	struct nx_row_source src;
	struct evsrc s;
	uint64_t rows = 0;
	const int64_t n = 3 * 2048 + 17; /* several chunks and a partial one */

	ev_init(&s, &src, n, 0);
	assert_int_equal(nx_duck_copy_source(d, &src, inl, &rows, &err), 0);
	assert_int_equal(rows, n);
	check_events(d, inl, n);
	ev_init(&s, &src, n, 0);
	if (copy_ahead(d, &src, ahd, 1000, &rows, &err))
		fail_msg("%s", err.msg);
	assert_int_equal(rows, n);
	check_events(d, ahd, n);
	/* its row groups are as small as asked (DuckDB cuts them at whole chunks) */
	static const char groups[] =
		"SELECT count(DISTINCT row_group_id) FROM parquet_metadata('%s')";
	assert_int_equal(q(d, groups, inl), 1);
	assert_true(q(d, groups, ahd) > 1);
	/* both ways write the same file content */
	char *cmp = nx_xasprintf("SELECT count(*) FROM (SELECT * FROM read_parquet('%s') EXCEPT "
				 "ALL SELECT * FROM read_parquet('%%s'))", inl);
	assert_int_equal(q(d, cmp, ahd), 0);
	free(cmp);
	free(inl);
	free(ahd);
}

/* BIGINT[] cells: BirInstruction's element_count_per_interval. */
struct binsrc {
	struct nx_colmap map;
	int64_t next;
};

static int bin_next(void *self, struct nx_rowbuf *b, struct nx_err *err)
{
	struct binsrc *s = self;
	size_t n = 0;
	int64_t v[8];

	(void)err;
	for (; n < nx_rowbuf_capacity(b) && s->next <= 5000; n++, s->next++) {
		int64_t k = s->next % 4; /* 0 items (NULL), then 1, 2 and 3 */
		for (int64_t i = 0; i < k; i++)
			v[i] = s->next + i;
		nx_rowbuf_i64(b, (size_t)s->map.idx[0], n, s->next);
		if (k == 1)
			nx_rowbuf_i64(b, (size_t)s->map.idx[1], n, s->next); /* one item */
		else if (k)
			nx_rowbuf_i64list(b, (size_t)s->map.idx[1], n, v, (size_t)k);
	}
	return (int)n;
}

static void test_bigint_lists(void **state)
{
	static const char *const names[] = { "id", "element_count_per_interval",
					     NULL };
	struct fx *f = *state;
	char *dir = f->dir;
	struct nx_duck *d = f->d;
	char *path = nx_xasprintf("%s/bir.parquet", dir);
	struct nx_err err = { 0 };
	struct nx_row_source src;
	struct binsrc s = { .next = 1 };
	uint64_t rows = 0;

	assert_int_equal(nx_colmap_init(&s.map, "BirInstruction", names, &err), 0);
	src.table = s.map.table;
	src.self = &s;
	src.next = bin_next;
	src.keys = NULL;
	if (copy_ahead(d, &src, path, 0, &rows, &err))
		fail_msg("%s", err.msg);
	assert_int_equal(rows, 5000);
	assert_int_equal(q(d, "SELECT count(*) FROM (DESCRIBE SELECT * FROM read_parquet('%s')) "
			      "WHERE column_name = 'element_count_per_interval' AND "
			      "column_type = 'BIGINT[]'", path), 1);
	assert_int_equal(q(d, "SELECT count(*) FROM read_parquet('%s') WHERE "
			      "element_count_per_interval IS DISTINCT FROM CASE WHEN id "
			      "% 4 = 0 THEN NULL ELSE range(id, id + "
			      "id % 4) END", path), 0);
	free(path);
}

/* The source's error, from its thread, is what the caller gets; the database stays
 * usable after it. */
static void test_ahead_error(void **state)
{
	struct fx *f = *state;
	char *dir = f->dir;
	struct nx_duck *d = f->d;
	char *path = nx_xasprintf("%s/bad.parquet", dir);
	struct nx_err err = { 0 };
	struct nx_row_source src;
	struct evsrc s;
	uint64_t rows = 0;

	ev_init(&s, &src, 100000, 5 * 2048 + 3);
	assert_int_equal(copy_ahead(d, &src, path, 0, &rows, &err), NX_ECORRUPT);
	assert_string_equal(err.msg, "'events.json': bad event at row 10243");
	/* the first batch fails */
	ev_init(&s, &src, 100000, 1);
	nx_err_clear(&err);
	assert_int_equal(copy_ahead(d, &src, path, 0, &rows, &err), NX_ECORRUPT);
	assert_string_equal(err.msg, "'events.json': bad event at row 1");
	/* and a good copy after both */
	ev_init(&s, &src, 10, 0);
	assert_int_equal(copy_ahead(d, &src, path, 0, &rows, &err), 0);
	assert_int_equal(rows, 10);
	check_events(d, path, 10);
	free(path);
}

/* A copy that DuckDB cannot write stops the producer, which was blocked on a full queue
 * of a source that would run for a long time. */
static void test_ahead_stopped(void **state)
{
	struct fx *f = *state;
	char *dir = f->dir;
	struct nx_duck *d = f->d;
	char *path = nx_xasprintf("%s/no/such/dir/x.parquet", dir);
	struct nx_err err = { 0 };
	struct nx_row_source src;
	struct evsrc s;
	uint64_t rows = 0;

	ev_init(&s, &src, INT64_MAX / 2, 0);
	assert_int_equal(copy_ahead(d, &src, path, 0, &rows, &err), NX_EDB);
	assert_true(err.msg[0] != '\0');
	assert_true(s.calls < 100); /* a few batches ahead, not the whole source */
	free(path);
}


/* Started before the database exists, as the trace ingest does: more rows than the
 * queue holds, so the producer waits for the copy, which then gets every row. */
static void test_ahead_before_open(void **state)
{
	struct fx *f = *state;
	char *path = nx_xasprintf("%s/early.parquet", f->dir);
	struct nx_err err = { 0 };
	struct nx_row_source src;
	struct nx_duck_ahead *a;
	struct nx_duck *d2;
	struct evsrc s;
	uint64_t rows = 0;

	ev_init(&s, &src, 40 * 2048 + 3, 0);
	assert_int_equal(nx_duck_ahead_start(&src, false, &a, &err), 0);
	assert_int_equal(nx_duck_open(&d2, 1, NULL, &err), 0);
	assert_int_equal(nx_duck_copy_ahead(d2, a, path, 0, &rows, &err), 0);
	assert_int_equal(rows, 40 * 2048 + 3);
	check_events(d2, path, 40 * 2048 + 3);
	nx_duck_close(d2);
	free(path);
}

/* A source that is started but never copied (the database failed to open) stops,
 * though its producer is waiting on a full queue; stopping nothing is a no-op. */
static void test_ahead_never_copied(void **state)
{
	struct nx_err err = { 0 };
	struct nx_row_source src;
	struct nx_duck_ahead *a;
	struct evsrc s;

	(void)state;
	ev_init(&s, &src, 100 * 2048, 0);
	assert_int_equal(nx_duck_ahead_start(&src, false, &a, &err), 0);
	/* the producer fills its queue, then waits for room that no copy will make */
	while (__atomic_load_n(&s.calls, __ATOMIC_ACQUIRE) < NX_AHEAD_CHUNKS)
		nanosleep(&(struct timespec){ 0, 1000 * 1000 }, NULL);
	nx_duck_ahead_stop(a);
	assert_int_equal(s.calls, NX_AHEAD_CHUNKS); /* read after the join: no batch more */
	nx_duck_ahead_stop(NULL);
}

/* Copies a source of rows SystemProfileEvents rows (long lists or not) in parts into
 * dir/<sub> with NX_INGEST_WRITERS set to writers ("ours": NX_INGEST_WRITER=ours, else
 * duckdb); returns the number of parts. */
static size_t copy_parts(struct nx_duck *d, const char *dir, const char *sub, int64_t rows,
			 bool long_lists, const char *writers, int64_t fail_at,
			 struct nx_err *err, int *rc)
{
	char *out = nx_path_join(dir, sub);
	struct nx_row_source src;
	struct evsrc s;
	uint64_t n = 0;
	size_t parts = 0;

	ev_init(&s, &src, rows, fail_at);
	s.long_lists = long_lists;
	assert_int_equal(nx_mkdirs(out, err), 0);
	setenv("NX_INGEST_WRITERS", writers, 1);
	setenv("NX_INGEST_WRITER", strcmp(writers, "ours") ? "duckdb" : "ours", 1);
	*rc = nx_duck_copy_source_parts(d, &src, out, &n, err);
	unsetenv("NX_INGEST_WRITERS");
	unsetenv("NX_INGEST_WRITER");
	for (;; parts++) {
		char *p = nx_xasprintf("%s/SystemProfileEvents_%zu.parquet", out, parts);
		bool have = nx_is_file(p);
		free(p);
		if (!have)
			break;
	}
	if (!*rc)
		assert_int_equal(n, rows);
	/* nothing of the writers' own is left behind */
	assert_int_equal(nx_test_sh("test -z \"$(ls -A %s | grep -v '^SystemProfileEvents_')\"",
				    out), 0);
	free(out);
	return parts;
}

/* Part i of a and b hold the same rows in the same row groups. */
static void same_parts(struct nx_duck *d, const char *dir, const char *a, const char *b,
		       size_t parts)
{
	for (size_t i = 0; i < parts; i++) {
		char *pa = nx_xasprintf("%s/%s/SystemProfileEvents_%zu.parquet", dir, a, i);
		char *pb = nx_xasprintf("%s/%s/SystemProfileEvents_%zu.parquet", dir, b, i);
		char *sql = nx_xasprintf("SELECT count(*) FROM (SELECT hash(x) AS h, row_number() "
					 "OVER () AS r FROM '%s' x) p FULL JOIN (SELECT hash(y) AS h, "
					 "row_number() OVER () AS r FROM '%%s' y) w USING (r) WHERE "
					 "p.h IS DISTINCT FROM w.h", pa);
		assert_int_equal(q(d, sql, pb), 0);
		free(sql);
		sql = nx_xasprintf("SELECT count(*) FROM ((SELECT row_group_id, row_group_num_rows, "
				   "count(*) FROM parquet_metadata('%s') GROUP BY ALL) EXCEPT ALL "
				   "(SELECT row_group_id, row_group_num_rows, count(*) FROM "
				   "parquet_metadata('%%s') GROUP BY ALL))", pa);
		assert_int_equal(q(d, sql, pb), 0);
		free(sql);
		sql = nx_xasprintf("SELECT count(*) FROM ((DESCRIBE SELECT * FROM '%s') EXCEPT ALL "
				   "(DESCRIBE SELECT * FROM '%%s'))", pa);
		assert_int_equal(q(d, sql, pb), 0);
		free(sql);
		free(pa);
		free(pb);
	}
}

/* A table written in parts by two writers, each of some of its columns, joined side by
 * side (db/parquet_zip.h): the same parts, rows, row groups and types as one writer
 * writes. Should DuckDB end the two writers' row groups apart (it ends a row group
 * early at 1 KB of buffered data per row, not reached here even with 100 items in every
 * flow_id), the parts are written again from both, side by side
 * (NX_TEST_SPLIT_REWRITE=1 forces that way): still the same rows. A source error
 * reaches the caller as written, and no part is left. */
static void test_split_copy(void **state)
{
	struct fx *f = *state;
	struct nx_err err = { 0 };
	int rc;
	const int64_t n = 9 * 2048 + 5;

	setenv("NX_INGEST_ROW_GROUP", "4096", 1);
	setenv("NX_INGEST_PART_GROUPS", "2", 1);
	size_t one = copy_parts(f->d, f->dir, "one", n, false, "1", 0, &err, &rc);
	assert_int_equal(rc, 0);
	assert_int_equal(one, 3);
	size_t two = copy_parts(f->d, f->dir, "two", n, false, "2", 0, &err, &rc);
	assert_int_equal(rc, 0);
	assert_int_equal(two, one);
	same_parts(f->d, f->dir, "one", "two", one);
	/* flow_id (column 12) and what follows it on the second writer */
	setenv("NX_INGEST_SPLIT_AT", "12", 1);
	one = copy_parts(f->d, f->dir, "long1", n, true, "1", 0, &err, &rc);
	assert_int_equal(rc, 0);
	setenv("NX_TEST_SPLIT_REWRITE", "1", 1);
	two = copy_parts(f->d, f->dir, "long2", n, true, "2", 0, &err, &rc);
	unsetenv("NX_TEST_SPLIT_REWRITE");
	assert_int_equal(rc, 0);
	assert_int_equal(two, one);
	char *all = nx_xasprintf("%s/long2/SystemProfileEvents_*.parquet", f->dir);
	assert_int_equal(q(f->d, "SELECT count(*) FROM (SELECT id, flow_id, row_number() OVER () "
				 "AS r FROM read_parquet('%s')) WHERE id <> r OR len(flow_id) <> 100 "
				 "OR flow_id[100] <> id::VARCHAR", all), 0);
	free(all);
	for (size_t i = 0; i < one; i++) {
		char *pa = nx_xasprintf("%s/long1/SystemProfileEvents_%zu.parquet", f->dir, i);
		char *pb = nx_xasprintf("%s/long2/SystemProfileEvents_%zu.parquet", f->dir, i);
		char *sql = nx_xasprintf("SELECT count(*) FROM (SELECT * FROM '%s' EXCEPT ALL "
					 "SELECT * FROM '%%s')", pa);
		assert_int_equal(q(f->d, sql, pb), 0);
		assert_int_equal(q(f->d, "SELECT count(*) FROM '%s'", pa),
				 q(f->d, "SELECT count(*) FROM '%s'", pb));
		free(sql);
		free(pa);
		free(pb);
	}
	unsetenv("NX_INGEST_SPLIT_AT");
	/* the source fails half way: its error, and no part */
	two = copy_parts(f->d, f->dir, "bad", n, false, "2", 5 * 2048 + 3, &err, &rc);
	assert_int_equal(rc, NX_ECORRUPT);
	assert_string_equal(err.msg, "'events.json': bad event at row 10243");
	assert_int_equal(two, 0);
	unsetenv("NX_INGEST_ROW_GROUP");
	unsetenv("NX_INGEST_PART_GROUPS");
	/* and the database goes on working */
	two = copy_parts(f->d, f->dir, "after", 10, false, "2", 0, &err, &rc);
	assert_int_equal(rc, 0);
	assert_int_equal(two, 1);
}

/* The parts written by our writer (NX_INGEST_WRITER's default): the same parts, rows in
 * the same order, row groups and column types as DuckDB's one COPY writes; lists long
 * or not. Row groups that do not end with a batch: parts of whole row groups, the last
 * smaller. A source error names the table, and no part is left; a writer that is
 * neither ours nor duckdb is refused. */
static void test_our_parts(void **state)
{
	struct fx *f = *state;
	struct nx_err err = { 0 };
	int rc;
	const int64_t n = 9 * 2048 + 5;

	setenv("NX_INGEST_ROW_GROUP", "4096", 1);
	setenv("NX_INGEST_PART_GROUPS", "2", 1);
	size_t one = copy_parts(f->d, f->dir, "duck", n, false, "1", 0, &err, &rc);
	assert_int_equal(rc, 0);
	size_t ours = copy_parts(f->d, f->dir, "ours", n, false, "ours", 0, &err, &rc);
	assert_int_equal(rc, 0);
	assert_int_equal(ours, 3);
	assert_int_equal(ours, one);
	same_parts(f->d, f->dir, "duck", "ours", one);
	one = copy_parts(f->d, f->dir, "duck_long", n, true, "1", 0, &err, &rc);
	assert_int_equal(rc, 0);
	ours = copy_parts(f->d, f->dir, "ours_long", n, true, "ours", 0, &err, &rc);
	assert_int_equal(rc, 0);
	assert_int_equal(ours, one);
	same_parts(f->d, f->dir, "duck_long", "ours_long", one);
	/* 3000-row groups, 6000-row parts: batches of 2048 rows cut across both */
	setenv("NX_INGEST_ROW_GROUP", "3000", 1);
	ours = copy_parts(f->d, f->dir, "odd", n, false, "ours", 0, &err, &rc);
	assert_int_equal(rc, 0);
	assert_int_equal(ours, 4);
	char *all = nx_xasprintf("%s/odd/SystemProfileEvents_*.parquet", f->dir);
	assert_int_equal(q(f->d, "SELECT count(*) FROM (SELECT id, row_number() OVER () AS r "
				 "FROM read_parquet('%s')) WHERE id <> r", all), 0);
	assert_int_equal(q(f->d, "SELECT count(*) FROM read_parquet('%s')", all), n);
	assert_int_equal(q(f->d, "SELECT count(*) FROM (SELECT file_name, sum(row_group_num_rows) "
				 "// count(DISTINCT path_in_schema) AS rows FROM "
				 "parquet_metadata('%s') GROUP BY 1) WHERE rows <> 6000 AND NOT "
				 "ends_with(file_name, '_3.parquet')", all), 0);
	assert_int_equal(q(f->d, "SELECT max(row_group_num_rows) FROM parquet_metadata('%s')", all),
			 3000);
	free(all);
	/* the source fails half way: its error with the table's name, and no part */
	ours = copy_parts(f->d, f->dir, "bad", n, false, "ours", 5 * 2048 + 3, &err, &rc);
	assert_int_equal(rc, NX_ECORRUPT);
	assert_string_equal(err.msg, "writing SystemProfileEvents in parts: 'events.json': bad "
				     "event at row 10243");
	assert_int_equal(ours, 0);
	unsetenv("NX_INGEST_ROW_GROUP");
	unsetenv("NX_INGEST_PART_GROUPS");
	/* no rows: no part */
	ours = copy_parts(f->d, f->dir, "none", 0, false, "ours", 0, &err, &rc);
	assert_int_equal(rc, 0);
	assert_int_equal(ours, 0);
	/* a writer of another name */
	char *out = nx_path_join(f->dir, "other");
	struct nx_row_source src;
	struct evsrc s;
	uint64_t rows = 0;
	ev_init(&s, &src, 10, 0);
	setenv("NX_INGEST_WRITER", "arrow", 1);
	assert_int_equal(nx_duck_copy_source_parts(f->d, &src, out, &rows, &err), NX_EUSAGE);
	unsetenv("NX_INGEST_WRITER");
	assert_string_equal(err.msg, "NX_INGEST_WRITER is 'arrow': it must be ours or duckdb");
	free(out);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_list_columns, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_bigint_lists, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_ahead_error, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_ahead_stopped, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_ahead_before_open, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_ahead_never_copied, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_split_copy, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_our_parts, fx_setup, fx_teardown),
	};
	return nx_test_done(cmocka_run_group_tests(tests, NULL, NULL));
}
