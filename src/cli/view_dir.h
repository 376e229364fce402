/* SPDX-License-Identifier: MIT
 * view_dir.h: the CLI side of directory mode (`view -d DIR`): prints its errors as
 * "neuron-explorer view: ..." and returns an exit status (0 ok, 1 failure, 2 usage). */
#ifndef NX_CLI_VIEW_DIR_H
#define NX_CLI_VIEW_DIR_H

#include "common/compat.h"

/* Ingests every framework trace and NEFF/NTFF pair under dir (or the single trace file
 * dir names) as profile `name` in data_path, or into output_dir when it is not NULL. On
 * success *published (if non-NULL) receives the profile directory (caller frees). */
int nx_view_dir(const char *dir, const char *data_path, const char *name,
		const char *output_dir, bool quiet, char **published);

#endif
