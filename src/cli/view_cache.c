/* SPDX-License-Identifier: MIT
 * view_cache.c: `view`'s hook that builds the timeline cache into the profile it
 * ingests, before publication (view_cache.h). */
#include "common/compat.h"
#include "cli/view_cache.h"
#include "server/lod_carried.h"

static int build_cache(void *user, const char *dir, const char *name, uint64_t *rows,
		       struct nx_err *err)
{
	(void)user;
	return nx_lod_build_carried(dir, name, rows, NULL, err);
}

const struct nx_publish_hook nx_view_cache_hook = { build_cache, NULL, "timeline_cache" };
