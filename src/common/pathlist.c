/* SPDX-License-Identifier: MIT
 * pathlist.c: a list of paths behind a mutex, for the cleanup a signal does (see
 * pathlist.h for the guarantees). */
#include "common/compat.h"
#include "common/pathlist.h"
#include "common/xalloc.h"

#include <stdlib.h>
#include <string.h>

void nx_path_list_lock(struct nx_path_list *l)
{
	pthread_mutex_lock(&l->lock);
}

void nx_path_list_unlock(struct nx_path_list *l)
{
	pthread_mutex_unlock(&l->lock);
}

void nx_path_list_add(struct nx_path_list *l, const char *path)
{
	if (l->n == l->cap) {
		l->cap = l->cap ? 2 * l->cap : 4;
		l->paths = nx_xrealloc(l->paths, l->cap * sizeof(*l->paths));
	}
	l->paths[l->n++] = nx_xstrdup(path);
}

void nx_path_list_drop(struct nx_path_list *l, const char *path)
{
	for (size_t i = 0; i < l->n; i++) {
		if (strcmp(l->paths[i], path))
			continue;
		free(l->paths[i]);
		l->paths[i] = l->paths[--l->n];
		break;
	}
	if (!l->n) {
		free(l->paths);
		l->paths = NULL;
		l->cap = 0;
	}
}

void nx_path_list_each(struct nx_path_list *l, void (*fn)(const char *path))
{
	for (size_t i = 0; i < l->n; i++)
		fn(l->paths[i]);
}
