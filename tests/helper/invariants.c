/* SPDX-License-Identifier: MIT
 * invariants.c: profile invariants (see invariants.h). Interval unions are computed
 * here in C from the raw rows, so a mistake in the derive SQL cannot hide itself. */
#include "common/compat.h"
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "helper/invariants.h"
#include "common/fsutil.h"
#include "common/xalloc.h"
#include "db/duck.h"
#include "db/profile_views.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct ivs {
	size_t n, cap;
	int64_t *s, *e;
};

static void collect(void *arg, size_t row, const char *column, int kind, const char *text)
{
	struct ivs *v = arg;
	(void)row;
	if (kind == NX_CELL_NULL)
		return;
	if (!strcmp(column, "s")) {
		if (v->n == v->cap) {
			v->cap = v->cap ? v->cap * 2 : 1024;
			v->s = nx_xrealloc(v->s, v->cap * sizeof(int64_t));
			v->e = nx_xrealloc(v->e, v->cap * sizeof(int64_t));
		}
		v->s[v->n] = strtoll(text, NULL, 10);
	} else {
		v->e[v->n++] = strtoll(text, NULL, 10);
	}
}

/* Union length of intervals sorted by start (the query orders them). */
static int64_t union_ns(struct nx_duck *d, const char *sql)
{
	struct ivs v = { 0 };
	struct nx_err err = { 0 };
	int64_t total = 0, cur_s = 0, cur_e = 0;
	bool open = false;

	if (nx_duck_query_cells(d, sql, collect, &v, &err))
		fail_msg("%s: %s", sql, err.msg);
	for (size_t i = 0; i < v.n; i++) {
		if (v.e[i] <= v.s[i])
			continue;
		if (open && v.s[i] <= cur_e) {
			if (v.e[i] > cur_e)
				cur_e = v.e[i];
			continue;
		}
		if (open)
			total += cur_e - cur_s;
		cur_s = v.s[i];
		cur_e = v.e[i];
		open = true;
	}
	if (open)
		total += cur_e - cur_s;
	free(v.s);
	free(v.e);
	return total;
}

static double q(struct nx_duck *d, const char *sql)
{
	double v = NAN;
	struct nx_err err = { 0 };
	if (nx_duck_query_f64(d, sql, &v, &err))
		fail_msg("%s: %s", sql, err.msg);
	return v;
}

static bool has(const char *dir, const char *table)
{
	char *p = nx_xasprintf("%s/%s.parquet", dir, table);
	bool r = nx_is_file(p);
	free(p);
	return r;
}

static void near(const char *dir, const char *what, double got_ns, double want_ns)
{
	double tol = fmax(2.0, fabs(want_ns) * 2e-7);
	if (fabs(got_ns - want_ns) > tol)
		fail_msg("%s: %s is %.1f ns, expected %.1f ns", dir, what, got_ns, want_ns);
}

void nx_check_profile_invariants(const char *dir)
{
	struct nx_duck *d = NULL;
	struct nx_err err = { 0 };
	static const char *const engines[][2] = { { "Tensor", "tensor" }, { "Vector", "vector" },
						  { "Scalar", "scalar" }, { "GpSimd", "gpsimd" },
						  { "Sync", "sync" } };

	assert_int_equal(nx_duck_open(&d, 2, NULL, &err), 0);
	if (nx_db_profile_views(d, dir, &err))
		fail_msg("%s: %s", dir, err.msg);
	assert_true(has(dir, "Summary"));

	if (has(dir, "DmaPacket")) {
		int64_t u = union_ns(d, "SELECT start_ts AS s, end_ts AS e FROM DmaPacket ORDER BY s, e");
		near(dir, "Summary.dma_active_time", q(d, "SELECT dma_active_time * 1e9 FROM Summary"),
		     (double)u);
	}
	for (size_t i = 0; i < NX_ARRAY_SIZE(engines); i++) {
		char sql[512];
		snprintf(sql, sizeof(sql),
			 "SELECT start_ts AS s, end_ts AS e FROM Instruction WHERE engine = '%s' "
			 "ORDER BY s, e", engines[i][0]);
		int64_t u = union_ns(d, sql);
		snprintf(sql, sizeof(sql),
			 "SELECT coalesce(sum(duration_ns), 0) FROM ActiveTime WHERE engine = '%s'",
			 engines[i][1]);
		double at = q(d, sql);
		near(dir, engines[i][1], at, (double)u);
		snprintf(sql, sizeof(sql), "SELECT %s_engine_active_time * 1e9 FROM Summary",
			 engines[i][1]);
		near(dir, sql, q(d, sql), at);
	}
	assert_true(q(d, "SELECT coalesce(sum(instruction_count), 0) FROM OpcodeSummary") ==
		    q(d, "SELECT count(*) FROM Instruction"));
	nx_duck_close(d);
}
