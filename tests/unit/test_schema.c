/* SPDX-License-Identifier: MIT
 * test_schema.c: the compiled schema against the facts of the reference schema
 * (tests/data/schema/reference-schema-7.4.0.tsv, see tests/data/README.md): every table
 * and field in order, with type, format, unit and requiredness exactly as the reference
 * has them; enum values; the DuckDB column types; and descriptions written in our own
 * words (no description may hash to the reference sentence's SHA-256). */
#include "common/compat.h"
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "helper/asserts.h"

#include "common/fsutil.h"
#include "common/sha256.h"
#include "common/xalloc.h"
#include "schema/schema.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char *reference;

static int setup(void **state)
{
	struct nx_err err = { 0 };
	const char *src = getenv("NX_SOURCE_DIR");
	char *path = nx_xasprintf("%s/tests/data/schema/reference-schema-7.4.0.tsv", src ? src : ".");
	(void)state;
	if (nx_read_file(path, &reference, NULL, &err))
		fail_msg("the reference schema is needed for this test: %s", err.msg);
	free(path);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	free(reference);
	return 0;
}

/* Splits one TSV line into at most n columns (in place). */
static int split(char *line, char **col, int n)
{
	int k = 0;
	for (char *p = line; k < n;) {
		col[k++] = p;
		char *tab = strchr(p, '\t');
		if (!tab)
			break;
		*tab = '\0';
		p = tab + 1;
	}
	return k;
}

static void test_counts(void **state)
{
	size_t fields = 0;
	(void)state;
	assert_int_equal(nx_schema_table_count, 52);
	for (size_t t = 0; t < nx_schema_table_count; t++)
		fields += nx_schema_tables[t].nfields;
	assert_int_equal(fields, 656);
	assert_int_equal(nx_schema_enum_value_count, 15);
	assert_string_equal(nx_schema_version(), "7.4.0");
}

/* Lower-case hex SHA-256 of s. */
static void sha256_hex(const char *s, char out[2 * NX_SHA256_SIZE + 1])
{
	uint8_t d[NX_SHA256_SIZE];

	nx_sha256(s, strlen(s), d);
	for (size_t i = 0; i < NX_SHA256_SIZE; i++)
		snprintf(out + 2 * i, 3, "%02x", d[i]);
}

/* Walks the reference in order and checks each field against ours. */
static void test_matches_reference(void **state)
{
	char *copy = nx_xstrdup(reference), *save = NULL;
	size_t t = 0, f = 0, checked = 0;
	const char *last_table = "";
	(void)state;

	for (char *line = strtok_r(copy, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char *c[8], hex[2 * NX_SHA256_SIZE + 1];
		if (split(line, c, 8) < 8 || !strcmp(c[0], "table"))
			continue;
		if (!strcmp(c[1], "enum"))
			continue; /* enum pseudo-tables are checked in test_enums */
		if (strcmp(c[0], last_table)) {
			if (checked)
				t++;
			f = 0;
			last_table = c[0];
		}
		NX_ASSERT_CMP(t, <, nx_schema_table_count);
		const struct nx_table *tab = &nx_schema_tables[t];
		assert_string_equal(tab->name, c[0]);
		NX_ASSERT_CMP(f, <, tab->nfields);
		const struct nx_field *fl = &tab->fields[f];
		assert_string_equal(fl->name, c[2]);
		if (!strncmp(c[3], "$ref ", 5)) {
			assert_string_equal(fl->type, "ref");
			assert_string_equal(fl->format, c[3] + 5);
		} else {
			assert_string_equal(fl->type, c[3]);
		}
		if (!strcmp(c[3], "integer") || !strcmp(c[3], "number"))
			assert_string_equal(fl->format, c[4]);
		assert_string_equal(fl->unit, c[5]);
		assert_int_equal(fl->required, !strcmp(c[6], "yes"));
		/* descriptions are ours: never the reference sentence */
		assert_int_equal(strlen(c[7]), 2 * NX_SHA256_SIZE);
		sha256_hex(fl->description, hex);
		NX_ASSERT_CMP(strcmp(hex, c[7]), !=, 0);
		NX_ASSERT_CMP(strlen(fl->description), >, 10);
		f++;
		checked++;
	}
	assert_int_equal(checked, 656);
	free(copy);
}

static void test_enums_and_types(void **state)
{
	char buf[256];
	(void)state;
	nx_schema_enum_list("DmaQueueType", buf, sizeof(buf));
	assert_string_equal(buf, "instruction,input,output,data,software_dynamic,hardware_dynamic,unknown");
	nx_schema_enum_list("ErrorType", buf, sizeof(buf));
	assert_string_equal(buf, "Custom Notification,Errors,Warnings");
	nx_schema_enum_list("PerformanceMode", buf, sizeof(buf));
	assert_string_equal(buf, "2x,4x");

	const struct nx_table *t = nx_schema_table("DmaPacket");
	assert_non_null(t);
	assert_string_equal(nx_schema_duck_type(&t->fields[nx_schema_field_index(t, "packet_idx")]), "INTEGER");
	assert_string_equal(nx_schema_duck_type(&t->fields[nx_schema_field_index(t, "throughput")]), "FLOAT");
	assert_string_equal(nx_schema_duck_type(&t->fields[nx_schema_field_index(t, "queue_type")]), "VARCHAR");
	assert_string_equal(t->fields[nx_schema_field_index(t, "queue_type")].enum_name, "DmaQueueType");
	t = nx_schema_table("BirInstruction");
	assert_string_equal(nx_schema_duck_type(&t->fields[nx_schema_field_index(t, "element_count_per_interval")]),
			    "BIGINT[]");
	t = nx_schema_table("SystemProfileEvents");
	assert_string_equal(nx_schema_duck_type(&t->fields[nx_schema_field_index(t, "flow_id")]), "VARCHAR[]");
	t = nx_schema_table("Summary");
	assert_string_equal(nx_schema_duck_type(&t->fields[nx_schema_field_index(t, "total_time")]), "FLOAT");
	assert_false(nx_schema_table("MemoryBandwidthPoint")->written);
	assert_null(nx_schema_table("NoSuchTable"));
	assert_int_equal(nx_schema_field_index(nx_schema_table("Summary"), "nope"), -1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_counts),
		cmocka_unit_test(test_matches_reference),
		cmocka_unit_test(test_enums_and_types),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
