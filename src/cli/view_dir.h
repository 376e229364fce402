/* SPDX-License-Identifier: MIT
 * view_dir.h: the CLI side of directory mode (`view -d DIR`) and of the Perfetto
 * export (`view --output-format perfetto --output-file F`). Both print their errors
 * as "neuron-explorer view: ..." and return an exit status (0 ok, 1 failure, 2 usage). */
#ifndef NX_CLI_VIEW_DIR_H
#define NX_CLI_VIEW_DIR_H

#include "common/compat.h"

/* Ingests every framework trace and NEFF/NTFF pair under dir (or the single trace file
 * dir names) as profile `name` in data_path. On success *published (if non-NULL)
 * receives the profile directory (caller frees). */
int nx_view_dir(const char *dir, const char *data_path, const char *name, bool quiet,
		char **published);

/* Writes the published profile in profile_dir to out as Chrome trace JSON. */
int nx_view_perfetto(const char *profile_dir, const char *out);

#endif
