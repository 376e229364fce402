/* SPDX-License-Identifier: MIT
 * test_parquet_read.c: the C parquet reader (db/parquet_read.h) against DuckDB reading
 * the same files, cell by cell in file order: DuckDB's files of every flat type with
 * NULLs, dictionary and plain strings, several row groups and pages, zstd, gzip and no
 * compression; several files read as one; a column the file lacks (NULL); our own
 * writer's files and files joined by db/parquet_concat.h, snappy
 * too. What it does not read (lz4, a list column) is refused with NX_EVERSION, and bad bytes
 * anywhere (cut short, a flipped byte in the footer or in a page) give an error that
 * names the file, never a crash; a footer larger than the reader's window over it reads
 * the same. The footers' statistics give each integer column's range, or say they do
 * not tell. Our writer's dictionary pages (one per chunk, over several row groups, with
 * NULLs and runs across the groups' bounds, beside PLAIN chunks of the same column) read
 * as DuckDB reads them, their indices handed on for the strings (nx_pqr_col.idx); a
 * damaged dictionary or data page is refused with an error naming the file and byte.
 * Dictionary indices of bit widths from 1 to 13 read as DuckDB reads them. A batch's
 * column has no valid bytes (NULL) exactly when none of its rows is NULL. */
#include "common/compat.h"
#include "db/duck.h"
#include "db/parquet_concat.h"
#include "db/parquet_read.h"
#include "db/parquet_write.h"
#include "db/thrift_compact.h"
#include "common/fsutil.h"
#include "common/xalloc.h"
#include "helper/asserts.h"
#include "helper/fixture.h"

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

static char *fmt(const char *f, ...) NX_PRINTF(1, 2);
static char *fmt(const char *f, ...)
{
	va_list ap;
	char *s;

	va_start(ap, f);
	if (vasprintf(&s, f, ap) < 0)
		fail();
	va_end(ap);
	return s;
}

static void ex(struct nx_duck *d, const char *sql)
{
	struct nx_err err = { 0 };

	if (nx_duck_exec(d, sql, &err))
		fail_msg("%s: %s", sql, err.msg);
}

/* The cells of DuckDB's rows, in order, as text; ncols: the columns a row of DuckDB's
 * has (duck_chunk). */
struct cells {
	char **v;
	size_t n, cap, ncols;
};

static void add(struct cells *c, char *s)
{
	NX_GROW(c->v, c->n + 1, c->cap);
	c->v[c->n++] = s;
}

static int duck_chunk(void *arg, const struct nx_dchunk *ch, struct nx_err *err)
{
	struct cells *c = arg;
	size_t rows = nx_dchunk_rows(ch);

	(void)err;
	for (size_t r = 0; r < rows; r++)
		for (size_t k = 0; k < c->ncols; k++) {
			const char *s;
			size_t len;
			add(c, nx_dchunk_str(ch, k, r, &s, &len) ? nx_xstrndup(s, len) : NULL);
		}
	return 0;
}

/* The same cells from the reader: numbers printed as DuckDB's VARCHAR casts print them. */
static void reader_cells(const struct nx_pqr_batch *b, struct cells *c)
{
	for (size_t r = 0; r < b->rows; r++)
		for (size_t k = 0; k < b->ncols; k++) {
			const struct nx_pqr_col *col = &b->col[k];
			if (col->kind == NX_PQR_NULL || (col->valid && !col->valid[r])) {
				add(c, NULL);
				continue;
			}
			switch (col->kind) {
			case NX_PQR_I64: add(c, fmt("%" PRId64, col->i64[r])); break;
			case NX_PQR_BOOL: add(c, nx_xstrdup(col->i64[r] ? "true" : "false")); break;
			case NX_PQR_F64: add(c, fmt("%.17g", col->f64[r])); break;
			case NX_PQR_STR: add(c, nx_xstrndup(col->str[r], col->len[r])); break;
			default: add(c, NULL); break;
			}
		}
}

static void release(struct cells *c)
{
	for (size_t i = 0; i < c->n; i++)
		free(c->v[i]);
	free(c->v);
	memset(c, 0, sizeof(*c));
}

static const char *const COLS[] = { "id", "small", "val", "f", "flag", "name", "kind" };

/* Reads files with the reader and with DuckDB, and compares every cell in order;
 * returns the reader's rc (0 when it read them). */
static int compare(struct nx_duck *d, const char *const *files, size_t n, int64_t rows)
{
	struct nx_pqr *r = NULL;
	struct nx_err err = { 0 };
	struct cells mine = { 0 }, duck = { .ncols = 7 };
	const struct nx_pqr_batch *b;
	int rc = nx_pqr_open(&r, files, n, COLS, 7, &err);

	while (!rc && !(rc = nx_pqr_next(r, &b, &err)) && b)
		reader_cells(b, &mine);
	nx_pqr_close(r);
	if (rc) {
		print_message("reader: %s\n", err.msg);
		release(&mine);
		return rc;
	}
	char *list = fmt("'%s'", files[0]);
	for (size_t i = 1; i < n; i++) {
		char *more = fmt("%s, '%s'", list, files[i]);
		free(list);
		list = more;
	}
	/* DOUBLE and FLOAT as C prints them; a missing column as NULL */
	char *sql = fmt("SELECT id::VARCHAR, small::VARCHAR, printf('%%.17g', val::DOUBLE), "
			"printf('%%.17g', f::DOUBLE), flag::VARCHAR, name, kind FROM "
			"read_parquet([%s], union_by_name = true)", list);
	if (nx_duck_scan(d, sql, duck_chunk, &duck, &err))
		fail_msg("%s: %s", sql, err.msg);
	NX_ASSERT_CMP(mine.n, ==, duck.n);
	NX_ASSERT_CMP(mine.n, ==, rows * 7);
	for (size_t i = 0; i < mine.n; i++) {
		bool same = (!mine.v[i] && !duck.v[i]) ||
			    (mine.v[i] && duck.v[i] && !strcmp(mine.v[i], duck.v[i]));
		if (!same)
			fail_msg("row %zu column %s: '%s' against DuckDB's '%s'", i / 7, COLS[i % 7],
				 mine.v[i] ? mine.v[i] : "NULL", duck.v[i] ? duck.v[i] : "NULL");
	}
	release(&mine);
	release(&duck);
	free(sql);
	free(list);
	return 0;
}

/* rows rows of every flat type into path with the COPY options opts. */
static void write_file(struct nx_duck *d, const char *path, int rows, int from, const char *opts,
		       bool with_kind)
{
	char *sql = fmt(
		"COPY (SELECT (range + %d)::BIGINT AS id, (range %% 1000)::INTEGER AS small, "
		"CASE WHEN range %% 7 = 0 THEN NULL ELSE range / 3.0 END::DOUBLE AS val, "
		"(range / 8.0)::FLOAT AS f, CASE WHEN range %% 11 = 0 THEN NULL ELSE range %% 3 = 0 END "
		"AS flag, CASE WHEN range %% 5 = 0 THEN NULL WHEN range %% 2 = 0 THEN 'n' || "
		"(range %% 9) ELSE 'unique-name-' || range END AS name%s FROM range(%d)) TO '%s' "
		"(FORMAT parquet%s)",
		from, with_kind ? ", 'k' || (range % 4) AS kind" : "", rows, path, opts);
	ex(d, sql);
	free(sql);
}

static void test_reads_like_duckdb(void **state)
{
	char *dir = nx_test_dir("pq-read");
	struct nx_duck *d = NULL;
	struct nx_err err = { 0 };
	static const char *const opts[] = {
		", COMPRESSION zstd, ROW_GROUP_SIZE 5000",
		", COMPRESSION uncompressed, ROW_GROUP_SIZE 3000",
		", COMPRESSION gzip",
		", COMPRESSION snappy, ROW_GROUP_SIZE 7000",
		", COMPRESSION zstd, ROW_GROUP_SIZE 20000, PARQUET_VERSION V2",
	};

	(void)state;
	assert_int_equal(nx_duck_open(&d, 1, NULL, &err), 0);
	for (size_t i = 0; i < NX_ARRAY_SIZE(opts); i++) {
		char *p = fmt("%s/t%zu.parquet", dir, i);
		write_file(d, p, 23456, 0, opts[i], true);
		const char *files[] = { p };
		int rc = compare(d, files, 1, 23456);
		/* version 2 may bring encodings this reader does not read: refused, named */
		if (i == 4 && rc)
			assert_int_equal(rc, NX_EVERSION);
		else
			assert_int_equal(rc, 0);
		free(p);
	}
	/* several files as one, the second without the column kind */
	char *a = fmt("%s/a.parquet", dir), *b = fmt("%s/b.parquet", dir);
	write_file(d, a, 3000, 0, ", ROW_GROUP_SIZE 1000", true);
	write_file(d, b, 2500, 3000, "", false);
	const char *two[] = { a, b };
	assert_int_equal(compare(d, two, 2, 5500), 0);
	/* parts joined one after the other (of one schema: a twice) */
	const char *same[] = { a, a };
	char *j2 = fmt("%s/joined2.parquet", dir);
	assert_int_equal(nx_parquet_concat(same, 2, j2, &err), 0);
	const char *one[] = { j2 };
	assert_int_equal(compare(d, one, 1, 6000), 0);
	/* lz4: refused by name, so a caller can read it another way */
	char *sn = fmt("%s/lz4.parquet", dir);
	write_file(d, sn, 100, 0, ", COMPRESSION lz4_raw", true);
	const char *lz4[] = { sn };
	struct nx_pqr *rd = NULL;
	const struct nx_pqr_batch *bt;
	int rc = nx_pqr_open(&rd, lz4, 1, COLS, 7, &err);
	if (!rc)
		rc = nx_pqr_next(rd, &bt, &err);
	nx_pqr_close(rd);
	assert_int_equal(rc, NX_EVERSION);
	assert_non_null(strstr(err.msg, sn));
	/* a list column: refused when asked for */
	char *li = fmt("%s/list.parquet", dir);
	char *sql = fmt("COPY (SELECT range AS id, [range, 1] AS tags FROM range(10)) TO '%s'", li);
	ex(d, sql);
	free(sql);
	const char *lists[] = { li };
	const char *tags[] = { "id", "tags" };
	assert_int_equal(nx_pqr_open(&rd, lists, 1, tags, 2, &err), NX_EVERSION);
	/* and a missing file */
	const char *none[] = { "/nonexistent/x.parquet" };
	assert_int_equal(nx_pqr_open(&rd, none, 1, tags, 1, &err), -ENOENT);
	nx_duck_close(d);
	free(a);
	free(b);
	free(j2);
	free(sn);
	free(li);
	free(dir);
}

/* Dictionary indices of bit widths 1, 7, 8, 9 and 13 (DuckDB writes the name column
 * PLAIN), with NULLs between them and row groups that end within a bit-packed run,
 * against DuckDB: the
 * unpacking loads a value's bytes whole where the page holds 8 more, a byte at a time
 * near its end. */
static void test_dictionary_widths(void **state)
{
	char *dir = nx_test_dir("pq-widths");
	struct nx_duck *d = NULL;
	struct nx_err err = { 0 };
	static const char *const opts[] = {
		", COMPRESSION zstd, ROW_GROUP_SIZE 60001",
		", COMPRESSION uncompressed, ROW_GROUP_SIZE 4099",
	};

	(void)state;
	assert_int_equal(nx_duck_open(&d, 1, NULL, &err), 0);
	for (size_t i = 0; i < NX_ARRAY_SIZE(opts); i++) {
		char *p = fmt("%s/w%zu.parquet", dir, i);
		char *sql = fmt(
			"COPY (SELECT (range %% 2)::BIGINT AS id, (range * 7 %% 100)::INTEGER AS "
			"small, CASE WHEN range %% 13 = 0 THEN NULL ELSE (range * 11 %% 300) / 3.0 "
			"END::DOUBLE AS val, (range * 3 %% 5000)::FLOAT AS f, CASE WHEN range %% 3 = 0 "
			"THEN NULL ELSE range %% 2 = 0 END AS flag, CASE WHEN range %% 17 = 0 THEN "
			"NULL ELSE 'v' || (range * 31 %% 70000) END AS name, 'k' || (range * 5 %% "
			"256) AS kind FROM range(150000)) TO '%s' (FORMAT parquet%s)", p, opts[i]);
		ex(d, sql);
		free(sql);
		const char *files[] = { p };
		assert_int_equal(compare(d, files, 1, 150000), 0);
		free(p);
	}
	nx_duck_close(d);
	free(dir);
}

/* Reads a whole file with the reader: 0, or an error that names it. */
static int read_all(const char *path)
{
	struct nx_pqr *r = NULL;
	struct nx_err err = { 0 };
	const struct nx_pqr_batch *b;
	const char *files[] = { path };
	int rc = nx_pqr_open(&r, files, 1, COLS, 7, &err);

	while (!rc && !(rc = nx_pqr_next(r, &b, &err)) && b)
		;
	nx_pqr_close(r);
	if (rc && !strstr(err.msg, path))
		fail_msg("the error does not name the file: %s", err.msg);
	return rc;
}

static char *slurp(const char *path, size_t *len)
{
	char *data;
	struct nx_err err = { 0 };

	if (nx_read_file(path, &data, len, &err))
		fail_msg("%s", err.msg);
	return data;
}

static void spit(const char *path, const void *data, size_t len)
{
	FILE *f = fopen(path, "wb");

	if (!f || (len && fwrite(data, 1, len, f) != len) || fclose(f))
		fail_msg("write %s", path);
}

static void test_bad_bytes(void **state)
{
	char *dir = nx_test_dir("pq-read-bad");
	char *good = fmt("%s/good.parquet", dir), *bad = fmt("%s/bad.parquet", dir);
	struct nx_duck *d = NULL;
	struct nx_err err = { 0 };
	size_t len;

	(void)state;
	assert_int_equal(nx_duck_open(&d, 1, NULL, &err), 0);
	write_file(d, good, 3000, 0, ", COMPRESSION zstd, ROW_GROUP_SIZE 1000", true);
	nx_duck_close(d);
	char *data = slurp(good, &len);
	char *copy = nx_xmalloc(len);
	assert_int_equal(read_all(good), 0);
	/* cut short anywhere */
	for (size_t cut = 0; cut < len; cut += cut + 64 >= len ? 1 : 97) {
		spit(bad, data, cut);
		assert_int_not_equal(read_all(bad), 0);
	}
	/* every byte flipped in turn, footer and pages alike (a sample of the data) */
	int refused = 0, flips = 0;
	for (size_t i = 0; i < len; i += i + 4096 >= len ? 1 : 7) {
		memcpy(copy, data, len);
		copy[i] ^= 0x5a;
		spit(bad, copy, len);
		flips++;
		refused += read_all(bad) != 0;
	}
	NX_ASSERT_CMP(refused, >, 0);
	NX_ASSERT_CMP(flips, >, 100);
	free(copy);
	free(data);
	free(good);
	free(bad);
	free(dir);
}

/* A footer larger than the reader's window over it (64 KiB: about 130 row groups of
 * these columns): read in slices, the cells are DuckDB's; bytes flipped or cut anywhere
 * in that footer give an error naming the file or a read, never a crash. */
static void test_footer_in_slices(void **state)
{
	char *dir = nx_test_dir("pq-read-slices");
	char *good = fmt("%s/many.parquet", dir), *bad = fmt("%s/bad.parquet", dir);
	struct nx_duck *d = NULL;
	struct nx_err err = { 0 };
	size_t len;
	const int rows = 2048 * 200;

	(void)state;
	assert_int_equal(nx_duck_open(&d, 1, NULL, &err), 0);
	write_file(d, good, rows, 0, ", COMPRESSION uncompressed, ROW_GROUP_SIZE 2048", true);
	const char *files[] = { good };
	assert_int_equal(compare(d, files, 1, rows), 0);
	nx_duck_close(d);
	char *data = slurp(good, &len);
	uint32_t footer = (uint32_t)(unsigned char)data[len - 8] |
			  (uint32_t)(unsigned char)data[len - 7] << 8 |
			  (uint32_t)(unsigned char)data[len - 6] << 16 |
			  (uint32_t)(unsigned char)data[len - 5] << 24;
	NX_ASSERT_CMP(footer, >, 64u << 10);
	char *copy = nx_xmalloc(len);
	size_t from = len - 8 - footer;
	for (size_t i = from; i < len - 8; i += 4099) {
		memcpy(copy, data, len);
		copy[i] ^= 0x5a;
		spit(bad, copy, len);
		(void)read_all(bad);
		/* the footer cut at i: its length then points into the data */
		memcpy(copy + (i - from) + from, data + len - 8, 8);
		spit(bad, copy, i + 8);
		assert_int_not_equal(read_all(bad), 0);
	}
	free(copy);
	free(data);
	free(good);
	free(bad);
	free(dir);
}

static int64_t q64(struct nx_duck *d, const char *sql)
{
	struct nx_err err = { 0 };
	int64_t v = 0;

	if (nx_duck_query_i64(d, sql, &v, &err))
		fail_msg("%s: %s", sql, err.msg);
	return v;
}

/* The files' ranges from their footers' statistics against DuckDB's count, min and max
 * over the rows: INT64 and INT32 columns, NULLs, a row group of NULLs only, several
 * files. A DOUBLE column, a column a file lacks and a minimum made larger than the
 * maximum (a damaged statistic) do not tell: NX_ENOTFOUND, naming the file. */
static void test_ranges(void **state)
{
	char *dir = nx_test_dir("pq-read-ranges");
	char *a = fmt("%s/a.parquet", dir), *b = fmt("%s/b.parquet", dir);
	char *bad = fmt("%s/bad.parquet", dir), *sql;
	struct nx_duck *d = NULL;
	struct nx_err err = { 0 };
	struct nx_pqr *r = NULL;
	struct nx_pqr_range x[2];
	int64_t rows = 0;
	size_t len;

	(void)state;
	assert_int_equal(nx_duck_open(&d, 1, NULL, &err), 0);
	/* rows 2048..4095 NULL in lo: a row group of NULLs only */
	sql = fmt("COPY (SELECT CASE WHEN i BETWEEN 2048 AND 4095 OR i %% 7 = 0 THEN NULL "
		  "ELSE 81985529216486895 - i * 3 END::BIGINT AS lo, (i %% 977 - 300)::INTEGER "
		  "AS hi, i / 2.0 AS dbl FROM range(5000) r(i)) TO '%s' (FORMAT parquet, "
		  "ROW_GROUP_SIZE 2048)", a);
	ex(d, sql);
	free(sql);
	sql = fmt("COPY (SELECT (i * 5 - 70)::BIGINT AS lo, NULL::INTEGER AS hi FROM range(300) "
		  "r(i)) TO '%s' (FORMAT parquet)", b);
	ex(d, sql);
	free(sql);
	const char *files[] = { a, b }, *cols[] = { "lo", "hi" };
	assert_int_equal(nx_pqr_open(&r, files, 2, cols, 2, &err), 0);
	assert_int_equal(nx_pqr_ranges(r, &rows, x, &err), 0);
	nx_pqr_close(r);
	sql = fmt("SELECT count(*) FROM read_parquet(['%s', '%s'], union_by_name = true)", a, b);
	assert_int_equal(rows, q64(d, sql));
	free(sql);
	sql = fmt("SELECT min(lo) FROM read_parquet(['%s', '%s'])", a, b);
	assert_true(x[0].set);
	assert_int_equal(x[0].lo, q64(d, sql));
	free(sql);
	sql = fmt("SELECT max(lo) FROM read_parquet(['%s', '%s'])", a, b);
	assert_int_equal(x[0].hi, q64(d, sql));
	free(sql);
	sql = fmt("SELECT min(hi) FROM '%s'", a);
	assert_true(x[1].set);
	assert_int_equal(x[1].lo, q64(d, sql));
	free(sql);
	sql = fmt("SELECT max(hi) FROM '%s'", a);
	assert_int_equal(x[1].hi, q64(d, sql));
	free(sql);
	/* b alone: hi NULL in every row */
	const char *just_b[] = { b };
	assert_int_equal(nx_pqr_open(&r, just_b, 1, cols, 2, &err), 0);
	assert_int_equal(nx_pqr_ranges(r, &rows, x, &err), 0);
	nx_pqr_close(r);
	assert_int_equal(rows, 300);
	assert_false(x[1].set);
	assert_int_equal(x[0].lo, -70);
	/* a DOUBLE column */
	const char *dbl[] = { "lo", "dbl" };
	assert_int_equal(nx_pqr_open(&r, files, 1, dbl, 2, &err), 0);
	assert_int_equal(nx_pqr_ranges(r, &rows, x, &err), NX_ENOTFOUND);
	assert_non_null(strstr(err.msg, a));
	nx_pqr_close(r);
	/* a column the file lacks */
	const char *nope[] = { "lo", "nope" };
	assert_int_equal(nx_pqr_open(&r, files, 1, nope, 2, &err), 0);
	assert_int_equal(nx_pqr_ranges(r, &rows, x, &err), NX_ENOTFOUND);
	nx_pqr_close(r);
	/* the least lo (81985529216486895 - 4999 * 3, 0x0123456789AB935A) made the largest in
	 * the footer: the rows must be read */
	nx_duck_close(d);
	char *data = slurp(a, &len);
	static const unsigned char least[] = { 0x5a, 0x93, 0xab, 0x89, 0x67, 0x45, 0x23, 0x01 };
	int patched = 0;
	for (size_t i = 0; i + 8 <= len; i++)
		if (!memcmp(data + i, least, 8)) {
			memset(data + i, 0x7f, 8);
			patched++;
		}
	NX_ASSERT_CMP(patched, >, 0);
	spit(bad, data, len);
	const char *damaged[] = { bad };
	assert_int_equal(nx_pqr_open(&r, damaged, 1, cols, 2, &err), 0);
	assert_int_equal(nx_pqr_ranges(r, &rows, x, &err), NX_ENOTFOUND);
	assert_non_null(strstr(err.msg, bad));
	if (!strstr(err.msg, "row group 2 "))
		fail_msg("%s", err.msg);
	nx_pqr_close(r);
	free(data);
	free(a);
	free(b);
	free(bad);
	free(dir);
}

/* ---- our writer's dictionaries -------------------------------------------------------- */

static const struct nx_field DICT_FIELDS[] = {
	{ .name = "id", .type = "integer", .format = "int64", .unit = "", .enum_name = "",
	  .example = "", .description = "", .required = true },
	{ .name = "small", .type = "integer", .format = "int64", .unit = "", .enum_name = "",
	  .example = "", .description = "" },
	{ .name = "name", .type = "string", .format = "", .unit = "", .enum_name = "",
	  .example = "", .description = "" },
	{ .name = "word", .type = "string", .format = "", .unit = "", .enum_name = "",
	  .example = "", .description = "", .required = true },
};
static const struct nx_table DICT_T = { .name = "DictT", .modality = "", .profile_kind = "",
					.description = "", .written = true, .nfields = 4,
					.fields = DICT_FIELDS };
static const char *const DICT_COLS[] = { "id", "small", "name", "word" };
#define DICT_ROWS 23000
#define DICT_GROUP "5000"

/* Row i: small in runs of 1 to 12 (RLE runs and bit-packed groups), NULL in runs of 7
 * every 35 rows; name one of 5 in runs of 9 (across the groups' bounds at every 5000),
 * NULL every 13th row (bit-packed levels); word one of 37 in the first 20000 rows
 * (dictionary chunks) and distinct in the last group (a PLAIN chunk). */
static int dict_next(void *self, struct nx_rowbuf *b, struct nx_err *err)
{
	int64_t *next = self;
	size_t n = 0, cap = nx_rowbuf_capacity(b);
	char s[32];

	(void)err;
	for (; n < cap && *next < DICT_ROWS; n++, ++*next) {
		int64_t i = *next;
		nx_rowbuf_i64(b, 0, n, i);
		if ((i / 7) % 5)
			nx_rowbuf_i64(b, 1, n, (i / (1 + (i / 1000) % 12)) % 300);
		if (i % 13) {
			snprintf(s, sizeof(s), "n%" PRId64, (i / 9) % 5);
			nx_rowbuf_str(b, 2, n, s);
		}
		if (i < 20000)
			snprintf(s, sizeof(s), "w%" PRId64, i % 37);
		else
			snprintf(s, sizeof(s), "w-%" PRId64, i);
		nx_rowbuf_str(b, 3, n, s);
	}
	return (int)n;
}

static void write_dict_file(const char *path)
{
	struct nx_err err = { 0 };
	int64_t next = 0;
	uint64_t rows = 0;
	struct nx_row_source src = { .table = &DICT_T, .self = &next, .next = dict_next };

	setenv("NX_INGEST_ROW_GROUP", DICT_GROUP, 1);
	if (nx_pqw_write_source(&src, path, &rows, &err))
		fail_msg("%s", err.msg);
	unsetenv("NX_INGEST_ROW_GROUP");
	assert_int_equal(rows, DICT_ROWS);
}

/* Reads cols of a file whole: 0, or an error that names the file and its byte; *msg
 * (may be NULL) gets the message. */
static int read_cols(const char *path, const char *const *cols, size_t ncols, char **msg)
{
	struct nx_pqr *r = NULL;
	struct nx_err err = { 0 };
	const struct nx_pqr_batch *b;
	const char *files[] = { path };
	int rc = nx_pqr_open(&r, files, 1, cols, ncols, &err);

	while (!rc && !(rc = nx_pqr_next(r, &b, &err)) && b)
		;
	nx_pqr_close(r);
	if (rc && (!strstr(err.msg, path) || !strstr(err.msg, "at byte")))
		fail_msg("the error does not name the file and byte: %s", err.msg);
	if (msg)
		*msg = rc ? nx_xstrdup(err.msg) : NULL;
	return rc;
}

/* Every cell as DuckDB reads it, and the strings' dictionary indices point at the same
 * bytes: name has them in every row group, word in all but the PLAIN last. */
static void test_our_dictionaries(void **state)
{
	char *dir = nx_test_dir("pq-read-dict");
	char *path = fmt("%s/ours.parquet", dir);
	struct nx_duck *d = NULL;
	struct nx_err err = { 0 };
	struct nx_pqr *r = NULL;
	const struct nx_pqr_batch *b;
	struct cells mine = { 0 }, duck = { .ncols = 4 };
	const char *files[] = { path };
	size_t groups = 0, name_dict = 0, word_dict = 0;
	int rc;

	(void)state;
	write_dict_file(path);
	assert_int_equal(nx_pqr_open(&r, files, 1, DICT_COLS, 4, &err), 0);
	while (!(rc = nx_pqr_next(r, &b, &err)) && b) {
		groups++;
		reader_cells(b, &mine);
		assert_null(b->col[0].idx); /* numbers: no indices handed on */
		assert_null(b->col[1].idx);
		for (size_t k = 2; k < 4; k++) {
			const struct nx_pqr_col *c = &b->col[k];
			if (!c->idx)
				continue;
			*(k == 2 ? &name_dict : &word_dict) += 1;
			NX_ASSERT_CMP(c->ndict, <=, 37);
			for (size_t i = 0; i < b->rows; i++) {
				if (c->valid && !c->valid[i])
					continue;
				NX_ASSERT_CMP(c->idx[i], <, c->ndict);
				assert_ptr_equal(c->str[i], c->dict_str[c->idx[i]]);
				assert_int_equal(c->len[i], c->dict_len[c->idx[i]]);
			}
		}
	}
	assert_int_equal(rc, 0);
	nx_pqr_close(r);
	assert_int_equal(groups, 5);
	assert_int_equal(name_dict, 5);
	assert_int_equal(word_dict, 4);
	assert_int_equal(nx_duck_open(&d, 1, NULL, &err), 0);
	char *sql = fmt("SELECT id::VARCHAR, small::VARCHAR, name, word FROM '%s'", path);
	if (nx_duck_scan(d, sql, duck_chunk, &duck, &err))
		fail_msg("%s: %s", sql, err.msg);
	/* and the chunks were written as meant: dictionaries but for word's last */
	free(sql);
	sql = fmt("SELECT count(*) FROM parquet_metadata('%s') WHERE path_in_schema = 'word' "
		  "AND dictionary_page_offset IS NOT NULL AND dictionary_page_offset > 0", path);
	assert_int_equal(q64(d, sql), 4);
	nx_duck_close(d);
	NX_ASSERT_CMP(mine.n, ==, duck.n);
	NX_ASSERT_CMP(mine.n, ==, (size_t)DICT_ROWS * 4);
	for (size_t i = 0; i < mine.n; i++) {
		bool same = (!mine.v[i] && !duck.v[i]) ||
			    (mine.v[i] && duck.v[i] && !strcmp(mine.v[i], duck.v[i]));
		if (!same)
			fail_msg("row %zu column %s: '%s' against DuckDB's '%s'", i / 4,
				 DICT_COLS[i % 4], mine.v[i] ? mine.v[i] : "NULL",
				 duck.v[i] ? duck.v[i] : "NULL");
	}
	release(&mine);
	release(&duck);
	free(sql);
	free(path);
	free(dir);
}

/* The pages of a column chunk: [from, to) from parquet_metadata. */
static void chunk_span(struct nx_duck *d, const char *path, const char *col, int group,
		       int64_t *dict, int64_t *data, int64_t *end)
{
	char *sql = fmt("SELECT dictionary_page_offset FROM parquet_metadata('%s') WHERE "
			"path_in_schema = '%s' AND row_group_id = %d", path, col, group);
	*dict = q64(d, sql);
	free(sql);
	sql = fmt("SELECT data_page_offset FROM parquet_metadata('%s') WHERE path_in_schema = "
		  "'%s' AND row_group_id = %d", path, col, group);
	*data = q64(d, sql);
	free(sql);
	sql = fmt("SELECT least(dictionary_page_offset, data_page_offset) + total_compressed_size "
		  "FROM parquet_metadata('%s') WHERE path_in_schema = '%s' AND row_group_id = %d",
		  path, col, group);
	*end = q64(d, sql);
	free(sql);
	NX_ASSERT_CMP(*dict, >, 0);
	NX_ASSERT_CMP(*dict, <, *data);
	NX_ASSERT_CMP(*data, <, *end);
}

/* Every byte of a dictionary page flipped in turn (its header and its values; our
 * writer's, zstd, in the second row group of three): a read or an error naming the file
 * and byte, never a crash. And in an uncompressed file of 5 distinct strings (3-bit
 * indices), bytes of the data page flipped: some index then points past the dictionary,
 * refused as such. */
static void test_damaged_dictionary(void **state)
{
	char *dir = nx_test_dir("pq-read-dict-bad");
	char *good = fmt("%s/ours.parquet", dir), *bad = fmt("%s/bad.parquet", dir);
	char *plain = fmt("%s/plain.parquet", dir), *msg;
	struct nx_duck *d = NULL;
	struct nx_err err = { 0 };
	int64_t dict, data, end;
	size_t len;
	int refused = 0, past = 0;

	(void)state;
	write_dict_file(good);
	assert_int_equal(nx_duck_open(&d, 1, NULL, &err), 0);
	chunk_span(d, good, "name", 1, &dict, &data, &end);
	char *sql = fmt("COPY (SELECT 'k' || (range %% 5) AS name FROM range(3000)) TO '%s' "
			"(FORMAT parquet, COMPRESSION uncompressed, ROW_GROUP_SIZE 1000)", plain);
	ex(d, sql);
	free(sql);
	int64_t p_dict, p_data, p_end;
	chunk_span(d, plain, "name", 1, &p_dict, &p_data, &p_end);
	nx_duck_close(d);

	char *bytes = slurp(good, &len), *copy = nx_xmalloc(len);
	const char *cols[] = { "name" };
	assert_int_equal(read_cols(good, cols, 1, NULL), 0);
	for (int64_t i = dict; i < data; i++) {
		memcpy(copy, bytes, len);
		copy[i] ^= 0x5a;
		spit(bad, copy, len);
		if (read_cols(bad, DICT_COLS, 4, &msg)) {
			refused++;
			free(msg);
		}
	}
	NX_ASSERT_CMP(refused, >, 0);
	free(bytes);
	free(copy);

	bytes = slurp(plain, &len);
	copy = nx_xmalloc(len);
	assert_int_equal(read_cols(plain, cols, 1, NULL), 0);
	for (int64_t i = p_data; i < p_end; i++) {
		memcpy(copy, bytes, len);
		copy[i] ^= 0x5a;
		spit(bad, copy, len);
		if (read_cols(bad, cols, 1, &msg)) {
			past += !!strstr(msg, "a dictionary index past the chunk's dictionary");
			free(msg);
		}
	}
	NX_ASSERT_CMP(past, >, 0);
	free(bytes);
	free(copy);
	free(good);
	free(bad);
	free(plain);
	free(dir);
}

/* ---- valid NULL exactly when no row of a batch is NULL ---------------------------------- */

#define VG 4096 /* rows per row group */
static const char *const VALID_COLS[] = { "id", "opt", "s", "flag", "u", "absent" };

/* Whether row i's cell of VALID_COLS[k] is NULL (g its row group, j its row there):
 * opt none in groups 0 and 4, the last row of group 1, all of group 2, a third of group 3;
 * s a fifth of group 3; flag the first row of group 1; u one row of group 4. */
static bool valid_test_null(size_t k, int64_t i)
{
	int64_t g = i / VG, j = i % VG;

	switch (k) {
	case 1: return (g == 1 && j == VG - 1) || g == 2 || (g == 3 && j % 3 == 0);
	case 2: return g == 3 && j % 5 == 0;
	case 3: return g == 1 && j == 0;
	case 4: return g == 4 && j == 100;
	case 5: return true;
	default: return false;
	}
}

/* Checks a batch's column k against valid_test_null and the values the SQL gives; returns
 * whether some row is NULL and adds the NULL rows to *nulls. */
static bool valid_test_col(const struct nx_pqr_batch *b, size_t k, int64_t *nulls)
{
	const struct nx_pqr_col *c = &b->col[k];
	bool any = false;
	char want[32];

	for (size_t r = 0; r < b->rows; r++) {
		int64_t i = b->col[0].i64[r];
		bool null = valid_test_null(k, i);
		any |= null;
		*nulls += null;
		assert_int_equal(c->valid ? !c->valid[r] : false, null);
		if (null)
			continue;
		switch (k) {
		case 1: assert_int_equal(c->i64[r], i * 7); break;
		case 3: assert_int_equal(c->i64[r], i % 2 == 0); break;
		case 2: case 4:
			snprintf(want, sizeof(want), "%c%" PRId64, k == 2 ? 's' : 'u',
				 k == 2 ? i % 10 : i);
			assert_int_equal(c->len[r], strlen(want));
			assert_memory_equal(c->str[r], want, c->len[r]);
			break;
		default: break;
		}
	}
	/* the contract: no valid bytes exactly when no row is NULL (a missing column has
	 * them, all 0) */
	if (c->kind == NX_PQR_NULL)
		assert_non_null(c->valid);
	else
		assert_int_equal(c->valid == NULL, !any);
	return any;
}

/* A batch column's valid is NULL exactly when none of its rows is NULL: optional columns
 * with no NULL in a row group, one NULL at its end or start, some NULLs, only NULLs, of
 * numbers, booleans and (dictionary and PLAIN) strings; a column the file lacks. Values
 * as written. Our writer's columns likewise. (No REQUIRED column: neither DuckDB 1.4,
 * NOT NULL or not, nor our writer writes one; the reader takes it as all present.) */
static void test_valid_null_when_no_null(void **state)
{
	char *dir = nx_test_dir("pq-read-valid");
	char *path = fmt("%s/v.parquet", dir), *ours = fmt("%s/ours.parquet", dir);
	struct nx_duck *d = NULL;
	struct nx_err err = { 0 };
	struct nx_pqr *r = NULL;
	const struct nx_pqr_batch *b;
	const char *files[] = { path };
	int64_t nulls[6] = { 0 }, rows = 0, none = 0, some = 0, all = 0;
	int rc;

	(void)state;
	assert_int_equal(nx_duck_open(&d, 1, NULL, &err), 0);
	char *sql = fmt("COPY (SELECT i AS id, CASE WHEN (g = 1 AND j = %d) OR g = 2 OR (g = 3 AND "
			"j %% 3 = 0) THEN NULL ELSE i * 7 END AS opt, CASE WHEN g = 3 AND j %% 5 = 0 "
			"THEN NULL ELSE 's' || (i %% 10) END AS s, CASE WHEN g = 1 AND j = 0 THEN "
			"NULL ELSE i %% 2 = 0 END AS flag, CASE WHEN g = 4 AND j = 100 THEN NULL ELSE "
			"'u' || i END AS u FROM (SELECT range AS i, range // %d AS g, range %% %d AS "
			"j FROM range(%d)) ORDER BY i) TO '%s' (FORMAT parquet, ROW_GROUP_SIZE %d)",
			VG - 1, VG, VG, 5 * VG, path, VG);
	ex(d, sql);
	free(sql);
	assert_int_equal(nx_pqr_open(&r, files, 1, VALID_COLS, 6, &err), 0);
	while (!(rc = nx_pqr_next(r, &b, &err)) && b) {
		rows += (int64_t)b->rows;
		for (size_t k = 0; k < 6; k++) {
			int64_t before = nulls[k];
			bool any = valid_test_col(b, k, &nulls[k]);
			if (k == 1) {
				none += !any;
				some += any && nulls[k] - before < (int64_t)b->rows;
				all += any && nulls[k] - before == (int64_t)b->rows;
			}
		}
	}
	assert_int_equal(rc, 0);
	nx_pqr_close(r);
	assert_int_equal(rows, 5 * VG);
	/* every case met: row groups of opt with no NULL, some, all */
	NX_ASSERT_CMP(none, >=, 2);
	NX_ASSERT_CMP(some, >=, 2);
	NX_ASSERT_CMP(all, >=, 1);
	assert_int_equal(nulls[1], 1 + VG + (VG + 2) / 3);
	assert_int_equal(nulls[3], 1);
	assert_int_equal(nulls[4], 1);

	/* our writer's file: id and word never NULL, small and name NULL in every group */
	files[0] = ours;
	write_dict_file(ours);
	assert_int_equal(nx_pqr_open(&r, files, 1, DICT_COLS, 4, &err), 0);
	size_t groups = 0;
	while (!(rc = nx_pqr_next(r, &b, &err)) && b) {
		groups++;
		assert_null(b->col[0].valid);
		assert_null(b->col[3].valid);
		assert_non_null(b->col[1].valid);
		assert_non_null(b->col[2].valid);
		for (size_t i = 0; i < b->rows; i++)
			assert_int_equal(b->col[0].i64[i], (int64_t)((groups - 1) * 5000 + i));
	}
	assert_int_equal(rc, 0);
	assert_int_equal(groups, 5);
	nx_pqr_close(r);
	nx_duck_close(d);
	free(path);
	free(ours);
	free(dir);
}

/* A list whose count exceeds the bytes left in a window over a longer footer runs past
 * the window (NX_ETRUNC: the reader moves the window and parses again); in a whole footer
 * it is corrupt. The reader once took the first for the second: a 100M-record
 * Instruction.parquet with source lines, whose row groups' column lists sometimes began
 * in a window's last bytes, was refused and read through DuckDB instead (6.5x the memory). */
static void test_list_past_window(void **state)
{
	static const uint8_t b[] = { 0xcc, 0x00, 0x00, 0x00 }; /* 12 structs, 3 bytes left */
	struct nx_tc_in in;
	struct nx_err err = { 0 };
	uint32_t n = 0;
	int elem = 0;

	(void)state;
	nx_tc_in_init(&in, b, sizeof(b), "w.parquet", 100);
	assert_int_equal(nx_tc_read_list(&in, &n, &elem, &err), NX_ECORRUPT);
	assert_non_null(strstr(err.msg, "w.parquet"));
	nx_tc_in_init(&in, b, sizeof(b), "w.parquet", 100);
	in.more = true;
	assert_int_equal(nx_tc_read_list(&in, &n, &elem, &err), NX_ETRUNC);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_reads_like_duckdb),
		cmocka_unit_test(test_dictionary_widths),
		cmocka_unit_test(test_bad_bytes),
		cmocka_unit_test(test_footer_in_slices),
		cmocka_unit_test(test_list_past_window),
		cmocka_unit_test(test_ranges),
		cmocka_unit_test(test_our_dictionaries),
		cmocka_unit_test(test_damaged_dictionary),
		cmocka_unit_test(test_valid_null_when_no_null),
	};
	return nx_test_done(cmocka_run_group_tests(tests, NULL, NULL));
}
