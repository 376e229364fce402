/* SPDX-License-Identifier: MIT
 * xalloc.c: abort-on-OOM allocation wrappers. */
#include "common/compat.h"
#include "common/xalloc.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static NX_NORETURN void oom(size_t n)
{
	fprintf(stderr, "neuron-explorer: out of memory allocating %zu bytes\n", n);
	abort();
}

void *nx_xmalloc(size_t n)
{
	void *p = malloc(n ? n : 1);
	if (!p)
		oom(n);
	return p;
}

void *nx_xcalloc(size_t count, size_t size)
{
	void *p = calloc(count ? count : 1, size ? size : 1);
	if (!p)
		oom(count * size);
	return p;
}

void *nx_xrealloc(void *p, size_t n)
{
	void *q = realloc(p, n ? n : 1);
	if (!q)
		oom(n);
	return q;
}

char *nx_xstrdup(const char *s)
{
	return nx_xstrndup(s, strlen(s));
}

char *nx_xstrndup(const char *s, size_t n)
{
	char *p = nx_xmalloc(n + 1);
	memcpy(p, s, n);
	p[n] = '\0';
	return p;
}

char *nx_xasprintf(const char *fmt, ...)
{
	va_list ap;
	char *s = NULL;

	va_start(ap, fmt);
	if (vasprintf(&s, fmt, ap) < 0)
		oom(0);
	va_end(ap);
	return s;
}
