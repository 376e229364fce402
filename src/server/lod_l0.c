/* SPDX-License-Identifier: MIT
 * lod_l0.c: the finest level of an event source's pyramid, from its events (lod_levels.h).
 * The events are read slice by slice, in the time slices the grouping query would use
 * (nx__lod_slice_width; DuckDB's zone maps on start_ts read only the row groups of a
 * slice), each slice in the order tl.ev<s> (or the profile's table read in place) holds
 * it: in start order when it was sorted, nearly so in file order. A slice's rows are
 * folded into a hash table keyed by (bucket, core, track), whose groups are then sorted
 * by that key and appended to tl.lod<s>: the rows and row order of the grouping query,
 * bucket start_ts // 2^level truncated as DuckDB's, without its hash of strings and
 * HUGEINT keys. A slice's groups are also what lod_l0_pass.c folds the rows of the events
 * copy into. The rows come in (nearly) start order, so a (core, track) keeps adding to
 * the group of its latest bucket: a small table of the latest group per (core, track)
 * finds it without the probe of the whole slice's table, whose slots and groups miss the
 * CPU's caches (docs/memory.md, "Where the events part's CPU goes"). The groups of a
 * slice read in two halves (lod_l0_pass.c's split) merge into one slice as if its rows
 * had been folded in one. */
#include "common/compat.h"
#include "server/lod_levels.h"
#include "server/lod.h"
#include "common/strbuf.h"
#include "common/xalloc.h"
#include "db/duck.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#define NULL_LEN SIZE_MAX

/* Entries of a slice's table of the latest group per (core, track); a power of two. */
#define RECENT 256

/* One (bucket, core, track) of a slice: what the grouping query aggregates. The track
 * and the longest event's label are bytes of the slice's arena (len NULL_LEN: NULL). */
struct group {
	int64_t k, core;
	bool core_null;
	size_t track_off, track_len;
	const char *track_at; /* its bytes, once the slice is read (the arena moves) */
	uint64_t hash;
	int64_t count, first, last;
	__int128 busy; /* as DuckDB's sum, cast to BIGINT at the end */
	bool has_r; /* the longest event (id not NULL), then the lowest id */
	int64_t id, s, e;
	size_t label_off, label_len;
};

struct nx_lod_l0_slice {
	int src, level;
	const char *name; /* of the events read, for errors */
	struct group *g;
	size_t n, cap;
	uint32_t *slot; /* 1 + index into g; 0: free */
	size_t nslots;
	uint32_t recent[RECENT]; /* by track_hash: 1 + index of its latest group; 0: none */
	struct nx_strbuf arena;
};

static uint64_t mix(uint64_t h, uint64_t v)
{
	h ^= v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
	return h * 0xff51afd7ed558ccdull;
}

/* The hash of (core, track): the track's bytes eight at a time. */
static uint64_t track_hash(bool core_null, int64_t core, const char *t, size_t len)
{
	uint64_t h = mix(0x243f6a8885a308d3ull, core_null ? 1 : (uint64_t)core * 2), w;
	size_t i = 0;

	if (len == NULL_LEN)
		return mix(h, 0x5bd1e995);
	for (; i + 8 <= len; i += 8) {
		memcpy(&w, t + i, 8);
		h = mix(h, w);
	}
	w = 0;
	if (len > i)
		memcpy(&w, t + i, len - i);
	return mix(mix(h, w), len);
}

static void rehash(struct nx_lod_l0_slice *sl)
{
	size_t mask;

	free(sl->slot);
	sl->nslots = sl->nslots ? 2 * sl->nslots : 1024;
	sl->slot = nx_xcalloc(sl->nslots, sizeof(*sl->slot));
	mask = sl->nslots - 1;
	for (size_t i = 0; i < sl->n; i++) {
		size_t j = sl->g[i].hash & mask;

		while (sl->slot[j])
			j = (j + 1) & mask;
		sl->slot[j] = (uint32_t)(i + 1);
	}
}

static bool same_key(const struct nx_lod_l0_slice *sl, const struct group *g, uint64_t h,
		     int64_t k, bool core_null, int64_t core, const char *t, size_t len)
{
	return g->hash == h && g->k == k && g->core_null == core_null &&
	       (core_null || g->core == core) && g->track_len == len &&
	       (len == NULL_LEN || !memcmp(sl->arena.buf + g->track_off, t, len));
}

/* The group of (k, core, track), a new one when the slice has none yet. */
static struct group *group_of(struct nx_lod_l0_slice *sl, int64_t k, bool core_null, int64_t core,
			      const char *t, size_t len)
{
	uint64_t ht = track_hash(core_null, core, t, len), h = mix(ht, (uint64_t)k);
	uint32_t *recent = &sl->recent[ht & (RECENT - 1)];
	size_t mask, j;
	struct group *g;

	if (*recent && same_key(sl, &sl->g[*recent - 1], h, k, core_null, core, t, len))
		return &sl->g[*recent - 1];
	if (2 * (sl->n + 1) > sl->nslots)
		rehash(sl);
	mask = sl->nslots - 1;
	for (j = h & mask; sl->slot[j]; j = (j + 1) & mask) {
		if (same_key(sl, &sl->g[sl->slot[j] - 1], h, k, core_null, core, t, len)) {
			*recent = sl->slot[j];
			return &sl->g[sl->slot[j] - 1];
		}
	}
	if (sl->n == sl->cap) {
		sl->cap = sl->cap ? 2 * sl->cap : 1024;
		sl->g = nx_xrealloc(sl->g, sl->cap * sizeof(*sl->g));
	}
	sl->slot[j] = (uint32_t)(sl->n + 1);
	*recent = sl->slot[j];
	g = &sl->g[sl->n++];
	memset(g, 0, sizeof(*g));
	g->k = k;
	g->core_null = core_null;
	g->core = core_null ? 0 : core;
	g->hash = h;
	g->track_len = len;
	g->track_off = sl->arena.len;
	if (len != NULL_LEN)
		nx_strbuf_add(&sl->arena, t, len);
	g->first = INT64_MAX;
	g->last = INT64_MIN;
	return g;
}

/* One event into its group: row i of chunk c (its track and label read there), its
 * times, core and id given. */
static inline __attribute__((always_inline)) void
fold_event(struct nx_lod_l0_slice *sl, const struct nx_dchunk *c, size_t i,
		       int64_t s, int64_t e, bool core_null, int64_t core, bool has_id,
		       int64_t id)
{
	const char *t = NULL, *l = NULL;
	size_t tlen = 0, llen = 0;
	struct group *g;

	if (!nx_dchunk_str(c, 1, i, &t, &tlen))
		tlen = NULL_LEN;
	g = group_of(sl, s / ((int64_t)1 << sl->level), core_null, core, t, tlen);
	g->count++;
	g->busy += (__int128)e - s;
	if (s < g->first)
		g->first = s;
	if (e > g->last)
		g->last = e;
	if (has_id && nx__lod_longer(s, e, id, g->has_r, g->s, g->e, g->id)) {
		g->has_r = true;
		g->id = id;
		g->s = s;
		g->e = e;
		if (!nx_dchunk_str(c, 5, i, &l, &llen)) {
			g->label_len = NULL_LEN;
		} else {
			g->label_off = sl->arena.len;
			g->label_len = llen;
			nx_strbuf_add(&sl->arena, l, llen);
		}
	}
}

int nx__lod_l0_fold(struct nx_lod_l0_slice *sl, const struct nx_dchunk *c, size_t i,
		    struct nx_err *err)
{
	int64_t core = 0, id = 0, s, e;
	bool core_null, has_id;

	/* tl.ev<s> keeps only events with both times (NX_TL_IN_BOUNDS_SQL) */
	if (!nx_dchunk_i64(c, 3, i, &s) || !nx_dchunk_i64(c, 4, i, &e))
		return nx_errf(err, NX_EDB, "%s: an event without a start or an end", sl->name);
	core_null = !nx_dchunk_i64(c, 0, i, &core);
	has_id = nx_dchunk_i64(c, 2, i, &id);
	fold_event(sl, c, i, s, e, core_null, core, has_id, id);
	return 0;
}

int nx__lod_l0_cols_of(struct nx_lod_l0_cols *cols, const struct nx_dchunk *c, const int64_t **s,
		       const int64_t **e, const uint64_t **s_valid, const uint64_t **e_valid,
		       const char *name, struct nx_err *err)
{
	cols->c = c;
	cols->core = nx_dchunk_i64s(c, 0, &cols->core_valid);
	cols->id = nx_dchunk_i64s(c, 2, &cols->id_valid);
	*s = nx_dchunk_i64s(c, 3, s_valid);
	*e = nx_dchunk_i64s(c, 4, e_valid);
	if (!cols->core || !cols->id || !*s || !*e)
		return nx_errf(err, NX_EDB, "%s: the events' core, id, start_ts and end_ts are "
			       "not all BIGINT", name);
	return 0;
}

void nx__lod_l0_fold_cols(struct nx_lod_l0_slice *sl, const struct nx_lod_l0_cols *cols, size_t i,
			  int64_t s, int64_t e)
{
	bool core_null = !nx_dchunk_valid(cols->core_valid, i);
	bool has_id = nx_dchunk_valid(cols->id_valid, i);

	fold_event(sl, cols->c, i, s, e, core_null, core_null ? 0 : cols->core[i], has_id,
		   has_id ? cols->id[i] : 0);
}

static int take_chunk(void *arg, const struct nx_dchunk *c, struct nx_err *err)
{
	struct nx_lod_l0_slice *sl = arg;
	size_t rows = nx_dchunk_rows(c);
	int rc = 0;

	for (size_t i = 0; i < rows && !rc; i++)
		rc = nx__lod_l0_fold(sl, c, i, err);
	return rc;
}

/* The order of ORDER BY k, core, track: tracks by their bytes, then their length; NULL
 * last. */
static int group_order(const void *pa, const void *pb)
{
	const struct group *a = pa, *b = pb;
	size_t n;
	int c;

	if (a->k != b->k)
		return a->k < b->k ? -1 : 1;
	if (a->core_null != b->core_null)
		return a->core_null ? 1 : -1;
	if (a->core != b->core)
		return a->core < b->core ? -1 : 1;
	if (a->track_len == NULL_LEN || b->track_len == NULL_LEN)
		return (a->track_len == NULL_LEN) - (b->track_len == NULL_LEN);
	n = a->track_len < b->track_len ? a->track_len : b->track_len;
	c = n ? memcmp(a->track_at, b->track_at, n) : 0;
	if (c)
		return c;
	return (a->track_len > b->track_len) - (a->track_len < b->track_len);
}

static void append_bytes(struct nx_duck_appender *a, const char *base, size_t off, size_t len)
{
	nx_duck_append_str(a, len == NULL_LEN ? NULL : base + off, len == NULL_LEN ? 0 : len);
}

void nx__lod_l0_merge(struct nx_lod_l0_slice *to, const struct nx_lod_l0_slice *from)
{
	for (size_t i = 0; i < from->n; i++) {
		const struct group *f = &from->g[i];
		const char *t = f->track_len == NULL_LEN ? NULL : from->arena.buf + f->track_off;
		struct group *g = group_of(to, f->k, f->core_null, f->core, t, f->track_len);

		g->count += f->count;
		g->busy += f->busy;
		if (f->first < g->first)
			g->first = f->first;
		if (f->last > g->last)
			g->last = f->last;
		/* the fold's rule whichever half read it; of equals, to's (the rows read
		 * first) stays */
		if (f->has_r && nx__lod_longer(f->s, f->e, f->id, g->has_r, g->s, g->e, g->id)) {
			g->has_r = true;
			g->id = f->id;
			g->s = f->s;
			g->e = f->e;
			g->label_len = f->label_len;
			if (f->label_len != NULL_LEN) {
				g->label_off = to->arena.len;
				nx_strbuf_add(&to->arena, from->arena.buf + f->label_off,
					      f->label_len);
			}
		}
	}
}

int nx__lod_l0_flush_to(struct nx_lod_l0_slice *sl, struct nx_duck *d, const char *to,
			struct nx_duck_appender **app, int64_t *rows, struct nx_err *err)
{
	struct nx_duck_appender *a = *app;
	const char *base = sl->arena.buf;
	int rc = 0;

	for (size_t i = 0; i < sl->n; i++)
		sl->g[i].track_at = base + sl->g[i].track_off;
	if (sl->n) /* an empty slice of the pass may have no groups at all yet */
		qsort(sl->g, sl->n, sizeof(*sl->g), group_order);
	if (sl->n && !a) {
		char *table = to ? nx_xstrdup(to) : nx_xasprintf("tl.lod%d", sl->src);

		rc = nx_duck_appender_open_typed(d, table, nx__lod_row_kinds,
						 NX_LOD_ROW_COLUMNS, app, err);
		free(table);
		if (rc)
			return rc;
		a = *app; /* the table is empty: its commits end on whole vectors */
	}
	for (size_t i = 0; i < sl->n && !rc; i++) {
		const struct group *g = &sl->g[i];

		if (g->busy > INT64_MAX || g->busy < INT64_MIN) {
			rc = nx_errf(err, NX_EDB, "level %d of tl.ev%d's pyramid: the busy time of "
				     "bucket %" PRId64 " overflows", sl->level, sl->src, g->k);
			break;
		}
		nx_duck_append_i64(a, sl->level);
		nx_duck_append_i64(a, g->k);
		if (g->core_null)
			nx_duck_append_null(a);
		else
			nx_duck_append_i64(a, g->core);
		append_bytes(a, base, g->track_off, g->track_len);
		nx_duck_append_i64(a, g->count);
		nx_duck_append_i64(a, (int64_t)g->busy);
		nx_duck_append_i64(a, g->first);
		nx_duck_append_i64(a, g->last);
		if (g->has_r) {
			nx_duck_append_i64(a, g->id);
			nx_duck_append_i64(a, g->s);
			nx_duck_append_i64(a, g->e);
			append_bytes(a, base, g->label_off, g->label_len);
		} else {
			for (int c = 0; c < 4; c++)
				nx_duck_append_null(a);
		}
		rc = nx_duck_append_end_row(a, err);
	}
	if (sl->n && !rc)
		rc = nx_duck_appender_commit(a, err);
	*rows += rc ? 0 : (int64_t)sl->n;
	sl->n = 0;
	memset(sl->slot, 0, sl->nslots * sizeof(*sl->slot));
	memset(sl->recent, 0, sizeof(sl->recent));
	nx_strbuf_reset(&sl->arena);
	return rc;
}

size_t nx__lod_l0_count(const struct nx_lod_l0_slice *sl)
{
	return sl->n;
}

struct nx_lod_l0_slice *nx__lod_l0_slice_new(int src, int level, const char *name)
{
	struct nx_lod_l0_slice *sl = nx_xcalloc(1, sizeof(*sl));

	sl->src = src;
	sl->level = level;
	sl->name = name;
	nx_strbuf_init(&sl->arena);
	rehash(sl);
	return sl;
}

void nx__lod_l0_slice_free(struct nx_lod_l0_slice *sl)
{
	if (!sl)
		return;
	nx_strbuf_release(&sl->arena);
	free(sl->g);
	free(sl->slot);
	free(sl);
}

int nx__lod_l0(struct nx_duck *d, int src, const char *from, const char *name, int level,
	       int64_t first, int64_t last, int64_t n, int64_t chunk, int64_t *rows,
	       struct nx_err *err)
{
	struct nx_lod_l0_slice sl = { .src = src, .level = level, .name = name,
				      .arena = NX_STRBUF_INIT };
	int64_t w = nx__lod_slice_width(level, first, last, n, chunk);
	struct nx_strbuf sql = NX_STRBUF_INIT;
	struct nx_duck_appender *app = NULL;
	int rc = 0;

	*rows = 0;
	if (level < 0 || level > 62)
		return nx_errf(err, NX_EUSAGE, "%s: no pyramid level %d", name, level);
	rehash(&sl);
	for (int64_t c = w == INT64_MAX ? 0 : nx__lod_floor_div(first, w);
	     !rc && (w == INT64_MAX ? c == 0 : c <= nx__lod_floor_div(last, w)); c++) {
		nx_strbuf_reset(&sql);
		/* tl.ev<s> may hold its text columns as ENUMs (lod_build.c) */
		nx_strbuf_addf(&sql, "SELECT core, track::VARCHAR, id, start_ts, end_ts, "
				     "label::VARCHAR FROM %s", from);
		if (w != INT64_MAX)
			nx_strbuf_addf(&sql, " WHERE start_ts >= %" PRId64
					     " AND start_ts < %" PRId64, c * w, (c + 1) * w);
		rc = nx_duck_scan(d, sql.buf, take_chunk, &sl, err);
		if (!rc)
			rc = nx__lod_l0_flush_to(&sl, d, NULL, &app, rows, err);
	}
	if (!rc)
		rc = nx_duck_appender_close(app, err);
	else
		nx_duck_appender_close(app, &(struct nx_err){ 0 });
	nx_strbuf_release(&sql);
	nx_strbuf_release(&sl.arena);
	free(sl.g);
	free(sl.slot);
	return rc;
}
