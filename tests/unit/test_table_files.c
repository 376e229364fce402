/* SPDX-License-Identifier: MIT
 * test_table_files.c: the one rule that maps a profile directory's files to tables
 * (db/table_files.h), and the two readers that follow it: the views of the derive
 * stage (db/profile_views.c) and the server's scan (server/profile_files.c) see the
 * same tables, with the parts of a split table in numeric order. */
#include "common/compat.h"
#include "db/duck.h"
#include "db/profile_views.h"
#include "db/table_files.h"
#include "server/profile_files.h"
#include "helper/fixture.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

static void check(const char *file, const char *table, long index)
{
	char *t = NULL;
	long i = 99;
	bool ok = nx_table_file_parse(file, &t, &i);

	if (!table) {
		if (ok)
			fail_msg("%s: expected no table, got '%s' part %ld", file, t, i);
		return;
	}
	if (!ok)
		fail_msg("%s: expected table '%s', got none", file, table);
	if (strcmp(t, table) || i != index)
		fail_msg("%s: expected '%s' part %ld, got '%s' part %ld", file, table, index, t, i);
	free(t);
}

static void test_parse(void **state)
{
	(void)state;
	check("Instruction.parquet", "Instruction", -1);
	check("Instruction_0.parquet", "Instruction", 0);
	check("Instruction_12.parquet", "Instruction", 12);
	check("nx_Profile.parquet", "nx_Profile", -1);
	check("A_b_3.parquet", "A_b", 3);
	check("A_b.parquet", "A_b", -1);
	check("A_1x.parquet", "A_1x", -1);
	check("_3.parquet", "_3", -1);
	check("A_.parquet", "A_", -1);
	check("A_1234567890.parquet", "A_1234567890", -1); /* more than 9 digits */
	check("A_123456789.parquet", "A", 123456789);
	check(".A.parquet", NULL, 0);
	check("A.tmp.parquet", NULL, 0);
	check("A.parquet.tmp", NULL, 0);
	check(".parquet", NULL, 0);
	check("A.csv", NULL, 0);
}

static void write_part(const char *dir, const char *file, int first, int count)
{
	char *sql = NULL;
	struct nx_duck *d = NULL;
	struct nx_err err = { 0 };

	if (asprintf(&sql, "COPY (SELECT range AS id FROM range(%d, %d)) TO '%s/%s' "
		     "(FORMAT parquet)", first, first + count, dir, file) < 0)
		fail();
	if (nx_duck_open(&d, 1, NULL, &err) || nx_duck_exec(d, sql, &err))
		fail_msg("%s: %s", sql, err.msg);
	nx_duck_close(d);
	free(sql);
}

static void test_readers_agree(void **state)
{
	char *dir = nx_test_dir("table-files");
	struct nx_pfiles pf;
	struct nx_duck *d = NULL;
	struct nx_err err = { 0 };
	int64_t n = 0, first = 0;

	(void)state;
	write_part(dir, "T_10.parquet", 100, 5);
	write_part(dir, "T_2.parquet", 20, 3);
	write_part(dir, "T_x.parquet", 0, 7);  /* table T_x, not a part of T */
	write_part(dir, ".T_3.parquet", 0, 1); /* hidden */
	assert_int_equal(nx__pfiles_scan_plain(dir, &pf, &err), 0);
	assert_int_equal(pf.n, 2);
	assert_string_equal(pf.t[0].name, "T");
	assert_int_equal(pf.t[0].nfiles, 2);
	assert_string_equal(pf.t[0].files[0], "T_2.parquet");
	assert_string_equal(pf.t[0].files[1], "T_10.parquet");
	assert_string_equal(pf.t[1].name, "T_x");
	nx__pfiles_release(&pf);

	assert_int_equal(nx_duck_open(&d, 1, NULL, &err), 0);
	if (nx_db_create_views(d, dir, &err) ||
	    nx_duck_query_i64(d, "SELECT count(*) FROM T", &n, &err) ||
	    nx_duck_query_i64(d, "SELECT id FROM T LIMIT 1", &first, &err))
		fail_msg("%s", err.msg);
	assert_int_equal(n, 8);
	assert_int_equal(first, 20);
	if (nx_duck_query_i64(d, "SELECT count(*) FROM T_x", &n, &err))
		fail_msg("%s", err.msg);
	assert_int_equal(n, 7);
	nx_duck_close(d);
	free(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse),
		cmocka_unit_test(test_readers_agree),
	};
	return nx_test_done(cmocka_run_group_tests(tests, NULL, NULL));
}
