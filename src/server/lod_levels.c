/* SPDX-License-Identifier: MIT
 * lod_levels.c: the levels of the timeline cache's pyramids above the finest one
 * (lod_levels.h). Each level is one streamed pass over the level below, read from the
 * cache in (k, core, track) order: the rows whose halved bucket is the same come one
 * after the other, so only that bucket's rows (two per track at most, three at bucket 0,
 * for the halving truncates towards zero as DuckDB's does) are held, sorted by (core,
 * track), combined and kept in that order, a slice of the level at a time, then
 * appended to the cache's table once the slice's read has ended (build_slice and
 * build_level say why). The results are those of
 * the grouping query each level used to run (lod_build.c keeps it as the reference the tests compare
 * against), at a fraction of its CPU: no hash table, no HUGEINT keys. An event source's
 * level may be shared with a second thread (nx__lod_levels_up_two): the rest of the
 * level cut at a parent bucket, the second's part committed after this one's. */
#include "common/compat.h"
#include "server/lod_levels.h"
#include "server/lod.h"
#include "common/strbuf.h"
#include "common/xalloc.h"
#include "db/duck.h"

#include <inttypes.h>
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

const enum nx_cell_kind nx__lod_row_kinds[NX_LOD_ROW_COLUMNS] = {
	NX_CELL_INT, NX_CELL_INT, NX_CELL_INT, NX_CELL_TEXT, NX_CELL_INT, NX_CELL_INT,
	NX_CELL_INT, NX_CELL_INT, NX_CELL_INT, NX_CELL_INT,  NX_CELL_INT, NX_CELL_TEXT,
};

/* The cells of a row of tl.ctr_lod (level, k, core, track, lo, hi, last, last_ts). */
static const enum nx_cell_kind ctr_row_kinds[] = {
	NX_CELL_INT, NX_CELL_INT, NX_CELL_INT, NX_CELL_TEXT,
	NX_CELL_FLOAT, NX_CELL_FLOAT, NX_CELL_FLOAT, NX_CELL_INT,
};

/* The levels' slices, in input rows, are the bounds' chunk rows over this
 * (nx__lod_levels_up). */
#define LEVEL_SLICE_DIV 8

/* A string cell of a row: its bytes in the bucket's arena; len NULL_LEN: NULL. */
#define NULL_LEN SIZE_MAX
struct cell {
	size_t off, len;
};

/* A row of a level: its bucket, core and track, then the event pyramid's columns
 * (tl.lod<s>) or the counters' (tl.ctr_lod). */
struct row {
	int64_t k, core;
	bool core_null;
	struct cell track;
	const char *track_at; /* its bytes, once the bucket is whole (the arena moves) */
	size_t ord; /* its place in the input, so that ties keep the first */
	/* events */
	int64_t count, busy, first, last;
	bool has_r; /* the longest event: id, start and end are all there */
	int64_t id, s, e;
	struct cell label;
	/* counters */
	double lo, hi, lastv;
	bool lo_null, hi_null, lastv_null;
	bool has_last; /* last_ts is there */
	int64_t last_ts;
};

/* The rows of the level below that fall into one bucket of the level being built. */
struct bucket {
	bool ctr;  /* the counters' pyramid */
	int src, level;
	bool open; /* parent is set */
	int64_t parent, prev_k;
	struct row *rows;
	size_t n, cap, seen;
	struct nx_strbuf arena;
	/* the slice's rows of the level being built, their strings in out_arena */
	struct row *out;
	size_t nout, outcap;
	struct nx_strbuf out_arena;
	/* the level being built: its appender, kept over the level's slices so that each
	 * slice's commit ends on a whole vector of the table, which holds table_rows rows
	 * (nx_duck_appender_commit); closed at the level's end, before the next reads it */
	struct nx_duck_appender *app;
	uint64_t table_rows;
};

static struct cell cell_read(const struct nx_dchunk *c, size_t col, size_t i,
			     struct nx_strbuf *arena)
{
	struct cell out = { 0, NULL_LEN };
	const char *s;
	size_t len;

	if (nx_dchunk_str(c, col, i, &s, &len)) {
		out.off = arena->len;
		out.len = len;
		nx_strbuf_add(arena, s, len);
	}
	return out;
}

/* A chunk's columns 0, 1 and 3..9 when all are BIGINT (an events' level: k, core, count
 * .. end_ts), read once per chunk rather than by a call per cell; ok false otherwise (a
 * counters' level), for the calls per cell. */
struct chunk_cols {
	const struct nx_dchunk *c;
	bool ok;
	const int64_t *v[10];
	const uint64_t *valid[10];
};

static void cols_of(struct chunk_cols *cc, const struct nx_dchunk *c, bool ctr)
{
	cc->c = c;
	cc->ok = !ctr;
	for (size_t col = 0; col < 10 && cc->ok; col++)
		if (col != 2 && !(cc->v[col] = nx_dchunk_i64s(c, col, &cc->valid[col])))
			cc->ok = false;
}

/* nx_dchunk_i64 of column col (not 2) of row i. */
static inline bool col_i64(const struct chunk_cols *cc, size_t col, size_t i, int64_t *v)
{
	if (!cc->ok)
		return nx_dchunk_i64(cc->c, col, i, v);
	if (!nx_dchunk_valid(cc->valid[col], i))
		return false;
	*v = cc->v[col][i];
	return true;
}

static int need_i64(const struct chunk_cols *cc, size_t col, size_t i, int64_t *v,
		    const struct bucket *b, struct nx_err *err)
{
	if (col_i64(cc, col, i, v))
		return 0;
	return nx_errf(err, NX_EDB, "level %d of the %s pyramid: NULL in column %zu of a row",
		       b->level - 1, b->ctr ? "counters'" : "events'", col);
}

/* Reads row i of chunk c into r. */
static int row_read(struct bucket *b, const struct chunk_cols *cc, size_t i, struct row *r,
		    struct nx_err *err)
{
	const struct nx_dchunk *c = cc->c;
	int rc;

	memset(r, 0, sizeof(*r));
	r->ord = b->seen++;
	if ((rc = need_i64(cc, 0, i, &r->k, b, err)))
		return rc;
	r->core_null = !col_i64(cc, 1, i, &r->core);
	r->track = cell_read(c, 2, i, &b->arena);
	if (b->ctr) {
		r->lo_null = !nx_dchunk_f64(c, 3, i, &r->lo);
		r->hi_null = !nx_dchunk_f64(c, 4, i, &r->hi);
		r->lastv_null = !nx_dchunk_f64(c, 5, i, &r->lastv);
		r->has_last = nx_dchunk_i64(c, 6, i, &r->last_ts);
		return 0;
	}
	if ((rc = need_i64(cc, 3, i, &r->count, b, err)) ||
	    (rc = need_i64(cc, 4, i, &r->busy, b, err)) ||
	    (rc = need_i64(cc, 5, i, &r->first, b, err)) ||
	    (rc = need_i64(cc, 6, i, &r->last, b, err)))
		return rc;
	r->has_r = col_i64(cc, 7, i, &r->id) && col_i64(cc, 8, i, &r->s) &&
		   col_i64(cc, 9, i, &r->e);
	r->label = cell_read(c, 10, i, &b->arena);
	return 0;
}

/* The order of (core, track) in DuckDB's ORDER BY: tracks by their bytes, then their
 * length; NULL last. */
static int key_cmp(const struct row *a, const struct row *b)
{
	size_t n;
	int c;

	if (a->core_null != b->core_null)
		return a->core_null ? 1 : -1;
	if (!a->core_null && a->core != b->core)
		return a->core < b->core ? -1 : 1;
	if (a->track.len == NULL_LEN || b->track.len == NULL_LEN)
		return (a->track.len == NULL_LEN) - (b->track.len == NULL_LEN);
	n = a->track.len < b->track.len ? a->track.len : b->track.len;
	c = n ? memcmp(a->track_at, b->track_at, n) : 0;
	if (c)
		return c;
	return (a->track.len > b->track.len) - (a->track.len < b->track.len);
}

static int row_order(const void *pa, const void *pb)
{
	const struct row *a = pa, *b = pb;
	int c = key_cmp(a, b);

	if (c)
		return c;
	return (a->ord > b->ord) - (a->ord < b->ord);
}

/* DuckDB's min and max of DOUBLEs: NULLs left out, NaN above every number. */
static void f64_min(double *a, bool *a_null, double b, bool b_null)
{
	if (b_null)
		return;
	if (*a_null || isnan(*a) || (!isnan(b) && b < *a)) {
		*a = b;
		*a_null = false;
	}
}

static void f64_max(double *a, bool *a_null, double b, bool b_null)
{
	if (b_null)
		return;
	if (*a_null || (!isnan(*a) && (isnan(b) || b > *a))) {
		*a = b;
		*a_null = false;
	}
}

/* Whether value b (b_null: NULL) comes after a in DuckDB's order of a struct's fields:
 * NULL above NaN above every number. */
static bool f64_after(double a, bool a_null, double b, bool b_null)
{
	if (a_null || b_null)
		return b_null && !a_null;
	if (isnan(a) || isnan(b))
		return isnan(b) && !isnan(a);
	return b > a;
}

/* Folds r into acc (same bucket, core and track; r after acc in the input). The last
 * value is NX_LOD_LAST_SQL's: the greatest (time, value), whichever row came first. */
static int row_combine(struct bucket *b, struct row *acc, const struct row *r,
		       struct nx_err *err)
{
	if (b->ctr) {
		f64_min(&acc->lo, &acc->lo_null, r->lo, r->lo_null);
		f64_max(&acc->hi, &acc->hi_null, r->hi, r->hi_null);
		if (r->has_last &&
		    (!acc->has_last || r->last_ts > acc->last_ts ||
		     (r->last_ts == acc->last_ts &&
		      f64_after(acc->lastv, acc->lastv_null, r->lastv, r->lastv_null)))) {
			acc->has_last = true;
			acc->last_ts = r->last_ts;
			acc->lastv = r->lastv;
			acc->lastv_null = r->lastv_null;
		}
		return 0;
	}
	if (__builtin_add_overflow(acc->count, r->count, &acc->count) ||
	    __builtin_add_overflow(acc->busy, r->busy, &acc->busy))
		return nx_errf(err, NX_EDB, "level %d of the events' pyramid: the busy time of "
			       "bucket %" PRId64 " overflows", b->level, b->parent);
	if (r->first < acc->first)
		acc->first = r->first;
	if (r->last > acc->last)
		acc->last = r->last;
	if (r->has_r && nx__lod_longer(r->s, r->e, r->id, acc->has_r, acc->s, acc->e, acc->id)) {
		acc->has_r = true;
		acc->id = r->id;
		acc->s = r->s;
		acc->e = r->e;
		acc->label = r->label;
	}
	return 0;
}

/* c, whose bytes are at base + c.off, with its bytes copied to the end of arena. */
static struct cell cell_keep(struct nx_strbuf *arena, const char *base, struct cell c)
{
	struct cell out = { arena->len, c.len };

	if (c.len != NULL_LEN)
		nx_strbuf_add(arena, base + c.off, c.len);
	else
		out.off = 0;
	return out;
}

static void append_cell(struct nx_duck_appender *a, const char *base, struct cell c)
{
	nx_duck_append_str(a, c.len == NULL_LEN ? NULL : base + c.off,
			   c.len == NULL_LEN ? 0 : c.len);
}

static void append_opt_i64(struct nx_duck_appender *a, bool there, int64_t v)
{
	if (there)
		nx_duck_append_i64(a, v);
	else
		nx_duck_append_null(a);
}

static void append_opt_f64(struct nx_duck_appender *a, bool null, double v)
{
	if (null)
		nx_duck_append_null(a);
	else
		nx_duck_append_f64(a, v);
}

static int row_append(struct nx_duck_appender *a, const struct bucket *b, const struct row *r,
		      struct nx_err *err)
{
	const char *base = b->out_arena.buf;

	nx_duck_append_i64(a, b->level);
	nx_duck_append_i64(a, r->k);
	append_opt_i64(a, !r->core_null, r->core);
	append_cell(a, base, r->track);
	if (b->ctr) {
		append_opt_f64(a, r->lo_null, r->lo);
		append_opt_f64(a, r->hi_null, r->hi);
		append_opt_f64(a, !r->has_last || r->lastv_null, r->lastv);
		append_opt_i64(a, r->has_last, r->last_ts);
	} else {
		nx_duck_append_i64(a, r->count);
		nx_duck_append_i64(a, r->busy);
		nx_duck_append_i64(a, r->first);
		nx_duck_append_i64(a, r->last);
		append_opt_i64(a, r->has_r, r->id);
		append_opt_i64(a, r->has_r, r->s);
		append_opt_i64(a, r->has_r, r->e);
		if (r->has_r)
			append_cell(a, base, r->label);
		else
			nx_duck_append_null(a);
	}
	return nx_duck_append_end_row(a, err);
}

/* Keeps acc, the combined row of one (core, track) of bucket b->parent, in b->out. */
static void row_keep(struct bucket *b, const struct row *acc)
{
	struct row *o;

	if (b->nout == b->outcap) {
		b->outcap = b->outcap ? 2 * b->outcap : 1024;
		b->out = nx_xrealloc(b->out, b->outcap * sizeof(*b->out));
	}
	o = &b->out[b->nout++];
	*o = *acc;
	o->k = b->parent;
	o->track = cell_keep(&b->out_arena, b->arena.buf, acc->track);
	o->track_at = NULL;
	if (!b->ctr)
		o->label = cell_keep(&b->out_arena, b->arena.buf, acc->label);
}

/* Sorts the bucket's rows by (core, track), keeps one combined row per pair (row_keep),
 * empties the bucket. */
static int bucket_flush(struct bucket *b, struct nx_err *err)
{
	int rc = 0;

	for (size_t i = 0; i < b->n; i++)
		b->rows[i].track_at = b->arena.buf + b->rows[i].track.off;
	qsort(b->rows, b->n, sizeof(*b->rows), row_order);
	for (size_t i = 0; i < b->n && !rc;) {
		struct row acc = b->rows[i];
		size_t j = i + 1;

		for (; j < b->n && !key_cmp(&acc, &b->rows[j]) && !rc; j++)
			rc = row_combine(b, &acc, &b->rows[j], err);
		if (!rc)
			row_keep(b, &acc);
		i = j;
	}
	b->n = 0;
	nx_strbuf_reset(&b->arena);
	return rc;
}

static int take_chunk(void *arg, const struct nx_dchunk *c, struct nx_err *err)
{
	struct bucket *b = arg;
	size_t rows = nx_dchunk_rows(c);
	struct chunk_cols cc;
	int rc = 0;

	cols_of(&cc, c, b->ctr);
	for (size_t i = 0; i < rows && !rc; i++) {
		int64_t k, parent;

		if ((rc = need_i64(&cc, 0, i, &k, b, err)))
			break;
		if (b->open && k < b->prev_k)
			return nx_errf(err, NX_EDB, "level %d of the %s pyramid is not in bucket "
				       "order (bucket %" PRId64 " after %" PRId64 ")",
				       b->level - 1, b->ctr ? "counters'" : "events'", k,
				       b->prev_k);
		parent = k / 2; /* truncated, as DuckDB's k // 2 */
		if (b->open && parent != b->parent && (rc = bucket_flush(b, err)))
			break;
		b->open = true;
		b->parent = parent;
		b->prev_k = k;
		if (b->n == b->cap) {
			b->cap = b->cap ? 2 * b->cap : 64;
			b->rows = nx_xrealloc(b->rows, b->cap * sizeof(*b->rows));
		}
		rc = row_read(b, &cc, i, &b->rows[b->n++], err);
	}
	return rc;
}

/* Appends to the cache's table the rows of level b->level made from the rows of `from`
 * (a table and its filter) whose bucket k is in [k0, k1) (k1 INT64_MAX: no end). The
 * rows are kept in C (row_keep) while the level below is read and appended once its
 * read has ended: the cache's file is never written by one connection (the appender's)
 * while another reads it, for the commit of either would then wait for the other's lock
 * to checkpoint the file. (They went through a staging table of the in-memory database
 * before, then an INSERT into the cache: docs/memory.md, "The levels above L0".) */
static int build_slice(struct nx_duck *d, struct bucket *b, const char *from, int64_t k0,
		       int64_t k1, struct nx_err *err)
{
	char *table = b->ctr ? nx_xstrdup("tl.ctr_lod") : nx_xasprintf("tl.lod%d", b->src);
	struct nx_strbuf q = NX_STRBUF_INIT;
	int rc;

	if (b->ctr)
		nx_strbuf_addf(&q, "SELECT k, core, track, lo, hi, last, last_ts FROM %s", from);
	else
		nx_strbuf_addf(&q, "SELECT k, core, track::VARCHAR, count, busy, first_ts, "
				   "last_ts, id, start_ts, end_ts, label::VARCHAR FROM %s",
			       from);
	if (k0 != INT64_MIN)
		nx_strbuf_addf(&q, " AND k >= %" PRId64, k0);
	if (k1 != INT64_MAX)
		nx_strbuf_addf(&q, " AND k < %" PRId64, k1);
	b->open = false;
	b->n = 0;
	b->nout = 0;
	nx_strbuf_reset(&b->arena);
	nx_strbuf_reset(&b->out_arena);
	rc = nx_duck_scan(d, q.buf, take_chunk, b, err);
	if (!rc && b->open)
		rc = bucket_flush(b, err);
	nx_strbuf_release(&q);
	if (!rc && !b->nout) {
		free(table);
		return 0;
	}
	/* text into the ENUM columns a chunk at a time (nx_duck_appender_open_typed) */
	if (!rc && !b->app) {
		if (b->ctr)
			rc = nx_duck_appender_open_typed(d, table, ctr_row_kinds,
							 NX_ARRAY_SIZE(ctr_row_kinds), &b->app, err);
		else
			rc = nx_duck_appender_open_typed(d, table, nx__lod_row_kinds,
							 NX_LOD_ROW_COLUMNS, &b->app, err);
		if (!rc)
			nx_duck_appender_align(b->app, b->table_rows);
	}
	for (size_t i = 0; i < b->nout && !rc; i++)
		rc = row_append(b->app, b, &b->out[i], err);
	if (!rc)
		rc = nx_duck_appender_commit(b->app, err);
	b->table_rows += b->nout;
	free(table);
	return rc;
}

/* The first bucket at or after k that does not share its parent with the one before it
 * (the halving truncates towards zero, so -1, 0 and 1 share parent 0). */
static int64_t parent_start(int64_t k)
{
	while (k > INT64_MIN && (k - 1) / 2 == k / 2)
		k++;
	return k;
}

/* Instruction's levels on both threads of the events part (lod_levels.h): the state the
 * two share, under lock. */
struct nx_lod_levels_two {
	pthread_mutex_t lock;
	pthread_cond_t cond;
	int64_t min_rows;
	bool joined; /* the second thread waits for parts */
	bool gone;   /* the second thread does not come (it failed) */
	bool ended;  /* the first offers no more parts */
	/* the part offered: buckets k >= k0 of level level - 1 (level 0: none) */
	int src, level;
	int64_t k0, slice;
	int first;  /* the first's part of the level: 0 being built, 1 committed, -1 failed */
	int second; /* the second's: 0 being built, 1 committed, -1 failed, -2 rolled back */
	int64_t rows; /* the second's rows of the level */
	struct nx_err err; /* the second's failure */
};

/* Test hook (nx__lod_levels_test_hook). */
static atomic_int hook_wait_join;
static atomic_int hook_fail_level;

/* The first thread's view of a level it may share: the level below is the table's rows
 * [at, at + below) (in k order); offered: the second took the buckets from k0 on. */
struct level_share {
	struct nx_lod_levels_two *two;
	int64_t at, below, slice, k0;
	bool offered;
};

/* Whether the second thread waits for work (with the test hook, the first waits for it
 * to join or leave first). */
static bool second_waits(struct nx_lod_levels_two *t)
{
	bool ready;

	pthread_mutex_lock(&t->lock);
	while (atomic_load(&hook_wait_join) && !t->joined && !t->gone)
		pthread_cond_wait(&t->cond, &t->lock);
	ready = t->joined && !t->gone && !t->ended && !t->level;
	pthread_mutex_unlock(&t->lock);
	return ready;
}

/* Before the first thread reads the slice of the level below from bucket k0 on (`from`
 * its rows): when the second waits for work and the rest of the level below holds
 * min_rows rows or more, the rest is cut at the first bucket of a parent at or after the
 * one of the rest's median row, and the buckets from there on are offered to the second.
 * Returns where the first's part ends (INT64_MAX: no cut; a query that fails here only
 * means no cut). */
static int64_t offer(struct nx_duck *d, struct bucket *b, struct level_share *sh,
		     const char *from, int64_t k0)
{
	struct nx_lod_levels_two *t = sh ? sh->two : NULL;
	struct nx_err ignored = { 0 };
	int64_t done = 0, k = 0;
	char *sql;
	int rc = 0;

	if (!t || sh->offered || sh->below < t->min_rows || sh->below < 2 ||
	    (atomic_load(&hook_wait_join) == 2 && k0 == INT64_MIN) || !second_waits(t))
		return INT64_MAX;
	if (k0 != INT64_MIN) {
		sql = nx_xasprintf("SELECT count(*) FROM %s AND k < %" PRId64, from, k0);
		rc = nx_duck_query_i64(d, sql, &done, &ignored);
		free(sql);
	}
	if (rc || sh->below - done < t->min_rows || sh->below - done < 2)
		return INT64_MAX;
	sql = nx_xasprintf("SELECT k FROM tl.lod%d WHERE rowid = %" PRId64, b->src,
			   sh->at + done + (sh->below - done) / 2);
	rc = nx_duck_query_i64(d, sql, &k, &ignored);
	free(sql);
	if (rc)
		return INT64_MAX;
	sh->offered = true;
	sh->k0 = parent_start(k);
	pthread_mutex_lock(&t->lock);
	t->src = b->src;
	t->level = b->level;
	t->k0 = sh->k0;
	t->slice = sh->slice;
	t->first = t->second = 0;
	t->rows = 0;
	pthread_cond_broadcast(&t->cond);
	pthread_mutex_unlock(&t->lock);
	return sh->k0;
}

/* The first thread, its part of the level offered in the table (rc its outcome): waits
 * for the second's; *rows gets the second's rows. */
static int offer_end(struct level_share *sh, const struct bucket *b, int rc, int64_t *rows,
		     struct nx_err *err)
{
	struct nx_lod_levels_two *t = sh->two;

	pthread_mutex_lock(&t->lock);
	t->first = rc ? -1 : 1;
	pthread_cond_broadcast(&t->cond);
	while (!t->second)
		pthread_cond_wait(&t->cond, &t->lock);
	*rows = t->rows;
	if (!rc && t->second == -1)
		rc = nx_errf(err, t->err.code ? t->err.code : NX_EDB,
			     "level %d of tl.lod%d (%s), the second thread's part: %s", b->level,
			     b->src, nx__lod_sources[b->src].table, t->err.msg);
	t->level = 0;
	pthread_mutex_unlock(&t->lock);
	return rc;
}

/* The slices of level b->level (build_level): the level below, `from` (a table and its
 * filter), in slices of about chunk input rows cut between parent buckets; with sh, the
 * rest of the level may be offered to the second thread before each slice (offer), and
 * this thread's slices end where its part does. */
static int build_slices(struct nx_duck *d, struct bucket *b, const char *from, int64_t chunk,
			struct level_share *sh, struct nx_err *err)
{
	static const char *const what[3] = { "count(*)", "min(k)", "max(k)" };
	int64_t v[3] = { 0, 0, 0 }, n, width, k0 = INT64_MIN, end;
	int rc = 0;

	for (int i = 0; i < 3 && !rc && (i == 0 || v[0] > chunk); i++) {
		char *sql = nx_xasprintf("SELECT %s FROM %s", what[i], from);

		rc = nx_duck_query_i64(d, sql, &v[i], err);
		free(sql);
	}
	if (rc)
		return rc;
	end = offer(d, b, sh, from, INT64_MIN);
	if (v[0] <= chunk || v[2] <= v[1])
		return build_slice(d, b, from, INT64_MIN, end, err);
	n = (v[0] + chunk - 1) / chunk;
	width = (v[2] - v[1]) / n + 1;
	for (int64_t i = 1; i < n && !rc; i++) {
		int64_t k1 = parent_start(v[1] + i * width);

		if (k1 <= k0 || k1 > v[2])
			continue;
		if (k1 >= end)
			break;
		rc = build_slice(d, b, from, k0, k1, err);
		k0 = k1;
		if (!rc && end == INT64_MAX)
			end = offer(d, b, sh, from, k0);
	}
	return rc ? rc : build_slice(d, b, from, k0, end, err);
}

/* Level b->level from the level below, the rows of `from` (a table and its filter, in the
 * cache), in slices (build_slices), so that what is kept at once is one slice's rows
 * rather than the whole level (5.3M rows at 100M records, which filled DuckDB's pool when
 * they were staged in it). The rows go into the cache in the same order as in one piece,
 * so their row ids are the same; all of them are in the table when it returns 0 (with
 * sh, the second thread's part too, committed after this thread's). */
static int build_level(struct nx_duck *d, struct bucket *b, const char *from, int64_t chunk,
		       struct level_share *sh, struct nx_err *err)
{
	int64_t second = 0;
	int rc;

	b->seen = 0;
	rc = build_slices(d, b, from, chunk, sh, err);
	if (!rc)
		rc = nx_duck_appender_close(b->app, err);
	else
		nx_duck_appender_close(b->app, &(struct nx_err){ 0 });
	b->app = NULL;
	if (sh && sh->offered) {
		rc = offer_end(sh, b, rc, &second, err);
		b->table_rows += (uint64_t)second;
	}
	return rc;
}

void nx__lod_levels_test_hook(int wait_join, int fail_level)
{
	atomic_store(&hook_wait_join, wait_join);
	atomic_store(&hook_fail_level, fail_level);
}

struct nx_lod_levels_two *nx__lod_levels_two_new(int64_t min_rows)
{
	struct nx_lod_levels_two *t = nx_xcalloc(1, sizeof(*t));

	pthread_mutex_init(&t->lock, NULL);
	pthread_cond_init(&t->cond, NULL);
	t->min_rows = min_rows;
	return t;
}

void nx__lod_levels_two_free(struct nx_lod_levels_two *t)
{
	if (!t)
		return;
	pthread_mutex_destroy(&t->lock);
	pthread_cond_destroy(&t->cond);
	free(t);
}

void nx__lod_levels_two_end(struct nx_lod_levels_two *t)
{
	if (!t)
		return;
	pthread_mutex_lock(&t->lock);
	t->ended = true;
	pthread_cond_broadcast(&t->cond);
	pthread_mutex_unlock(&t->lock);
}

static void bucket_release(struct bucket *b)
{
	free(b->rows);
	free(b->out);
	nx_strbuf_release(&b->arena);
	nx_strbuf_release(&b->out_arena);
}

/* The second thread's part of the level offered: its rows appended in a transaction of
 * the appenders' connection, committed once the first's part of the level has (so that
 * they come after its rows), rolled back when either failed. */
static int second_part(struct nx_duck *d, struct nx_lod_levels_two *t, int src, int level,
		       int64_t k0, int64_t slice, struct nx_err *err)
{
	struct bucket b = { .src = src, .level = level, .arena = NX_STRBUF_INIT,
			    .out_arena = NX_STRBUF_INIT };
	char *from = nx_xasprintf("tl.lod%d WHERE level = %d AND k >= %" PRId64, src, level - 1,
				  k0);
	int rc = nx_duck_appends_exec(d, "BEGIN TRANSACTION", err), first;

	if (!rc && atomic_load(&hook_fail_level) == level)
		rc = nx_errf(err, NX_EDB, "a test's failure of level %d", level);
	if (!rc)
		rc = build_level(d, &b, from, slice, NULL, err);
	pthread_mutex_lock(&t->lock);
	while (!t->first)
		pthread_cond_wait(&t->cond, &t->lock);
	first = t->first;
	pthread_mutex_unlock(&t->lock);
	if (!rc && first == 1)
		rc = nx_duck_appends_exec(d, "COMMIT", err);
	else
		nx_duck_appends_exec(d, "ROLLBACK", &(struct nx_err){ 0 });
	pthread_mutex_lock(&t->lock);
	t->rows = (int64_t)b.table_rows;
	t->second = rc ? -1 : first == 1 ? 1 : -2;
	if (rc)
		t->err = *err;
	pthread_cond_broadcast(&t->cond);
	pthread_mutex_unlock(&t->lock);
	bucket_release(&b);
	free(from);
	return rc;
}

int nx__lod_levels_second(struct nx_duck *d, struct nx_lod_levels_two *t, bool gone,
			  int levels[2])
{
	int done = 0, parts = 0;

	if (!t)
		return 0;
	pthread_mutex_lock(&t->lock);
	t->gone = gone;
	t->joined = !gone;
	pthread_cond_broadcast(&t->cond);
	while (!gone) {
		int src, level;
		int64_t k0, slice;

		while (!t->ended && (!t->level || t->level == done))
			pthread_cond_wait(&t->cond, &t->lock);
		if (t->ended)
			break;
		src = t->src;
		done = level = t->level;
		k0 = t->k0;
		slice = t->slice;
		pthread_mutex_unlock(&t->lock);
		/* a failure is the first thread's to report, naming the level */
		gone = second_part(d, t, src, level, k0, slice, &(struct nx_err){ 0 }) != 0;
		if (!parts++)
			levels[0] = level;
		levels[1] = level;
		pthread_mutex_lock(&t->lock);
		if (gone)
			t->gone = true;
	}
	pthread_mutex_unlock(&t->lock);
	return parts;
}

int nx__lod_levels_up(struct nx_duck *d, int src, int lo, int hi, int64_t chunk,
		      struct nx_err *err)
{
	return nx__lod_levels_up_two(d, src, lo, hi, chunk, NULL, err);
}

int nx__lod_levels_up_two(struct nx_duck *d, int src, int lo, int hi, int64_t chunk,
			  struct nx_lod_levels_two *two, struct nx_err *err)
{
	struct bucket b = { .ctr = src < 0, .src = src, .arena = NX_STRBUF_INIT,
			    .out_arena = NX_STRBUF_INIT };
	/* a slice's rows are kept in C until its read ends: an eighth of the bound's input
	 * rows, so that they hold at most about chunk / 8 rows (11 MB at 500K) */
	int64_t slice = chunk / LEVEL_SLICE_DIV > 0 ? chunk / LEVEL_SLICE_DIV : 1, rows = 0;
	int64_t below;
	int rc = 0;

	{ /* where the levels' rows start: their commits end on whole vectors */
		char *sql = b.ctr ? nx_xstrdup("SELECT count(*) FROM tl.ctr_lod")
				  : nx_xasprintf("SELECT count(*) FROM tl.lod%d", src);

		rc = nx_duck_query_i64(d, sql, &rows, err);
		b.table_rows = (uint64_t)rows;
		free(sql);
	}
	/* the table holds the level below only: it is its rows */
	below = rows;
	for (int l = lo + 1; l <= hi && !rc; l++) {
		char *from = src < 0 ? nx_xasprintf("tl.ctr_lod WHERE level = %d", l - 1)
				     : nx_xasprintf("tl.lod%d WHERE level = %d", src, l - 1);
		uint64_t before = b.table_rows;
		struct level_share sh = { .two = src >= 0 ? two : NULL,
					  .at = (int64_t)before - below, .below = below,
					  .slice = slice };

		b.level = l;
		rc = build_level(d, &b, from, slice, &sh, err);
		below = (int64_t)(b.table_rows - before);
		free(from);
	}
	bucket_release(&b);
	return rc;
}
