/* SPDX-License-Identifier: MIT
 * profile_db.h: test plumbing shared by the derive, on-chip and recommend tests: ingest
 * the fixture pair as a named profile, open a DuckDB (bare, or with a view per table of a
 * profile), and query single numbers. Every failure is a cmocka test failure with the message. */
#ifndef NX_TEST_PROFILE_DB_H
#define NX_TEST_PROFILE_DB_H

#include "db/duck.h"
#include "helper/fixture.h"

/* Ingests neff + ntff into data as <name>; returns the published profile directory
 * (caller frees). */
char *nx_test_ingest(const char *neff, const char *ntff, const char *data, const char *name);
/* Writes the fixture pair into dir/<name>/ and ingests it into data as <name>;
 * returns the published profile directory (caller frees). */
char *nx_test_ingest_fixture(const char *dir, const char *data, const struct nx_fixture_opts *fo,
			     const char *name);
/* An in-memory DuckDB of one thread (caller closes). */
struct nx_duck *nx_test_duck(void);
/* Closes *d (if open) and reopens it with views over the profile's tables, plus empty
 * typed views for the tables it lacks. */
void nx_test_use_profile(struct nx_duck **d, const char *profile);
/* The first column of the first row as a double (NaN for NULL). */
double nx_test_q(struct nx_duck *d, const char *sql);
/* The first column of the first row of a formatted query as an integer (NULL: 0). */
int64_t nx_test_qi(struct nx_duck *d, const char *fmt, ...) NX_PRINTF(2, 3);
/* Runs a formatted statement. */
void nx_test_exf(struct nx_duck *d, const char *fmt, ...) NX_PRINTF(2, 3);
/* Table t of attached databases a and b holds the same rows (at the same places, rowid,
 * when in_order): the same count, and EXCEPT ALL empty either way. t "lod": each of the
 * timeline cache's pyramid tables lod0..lod3 that either has. */
void nx_test_same_rows(struct nx_duck *d, const char *a, const char *b, const char *t,
		       bool in_order);
/* A whole file read into memory (caller frees), and written back. */
char *nx_test_slurp(const char *path, size_t *len);
/* The text of tests/unit/reference/<name> (the SQL a C or a newer SQL step replaced, kept
 * as the tests' oracle), from $NX_SOURCE_DIR (ctest sets it) or the current directory. */
char *nx_test_reference(const char *name);
void nx_test_spit(const char *path, const void *data, size_t len);

/* Exact (integers, doubles) and float32-tolerant comparisons of a query result. */
#define NX_EQ(d, sql, want)                                                                  \
	assert_true(fabs(nx_test_q(d, sql) - (double)(want)) <                                 \
		    1e-9 * fmax(1, fabs((double)(want))) + 1e-12)
#define NX_NEAR(d, sql, want, floor_)                                                        \
	assert_true(fabs(nx_test_q(d, sql) - (double)(want)) <=                                \
		    1e-6 * fmax(floor_, fabs((double)(want))))

#endif
