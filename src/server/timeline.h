/* SPDX-License-Identifier: MIT
 * timeline.h: helpers shared by the timeline endpoints (h_timeline*.c). */
#ifndef NX_SERVER_TIMELINE_H
#define NX_SERVER_TIMELINE_H

#include "common/compat.h"
#include "common/strbuf.h"
#include "common/strmap.h"
#include "server/http.h"
#include "server/lod.h"

#include <duckdb.h>

struct nx_profile;
struct nx_lod;

/* Appends a time (profile ns) as JSON the way the API sends every integer: a number
 * within +-2^53, beyond that a string, so JavaScript keeps every digit (epoch times). */
void nx__tl_put_time(struct nx_strbuf *sb, int64_t v);
/* Opens a reply object with its window: {"t0":..,"t1":.. (times as nx__tl_put_time). */
void nx__tl_put_window(struct nx_strbuf *sb, int64_t t0, int64_t t1);
/* Query argument `name` of the request, NULL when absent. */
const char *nx__tl_arg(struct nx_req *rq, const char *name);
/* Query argument `name` as an integer in [lo, hi]; false when absent or invalid. */
bool nx__tl_int_arg(struct nx_req *rq, const char *name, int64_t lo, int64_t hi, int64_t *v);
/* An optional integer argument: *v unchanged when absent, else read in [lo, hi]; false
 * after replying 400 "NAME must be an integer from LO to HI" (*ret is the reply's result). */
bool nx__tl_int_opt_arg(struct nx_req *rq, const char *name, int64_t lo, int64_t hi,
			int64_t *v, enum MHD_Result *ret);
/* The event of the endpoints about one event (flows, chain): table (Instruction or
 * DmaPacketAggregated, as its index *s into nx__lod_sources) and id; false after replying
 * 400 naming what is wrong (*ret is the reply's result). */
bool nx__tl_event_arg(struct nx_req *rq, int *s, int64_t *id, enum MHD_Result *ret);

/* The time parameters are bounded by NX_TL_TIME_BOUND (lod.h). */
#define NX_TL_TIME_BOUND_TEXT "-2^61 and 2^61 (2305843009213693952)"
#define NX_TL_MAX_PX 16384

/* A window of the timeline endpoints. With px: bucket is the smallest power of two
 * >= (t1 - t0) / px (2^level), and t0, t1 are snapped down and up to multiples of it;
 * without: bucket 1, t0 and t1 as given. */
struct nx__tl_window {
	int64_t t0, t1, px, bucket;
	int level;
};
/* t0, t1 (and px when with_px) as the query's text (NULL: absent) into *w. */
enum nx__tl_window_error { NX_TL_WINDOW_OK, NX_TL_BAD_TIMES, NX_TL_BAD_PX };
enum nx__tl_window_error nx__tl_window_parse(const char *t0, const char *t1, const char *px,
					     bool with_px, struct nx__tl_window *w);
/* Reads t0, t1 (and px when with_px) of the request into *w; false after replying 400
 * naming the bound of the parameter that is wrong (*ret is the reply's result). Every
 * endpoint taking a window reads it here. */
bool nx__tl_window_arg(struct nx_req *rq, bool with_px, struct nx__tl_window *w,
		       enum MHD_Result *ret);
/* Reads dma: false (transfers: absent or "transfers") or true ("packets") in *packets;
 * false after replying 400 for another value. */
bool nx__tl_dma_arg(struct nx_req *rq, bool *packets, enum MHD_Result *ret);

/* a - b and a + b, saturated to [-INT64_MAX, INT64_MAX]: times read from a profile
 * can be anything, and their differences must not overflow. */
static inline int64_t nx__tl_sub(int64_t a, int64_t b)
{
	int64_t r;

	if (__builtin_sub_overflow(a, b, &r))
		return b > 0 ? -INT64_MAX : INT64_MAX;
	return r == INT64_MIN ? -INT64_MAX : r;
}

static inline int64_t nx__tl_add(int64_t a, int64_t b)
{
	int64_t r;

	if (__builtin_add_overflow(a, b, &r))
		return b < 0 ? -INT64_MAX : INT64_MAX;
	return r == INT64_MIN ? -INT64_MAX : r;
}
/* A failed query as a reply: DuckDB's errors are 500 query_error, others as usual. */
enum MHD_Result nx__tl_query_failed(struct nx_req *rq, const struct nx_err *err);
/* The tracks of the counter tables as one SELECT (malloc'd), or NULL when it has none. */
char *nx__counter_tracks_sql(const struct nx_profile *p);

/* The timeline cache of p (lod.h), built on first use (or again, a failed build after
 * cache_retry_ms), with a reference the caller lets go with nx__tl_lod_put; NULL when it
 * cannot be (the profile's own tables serve then). timeline_cache.c. */
struct nx_lod *nx__tl_lod(struct nx_req *rq, struct nx_profile *p);
/* The same for a caller without a request (the server's warm-up thread). */
struct nx_lod *nx__tl_lod_of(struct nx_server *s, struct nx_profile *p);
void nx__tl_lod_put(struct nx_profile *p, struct nx_lod *lod);

/* An endpoint's reply made from the cache lod (NULL: the profile's own tables), appended
 * to out; 0 or an error. */
typedef int (*nx__tl_body)(struct nx_req *rq, struct nx_profile *p, struct nx_lod *lod,
			   void *arg, struct nx_strbuf *out, struct nx_err *err);
/* Runs body with p's cache (when want_lod, else without). When it fails because the
 * cache was damaged while served, the cache is removed, the reason logged, and body runs
 * once more (out as it was) with the cache built again, or without one. */
int nx__tl_run(struct nx_req *rq, struct nx_profile *p, bool want_lod, nx__tl_body body,
	       void *arg, struct nx_strbuf *out, struct nx_err *err);
/* nx__tl_run, then its reply (200 with out, or the error), and lets go of p. */
enum MHD_Result nx__tl_serve(struct nx_req *rq, struct nx_profile *p, bool want_lod,
			     nx__tl_body body, void *arg);
/* A window endpoint's whole handler: the t0/t1/px arguments (nx__tl_window_arg), the
 * profile of the captures, then nx__tl_serve with body and the window. */
enum MHD_Result nx__tl_serve_window(struct nx_req *rq, char **cap, bool want_lod,
				    nx__tl_body body);
/* Whether p has table; false after replying 404 table_not_found naming both (*ret is
 * the reply's result). */
bool nx__tl_has_table(struct nx_req *rq, struct nx_profile *p, const char *table,
		      enum MHD_Result *ret);
/* nx__pdb_query on the cache's database, under the server's limits and query slots. */
int nx__tl_lod_query(struct nx_req *rq, struct nx_lod *lod, const char *sql,
		     struct nx_strbuf *out, struct nx_err *err);

/* The reply writer of a window query (timeline_reply.c). The query's columns are core
 * BIGINT, track VARCHAR, bins BOOLEAN, id, s, e BIGINT, label VARCHAR, cnt, busy, lst
 * BIGINT (NULL for raw rows), in any order: rows are grouped by track here. */
struct nx__tl_row {
	int64_t f[7]; /* id, start, end, label index, count, busy, last end */
};
struct nx__tl_track {
	bool core_null, bins;
	int64_t core;
	char *track;
	struct nx__tl_row *v;
	size_t n, cap;
};
struct nx__tl_reply {
	struct nx_strbuf *out;
	uint64_t max_bytes;
	int64_t t0;
	struct nx_strmap labels; /* label -> its index (uint32_t) */
	struct nx_strbuf names;  /* the labels, JSON-quoted, comma-separated */
	size_t nlabels;
	struct nx_strmap index; /* "<core>|<track>" -> index into tracks (size_t) */
	struct nx__tl_track *tracks;
	size_t ntracks, cap;
	struct nx_strbuf key;
	int64_t bucket, raw_limit; /* of the source: raw tracks beyond raw_limit get bucketed */
	uint64_t rows, max_rows;   /* rows of the source so far; more than max_rows: -E2BIG */
};
/* t0: the reply's snapped window start, the origin of its times. */
void nx__tl_reply_init(struct nx__tl_reply *r, struct nx_strbuf *out, uint64_t max_bytes,
		       int64_t t0);
void nx__tl_reply_release(struct nx__tl_reply *r);
/* Around the chunks of one source's query; end appends its "tracks":[...]. With a
 * bucket, raw tracks of more than raw_limit rows are bucketed at its width; with
 * max_rows, a query of more rows fails with -E2BIG. */
void nx__tl_reply_begin_source(struct nx__tl_reply *r, int64_t bucket, int64_t raw_limit,
			       uint64_t max_rows);
int nx__tl_reply_chunk(void *r, duckdb_data_chunk chunk, struct nx_err *err);
int nx__tl_reply_end_source(struct nx__tl_reply *r, struct nx_err *err);
/* Appends "labels":[...], the labels the tracks' indices refer to. */
void nx__tl_reply_labels(struct nx__tl_reply *r);

#endif
