/* SPDX-License-Identifier: MIT
 * parquet_empty.c: zero-row parquet files from the schema (see parquet_empty.h). */
#include "common/compat.h"
#include "db/parquet_empty.h"
#include "common/fsutil.h"
#include "db/thrift_compact.h"
#include "schema/schema.h"

#include <string.h>

/* parquet.thrift's codes, only those used here. */
enum { PQ_BOOLEAN = 0, PQ_INT32 = 1, PQ_INT64 = 2, PQ_FLOAT = 4, PQ_DOUBLE = 5,
       PQ_BYTE_ARRAY = 6 };
enum { PQ_REQUIRED = 0, PQ_OPTIONAL = 1, PQ_REPEATED = 2 };
enum { PQ_NONE = -1, PQ_UTF8 = 0, PQ_LIST = 3, PQ_INT_32 = 17, PQ_INT_64 = 18 };

/* A column's leaf: physical and converted type (PQ_NONE when it has none), and whether
 * the column is a list of it. */
struct leaf {
	int type, converted;
	bool list;
};

/* SchemaElement's fields, in id order: 1 type, 3 repetition_type, 4 name,
 * 5 num_children, 6 converted_type. type < 0 or children < 0 leave theirs out. */
static void element(struct nx_strbuf *out, int type, int repetition, const char *name,
		    int children, int converted)
{
	int16_t last = 0;

	if (type >= 0) {
		nx_tc_write_field(out, last, NX_TC_I32, 1);
		nx_tc_write_zigzag(out, type);
		last = 1;
	}
	nx_tc_write_field(out, last, NX_TC_I32, 3);
	nx_tc_write_zigzag(out, repetition);
	nx_tc_write_field(out, 3, NX_TC_BINARY, 4);
	nx_tc_write_varint(out, strlen(name));
	nx_strbuf_addstr(out, name);
	last = 4;
	if (children >= 0) {
		nx_tc_write_field(out, last, NX_TC_I32, 5);
		nx_tc_write_zigzag(out, children);
		last = 5;
	}
	if (converted != PQ_NONE) {
		nx_tc_write_field(out, last, NX_TC_I32, 6);
		nx_tc_write_zigzag(out, converted);
	}
	nx_strbuf_addch(out, NX_TC_STOP);
}

/* The leaf of a field's DuckDB type; a type this writer does not know is written as
 * VARCHAR, as the SQL path did. */
static struct leaf leaf_of(const struct nx_field *f)
{
	static const struct {
		const char *duck;
		struct leaf leaf;
	} map[] = {
		{ "BIGINT", { PQ_INT64, PQ_INT_64, false } },
		{ "INTEGER", { PQ_INT32, PQ_INT_32, false } },
		{ "DOUBLE", { PQ_DOUBLE, PQ_NONE, false } },
		{ "FLOAT", { PQ_FLOAT, PQ_NONE, false } },
		{ "BOOLEAN", { PQ_BOOLEAN, PQ_NONE, false } },
		{ "VARCHAR", { PQ_BYTE_ARRAY, PQ_UTF8, false } },
		{ "BIGINT[]", { PQ_INT64, PQ_INT_64, true } },
		{ "VARCHAR[]", { PQ_BYTE_ARRAY, PQ_UTF8, true } },
	};
	const char *duck = nx_schema_duck_type(f);

	for (size_t i = 0; duck && i < sizeof(map) / sizeof(map[0]); i++)
		if (!strcmp(map[i].duck, duck))
			return map[i].leaf;
	return (struct leaf){ PQ_BYTE_ARRAY, PQ_UTF8, false };
}

/* A column: a scalar, or a list in parquet's three levels
 * (optional group name (LIST) { repeated group list { optional element } }). */
static void column(struct nx_strbuf *out, const struct nx_field *f)
{
	struct leaf l = leaf_of(f);

	if (l.list) {
		element(out, -1, PQ_OPTIONAL, f->name, 1, PQ_LIST);
		element(out, -1, PQ_REPEATED, "list", 1, PQ_NONE);
		element(out, l.type, PQ_OPTIONAL, "element", -1, l.converted);
	} else {
		element(out, l.type, PQ_OPTIONAL, f->name, -1, l.converted);
	}
}

/* The number of schema elements: the root, one per scalar, three per list. */
static uint32_t elements(const struct nx_table *t)
{
	uint32_t n = 1;

	for (size_t i = 0; i < t->nfields; i++)
		n += leaf_of(&t->fields[i]).list ? 3 : 1;
	return n;
}

void nx_parquet_empty_bytes(const struct nx_table *t, const char *created_by,
			    struct nx_strbuf *out)
{
	size_t start;

	nx_strbuf_add(out, "PAR1", 4);
	start = out->len;
	/* FileMetaData: 1 version, 2 schema, 3 num_rows, 4 row_groups, 6 created_by */
	nx_tc_write_field(out, 0, NX_TC_I32, 1);
	nx_tc_write_zigzag(out, 1);
	nx_tc_write_field(out, 1, NX_TC_LIST, 2);
	nx_tc_write_list(out, elements(t), NX_TC_STRUCT);
	element(out, -1, PQ_REQUIRED, "duckdb_schema", (int)t->nfields, PQ_NONE);
	for (size_t i = 0; i < t->nfields; i++)
		column(out, &t->fields[i]);
	nx_tc_write_field(out, 2, NX_TC_I64, 3);
	nx_tc_write_zigzag(out, 0);
	nx_tc_write_field(out, 3, NX_TC_LIST, 4);
	nx_tc_write_list(out, 0, NX_TC_STRUCT);
	nx_tc_write_field(out, 4, NX_TC_BINARY, 6);
	nx_tc_write_varint(out, strlen(created_by));
	nx_strbuf_addstr(out, created_by);
	nx_strbuf_addch(out, NX_TC_STOP);
	uint32_t len = (uint32_t)(out->len - start);
	unsigned char le[4] = { (unsigned char)len, (unsigned char)(len >> 8),
				(unsigned char)(len >> 16), (unsigned char)(len >> 24) };
	nx_strbuf_add(out, le, 4);
	nx_strbuf_add(out, "PAR1", 4);
}

int nx_parquet_write_empty(const struct nx_table *t, const char *path, struct nx_err *err)
{
	struct nx_strbuf b = NX_STRBUF_INIT;
	int rc;

	nx_parquet_empty_bytes(t, NX_PARQUET_EMPTY_CREATED_BY, &b);
	rc = nx_write_file_atomic(path, b.buf, b.len, err);
	nx_strbuf_release(&b);
	return rc;
}
