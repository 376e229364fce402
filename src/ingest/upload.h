/* SPDX-License-Identifier: MIT
 * upload.h: source code attached to a published profile (`neuron-explorer upload`), as
 * <data>/profiles/global/<name>@latest/source_folder.tar.gz, which the API lists and the
 * web UI's source view unpacks. Streamed: memory stays small whatever the size of the
 * sources, and the one cap (NX_SOURCE_ARCHIVE_MAX, common/source_archive.h) is checked
 * before anything is read wherever sizes allow. */
#ifndef NX_INGEST_UPLOAD_H
#define NX_INGEST_UPLOAD_H

#include "common/compat.h"
#include "common/err.h"

struct nx_upload_stats {
	size_t files;       /* members stored (1 for an archive stored as it is) */
	size_t skipped;     /* symbolic links and special files left out of a directory */
	uint64_t tar_bytes; /* unpacked size of the archive */
	uint64_t gz_bytes;  /* stored size */
	bool as_is;         /* a .tar.gz/.tgz stored as it was given */
	bool no_profile;    /* the failure: the profile does not exist */
};

/* Attaches src to the profile `name` of data_path: a directory (its regular files, in
 * sorted order, paths relative to it), a .tar.gz/.tgz stored as it is, or any other
 * file alone. *dest receives the archive's path (caller frees). Errors: NX_ENOTFOUND
 * (no such profile or source), NX_EUSAGE (the data path is not a directory, an empty
 * directory, a special file), -EFBIG (over the cap: nothing stored), NX_ECORRUPT (an
 * archive that is not gzip). A failure leaves the profile as it was. */
int nx_upload_source(const char *data_path, const char *name, const char *src,
		     struct nx_upload_stats *st, char **dest, struct nx_err *err);

#endif
