/* SPDX-License-Identifier: MIT
 * routes.h: the HTTP API's routes, the one list of them: NX_ROUTES(X) calls
 * X(method, pattern, handler, quick) once per route. It makes the route table
 * (routes.c) and the handlers' prototypes (http.h); test_server_routes checks it
 * against the endpoint headings of docs/api.md. A new endpoint is one line here, its
 * handler in an h_*.c file and its heading in docs/api.md.
 *
 * Patterns: '*' is one path segment, a final '**' the rest of the path. quick: the
 * route touches no DuckDB and never waits, so it is answered on libmicrohttpd's polling
 * thread rather than a worker. */
#ifndef NX_SERVER_ROUTES_H
#define NX_SERVER_ROUTES_H

#define NX_PROFILE_ROUTE "/api/v1/profiles/namespace/*/profile_name/*"

#define NX_ROUTES(X)                                                                      \
	X("GET", "/api/v1/health", nx__h_health, true)                                     \
	X("GET", "/api/v1/profiles", nx__h_profiles, false)                                \
	X("POST", "/api/v1/db/*/_search", nx__h_search, false)                             \
	X("GET", NX_PROFILE_ROUTE, nx__h_profile, false)                                   \
	X("GET", NX_PROFILE_ROUTE "/artifacts", nx__h_artifacts, false)                    \
	X("GET", NX_PROFILE_ROUTE "/fs/**", nx__h_fs, false)                               \
	X("GET", NX_PROFILE_ROUTE "/analysis", nx__h_analysis, false)                      \
	X("GET", NX_PROFILE_ROUTE "/timeline", nx__h_timeline, false)                      \
	X("GET", NX_PROFILE_ROUTE "/timeline/tracks", nx__h_timeline_tracks, false)        \
	X("GET", NX_PROFILE_ROUTE "/timeline/counters", nx__h_timeline_counters, false)    \
	X("GET", NX_PROFILE_ROUTE "/timeline/search", nx__h_timeline_search, false)        \
	X("GET", NX_PROFILE_ROUTE "/timeline/aggregate", nx__h_timeline_aggregate, false)  \
	X("GET", NX_PROFILE_ROUTE "/timeline/flows", nx__h_timeline_flows, false)          \
	X("GET", NX_PROFILE_ROUTE "/timeline/lines", nx__h_timeline_lines, false)          \
	X("GET", NX_PROFILE_ROUTE "/timeline/small-dma", nx__h_timeline_small_dma, false)  \
	X("GET", NX_PROFILE_ROUTE "/timeline/chain", nx__h_timeline_chain, false)          \
	X("GET", NX_PROFILE_ROUTE "/timeline/memory", nx__h_timeline_memory, false)

#endif
