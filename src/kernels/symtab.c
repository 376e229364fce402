/* SPDX-License-Identifier: MIT
 * symtab.c: string -> index hash map with linear probing (see symtab.h). */
#include "common/compat.h"
#include "common/xalloc.h"
#include "kernels/symtab.h"

#include <stdlib.h>
#include <string.h>

static uint64_t hash(const char *s)
{
	uint64_t h = 1469598103934665603ull;

	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ull;
	return h;
}

void nx_symtab_init(struct nx_symtab *t)
{
	t->keys = NULL;
	t->vals = NULL;
	t->len = t->cap = 0;
}

void nx_symtab_release(struct nx_symtab *t)
{
	for (size_t i = 0; i < t->cap; i++)
		free(t->keys[i]);
	free(t->keys);
	free(t->vals);
	nx_symtab_init(t);
}

static size_t slot(const struct nx_symtab *t, const char *key)
{
	size_t i = (size_t)hash(key) & (t->cap - 1);

	while (t->keys[i] && strcmp(t->keys[i], key))
		i = (i + 1) & (t->cap - 1);
	return i;
}

static void grow(struct nx_symtab *t)
{
	struct nx_symtab n;

	n.cap = t->cap ? t->cap * 2 : 64;
	n.len = 0;
	n.keys = nx_xcalloc(n.cap, sizeof(*n.keys));
	n.vals = nx_xcalloc(n.cap, sizeof(*n.vals));
	for (size_t i = 0; i < t->cap; i++) {
		if (t->keys[i]) {
			size_t j = slot(&n, t->keys[i]);

			n.keys[j] = t->keys[i];
			n.vals[j] = t->vals[i];
			n.len++;
		}
	}
	free(t->keys);
	free(t->vals);
	*t = n;
}

bool nx_symtab_add(struct nx_symtab *t, const char *key, int val)
{
	size_t i;

	if ((t->len + 1) * 2 > t->cap)
		grow(t);
	i = slot(t, key);
	if (t->keys[i])
		return false;
	t->keys[i] = nx_xstrdup(key);
	t->vals[i] = val;
	t->len++;
	return true;
}

int nx_symtab_get(const struct nx_symtab *t, const char *key)
{
	size_t i;

	if (!t->cap)
		return -1;
	i = slot(t, key);
	return t->keys[i] ? t->vals[i] : -1;
}
