/* SPDX-License-Identifier: MIT
 * view_cache.h: the hook through which `view` builds the timeline cache into a profile
 * before the ingest publishes it (server/lod_carried.h). */
#ifndef NX_CLI_VIEW_CACHE_H
#define NX_CLI_VIEW_CACHE_H

#include "ingest/ingest.h"

extern const struct nx_publish_hook nx_view_cache_hook;

#endif
