/* SPDX-License-Identifier: MIT
 * test_parquet_write.c: our parquet writer (db/parquet_write.h), through
 * nx_pqw_write_ahead as the trace ingest uses it, against DuckDB's writer fed the same
 * rows. For every stored schema table, rows with every kind of cell (NULLs, empty and
 * long strings, lists NULL, empty and of several items, extreme integers, NaN) read back
 * by DuckDB equal DuckDB's own file row for row, with the same column types, and the
 * integer columns' statistics agree. Row groups of a size that splits the batches,
 * none at all (an empty table), a source that fails mid-way, a path that cannot be
 * created and a file that cannot grow (RLIMIT_FSIZE) each end in a clear error or a
 * correct file, never a half-written one at the path. Cells of megabytes come back whole. */
#include "common/compat.h"
#include "common/fsutil.h"
#include "common/xalloc.h"
#include "db/duck.h"
#include "db/parquet_read.h"
#include "db/parquet_write.h"
#include "helper/fixture.h"
#include "schema/schema.h"

#include <math.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <cmocka.h>

/* Rows 0..rows-1 of any table: each cell is a function of (row, column), NULL for some;
 * fails at fail_at (-1: never). With dict set, the string columns are those of
 * strings_cell instead, and every third number column's those of repeats_cell. */
struct gen {
	const struct nx_table *t;
	int64_t next, rows, fail_at;
	bool dict, words; /* words: the cells of words_cell and runs_cell */
};

static void cell(struct nx_rowbuf *b, const struct nx_field *f, size_t col, size_t n,
		 int64_t row)
{
	const char *type = nx_schema_duck_type(f);
	int64_t k = (row * 7 + (int64_t)col * 13) % 11;
	char text[96];

	if (!type || k == 0)
		return; /* NULL */
	if (!strcmp(type, "BIGINT") || !strcmp(type, "INTEGER")) {
		int64_t v = k == 1 ? (!strcmp(type, "BIGINT") ? INT64_MIN : INT32_MIN)
			  : k == 2 ? (!strcmp(type, "BIGINT") ? INT64_MAX : INT32_MAX)
				   : row * (int64_t)(col + 1) - 5000;
		nx_rowbuf_i64(b, col, n, v);
	} else if (!strcmp(type, "DOUBLE") || !strcmp(type, "FLOAT")) {
		nx_rowbuf_f64(b, col, n, k == 1 ? -0.0 : k == 3 ? NAN : (double)row / 8.0 - 100.0);
	} else if (!strcmp(type, "BOOLEAN")) {
		nx_rowbuf_bool(b, col, n, (row + (int64_t)col) % 3 == 0);
	} else if (!strcmp(type, "BIGINT[]")) {
		int64_t v[3] = { row, -row, INT64_MAX };
		nx_rowbuf_i64list(b, col, n, v, (size_t)(k % 4)); /* 0 items: an empty list */
	} else if (!strcmp(type, "VARCHAR[]")) {
		if (k == 1)
			text[0] = '\0';
		else
			snprintf(text, sizeof(text), k == 2 ? "%" PRId64 ",,longer-than-twelve"
							    : "%" PRId64 ",x", row);
		nx_rowbuf_strlist(b, col, n, text, ',');
	} else if (k == 1) {
		nx_rowbuf_str(b, col, n, "");
	} else if (k == 2) {
		char *big = nx_xmalloc(5000);
		memset(big, 'a' + (int)(row % 26), 4999);
		big[4999] = '\0';
		nx_rowbuf_str(b, col, n, big);
		free(big);
	} else {
		snprintf(text, sizeof(text), k < 6 ? "r%" PRId64 : "a string past the inline size %" PRId64,
			 row % 97);
		nx_rowbuf_str(b, col, n, text);
	}
}

/* A string cell for the dictionary: by column, one of three kinds. Repeats: NULL, "",
 * a 3000-byte string of three kinds and five short ones, so a chunk's dictionary holds
 * ten values. All distinct: a chunk passes the dictionary's bound of a quarter of its
 * rows. Few distinct but large (the first such column only): every 64th row a distinct
 * string of 20000 bytes, which passes the 1 MiB bound in a row group of 4096 rows. */
static void strings_cell(struct nx_rowbuf *b, size_t col, size_t n, int64_t row,
			 bool first_large)
{
	char text[64];

	if (col % 3 == 0) {
		int64_t k = row % 7;
		if (k == 0)
			return;
		if (k == 1) {
			nx_rowbuf_str(b, col, n, "");
		} else if (k == 2) {
			char *big = nx_xmalloc(3001);
			memset(big, 'a' + (int)(row % 3), 3000);
			big[3000] = '\0';
			nx_rowbuf_str(b, col, n, big);
			free(big);
		} else {
			snprintf(text, sizeof(text), "v%" PRId64, row % 5);
			nx_rowbuf_str(b, col, n, text);
		}
	} else if (col % 3 == 1) {
		if (row % 10 == 3)
			return;
		snprintf(text, sizeof(text), "distinct value %" PRId64 "/%zu", row, col);
		nx_rowbuf_str(b, col, n, text);
	} else if (first_large && row % 64 == 0) {
		char *big = nx_xmalloc(20001);
		memset(big, 'k', 20000);
		big[20000] = '\0';
		int len = snprintf(text, sizeof(text), "%" PRId64 ":", row);
		memcpy(big, text, (size_t)len);
		nx_rowbuf_str(b, col, n, big);
		free(big);
	} else {
		snprintf(text, sizeof(text), "x%" PRId64, row % 3);
		nx_rowbuf_str(b, col, n, text);
	}
}

/* A number cell that repeats: NULL, the extremes (-0.0 and NaN for floats), 0 and five
 * others, so a chunk's dictionary holds eight values. */
static void repeats_cell(struct nx_rowbuf *b, const char *type, size_t col, size_t n,
			 int64_t row)
{
	int64_t k = row % 9;
	bool i64 = !strcmp(type, "BIGINT");

	if (k == 0)
		return;
	if (!strcmp(type, "DOUBLE") || !strcmp(type, "FLOAT"))
		nx_rowbuf_f64(b, col, n, k == 1 ? -0.0 : k == 2 ? NAN : k == 3 ? 0.0
						  : (double)(row % 5) + 0.5);
	else
		nx_rowbuf_i64(b, col, n, k == 1 ? (i64 ? INT64_MIN : INT32_MIN)
				       : k == 2 ? (i64 ? INT64_MAX : INT32_MAX)
				       : k == 3 ? 0 : (row % 5) * 1000 - 7);
}

/* A string of 0 to 36 bytes, some of each length one byte apart from the others at
 * every place (before, at and past the 4th, 8th and 16th byte: the dictionary compares
 * a value's first 16 bytes as two words, db/parquet_dict.h). */
static size_t word_of(int64_t row, char s[40])
{
	static const char base[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJ";
	size_t len = (size_t)(row % 37), at = len ? (size_t)(row / 37) % len : 0;

	memcpy(s, base, len);
	if (len && (row / 37) % 2)
		s[at] = '#';
	return len;
}

static void words_cell(struct nx_rowbuf *b, size_t col, size_t n, int64_t row)
{
	char s[40];
	size_t len = word_of(row, s);

	nx_rowbuf_strn(b, col, n, s, len);
}

static int64_t run_of(int64_t row)
{
	return (row / (1 + (row / 1000) % 12)) % 3000;
}

/* A number in runs of 1 to 12 rows (RLE runs and bit-packed groups, their bounds at every
 * place of a group of 8), of more than 1024 distinct values in 20000 rows. */
static void runs_cell(struct nx_rowbuf *b, size_t col, size_t n, int64_t row)
{
	nx_rowbuf_i64(b, col, n, run_of(row));
}

static int gen_next(void *self, struct nx_rowbuf *b, struct nx_err *err)
{
	struct gen *g = self;
	size_t n = 0, cap = nx_rowbuf_capacity(b);

	for (; n < cap && g->next < g->rows; n++, g->next++) {
		if (g->next == g->fail_at)
			return nx_errf(err, NX_ECORRUPT, "'gen': bad row %" PRId64, g->next);
		for (size_t c = 0, large = 0; c < g->t->nfields; c++) {
			const char *type = nx_schema_duck_type(&g->t->fields[c]);
			if (g->words && type && !strcmp(type, "VARCHAR"))
				words_cell(b, c, n, g->next);
			else if (g->words && type && !strcmp(type, "BIGINT"))
				runs_cell(b, c, n, g->next);
			else if (g->dict && type && !strcmp(type, "VARCHAR"))
				strings_cell(b, c, n, g->next, c % 3 == 2 && !large++);
			else if (g->dict && type && c % 3 == 0 && (!strcmp(type, "BIGINT") ||
								   !strcmp(type, "INTEGER") ||
								   !strcmp(type, "DOUBLE") ||
								   !strcmp(type, "FLOAT")))
				repeats_cell(b, type, c, n, g->next);
			else
				cell(b, &g->t->fields[c], c, n, g->next);
		}
	}
	return (int)n;
}

static struct nx_row_source gen_source(struct gen *g, const struct nx_table *t, int64_t rows,
				       int64_t fail_at)
{
	g->t = t;
	g->next = 0;
	g->rows = rows;
	g->fail_at = fail_at;
	g->dict = g->words = false;
	return (struct nx_row_source){ .table = t, .self = g, .next = gen_next };
}

struct fx {
	char *dir;
	struct nx_duck *d;
};

static int fx_setup(void **state)
{
	struct fx *f = nx_xcalloc(1, sizeof(*f));
	struct nx_err err = { 0 };

	f->dir = nx_test_dir("parquet_write");
	*state = f;
	return nx_duck_open(&f->d, 2, NULL, &err) ? -1 : 0;
}

static int fx_teardown(void **state)
{
	struct fx *f = *state;
	struct nx_err err = { 0 };

	nx_duck_close(f->d);
	nx_remove_tree(f->dir, &err);
	free(f->dir);
	free(f);
	return 0;
}

static int64_t q(struct nx_duck *d, const char *fmt, ...) NX_PRINTF(2, 3);
static int64_t q(struct nx_duck *d, const char *fmt, ...)
{
	struct nx_err err = { 0 };
	struct nx_strbuf sql = NX_STRBUF_INIT;
	int64_t v = -1;
	va_list ap;

	va_start(ap, fmt);
	nx_strbuf_vaddf(&sql, fmt, ap);
	va_end(ap);
	if (nx_duck_query_i64(d, sql.buf, &v, &err))
		fail_msg("%s: %s", sql.buf, err.msg);
	nx_strbuf_release(&sql);
	return v;
}

/* Ours: the source run ahead and written by nx_pqw_write_ahead. */
static int write_ours(struct nx_row_source *src, const char *path, unsigned long row_group,
		      uint64_t *rows, struct nx_err *err)
{
	struct nx_duck_ahead *a;
	int rc = nx_duck_ahead_start(src, true, &a, err);

	return rc ? rc : nx_pqw_write_ahead(a, path, row_group, rows, err);
}

/* Writes rows of t both ways and checks that DuckDB reads the same rows and types. */
static void same_as_duckdb_as(struct fx *f, const struct nx_table *t, int64_t rows,
			      unsigned long row_group, bool dict, bool words)
{
	char *ours = nx_xasprintf("%s/%s.ours.parquet", f->dir, t->name);
	char *theirs = nx_xasprintf("%s/%s.duck.parquet", f->dir, t->name);
	struct nx_err err = { 0 };
	struct gen g;
	struct nx_row_source src = gen_source(&g, t, rows, -1);
	uint64_t n1 = 0, n2 = 0;

	g.dict = dict;
	g.words = words;
	if (nx_duck_copy_source(f->d, &src, theirs, &n1, &err))
		fail_msg("%s: DuckDB: %s", t->name, err.msg);
	src = gen_source(&g, t, rows, -1);
	g.dict = dict;
	g.words = words;
	if (write_ours(&src, ours, row_group, &n2, &err))
		fail_msg("%s: ours: %s", t->name, err.msg);
	assert_int_equal(n1, rows);
	assert_int_equal(n2, rows);
	if (q(f->d, "SELECT count(*) FROM read_parquet('%s')", ours) != rows)
		fail_msg("%s: row count", t->name);
	/* the same multiset of rows both ways, and the rows in the same order */
	if (q(f->d, "SELECT (SELECT count(*) FROM (FROM '%s' EXCEPT ALL FROM '%s')) + "
		    "(SELECT count(*) FROM (FROM '%s' EXCEPT ALL FROM '%s'))",
	      ours, theirs, theirs, ours))
		fail_msg("%s: rows differ from DuckDB's", t->name);
	if (q(f->d, "SELECT count(*) FROM (SELECT * FROM read_parquet('%s', file_row_number = "
		    "true) EXCEPT ALL SELECT * FROM read_parquet('%s', file_row_number = true))",
	      ours, theirs))
		fail_msg("%s: rows in another order", t->name);
	if (q(f->d, "SELECT count(*) FROM ((SELECT column_name, column_type FROM (DESCRIBE "
		    "FROM '%s')) EXCEPT ALL (SELECT column_name, column_type FROM (DESCRIBE FROM "
		    "'%s')))", ours, theirs))
		fail_msg("%s: column types differ from DuckDB's", t->name);
	free(ours);
	free(theirs);
}

static void same_as_duckdb(struct fx *f, const struct nx_table *t, int64_t rows,
			   unsigned long row_group, bool dict)
{
	same_as_duckdb_as(f, t, rows, row_group, dict, false);
}

static void test_every_table_reads_as_duckdbs(void **state)
{
	struct fx *f = *state;
	int tables = 0;

	for (size_t i = 0; i < nx_schema_table_count; i++) {
		const struct nx_table *t = &nx_schema_tables[i];
		if (!t->written || t->nfields > 128)
			continue;
		same_as_duckdb(f, t, 3000, 0, false);
		tables++;
	}
	assert_true(tables >= 40);
}

/* Row groups that end inside a batch, many of them, and the table's statistics. */
static void test_row_groups_split_batches(void **state)
{
	struct fx *f = *state;
	const struct nx_table *t = nx_schema_table("SystemProfileEvents");
	char *path = nx_xasprintf("%s/%s.ours.parquet", f->dir, t->name);
	char *duck = nx_xasprintf("%s/%s.duck.parquet", f->dir, t->name);

	same_as_duckdb(f, t, 20000, 777, false);
	assert_int_equal(q(f->d, "SELECT count(DISTINCT row_group_id) FROM parquet_metadata('%s')",
			   path), (20000 + 776) / 777);
	assert_int_equal(q(f->d, "SELECT max(row_group_num_rows) FROM parquet_metadata('%s')",
			   path), 777);
	/* the integer columns' min, max and null count over the file are DuckDB's */
	assert_int_equal(q(f->d, "SELECT count(*) FROM (SELECT path_in_schema, min(stats_min_value::"
				 "BIGINT), max(stats_max_value::BIGINT), sum(stats_null_count) FROM "
				 "parquet_metadata('%s') WHERE type = 'INT64' AND path_in_schema NOT "
				 "LIKE '%%,%%' GROUP BY 1 EXCEPT SELECT path_in_schema, "
				 "min(stats_min_value::BIGINT), max(stats_max_value::BIGINT), "
				 "sum(stats_null_count) FROM parquet_metadata('%s') WHERE type = "
				 "'INT64' AND path_in_schema NOT LIKE '%%,%%' GROUP BY 1)", path, duck),
			 0);
	/* DuckDB prunes row groups with them: a filter on start_ts reads back what it should */
	assert_int_equal(q(f->d, "SELECT count(*) FROM '%s' WHERE start_ts BETWEEN 100 AND 900",
			   path),
			 q(f->d, "SELECT count(*) FROM '%s' WHERE start_ts BETWEEN 100 AND 900", duck));
	free(path);
	free(duck);
}

/* More row groups than an i16 ordinal counts: the file stays whole and readable. */
static void test_more_row_groups_than_ordinals(void **state)
{
	struct fx *f = *state;
	const struct nx_table *t = NULL;

	for (size_t i = 0; i < nx_schema_table_count; i++)
		if (nx_schema_tables[i].written &&
		    (!t || nx_schema_tables[i].nfields < t->nfields))
			t = &nx_schema_tables[i];
	char *path = nx_xasprintf("%s/%s.ours.parquet", f->dir, t->name);
	same_as_duckdb(f, t, 33000, 1, false);
	assert_int_equal(q(f->d, "SELECT count(DISTINCT row_group_id) FROM parquet_metadata('%s')",
			   path), 33000);
	free(path);
}

/* Chunks with a dictionary (strings: repeats, NULLs, empty and long strings; numbers:
 * repeats, NULLs, extremes, -0.0 and NaN) and chunks written PLAIN after their
 * dictionary passed its bound (all-distinct values; large strings), in Instruction and
 * DmaPacket (its one FLOAT, an INTEGER): DuckDB reads the same rows as from its own file,
 * and each column's chunks have a dictionary page or not as they should (booleans and
 * lists never). */
static void check_dictionaries(struct fx *f, const struct nx_table *t)
{
	char *path = nx_xasprintf("%s/%s.ours.parquet", f->dir, t->name);
	const char *large = NULL;
	int64_t kinds[2] = { 0, 0 };

	same_as_duckdb(f, t, 20000, 4096, true);
	for (size_t c = 0; c < t->nfields; c++) {
		const char *type = nx_schema_duck_type(&t->fields[c]);
		if (!type || strchr(type, '[') || !strcmp(type, "BOOLEAN"))
			continue;
		const char *name = t->fields[c].name;
		bool str = !strcmp(type, "VARCHAR");
		if (str && c % 3 == 2 && !large)
			large = name;
		/* row groups of the column with a dictionary page, and of them those whose
		 * data page is RLE_DICTIONARY */
		int64_t dict = q(f->d, "SELECT count(*) FROM parquet_metadata('%s') WHERE "
				       "path_in_schema = '%s' AND dictionary_page_offset IS NOT "
				       "NULL AND encodings LIKE '%%RLE_DICTIONARY%%'", path, name);
		int64_t plain = q(f->d, "SELECT count(*) FROM parquet_metadata('%s') WHERE "
					"path_in_schema = '%s' AND dictionary_page_offset IS NULL "
					"AND encodings NOT LIKE '%%DICTIONARY%%'", path, name);
		bool want = str ? c % 3 == 0 || (c % 3 == 2 && name != large) : c % 3 == 0;
		assert_int_equal(dict, want ? 5 : 0);
		assert_int_equal(plain, want ? 0 : 5);
		kinds[want]++;
	}
	assert_true(kinds[0] >= 2 && kinds[1] >= 2);
	free(path);
}

static void test_dictionaries(void **state)
{
	struct fx *f = *state;
	const struct nx_table *t = nx_schema_table("Instruction");
	char *path = nx_xasprintf("%s/%s.ours.parquet", f->dir, t->name);

	check_dictionaries(f, nx_schema_table("DmaPacket"));
	check_dictionaries(f, t);
	/* the repeated strings come back as they went in */
	for (size_t c = 0; c < t->nfields; c += 3) {
		const char *type = nx_schema_duck_type(&t->fields[c]);
		if (!type || strcmp(type, "VARCHAR"))
			continue;
		const char *name = t->fields[c].name;
		assert_int_equal(q(f->d, "SELECT count(*) FROM '%s' WHERE \"%s\" IS NULL", path,
				   name), (20000 + 6) / 7);
		assert_int_equal(q(f->d, "SELECT count(*) FROM '%s' WHERE \"%s\" = ''", path,
				   name), (20000 + 5) / 7);
		assert_int_equal(q(f->d, "SELECT count(*) FROM read_parquet('%s', file_row_number "
				      "= true) WHERE \"%s\" = repeat(chr(97 + (file_row_number %% 3)"
				      "::INT), 3000)", path, name), (20000 + 4) / 7);
		assert_int_equal(q(f->d, "SELECT count(DISTINCT \"%s\") FROM '%s'", name, path), 9);
		break;
	}
	free(path);
}

/* The dictionary's way of comparing values (their first 16 bytes as two words, the rest
 * after) and its indices in the RLE/bit-packed hybrid (db/parquet_rle.c): strings of 0
 * to 36 bytes one byte apart at every place, numbers in runs of 1 to 12 ending at every
 * place of a group of 8, indices 11 bits wide, read back by DuckDB as from its own file
 * and by our reader value for value; every distinct string a dictionary entry of its own. */
static void test_dictionary_words_and_runs(void **state)
{
	struct fx *f = *state;
	const struct nx_table *t = nx_schema_table("Instruction");
	char *path = nx_xasprintf("%s/%s.ours.parquet", f->dir, t->name);

	same_as_duckdb_as(f, t, 20000, 32768, false, true);
	/* one row group, every scalar column not a boolean with a dictionary */
	assert_int_equal(q(f->d, "SELECT count(*) FROM parquet_metadata('%s') WHERE "
			       "path_in_schema = 'opcode' AND dictionary_page_offset IS NOT NULL",
			   path), 1);
	assert_int_equal(q(f->d, "SELECT count(DISTINCT opcode) FROM '%s'", path),
			 q(f->d, "SELECT count(DISTINCT opcode::BLOB) FROM '%s'", path));
	assert_true(q(f->d, "SELECT count(DISTINCT opcode) FROM '%s'", path) > 500);
	assert_true(q(f->d, "SELECT count(DISTINCT pc) FROM '%s'", path) > 1024); /* 11 bits */
	/* and by our reader (db/parquet_read.c), value for value */
	static const char *const cols[] = { "opcode", "pc" };
	const char *files[] = { path };
	struct nx_pqr *r = NULL;
	const struct nx_pqr_batch *b;
	struct nx_err err = { 0 };
	int64_t row = 0;
	int rc = nx_pqr_open(&r, files, 1, cols, 2, &err);
	while (!rc && !(rc = nx_pqr_next(r, &b, &err)) && b)
		for (size_t i = 0; i < b->rows; i++, row++) {
			char want[40];
			size_t len = word_of(row, want);
			assert_true(!b->col[0].valid || b->col[0].valid[i]);
			assert_int_equal(b->col[0].len[i], len);
			assert_memory_equal(b->col[0].str[i], want, len);
			assert_int_equal(b->col[1].i64[i], run_of(row));
		}
	if (rc)
		fail_msg("reader: %s", err.msg);
	nx_pqr_close(r);
	assert_int_equal(row, 20000);
	free(path);
}

static void test_no_rows_is_a_valid_file(void **state)
{
	struct fx *f = *state;
	const struct nx_table *t = nx_schema_table("SystemProfileEvents");
	char *path = nx_xasprintf("%s/empty.parquet", f->dir);
	struct nx_err err = { 0 };
	struct gen g;
	struct nx_row_source src = gen_source(&g, t, 0, -1);
	uint64_t n = 99;

	assert_int_equal(write_ours(&src, path, 0, &n, &err), 0);
	assert_int_equal(n, 0);
	assert_int_equal(q(f->d, "SELECT count(*) FROM read_parquet('%s')", path), 0);
	assert_int_equal(q(f->d, "SELECT count(*) FROM (DESCRIBE FROM '%s')", path),
			 (int64_t)t->nfields);
	free(path);
}

static char *read_all(const char *path, size_t *len)
{
	struct nx_err err = { 0 };
	char *data = NULL;

	if (nx_read_file(path, &data, len, &err))
		fail_msg("%s", err.msg);
	return data;
}

/* Whether dir holds a file whose name starts with prefix. */
static bool has_entry(const char *dir, const char *prefix)
{
	char *cmd = nx_xasprintf("ls -a '%s' | grep -q '^%s'", dir, prefix);
	int rc = system(cmd);

	free(cmd);
	return rc == 0;
}

/* The source's own error comes back as it was, and the old file stays. */
static void test_source_error_keeps_the_old_file(void **state)
{
	struct fx *f = *state;
	const struct nx_table *t = nx_schema_table("SystemProfileEvents");
	char *path = nx_xasprintf("%s/kept.parquet", f->dir);
	struct nx_err err = { 0 };
	struct gen g;
	struct nx_row_source src = gen_source(&g, t, 100, -1);
	size_t len0, len1;

	assert_int_equal(write_ours(&src, path, 0, NULL, &err), 0);
	char *before = read_all(path, &len0);
	src = gen_source(&g, t, 50000, 30000);
	assert_int_equal(write_ours(&src, path, 4096, NULL, &err), NX_ECORRUPT);
	assert_string_equal(err.msg, "'gen': bad row 30000");
	char *after = read_all(path, &len1);
	assert_int_equal(len0, len1);
	assert_memory_equal(before, after, len0);
	assert_false(has_entry(f->dir, "kept.parquet.tmp"));
	free(before);
	free(after);
	free(path);
}

static void test_path_that_cannot_be_created(void **state)
{
	struct fx *f = *state;
	const struct nx_table *t = nx_schema_table("SystemProfileEvents");
	char *path = nx_xasprintf("%s/no/such/dir/x.parquet", f->dir);
	struct nx_err err = { 0 };
	struct gen g;
	struct nx_row_source src = gen_source(&g, t, 10, -1);

	assert_true(write_ours(&src, path, 0, NULL, &err) < 0);
	assert_non_null(strstr(err.msg, "cannot create '"));
	assert_non_null(strstr(err.msg, "/no/such/dir/x.parquet.tmp."));
	assert_non_null(strstr(err.msg, "No such file or directory"));
	free(path);
}

/* A file that cannot grow past 64 KiB: the write fails naming the file and the byte,
 * and what was at the path stays. */
static void test_file_that_cannot_grow(void **state)
{
	struct fx *f = *state;
	const struct nx_table *t = nx_schema_table("SystemProfileEvents");
	char *path = nx_xasprintf("%s/full.parquet", f->dir);
	struct nx_err err = { 0 };
	struct rlimit old, small;
	struct gen g;
	struct nx_row_source src;
	int rc;

	assert_int_equal(nx_write_file_atomic(path, "old", 3, &err), 0);
	assert_int_equal(getrlimit(RLIMIT_FSIZE, &old), 0);
	small = old;
	small.rlim_cur = 64 * 1024;
	signal(SIGXFSZ, SIG_IGN);
	src = gen_source(&g, t, 200000, -1);
	assert_int_equal(setrlimit(RLIMIT_FSIZE, &small), 0);
	rc = write_ours(&src, path, 0, NULL, &err);
	assert_int_equal(setrlimit(RLIMIT_FSIZE, &old), 0);
	signal(SIGXFSZ, SIG_DFL);
	assert_true(rc < 0);
	assert_non_null(strstr(err.msg, "cannot write '"));
	assert_non_null(strstr(err.msg, "full.parquet.tmp."));
	assert_non_null(strstr(err.msg, "at byte "));
	size_t len;
	char *now = read_all(path, &len);
	assert_int_equal(len, 3);
	assert_memory_equal(now, "old", 3);
	assert_false(has_entry(f->dir, "full.parquet.tmp"));
	free(now);
	free(path);
}

/* One row with cells of megabytes (bigger than any arena block): read back whole. */
struct huge {
	struct nx_colmap map;
	bool done;
};

static int huge_next(void *self, struct nx_rowbuf *b, struct nx_err *err)
{
	struct huge *h = self;
	size_t big = (size_t)3 << 20;
	char *s = nx_xmalloc(big + 1);

	(void)err;
	if (h->done) {
		free(s);
		return 0;
	}
	for (size_t i = 0; i < big; i++)
		s[i] = (char)('a' + i % 26);
	s[big] = '\0';
	nx_rowbuf_i64(b, (size_t)h->map.idx[0], 0, 1);
	nx_rowbuf_str(b, (size_t)h->map.idx[1], 0, s);
	s[big / 3] = '\0';
	nx_rowbuf_str(b, (size_t)h->map.idx[2], 0, s);
	free(s);
	h->done = true;
	return 1;
}

static void test_cells_of_megabytes(void **state)
{
	static const char *const names[] = { "id", "extra_attributes_json", "name", NULL };
	struct fx *f = *state;
	char *path = nx_xasprintf("%s/huge.parquet", f->dir);
	struct nx_err err = { 0 };
	struct huge h = { .done = false };
	struct nx_row_source src;

	assert_int_equal(nx_colmap_init(&h.map, "SystemProfileEvents", names, &err), 0);
	src = (struct nx_row_source){ .table = h.map.table, .self = &h, .next = huge_next };
	assert_int_equal(write_ours(&src, path, 0, NULL, &err), 0);
	assert_int_equal(q(f->d, "SELECT count(*) FROM '%s' WHERE id = 1 AND "
			      "length(extra_attributes_json) = 3145728 AND length(name) = 1048576 "
			      "AND extra_attributes_json = repeat('abcdefghijklmnopqrstuvwxyz', "
			      "120989) || 'abcdefghijklmn' AND starts_with("
			      "extra_attributes_json, name)", path), 1);
	free(path);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_every_table_reads_as_duckdbs, fx_setup,
						fx_teardown),
		cmocka_unit_test_setup_teardown(test_row_groups_split_batches, fx_setup,
						fx_teardown),
		cmocka_unit_test_setup_teardown(test_more_row_groups_than_ordinals, fx_setup,
						fx_teardown),
		cmocka_unit_test_setup_teardown(test_dictionaries, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_dictionary_words_and_runs, fx_setup,
						fx_teardown),
		cmocka_unit_test_setup_teardown(test_no_rows_is_a_valid_file, fx_setup,
						fx_teardown),
		cmocka_unit_test_setup_teardown(test_source_error_keeps_the_old_file, fx_setup,
						fx_teardown),
		cmocka_unit_test_setup_teardown(test_path_that_cannot_be_created, fx_setup,
						fx_teardown),
		cmocka_unit_test_setup_teardown(test_file_that_cannot_grow, fx_setup,
						fx_teardown),
		cmocka_unit_test_setup_teardown(test_cells_of_megabytes, fx_setup, fx_teardown),
	};
	return nx_test_done(cmocka_run_group_tests(tests, NULL, NULL));
}
