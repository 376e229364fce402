/* SPDX-License-Identifier: MIT
 * json_writer.h: appends JSON to a strbuf without building an object tree. The
 * caller emits begin/end pairs; commas are inserted automatically. */
#ifndef NX_COMMON_JSON_WRITER_H
#define NX_COMMON_JSON_WRITER_H

#include "common/compat.h"
#include "common/strbuf.h"

struct nx_jw {
	struct nx_strbuf *out;
	int depth;
	bool need_comma[64];
	bool pretty;
	bool after_key; /* the next value belongs to the key just written */
};

void nx_jw_init(struct nx_jw *jw, struct nx_strbuf *out, bool pretty);
void nx_jw_object_begin(struct nx_jw *jw);
void nx_jw_object_end(struct nx_jw *jw);
void nx_jw_array_begin(struct nx_jw *jw);
void nx_jw_array_end(struct nx_jw *jw);
/* Writes a member key inside an object; the next value call writes its value. */
void nx_jw_key(struct nx_jw *jw, const char *key);
void nx_jw_string(struct nx_jw *jw, const char *s);
void nx_jw_string_len(struct nx_jw *jw, const char *s, size_t len);
void nx_jw_int(struct nx_jw *jw, int64_t v);
void nx_jw_uint(struct nx_jw *jw, uint64_t v);
/* Non-finite doubles are written as null (JSON has no NaN). */
void nx_jw_double(struct nx_jw *jw, double v);
void nx_jw_bool(struct nx_jw *jw, bool v);
void nx_jw_null(struct nx_jw *jw);
/* Appends already-encoded JSON text as one value. */
void nx_jw_raw(struct nx_jw *jw, const char *json);

/* Escapes s as a JSON string literal (with quotes) into out. */
void nx_json_quote(struct nx_strbuf *out, const char *s, size_t len);
/* The same for text known to hold no '"', '\\' or control byte: quotes around it. */
static inline void nx_json_quote_plain(struct nx_strbuf *out, const char *s, size_t len)
{
	nx_strbuf_grow(out, len + 2);
	nx_strbuf_addch(out, '"');
	nx_strbuf_add(out, s, len);
	nx_strbuf_addch(out, '"');
}

#endif
