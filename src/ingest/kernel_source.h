/* SPDX-License-Identifier: MIT
 * kernel_source.h: the kernel sources a NEFF carries (neff.h), stored by the ingest as the
 * profile's source archive, so that the source view shows the code with no `upload`. */
#ifndef NX_INGEST_KERNEL_SOURCE_H
#define NX_INGEST_KERNEL_SOURCE_H

#include "common/err.h"
#include "common/progress.h"
#include "neff/neff.h"

/* Writes src as dir/source_folder.tar.gz (a member per file, by its name; the gzip comment
 * NX_SOURCE_FROM_NEFF, so publish.c keeps an archive the user uploaded instead). Nothing
 * when the NEFF carries none; a warning event when it carries one it could not read
 * (src->problem). Fails only when the file cannot be written, leaving none. */
int nx_kernel_source_store(const struct nx_neff_source *src, const char *dir,
			   const struct nx_progress *progress, struct nx_err *err);

#endif
