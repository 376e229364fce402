/* SPDX-License-Identifier: MIT
 * test_derive_settings.c: the settings a derive SQL file's header gives its one query
 * ("-- memory:", "-- optimizers off:", "-- threads:", derive/derive.c) are set back after
 * it, on a real DuckDB: files of our own run by nx_derive_run_files write the settings
 * their query ran under (current_setting); a file with the three headers runs under
 * them, and the file after it, a table file with them, the file after that and the
 * connection after a file with them whose query fails run under the derive's defaults
 * (the connection's threads, no optimizer off, nx_derive_memory_limit). */
#include "common/compat.h"
#include "common/fsutil.h"
#include "common/xalloc.h"
#include "derive/derive.h"
#include "derive/sql_files.h"
#include "helper/fixture.h"
#include "helper/profile_db.h"
#include "helper/test_dirs.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

/* the settings a query runs under, as one row */
#define SETTINGS_SQL                                                                         \
	"SELECT current_setting('memory_limit') AS memory, "                                  \
	"current_setting('disabled_optimizers') AS optimizers, "                              \
	"current_setting('threads')::BIGINT AS threads"
#define HEADERS "-- memory: 64MB\n-- optimizers off: join_order\n-- threads: 1\n"

static const struct nx_sql_file files[] = {
	{ "1_own.sql", "-- stage: own\n" HEADERS SETTINGS_SQL },
	{ "2_plain.sql", "-- stage: plain\n" SETTINGS_SQL },
	{ "3_table.sql", "-- table: ThrottleSummary\n" HEADERS SETTINGS_SQL },
	{ "4_after_table.sql", "-- stage: after_table\n" SETTINGS_SQL },
};
static const struct nx_sql_file failing[] = {
	{ "1_fails.sql", "-- stage: fails\n" HEADERS "SELECT * FROM no_such_table" },
};

struct ctx {
	char *dir, *staging;
	struct nx_duck *d;
};

/* The derive's connection as the ingest opens it (two threads, the derive's limit), and
 * its settings then in the table defaults. */
static int setup(void **state)
{
	struct ctx *c = nx_xcalloc(1, sizeof(*c));
	struct nx_err err = { 0 };

	c->dir = nx_test_dir("derive-settings");
	c->staging = nx_path_join(c->dir, "staging");
	assert_int_equal(nx_mkdirs(c->staging, &err), 0);
	assert_int_equal(nx_duck_open(&c->d, 2, nx_derive_memory_limit(), &err), 0);
	nx_test_exf(c->d, "CREATE TABLE defaults AS " SETTINGS_SQL);
	assert_int_equal(nx_test_qi(c->d, "SELECT count(*) FROM defaults WHERE threads = 2 AND "
				    "optimizers = ''"), 1);
	*state = c;
	return 0;
}

static int teardown(void **state)
{
	struct ctx *c = *state;

	nx_duck_close(c->d);
	free(c->dir);
	free(c->staging);
	free(c);
	return 0;
}

/* The rows of relation (settings as SETTINGS_SQL gives them) equal to those of other. */
static int64_t same_settings(struct ctx *c, const char *relation, const char *other)
{
	return nx_test_qi(c->d, "SELECT count(*) FROM %s s, %s o WHERE s.memory = o.memory AND "
			  "s.optimizers = o.optimizers AND s.threads = o.threads", relation,
			  other);
}

/* A file's output in staging, as a relation (caller frees). */
static char *staged(struct ctx *c, const char *name)
{
	return nx_xasprintf("read_parquet('%s/%s.parquet')", c->staging, name);
}

static void test_set_back_after_each_file(void **state)
{
	struct ctx *c = *state;
	struct nx_err err = { 0 };
	char *own = staged(c, "own"), *plain = staged(c, "plain");
	char *after = staged(c, "after_table");

	if (nx_derive_run_files(c->d, c->dir, c->staging, files, NX_ARRAY_SIZE(files), NULL, NULL,
				NULL, &err))
		fail_msg("%s", err.msg);
	assert_int_equal(same_settings(c, "(" SETTINGS_SQL ")", "defaults"), 1);
	assert_int_equal(same_settings(c, plain, "defaults"), 1);
	assert_int_equal(same_settings(c, after, "defaults"), 1);
	/* the table file ran: its one row of the schema's columns */
	assert_int_equal(nx_test_qi(c->d, "SELECT count(*) FROM read_parquet('%s/"
				    "ThrottleSummary.parquet')", c->dir), 1);
	/* the first file ran under its headers */
	assert_int_equal(same_settings(c, own, "defaults"), 0);
	nx_test_exf(c->d, "SET memory_limit = '64MB'; SET disabled_optimizers = 'join_order'; "
			  "SET threads = 1");
	assert_int_equal(same_settings(c, own, "(" SETTINGS_SQL ")"), 1);
	nx_test_exf(c->d, "SET memory_limit = '%s'; SET disabled_optimizers = ''; SET threads = 2",
		    nx_derive_memory_limit());
	assert_int_equal(same_settings(c, "(" SETTINGS_SQL ")", "defaults"), 1);
	free(own);
	free(plain);
	free(after);
}

/* A file whose query fails: its error is the one reported, its settings set back. */
static void test_set_back_after_a_failure(void **state)
{
	struct ctx *c = *state;
	struct nx_err err = { 0 };

	assert_int_not_equal(nx_derive_run_files(c->d, c->dir, c->staging, failing,
						 NX_ARRAY_SIZE(failing), NULL, NULL, NULL, &err),
			     0);
	assert_non_null(strstr(err.msg, "no_such_table"));
	assert_non_null(strstr(err.msg, "1_fails.sql"));
	assert_int_equal(same_settings(c, "(" SETTINGS_SQL ")", "defaults"), 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_set_back_after_each_file),
		cmocka_unit_test(test_set_back_after_a_failure),
	};

	return nx_test_done(cmocka_run_group_tests(tests, setup, teardown));
}
