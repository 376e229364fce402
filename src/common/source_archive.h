/* SPDX-License-Identifier: MIT
 * source_archive.h: the source code attached to a profile (`neuron-explorer upload`, or
 * the kernel source its NEFF carries, stored by `view`), shared by the upload command,
 * the ingest, the publication of a new version of a profile (which keeps an uploaded
 * one) and the server, which lists it with the cap for the web UI's source view. */
#ifndef NX_COMMON_SOURCE_ARCHIVE_H
#define NX_COMMON_SOURCE_ARCHIVE_H

#include "common/compat.h"

/* The archive's name inside a profile directory. */
#define NX_SOURCE_ARCHIVE "source_folder.tar.gz"

/* The one cap on an attached source archive, in bytes as stored (gzipped): `upload`
 * refuses a larger one before reading it, and the web UI does not unpack more. */
#define NX_SOURCE_ARCHIVE_MAX ((unsigned long long)64 << 20)
#define NX_SOURCE_ARCHIVE_MAX_TEXT "64 MiB"

/* The gzip comment of an archive `view` made from the kernel source a NEFF carries: such
 * an archive goes with its NEFF (the next ingest's NEFF brings its own, or none), while
 * one the user uploaded stays attached to every new version. */
#define NX_SOURCE_FROM_NEFF "neuron-explorer: the kernel source carried by the NEFF"

/* Whether the archive at path is one `view` made from a NEFF (its gzip header's comment is
 * NX_SOURCE_FROM_NEFF); false for anything else, unreadable files included. */
bool nx_source_archive_from_neff(const char *path);

#endif
