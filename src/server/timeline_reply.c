/* SPDX-License-Identifier: MIT
 * timeline_reply.c: turns the rows of a timeline window query (timeline.h: core, track,
 * bins, id, s, e, label, cnt, busy, lst, in any order) into the reply's columnar tracks,
 * {"core":..,"track":..,"mode":"raw"|"bins","n":..,"id":[..],"start":[..],"end":[..],
 * "label":[..]} with "count", "busy" and "last" for buckets. Rows are grouped by track
 * here, so the queries need no ORDER BY. A source's raw rows can come with a bucket
 * width: a track with more than raw_limit of them is then bucketed here, exactly as the
 * SQL of the pyramid does it (per bucket of the start: the longest event, ties to the
 * lowest id, the count, the summed durations and the last end), so a window needs one
 * query. Labels are indices into the reply's "labels" array, so a label repeated over
 * thousands of events is sent once. */
#include "common/compat.h"
#include "server/duck_vec.h"
#include "server/timeline.h"
#include "common/json_writer.h"
#include "common/xalloc.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { C_CORE, C_TRACK, C_BINS, C_ID, C_S, C_E, C_LABEL, C_CNT, C_BUSY, C_LST, NCOL };
static const duckdb_type col_type[NCOL] = {
	DUCKDB_TYPE_BIGINT, DUCKDB_TYPE_VARCHAR, DUCKDB_TYPE_BOOLEAN, DUCKDB_TYPE_BIGINT,
	DUCKDB_TYPE_BIGINT, DUCKDB_TYPE_BIGINT,	 DUCKDB_TYPE_VARCHAR, DUCKDB_TYPE_BIGINT,
	DUCKDB_TYPE_BIGINT, DUCKDB_TYPE_BIGINT,
};
#define NONE INT64_MIN /* a NULL value */
/* the fields of a row, in the reply's order of arrays */
enum { F_ID, F_S, F_E, F_LABEL, F_CNT, F_BUSY, F_LST };

void nx__tl_reply_init(struct nx__tl_reply *r, struct nx_strbuf *out, uint64_t max_bytes,
		       int64_t t0)
{
	memset(r, 0, sizeof(*r));
	r->out = out;
	r->t0 = t0;
	r->max_bytes = max_bytes;
	nx_strmap_init(&r->labels, sizeof(uint32_t));
	nx_strmap_init(&r->index, sizeof(size_t));
}

static void drop_tracks(struct nx__tl_reply *r)
{
	for (size_t i = 0; i < r->ntracks; i++) {
		free(r->tracks[i].v);
		free(r->tracks[i].track);
	}
	r->ntracks = 0;
	r->rows = 0;
	nx_strmap_clear(&r->index);
}

void nx__tl_reply_release(struct nx__tl_reply *r)
{
	drop_tracks(r);
	free(r->tracks);
	nx_strmap_release(&r->labels);
	nx_strmap_release(&r->index);
	nx_strbuf_release(&r->names);
	nx_strbuf_release(&r->key);
}

static int64_t get_i64(duckdb_vector v, idx_t row)
{
	return nx__vec_valid(v, row) ? ((int64_t *)duckdb_vector_get_data(v))[row] : NONE;
}

/* Appends v in decimal (printf would be most of a reply's cost), or null for NONE. */
static void put_i64(struct nx_strbuf *sb, int64_t v)
{
	if (v == NONE)
		nx_strbuf_addstr(sb, "null");
	else
		nx_strbuf_addi64(sb, v);
}

void nx__tl_put_time(struct nx_strbuf *sb, int64_t v)
{
	const int64_t safe = (int64_t)1 << 53;

	if (v >= -safe && v <= safe) {
		nx_strbuf_addi64(sb, v);
		return;
	}
	nx_strbuf_addch(sb, '"');
	nx_strbuf_addi64(sb, v);
	nx_strbuf_addch(sb, '"');
}

void nx__tl_put_window(struct nx_strbuf *sb, int64_t t0, int64_t t1)
{
	nx_strbuf_addstr(sb, "{\"t0\":");
	nx__tl_put_time(sb, t0);
	nx_strbuf_addstr(sb, ",\"t1\":");
	nx__tl_put_time(sb, t1);
}

/* The label's index in the reply's dictionary, added when new; NONE for NULL. */
static int64_t label_index(struct nx__tl_reply *r, duckdb_vector v, idx_t row)
{
	duckdb_string_t *s;
	uint32_t *ix;
	bool added;

	if (!nx__vec_valid(v, row))
		return NONE;
	s = &((duckdb_string_t *)duckdb_vector_get_data(v))[row];
	ix = nx_strmap_get(&r->labels, duckdb_string_t_data(s), duckdb_string_t_length(*s), &added);
	if (added) {
		*ix = (uint32_t)r->nlabels++;
		if (*ix)
			nx_strbuf_addch(&r->names, ',');
		nx_json_quote(&r->names, duckdb_string_t_data(s), duckdb_string_t_length(*s));
	}
	return *ix;
}

/* The track of row `row`, added when new. */
static struct nx__tl_track *track_of(struct nx__tl_reply *r, duckdb_vector *v, idx_t row)
{
	bool cv = nx__vec_valid(v[C_CORE], row), tv = nx__vec_valid(v[C_TRACK], row);
	int64_t core = cv ? ((int64_t *)duckdb_vector_get_data(v[C_CORE]))[row] : 0;
	duckdb_string_t *s = &((duckdb_string_t *)duckdb_vector_get_data(v[C_TRACK]))[row];
	struct nx__tl_track *t;
	size_t *ix;
	bool added;

	/* "<core>|<track>", "-|<track>" without a core; without a track '-' for '|' */
	nx_strbuf_reset(&r->key);
	if (cv)
		put_i64(&r->key, core);
	else
		nx_strbuf_addch(&r->key, '-');
	nx_strbuf_addch(&r->key, tv ? '|' : '-');
	if (tv)
		nx_strbuf_add(&r->key, duckdb_string_t_data(s), duckdb_string_t_length(*s));
	ix = nx_strmap_get(&r->index, r->key.buf, r->key.len, &added);
	if (!added)
		return &r->tracks[*ix];
	*ix = r->ntracks;
	NX_GROW(r->tracks, r->ntracks + 1, r->cap);
	t = &r->tracks[r->ntracks++];
	memset(t, 0, sizeof(*t));
	t->core_null = !cv;
	t->core = core;
	t->track = tv ? nx_xstrndup(duckdb_string_t_data(s), duckdb_string_t_length(*s)) : NULL;
	t->bins = nx__vec_valid(v[C_BINS], row) && ((bool *)duckdb_vector_get_data(v[C_BINS]))[row];
	return t;
}

/* end - start of a row's fields (saturated: a profile's times can be anything), or
 * NONE when either is NULL. */
static int64_t duration(const int64_t *f)
{
	return f[F_S] == NONE || f[F_E] == NONE ? NONE : nx__tl_sub(f[F_E], f[F_S]);
}

int nx__tl_reply_chunk(void *arg, duckdb_data_chunk chunk, struct nx_err *err)
{
	struct nx__tl_reply *r = arg;
	duckdb_vector v[NCOL];
	idx_t size = duckdb_data_chunk_get_size(chunk);

	if (duckdb_data_chunk_get_column_count(chunk) != NCOL)
		return nx_errf(err, -EINVAL, "timeline query: %llu columns instead of %d",
			       (unsigned long long)duckdb_data_chunk_get_column_count(chunk), NCOL);
	for (idx_t c = 0; c < NCOL; c++) {
		duckdb_logical_type t;
		duckdb_type id;

		v[c] = duckdb_data_chunk_get_vector(chunk, c);
		t = duckdb_vector_get_column_type(v[c]);
		id = duckdb_get_type_id(t);
		duckdb_destroy_logical_type(&t);
		if (id != col_type[c])
			return nx_errf(err, -EINVAL, "timeline query: column %llu has type %d",
				       (unsigned long long)c, (int)id);
	}
	r->rows += size;
	if (r->max_rows && r->rows > r->max_rows)
		return nx_errf(err, -E2BIG, "more than %llu rows in the window",
			       (unsigned long long)r->max_rows);
	for (idx_t row = 0; row < size; row++) {
		struct nx__tl_track *t = track_of(r, v, row);
		struct nx__tl_row *e;

		NX_GROW(t->v, t->n + 1, t->cap);
		e = &t->v[t->n++];
		e->f[F_ID] = get_i64(v[C_ID], row);
		e->f[F_S] = get_i64(v[C_S], row);
		e->f[F_E] = get_i64(v[C_E], row);
		e->f[F_LABEL] = label_index(r, v[C_LABEL], row);
		e->f[F_CNT] = t->bins ? get_i64(v[C_CNT], row) : 1;
		e->f[F_BUSY] = t->bins ? get_i64(v[C_BUSY], row) : duration(e->f);
		e->f[F_LST] = t->bins ? get_i64(v[C_LST], row) : e->f[F_E];
	}
	return 0;
}

void nx__tl_reply_begin_source(struct nx__tl_reply *r, int64_t bucket, int64_t raw_limit,
			       uint64_t max_rows)
{
	drop_tracks(r);
	r->bucket = bucket;
	r->raw_limit = raw_limit;
	r->max_rows = max_rows;
}

static int64_t floor_div(int64_t a, int64_t b)
{
	return a / b - (a % b != 0 && (a < 0) != (b < 0));
}

static int by_start(const void *a, const void *b)
{
	const int64_t *x = ((const struct nx__tl_row *)a)->f, *y = ((const struct nx__tl_row *)b)->f;

	if (x[F_S] != y[F_S])
		return x[F_S] < y[F_S] ? -1 : 1;
	return x[F_ID] < y[F_ID] ? -1 : x[F_ID] > y[F_ID];
}

/* Buckets the raw rows of t in place: per bucket of the start, the longest event (ties:
 * the lowest id) with the bucket's count, busy time and last end. */
static void bin_track(struct nx__tl_track *t, int64_t bucket)
{
	size_t out = 0;

	qsort(t->v, t->n, sizeof(*t->v), by_start);
	for (size_t i = 0; i < t->n;) {
		int64_t k = floor_div(t->v[i].f[F_S], bucket);
		struct nx__tl_row b = t->v[i];

		for (i++; i < t->n && floor_div(t->v[i].f[F_S], bucket) == k; i++) {
			const int64_t *e = t->v[i].f;
			int64_t d = duration(e), bd = duration(b.f);

			if (d > bd || (d == bd && e[F_ID] < b.f[F_ID])) {
				b.f[F_ID] = e[F_ID];
				b.f[F_S] = e[F_S];
				b.f[F_E] = e[F_E];
				b.f[F_LABEL] = e[F_LABEL];
			}
			b.f[F_CNT] = nx__tl_add(b.f[F_CNT], e[F_CNT]);
			if (b.f[F_BUSY] != NONE && e[F_BUSY] != NONE)
				b.f[F_BUSY] = nx__tl_add(b.f[F_BUSY], e[F_BUSY]);
			if (e[F_LST] > b.f[F_LST])
				b.f[F_LST] = e[F_LST];
		}
		t->v[out++] = b;
	}
	t->n = out;
	t->bins = true;
}

/* Array `field` of t; times as offsets from the reply's t0 and ends as durations, so
 * the numbers are short. */
static void put_arr(struct nx__tl_reply *r, const char *name, const struct nx__tl_track *t,
		    size_t field)
{
	struct nx_strbuf *o = r->out;

	nx_strbuf_addf(o, ",\"%s\":[", name);
	for (size_t i = 0; i < t->n; i++) {
		const int64_t *f = t->v[i].f;
		int64_t v = f[field];

		if (i)
			nx_strbuf_addch(o, ',');
		if (v != NONE && (field == F_S || field == F_LST))
			v = nx__tl_sub(v, r->t0);
		else if (field == F_E)
			v = duration(f);
		put_i64(o, v);
	}
	nx_strbuf_addch(o, ']');
}

int nx__tl_reply_end_source(struct nx__tl_reply *r, struct nx_err *err)
{
	static const char *const names[] = { "id", "start", "dur", "label", "count", "busy", "last" };
	struct nx_strbuf *o = r->out;

	nx_strbuf_addstr(o, "\"tracks\":[");
	for (size_t i = 0; i < r->ntracks; i++) {
		struct nx__tl_track *t = &r->tracks[i];

		if (!t->bins && r->bucket && t->n > (size_t)r->raw_limit)
			bin_track(t, r->bucket);
		nx_strbuf_addstr(o, i ? ",{\"core\":" : "{\"core\":");
		put_i64(o, t->core_null ? NONE : t->core);
		nx_strbuf_addstr(o, ",\"track\":");
		if (t->track)
			nx_json_quote(o, t->track, strlen(t->track));
		else
			nx_strbuf_addstr(o, "null");
		nx_strbuf_addf(o, ",\"mode\":\"%s\",\"n\":%zu", t->bins ? "bins" : "raw", t->n);
		for (size_t f = 0; f < (t->bins ? 7u : 4u); f++)
			put_arr(r, names[f], t, f);
		nx_strbuf_addch(o, '}');
		if (o->len > r->max_bytes)
			break;
	}
	nx_strbuf_addch(o, ']');
	drop_tracks(r);
	if (o->len > r->max_bytes)
		return nx_errf(err, -E2BIG, "the timeline reply exceeds %llu bytes",
			       (unsigned long long)r->max_bytes);
	return 0;
}

void nx__tl_reply_labels(struct nx__tl_reply *r)
{
	nx_strbuf_addstr(r->out, "\"labels\":[");
	nx_strbuf_add(r->out, r->names.buf ? r->names.buf : "", r->names.len);
	nx_strbuf_addch(r->out, ']');
}
