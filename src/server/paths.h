/* SPDX-License-Identifier: MIT
 * paths.h: the checks that keep URL-supplied names inside the data path. Profile
 * names and /fs/ paths are validated lexically first (no "..", no absolute paths,
 * no control bytes), then resolved with realpath() and required to stay below the
 * resolved base, which also defeats symlinks that point elsewhere. */
#ifndef NX_SERVER_PATHS_H
#define NX_SERVER_PATHS_H

#include "common/compat.h"

/* A display name as it appears in URLs: returns NULL when acceptable, else a
 * static reason for the error message. */
const char *nx__path_check_name(const char *name);

/* A path relative to a profile directory (the part after /fs/). */
const char *nx__path_check_rel(const char *rel);

/* realpath(path) when it equals base_real or lies below it, else NULL (also when
 * path does not exist). base_real must itself be a resolved path. Caller frees. */
char *nx__path_resolve_within(const char *base_real, const char *path);

/* Whether a directory entry name belongs to a profile that is still being
 * written (ingest works in ".name" or "*.tmp*" siblings and renames at the end). */
bool nx__path_in_progress(const char *entry);

#endif
