/* SPDX-License-Identifier: MIT
 * xalloc.h: allocation wrappers that abort on out-of-memory. Return codes are kept
 * for input, I/O and database errors; running out of memory is not recoverable here. */
#ifndef NX_COMMON_XALLOC_H
#define NX_COMMON_XALLOC_H

#include "common/compat.h"

void *nx_xmalloc(size_t n);
void *nx_xcalloc(size_t count, size_t size);
void *nx_xrealloc(void *p, size_t n);
char *nx_xstrdup(const char *s);
char *nx_xstrndup(const char *s, size_t n);
char *nx_xasprintf(const char *fmt, ...) NX_PRINTF(1, 2);

/* Grows a dynamic array so that it holds at least `need` elements. */
#define NX_GROW(ptr, need, cap)                                                  \
	do {                                                                     \
		if ((size_t)(need) > (cap)) {                                    \
			size_t nx_nc_ = (cap) ? (cap)*2 : 16;                    \
			while (nx_nc_ < (size_t)(need))                          \
				nx_nc_ *= 2;                                     \
			(ptr) = nx_xrealloc((ptr), nx_nc_ * sizeof(*(ptr)));     \
			(cap) = nx_nc_;                                          \
		}                                                                \
	} while (0)

#endif
