/* SPDX-License-Identifier: MIT
 * profile_db.c: shared test plumbing over ingested profiles (see profile_db.h). */
#include "common/compat.h"
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "helper/profile_db.h"
#include "common/xalloc.h"
#include "common/fsutil.h"
#include "db/profile_views.h"
#include "ingest/ingest.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

char *nx_test_ingest(const char *neff, const char *ntff, const char *data, const char *name)
{
	struct nx_ingest_opts io = { 0 };
	struct nx_err err = { 0 };
	char *out = NULL;

	io.neff_path = neff;
	io.ntff_path = ntff;
	io.data_path = data;
	io.display_name = name;
	io.quiet = true;
	if (nx_ingest(&io, &out, &err))
		fail_msg("%s: %s", name, err.msg);
	return out;
}

char *nx_test_ingest_fixture(const char *dir, const char *data, const struct nx_fixture_opts *fo,
			     const char *name)
{
	struct nx_err err = { 0 };
	char *sub = nx_path_join(dir, name);
	char *neff = nx_path_join(sub, "fixture.neff"), *ntff = nx_path_join(sub, "fixture.ntff");
	char *out;

	if (nx_mkdirs(sub, &err) || nx_fixture_write(sub, fo, &err))
		fail_msg("%s", err.msg);
	out = nx_test_ingest(neff, ntff, data, name);
	free(sub);
	free(neff);
	free(ntff);
	return out;
}

struct nx_duck *nx_test_duck(void)
{
	struct nx_duck *d = NULL;
	struct nx_err err = { 0 };

	if (nx_duck_open(&d, 1, NULL, &err))
		fail_msg("%s", err.msg);
	return d;
}

void nx_test_use_profile(struct nx_duck **d, const char *profile)
{
	struct nx_err err = { 0 };

	nx_duck_close(*d);
	*d = NULL;
	if (nx_duck_open(d, 1, NULL, &err) || nx_db_profile_views(*d, profile, &err))
		fail_msg("%s: %s", profile, err.msg);
}

double nx_test_q(struct nx_duck *d, const char *sql)
{
	double v = NAN;
	struct nx_err err = { 0 };
	if (nx_duck_query_f64(d, sql, &v, &err))
		fail_msg("%s: %s", sql, err.msg);
	return v;
}

/* A formatted statement (caller frees). */
static char *format_sql(const char *fmt, va_list ap) NX_PRINTF(1, 0);
static char *format_sql(const char *fmt, va_list ap)
{
	char *sql;

	if (vasprintf(&sql, fmt, ap) < 0)
		fail();
	return sql;
}

int64_t nx_test_qi(struct nx_duck *d, const char *fmt, ...)
{
	struct nx_err err = { 0 };
	int64_t v = -1;
	va_list ap;

	va_start(ap, fmt);
	char *sql = format_sql(fmt, ap);
	va_end(ap);
	if (nx_duck_query_i64(d, sql, &v, &err))
		fail_msg("%s: %s", sql, err.msg);
	free(sql);
	return v;
}

void nx_test_exf(struct nx_duck *d, const char *fmt, ...)
{
	struct nx_err err = { 0 };
	va_list ap;

	va_start(ap, fmt);
	char *sql = format_sql(fmt, ap);
	va_end(ap);
	if (nx_duck_exec(d, sql, &err))
		fail_msg("%s: %s", sql, err.msg);
	free(sql);
}

/* Whether table t of attached database db exists. */
static bool table_exists(struct nx_duck *d, const char *db, const char *t)
{
	return nx_test_qi(d, "SELECT count(*) FROM duckdb_tables() WHERE database_name = '%s' "
			     "AND table_name = '%s'", db, t) > 0;
}

void nx_test_same_rows(struct nx_duck *d, const char *a, const char *b, const char *t,
		       bool in_order)
{
	/* the timeline cache's pyramid: one table per event source, lod0..lod3 */
	if (!strcmp(t, "lod")) {
		for (int s = 0; s < 4; s++) {
			char name[8];

			snprintf(name, sizeof(name), "lod%d", s);
			if (table_exists(d, a, name) != table_exists(d, b, name))
				fail_msg("%s: in one of %s and %s only", name, a, b);
			if (table_exists(d, a, name))
				nx_test_same_rows(d, a, b, name, in_order);
		}
		return;
	}
	const char *row = in_order ? "rowid, *" : "*";
	int64_t na = nx_test_qi(d, "SELECT count(*) FROM %s.%s", a, t);

	if (na != nx_test_qi(d, "SELECT count(*) FROM %s.%s", b, t))
		fail_msg("%s: %" PRId64 " rows in %s, not as many in %s", t, na, a, b);
	for (int k = 0; k < 2; k++) {
		const char *x = k ? b : a, *y = k ? a : b;
		int64_t n = nx_test_qi(d, "SELECT count(*) FROM (SELECT %s FROM %s.%s "
					  "EXCEPT ALL SELECT %s FROM %s.%s)", row, x, t, row, y, t);
		if (n)
			fail_msg("%s: %" PRId64 " rows of %s are not in %s", t, n, x, y);
	}
}

char *nx_test_slurp(const char *path, size_t *len)
{
	char *data;
	struct nx_err err = { 0 };

	if (nx_read_file(path, &data, len, &err))
		fail_msg("%s", err.msg);
	return data;
}

char *nx_test_reference(const char *name)
{
	const char *src = getenv("NX_SOURCE_DIR");
	char *path = nx_xasprintf("%s/tests/unit/reference/%s", src ? src : ".", name);
	char *text = nx_test_slurp(path, NULL);

	free(path);
	return text;
}

void nx_test_spit(const char *path, const void *data, size_t len)
{
	FILE *f = fopen(path, "wb");

	if (!f || (len && fwrite(data, 1, len, f) != len) || fclose(f))
		fail_msg("write %s", path);
}
