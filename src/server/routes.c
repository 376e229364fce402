/* SPDX-License-Identifier: MIT
 * routes.c: the route table. A new endpoint is one row here plus its handler
 * file. Patterns: '*' is one path segment, '**' the rest. */
#include "common/compat.h"
#include "server/http.h"

const struct nx_route nx__routes[] = {
	{ .method = "GET", .pattern = "/api/v1/health", .fn = nx__h_health, .quick = true },
	{ .method = "GET", .pattern = "/api/v1/profiles", .fn = nx__h_profiles },
	{ .method = "POST", .pattern = "/api/v1/db/*/_search", .fn = nx__h_search },
	{ .method = "GET", .pattern = "/api/v1/profiles/namespace/*/profile_name/*",
	  .fn = nx__h_profile },
	{ .method = "GET", .pattern = "/api/v1/profiles/namespace/*/profile_name/*/artifacts",
	  .fn = nx__h_artifacts },
	{ .method = "GET", .pattern = "/api/v1/profiles/namespace/*/profile_name/*/fs/**",
	  .fn = nx__h_fs },
	{ .method = "GET", .pattern = "/api/v1/profiles/namespace/*/profile_name/*/analysis",
	  .fn = nx__h_analysis },
	{ .method = "GET", .pattern = "/api/v1/profiles/namespace/*/profile_name/*/timeline",
	  .fn = nx__h_timeline },
	{ .method = "GET", .pattern = "/api/v1/profiles/namespace/*/profile_name/*/timeline/tracks",
	  .fn = nx__h_timeline_tracks },
	{ .method = "GET",
	  .pattern = "/api/v1/profiles/namespace/*/profile_name/*/timeline/counters",
	  .fn = nx__h_timeline_counters },
	{ .method = "GET", .pattern = "/api/v1/profiles/namespace/*/profile_name/*/timeline/search",
	  .fn = nx__h_timeline_search },
	{ .method = "GET",
	  .pattern = "/api/v1/profiles/namespace/*/profile_name/*/timeline/aggregate",
	  .fn = nx__h_timeline_aggregate },
	{ .method = "GET", .pattern = "/api/v1/profiles/namespace/*/profile_name/*/timeline/flows",
	  .fn = nx__h_timeline_flows },
	{ .method = "GET", .pattern = "/api/v1/profiles/namespace/*/profile_name/*/timeline/lines",
	  .fn = nx__h_timeline_lines },
	{ .method = "GET",
	  .pattern = "/api/v1/profiles/namespace/*/profile_name/*/timeline/small-dma",
	  .fn = nx__h_timeline_small_dma },
};

const size_t nx__route_count = NX_ARRAY_SIZE(nx__routes);
