/* SPDX-License-Identifier: MIT
 * json_writer.c: streaming JSON text writer (see json_writer.h). */
#include "common/compat.h"
#include "common/json_writer.h"
#include "common/json_run.h"

#include <math.h>
#include <string.h>

void nx_jw_init(struct nx_jw *jw, struct nx_strbuf *out, bool pretty)
{
	memset(jw, 0, sizeof(*jw));
	jw->out = out;
	jw->pretty = pretty;
}

static void indent(struct nx_jw *jw)
{
	if (!jw->pretty)
		return;
	nx_strbuf_addch(jw->out, '\n');
	for (int i = 0; i < jw->depth; i++)
		nx_strbuf_addstr(jw->out, "  ");
}

/* Called before every value or key: separates it from the previous sibling. */
static void before_item(struct nx_jw *jw)
{
	if (jw->need_comma[jw->depth])
		nx_strbuf_addch(jw->out, ',');
	jw->need_comma[jw->depth] = true;
	if (jw->depth)
		indent(jw);
}

static void value_prefix(struct nx_jw *jw)
{
	/* A value right after a key is not a new sibling. */
	if (jw->after_key) {
		jw->after_key = false;
		return;
	}
	before_item(jw);
}

static void open(struct nx_jw *jw, char c)
{
	value_prefix(jw);
	nx_strbuf_addch(jw->out, c);
	if (jw->depth < 63)
		jw->depth++;
	jw->need_comma[jw->depth] = false;
}

static void close_(struct nx_jw *jw, char c)
{
	bool had = jw->need_comma[jw->depth];
	if (jw->depth > 0)
		jw->depth--;
	if (had)
		indent(jw);
	nx_strbuf_addch(jw->out, c);
}

void nx_jw_object_begin(struct nx_jw *jw) { open(jw, '{'); }
void nx_jw_object_end(struct nx_jw *jw) { close_(jw, '}'); }
void nx_jw_array_begin(struct nx_jw *jw) { open(jw, '['); }
void nx_jw_array_end(struct nx_jw *jw) { close_(jw, ']'); }

void nx_jw_key(struct nx_jw *jw, const char *key)
{
	before_item(jw);
	nx_json_quote(jw->out, key, strlen(key));
	nx_strbuf_addstr(jw->out, jw->pretty ? ": " : ":");
	jw->after_key = true;
}

void nx_jw_string(struct nx_jw *jw, const char *s)
{
	if (!s) {
		nx_jw_null(jw);
		return;
	}
	nx_jw_string_len(jw, s, strlen(s));
}

void nx_jw_string_len(struct nx_jw *jw, const char *s, size_t len)
{
	value_prefix(jw);
	nx_json_quote(jw->out, s, len);
}

void nx_jw_int(struct nx_jw *jw, int64_t v)
{
	value_prefix(jw);
	nx_strbuf_addf(jw->out, "%" PRId64, v);
}

void nx_jw_uint(struct nx_jw *jw, uint64_t v)
{
	value_prefix(jw);
	nx_strbuf_addf(jw->out, "%" PRIu64, v);
}

void nx_jw_double(struct nx_jw *jw, double v)
{
	value_prefix(jw);
	if (!isfinite(v))
		nx_strbuf_addstr(jw->out, "null");
	else if (v == (double)(int64_t)v && fabs(v) < 9e15)
		nx_strbuf_addf(jw->out, "%.1f", v);
	else
		nx_strbuf_addf(jw->out, "%.17g", v);
}

void nx_jw_bool(struct nx_jw *jw, bool v)
{
	value_prefix(jw);
	nx_strbuf_addstr(jw->out, v ? "true" : "false");
}

void nx_jw_null(struct nx_jw *jw)
{
	value_prefix(jw);
	nx_strbuf_addstr(jw->out, "null");
}

void nx_jw_raw(struct nx_jw *jw, const char *json)
{
	value_prefix(jw);
	nx_strbuf_addstr(jw->out, json);
}

void nx_json_quote(struct nx_strbuf *out, const char *s, size_t len)
{
	static const char hex[] = "0123456789abcdef";

	nx_strbuf_grow(out, len + 2);
	nx_strbuf_addch(out, '"');
	for (size_t i = 0; i < len; i++) {
		bool high = false;
		size_t run = i + nx_json_plain_run((const unsigned char *)s + i, len - i, &high);
		nx_strbuf_add(out, s + i, run - i); /* the bytes that need no escape, at once */
		if ((i = run) == len)
			break;
		unsigned char c = (unsigned char)s[i];
		switch (c) {
		case '"': nx_strbuf_addstr(out, "\\\""); break;
		case '\\': nx_strbuf_addstr(out, "\\\\"); break;
		case '\n': nx_strbuf_addstr(out, "\\n"); break;
		case '\r': nx_strbuf_addstr(out, "\\r"); break;
		case '\t': nx_strbuf_addstr(out, "\\t"); break;
		default: {
			char u[7] = { '\\', 'u', '0', '0', hex[c >> 4], hex[c & 15], 0 };
			nx_strbuf_addstr(out, u);
		}
		}
	}
	nx_strbuf_addch(out, '"');
}
