/* SPDX-License-Identifier: MIT
 * json_scan.c: a syntax check of one JSON value that builds nothing (see json_scan.h).
 * Containers are followed with a bit per open level, not by recursion, so the depth
 * limit costs 256 bytes of stack. */
#include "common/compat.h"
#include "neff/json_scan.h"
#include "common/json_run.h"

#include <string.h>

static int bad(struct nx_jscan_err *err, size_t off, const char *text)
{
	err->off = off;
	err->text = text;
	return -1;
}

static bool is_ws(unsigned char c)
{
	return c == ' ' || c == '\n' || c == '\r' || c == '\t';
}

static bool is_digit(unsigned char c)
{
	return c >= '0' && c <= '9';
}

static bool is_hex(unsigned char c)
{
	return is_digit(c) || ((c | 0x20) >= 'a' && (c | 0x20) <= 'f');
}

size_t nx_jscan_ws(const char *s, size_t len, size_t pos)
{
	while (pos < len && is_ws((unsigned char)s[pos]))
		pos++;
	return pos;
}

/* A string: *pos at its opening quote, left just past its closing one. */
static int scan_string(const unsigned char *u, size_t len, size_t *pos,
		       struct nx_jscan_err *err)
{
	size_t p = *pos + 1;
	bool high = false; /* UTF-8 is jansson's to check */

	for (;;) {
		p += nx_json_plain_run(u + p, len - p, &high);
		if (p >= len)
			return bad(err, len, "premature end of input in a string");
		if (u[p] == '"') {
			*pos = p + 1;
			return 0;
		}
		if (u[p] < 0x20)
			return bad(err, p + 1, "control character in a string");
		if (p + 1 >= len) /* a backslash */
			return bad(err, len, "premature end of input in a string");
		switch (u[p + 1]) {
		case '"': case '\\': case '/': case 'b': case 'f': case 'n': case 'r': case 't':
			p += 2;
			break;
		case 'u':
			for (size_t k = p + 2; k < p + 6; k++) {
				if (k >= len)
					return bad(err, len, "premature end of input in a string");
				if (!is_hex(u[k]))
					return bad(err, k + 1, "invalid \\u escape");
			}
			p += 6;
			break;
		default:
			return bad(err, p + 2, "invalid escape");
		}
	}
}

static size_t digits(const unsigned char *u, size_t len, size_t p)
{
	while (p < len && is_digit(u[p]))
		p++;
	return p;
}

/* -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)? */
static int scan_number(const unsigned char *u, size_t len, size_t *pos,
		       struct nx_jscan_err *err)
{
	size_t p = *pos + (u[*pos] == '-');

	if (p < len && u[p] == '0')
		p++;
	else if (p < len && is_digit(u[p]))
		p = digits(u, len, p);
	else
		return bad(err, p < len ? p + 1 : len, "invalid number");
	if (p < len && u[p] == '.') {
		if (++p >= len || !is_digit(u[p]))
			return bad(err, p < len ? p + 1 : len, "invalid number");
		p = digits(u, len, p);
	}
	if (p < len && (u[p] | 0x20) == 'e') {
		p++;
		if (p < len && (u[p] == '+' || u[p] == '-'))
			p++;
		if (p >= len || !is_digit(u[p]))
			return bad(err, p < len ? p + 1 : len, "invalid number");
		p = digits(u, len, p);
	}
	*pos = p;
	return 0;
}

static int scan_literal(const unsigned char *u, size_t len, size_t *pos,
			struct nx_jscan_err *err)
{
	static const char *const words[] = { "true", "false", "null" };

	for (size_t i = 0; i < NX_ARRAY_SIZE(words); i++) {
		size_t n = strlen(words[i]);
		if (len - *pos >= n && !memcmp(u + *pos, words[i], n)) {
			*pos += n;
			return 0;
		}
	}
	return bad(err, *pos + 1, "invalid token");
}

/* An object's key and colon: *pos at the key, left at the value. */
static int scan_key(const char *s, size_t len, size_t *pos, struct nx_jscan_err *err)
{
	const unsigned char *u = (const unsigned char *)s;
	int rc;

	if (*pos >= len)
		return bad(err, len, "premature end of input");
	if (u[*pos] != '"')
		return bad(err, *pos + 1, "expected a string key");
	if ((rc = scan_string(u, len, pos, err)))
		return rc;
	*pos = nx_jscan_ws(s, len, *pos);
	if (*pos >= len)
		return bad(err, len, "premature end of input");
	if (u[*pos] != ':')
		return bad(err, *pos + 1, "expected ':'");
	*pos = nx_jscan_ws(s, len, *pos + 1);
	return 0;
}

int nx_jscan_value(const char *s, size_t len, size_t pos, unsigned outer, size_t *end,
		   size_t *count, struct nx_jscan_err *err)
{
	const unsigned char *u = (const unsigned char *)s;
	uint8_t in_obj[NX_JSCAN_MAX_DEPTH / 8 + 1]; /* bit d: level d is an object */
	unsigned depth = 0;                          /* containers open inside the value */
	size_t elems = 0;
	bool obj;
	int rc;

	*count = 0;
	for (;;) {
		/* A value starts at u[pos]. */
		if (outer + depth + 1 > NX_JSCAN_MAX_DEPTH)
			return bad(err, pos < len ? pos + 1 : len, "maximum parsing depth reached");
		if (pos >= len)
			return bad(err, len, "premature end of input");
		if (depth == 1 && !(in_obj[0] & 1))
			elems++;
		rc = 0;
		switch (u[pos]) {
		case '{':
		case '[':
			obj = u[pos] == '{';
			in_obj[depth / 8] = (uint8_t)((in_obj[depth / 8] & ~(1u << depth % 8)) |
						      (unsigned)obj << depth % 8);
			depth++;
			pos = nx_jscan_ws(s, len, pos + 1);
			if (pos < len && u[pos] == (obj ? '}' : ']')) {
				pos++;
				depth--;
				break; /* empty */
			}
			if (obj && (rc = scan_key(s, len, &pos, err)))
				return rc;
			continue;
		case '"':
			rc = scan_string(u, len, &pos, err);
			break;
		case '-': case '0': case '1': case '2': case '3': case '4': case '5': case '6':
		case '7': case '8': case '9':
			rc = scan_number(u, len, &pos, err);
			break;
		default:
			rc = scan_literal(u, len, &pos, err);
			break;
		}
		if (rc)
			return rc;
		/* After a value: close containers until one goes on, or the value ends. */
		for (;;) {
			if (depth == 0) {
				*end = pos;
				*count = elems;
				return 0;
			}
			obj = in_obj[(depth - 1) / 8] >> (depth - 1) % 8 & 1;
			pos = nx_jscan_ws(s, len, pos);
			if (pos >= len)
				return bad(err, len, "premature end of input");
			if (u[pos] == (obj ? '}' : ']')) {
				pos++;
				depth--;
				continue;
			}
			if (u[pos] != ',')
				return bad(err, pos + 1, obj ? "expected ',' or '}'"
							     : "expected ',' or ']'");
			pos = nx_jscan_ws(s, len, pos + 1);
			if (obj && (rc = scan_key(s, len, &pos, err)))
				return rc;
			break;
		}
	}
}

void nx_jscan_line_col(const char *s, size_t off, int *line, int *column)
{
	const unsigned char *u = (const unsigned char *)s;
	const char *p = s, *nl;
	size_t start = 0;
	int l = 1, c = 0;

	while ((nl = memchr(p, '\n', off - (size_t)(p - s)))) {
		l++;
		p = nl + 1;
		start = (size_t)(p - s);
	}
	for (size_t i = start; i < off; i++)
		if (u[i] < 0x80 || (u[i] >= 0xC2 && u[i] <= 0xF4))
			c++;
	*line = l;
	*column = c;
}
