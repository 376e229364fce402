/* SPDX-License-Identifier: MIT
 * strbuf.c: growable string buffer. */
#include "common/compat.h"
#include "common/strbuf.h"
#include "common/assert.h"
#include "common/xalloc.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void nx_strbuf_init(struct nx_strbuf *sb)
{
	sb->buf = NULL;
	sb->len = 0;
	sb->alloc = 0;
}

void nx_strbuf_release(struct nx_strbuf *sb)
{
	free(sb->buf);
	nx_strbuf_init(sb);
}

void nx_strbuf_grow(struct nx_strbuf *sb, size_t extra)
{
	size_t need = sb->len + extra + 1;

	if (need <= sb->alloc)
		return;
	size_t n = sb->alloc ? sb->alloc : 64;
	while (n < need)
		n *= 2;
	sb->buf = nx_xrealloc(sb->buf, n);
	sb->alloc = n;
	NX_ASSERT(sb->len + extra < sb->alloc); /* room for the bytes and the NUL */
}

void nx_strbuf_addstr(struct nx_strbuf *sb, const char *s)
{
	nx_strbuf_add(sb, s, strlen(s));
}

char *nx_i64_text(int64_t v, char buf[NX_I64_TEXT])
{
	char *p = buf + NX_I64_TEXT - 1;
	uint64_t u = v < 0 ? 0 - (uint64_t)v : (uint64_t)v;

	*p = '\0';
	do {
		*--p = (char)('0' + u % 10);
		u /= 10;
	} while (u);
	if (v < 0)
		*--p = '-';
	return p;
}

void nx_strbuf_addi64(struct nx_strbuf *sb, int64_t v)
{
	char tmp[NX_I64_TEXT];
	const char *p = nx_i64_text(v, tmp);

	nx_strbuf_add(sb, p, (size_t)(tmp + NX_I64_TEXT - 1 - p));
}

void nx_strbuf_vaddf(struct nx_strbuf *sb, const char *fmt, va_list ap)
{
	va_list again;
	int n;

	nx_strbuf_grow(sb, 64);
	va_copy(again, ap);
	n = vsnprintf(sb->buf + sb->len, sb->alloc - sb->len, fmt, ap);
	if (n >= 0 && (size_t)n >= sb->alloc - sb->len) {
		nx_strbuf_grow(sb, (size_t)n);
		int again_n = vsnprintf(sb->buf + sb->len, sb->alloc - sb->len, fmt, again);
		NX_ASSERT(again_n == n); /* the same arguments print the same length */
	}
	va_end(again);
	if (n >= 0)
		sb->len += (size_t)n;
}

void nx_strbuf_addf(struct nx_strbuf *sb, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	nx_strbuf_vaddf(sb, fmt, ap);
	va_end(ap);
}

char *nx_strbuf_detach(struct nx_strbuf *sb, size_t *len)
{
	char *p;

	if (!sb->buf)
		nx_strbuf_grow(sb, 0), sb->buf[0] = '\0';
	p = sb->buf;
	if (len)
		*len = sb->len;
	nx_strbuf_init(sb);
	return p;
}

