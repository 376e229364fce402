/* SPDX-License-Identifier: MIT
 * test_fleet_files.c: the server's scan of a fleet run's index profile (fleet_files.c)
 * and the union views made from it (profile_db.c), on a hand-made run of three members
 * whose tables are real parquet files written by DuckDB, one member holding a split table
 * (parts U_0, U_1 where the others have U.parquet). The union tables keep their files as
 * member and base name numbers: every file is listed under its own name
 * ("../<member>@latest/<file>"), members listed but missing or misnamed are skipped,
 * each union view answers every member's rows with its member as `profile`, and a
 * member removed after the scan gives an error naming it, whether its table's view was
 * made before the removal or after. */
#include "common/compat.h"
#include "helper/test_dirs.h"
#include "common/fsutil.h"
#include "common/strbuf.h"
#include "common/xalloc.h"
#include "db/duck.h"
#include "db/table_files.h"
#include "server/profile_db.h"
#include "server/profile_files.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <cmocka.h>

static char *global; /* <data>/profiles/global */
static char *run;    /* the index profile, resolved */

/* Writes rows (a VALUES list of (x)) as the parquet file <member>@latest/<file>. */
static void put(struct nx_duck *d, const char *member, const char *file, const char *rows)
{
	char *dir = nx_xasprintf("%s/%s@latest", global, member);
	char *sql = nx_xasprintf("COPY (SELECT * FROM (VALUES %s) v(x)) TO '%s/%s' "
				 "(FORMAT parquet)", rows, dir, file);
	struct nx_err err = { 0 };

	assert_int_equal(nx_mkdirs(dir, &err), 0);
	if (nx_duck_exec(d, sql, &err))
		fail_msg("%s\n%s", err.msg, sql);
	free(sql);
	free(dir);
}

static int setup(void **state)
{
	char *top = nx_test_fresh_dir("fleet-files", "data");
	struct nx_duck *d = NULL;
	struct nx_err err = { 0 };
	char *list, *idx;

	(void)state;
	assert_non_null(top);
	global = nx_path_join(top, "profiles/global");
	assert_int_equal(nx_duck_open(&d, 1, NULL, &err), 0);
	put(d, "r", "FleetRun.parquet", "(1)");
	put(d, "r-a", "T.parquet", "(1), (2)");
	put(d, "r-b", "T.parquet", "(3), (4), (5)");
	put(d, "r-c", "T.parquet", "(6)");
	put(d, "r-a", "U.parquet", "(10)");
	put(d, "r-b", "U_0.parquet", "(20)");
	put(d, "r-b", "U_1.parquet", "(21), (22)");
	put(d, "r-a", "W.parquet", "(30)");
	put(d, "r-b", "W.parquet", "(31)");
	nx_duck_close(d);
	idx = nx_xasprintf("%s/r@latest", global);
	list = nx_path_join(idx, NX_PROFILE_FLEET_MEMBERS);
	/* a member that is not there and a name that is not a member name are skipped */
	{
		const char *m = "r-a\nr-gone\nr-b\n../x\nr-c\n";

		assert_int_equal(nx_write_file_atomic(list, m, strlen(m), &err), 0);
	}
	run = realpath(idx, NULL);
	assert_non_null(run);
	free(list);
	free(idx);
	free(top);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	free(global);
	free(run);
	return 0;
}

/* The names of t's files, joined by ' '. */
static char *names(const struct nx_ptable *t)
{
	struct nx_strbuf sb = NX_STRBUF_INIT;

	for (size_t i = 0; i < t->nfiles; i++) {
		char *f = nx__ptable_file(t, i);

		nx_strbuf_addf(&sb, "%s%s", i ? " " : "", f);
		free(f);
	}
	return sb.buf ? sb.buf : nx_xstrdup("");
}

static void union_files(void **state)
{
	struct nx_pfiles pf;
	struct nx_err err = { 0 };
	const struct nx_ptable *t;
	char *s;

	(void)state;
	assert_int_equal(nx__pfiles_scan(run, &pf, &err), 0);
	assert_non_null(pf.members);
	assert_int_equal(pf.members->n, 3);
	t = nx__pfiles_find(&pf, "FleetRun");
	assert_non_null(t);
	assert_false(t->members);
	s = names(t);
	assert_string_equal(s, "FleetRun.parquet");
	free(s);

	t = nx__pfiles_find(&pf, "t");
	assert_non_null(t);
	assert_true(t->members);
	assert_int_equal(t->nbases, 1);
	s = names(t);
	assert_string_equal(s, "../r-a@latest/T.parquet ../r-b@latest/T.parquet "
			       "../r-c@latest/T.parquet");
	free(s);

	t = nx__pfiles_find(&pf, "U");
	assert_non_null(t);
	assert_int_equal(t->nbases, 3);
	s = names(t);
	assert_string_equal(s, "../r-a@latest/U.parquet ../r-b@latest/U_0.parquet "
			       "../r-b@latest/U_1.parquet");
	free(s);
	assert_string_equal(nx__ptable_member(t, 2), "r-b");
	{
		uint64_t sum = 0;

		for (size_t i = 0; i < t->nfiles; i++) {
			char *rel = nx__ptable_file(t, i);
			char *path = nx_xasprintf("%s/%s", global, rel + 3);
			struct stat st;

			assert_int_equal(stat(path, &st), 0);
			assert_int_equal(t->sizes[i], (uint64_t)st.st_size);
			sum += t->sizes[i];
			free(path);
			free(rel);
		}
		assert_int_equal(t->bytes, sum);
	}
	nx__pfiles_release(&pf);
}

/* Runs sql on pdb: 0 with its JSON in *out, else the error code with err set. */
static int query(struct nx_pdb *pdb, const char *sql, char **out, struct nx_err *err)
{
	struct nx_query_limits lim = { 0, 1000, 1 << 20, NULL };
	struct nx_strbuf sb = NX_STRBUF_INIT;
	int rc = nx__pdb_query(pdb, sql, &lim, &sb, err);

	*out = sb.buf ? sb.buf : nx_xstrdup("");
	return rc;
}

static void expect_rows(struct nx_pdb *pdb, const char *sql, const char *rows)
{
	struct nx_err err = { 0 };
	char *out;

	if (query(pdb, sql, &out, &err))
		fail_msg("%s: %s", sql, err.msg);
	if (!strstr(out, rows))
		fail_msg("%s: %s, expected %s", sql, out, rows);
	free(out);
}

static void expect_error(struct nx_pdb *pdb, const char *sql, const char *named)
{
	struct nx_err err = { 0 };
	char *out;

	if (!query(pdb, sql, &out, &err))
		fail_msg("%s: answered %s", sql, out);
	if (!strstr(err.msg, named))
		fail_msg("%s: '%s' does not name %s", sql, err.msg, named);
	free(out);
}

static void views_and_removed_member(void **state)
{
	struct nx_pfiles pf;
	struct nx_pdb *pdb = NULL;
	struct nx_err err = { 0 };
	char *gone;

	(void)state;
	assert_int_equal(nx__pfiles_scan(run, &pf, &err), 0);
	if (nx__pdb_open(&pdb, run, &pf, 1, &err))
		fail_msg("%s", err.msg);
	expect_rows(pdb, "SELECT profile, count(*), sum(x) FROM T GROUP BY ALL ORDER BY 1",
		    "\"rows\":[[\"r-a\",2,3],[\"r-b\",3,12],[\"r-c\",1,6]]");
	expect_rows(pdb, "SELECT profile, count(*), sum(x) FROM U GROUP BY ALL ORDER BY 1",
		    "\"rows\":[[\"r-a\",1,10],[\"r-b\",3,63]]");
	expect_rows(pdb, "SELECT count(*) FROM FleetRun", "\"rows\":[[1]]");

	/* r-b removed after the scan: T's view was made before, W's is made after */
	gone = nx_xasprintf("%s/r-b@latest", global);
	assert_int_equal(nx_remove_tree(gone, &err), 0);
	expect_error(pdb, "SELECT count(*) FROM W", "member r-b");
	expect_error(pdb, "SELECT count(*) FROM T", "r-b@latest/T.parquet");
	/* the others still answer */
	expect_rows(pdb, "SELECT count(*) FROM FleetRun", "\"rows\":[[1]]");
	free(gone);
	nx__pdb_free(&pdb);
	nx__pfiles_release(&pf);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(union_files),
		cmocka_unit_test(views_and_removed_member),
	};

	return nx_test_done(cmocka_run_group_tests(tests, setup, teardown));
}
