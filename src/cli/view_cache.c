/* SPDX-License-Identifier: MIT
 * view_cache.c: `view`'s hook that builds the timeline cache into the profile it
 * ingests, before publication (view_cache.h): its events part beside the ingest's derive
 * stage, the rest once every table is written (server/lod_carried.h), or the whole at the
 * end when NX_VIEW_CACHE_SERIAL=1 (the build before the parts overlapped). */
#include "common/compat.h"
#include "cli/view_cache.h"
#include "server/lod_carried.h"

#include <stdlib.h>
#include <string.h>

static int build_cache(void *user, const char *dir, const char *name, uint64_t *rows,
		       struct nx_err *err)
{
	(void)user;
	return nx_lod_build_carried(dir, name, rows, NULL, err);
}

static void *start_cache(void *user, const char *dir, const char *name)
{
	const char *serial = getenv("NX_VIEW_CACHE_SERIAL");

	(void)user;
	if (serial && !strcmp(serial, "1"))
		return NULL;
	return nx_lod_carried_start(dir, name);
}

static void wait_cache(void *job)
{
	nx_lod_carried_wait(job);
}

static int finish_cache(void *job, uint64_t *rows, struct nx_err *err)
{
	return nx_lod_carried_finish(job, rows, NULL, err);
}

static void abort_cache(void *job)
{
	nx_lod_carried_abort(job);
}

const struct nx_publish_hook nx_view_cache_hook = { build_cache, NULL, "timeline_cache",
						    start_cache, wait_cache, finish_cache,
						    abort_cache };
