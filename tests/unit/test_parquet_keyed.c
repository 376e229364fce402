/* SPDX-License-Identifier: MIT
 * test_parquet_keyed.c: our parquet writer's keyed columns (struct nx_row_keys, db/duck.h;
 * db/parquet_write.h). A source whose columns are functions of a key per row, written
 * with its keys and without them, makes the same file byte for byte, and DuckDB reads it
 * as the rows DuckDB's own writer makes of the same source: with NULLs decided by the
 * key, rows of no key, row groups that end inside a batch, keys of so many values that
 * a chunk's dictionary goes PLAIN mid-chunk, memos that would be too large (the keys
 * ignored), and a source that breaks its promise (one key, several values, NULL or
 * not): the true values are written, never the memo's. */
#include "common/compat.h"
#include "common/fsutil.h"
#include "common/log.h"
#include "common/xalloc.h"
#include "db/duck.h"
#include "db/parquet_write.h"
#include "helper/fixture.h"
#include "helper/profile_db.h"
#include "schema/schema.h"

#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

/* Rows of t. Row r has key key_of(r) (NX_ROW_NOKEY for every nokey-th row); a keyed
 * column's cell is a function of (key, column) alone, NULL for a fifth of the keys; the
 * other columns' of (row, column). liar: a keyed cell is of (key, column, r / 700)
 * instead, NULL or not by that too: the promise broken. */
struct gen {
	const struct nx_table *t;
	struct nx_row_keys keys;
	int64_t next, rows;
	uint32_t nokey;
	bool liar;
	bool filled; /* keys.fill: a batch that takes keys gets no keyed cell of a key */
};

static uint32_t key_of(const struct gen *g, int64_t r)
{
	if (g->nokey && r % g->nokey == 1)
		return NX_ROW_NOKEY;
	/* rows interleave keys, as an NTFF's engines do */
	return (uint32_t)(((uint64_t)r * 2654435761u >> 7) % g->keys.n);
}

static bool keyed(const struct gen *g, size_t col)
{
	return g->keys.cols[col / 64] >> (col % 64) & 1;
}

/* The cell of (v, col): v a key's or a row's number. */
static void cell(struct nx_rowbuf *b, const struct nx_field *f, size_t col, size_t n,
		 int64_t v)
{
	const char *type = nx_schema_duck_type(f);
	static const char pad[] = "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGH";
	char text[96];

	if (!type || (v + (int64_t)col) % 5 == 0)
		return; /* NULL */
	if (!strcmp(type, "BIGINT") || !strcmp(type, "INTEGER")) {
		nx_rowbuf_i64(b, col, n, v * 1000 + (int64_t)col);
	} else if (!strcmp(type, "DOUBLE") || !strcmp(type, "FLOAT")) {
		nx_rowbuf_f64(b, col, n, (double)v / 4.0 - 3.0);
	} else if (!strcmp(type, "BOOLEAN")) {
		nx_rowbuf_bool(b, col, n, v % 3 == 0);
	} else if (!strcmp(type, "VARCHAR")) {
		/* 0 to 40 bytes: past the dictionary's 16 compared as words, and not */
		int len = snprintf(text, sizeof(text), "%" PRId64 "/%zu:", v, col);
		size_t want = (size_t)(v % 41);
		if (want > (size_t)len)
			memcpy(text + len, pad, want - (size_t)len);
		nx_rowbuf_strn(b, col, n, text, want > (size_t)len ? want : (size_t)len);
	}
	/* lists: left NULL */
}

static int gen_next(void *self, struct nx_rowbuf *b, struct nx_err *err)
{
	struct gen *g = self;
	size_t n = 0, cap = nx_rowbuf_capacity(b);
	uint32_t *keys = nx_rowbuf_keys(b);

	(void)err;
	for (; n < cap && g->next < g->rows; n++, g->next++) {
		int64_t r = g->next;
		uint32_t k = key_of(g, r);
		if (keys)
			keys[n] = k;
		for (size_t c = 0; c < g->t->nfields; c++) {
			int64_t v = r;
			if (keys && g->filled && keyed(g, c) && k != NX_ROW_NOKEY)
				continue; /* the writer has the key's row */
			if (keyed(g, c) && k != NX_ROW_NOKEY)
				v = g->liar ? (int64_t)k * 7 + r / 700 : (int64_t)k;
			cell(b, &g->t->fields[c], c, n, v);
		}
	}
	return (int)n;
}

/* How a source keeps its promise: it does (HONEST), breaks it (LIAR), or gives the
 * writer a row per key and leaves the keyed cells of a key out of its batches (FILLED). */
enum how { HONEST, LIAR, FILLED };

/* The keyed cells of a key's row, for the writer of a filled source. */
static void gen_fill(void *arg, uint32_t key, struct nx_rowbuf *b, size_t row)
{
	const struct gen *g = arg;

	for (size_t c = 0; c < g->t->nfields; c++)
		if (keyed(g, c))
			cell(b, &g->t->fields[c], c, row, key);
}

/* A source of rows rows of table, nkeys keys: every other column keyed, but booleans and
 * lists when filled (a fill keys neither). */
static struct nx_row_source gen_source(struct gen *g, const char *table, int64_t rows,
				       uint32_t nkeys, uint32_t nokey, enum how how, bool with_keys)
{
	bool filled = how == FILLED;

	memset(g, 0, sizeof(*g));
	g->t = nx_schema_table(table);
	assert_non_null(g->t);
	g->rows = rows;
	g->nokey = nokey;
	g->liar = how == LIAR;
	g->filled = filled;
	g->keys.n = nkeys;
	for (size_t c = 0; c < g->t->nfields && c < 128; c += 2) {
		const char *type = nx_schema_duck_type(&g->t->fields[c]);
		if (filled && (!type || !strcmp(type, "BOOLEAN") || strchr(type, '[')))
			continue;
		g->keys.cols[c / 64] |= (uint64_t)1 << (c % 64);
	}
	if (filled) {
		g->keys.fill = gen_fill;
		g->keys.arg = g;
	}
	return (struct nx_row_source){ .table = g->t, .self = g, .next = gen_next,
				       .keys = with_keys ? &g->keys : NULL };
}

struct fx {
	char *dir;
	struct nx_duck *d;
};

/* The cells the last keyed write took from its memos (its debug line), or -1. */
static int64_t memo_cells = -1;

static void sink(void *arg, enum nx_log_level level, const char *line)
{
	const char *at = strstr(line, "': ");
	long long cells;

	(void)arg;
	(void)level;
	if (strncmp(line, "parquet: ", 9) || !at || sscanf(at + 3, "%lld cells", &cells) != 1)
		return;
	memo_cells = cells;
}

static int fx_setup(void **state)
{
	struct fx *f = nx_xcalloc(1, sizeof(*f));
	struct nx_err err = { 0 };

	f->dir = nx_test_dir("parquet_keyed");
	*state = f;
	nx_log_set_level(NX_LOG_DEBUG);
	nx_log_set_sink(sink, NULL);
	return nx_duck_open(&f->d, 2, NULL, &err) ? -1 : 0;
}

static int fx_teardown(void **state)
{
	struct fx *f = *state;
	struct nx_err err = { 0 };

	nx_log_set_sink(NULL, NULL);
	nx_log_set_level(NX_LOG_INFO);
	nx_duck_close(f->d);
	nx_remove_tree(f->dir, &err);
	free(f->dir);
	free(f);
	return 0;
}

static void same_bytes(const char *a, const char *b)
{
	size_t na, nb;
	char *x = nx_test_slurp(a, &na), *y = nx_test_slurp(b, &nb);

	if (na != nb || memcmp(x, y, na))
		fail_msg("'%s' (%zu bytes) and '%s' (%zu bytes) differ", a, na, b, nb);
	free(x);
	free(y);
}

/* Writes the rows of one source three ways, keyed (run ahead, as the ingest does, and
 * inline in the default row groups), unkeyed by ours and by DuckDB, and checks that the
 * keyed file is the unkeyed one and reads as DuckDB's. The keyed write took at least
 * min_hits cells from its memos (-1: the keys were ignored, no memo). */
static void keyed_as_unkeyed(struct fx *f, const char *table, int64_t rows, uint32_t nkeys,
			     uint32_t nokey, enum how how, unsigned long row_group, int64_t min_hits)
{
	char *with = nx_xasprintf("%s/%s.keyed.parquet", f->dir, table);
	char *inl = nx_xasprintf("%s/%s.inline.parquet", f->dir, table);
	char *without = nx_xasprintf("%s/%s.plain.parquet", f->dir, table);
	char *duck = nx_xasprintf("%s/%s.duck.parquet", f->dir, table);
	struct nx_err err = { 0 };
	struct nx_duck_ahead *a;
	struct gen g;
	struct nx_row_source src;
	uint64_t n = 0;

	src = gen_source(&g, table, rows, nkeys, nokey, how, true);
	memo_cells = -1;
	if (nx_duck_ahead_start(&src, true, &a, &err) ||
	    nx_pqw_write_ahead(a, with, row_group, &n, &err))
		fail_msg("%s keyed: %s", table, err.msg);
	assert_int_equal(n, rows);
	if (min_hits < 0 ? memo_cells != -1 : memo_cells < min_hits)
		fail_msg("%s: %lld cells by their key's memo, expected %s %lld", table,
			 (long long)memo_cells, min_hits < 0 ? "no memo" : "at least",
			 (long long)min_hits);
	memo_cells = -1;
	src = gen_source(&g, table, rows, nkeys, nokey, how, false);
	if (nx_duck_ahead_start(&src, true, &a, &err) ||
	    nx_pqw_write_ahead(a, without, row_group, &n, &err))
		fail_msg("%s unkeyed: %s", table, err.msg);
	assert_int_equal(n, rows);
	assert_int_equal(memo_cells, -1); /* no keys, no memo */
	same_bytes(with, without);
	if (row_group == 0) { /* inline, in the default row groups */
		src = gen_source(&g, table, rows, nkeys, nokey, how, true);
		if (nx_pqw_write_source(&src, inl, &n, &err))
			fail_msg("%s keyed inline: %s", table, err.msg);
		same_bytes(inl, without);
	}
	/* DuckDB's writer is given the keys too, and takes none */
	src = gen_source(&g, table, rows, nkeys, nokey, how, true);
	if (nx_duck_copy_source(f->d, &src, duck, &n, &err))
		fail_msg("%s DuckDB: %s", table, err.msg);
	assert_int_equal(n, rows);
	if (nx_test_qi(f->d, "SELECT count(*) FROM read_parquet('%s')", with) != rows)
		fail_msg("%s: row count", table);
#define EXCEPT_ALL                                                                         \
	"SELECT count(*) FROM (SELECT * FROM read_parquet('%s', file_row_number = true) "    \
	"EXCEPT ALL SELECT * FROM read_parquet('%s', file_row_number = true))"
	if (nx_test_qi(f->d, EXCEPT_ALL, with, duck) || nx_test_qi(f->d, EXCEPT_ALL, duck, with))
		fail_msg("%s: the keyed file's rows are not DuckDB's", table);
	free(with);
	free(inl);
	free(without);
	free(duck);
}

/* Keys of few values, NULLs by key, rows of no key; row groups of 3000 rows end inside
 * the batches of 2048; the default groups, and inline. */
static void test_keyed_is_unkeyed(void **state)
{
	struct fx *f = *state;

	keyed_as_unkeyed(f, "Instruction", 20000, 300, 13, HONEST, 3000, 20000);
	keyed_as_unkeyed(f, "DmaPacket", 20000, 300, 13, HONEST, 3000, 20000);
	keyed_as_unkeyed(f, "Instruction", 20000, 300, 0, HONEST, 0, 20000);
}

/* Keys of more distinct values than a chunk's dictionary holds (a quarter of 4096 rows):
 * the keyed columns go PLAIN mid-chunk, and the memos are of no use after that. */
static void test_keys_past_the_dictionary(void **state)
{
	struct fx *f = *state;

	keyed_as_unkeyed(f, "Instruction", 30000, 5000, 7, HONEST, 4096, 1);
}

/* A source that breaks its promise: one key, several values (NULL or not) across rows,
 * row groups and batches. Every value is the true one. */
static void test_a_source_that_lies(void **state)
{
	struct fx *f = *state;

	keyed_as_unkeyed(f, "Instruction", 30000, 50, 11, LIAR, 3000, 30000);
	keyed_as_unkeyed(f, "DmaPacket", 30000, 50, 0, LIAR, 0, 30000);
}

/* Keys whose memos would pass the bound: ignored, the same file. */
static void test_too_many_keys(void **state)
{
	struct fx *f = *state;

	keyed_as_unkeyed(f, "Instruction", 5000, 1u << 30, 3, HONEST, 0, -1);
}

/* A source with a fill: its batches for our writer lack the keyed cells of a key, which
 * the writer takes from the rows it filled once; the same file as the unkeyed one, with
 * rows of no key, NULLs by key, row groups inside batches, a dictionary past its bound. */
static void test_filled_is_unkeyed(void **state)
{
	struct fx *f = *state;

	keyed_as_unkeyed(f, "Instruction", 20000, 300, 13, FILLED, 3000, 20000);
	keyed_as_unkeyed(f, "DmaPacket", 20000, 300, 0, FILLED, 0, 20000);
	keyed_as_unkeyed(f, "SemaphoreUpdate", 20000, 300, 5, FILLED, 3000, 5000);
	keyed_as_unkeyed(f, "Instruction", 30000, NX_ROW_KEYS_FILLED, 7, FILLED, 4096, 0);
}

/* A fill that keys a boolean, or has too many keys: an error, never a file of cells
 * missing. */
static void test_filled_refusals(void **state)
{
	struct fx *f = *state;
	char *path = nx_xasprintf("%s/refused.parquet", f->dir);
	struct nx_err err = { 0 };
	struct nx_duck_ahead *a;
	struct gen g;
	struct nx_row_source src = gen_source(&g, "SemaphoreUpdate", 100, 10, 0, FILLED, true);
	const struct nx_table *t = g.t;
	uint64_t n;
	size_t bool_col = t->nfields;

	for (size_t c = 0; c < t->nfields; c++) {
		const char *type = nx_schema_duck_type(&t->fields[c]);
		if (type && !strcmp(type, "BOOLEAN"))
			bool_col = c;
	}
	assert_true(bool_col < t->nfields);
	g.keys.cols[bool_col / 64] |= (uint64_t)1 << (bool_col % 64);
	assert_int_equal(nx_duck_ahead_start(&src, true, &a, &err), 0);
	assert_int_equal(nx_pqw_write_ahead(a, path, 0, &n, &err), NX_EUSAGE);
	assert_non_null(strstr(err.msg, "cannot be keyed by a fill"));
	assert_false(nx_is_file(path));

	src = gen_source(&g, "Instruction", 100, NX_ROW_KEYS_FILLED + 1, 0, FILLED, true);
	memset(&err, 0, sizeof(err));
	assert_int_equal(nx_pqw_write_source(&src, path, &n, &err), NX_EUSAGE);
	assert_non_null(strstr(err.msg, "keys with a fill"));
	assert_false(nx_is_file(path));
	free(path);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_keyed_is_unkeyed, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_keys_past_the_dictionary, fx_setup,
						fx_teardown),
		cmocka_unit_test_setup_teardown(test_a_source_that_lies, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_too_many_keys, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_filled_is_unkeyed, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_filled_refusals, fx_setup, fx_teardown),
	};
	return nx_test_done(cmocka_run_group_tests(tests, NULL, NULL));
}
