/* SPDX-License-Identifier: MIT
 * neff_source.h: the kernel sources a NEFF carries (kernel_source/<name>, neff.h), for the
 * NEFF's reader and writer only. */
#ifndef NX_NEFF_NEFF_SOURCE_H
#define NX_NEFF_NEFF_SOURCE_H

#include "common/strbuf.h"
#include "neff/neff.h"
#include "neff/tar.h"

/* Takes the kernel_source/ members of tar into *src (copied, in the archive's order);
 * never fails: members it cannot take leave src with no file and say why in
 * src->problem. */
void nx_neff_source_read(const char *file, const struct nx_tar *tar,
			 struct nx_neff_source *src);
/* Appends src's files as members of the archive being built (none when src has none);
 * NX_EUSAGE when nx_neff_source_check_all refuses them. */
int nx_neff_source_write(struct nx_strbuf *tar, const struct nx_neff_source *src,
			 struct nx_err *err);
void nx_neff_source_release(struct nx_neff_source *src);

#endif
