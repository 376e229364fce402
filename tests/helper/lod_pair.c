/* SPDX-License-Identifier: MIT
 * lod_pair.c: a timeline cache built two ways for the cache build tests (see
 * lod_pair.h). */
#include "common/compat.h"
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "helper/lod_pair.h"
#include "helper/asserts.h"
#include "helper/fixture.h"
#include "helper/profile_db.h"
#include "helper/server_fixture.h"
#include "server/lod_carried.h"
#include "common/strbuf.h"

#include <stdlib.h>

char *nx_lod_root;

int nx_lod_group_setup(void **state)
{
	(void)state;
	nx_lod_root = nx_sfx_tmpdir("lod");
	return nx_lod_root ? 0 : -1;
}

int nx_lod_group_teardown(void **state)
{
	(void)state;
	free(nx_lod_root);
	nx_lod_root = NULL;
	return 0;
}

void nx_lod_pyramid_view(struct nx_duck *d, const char *db)
{
	struct nx_strbuf sql = NX_STRBUF_INIT;
	int n = 0;

	nx_strbuf_addf(&sql, "CREATE OR REPLACE TEMP VIEW %s_lod AS ", db);
	for (int s = 0; s < 4; s++) {
		if (!nx_test_qi(d, "SELECT count(*) FROM duckdb_tables() WHERE database_name = "
				   "'%s' AND table_name = 'lod%d'", db, s))
			continue;
		nx_strbuf_addf(&sql, "%sSELECT %d::UTINYINT AS src, * REPLACE (track::VARCHAR AS "
				     "track, label::VARCHAR AS label) FROM %s.lod%d",
			       n++ ? " UNION ALL " : "", s, db, s);
	}
	if (!n)
		nx_strbuf_addstr(&sql, "SELECT NULL::UTINYINT AS src, NULL::UTINYINT AS level, "
				       "NULL::BIGINT AS k, NULL::BIGINT AS core, NULL::VARCHAR AS "
				       "track, NULL::BIGINT AS count LIMIT 0");
	nx_test_exf(d, "%s", sql.buf);
	nx_strbuf_release(&sql);
}

struct nx_duck *nx_lod_build_pair(const char *dir, const char *ref, const char *var,
				  const char *value, uint64_t *events)
{
	struct nx_err err = { 0 };
	struct nx_duck *d = NULL;
	uint64_t n = 0, ref_n = 0;

	assert_int_equal(nx_test_sh("rm -rf '%s' && cp -r '%s' '%s'", ref, dir, ref), 0);
	assert_ok(nx_lod_build_carried(dir, "p", &n, NULL, &err), &err);
	setenv(var, value, 1);
	assert_ok(nx_lod_build_carried(ref, "p", &ref_n, NULL, &err), &err);
	unsetenv(var);
	assert_true(n > 0);
	assert_int_equal(n, ref_n);
	assert_ok(nx_duck_open(&d, 2, NULL, &err), &err);
	nx_test_exf(d, "ATTACH '%s/.timeline/timeline.duckdb' AS a (READ_ONLY); "
		       "ATTACH '%s/.timeline/timeline.duckdb' AS b (READ_ONLY)", dir, ref);
	nx_lod_pyramid_view(d, "a");
	nx_lod_pyramid_view(d, "b");
	if (events)
		*events = n;
	return d;
}

char *nx_lod_timeline_profile(const char *tag)
{
	char *data = NULL, *dir = NULL;

	assert_true(asprintf(&data, "%s/%s", nx_lod_root, tag) > 0);
	assert_true(asprintf(&dir, "%s/profiles/global/t@latest", data) > 0);
	assert_int_equal(nx_sfx_make_timeline_profile(data, "t", true), 0);
	free(data);
	return dir;
}

int64_t nx_lod_same_tables(struct nx_duck *d, bool types)
{
	static const char *const tables[] = { "ev0", "ev1", "ev2", "ev3", "lod0", "lod1",
					       "lod2", "lod3", "tracks", "meta", "ctr", "ctr_burst", "ctr_lod",
					       "lines", "stamp" };
	int64_t found = 0;

	for (size_t i = 0; i < NX_ARRAY_SIZE(tables); i++) {
		if (!nx_test_qi(d, "SELECT count(*) FROM duckdb_tables() WHERE database_name = "
				   "'a' AND table_name = '%s'", tables[i]))
			continue;
		nx_test_same_rows(d, "a", "b", tables[i], true);
		if (types)
			assert_int_equal(nx_test_qi(d, "SELECT count(*) FROM (SELECT column_index, "
						       "data_type FROM duckdb_columns() WHERE "
						       "database_name = 'a' AND table_name = '%s' "
						       "EXCEPT SELECT column_index, data_type FROM "
						       "duckdb_columns() WHERE database_name = 'b' "
						       "AND table_name = '%s')",
						    tables[i], tables[i]),
					 0);
		found++;
	}
	assert_int_equal(found, nx_test_qi(d, "SELECT count(*) FROM duckdb_tables() WHERE "
					      "database_name = 'b'"));
	return found;
}
