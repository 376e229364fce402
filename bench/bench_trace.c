/* SPDX-License-Identifier: MIT
 * bench_trace.c: single-threaded speed of the framework-trace reader (not a test).
 *   bench_trace parse FILE      tokenize and read every event (no output)
 *   bench_trace ingest FILE DIR full ingest to parquet in DIR (DuckDB at 2 threads, as the CLI)
 *   bench_trace rows FILE       the SystemProfileEvents row source alone (no database)
 *   bench_trace duckdb FILE     DuckDB read_json of the same file (1 thread), baseline
 * Prints one line: mode, seconds, decompressed MB/s, events/s. bench/trace.sh runs
 * these under /usr/bin/time -v next to Python's json module for peak RSS. */
#include "common/compat.h"
#include "common/strbuf.h"
#include "db/duck.h"
#include "trace/chrome.h"
#include "ingest/ingest_dir.h"
#include "trace/events.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Reads every event; *bytes gets the decompressed size. */
static int parse(const char *path, uint64_t *events, uint64_t *bytes, struct nx_err *err)
{
	struct nx_chrome c;
	struct nx_cev ev;
	int rc = nx_chrome_open(&c, path, err);

	nx_cev_init(&ev);
	while (!rc && (rc = nx_chrome_next(&c, &ev, err)) == 1)
		rc = 0;
	*events = c.events;
	*bytes = c.tok.base + c.tok.len;
	nx_cev_release(&ev);
	nx_chrome_close(&c);
	return rc < 0 ? rc : 0;
}

/* Runs the SystemProfileEvents row source to its end without a database. */
static int rows(const char *path, uint64_t *events, struct nx_err *err)
{
	struct nx_tev_file f = { .path = path, .instance = "0" };
	struct nx_tev_src s;
	struct nx_row_source src;
	uint64_t n = 0;
	int rc = nx_tev_init(&s, &f, 1, NULL, NULL, &src, err);

	if (!rc)
		rc = nx_duck_drain_source(&src, &n, err);
	*events = f.events;
	nx_tev_release(&s);
	return rc;
}

static int duck(const char *path, uint64_t *events, struct nx_err *err)
{
	struct nx_duck *d = NULL;
	struct nx_strbuf sql = NX_STRBUF_INIT;
	int64_t n = 0;
	int rc = nx_duck_open(&d, 1, NULL, err);

	nx_strbuf_addstr(&sql, "SELECT len(traceEvents) FROM read_json(");
	nx_sql_quote(&sql, path);
	nx_strbuf_addstr(&sql, ", columns = {'traceEvents': 'JSON[]'}, maximum_object_size = 1073741824)");
	if (!rc)
		rc = nx_duck_query_i64(d, sql.buf, &n, err);
	*events = (uint64_t)n;
	nx_strbuf_release(&sql);
	nx_duck_close(d);
	return rc;
}

int main(int argc, char **argv)
{
	struct nx_err err = { 0 };
	uint64_t events = 0, bytes = 0;
	double t0;
	int rc;

	if (argc < 3) {
		fprintf(stderr, "usage: bench_trace parse|ingest|rows|duckdb FILE [DIR]\n");
		return 2;
	}
	/* The decompressed size, measured once outside the timed part. */
	if ((rc = parse(argv[2], &events, &bytes, &err)))
		goto fail;
	t0 = now();
	if (!strcmp(argv[1], "parse")) {
		rc = parse(argv[2], &events, &bytes, &err);
	} else if (!strcmp(argv[1], "ingest") && argc > 3) {
		struct nx_trace_opts o = { .input = argv[2], .output_dir = argv[3] };
		rc = nx_trace_ingest_dir(&o, NULL, &err);
	} else if (!strcmp(argv[1], "rows")) {
		rc = rows(argv[2], &events, &err);
	} else if (!strcmp(argv[1], "duckdb")) {
		rc = duck(argv[2], &events, &err);
	} else {
		fprintf(stderr, "bench_trace: unknown mode '%s'\n", argv[1]);
		return 2;
	}
	if (rc)
		goto fail;
	double s = now() - t0;
	printf("%-7s %8.3f s %8.1f MB/s %10.0f events/s  (%" PRIu64 " events, %.1f MB)\n",
	       argv[1], s, (double)bytes / 1e6 / s, (double)events / s, events, (double)bytes / 1e6);
	return 0;
fail:
	fprintf(stderr, "bench_trace: %s\n", err.msg);
	return 1;
}
