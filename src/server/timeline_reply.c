/* SPDX-License-Identifier: MIT
 * timeline_reply.c: turns the rows of a timeline window query (timeline.h: core, track,
 * bins, id, s, e, label, cnt, busy, lst, in any order) into the reply's columnar tracks,
 * {"core":..,"track":..,"mode":"raw"|"bins","n":..,"id":[..],"start":[..],"end":[..],
 * "label":[..]} with "count", "busy" and "last" for buckets. Rows are grouped by track
 * here, so the queries need no ORDER BY; within a track they keep the query's order.
 * Labels are indices into the reply's "labels" array, so a label repeated over
 * thousands of events is sent once. */
#include "common/compat.h"
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
/* the reply's arrays: id, start, end, label, then count, busy, last for buckets */
static const char *const arr_name[NX_TL_NARR] = { "id",	   "start", "end", "label",
						  "count", "busy",  "last" };

void nx__tl_reply_init(struct nx__tl_reply *r, struct nx_strbuf *out, uint64_t max_bytes)
{
	memset(r, 0, sizeof(*r));
	r->out = out;
	r->max_bytes = max_bytes;
	nx_strmap_init(&r->labels, sizeof(uint32_t));
	nx_strmap_init(&r->index, sizeof(size_t));
}

static void drop_tracks(struct nx__tl_reply *r)
{
	for (size_t i = 0; i < r->ntracks; i++) {
		for (size_t j = 0; j < NX_TL_NARR; j++)
			nx_strbuf_release(&r->tracks[i].arr[j]);
		free(r->tracks[i].track);
	}
	r->ntracks = 0;
	r->bytes = 0;
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

static bool valid(duckdb_vector v, idx_t row)
{
	uint64_t *m = duckdb_vector_get_validity(v);

	return !m || duckdb_validity_row_is_valid(m, row);
}

/* Appends v in decimal: printf is most of the cost of a reply otherwise. */
static void put_i64(struct nx_strbuf *sb, int64_t v)
{
	char buf[24], *p = buf + sizeof(buf);
	uint64_t u = v < 0 ? 0 - (uint64_t)v : (uint64_t)v;

	do {
		*--p = (char)('0' + u % 10);
		u /= 10;
	} while (u);
	if (v < 0)
		*--p = '-';
	nx_strbuf_add(sb, p, (size_t)(buf + sizeof(buf) - p));
}

static void add_int(struct nx_strbuf *sb, size_t n, duckdb_vector v, idx_t row)
{
	if (n)
		nx_strbuf_addch(sb, ',');
	if (valid(v, row))
		put_i64(sb, ((int64_t *)duckdb_vector_get_data(v))[row]);
	else
		nx_strbuf_addstr(sb, "null");
}

static void add_label(struct nx__tl_reply *r, struct nx_strbuf *sb, size_t n, duckdb_vector v,
		      idx_t row)
{
	duckdb_string_t *s;
	uint32_t *ix;
	bool added;

	if (n)
		nx_strbuf_addch(sb, ',');
	if (!valid(v, row)) {
		nx_strbuf_addstr(sb, "null");
		return;
	}
	s = &((duckdb_string_t *)duckdb_vector_get_data(v))[row];
	ix = nx_strmap_get(&r->labels, duckdb_string_t_data(s), duckdb_string_t_length(*s), &added);
	if (added) {
		*ix = (uint32_t)r->nlabels++;
		if (*ix)
			nx_strbuf_addch(&r->names, ',');
		nx_json_quote(&r->names, duckdb_string_t_data(s), duckdb_string_t_length(*s));
	}
	put_i64(sb, *ix);
}

/* The track of row `row`, added when new. */
static struct nx__tl_track *track_of(struct nx__tl_reply *r, duckdb_vector *v, idx_t row)
{
	bool cv = valid(v[C_CORE], row), tv = valid(v[C_TRACK], row);
	int64_t core = cv ? ((int64_t *)duckdb_vector_get_data(v[C_CORE]))[row] : 0;
	duckdb_string_t *s = &((duckdb_string_t *)duckdb_vector_get_data(v[C_TRACK]))[row];
	struct nx__tl_track *t;
	size_t *ix;
	bool added;

	/* "<core>|<track>", "-|<track>" without a core; no track: nothing after '|' but '-' */
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
	t->bins = valid(v[C_BINS], row) && ((bool *)duckdb_vector_get_data(v[C_BINS]))[row];
	return t;
}

int nx__tl_reply_chunk(void *arg, duckdb_data_chunk chunk, struct nx_err *err)
{
	struct nx__tl_reply *r = arg;
	duckdb_vector v[NCOL];
	idx_t size = duckdb_data_chunk_get_size(chunk);
	size_t before = 0, after = 0;

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
	for (idx_t row = 0; row < size; row++) {
		struct nx__tl_track *t = track_of(r, v, row);

		for (size_t j = 0; j < NX_TL_NARR; j++)
			before += t->arr[j].len;
		add_int(&t->arr[0], t->n, v[C_ID], row);
		add_int(&t->arr[1], t->n, v[C_S], row);
		add_int(&t->arr[2], t->n, v[C_E], row);
		add_label(r, &t->arr[3], t->n, v[C_LABEL], row);
		if (t->bins) {
			add_int(&t->arr[4], t->n, v[C_CNT], row);
			add_int(&t->arr[5], t->n, v[C_BUSY], row);
			add_int(&t->arr[6], t->n, v[C_LST], row);
		}
		for (size_t j = 0; j < NX_TL_NARR; j++)
			after += t->arr[j].len;
		t->n++;
	}
	r->bytes += after - before;
	if (r->out->len + r->bytes > r->max_bytes)
		return nx_errf(err, -E2BIG, "the timeline reply exceeds %llu bytes",
			       (unsigned long long)r->max_bytes);
	return 0;
}

void nx__tl_reply_begin_source(struct nx__tl_reply *r)
{
	drop_tracks(r);
}

int nx__tl_reply_end_source(struct nx__tl_reply *r, struct nx_err *err)
{
	struct nx_strbuf *o = r->out;

	nx_strbuf_addstr(o, "\"tracks\":[");
	for (size_t i = 0; i < r->ntracks; i++) {
		struct nx__tl_track *t = &r->tracks[i];

		nx_strbuf_addstr(o, i ? ",{\"core\":" : "{\"core\":");
		if (t->core_null)
			nx_strbuf_addstr(o, "null");
		else
			put_i64(o, t->core);
		nx_strbuf_addstr(o, ",\"track\":");
		if (t->track)
			nx_json_quote(o, t->track, strlen(t->track));
		else
			nx_strbuf_addstr(o, "null");
		nx_strbuf_addf(o, ",\"mode\":\"%s\",\"n\":%zu", t->bins ? "bins" : "raw", t->n);
		for (size_t j = 0; j < (t->bins ? NX_TL_NARR : 4u); j++) {
			nx_strbuf_addf(o, ",\"%s\":[", arr_name[j]);
			nx_strbuf_add(o, t->arr[j].buf ? t->arr[j].buf : "", t->arr[j].len);
			nx_strbuf_addch(o, ']');
		}
		nx_strbuf_addch(o, '}');
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
