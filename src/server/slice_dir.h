/* SPDX-License-Identifier: MIT
 * slice_dir.h: the private folder where a profile database keeps the slices of its large
 * table files ($TMPDIR/nx-serve-slices-XXXXXX, profile_db.c), marked as its owner's, and
 * the sweep of such folders left by servers that died without removing them (kill -9:
 * 1.3 GB for a 100M-record profile).
 *
 * The mark is the file MARK in the folder: a first line MARK_HEAD, then "pid P" and
 * "start S" (the owner's start time, field 22 of /proc/P/stat). The owner holds an
 * exclusive flock on it for the folder's life; it is written under another name, locked,
 * then renamed into place, so the mark is never seen unlocked while its owner lives.
 *
 * A folder is swept only when all of these hold: its name has the pattern, it is a
 * directory (not a link) owned by the sweeping user, its mark is a regular file whose
 * first line is MARK_HEAD, the mark's lock can be taken at once, and no process P started
 * at S runs. Anything else (a live server's folder, a folder without the mark, someone
 * else's, a file system without locks) is left as it is. */
#ifndef NX_SERVER_SLICE_DIR_H
#define NX_SERVER_SLICE_DIR_H

#include "common/compat.h"
#include "common/err.h"
#include "common/strbuf.h"

/* A new marked folder in *path (caller releases it), its mark's lock in *lock. */
int nx__slice_dir_make(char **path, int *lock, struct nx_err *err);
/* Removes the folder, whole, then lets its lock go; frees path (NULL: nothing). */
void nx__slice_dir_release(char *path, int lock);
/* Removes the marked folders of dead servers under $TMPDIR (or /tmp); appends one line
 * per folder removed, or that could not be removed, to log. Returns how many it removed. */
size_t nx__slice_dirs_sweep(struct nx_strbuf *log);

#endif
