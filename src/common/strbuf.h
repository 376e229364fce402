/* SPDX-License-Identifier: MIT
 * strbuf.h: a growable, always NUL-terminated byte buffer (git's strbuf, reduced). */
#ifndef NX_COMMON_STRBUF_H
#define NX_COMMON_STRBUF_H

#include "common/compat.h"

#include <stdarg.h>
#include <string.h>

struct nx_strbuf {
	char *buf;
	size_t len;
	size_t alloc;
};

#define NX_STRBUF_INIT { NULL, 0, 0 }

void nx_strbuf_init(struct nx_strbuf *sb);
void nx_strbuf_release(struct nx_strbuf *sb);
void nx_strbuf_grow(struct nx_strbuf *sb, size_t extra);
/* Inline, as the few below: the trace reader calls them for every token. */
static inline void nx_strbuf_reset(struct nx_strbuf *sb)
{
	sb->len = 0;
	if (sb->buf)
		sb->buf[0] = '\0';
}
static inline void nx_strbuf_add(struct nx_strbuf *sb, const void *data, size_t len)
{
	if (sb->len + len + 1 > sb->alloc)
		nx_strbuf_grow(sb, len);
	if (len) /* memcpy wants a valid source even for 0 bytes */
		memcpy(sb->buf + sb->len, data, len);
	sb->len += len;
	sb->buf[sb->len] = '\0';
}
void nx_strbuf_addstr(struct nx_strbuf *sb, const char *s);
/* Appends v in decimal, as "%" PRId64 would, without printf's parsing of a format. */
void nx_strbuf_addi64(struct nx_strbuf *sb, int64_t v);
/* v in decimal, NUL-terminated, written at the end of buf; returns where it starts. */
#define NX_I64_TEXT 21 /* "-9223372036854775808" and its NUL */
char *nx_i64_text(int64_t v, char buf[NX_I64_TEXT]);
static inline void nx_strbuf_addch(struct nx_strbuf *sb, char c)
{
	if (sb->len + 2 > sb->alloc)
		nx_strbuf_grow(sb, 1);
	sb->buf[sb->len++] = c;
	sb->buf[sb->len] = '\0';
}
void nx_strbuf_addf(struct nx_strbuf *sb, const char *fmt, ...) NX_PRINTF(2, 3);
void nx_strbuf_vaddf(struct nx_strbuf *sb, const char *fmt, va_list ap) NX_PRINTF(2, 0);
/* Hands the buffer to the caller (who frees it) and resets sb. */
char *nx_strbuf_detach(struct nx_strbuf *sb, size_t *len);
/* Returns the contents; an empty buffer yields "". */
static inline const char *nx_strbuf_str(const struct nx_strbuf *sb)
{
	return sb->buf ? sb->buf : "";
}

#endif
