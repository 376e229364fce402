/* SPDX-License-Identifier: MIT
 * jtok.c: the streaming JSON tokenizer (see jtok.h). A small state machine decides
 * what may come next; the lexers for strings, numbers and literals read straight from
 * the window and refill it when they reach its end, so a token may straddle windows.
 * The tolerated slips (trailing commas, raw control bytes) sit on the branches that
 * used to fail, off the paths well-formed input takes. */
#include "common/compat.h"
#include "trace/jtok.h"
#include "common/json_run.h"
#include "common/json_writer.h"
#include "common/xalloc.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The longest number read, in bytes: far more than any number a trace writes (a double
 * needs 24), few enough that a run of digits cannot grow the token without end. */
#define MAX_NUMBER_BYTES 4096

enum {
	S_TOP,       /* the top-level value */
	S_DONE,      /* after the top-level value: only white space may follow */
	S_ARR_FIRST, /* after '[': a value or ']' */
	S_ARR_NEXT,  /* after ',' in an array: a value */
	S_OBJ_FIRST, /* after '{': a member name or '}' */
	S_OBJ_NEXT,  /* after ',' in an object: a member name */
	S_COLON,     /* after a member name */
	S_MEMBER,    /* after ':': a value */
	S_AFTER,     /* after a value inside a container: ',' or the closer */
};

void nx_jtok_init(struct nx_jtok *t, struct nx_tin *in)
{
	memset(t, 0, sizeof(*t));
	t->in = in;
	t->buf = nx_xmalloc(NX_JTOK_WINDOW);
	t->max_string = 64u << 20;
	nx_strbuf_init(&t->text);
	nx_strbuf_init(&t->own);
	t->state = S_TOP;
}

void nx_jtok_release(struct nx_jtok *t)
{
	free(t->buf);
	nx_strbuf_release(&t->own);
	nx_strbuf_init(&t->text);
	t->buf = NULL;
}

static int vfail(struct nx_jtok *t, int code, uint64_t off, struct nx_err *err,
		 const char *fmt, va_list ap)
{
	char what[512];

	vsnprintf(what, sizeof(what), fmt, ap);
	return nx_errf(err, code, "'%s': at byte %" PRIu64 "%s: %s", t->in->path, off,
		       t->in->gz ? " of the decompressed JSON" : "", what);
}

int nx_jtok_fail(struct nx_jtok *t, int code, struct nx_err *err, const char *fmt, ...)
{
	va_list ap;
	int rc;

	va_start(ap, fmt);
	rc = vfail(t, code, t->tok_off, err, fmt, ap);
	va_end(ap);
	return rc;
}

/* Fails at the current read position. */
static int fail_here(struct nx_jtok *t, int code, struct nx_err *err, const char *fmt, ...)
	NX_PRINTF(4, 5);
static int fail_here(struct nx_jtok *t, int code, struct nx_err *err, const char *fmt, ...)
{
	va_list ap;
	int rc;

	va_start(ap, fmt);
	rc = vfail(t, code, t->base + t->pos, err, fmt, ap);
	va_end(ap);
	return rc;
}

static int early_end(struct nx_jtok *t, struct nx_err *err, const char *inside)
{
	t->hit_eof = true;
	return fail_here(t, NX_ETRUNC, err, "the JSON ends early, inside %s", inside);
}

/* Makes at least one byte available: 1, or 0 at the end of input, or an error. */
static int more(struct nx_jtok *t, struct nx_err *err)
{
	long n;

	if (t->pos < t->len)
		return 1;
	if (t->eof)
		return 0;
	t->base += t->len;
	t->pos = t->len = 0;
	n = nx_tin_read(t->in, t->buf, NX_JTOK_WINDOW, err);
	if (n < 0)
		return (int)n;
	if (n == 0) {
		t->eof = true;
		return 0;
	}
	t->len = (size_t)n;
	return 1;
}

/* Next byte (0..255), -1 at the end of input, or an error code below -1. */
static int getb(struct nx_jtok *t, struct nx_err *err)
{
	int rc = more(t, err);
	if (rc <= 0)
		return rc == 0 ? -1 : rc;
	return t->buf[t->pos++];
}

static const char *where(const struct nx_jtok *t)
{
	if (t->depth == 0)
		return "the top-level value";
	return t->stack[t->depth - 1] == 'a' ? "an array" : "an object";
}

static void put_utf8(struct nx_strbuf *sb, uint32_t cp)
{
	char u[4];

	if (cp < 0x80) {
		nx_strbuf_addch(sb, (char)cp);
	} else if (cp < 0x800) {
		u[0] = (char)(0xc0 | (cp >> 6));
		u[1] = (char)(0x80 | (cp & 0x3f));
		nx_strbuf_add(sb, u, 2);
	} else if (cp < 0x10000) {
		u[0] = (char)(0xe0 | (cp >> 12));
		u[1] = (char)(0x80 | ((cp >> 6) & 0x3f));
		u[2] = (char)(0x80 | (cp & 0x3f));
		nx_strbuf_add(sb, u, 3);
	} else {
		u[0] = (char)(0xf0 | (cp >> 18));
		u[1] = (char)(0x80 | ((cp >> 12) & 0x3f));
		u[2] = (char)(0x80 | ((cp >> 6) & 0x3f));
		u[3] = (char)(0x80 | (cp & 0x3f));
		nx_strbuf_add(sb, u, 4);
	}
}

/* Length of the valid UTF-8 sequence at s (n bytes left), or 0 when it is invalid. */
static size_t utf8_len(const unsigned char *s, size_t n)
{
	uint32_t cp;
	size_t len;

	if (s[0] < 0x80)
		return 1;
	if (s[0] >= 0xc2 && s[0] <= 0xdf)
		len = 2, cp = s[0] & 0x1f;
	else if (s[0] >= 0xe0 && s[0] <= 0xef)
		len = 3, cp = s[0] & 0x0f;
	else if (s[0] >= 0xf0 && s[0] <= 0xf4)
		len = 4, cp = s[0] & 0x07;
	else
		return 0;
	if (len > n)
		return 0;
	for (size_t i = 1; i < len; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		cp = (cp << 6) | (s[i] & 0x3f);
	}
	if ((len == 3 && cp < 0x800) || (len == 4 && (cp < 0x10000 || cp > 0x10ffff)) ||
	    (cp >= 0xd800 && cp <= 0xdfff))
		return 0;
	return len;
}

/* Length of the valid UTF-8 prefix of s[0..n). */
static size_t utf8_valid_prefix(const unsigned char *s, size_t n)
{
	size_t i = 0;

	while (i < n) {
		size_t l = utf8_len(s + i, n - i);
		if (!l)
			break;
		i += l;
	}
	return i;
}

/* Replaces invalid UTF-8 in sb[from..] by U+FFFD, one per bad byte. */
static void utf8_repair(struct nx_strbuf *sb, size_t from)
{
	const unsigned char *s = (const unsigned char *)sb->buf;
	size_t i = from + utf8_valid_prefix(s + from, sb->len - from), n = sb->len;

	if (i >= n)
		return;
	struct nx_strbuf fixed = NX_STRBUF_INIT;
	nx_strbuf_add(&fixed, sb->buf, i);
	while (i < n) {
		size_t l = utf8_len(s + i, n - i);
		if (l) {
			nx_strbuf_add(&fixed, s + i, l);
			i += l;
		} else {
			put_utf8(&fixed, 0xfffd);
			i++;
		}
	}
	nx_strbuf_release(sb);
	*sb = fixed;
}

static int hex4(struct nx_jtok *t, uint32_t *out, struct nx_err *err)
{
	uint32_t v = 0;

	for (int i = 0; i < 4; i++) {
		int c = getb(t, err);
		if (c == -1)
			return early_end(t, err, "a string");
		if (c < -1)
			return c;
		if (c >= '0' && c <= '9')
			v = v * 16 + (uint32_t)(c - '0');
		else if (c >= 'a' && c <= 'f')
			v = v * 16 + (uint32_t)(c - 'a' + 10);
		else if (c >= 'A' && c <= 'F')
			v = v * 16 + (uint32_t)(c - 'A' + 10);
		else
			return fail_here(t, NX_ECORRUPT, err, "bad \\u escape in a string");
	}
	*out = v;
	return 0;
}

static int escape(struct nx_jtok *t, int c, struct nx_err *err);

/* A \u escape, with its low surrogate when it is a high one. A lone surrogate
 * becomes U+FFFD. */
static int unicode_escape(struct nx_jtok *t, struct nx_err *err)
{
	uint32_t cp, lo;
	int rc = hex4(t, &cp, err);

	if (rc)
		return rc;
	if (cp >= 0xdc00 && cp <= 0xdfff)
		cp = 0xfffd;
	if (cp < 0xd800 || cp > 0xdbff) {
		put_utf8(&t->own, cp);
		return 0;
	}
	if ((rc = more(t, err)) < 0)
		return rc;
	if (rc == 0 || t->buf[t->pos] != '\\') {
		put_utf8(&t->own, 0xfffd);
		return 0;
	}
	t->pos++;
	int c = getb(t, err);
	if (c == -1)
		return early_end(t, err, "a string");
	if (c < -1)
		return c;
	if (c != 'u') {
		put_utf8(&t->own, 0xfffd);
		return escape(t, c, err);
	}
	if ((rc = hex4(t, &lo, err)))
		return rc;
	if (lo >= 0xdc00 && lo <= 0xdfff) {
		put_utf8(&t->own, 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00));
		return 0;
	}
	put_utf8(&t->own, 0xfffd);
	if (lo >= 0xd800 && lo <= 0xdfff)
		lo = 0xfffd;
	put_utf8(&t->own, lo);
	return 0;
}

/* The character after a backslash. */
static int escape(struct nx_jtok *t, int c, struct nx_err *err)
{
	switch (c) {
	case '"': nx_strbuf_addch(&t->own, '"'); return 0;
	case '\\': nx_strbuf_addch(&t->own, '\\'); return 0;
	case '/': nx_strbuf_addch(&t->own, '/'); return 0;
	case 'b': nx_strbuf_addch(&t->own, '\b'); return 0;
	case 'f': nx_strbuf_addch(&t->own, '\f'); return 0;
	case 'n': nx_strbuf_addch(&t->own, '\n'); return 0;
	case 'r': nx_strbuf_addch(&t->own, '\r'); return 0;
	case 't': nx_strbuf_addch(&t->own, '\t'); return 0;
	case 'u': return unicode_escape(t, err);
	default:
		return fail_here(t, NX_ECORRUPT, err, "unknown escape '\\%c' in a string",
				 c >= 0x20 && c < 0x7f ? c : '?');
	}
}

static void slip(struct nx_jtok_slip *s, uint64_t off)
{
	if (!s->n++)
		s->first = off;
}

/* Makes t->text a view of len bytes at buf (NUL-terminated there). Field by field: a
 * 16-byte copy of fields just stored 8 bytes at a time stalls on those stores. */
static void text_view(struct nx_jtok *t, char *buf, size_t len)
{
	t->text.buf = buf;
	t->text.len = len;
	t->text.alloc = 0;
}

/* A string that lies whole in the window with nothing to decode or repair is handed
 * out where it is: t->text points into the window, and its closing quote, consumed
 * already, becomes the NUL after it. Returns false, having changed nothing, for any
 * other string. */
static bool string_in_place(struct nx_jtok *t)
{
	unsigned char *p = t->buf + t->pos;
	size_t n = t->len - t->pos;
	bool high = false;
	size_t run = nx_json_plain_run(p, n, &high);

	if (run == n || p[run] != '"' || run > t->max_string ||
	    (high && utf8_valid_prefix(p, run) != run))
		return false;
	p[run] = '\0';
	text_view(t, (char *)p, run);
	t->pos += run + 1;
	return true;
}

/* Reads a string body after its opening quote into t->text: in place when it can
 * (string_in_place), else decoded into t->own. */
static int lex_string(struct nx_jtok *t, struct nx_err *err)
{
	bool high = false;
	int rc;

	t->text_plain = true;
	if (t->pos < t->len && string_in_place(t))
		return 0;
	nx_strbuf_init(&t->text); /* until own holds the whole string */
	nx_strbuf_reset(&t->own);
	for (;;) {
		if ((rc = more(t, err)) <= 0)
			return rc ? rc : early_end(t, err, "a string");
		const unsigned char *p = t->buf + t->pos, *e = t->buf + t->len;
		const unsigned char *q = p + nx_json_plain_run(p, (size_t)(e - p), &high);
		nx_strbuf_add(&t->own, p, (size_t)(q - p));
		t->pos += (size_t)(q - p);
		if (t->own.len > t->max_string)
			return fail_here(t, NX_ECORRUPT, err, "a string is longer than %zu bytes",
					 t->max_string);
		if (q == e)
			continue;
		if (*q == '"') {
			t->pos++;
			break;
		}
		if (*q < 0x20) {
			/* Strict JSON wants it escaped; writers leave it raw and the intent is
			 * plain, so it is kept as written. A NUL cannot live in a text column. */
			if (!*q)
				return fail_here(t, NX_ECORRUPT, err,
						 "NUL byte inside a string (it must be escaped as \\u0000)");
			slip(&t->slips.ctrl, t->base + t->pos);
			t->text_plain = false;
			nx_strbuf_addch(&t->own, (char)*q);
			t->pos++;
			continue;
		}
		t->pos++; /* the backslash */
		t->text_plain = false;
		int c = getb(t, err);
		if (c == -1)
			return early_end(t, err, "a string");
		if (c < -1)
			return c;
		if ((rc = escape(t, c, err)))
			return rc;
	}
	if (high)
		utf8_repair(&t->own, 0);
	text_view(t, t->own.buf, t->own.len);
	return 0;
}

/* True when s is a JSON number: -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)? */
static bool valid_number(const char *s)
{
	if (*s == '-')
		s++;
	if (*s == '0')
		s++;
	else if (*s >= '1' && *s <= '9')
		while (*s >= '0' && *s <= '9')
			s++;
	else
		return false;
	if (*s == '.') {
		s++;
		if (!(*s >= '0' && *s <= '9'))
			return false;
		while (*s >= '0' && *s <= '9')
			s++;
	}
	if (*s == 'e' || *s == 'E') {
		s++;
		if (*s == '+' || *s == '-')
			s++;
		if (!(*s >= '0' && *s <= '9'))
			return false;
		while (*s >= '0' && *s <= '9')
			s++;
	}
	return *s == '\0';
}

static inline bool number_byte(unsigned char c)
{
	return (c >= '0' && c <= '9') || c == '-' || c == '+' || c == '.' || c == 'e' || c == 'E';
}

static inline bool digit(unsigned char c)
{
	return c >= '0' && c <= '9';
}

/* The end of the JSON number at b[p], scanned with its grammar in one pass, when it is
 * valid, ends before b[n] and is followed by a byte that cannot continue it; else 0
 * (the caller then takes lex_number's general path, which finds every error). */
static size_t number_end(const unsigned char *b, size_t p, size_t n)
{
	if (p < n && b[p] == '-')
		p++;
	if (p < n && b[p] == '0')
		p++;
	else if (p < n && b[p] >= '1' && b[p] <= '9')
		while (++p < n && digit(b[p]))
			;
	else
		return 0;
	if (p < n && b[p] == '.') {
		if (++p >= n || !digit(b[p]))
			return 0;
		while (++p < n && digit(b[p]))
			;
	}
	if (p < n && (b[p] == 'e' || b[p] == 'E')) {
		if (++p < n && (b[p] == '+' || b[p] == '-'))
			p++;
		if (p >= n || !digit(b[p]))
			return 0;
		while (++p < n && digit(b[p]))
			;
	}
	return p < n && !number_byte(b[p]) ? p : 0;
}

/* A number's bytes. The usual number, whole in the window and valid, is found and
 * checked in one pass by number_end; any other is read a run of the window at a time,
 * then checked by valid_number; one byte past MAX_NUMBER_BYTES fails. A number
 * that ends inside the window is handed out in place: the delimiter after it, not read
 * yet, is held aside for the NUL, and the next call of nx_jtok_next puts it back. One
 * that crosses the window's end is gathered in t->own. */
static int lex_number(struct nx_jtok *t, struct nx_err *err)
{
	size_t stop = number_end(t->buf, t->pos, t->len);
	int rc;

	if (stop && stop - t->pos <= MAX_NUMBER_BYTES) {
		/* the usual case: whole in the window (so the input goes on after it),
		 * checked on the way */
		t->held = t->buf + stop;
		t->held_byte = *t->held;
		*t->held = '\0';
		text_view(t, (char *)t->buf + t->pos, stop - t->pos);
		t->pos = stop;
		return 0;
	}
	nx_strbuf_init(&t->text); /* until the whole number is in */
	nx_strbuf_reset(&t->own);
	for (;;) {
		if ((rc = more(t, err)) < 0)
			return rc;
		if (rc == 0)
			break;
		size_t p = t->pos, end = t->len, room = MAX_NUMBER_BYTES + 1 - t->own.len;
		if (end - p > room)
			end = p + room;
		while (p < end && number_byte(t->buf[p]))
			p++;
		if (!t->own.len && p < t->len && p - t->pos <= MAX_NUMBER_BYTES) {
			t->held = t->buf + p;
			t->held_byte = *t->held;
			*t->held = '\0';
			text_view(t, (char *)t->buf + t->pos, p - t->pos);
			t->pos = p;
			break;
		}
		nx_strbuf_add(&t->own, t->buf + t->pos, p - t->pos);
		t->pos = p;
		if (t->own.len > MAX_NUMBER_BYTES)
			return nx_jtok_fail(t, NX_ECORRUPT, err, "a number is longer than %d bytes",
					    MAX_NUMBER_BYTES);
		if (p < t->len)
			break;
	}
	if (!t->held)
		text_view(t, t->own.buf, t->own.len);
	if (!valid_number(nx_strbuf_str(&t->text)))
		return nx_jtok_fail(t, NX_ECORRUPT, err, "'%s' is not a valid JSON number",
				    nx_strbuf_str(&t->text));
	if (t->eof && t->depth > 0)
		return early_end(t, err, where(t));
	return 0;
}

static int lex_literal(struct nx_jtok *t, const char *word, struct nx_err *err)
{
	for (const char *w = word; *w; w++) {
		int c = getb(t, err);
		if (c == -1)
			return early_end(t, err, "a literal");
		if (c < -1)
			return c;
		if (c != *w)
			return nx_jtok_fail(t, NX_ECORRUPT, err,
					    "invalid literal (expected '%s')", word);
	}
	return 0;
}

static void after_value(struct nx_jtok *t)
{
	t->state = t->depth == 0 ? S_DONE : S_AFTER;
}

static int push(struct nx_jtok *t, char kind, struct nx_err *err)
{
	if (t->depth >= NX_JTOK_MAX_DEPTH)
		return nx_jtok_fail(t, NX_ECORRUPT, err, "nesting deeper than %d levels",
				    NX_JTOK_MAX_DEPTH);
	t->stack[t->depth++] = kind;
	t->state = kind == 'a' ? S_ARR_FIRST : S_OBJ_FIRST;
	return kind == 'a' ? NX_JT_ARR : NX_JT_OBJ;
}

static int pop(struct nx_jtok *t)
{
	char kind = t->stack[--t->depth];
	after_value(t);
	return kind == 'a' ? NX_JT_ARR_END : NX_JT_OBJ_END;
}

static int value(struct nx_jtok *t, unsigned char c, struct nx_err *err)
{
	int rc;

	switch (c) {
	case '{':
		t->pos++;
		return push(t, 'o', err);
	case '[':
		t->pos++;
		return push(t, 'a', err);
	case '"':
		t->pos++;
		if ((rc = lex_string(t, err)))
			return rc;
		after_value(t);
		return NX_JT_STR;
	case 't':
		rc = lex_literal(t, "true", err);
		after_value(t);
		return rc ? rc : NX_JT_TRUE;
	case 'f':
		rc = lex_literal(t, "false", err);
		after_value(t);
		return rc ? rc : NX_JT_FALSE;
	case 'n':
		rc = lex_literal(t, "null", err);
		after_value(t);
		return rc ? rc : NX_JT_NULL;
	default:
		if (c == '-' || (c >= '0' && c <= '9')) {
			if ((rc = lex_number(t, err)))
				return rc;
			after_value(t);
			return NX_JT_NUM;
		}
		return nx_jtok_fail(t, NX_ECORRUPT, err, "expected a value in %s, found %s%c%s",
				    where(t), c >= 0x20 && c < 0x7f ? "'" : "byte 0x",
				    c >= 0x20 && c < 0x7f ? c : '?', c >= 0x20 && c < 0x7f ? "'" : "");
	}
}

static const char *shown(unsigned char c, char *buf)
{
	if (c >= 0x20 && c < 0x7f)
		snprintf(buf, 8, "'%c'", c);
	else
		snprintf(buf, 8, "0x%02x", c);
	return buf;
}

/* After ':' or ',': the next token's first byte, past the single space writers
 * usually put there, when it is in the window (true, and the token starts there);
 * false leaves anything else (more white space, the window's end) to the general loop. */
static inline bool peek_token(struct nx_jtok *t, unsigned char *c)
{
	if (t->pos < t->len && t->buf[t->pos] == ' ')
		t->pos++;
	if (t->pos >= t->len || t->buf[t->pos] <= ' ')
		return false;
	*c = t->buf[t->pos];
	t->tok_off = t->base + t->pos;
	return true;
}

int nx_jtok_next(struct nx_jtok *t, struct nx_err *err)
{
	char sh[8];
	int rc;

	if (t->held) { /* the byte after an in-place number */
		*t->held = t->held_byte;
		t->held = NULL;
	}
	for (;;) {
		/* White space, a run of the window at a time. */
		for (;;) {
			const unsigned char *b = t->buf;
			size_t p = t->pos, n = t->len;

			while (p < n && (b[p] == ' ' || b[p] == '\n' || b[p] == '\r' || b[p] == '\t'))
				p++;
			t->pos = p;
			if (p < n) {
				rc = 1;
				break;
			}
			if ((rc = more(t, err)) <= 0) {
				if (rc < 0)
					return rc;
				break;
			}
		}
		t->tok_off = t->base + t->pos;
		if (rc == 0) {
			if (t->state == S_DONE)
				return NX_JT_END;
			if (t->state == S_TOP)
				return fail_here(t, NX_ECORRUPT, err, "the file holds no JSON value");
			return early_end(t, err, where(t));
		}
		unsigned char c = t->buf[t->pos];
	dispatch:
		switch (t->state) {
		case S_DONE:
			return nx_jtok_fail(t, NX_ECORRUPT, err,
					    "unexpected %s after the end of the JSON document",
					    shown(c, sh));
		case S_COLON:
			if (c != ':')
				return nx_jtok_fail(t, NX_ECORRUPT, err,
						    "expected ':' after a member name, found %s",
						    shown(c, sh));
			t->pos++;
			t->state = S_MEMBER;
			if (peek_token(t, &c))
				goto dispatch;
			continue;
		case S_AFTER:
			if (c == ',') {
				t->pos++;
				t->state = t->stack[t->depth - 1] == 'a' ? S_ARR_NEXT : S_OBJ_NEXT;
				if (peek_token(t, &c))
					goto dispatch;
				continue;
			}
			if (c == ']' && t->stack[t->depth - 1] == 'a') {
				t->pos++;
				return pop(t);
			}
			if (c == '}' && t->stack[t->depth - 1] == 'o') {
				t->pos++;
				return pop(t);
			}
			return nx_jtok_fail(t, NX_ECORRUPT, err, "expected ',' or '%c' in %s, found %s",
					    t->stack[t->depth - 1] == 'a' ? ']' : '}', where(t),
					    shown(c, sh));
		case S_OBJ_FIRST:
		case S_OBJ_NEXT:
			if (c == '"') {
				t->pos++;
				if ((rc = lex_string(t, err)))
					return rc;
				t->state = S_COLON;
				return NX_JT_KEY;
			}
			if (c == '}' && t->state == S_OBJ_FIRST) {
				t->pos++;
				return pop(t);
			}
			if (c == '}') { /* a trailing comma, tolerated */
				slip(&t->slips.comma_obj, t->tok_off);
				t->pos++;
				return pop(t);
			}
			return nx_jtok_fail(t, NX_ECORRUPT, err,
					    "expected a member name in quotes, found %s", shown(c, sh));
		case S_ARR_FIRST:
			if (c == ']') {
				t->pos++;
				return pop(t);
			}
			return value(t, c, err);
		case S_ARR_NEXT:
			if (c == ']') { /* a trailing comma, tolerated */
				slip(&t->slips.comma_arr, t->tok_off);
				t->pos++;
				return pop(t);
			}
			return value(t, c, err);
		default: /* S_TOP, S_MEMBER */
			return value(t, c, err);
		}
	}
}

static bool is_scalar(int kind)
{
	return kind == NX_JT_STR || kind == NX_JT_NUM || kind == NX_JT_TRUE ||
	       kind == NX_JT_FALSE || kind == NX_JT_NULL;
}

static void emit(struct nx_jtok *t, int kind, struct nx_strbuf *out)
{
	switch (kind) {
	case NX_JT_OBJ: nx_strbuf_addch(out, '{'); break;
	case NX_JT_OBJ_END: nx_strbuf_addch(out, '}'); break;
	case NX_JT_ARR: nx_strbuf_addch(out, '['); break;
	case NX_JT_ARR_END: nx_strbuf_addch(out, ']'); break;
	case NX_JT_KEY:
	case NX_JT_STR:
		if (t->text_plain)
			nx_json_quote_plain(out, nx_strbuf_str(&t->text), t->text.len);
		else
			nx_json_quote(out, nx_strbuf_str(&t->text), t->text.len);
		if (kind == NX_JT_KEY)
			nx_strbuf_addch(out, ':');
		break;
	case NX_JT_NUM: nx_strbuf_add(out, t->text.buf, t->text.len); break;
	case NX_JT_TRUE: nx_strbuf_addstr(out, "true"); break;
	case NX_JT_FALSE: nx_strbuf_addstr(out, "false"); break;
	default: nx_strbuf_addstr(out, "null"); break;
	}
}

int nx_jtok_capture(struct nx_jtok *t, int kind, struct nx_strbuf *out, size_t limit,
		    struct nx_err *err)
{
	int stop = t->depth - 1; /* depth at which the value's closer returns */
	bool comma = false;
	size_t start = out ? out->len : 0;

	if (out)
		emit(t, kind, out);
	if (is_scalar(kind))
		return 0;
	for (;;) {
		int k = nx_jtok_next(t, err);
		if (k < 0)
			return k;
		if (out) {
			if (comma && (k == NX_JT_KEY || is_scalar(k) || k == NX_JT_OBJ || k == NX_JT_ARR))
				nx_strbuf_addch(out, ',');
			emit(t, k, out);
			if (out->len - start > limit)
				return nx_jtok_fail(t, NX_ECORRUPT, err,
						    "a value is larger than %zu bytes", limit);
		}
		comma = !(k == NX_JT_KEY || k == NX_JT_OBJ || k == NX_JT_ARR);
		if ((k == NX_JT_OBJ_END || k == NX_JT_ARR_END) && t->depth == stop)
			return 0;
	}
}
