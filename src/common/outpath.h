/* SPDX-License-Identifier: MIT
 * outpath.h: the one rule for every path the tool writes an output to (view
 * --output-file, fleet export -o, capture -s, kernel gen/asm -o, kernel gen --listing):
 * nothing a user owns is replaced or deleted.
 *
 * A directory output is written only where nothing is lost: a path that does not exist
 * yet, an empty directory, or a directory the tool wrote before, which carries the
 * marker file NX_OUT_MARKER. A file output replaces only a file of the same kind the
 * tool writes (a NEFF, an NTFF, a summary, ...), recognised by its first bytes.
 * Everything else is refused with NX_EUSAGE and a message saying why, before any work:
 * a symbolic link, a directory where a file goes (or the reverse), the current
 * directory or one of its ancestors, the data path or one of its ancestors, a path
 * inside the data path's profiles, a directory holding files of someone else.
 * Files are replaced through a unique temporary sibling (nx_tmp_create in fsutil.h)
 * and a rename. */
#ifndef NX_COMMON_OUTPATH_H
#define NX_COMMON_OUTPATH_H

#include "common/compat.h"
#include "common/err.h"

/* The file that marks a directory as written by neuron-explorer. */
#define NX_OUT_MARKER ".neuron-explorer-output"

/* Checks an output directory against the rule (see above). data_path (the data path of
 * the command, may be NULL) is protected with its ancestors and profiles. */
int nx_out_dir_check(const char *path, const char *data_path, struct nx_err *err);

/* Writes the marker into dir, a directory being built to replace an output path. */
int nx_out_dir_mark(const char *dir, struct nx_err *err);

/* Says whether the first n bytes of an existing file (n may be short) are of the kind an
 * output writes. */
typedef bool (*nx_out_kind_fn)(const uint8_t *head, size_t n);

/* Checks an output file: it does not exist (its directory must, unless make_dir), or it
 * is a regular file that `ours` recognises; `what` names the kind in messages ("a
 * NEFF"). With make_dir the missing directories are created (as the Neuron runtime does
 * for its profiles). */
int nx_out_file_check(const char *path, const char *what, nx_out_kind_fn ours, bool make_dir,
		      struct nx_err *err);

#endif
