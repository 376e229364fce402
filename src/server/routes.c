/* SPDX-License-Identifier: MIT
 * routes.c: the route table, made from the list of routes.h. */
#include "common/compat.h"
#include "server/http.h"

#define NX_ROUTE_ROW(m, p, f, q) { .method = m, .pattern = p, .fn = f, .quick = q },

const struct nx_route nx__routes[] = { NX_ROUTES(NX_ROUTE_ROW) };

const size_t nx__route_count = NX_ARRAY_SIZE(nx__routes);
