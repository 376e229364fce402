/* SPDX-License-Identifier: MIT
 * lod_bounds.c: the one set of bounds of every build of the timeline cache, the one
 * `view` carries into a profile (lod_carried.c) and the one a server builds for a
 * profile without it (lod_cache.c): DuckDB's memory_limit, the input rows of each
 * grouping query of the pyramid, the row groups of a slice of a large table file and
 * how often the build purges DuckDB's allocator (lod.h; docs/memory.md, "The timeline cache"). */
#include "common/compat.h"
#include "server/lod.h"
#include "common/env_num.h"

#include <math.h>

int nx__lod_bounds(struct nx_lod_bounds *b, struct nx_err *err)
{
	const char *limit = NULL;
	long long rows = NX_LOD_CHUNK_ROWS, groups = NX_LOD_SLICE_GROUPS, purge = NX_LOD_PURGE_MS;
	int rc;

	b->memory_limit = NX_LOD_MEMORY;
	b->memory_given = false;
	b->chunk_rows = NX_LOD_CHUNK_ROWS;
	b->slice_groups = NX_LOD_SLICE_GROUPS;
	if ((rc = nx_env_size("NX_LOD_MEMORY_LIMIT", &limit, err)) ||
	    (rc = nx_env_range("NX_LOD_CHUNK_ROWS", NX_LOD_CHUNK_ROWS_MIN, NX_LOD_CHUNK_ROWS_MAX,
			       "rows", &rows, err)))
		return rc;
	if (limit) {
		b->memory_limit = limit;
		b->memory_given = true;
	}
	b->chunk_rows = rows;
	if ((rc = nx_env_whole("NX_LOD_SLICE_GROUPS", NX_LOD_SLICE_GROUPS_MAX,
			    "row groups (0: no slices)", &groups, err)) ||
	    (rc = nx_env_whole("NX_LOD_PURGE_MS", NX_LOD_PURGE_MS_MAX, "milliseconds (0: no purges)",
			    &purge, err)))
		return rc;
	b->slice_groups = (uint32_t)groups;
	b->purge_ms = (long)purge;
	return 0;
}

int nx__lod_ceil_log2(double x)
{
	int l = 0;

	while (l < 62 && ldexp(1.0, l) < x)
		l++;
	return l;
}

int64_t nx__lod_floor_div(int64_t a, int64_t b)
{
	return a / b - (a % b != 0 && (a < 0) != (b < 0));
}

int64_t nx__lod_slice_width(int level, int64_t first, int64_t last, int64_t nin, int64_t chunk)
{
	int cl;

	if (nin <= chunk)
		return INT64_MAX;
	cl = nx__lod_ceil_log2((double)(last - first + 1) * (double)chunk / (double)nin);
	if (cl < level)
		cl = level;
	return cl < 62 ? (int64_t)1 << cl : INT64_MAX;
}
