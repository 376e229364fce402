/* SPDX-License-Identifier: MIT
 * neff_source.h: the kernel source a NEFF carries (kernel_source/<name>, neff.h), for the
 * NEFF's reader and writer only. */
#ifndef NX_NEFF_NEFF_SOURCE_H
#define NX_NEFF_NEFF_SOURCE_H

#include "common/strbuf.h"
#include "neff/neff.h"
#include "neff/tar.h"

/* Takes the kernel_source/ member of tar into *src (copied); never fails: a member it
 * cannot take leaves src->name NULL and says why in src->problem. */
void nx_neff_source_read(const char *file, const struct nx_tar *tar,
			 struct nx_neff_source *src);
/* Appends src as a member of the archive being built (nothing when src->name is NULL);
 * NX_EUSAGE when nx_neff_source_check refuses it. */
int nx_neff_source_write(struct nx_strbuf *tar, const struct nx_neff_source *src,
			 struct nx_err *err);
void nx_neff_source_release(struct nx_neff_source *src);

#endif
