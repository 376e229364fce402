/* SPDX-License-Identifier: MIT
 * fsutil.h: the file-system helpers every stage shares: whole-file reads, directory
 * creation and removal, and atomic replacement of a file through a unique temporary
 * sibling (nx_tmp_create: the one maker of temporary files beside a path) and a rename. */
#ifndef NX_COMMON_FSUTIL_H
#define NX_COMMON_FSUTIL_H

#include "common/compat.h"
#include "common/err.h"

#include <stdio.h>

/* Reads a whole file into a malloc'd, NUL-terminated buffer. */
int nx_read_file(const char *path, char **data, size_t *len, struct nx_err *err);
/* Writes a file through a temporary sibling and rename, so readers never see half of it:
 * for the tool's own files in directories it owns (the data path, a marked output
 * directory); an output path a user names goes through common/outpath.h. */
int nx_write_file_atomic(const char *path, const void *data, size_t len, struct nx_err *err);
/* Writes len bytes to fd (retrying short writes); errors name `name`. */
int nx_write_all(int fd, const void *data, size_t len, const char *name, struct nx_err *err);
/* Creates a new temporary file beside path, ".<base>.tmp-<pid>-<n>" in the same
 * directory, with O_EXCL (so two writers never share one), mode 0666 less the umask.
 * *tmp receives its name (caller frees), *fd the open descriptor. */
int nx_tmp_create(const char *path, char **tmp, int *fd, struct nx_err *err);
/* Renames tmp over path; on failure removes tmp and names both. */
int nx_tmp_commit(const char *tmp, const char *path, struct nx_err *err);
/* The directory part of path ("." when it has none, "/" for "/x"), newly allocated. */
char *nx_dir_of(const char *path);
/* Copies the file from into a new file to (which must not exist), in 64 KiB steps; a
 * failed copy leaves no file. */
int nx_copy_file(const char *from, const char *to, struct nx_err *err);
/* Opens (creating) path and takes an exclusive flock on it, waiting for it or not;
 * -EBUSY when another process holds it and !wait. *fd keeps the lock until it is
 * closed. On a file system without locks (ENOLCK, EOPNOTSUPP) *fd is open, unlocked. */
int nx_lock_file(const char *path, bool wait, int *fd, struct nx_err *err);
/* mkdir -p. */
int nx_mkdirs(const char *path, struct nx_err *err);
/* rm -rf; a missing path is not an error. */
int nx_remove_tree(const char *path, struct nx_err *err);
/* A new private directory $TMPDIR/nx-<tag>-XXXXXX (or under /tmp), made by mkdtemp: no
 * one else's, so the caller may remove it whole. *out gets its path (caller frees). */
int nx_make_temp_dir(const char *tag, char **out, struct nx_err *err);
/* Removes a directory made by nx_make_temp_dir, whole, and frees path (NULL: nothing). */
void nx_temp_dir_release(char *path);
/* Calls remove on every directory nx_make_temp_dir made and nobody released yet, for the
 * thread that handles the signals ending a command; afterwards none can be made or
 * released (the process is ending). */
void nx_temp_dirs_remove(void (*remove)(const char *path));
bool nx_is_dir(const char *path);
bool nx_is_file(const char *path);
/* Joins two path pieces into a new string. */
char *nx_path_join(const char *a, const char *b);
/* Expands a leading "~/" using $HOME; returns a new string. */
char *nx_expand_home(const char *path);

#endif
