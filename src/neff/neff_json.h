/* SPDX-License-Identifier: MIT
 * neff_json.h: a JSON member of a NEFF read piece by piece, so that no tree of a big
 * member is ever built. The whole text is checked first (json_scan.h); the top-level
 * object's values are parsed by jansson one by one into a small root object, except
 * the arrays the caller names ("streamed"), whose elements jansson parses one at a time
 * when the caller asks, each tree the caller's to free at once.
 *
 * The checks of a whole-member json_loadb (JSON_REJECT_DUPLICATES) all remain: syntax
 * (before anything is handed out), duplicate keys at the top level and inside every
 * value, UTF-8 and integer range (by jansson as each piece is parsed). Messages read
 * "invalid JSON at line L column C: <why>", L and C counted in the whole member. */
#ifndef NX_NEFF_NEFF_JSON_H
#define NX_NEFF_NEFF_JSON_H

#include "common/compat.h"

#include <jansson.h>

#define NX_NJ_MAX_STREAMED 8

/* A streamed array found in the member. */
struct nx_nj_array {
	const char *key; /* the caller's name for it */
	size_t start;    /* offset of its '[' */
	size_t count;    /* its elements */
};

struct nx_nj_doc {
	const char *data;
	size_t len;
	json_t *root; /* every top-level value but the streamed arrays */
	struct nx_nj_array arrays[NX_NJ_MAX_STREAMED];
	size_t narrays;
};

/* Reads the member data[0..len), which must hold an object at the top level. streamed
 * is a NULL-terminated list of keys (at most NX_NJ_MAX_STREAMED) whose values, when
 * arrays, are left in the text (a key whose value is not an array lands in root, for the
 * caller's type check). data must outlive doc. 0, or -1 with msg set (and nothing to
 * release). */
int nx_nj_load(struct nx_nj_doc *doc, const char *data, size_t len,
	       const char *const *streamed, char *msg, size_t msgsz);

/* The streamed array under key, or NULL when the member has none. */
const struct nx_nj_array *nx_nj_find(const struct nx_nj_doc *doc, const char *key);

/* Walks a streamed array's elements in order. */
struct nx_nj_iter {
	const struct nx_nj_doc *doc;
	size_t pos;   /* next element (or the closing ']') */
	size_t index; /* elements handed out */
};

void nx_nj_iter_init(struct nx_nj_iter *it, const struct nx_nj_doc *doc,
		     const struct nx_nj_array *a);

/* 1 with *elem, the next element (the caller's to json_decref); 0 after the last; -1
 * with msg when jansson refuses the element. */
int nx_nj_next(struct nx_nj_iter *it, json_t **elem, char *msg, size_t msgsz);

struct nx_jt;
/* The same as tokens in tok (json_tok.h): read by nx_jt_parse, or by jansson when it
 * declines (a fault then as nx_nj_next's). 1, 0 or -1 as nx_nj_next. */
int nx_nj_next_tok(struct nx_nj_iter *it, struct nx_jt *tok, char *msg, size_t msgsz);

void nx_nj_release(struct nx_nj_doc *doc);

#endif
