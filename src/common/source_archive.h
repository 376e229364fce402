/* SPDX-License-Identifier: MIT
 * source_archive.h: the source code attached to a profile (`neuron-explorer upload`),
 * shared by the upload command, the publication of a new version of a profile (which
 * keeps it) and the server, which lists it with the cap for the web UI's source view. */
#ifndef NX_COMMON_SOURCE_ARCHIVE_H
#define NX_COMMON_SOURCE_ARCHIVE_H

/* The archive's name inside a profile directory. */
#define NX_SOURCE_ARCHIVE "source_folder.tar.gz"

/* The one cap on an attached source archive, in bytes as stored (gzipped): `upload`
 * refuses a larger one before reading it, and the web UI does not unpack more. */
#define NX_SOURCE_ARCHIVE_MAX ((unsigned long long)64 << 20)
#define NX_SOURCE_ARCHIVE_MAX_TEXT "64 MiB"

#endif
