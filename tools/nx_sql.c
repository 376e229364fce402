/* SPDX-License-Identifier: MIT
 * nx_sql.c: developer and benchmark tool: runs SQL statements with the project's
 * DuckDB build and prints result rows as tab-separated text.
 * usage: nx-sql [-t] [-w MS] [-D] [-M] [-C DIR] 'SQL' ['SQL' ...]
 *   -t  print each statement's wall time to stderr as "time_s <seconds>"
 *   -w  sleep MS milliseconds, untimed, before each statement, as a client that sends
 *       one query at a time leaves the machine idle
 *   -D  run each argument through duckdb_query, DuckDB's own path for SQL text, instead
 *       of the project's prepare-and-pending loop (the ingest's)
 *   -M  cache parquet footers between statements, as the API server's databases do
 *   -C  first create a view per parquet table in DIR, as the derive stage does */
#include "common/compat.h"
#include "db/duck.h"
#include "db/duck_conn.h"
#include "db/profile_views.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static size_t last_row = (size_t)-1;
static bool first_cell = true;

static void cell(void *arg, size_t row, const char *column, int kind, const char *text)
{
	(void)arg;
	(void)column;
	if (row != last_row) {
		if (last_row != (size_t)-1)
			putchar('\n');
		last_row = row;
		first_cell = true;
	}
	printf("%s%s", first_cell ? "" : "\t", kind == NX_CELL_NULL ? "NULL" : text);
	first_cell = false;
}

int main(int argc, char **argv)
{
	struct nx_duck *d = NULL;
	struct nx_err err = { 0 };
	int i = 1;
	bool timing = false, plain = false;
	long wait_ms = 0;

	if (argc < 2) {
		fprintf(stderr, "usage: nx-sql [-t] [-w MS] [-D] [-M] [-C DIR] 'SQL' ...\n");
		return 2;
	}
	if (nx_duck_open(&d, 0, NULL, &err))
		goto fail;
	if (argc > 1 && !strcmp(argv[i], "-t")) {
		timing = true;
		i++;
	}
	if (i + 1 < argc && !strcmp(argv[i], "-w")) {
		wait_ms = atol(argv[i + 1]);
		i += 2;
	}
	if (i < argc && !strcmp(argv[i], "-D")) {
		plain = true;
		i++;
	}
	if (i < argc && !strcmp(argv[i], "-M")) {
		if (nx_duck_exec(d, NX_DUCK_FOOTER_CACHE_SQL, &err))
			goto fail;
		i++;
	}
	if (i + 1 < argc && !strcmp(argv[i], "-C")) {
		if (nx_db_create_views(d, argv[i + 1], &err))
			goto fail;
		i += 2;
	}
	for (; i < argc; i++) {
		last_row = (size_t)-1;
		struct timespec a, b;
		if (wait_ms > 0) {
			struct timespec w = { wait_ms / 1000, wait_ms % 1000 * 1000000L };
			nanosleep(&w, NULL);
		}
		clock_gettime(CLOCK_MONOTONIC, &a);
		if ((plain ? nx_duck_query_cells_plain : nx_duck_query_cells)(d, argv[i], cell, NULL,
									      &err))
			goto fail;
		clock_gettime(CLOCK_MONOTONIC, &b);
		if (timing)
			fprintf(stderr, "time_s %.6f\n", (double)(b.tv_sec - a.tv_sec) +
							   (double)(b.tv_nsec - a.tv_nsec) / 1e9);
		if (last_row != (size_t)-1)
			putchar('\n');
	}
	nx_duck_close(d);
	return 0;
fail:
	fprintf(stderr, "nx-sql: %s\n", err.msg);
	nx_duck_close(d);
	return 1;
}
