/* SPDX-License-Identifier: MIT
 * out_file.h: the one rule for an output that is a single file (view --output-file with
 * the json, summary and perfetto formats). A file is written under a unique temporary
 * name beside its path (created with O_EXCL) and renamed into place once complete, so a
 * reader never sees half of it and a failed export leaves nothing. What the path may
 * already hold:
 *   - nothing: the file is created (a file someone else creates meanwhile is kept, and
 *     the export fails);
 *   - a regular file we wrote (it carries the extended attribute NX_OUT_FILE_XATTR, which
 *     every file written here gets): replaced;
 *   - any other regular file or a symbolic link: refused, unless `force` (--force);
 *   - a character device or a FIFO (/dev/stdout, a pipe): written in place, as is "-"
 *     (stdout);
 *   - a directory or anything else: refused.
 * On a file system without user extended attributes, our own files cannot be told from
 * a user's: replacing them needs `force` too. Refusals carry NX_EUSAGE. */
#ifndef NX_COMMON_OUT_FILE_H
#define NX_COMMON_OUT_FILE_H

#include "common/compat.h"
#include "common/err.h"

#include <stdio.h>

/* The extended attribute that marks a file as written by neuron-explorer. */
#define NX_OUT_FILE_XATTR "user.neuron-explorer"

struct nx_out_file {
	char *path;   /* as given */
	char *tmp;    /* the temporary sibling; NULL when written in place */
	FILE *fp;     /* where to write */
	bool existed; /* the path held a file to replace when it was opened */
	bool force;
};

/* Says whether path may be written under the rule above, before any work is done. */
int nx_out_file_may_write(const char *path, bool force, struct nx_err *err);

/* Checks path again and opens the temporary file (or the stream) to write. */
int nx_out_file_open(struct nx_out_file *f, const char *path, bool force, struct nx_err *err);

/* Flushes and closes the file, then puts it in place. On failure nothing of it is
 * left. The struct is released either way. */
int nx_out_file_commit(struct nx_out_file *f, struct nx_err *err);

/* Drops what was written (the temporary file is removed) and releases the struct. */
void nx_out_file_abort(struct nx_out_file *f);

/* The temporary file being written, or NULL (for a caller that removes it when the
 * process is interrupted). */
static inline const char *nx_out_file_tmp(const struct nx_out_file *f)
{
	return f->tmp;
}

#endif
