/* SPDX-License-Identifier: MIT
 * timeline.h: helpers shared by the timeline endpoints (h_timeline*.c). */
#ifndef NX_SERVER_TIMELINE_H
#define NX_SERVER_TIMELINE_H

#include "common/compat.h"
#include "server/http.h"

struct nx_profile;

/* Query argument `name` as an integer in [lo, hi]; false when absent or invalid. */
bool nx__tl_int_arg(struct nx_req *rq, const char *name, int64_t lo, int64_t hi, int64_t *v);
/* A failed query as a reply: DuckDB's errors are 500 query_error, others as usual. */
enum MHD_Result nx__tl_query_failed(struct nx_req *rq, const struct nx_err *err);
/* The tracks of the counter tables as one SELECT (malloc'd), or NULL when it has none. */
char *nx__counter_tracks_sql(const struct nx_profile *p);

#endif
