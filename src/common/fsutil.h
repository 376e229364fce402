/* SPDX-License-Identifier: MIT
 * fsutil.h: the file-system helpers every stage shares: whole-file reads, directory
 * creation and removal, and atomic publication by rename. */
#ifndef NX_COMMON_FSUTIL_H
#define NX_COMMON_FSUTIL_H

#include "common/compat.h"
#include "common/err.h"

/* Reads a whole file into a malloc'd, NUL-terminated buffer. */
int nx_read_file(const char *path, char **data, size_t *len, struct nx_err *err);
/* Writes a file through a temporary sibling and rename, so readers never see half of it. */
int nx_write_file_atomic(const char *path, const void *data, size_t len, struct nx_err *err);
/* mkdir -p. */
int nx_mkdirs(const char *path, struct nx_err *err);
/* rm -rf; a missing path is not an error. */
int nx_remove_tree(const char *path, struct nx_err *err);
bool nx_is_dir(const char *path);
bool nx_is_file(const char *path);
/* Joins two path pieces into a new string. */
char *nx_path_join(const char *a, const char *b);
/* Expands a leading "~/" using $HOME; returns a new string. */
char *nx_expand_home(const char *path);

#endif
