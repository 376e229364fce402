/* SPDX-License-Identifier: MIT
 * symtab.h: a small string -> index hash map (open addressing) for the listing
 * assembler's names of tensors, queues and DMA blocks. Keys are copied. */
#ifndef NX_KERNELS_SYMTAB_H
#define NX_KERNELS_SYMTAB_H

#include "common/compat.h"

struct nx_symtab {
	char **keys;
	int *vals;
	size_t len, cap;
};

void nx_symtab_init(struct nx_symtab *t);
void nx_symtab_release(struct nx_symtab *t);
/* Adds key -> val; returns false (and changes nothing) when key already exists. */
bool nx_symtab_add(struct nx_symtab *t, const char *key, int val);
/* Returns the value of key, or -1. */
int nx_symtab_get(const struct nx_symtab *t, const char *key);

#endif
