/* SPDX-License-Identifier: MIT
 * neff_json.c: a NEFF JSON member read piece by piece (see neff_json.h). The top-level
 * object is walked here; each value is checked by nx_jscan_value or parsed by jansson,
 * whichever reports its faults as a whole-member json_loadb would: jansson for objects
 * and arrays kept whole, the scanner where jansson would have to read past the value
 * (scalars) or is not to build it (the streamed arrays). */
#include "common/compat.h"
#include "neff/neff_json.h"
#include "neff/json_scan.h"
#include "neff/json_tok.h"
#include "common/assert.h"

#include <stdio.h>
#include <string.h>

#define PIECE_FLAGS (JSON_DECODE_ANY | JSON_REJECT_DUPLICATES)

/* "invalid JSON at line L column C: text", after reading data[0..off). */
static int syntax(const char *data, size_t off, const char *text, char *msg, size_t msgsz)
{
	int line, column;

	nx_jscan_line_col(data, off, &line, &column);
	snprintf(msg, msgsz, "invalid JSON at line %d column %d: %s", line, column, text);
	return -1;
}

/* jansson's fault in the piece starting at base. */
static int piece_fault(const char *data, size_t len, size_t base, const json_error_t *je,
		       char *msg, size_t msgsz)
{
	size_t off = base + (je->position > 0 ? (size_t)je->position : 0);

	return syntax(data, off < len ? off : len, je->text, msg, msgsz);
}

static int scan_fault(const char *data, const struct nx_jscan_err *se, char *msg,
		      size_t msgsz)
{
	return syntax(data, se->off, se->text, msg, msgsz);
}

static const char *streamed_key(const char *const *streamed, const char *key)
{
	for (size_t i = 0; streamed && streamed[i]; i++)
		if (!strcmp(streamed[i], key))
			return streamed[i];
	return NULL;
}

/* A value that is not an object: checked all the same, so bad JSON reads as such. */
static int not_an_object(const char *data, size_t len, size_t pos, char *msg, size_t msgsz)
{
	struct nx_jscan_err se;
	size_t end, count;

	if (nx_jscan_value(data, len, pos, 0, &end, &count, &se))
		return scan_fault(data, &se, msg, msgsz);
	if ((pos = nx_jscan_ws(data, len, end)) < len)
		return syntax(data, pos + 1, "end of file expected", msg, msgsz);
	snprintf(msg, msgsz, "expected an object at the top level");
	return -1;
}

/* The value at data[pos] under key: parsed into *v, or (a streamed array) recorded in
 * doc. *end is set past it. */
static int load_value(struct nx_nj_doc *doc, const char *const *streamed, const char *key,
		      size_t pos, json_t **v, size_t *end, char *msg, size_t msgsz)
{
	const char *data = doc->data, *skey = streamed_key(streamed, key);
	struct nx_jscan_err se;
	json_error_t je;
	size_t count;

	*v = NULL;
	if (skey && data[pos] == '[') {
		if (nx_jscan_value(data, doc->len, pos, 1, end, &count, &se))
			return scan_fault(data, &se, msg, msgsz);
		NX_ASSERT(doc->narrays < NX_NJ_MAX_STREAMED);
		doc->arrays[doc->narrays++] = (struct nx_nj_array){ skey, pos, count };
		return 0;
	}
	if (data[pos] == '{' || data[pos] == '[') { /* jansson stops at its closing bracket */
		*v = json_loadb(data + pos, doc->len - pos, PIECE_FLAGS | JSON_DISABLE_EOF_CHECK,
				&je);
		if (!*v)
			return piece_fault(data, doc->len, pos, &je, msg, msgsz);
		*end = pos + (size_t)je.position;
		return 0;
	}
	if (nx_jscan_value(data, doc->len, pos, 1, end, &count, &se))
		return scan_fault(data, &se, msg, msgsz);
	*v = json_loadb(data + pos, *end - pos, PIECE_FLAGS, &je);
	return *v ? 0 : piece_fault(data, doc->len, pos, &je, msg, msgsz);
}

/* One "key": value of the top-level object, pos at the key; *pos is left past it. */
static int load_member(struct nx_nj_doc *doc, const char *const *streamed, size_t *pos,
		       char *msg, size_t msgsz)
{
	const char *data = doc->data;
	size_t len = doc->len, end, count;
	struct nx_jscan_err se;
	json_error_t je;
	json_t *key, *v;
	const char *k;
	int rc;

	if (*pos >= len)
		return syntax(data, len, "premature end of input", msg, msgsz);
	if (data[*pos] != '"')
		return syntax(data, *pos + 1, "expected a string key", msg, msgsz);
	if (nx_jscan_value(data, len, *pos, 1, &end, &count, &se))
		return scan_fault(data, &se, msg, msgsz);
	if (!(key = json_loadb(data + *pos, end - *pos, JSON_DECODE_ANY, &je)))
		return piece_fault(data, len, *pos, &je, msg, msgsz);
	k = json_string_value(key);
	if (json_object_get(doc->root, k) || nx_nj_find(doc, k)) {
		char text[160];
		snprintf(text, sizeof(text), "duplicate object key near '%.*s'",
			 (int)(end - *pos < 100 ? end - *pos : 100), data + *pos);
		json_decref(key);
		return syntax(data, end, text, msg, msgsz);
	}
	*pos = nx_jscan_ws(data, len, end);
	rc = 0;
	if (*pos >= len)
		rc = syntax(data, len, "premature end of input", msg, msgsz);
	else if (data[*pos] != ':')
		rc = syntax(data, *pos + 1, "expected ':'", msg, msgsz);
	*pos = nx_jscan_ws(data, len, *pos + 1);
	if (!rc && *pos >= len)
		rc = syntax(data, len, "premature end of input", msg, msgsz);
	if (!rc)
		rc = load_value(doc, streamed, k, *pos, &v, &end, msg, msgsz);
	if (!rc && v)
		json_object_set_new(doc->root, k, v);
	json_decref(key);
	*pos = end;
	return rc;
}

int nx_nj_load(struct nx_nj_doc *doc, const char *data, size_t len,
	       const char *const *streamed, char *msg, size_t msgsz)
{
	size_t pos = nx_jscan_ws(data, len, 0);
	int rc = 0;

	memset(doc, 0, sizeof(*doc));
	doc->data = data;
	doc->len = len;
	if (pos >= len || data[pos] != '{')
		return not_an_object(data, len, pos, msg, msgsz);
	doc->root = json_object();
	pos = nx_jscan_ws(data, len, pos + 1);
	if (pos < len && data[pos] == '}') {
		pos++;
	} else {
		for (;;) {
			if ((rc = load_member(doc, streamed, &pos, msg, msgsz)))
				break;
			pos = nx_jscan_ws(data, len, pos);
			if (pos >= len) {
				rc = syntax(data, len, "premature end of input", msg, msgsz);
				break;
			}
			if (data[pos] == '}') {
				pos++;
				break;
			}
			if (data[pos] != ',') {
				rc = syntax(data, pos + 1, "expected ',' or '}'", msg, msgsz);
				break;
			}
			pos = nx_jscan_ws(data, len, pos + 1);
		}
	}
	if (!rc && (pos = nx_jscan_ws(data, len, pos)) < len)
		rc = syntax(data, pos + 1, "end of file expected", msg, msgsz);
	if (rc)
		nx_nj_release(doc);
	return rc;
}

const struct nx_nj_array *nx_nj_find(const struct nx_nj_doc *doc, const char *key)
{
	for (size_t i = 0; i < doc->narrays; i++)
		if (!strcmp(doc->arrays[i].key, key))
			return &doc->arrays[i];
	return NULL;
}

void nx_nj_iter_init(struct nx_nj_iter *it, const struct nx_nj_doc *doc,
		     const struct nx_nj_array *a)
{
	it->doc = doc;
	it->pos = nx_jscan_ws(doc->data, doc->len, a->start + 1);
	it->index = 0;
}

/* Past the element that ended at end: a ',' and the next one, or the closing ']'. */
static int after_element(struct nx_nj_iter *it, size_t end, char *msg, size_t msgsz)
{
	const char *data = it->doc->data;
	size_t len = it->doc->len, pos = nx_jscan_ws(data, len, end);

	if (pos < len && data[pos] == ',')
		pos = nx_jscan_ws(data, len, pos + 1);
	else if (pos >= len || data[pos] != ']')
		return syntax(data, pos < len ? pos + 1 : len, "expected ',' or ']'", msg, msgsz);
	it->pos = pos;
	it->index++;
	return 1;
}

/* jansson's tree of the element at it->pos, *end just past it. */
static int jansson_element(const struct nx_nj_iter *it, json_t **elem, size_t *end,
			   char *msg, size_t msgsz)
{
	const char *data = it->doc->data;
	size_t len = it->doc->len, pos = it->pos;
	json_error_t je;

	/* The text was checked by nx_nj_load: what follows an element is ',' or ']'. */
	if (pos >= len)
		return syntax(data, len, "premature end of input", msg, msgsz);
	*elem = json_loadb(data + pos, len - pos, PIECE_FLAGS | JSON_DISABLE_EOF_CHECK, &je);
	if (!*elem)
		return piece_fault(data, len, pos, &je, msg, msgsz);
	*end = pos + (size_t)je.position;
	return 0;
}

int nx_nj_next(struct nx_nj_iter *it, json_t **elem, char *msg, size_t msgsz)
{
	size_t end;
	int rc;

	*elem = NULL;
	if (it->pos < it->doc->len && it->doc->data[it->pos] == ']')
		return 0;
	if (jansson_element(it, elem, &end, msg, msgsz))
		return -1;
	if ((rc = after_element(it, end, msg, msgsz)) < 0) {
		json_decref(*elem);
		*elem = NULL;
	}
	return rc;
}

int nx_nj_next_tok(struct nx_nj_iter *it, struct nx_jt *tok, char *msg, size_t msgsz)
{
	const char *data = it->doc->data;
	size_t len = it->doc->len, end;
	json_t *elem;

	if (it->pos < len && data[it->pos] == ']')
		return 0;
	if (it->pos >= len || !nx_jt_parse(tok, data, len, it->pos, &end)) {
		if (jansson_element(it, &elem, &end, msg, msgsz))
			return -1;
		nx_jt_from_json(tok, elem);
		json_decref(elem);
	}
	return after_element(it, end, msg, msgsz);
}

void nx_nj_release(struct nx_nj_doc *doc)
{
	json_decref(doc->root);
	doc->root = NULL;
	doc->narrays = 0;
}
