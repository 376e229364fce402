/* SPDX-License-Identifier: MIT
 * json_scan.h: checks the syntax of one JSON value and finds where it ends without
 * building it (strings and their escapes, numbers, literals, nesting to jansson's depth
 * limit), counting the elements of an array; and turns a byte offset into the line and
 * column jansson would report there. The NEFF reader walks its big members with it. */
#ifndef NX_NEFF_JSON_SCAN_H
#define NX_NEFF_JSON_SCAN_H

#include "common/compat.h"

/* Deepest value jansson accepts (JSON_PARSER_MAX_DEPTH): the top level is depth 1. */
#define NX_JSCAN_MAX_DEPTH 2048

/* Where and why a value is not valid JSON. off counts the bytes read when the fault was
 * seen (the bad byte included; the length at a premature end), as jansson's position. */
struct nx_jscan_err {
	size_t off;
	const char *text;
};

/* First position at or after pos that is not JSON whitespace (len when none). */
size_t nx_jscan_ws(const char *s, size_t len, size_t pos);

/* Checks the value starting at s[pos] (no whitespace before it), nested in `outer`
 * containers. 0: *end is just past it and *count its element count when it is an array
 * (0 otherwise). -1: *err says where and why. Not checked here, and left to jansson:
 * UTF-8, \u escapes of NUL or lone surrogates, integers beyond 64 bits. */
int nx_jscan_value(const char *s, size_t len, size_t pos, unsigned outer, size_t *end,
		   size_t *count, struct nx_jscan_err *err);

/* Line (from 1) and column after reading s[0..off), counted as jansson counts them: a
 * newline starts the next line at column 0, each UTF-8 character adds one column. */
void nx_jscan_line_col(const char *s, size_t off, int *line, int *column);

#endif
