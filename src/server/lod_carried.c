/* SPDX-License-Identifier: MIT
 * lod_carried.c: builds the timeline cache into a profile's temporary directory before
 * the ingest publishes it (lod_carried.h). The cache is the same as a server builds
 * (lod_build.c), within the same bounds (lod_bounds.c), in NX_LOD_CARRIED_DIR with its
 * stamp file written last; its stamp's version is NX_LOD_CARRIED_VERSION, for the
 * profile directory's identity is not known yet and the cache moves with the directory,
 * and its hash of the table files is the one a server computes over the published
 * profile, so a server uses it only while the tables are the ones it was built from
 * (lod_cache.c). DuckDB spills into the cache's scratch folder. */
#include "common/compat.h"
#include "server/lod_carried.h"
#include "server/lod.h"
#include "server/profile_files.h"
#include "common/fsutil.h"
#include "common/xalloc.h"

#include <stdlib.h>

int nx_lod_build_carried(const char *dir, const char *name, uint64_t *events,
			 struct nx_lod_phases *phases, struct nx_err *err)
{
	char *out = nx_path_join(dir, NX_LOD_CARRIED_DIR);
	struct nx_lod_stamp stamp = { 0 };
	struct nx_pfiles files = { 0 };
	struct nx_lod_bounds bounds;
	int rc;

	*events = 0;
	rc = nx__lod_bounds(&bounds, err);
	if (!rc)
		rc = nx__pfiles_scan_plain(dir, &files, err);
	if (!rc && nx_is_dir(out))
		rc = nx_errf(err, -EEXIST, "'%s' exists already", out);
	if (rc)
		goto out;
	nx__lod_stamp_expect(name, NX_LOD_CARRIED_VERSION, &files, &stamp);
	rc = nx_mkdirs(out, err);
	if (!rc)
		rc = nx__lod_build(dir, &files, &stamp, out, &bounds, NULL, events, phases, err);
	if (!rc)
		rc = nx__lod_stamp_write(out, &stamp, err);
	if (rc) {
		struct nx_err ignored = { 0 };

		nx_remove_tree(out, &ignored);
	}
out:
	nx__lod_stamp_release(&stamp);
	nx__pfiles_release(&files);
	free(out);
	return rc;
}
