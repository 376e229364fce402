/* SPDX-License-Identifier: MIT
 * rowbuf.c: batches of rows (struct nx_rowbuf) over DuckDB data chunks: the setters the
 * row sources fill them with (duck.h), the column types of the schema's fields, and a
 * batch bound to a chunk (see rowbuf.h). Read by DuckDB's writer through nx_source()
 * and by ours (parquet_write.c). */
#include "common/compat.h"
#include "db/rowbuf.h"
#include "db/duck.h"
#include "common/xalloc.h"
#include "schema/schema.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

size_t nx_rowbuf_capacity(const struct nx_rowbuf *b)
{
	return b->capacity;
}

static inline void mark_valid(struct nx_rowbuf *b, size_t col, size_t row)
{
	b->validity[col][row >> 6] |= (uint64_t)1 << (row & 63);
}

/* Makes the cell of a list column a list of n items appended to the list's child vector
 * and returns the child and the index of its first item. Rows may be filled in any
 * order; each cell gets its own run of items. */
static duckdb_vector list_cell(struct nx_rowbuf *b, size_t col, size_t row, size_t n,
			       idx_t *first)
{
	duckdb_vector v = b->vec[col];
	idx_t off = duckdb_list_vector_get_size(v);
	duckdb_list_entry *e = b->data[col];

	duckdb_list_vector_reserve(v, off + n);
	duckdb_list_vector_set_size(v, off + n);
	e[row].offset = off;
	e[row].length = n;
	mark_valid(b, col, row);
	*first = off;
	return duckdb_list_vector_get_child(v);
}

/* Lays string i of a VARCHAR vector out as DuckDB does: up to 12 bytes inline, else a
 * prefix and a pointer to bytes (NULL: to a copy of s in arena). len <= UINT32_MAX. */
static void put_string(duckdb_vector v, idx_t i, const char *s, size_t len,
		       struct nx_arena *arena, const char *bytes)
{
	duckdb_string_t *d = (duckdb_string_t *)duckdb_vector_get_data(v) + i;
	d->value.inlined.length = (uint32_t)len;
	if (len <= sizeof(d->value.inlined.inlined)) {
		memset(d->value.inlined.inlined, 0, sizeof(d->value.inlined.inlined));
		if (len)
			memcpy(d->value.inlined.inlined, s, len);
	} else {
		memcpy(d->value.pointer.prefix, s, sizeof(d->value.pointer.prefix));
		d->value.pointer.ptr = bytes ? (char *)bytes : nx_arena_copy(arena, s, len);
	}
}

/* Sets string i of a VARCHAR vector: in DuckDB's heap, or, with an arena, in the arena. */
static void set_string(duckdb_vector v, idx_t i, const char *s, size_t len,
		       struct nx_arena *arena)
{
	if (!arena || len > UINT32_MAX) {
		duckdb_vector_assign_string_element_len(v, i, s, (idx_t)len);
		return;
	}
	put_string(v, i, s, len, arena, NULL);
}

/* Sets item i of a VARCHAR[] cell's child (valid even where a reused vector had a NULL). */
static void list_str_item(duckdb_vector child, idx_t i, const char *s, size_t len,
			  struct nx_arena *arena)
{
	uint64_t *valid;

	set_string(child, i, s, len, arena);
	valid = duckdb_vector_get_validity(child);
	if (valid)
		duckdb_validity_set_row_valid(valid, i);
}

void nx_rowbuf_i64list(struct nx_rowbuf *b, size_t col, size_t row, const int64_t *v, size_t n)
{
	idx_t first = 0;

	if (b->type[col] != NX_COL_LIST_BIGINT) {
		if (n)
			nx_rowbuf_i64(b, col, row, v[0]);
		return;
	}
	duckdb_vector child = list_cell(b, col, row, n, &first);
	int64_t *data = duckdb_vector_get_data(child);
	uint64_t *valid = duckdb_vector_get_validity(child);
	for (size_t i = 0; i < n; i++) {
		data[first + i] = v[i];
		if (valid)
			duckdb_validity_set_row_valid(valid, first + i);
	}
}

void nx_rowbuf_strlist(struct nx_rowbuf *b, size_t col, size_t row, const char *s, char sep)
{
	size_t n = 1;
	idx_t first = 0;

	if (!s)
		return;
	if (b->type[col] != NX_COL_LIST_VARCHAR) {
		nx_rowbuf_str(b, col, row, s);
		return;
	}
	for (const char *p = s; *p; p++)
		n += *p == sep;
	duckdb_vector child = list_cell(b, col, row, n, &first);
	for (size_t i = 0;; i++) {
		const char *end = strchr(s, sep);
		size_t len = end ? (size_t)(end - s) : strlen(s);
		list_str_item(child, first + i, s, len, b->arena);
		if (!end)
			break;
		s = end + 1;
	}
}

void nx_rowbuf_i64(struct nx_rowbuf *b, size_t col, size_t row, int64_t v)
{
	/* a BIGINT cell first: nearly every call of a trace table's sources, without the
	 * switch's indirect jump, mispredicted as the columns' types change */
	if (b->type[col] == NX_COL_BIGINT) {
		((int64_t *)b->data[col])[row] = v;
		mark_valid(b, col, row);
		return;
	}
	switch (b->type[col]) {
	case NX_COL_BIGINT: ((int64_t *)b->data[col])[row] = v; break;
	case NX_COL_INTEGER: ((int32_t *)b->data[col])[row] = (int32_t)v; break;
	case NX_COL_FLOAT: ((float *)b->data[col])[row] = (float)v; break;
	case NX_COL_DOUBLE: ((double *)b->data[col])[row] = (double)v; break;
	case NX_COL_BOOLEAN: ((bool *)b->data[col])[row] = v != 0; break;
	case NX_COL_VARCHAR: {
		char tmp[32];
		int n = snprintf(tmp, sizeof(tmp), "%" PRId64, v);
		set_string(b->vec[col], row, tmp, (size_t)n, b->arena);
		break;
	}
	case NX_COL_LIST_BIGINT:
		nx_rowbuf_i64list(b, col, row, &v, 1);
		return;
	case NX_COL_LIST_VARCHAR: {
		char tmp[32];
		int n = snprintf(tmp, sizeof(tmp), "%" PRId64, v);
		idx_t first = 0;
		duckdb_vector child = list_cell(b, col, row, 1, &first);
		list_str_item(child, first, tmp, (size_t)n, b->arena);
		return;
	}
	}
	mark_valid(b, col, row);
}

void nx_rowbuf_i32(struct nx_rowbuf *b, size_t col, size_t row, int32_t v)
{
	nx_rowbuf_i64(b, col, row, v);
}

void nx_rowbuf_f64(struct nx_rowbuf *b, size_t col, size_t row, double v)
{
	switch (b->type[col]) {
	case NX_COL_FLOAT: ((float *)b->data[col])[row] = (float)v; break;
	case NX_COL_DOUBLE: ((double *)b->data[col])[row] = v; break;
	default: nx_rowbuf_i64(b, col, row, (int64_t)llround(v)); return;
	}
	mark_valid(b, col, row);
}

void nx_rowbuf_f32(struct nx_rowbuf *b, size_t col, size_t row, float v)
{
	nx_rowbuf_f64(b, col, row, v);
}

void nx_rowbuf_bool(struct nx_rowbuf *b, size_t col, size_t row, bool v)
{
	nx_rowbuf_i64(b, col, row, v ? 1 : 0);
}

void nx_rowbuf_strn(struct nx_rowbuf *b, size_t col, size_t row, const char *s, size_t len)
{
	if (!s)
		return;
	if (b->type[col] == NX_COL_LIST_VARCHAR) {
		idx_t first = 0;
		duckdb_vector child = list_cell(b, col, row, 1, &first);
		list_str_item(child, first, s, len, b->arena);
		return;
	}
	if (b->type[col] != NX_COL_VARCHAR) {
		char *tmp = nx_xstrndup(s, len);
		nx_rowbuf_i64(b, col, row, strtoll(tmp, NULL, 10));
		free(tmp);
		return;
	}
	set_string(b->vec[col], row, s, len, b->arena);
	mark_valid(b, col, row);
}

void nx_rowbuf_str(struct nx_rowbuf *b, size_t col, size_t row, const char *s)
{
	if (s)
		nx_rowbuf_strn(b, col, row, s, strlen(s));
}

void nx_rowbuf_str_kept(struct nx_rowbuf *b, size_t col, size_t row, const char *s)
{
	if (s)
		nx_rowbuf_str_kept_len(b, col, row, s, strlen(s));
}

void nx_rowbuf_str_kept_len(struct nx_rowbuf *b, size_t col, size_t row, const char *s,
			    size_t len)
{
	if (!s)
		return;
	if (b->type[col] != NX_COL_VARCHAR || len > UINT32_MAX) {
		nx_rowbuf_strn(b, col, row, s, len);
		return;
	}
	put_string(b->vec[col], row, s, len, NULL, s);
	mark_valid(b, col, row);
}

int nx_colmap_init(struct nx_colmap *map, const char *table, const char *const *names,
		   struct nx_err *err)
{
	map->table = nx_schema_table(table);
	if (!map->table)
		return nx_errf(err, NX_EUSAGE, "table %s is not in the schema", table);
	for (size_t i = 0; names[i]; i++) {
		if (i >= NX_ARRAY_SIZE(map->idx))
			return nx_errf(err, NX_EUSAGE, "too many columns for %s", table);
		map->idx[i] = nx_schema_field_index(map->table, names[i]);
		if (map->idx[i] < 0)
			return nx_errf(err, NX_EUSAGE, "%s has no field %s", table, names[i]);
	}
	return 0;
}

/* The DuckDB types of the schema's column types (nx_schema_duck_type); anything else is
 * VARCHAR. */
static const struct coldef {
	const char *name;
	enum nx_coltype ct;
	duckdb_type item;
	bool list;
} coldefs[] = {
	{ "VARCHAR", NX_COL_VARCHAR, DUCKDB_TYPE_VARCHAR, false },
	{ "BIGINT", NX_COL_BIGINT, DUCKDB_TYPE_BIGINT, false },
	{ "INTEGER", NX_COL_INTEGER, DUCKDB_TYPE_INTEGER, false },
	{ "FLOAT", NX_COL_FLOAT, DUCKDB_TYPE_FLOAT, false },
	{ "DOUBLE", NX_COL_DOUBLE, DUCKDB_TYPE_DOUBLE, false },
	{ "BOOLEAN", NX_COL_BOOLEAN, DUCKDB_TYPE_BOOLEAN, false },
	{ "BIGINT[]", NX_COL_LIST_BIGINT, DUCKDB_TYPE_BIGINT, true },
	{ "VARCHAR[]", NX_COL_LIST_VARCHAR, DUCKDB_TYPE_VARCHAR, true },
};

static const struct coldef *coldef_of(const struct nx_field *f)
{
	const char *t = nx_schema_duck_type(f);

	for (size_t i = 0; t && i < NX_ARRAY_SIZE(coldefs); i++)
		if (!strcmp(t, coldefs[i].name))
			return &coldefs[i];
	return &coldefs[0];
}

enum nx_coltype nx_rowbuf_coltype(const struct nx_field *f)
{
	return coldef_of(f)->ct;
}

duckdb_logical_type nx_rowbuf_logical_type(const struct nx_field *f)
{
	const struct coldef *c = coldef_of(f);
	duckdb_logical_type item = duckdb_create_logical_type(c->item);

	if (!c->list)
		return item;
	duckdb_logical_type list = duckdb_create_list_type(item);
	duckdb_destroy_logical_type(&item);
	return list;
}

void nx_rowbuf_bind(struct nx_rowbuf *b, duckdb_data_chunk chunk, const struct nx_table *t)
{
	b->chunk = chunk;
	b->arena = NULL;
	b->keys = NULL;
	b->ncols = t->nfields;
	b->capacity = duckdb_vector_size();
	for (size_t c = 0; c < b->ncols; c++) {
		b->type[c] = coldef_of(&t->fields[c])->ct;
		b->vec[c] = duckdb_data_chunk_get_vector(chunk, c);
		b->data[c] = duckdb_vector_get_data(b->vec[c]);
		duckdb_vector_ensure_validity_writable(b->vec[c]);
		b->validity[c] = duckdb_vector_get_validity(b->vec[c]);
		memset(b->validity[c], 0, (b->capacity + 63) / 64 * sizeof(uint64_t));
		if (b->type[c] == NX_COL_LIST_BIGINT || b->type[c] == NX_COL_LIST_VARCHAR) {
			/* NULL cells still hold an entry; an empty one is the tidy value */
			memset(b->data[c], 0, b->capacity * sizeof(duckdb_list_entry));
			duckdb_list_vector_set_size(b->vec[c], 0);
		}
	}
}

uint32_t *nx_rowbuf_keys(struct nx_rowbuf *b)
{
	return b->keys;
}
