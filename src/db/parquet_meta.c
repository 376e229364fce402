/* SPDX-License-Identifier: MIT
 * parquet_meta.c: schema elements and FileMetaData of our parquet files (see
 * parquet_meta.h). */
#include "common/compat.h"
#include "db/parquet_meta.h"
#include "common/le.h"
#include "db/thrift_compact.h"
#include "schema/schema.h"

#include <string.h>

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
	if (converted != NX_PQ_NONE) {
		nx_tc_write_field(out, last, NX_TC_I32, 6);
		nx_tc_write_zigzag(out, converted);
	}
	nx_strbuf_addch(out, NX_TC_STOP);
}

struct nx_pq_leaf nx_pq_leaf_of(const struct nx_field *f)
{
	static const struct {
		const char *duck;
		struct nx_pq_leaf leaf;
	} map[] = {
		{ "BIGINT", { NX_PQ_INT64, NX_PQ_INT_64, false } },
		{ "INTEGER", { NX_PQ_INT32, NX_PQ_INT_32, false } },
		{ "DOUBLE", { NX_PQ_DOUBLE, NX_PQ_NONE, false } },
		{ "FLOAT", { NX_PQ_FLOAT, NX_PQ_NONE, false } },
		{ "BOOLEAN", { NX_PQ_BOOLEAN, NX_PQ_NONE, false } },
		{ "VARCHAR", { NX_PQ_BYTE_ARRAY, NX_PQ_UTF8, false } },
		{ "BIGINT[]", { NX_PQ_INT64, NX_PQ_INT_64, true } },
		{ "VARCHAR[]", { NX_PQ_BYTE_ARRAY, NX_PQ_UTF8, true } },
	};
	const char *duck = nx_schema_duck_type(f);

	for (size_t i = 0; duck && i < NX_ARRAY_SIZE(map); i++)
		if (!strcmp(map[i].duck, duck))
			return map[i].leaf;
	return (struct nx_pq_leaf){ NX_PQ_BYTE_ARRAY, NX_PQ_UTF8, false };
}

static void column(struct nx_strbuf *out, const struct nx_field *f)
{
	struct nx_pq_leaf l = nx_pq_leaf_of(f);

	if (l.list) {
		element(out, -1, NX_PQ_OPTIONAL, f->name, 1, NX_PQ_LIST);
		element(out, -1, NX_PQ_REPEATED, "list", 1, NX_PQ_NONE);
		element(out, l.type, NX_PQ_OPTIONAL, "element", -1, l.converted);
	} else {
		element(out, l.type, NX_PQ_OPTIONAL, f->name, -1, l.converted);
	}
}

/* The number of schema elements: the root, one per scalar, three per list. */
static uint32_t elements(const struct nx_table *t)
{
	uint32_t n = 1;

	for (size_t i = 0; i < t->nfields; i++)
		n += nx_pq_leaf_of(&t->fields[i]).list ? 3 : 1;
	return n;
}

void nx_pq_file_metadata(struct nx_strbuf *out, const struct nx_table *t, uint64_t num_rows,
			 const struct nx_strbuf *row_groups, uint32_t nrow_groups,
			 const char *created_by)
{
	/* FileMetaData: 1 version, 2 schema, 3 num_rows, 4 row_groups, 6 created_by */
	nx_tc_write_field(out, 0, NX_TC_I32, 1);
	nx_tc_write_zigzag(out, 1);
	nx_tc_write_field(out, 1, NX_TC_LIST, 2);
	nx_tc_write_list(out, elements(t), NX_TC_STRUCT);
	element(out, -1, NX_PQ_REQUIRED, "duckdb_schema", (int)t->nfields, NX_PQ_NONE);
	for (size_t i = 0; i < t->nfields; i++)
		column(out, &t->fields[i]);
	nx_tc_write_field(out, 2, NX_TC_I64, 3);
	nx_tc_write_zigzag(out, (int64_t)num_rows);
	nx_tc_write_field(out, 3, NX_TC_LIST, 4);
	nx_tc_write_list(out, nrow_groups, NX_TC_STRUCT);
	if (row_groups)
		nx_strbuf_add(out, row_groups->buf, row_groups->len);
	nx_tc_write_field(out, 4, NX_TC_BINARY, 6);
	nx_tc_write_varint(out, strlen(created_by));
	nx_strbuf_addstr(out, created_by);
	nx_strbuf_addch(out, NX_TC_STOP);
}

void nx_pq_tail(struct nx_strbuf *out, size_t footer_len)
{
	uint8_t le[4];

	nx_put_le32(le, (uint32_t)footer_len);
	nx_strbuf_add(out, le, 4);
	nx_strbuf_add(out, "PAR1", 4);
}
