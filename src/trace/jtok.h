/* SPDX-License-Identifier: MIT
 * jtok.h: a pull tokenizer for JSON written for framework traces. It reads the
 * decompressed stream of a struct nx_tin through a fixed window and hands out one
 * token at a time, so memory is bounded by the window, the nesting stack and the
 * longest single string, whatever the file size. It checks the grammar as it goes
 * (commas, colons, literals, number syntax) and reports the byte offset of the first
 * bad byte. Three slips that trace writers make and trace viewers accept are
 * tolerated and counted instead (see struct nx_jtok_slips): a trailing comma before
 * ']' or '}', and a raw control byte (newline, tab ...) inside a string, which is kept
 * as written. They are handled on the branch that would otherwise fail, so they cost
 * nothing on well-formed input. Strings are decoded to
 * UTF-8 (\u escapes and surrogate pairs included; invalid UTF-8 and lone surrogates
 * become U+FFFD, because DuckDB only stores valid UTF-8). Numbers are handed out as
 * their exact lexeme, so nothing is lost for values beyond double or int64 range. */
#ifndef NX_TRACE_JTOK_H
#define NX_TRACE_JTOK_H

#include "common/compat.h"
#include "common/err.h"
#include "common/strbuf.h"
#include "trace/input.h"

#define NX_JTOK_MAX_DEPTH 256
#define NX_JTOK_WINDOW (256 * 1024)

enum nx_jt {
	NX_JT_END = 0,  /* the document is complete */
	NX_JT_OBJ,      /* { */
	NX_JT_OBJ_END,  /* } */
	NX_JT_ARR,      /* [ */
	NX_JT_ARR_END,  /* ] */
	NX_JT_KEY,      /* member name, text in t->text */
	NX_JT_STR,      /* string value, text in t->text */
	NX_JT_NUM,      /* number, lexeme in t->text */
	NX_JT_TRUE,
	NX_JT_FALSE,
	NX_JT_NULL,
};

/* How often one tolerated slip occurred, and the stream offset of the first. */
struct nx_jtok_slip {
	uint64_t n, first;
};

struct nx_jtok_slips {
	struct nx_jtok_slip comma_arr; /* ',' right before ']' */
	struct nx_jtok_slip comma_obj; /* ',' right before '}' */
	struct nx_jtok_slip ctrl;      /* raw bytes 0x01-0x1f inside strings (NUL stays an error) */
};

struct nx_jtok {
	struct nx_tin *in;
	unsigned char *buf;
	size_t pos, len;
	uint64_t base;           /* stream offset of buf[0] */
	bool eof;
	/* The current token's text (NUL-terminated), valid until the next call: read it,
	 * never change it. It points into the window or at own. */
	struct nx_strbuf text;
	struct nx_strbuf own;    /* text that had to be decoded or crossed the window's end */
	unsigned char *held;     /* where an in-place number's NUL stands, or NULL */
	unsigned char held_byte; /* the byte it replaced */
	bool text_plain;         /* the last string had no escape and no raw control byte,
				  * so its text quoted again is the JSON it came as */
	uint64_t tok_off;        /* stream offset of the current token's first byte */
	int depth;
	char stack[NX_JTOK_MAX_DEPTH];
	int state;
	size_t max_string;       /* longest accepted string or number, in bytes */
	bool hit_eof;            /* the last error is a premature end of input */
	struct nx_jtok_slips slips; /* tolerated grammar slips so far */
};

/* Starts tokenizing in; in stays owned by the caller and must outlive t. */
void nx_jtok_init(struct nx_jtok *t, struct nx_tin *in);
void nx_jtok_release(struct nx_jtok *t);

/* Returns the next token kind (> 0), NX_JT_END once the single top-level value and
 * trailing white space are consumed, or a negative code: NX_ETRUNC when the input
 * ends inside the document (t->hit_eof set), NX_ECORRUPT for a grammar error, or the
 * input's own error. The message names the file and the byte offset (in the
 * decompressed text). */
int nx_jtok_next(struct nx_jtok *t, struct nx_err *err);

/* Current nesting depth: 0 at top level, 1 inside the top-level container, ... */
static inline int nx_jtok_depth(const struct nx_jtok *t)
{
	return t->depth;
}

/* After a token that starts a value (kind), consumes the rest of the value and, when
 * out is non-NULL, appends it as compact JSON (strings re-escaped, numbers verbatim).
 * Stops with NX_ECORRUPT when out would grow beyond limit bytes. */
int nx_jtok_capture(struct nx_jtok *t, int kind, struct nx_strbuf *out, size_t limit,
		    struct nx_err *err);

/* Fails with a message naming the file and the current token's offset. */
int nx_jtok_fail(struct nx_jtok *t, int code, struct nx_err *err, const char *fmt, ...)
	NX_PRINTF(4, 5);

#endif
