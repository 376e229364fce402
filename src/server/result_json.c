/* SPDX-License-Identifier: MIT
 * result_json.c: DuckDB vector values to JSON text (see result_json.h). */
#include "common/compat.h"
#include "server/result_json.h"
#include "common/json_writer.h"
#include "common/xalloc.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

__extension__ typedef __int128 nx_i128;
__extension__ typedef unsigned __int128 nx_u128;

#define SAFE_INT 9007199254740992ULL /* 2^53: larger magnitudes lose digits in JS */

static const char *base_name(duckdb_type id)
{
	switch (id) {
	case DUCKDB_TYPE_BOOLEAN: return "BOOLEAN";
	case DUCKDB_TYPE_TINYINT: return "TINYINT";
	case DUCKDB_TYPE_SMALLINT: return "SMALLINT";
	case DUCKDB_TYPE_INTEGER: return "INTEGER";
	case DUCKDB_TYPE_BIGINT: return "BIGINT";
	case DUCKDB_TYPE_UTINYINT: return "UTINYINT";
	case DUCKDB_TYPE_USMALLINT: return "USMALLINT";
	case DUCKDB_TYPE_UINTEGER: return "UINTEGER";
	case DUCKDB_TYPE_UBIGINT: return "UBIGINT";
	case DUCKDB_TYPE_FLOAT: return "FLOAT";
	case DUCKDB_TYPE_DOUBLE: return "DOUBLE";
	case DUCKDB_TYPE_TIMESTAMP: return "TIMESTAMP";
	case DUCKDB_TYPE_DATE: return "DATE";
	case DUCKDB_TYPE_TIME: return "TIME";
	case DUCKDB_TYPE_INTERVAL: return "INTERVAL";
	case DUCKDB_TYPE_HUGEINT: return "HUGEINT";
	case DUCKDB_TYPE_UHUGEINT: return "UHUGEINT";
	case DUCKDB_TYPE_VARCHAR: return "VARCHAR";
	case DUCKDB_TYPE_BLOB: return "BLOB";
	case DUCKDB_TYPE_TIMESTAMP_S: return "TIMESTAMP_S";
	case DUCKDB_TYPE_TIMESTAMP_MS: return "TIMESTAMP_MS";
	case DUCKDB_TYPE_TIMESTAMP_NS: return "TIMESTAMP_NS";
	case DUCKDB_TYPE_ENUM: return "ENUM";
	case DUCKDB_TYPE_UUID: return "UUID";
	case DUCKDB_TYPE_TIME_TZ: return "TIME WITH TIME ZONE";
	case DUCKDB_TYPE_TIMESTAMP_TZ: return "TIMESTAMP WITH TIME ZONE";
	case DUCKDB_TYPE_SQLNULL: return "NULL";
	case DUCKDB_TYPE_TIME_NS: return "TIME_NS";
	case DUCKDB_TYPE_BIT: return "BIT";
	case DUCKDB_TYPE_BIGNUM: return "BIGNUM";
	default: return NULL;
	}
}

/* Builds the nested part of the type tree and its SQL spelling. */
static int init_nested(struct nx_rj_type *rt, duckdb_logical_type t, const char **bad)
{
	struct nx_strbuf sb = NX_STRBUF_INIT;
	duckdb_logical_type c = NULL;
	int rc = 0;

	switch (rt->id) {
	case DUCKDB_TYPE_LIST:
	case DUCKDB_TYPE_ARRAY:
		rt->nchild = 1;
		rt->child = nx_xcalloc(1, sizeof(*rt->child));
		if (rt->id == DUCKDB_TYPE_LIST) {
			c = duckdb_list_type_child_type(t);
		} else {
			c = duckdb_array_type_child_type(t);
			rt->array_size = duckdb_array_type_array_size(t);
		}
		rc = nx__rj_type_init(rt->child, c, bad);
		duckdb_destroy_logical_type(&c);
		if (rc)
			break;
		if (rt->id == DUCKDB_TYPE_LIST)
			nx_strbuf_addf(&sb, "%s[]", rt->child->sql_name);
		else
			nx_strbuf_addf(&sb, "%s[%llu]", rt->child->sql_name,
				       (unsigned long long)rt->array_size);
		break;
	case DUCKDB_TYPE_MAP:
		rt->nchild = 2;
		rt->child = nx_xcalloc(2, sizeof(*rt->child));
		c = duckdb_map_type_key_type(t);
		rc = nx__rj_type_init(&rt->child[0], c, bad);
		duckdb_destroy_logical_type(&c);
		if (rc)
			break;
		c = duckdb_map_type_value_type(t);
		rc = nx__rj_type_init(&rt->child[1], c, bad);
		duckdb_destroy_logical_type(&c);
		if (rc)
			break;
		nx_strbuf_addf(&sb, "MAP(%s, %s)", rt->child[0].sql_name, rt->child[1].sql_name);
		break;
	case DUCKDB_TYPE_STRUCT:
	case DUCKDB_TYPE_UNION: {
		bool is_struct = rt->id == DUCKDB_TYPE_STRUCT;
		size_t n = is_struct ? duckdb_struct_type_child_count(t)
				     : duckdb_union_type_member_count(t);

		rt->nchild = rt->nnames = n;
		rt->child = nx_xcalloc(n ? n : 1, sizeof(*rt->child));
		rt->names = nx_xcalloc(n ? n : 1, sizeof(*rt->names));
		nx_strbuf_addstr(&sb, is_struct ? "STRUCT(" : "UNION(");
		for (size_t i = 0; i < n && !rc; i++) {
			char *nm = is_struct ? duckdb_struct_type_child_name(t, i)
					     : duckdb_union_type_member_name(t, i);
			rt->names[i] = nx_xstrdup(nm ? nm : "");
			duckdb_free(nm);
			c = is_struct ? duckdb_struct_type_child_type(t, i)
				      : duckdb_union_type_member_type(t, i);
			rc = nx__rj_type_init(&rt->child[i], c, bad);
			duckdb_destroy_logical_type(&c);
			if (!rc)
				nx_strbuf_addf(&sb, "%s\"%s\" %s", i ? ", " : "", rt->names[i],
					       rt->child[i].sql_name);
		}
		nx_strbuf_addch(&sb, ')');
		break;
	}
	default:
		*bad = "an unknown type";
		rc = -ENOTSUP;
	}
	if (rc)
		nx_strbuf_release(&sb);
	else
		rt->sql_name = nx_strbuf_detach(&sb, NULL);
	return rc;
}

int nx__rj_type_init(struct nx_rj_type *rt, duckdb_logical_type t, const char **bad)
{
	const char *name;

	memset(rt, 0, sizeof(*rt));
	rt->id = duckdb_get_type_id(t);
	if (rt->id == DUCKDB_TYPE_BIT || rt->id == DUCKDB_TYPE_BIGNUM) {
		*bad = base_name(rt->id);
		return -ENOTSUP;
	}
	if (rt->id == DUCKDB_TYPE_DECIMAL) {
		rt->width = duckdb_decimal_width(t);
		rt->scale = duckdb_decimal_scale(t);
		rt->internal = duckdb_decimal_internal_type(t);
		rt->sql_name = nx_xasprintf("DECIMAL(%u,%u)", rt->width, rt->scale);
		return 0;
	}
	if (rt->id == DUCKDB_TYPE_ENUM) {
		rt->internal = duckdb_enum_internal_type(t);
		rt->nnames = duckdb_enum_dictionary_size(t);
		rt->names = nx_xcalloc(rt->nnames ? rt->nnames : 1, sizeof(*rt->names));
		for (size_t i = 0; i < rt->nnames; i++) {
			char *v = duckdb_enum_dictionary_value(t, i);
			rt->names[i] = nx_xstrdup(v ? v : "");
			duckdb_free(v);
		}
		rt->sql_name = nx_xstrdup("ENUM");
		return 0;
	}
	name = base_name(rt->id);
	if (name) {
		rt->sql_name = nx_xstrdup(name);
		return 0;
	}
	return init_nested(rt, t, bad);
}

void nx__rj_type_release(struct nx_rj_type *rt)
{
	for (size_t i = 0; i < rt->nchild; i++)
		nx__rj_type_release(&rt->child[i]);
	for (size_t i = 0; i < rt->nnames; i++)
		free(rt->names[i]);
	free(rt->child);
	free(rt->names);
	free(rt->sql_name);
	memset(rt, 0, sizeof(*rt));
}

void nx__rj_double(struct nx_strbuf *out, double d)
{
	char buf[40];

	if (!isfinite(d)) {
		nx_strbuf_addstr(out, "null");
		return;
	}
	snprintf(buf, sizeof(buf), "%.15g", d);
	if (strtod(buf, NULL) != d)
		snprintf(buf, sizeof(buf), "%.17g", d);
	nx_strbuf_addstr(out, buf);
}

static void add_float(struct nx_strbuf *out, float f)
{
	char buf[40];

	if (!isfinite(f)) {
		nx_strbuf_addstr(out, "null");
		return;
	}
	for (int prec = 6; prec <= 9; prec++) {
		snprintf(buf, sizeof(buf), "%.*g", prec, (double)f);
		if (strtof(buf, NULL) == f)
			break;
	}
	nx_strbuf_addstr(out, buf);
}

/* Decimal digits of an unsigned 128-bit value, written backwards into buf. */
static const char *u128_text(nx_u128 v, char *buf, size_t len)
{
	char *p = buf + len - 1;

	*p = '\0';
	do {
		*--p = (char)('0' + (int)(v % 10));
		v /= 10;
	} while (v);
	return p;
}

/* Integers: a JSON number inside +-2^53, a JSON string outside. */
static void add_i128(struct nx_strbuf *out, nx_i128 v)
{
	char buf[48];
	nx_u128 mag = v < 0 ? (nx_u128)0 - (nx_u128)v : (nx_u128)v;
	bool safe = mag <= SAFE_INT;

	if (!safe)
		nx_strbuf_addch(out, '"');
	if (v < 0)
		nx_strbuf_addch(out, '-');
	nx_strbuf_addstr(out, u128_text(mag, buf, sizeof(buf)));
	if (!safe)
		nx_strbuf_addch(out, '"');
}

static void add_u128(struct nx_strbuf *out, nx_u128 v)
{
	char buf[48];
	bool safe = v <= SAFE_INT;

	if (!safe)
		nx_strbuf_addch(out, '"');
	nx_strbuf_addstr(out, u128_text(v, buf, sizeof(buf)));
	if (!safe)
		nx_strbuf_addch(out, '"');
}

static void add_decimal(struct nx_strbuf *out, const struct nx_rj_type *rt, const void *data,
			idx_t row)
{
	char buf[48];
	nx_i128 v;
	nx_u128 mag;
	const char *digits;
	size_t nd;
	bool safe;

	switch (rt->internal) {
	case DUCKDB_TYPE_SMALLINT: v = ((const int16_t *)data)[row]; break;
	case DUCKDB_TYPE_INTEGER: v = ((const int32_t *)data)[row]; break;
	case DUCKDB_TYPE_BIGINT: v = ((const int64_t *)data)[row]; break;
	default: {
		const duckdb_hugeint *h = &((const duckdb_hugeint *)data)[row];
		v = (nx_i128)(((nx_u128)(uint64_t)h->upper << 64) | h->lower);
	}
	}
	mag = v < 0 ? (nx_u128)0 - (nx_u128)v : (nx_u128)v;
	safe = mag <= SAFE_INT;
	digits = u128_text(mag, buf, sizeof(buf));
	nd = strlen(digits);
	if (!safe)
		nx_strbuf_addch(out, '"');
	if (v < 0)
		nx_strbuf_addch(out, '-');
	if (nd <= rt->scale) {
		nx_strbuf_addstr(out, "0.");
		for (size_t i = nd; i < rt->scale; i++)
			nx_strbuf_addch(out, '0');
		nx_strbuf_addstr(out, digits);
	} else {
		nx_strbuf_add(out, digits, nd - rt->scale);
		if (rt->scale) {
			nx_strbuf_addch(out, '.');
			nx_strbuf_addstr(out, digits + nd - rt->scale);
		}
	}
	if (!safe)
		nx_strbuf_addch(out, '"');
}

/* Fractional seconds with trailing zeros removed (digits = 6 or 9). */
static void add_fraction(struct nx_strbuf *out, int64_t frac, int digits)
{
	char buf[16];
	int n;

	if (!frac)
		return;
	n = snprintf(buf, sizeof(buf), ".%0*lld", digits, (long long)frac);
	while (n > 1 && buf[n - 1] == '0')
		n--;
	nx_strbuf_add(out, buf, (size_t)n);
}

static void add_date_text(struct nx_strbuf *out, duckdb_date d)
{
	duckdb_date_struct s = duckdb_from_date(d);
	nx_strbuf_addf(out, "%04d-%02d-%02d", (int)s.year, s.month, s.day);
}

static void add_time_text(struct nx_strbuf *out, int64_t micros)
{
	duckdb_time_struct s = duckdb_from_time((duckdb_time){ micros });
	nx_strbuf_addf(out, "%02d:%02d:%02d", s.hour, s.min, s.sec);
	add_fraction(out, s.micros, 6);
}

/* Timestamps: "YYYY-MM-DD HH:MM:SS[.fff]" from microseconds plus extra nanos. */
static void add_timestamp(struct nx_strbuf *out, int64_t micros, int64_t nanos_extra, bool ns,
			  bool tz)
{
	duckdb_timestamp ts = { micros };

	if (!duckdb_is_finite_timestamp(ts)) {
		nx_strbuf_addstr(out, micros > 0 ? "\"infinity\"" : "\"-infinity\"");
		return;
	}
	duckdb_timestamp_struct s = duckdb_from_timestamp(ts);
	nx_strbuf_addf(out, "\"%04d-%02d-%02d %02d:%02d:%02d", (int)s.date.year, s.date.month,
		       s.date.day, s.time.hour, s.time.min, s.time.sec);
	if (ns)
		add_fraction(out, (int64_t)s.time.micros * 1000 + nanos_extra, 9);
	else
		add_fraction(out, s.time.micros, 6);
	nx_strbuf_addstr(out, tz ? "+00\"" : "\"");
}

static void add_blob(struct nx_strbuf *out, const char *p, size_t n)
{
	struct nx_strbuf tmp = NX_STRBUF_INIT;

	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)p[i];
		if (c >= 0x20 && c < 0x7f && c != '\\')
			nx_strbuf_addch(&tmp, (char)c);
		else
			nx_strbuf_addf(&tmp, "\\x%02X", c);
	}
	nx_json_quote(out, nx_strbuf_str(&tmp), tmp.len);
	nx_strbuf_release(&tmp);
}

static void add_uuid(struct nx_strbuf *out, const duckdb_hugeint *h)
{
	uint64_t hi = (uint64_t)h->upper ^ (1ULL << 63), lo = h->lower;

	nx_strbuf_addf(out, "\"%08llx-%04llx-%04llx-%04llx-%012llx\"",
		       (unsigned long long)(hi >> 32), (unsigned long long)((hi >> 16) & 0xffff),
		       (unsigned long long)(hi & 0xffff), (unsigned long long)(lo >> 48),
		       (unsigned long long)(lo & 0xffffffffffffULL));
}

/* A MAP key must be a JSON string: strings are used as they are, other values by
 * their JSON text. */
static void add_map_key(struct nx_strbuf *out, const struct nx_rj_type *kt, duckdb_vector v,
			idx_t row)
{
	struct nx_strbuf tmp = NX_STRBUF_INIT;

	nx__rj_value(&tmp, kt, v, row);
	if (tmp.len && tmp.buf[0] == '"')
		nx_strbuf_add(out, tmp.buf, tmp.len);
	else
		nx_json_quote(out, nx_strbuf_str(&tmp), tmp.len);
	nx_strbuf_release(&tmp);
}

static void add_nested(struct nx_strbuf *out, const struct nx_rj_type *rt, duckdb_vector v,
		       const void *data, idx_t row)
{
	switch (rt->id) {
	case DUCKDB_TYPE_LIST: {
		const duckdb_list_entry *e = &((const duckdb_list_entry *)data)[row];
		duckdb_vector c = duckdb_list_vector_get_child(v);

		nx_strbuf_addch(out, '[');
		for (uint64_t i = 0; i < e->length; i++) {
			if (i)
				nx_strbuf_addch(out, ',');
			nx__rj_value(out, rt->child, c, e->offset + i);
		}
		nx_strbuf_addch(out, ']');
		break;
	}
	case DUCKDB_TYPE_ARRAY: {
		duckdb_vector c = duckdb_array_vector_get_child(v);

		nx_strbuf_addch(out, '[');
		for (idx_t i = 0; i < rt->array_size; i++) {
			if (i)
				nx_strbuf_addch(out, ',');
			nx__rj_value(out, rt->child, c, row * rt->array_size + i);
		}
		nx_strbuf_addch(out, ']');
		break;
	}
	case DUCKDB_TYPE_MAP: {
		const duckdb_list_entry *e = &((const duckdb_list_entry *)data)[row];
		duckdb_vector kv = duckdb_list_vector_get_child(v);
		duckdb_vector k = duckdb_struct_vector_get_child(kv, 0);
		duckdb_vector val = duckdb_struct_vector_get_child(kv, 1);

		nx_strbuf_addch(out, '{');
		for (uint64_t i = 0; i < e->length; i++) {
			if (i)
				nx_strbuf_addch(out, ',');
			add_map_key(out, &rt->child[0], k, e->offset + i);
			nx_strbuf_addch(out, ':');
			nx__rj_value(out, &rt->child[1], val, e->offset + i);
		}
		nx_strbuf_addch(out, '}');
		break;
	}
	case DUCKDB_TYPE_STRUCT:
		nx_strbuf_addch(out, '{');
		for (size_t i = 0; i < rt->nchild; i++) {
			if (i)
				nx_strbuf_addch(out, ',');
			nx_json_quote(out, rt->names[i], strlen(rt->names[i]));
			nx_strbuf_addch(out, ':');
			nx__rj_value(out, &rt->child[i], duckdb_struct_vector_get_child(v, i), row);
		}
		nx_strbuf_addch(out, '}');
		break;
	case DUCKDB_TYPE_UNION: {
		/* Stored as a struct whose first child is the tag. */
		duckdb_vector tagv = duckdb_struct_vector_get_child(v, 0);
		uint8_t tag = ((const uint8_t *)duckdb_vector_get_data(tagv))[row];

		if (tag < rt->nchild)
			nx__rj_value(out, &rt->child[tag], duckdb_struct_vector_get_child(v, tag + 1),
				     row);
		else
			nx_strbuf_addstr(out, "null");
		break;
	}
	default:
		nx_strbuf_addstr(out, "null");
	}
}

void nx__rj_value(struct nx_strbuf *out, const struct nx_rj_type *rt, duckdb_vector v, idx_t row)
{
	uint64_t *valid = duckdb_vector_get_validity(v);
	const void *data;

	if ((valid && !duckdb_validity_row_is_valid(valid, row)) || rt->id == DUCKDB_TYPE_SQLNULL) {
		nx_strbuf_addstr(out, "null");
		return;
	}
	data = duckdb_vector_get_data(v);
	switch (rt->id) {
	case DUCKDB_TYPE_BOOLEAN:
		nx_strbuf_addstr(out, ((const bool *)data)[row] ? "true" : "false");
		break;
	case DUCKDB_TYPE_TINYINT: add_i128(out, ((const int8_t *)data)[row]); break;
	case DUCKDB_TYPE_SMALLINT: add_i128(out, ((const int16_t *)data)[row]); break;
	case DUCKDB_TYPE_INTEGER: add_i128(out, ((const int32_t *)data)[row]); break;
	case DUCKDB_TYPE_BIGINT: add_i128(out, ((const int64_t *)data)[row]); break;
	case DUCKDB_TYPE_UTINYINT: add_u128(out, ((const uint8_t *)data)[row]); break;
	case DUCKDB_TYPE_USMALLINT: add_u128(out, ((const uint16_t *)data)[row]); break;
	case DUCKDB_TYPE_UINTEGER: add_u128(out, ((const uint32_t *)data)[row]); break;
	case DUCKDB_TYPE_UBIGINT: add_u128(out, ((const uint64_t *)data)[row]); break;
	case DUCKDB_TYPE_HUGEINT: {
		const duckdb_hugeint *h = &((const duckdb_hugeint *)data)[row];
		add_i128(out, (nx_i128)(((nx_u128)(uint64_t)h->upper << 64) | h->lower));
		break;
	}
	case DUCKDB_TYPE_UHUGEINT: {
		const duckdb_uhugeint *h = &((const duckdb_uhugeint *)data)[row];
		add_u128(out, ((nx_u128)h->upper << 64) | h->lower);
		break;
	}
	case DUCKDB_TYPE_FLOAT: add_float(out, ((const float *)data)[row]); break;
	case DUCKDB_TYPE_DOUBLE: nx__rj_double(out, ((const double *)data)[row]); break;
	case DUCKDB_TYPE_DECIMAL: add_decimal(out, rt, data, row); break;
	case DUCKDB_TYPE_VARCHAR:
	case DUCKDB_TYPE_BLOB: {
		duckdb_string_t *s = &((duckdb_string_t *)(uintptr_t)data)[row];
		const char *p = duckdb_string_t_data(s);
		uint32_t n = duckdb_string_t_length(*s);

		if (rt->id == DUCKDB_TYPE_VARCHAR)
			nx_json_quote(out, p, n);
		else
			add_blob(out, p, n);
		break;
	}
	case DUCKDB_TYPE_DATE: {
		duckdb_date d = ((const duckdb_date *)data)[row];

		if (!duckdb_is_finite_date(d)) {
			nx_strbuf_addstr(out, d.days > 0 ? "\"infinity\"" : "\"-infinity\"");
			break;
		}
		nx_strbuf_addch(out, '"');
		add_date_text(out, d);
		nx_strbuf_addch(out, '"');
		break;
	}
	case DUCKDB_TYPE_TIME:
		nx_strbuf_addch(out, '"');
		add_time_text(out, ((const duckdb_time *)data)[row].micros);
		nx_strbuf_addch(out, '"');
		break;
	case DUCKDB_TYPE_TIME_NS: {
		int64_t ns = ((const duckdb_time_ns *)data)[row].nanos;
		duckdb_time_struct s = duckdb_from_time((duckdb_time){ ns / 1000 });

		nx_strbuf_addf(out, "\"%02d:%02d:%02d", s.hour, s.min, s.sec);
		add_fraction(out, ns % 1000000000LL, 9);
		nx_strbuf_addch(out, '"');
		break;
	}
	case DUCKDB_TYPE_TIME_TZ: {
		duckdb_time_tz_struct s = duckdb_from_time_tz(((const duckdb_time_tz *)data)[row]);
		int off = s.offset, a = off < 0 ? -off : off;

		nx_strbuf_addf(out, "\"%02d:%02d:%02d", s.time.hour, s.time.min, s.time.sec);
		add_fraction(out, s.time.micros, 6);
		nx_strbuf_addf(out, "%c%02d:%02d\"", off < 0 ? '-' : '+', a / 3600, a / 60 % 60);
		break;
	}
	case DUCKDB_TYPE_TIMESTAMP:
	case DUCKDB_TYPE_TIMESTAMP_TZ:
		add_timestamp(out, ((const int64_t *)data)[row], 0, false,
			      rt->id == DUCKDB_TYPE_TIMESTAMP_TZ);
		break;
	case DUCKDB_TYPE_TIMESTAMP_S: {
		int64_t s = ((const int64_t *)data)[row];
		int64_t us = (s > INT64_MAX / 1000000 || s < INT64_MIN / 1000000) ? s : s * 1000000;
		add_timestamp(out, us, 0, false, false);
		break;
	}
	case DUCKDB_TYPE_TIMESTAMP_MS: {
		int64_t ms = ((const int64_t *)data)[row];
		int64_t us = (ms > INT64_MAX / 1000 || ms < INT64_MIN / 1000) ? ms : ms * 1000;
		add_timestamp(out, us, 0, false, false);
		break;
	}
	case DUCKDB_TYPE_TIMESTAMP_NS: {
		int64_t ns = ((const int64_t *)data)[row];
		int64_t us = ns / 1000, extra = ns % 1000;

		if (extra < 0) {
			us--;
			extra += 1000;
		}
		add_timestamp(out, us, extra, true, false);
		break;
	}
	case DUCKDB_TYPE_INTERVAL: {
		const duckdb_interval *iv = &((const duckdb_interval *)data)[row];
		nx_strbuf_addf(out, "{\"months\":%d,\"days\":%d,\"micros\":%lld}", (int)iv->months,
			       (int)iv->days, (long long)iv->micros);
		break;
	}
	case DUCKDB_TYPE_UUID:
		add_uuid(out, &((const duckdb_hugeint *)data)[row]);
		break;
	case DUCKDB_TYPE_ENUM: {
		uint64_t idx;

		if (rt->internal == DUCKDB_TYPE_UTINYINT)
			idx = ((const uint8_t *)data)[row];
		else if (rt->internal == DUCKDB_TYPE_USMALLINT)
			idx = ((const uint16_t *)data)[row];
		else
			idx = ((const uint32_t *)data)[row];
		if (idx < rt->nnames)
			nx_json_quote(out, rt->names[idx], strlen(rt->names[idx]));
		else
			nx_strbuf_addstr(out, "null");
		break;
	}
	default:
		add_nested(out, rt, v, data, row);
	}
}
