/* SPDX-License-Identifier: MIT
 * pathlist.h: a list of paths behind a mutex, for what a command must clean up when a
 * signal ends it: the temporary directories of nx_make_temp_dir (common/fsutil.c) and
 * the temporary files of the output writer (common/outpath.c), which the command line's
 * signal thread (cli/cli_util.c) removes.
 *
 * What it guarantees, and how the callers keep it:
 *   - every call but nx_path_list_lock and nx_path_list_unlock needs the lock held, so
 *     a caller makes (or removes) a path and adds (or drops) it in one locked step: the
 *     signal thread, which takes the lock first, never sees a path that is on disk and
 *     not listed, nor one listed and already gone and maybe someone else's since;
 *   - nx_path_list_each only reads the list: the callback may do anything but touch the
 *     list (it runs with the lock held);
 *   - the signal thread may keep the lock for good once it has removed the paths (the
 *     process is ending), so that nothing more is made or released;
 *   - an empty list holds no memory, so a process that ends normally leaks nothing.
 * The signal thread is an ordinary thread (it waits in sigwait), not a signal handler:
 * taking a mutex and freeing memory are allowed there. */
#ifndef NX_COMMON_PATHLIST_H
#define NX_COMMON_PATHLIST_H

#include "common/compat.h"

#include <pthread.h>

struct nx_path_list {
	pthread_mutex_t lock;
	char **paths;
	size_t n, cap;
};

#define NX_PATH_LIST_INIT { PTHREAD_MUTEX_INITIALIZER, NULL, 0, 0 }

void nx_path_list_lock(struct nx_path_list *l);
void nx_path_list_unlock(struct nx_path_list *l);
/* Adds a copy of path (lock held). */
void nx_path_list_add(struct nx_path_list *l, const char *path);
/* Drops one copy of path, if listed (lock held); the order of the others may change. */
void nx_path_list_drop(struct nx_path_list *l, const char *path);
/* Calls fn on every path listed (lock held). */
void nx_path_list_each(struct nx_path_list *l, void (*fn)(const char *path));

#endif
