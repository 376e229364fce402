/* SPDX-License-Identifier: MIT
 * json_tok.c: one JSON value as flat tokens (see json_tok.h): our reader of the plain
 * forms, which declines everything else, and the copy of a jansson tree. */
#include "common/compat.h"
#include "neff/json_tok.h"
#include "common/json_run.h"
#include "common/xalloc.h"

#include <string.h>

void nx_jt_reset(struct nx_jt *doc)
{
	doc->n = 0;
	doc->len = 0;
}

void nx_jt_release(struct nx_jt *doc)
{
	free(doc->t);
	free(doc->str);
	memset(doc, 0, sizeof(*doc));
}

/* A new token of type ty, the member of an object under the key at str + key. */
static uint32_t push(struct nx_jt *doc, json_type ty, uint32_t key, uint32_t keylen)
{
	if (doc->n == doc->cap) {
		doc->cap = doc->cap ? doc->cap * 2 : 64;
		doc->t = nx_xrealloc(doc->t, doc->cap * sizeof(*doc->t));
	}
	doc->t[doc->n] = (struct nx_jt_tok){ .type = (uint8_t)ty, .key = key, .keylen = keylen };
	return (uint32_t)doc->n++;
}

/* A NUL-terminated copy of s[0..n) in str: its offset. */
static uint32_t add_str(struct nx_jt *doc, const char *s, size_t n)
{
	size_t off = doc->len;

	if (off + n + 1 > doc->strcap) {
		while (off + n + 1 > doc->strcap)
			doc->strcap = doc->strcap ? doc->strcap * 2 : 1024;
		doc->str = nx_xrealloc(doc->str, doc->strcap);
	}
	memcpy(doc->str + off, s, n);
	doc->str[off + n] = '\0';
	doc->len = off + n + 1;
	return (uint32_t)off;
}

struct jp {
	struct nx_jt *doc;
	const unsigned char *u;
	size_t len;
};

static size_t ws(const struct jp *p, size_t pos)
{
	while (pos < p->len && (p->u[pos] == ' ' || p->u[pos] == '\n' || p->u[pos] == '\r' ||
				p->u[pos] == '\t'))
		pos++;
	return pos;
}

/* A plain string at u[*pos] (its quote): printable ASCII, no escape. */
static bool plain_string(const struct jp *p, size_t *pos, uint32_t *off, uint32_t *n)
{
	size_t start = *pos + 1, e;
	bool high = false;

	if (start > p->len)
		return false;
	e = start + nx_json_plain_run(p->u + start, p->len - start, &high);
	if (high || e >= p->len || p->u[e] != '"' || e - start >= UINT32_MAX)
		return false;
	*off = add_str(p->doc, (const char *)p->u + start, e - start);
	*n = (uint32_t)(e - start);
	*pos = e + 1;
	return true;
}

/* An integer of at most 18 digits (no fraction, no exponent: jansson's reals). */
static bool plain_int(const struct jp *p, size_t *pos, int64_t *v)
{
	size_t q = *pos + (p->u[*pos] == '-'), first = q;
	int64_t x = 0;

	if (q >= p->len || p->u[q] < '0' || p->u[q] > '9' ||
	    (p->u[q] == '0' && q + 1 < p->len && p->u[q + 1] >= '0' && p->u[q + 1] <= '9'))
		return false;
	while (q < p->len && p->u[q] >= '0' && p->u[q] <= '9') {
		if (q - first == 18)
			return false;
		x = x * 10 + (p->u[q++] - '0');
	}
	if (q < p->len && (p->u[q] == '.' || p->u[q] == 'e' || p->u[q] == 'E'))
		return false;
	*v = p->u[*pos] == '-' ? -x : x;
	*pos = q;
	return true;
}

static bool is_alpha(unsigned char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

/* word, and no letter after it: jansson reads a run of letters as one token ("falsey" is
 * no literal). */
static bool literal(const struct jp *p, size_t *pos, const char *word)
{
	size_t n = strlen(word);

	if (p->len - *pos < n || memcmp(p->u + *pos, word, n) ||
	    (*pos + n < p->len && is_alpha(p->u[*pos + n])))
		return false;
	*pos += n;
	return true;
}

/* obj's members so far hold no key equal to str + key. */
static bool new_key(const struct nx_jt *doc, uint32_t obj, uint32_t key, uint32_t keylen)
{
	const char *k = doc->str + key;
	uint32_t c = obj + 1;

	for (uint32_t i = 0; i < doc->t[obj].n; i++, c = doc->t[c].next)
		if (doc->t[c].keylen == keylen && !memcmp(doc->str + doc->t[c].key, k, keylen))
			return false;
	return true;
}

static bool value(struct jp *p, size_t *pos, unsigned depth, uint32_t key, uint32_t keylen);

/* The members or elements of the container t, *pos just past its opening bracket. */
static bool members(struct jp *p, size_t *pos, unsigned depth, uint32_t t, bool obj)
{
	uint32_t key = NX_JT_NONE, keylen = 0;

	*pos = ws(p, *pos);
	if (*pos < p->len && p->u[*pos] == (obj ? '}' : ']')) {
		(*pos)++;
		return true;
	}
	for (;;) {
		if (obj) {
			if (*pos >= p->len || p->u[*pos] != '"' ||
			    !plain_string(p, pos, &key, &keylen) ||
			    !new_key(p->doc, t, key, keylen))
				return false;
			*pos = ws(p, *pos);
			if (*pos >= p->len || p->u[*pos] != ':')
				return false;
			*pos = ws(p, *pos + 1);
		}
		if (!value(p, pos, depth + 1, key, keylen))
			return false;
		p->doc->t[t].n++;
		*pos = ws(p, *pos);
		if (*pos >= p->len)
			return false;
		if (p->u[*pos] == (obj ? '}' : ']')) {
			(*pos)++;
			return true;
		}
		if (p->u[*pos] != ',')
			return false;
		*pos = ws(p, *pos + 1);
	}
}

static bool value(struct jp *p, size_t *pos, unsigned depth, uint32_t key, uint32_t keylen)
{
	uint32_t t, off, n;
	bool ok;

	if (depth > NX_JT_MAX_DEPTH || *pos >= p->len)
		return false;
	t = push(p->doc, JSON_NULL, key, keylen);
	switch (p->u[*pos]) {
	case '{':
	case '[':
		p->doc->t[t].type = p->u[*pos] == '{' ? JSON_OBJECT : JSON_ARRAY;
		(*pos)++;
		ok = members(p, pos, depth, t, p->doc->t[t].type == JSON_OBJECT);
		break;
	case '"':
		ok = plain_string(p, pos, &off, &n);
		p->doc->t[t].type = JSON_STRING;
		p->doc->t[t].v = off;
		p->doc->t[t].n = n;
		break;
	case 't':
		ok = literal(p, pos, "true");
		p->doc->t[t].type = JSON_TRUE;
		p->doc->t[t].v = 1;
		break;
	case 'f':
		ok = literal(p, pos, "false");
		p->doc->t[t].type = JSON_FALSE;
		break;
	case 'n':
		ok = literal(p, pos, "null");
		break;
	default:
		ok = plain_int(p, pos, &p->doc->t[t].v);
		p->doc->t[t].type = JSON_INTEGER;
		break;
	}
	p->doc->t[t].next = (uint32_t)p->doc->n;
	return ok;
}

int nx_jt_parse(struct nx_jt *doc, const char *s, size_t len, size_t pos, size_t *end)
{
	struct jp p = { doc, (const unsigned char *)s, len };

	nx_jt_reset(doc);
	if (len >= UINT32_MAX || !value(&p, &pos, 1, NX_JT_NONE, 0))
		return 0;
	*end = pos;
	return 1;
}

static void copy_json(struct nx_jt *doc, const json_t *v, uint32_t key, uint32_t keylen)
{
	uint32_t t = push(doc, json_typeof(v), key, keylen);
	const char *k;
	json_t *m;
	size_t i;

	switch (json_typeof(v)) {
	case JSON_OBJECT:
		json_object_foreach((json_t *)v, k, m) {
			size_t kl = strlen(k);
			uint32_t ko = add_str(doc, k, kl);
			copy_json(doc, m, ko, (uint32_t)kl);
		}
		doc->t[t].n = (uint32_t)json_object_size(v);
		break;
	case JSON_ARRAY:
		json_array_foreach(v, i, m)
			copy_json(doc, m, NX_JT_NONE, 0);
		doc->t[t].n = (uint32_t)json_array_size(v);
		break;
	case JSON_STRING:
		doc->t[t].v = add_str(doc, json_string_value(v), json_string_length(v));
		doc->t[t].n = (uint32_t)json_string_length(v);
		break;
	case JSON_INTEGER:
		doc->t[t].v = json_integer_value(v);
		break;
	case JSON_REAL:
		doc->t[t].real = json_real_value(v);
		break;
	case JSON_TRUE:
		doc->t[t].v = 1;
		break;
	default:
		break;
	}
	doc->t[t].next = (uint32_t)doc->n;
}

void nx_jt_from_json(struct nx_jt *doc, const json_t *v)
{
	nx_jt_reset(doc);
	copy_json(doc, v, NX_JT_NONE, 0);
}

uint32_t nx_jt_get(const struct nx_jt *doc, uint32_t obj, const char *key)
{
	size_t kl;
	uint32_t c = obj + 1;

	if (nx_jt_type(doc, obj) != JSON_OBJECT)
		return NX_JT_NONE;
	kl = strlen(key);
	for (uint32_t i = 0; i < doc->t[obj].n; i++, c = doc->t[c].next)
		if (doc->t[c].keylen == kl && !memcmp(doc->str + doc->t[c].key, key, kl))
			return c;
	return NX_JT_NONE;
}

uint32_t nx_jt_at(const struct nx_jt *doc, uint32_t arr, size_t i)
{
	uint32_t c = arr + 1;

	if (nx_jt_type(doc, arr) != JSON_ARRAY || i >= doc->t[arr].n)
		return NX_JT_NONE;
	while (i--)
		c = doc->t[c].next;
	return c;
}
