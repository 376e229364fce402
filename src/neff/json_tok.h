/* SPDX-License-Identifier: MIT
 * json_tok.h: one JSON value as a flat array of tokens, for the NEFF reader's per-element
 * parse functions: no allocation per value (the tokens and the strings' copies live in
 * two buffers the caller reuses), where a jansson tree costs a malloc per value and a
 * hash table per object (three quarters of reading a real NKI kernel's NEFF).
 *
 * A value gets its tokens one of two ways, with the same result:
 * - nx_jt_parse, our reader of the plain forms only: strings of printable ASCII without
 *   escapes, integers of at most 18 digits, literals, objects without a repeated key,
 *   nesting to NX_JT_MAX_DEPTH. Anything else it declines (0), leaving the value to
 *   jansson, which then accepts it or names the fault as before. So it never decides a
 *   fault itself, and what it accepts jansson reads to the same values.
 * - nx_jt_from_json, a copy of a jansson tree (the declined elements, the small members'
 *   top-level values).
 * The text handed to nx_jt_parse has passed nx_jscan_value (json_scan.h); the reader
 * checks the syntax again all the same, declining what is not valid. */
#ifndef NX_NEFF_JSON_TOK_H
#define NX_NEFF_JSON_TOK_H

#include "common/compat.h"

#include <jansson.h>

/* The deepest value nx_jt_parse reads itself (its own top level is depth 1). */
#define NX_JT_MAX_DEPTH 64
#define NX_JT_NONE UINT32_MAX

struct nx_jt_tok {
	uint8_t type;     /* a json_type: JSON_OBJECT ... JSON_NULL */
	uint32_t next;    /* the token after this value and all inside it */
	uint32_t key;     /* an object member's key: its offset in str, else NX_JT_NONE */
	uint32_t keylen;
	uint32_t n;       /* a container's members or elements, a string's length */
	int64_t v;        /* an integer's value, a string's offset in str, a true's 1 */
	double real;      /* a real's value */
};

/* Tokens in document order: a container is followed by its members, each member by the
 * ones inside it. Strings and keys are NUL-terminated copies in str. */
struct nx_jt {
	struct nx_jt_tok *t;
	size_t n, cap;
	char *str;
	size_t len, strcap;
};

/* Empties doc, keeping its buffers. */
void nx_jt_reset(struct nx_jt *doc);
void nx_jt_release(struct nx_jt *doc);

/* Reads the value at s[pos] (no whitespace before it) into doc (reset first). 1: read,
 * *end just past it; 0: declined (doc's content undefined), for jansson to read. */
int nx_jt_parse(struct nx_jt *doc, const char *s, size_t len, size_t pos, size_t *end);

/* Copies the tree v into doc (reset first). */
void nx_jt_from_json(struct nx_jt *doc, const json_t *v);

/* The root is token 0. Accessors, in jansson's words: */
static inline json_type nx_jt_type(const struct nx_jt *doc, uint32_t t)
{
	return (json_type)doc->t[t].type;
}

/* Members or elements of a container (0 for anything else). */
static inline size_t nx_jt_size(const struct nx_jt *doc, uint32_t t)
{
	json_type ty = nx_jt_type(doc, t);

	return ty == JSON_OBJECT || ty == JSON_ARRAY ? doc->t[t].n : 0;
}

/* The first member or element of a non-empty container, and the one after c. */
static inline uint32_t nx_jt_first(const struct nx_jt *doc, uint32_t t)
{
	(void)doc;
	return t + 1;
}

static inline uint32_t nx_jt_next(const struct nx_jt *doc, uint32_t c)
{
	return doc->t[c].next;
}

/* A member's key. */
static inline const char *nx_jt_key(const struct nx_jt *doc, uint32_t c)
{
	return doc->str + doc->t[c].key;
}

/* obj's member under key, or NX_JT_NONE (and when obj is not an object). */
uint32_t nx_jt_get(const struct nx_jt *doc, uint32_t obj, const char *key);
/* arr's element i, or NX_JT_NONE (a walk of i elements). */
uint32_t nx_jt_at(const struct nx_jt *doc, uint32_t arr, size_t i);

static inline int64_t nx_jt_int(const struct nx_jt *doc, uint32_t t)
{
	return doc->t[t].v;
}

/* A string's text (NUL-terminated), or NULL when t is not a string. */
static inline const char *nx_jt_str(const struct nx_jt *doc, uint32_t t)
{
	return t != NX_JT_NONE && nx_jt_type(doc, t) == JSON_STRING ? doc->str + doc->t[t].v
								      : NULL;
}

#endif
