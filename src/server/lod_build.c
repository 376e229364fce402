/* SPDX-License-Identifier: MIT
 * lod_build.c: writes the timeline cache of one profile, timeline.duckdb (lod.h, and
 * docs/ui.md "Level of detail"). Per event source:
 *   1. tl.ev<s>: the events as the timeline draws them, copied from the profile's
 *      parquet in file order when the row groups' start_ts statistics say the file is
 *      in start order (as ingest writes it), sorted otherwise; with
 *      NX_LOD_EVENTS_IN_PLACE=1 a file in start order is not copied but read in place,
 *      by the build and by the server's windows (nx__lod_events_sql). Framework events leave
 *      out their metadata rows and go on depth lanes (lod_lanes.c), each lane a track
 *      of its own, so its pyramid keeps nested slices apart. DuckDB's zone maps then
 *      skip every row group outside a window: the integer bounds start_ts < t1 AND
 *      end_ts > t0 prune by both columns.
 *   2. the pyramid in tl.lod<s> (its track and label of tl.ev<s>'s types, ENUMs where
 *      it has them): level L0 grouped from tl.ev<s> by (core, track,
 *      start_ts // 2^L0) in one pass per time slice in C (lod_l0.c), or, for a table
 *      in start order whose row groups' statistics give its span, count and lateness
 *      (events_pass), folded from the rows as they are copied into tl.ev<s>, in the
 *      same pass (lod_l0_pass.c; NX_LOD_COPY_THEN_L0=1: copy, then read back); every coarser
 *      level from the level below in C (lod_levels.c): counts and busy times add,
 *      first/last and the longest event combine, up to one bucket past the whole span.
 *      L0 is chosen so that a bucket holds LOD_K events on average, so a view finer
 *      than L0 (px buckets of at most 2^(L0-1) ns) holds about LOD_K/2 events per
 *      pixel at most: those views read tl.ev<s>, coarser ones one level. Levels are
 *      inserted in (level, k) order, in time slices of about chunk_rows input rows
 *      (nx_lod_bounds) aligned to the level's buckets, so memory stays bounded. The
 *      grouping queries that are the reference of the C passes (NX_LOD_SQL_L0,
 *      NX_LOD_SQL_LEVELS) keep the longest event with arg_max by duration * 2^64 - id
 *      (a HUGEINT: the longest, then the lowest id).
 * The events part builds Instruction on one thread and the other sources on a second,
 * each on its own connection to the part's one-threaded DuckDB (events_two), unless
 * NX_LOD_EVENTS_THREADS=1; the second, once its sources are done, builds parts of
 * Instruction's large levels above L0 (nx__lod_levels_up_two, NX_LOD_LEVELS_SPLIT_ROWS).
 * Then tl.ctr (counter and semaphore values by time) and its pyramid tl.ctr_lod, built
 * the same way (per series: least, greatest and last value), tl.tracks, tl.meta, and
 * tl.lines (per source line of Instruction, for the source view); `view`'s events part
 * builds tl.lines, tl.ctr and tl.ctr_lod beside its events on a third connection once the
 * ingest waits for it (early_run, struct nx_lod_early). Events with a time beyond
 * +-2^61 ns (NX_TL_TIME_BOUND) are left out, so no span or slice overflows. Every table is
 * read through views over its files as the build reads them (lod_slices.c): a file of
 * more than NX_LOD_SLICE_GROUPS row groups as slices of them, so that DuckDB never holds
 * its whole footer; the slices keep the file's order, so the rows come as from it. */
#include "common/compat.h"
#include "server/lod.h"
#include "server/lod_levels.h"
#include "common/env_num.h"
#include "common/fsutil.h"
#include "common/strbuf.h"
#include "common/xalloc.h"
#include "db/duck.h"
#include "db/duck_alloc.h"

#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

/* average events per finest-level bucket (see above) */
#define LOD_K 32

const struct nx_lod_source nx__lod_sources[NX_LOD_NSRC] = {
	{ "Instruction", "instruction", "timeline_track", "opcode" },
	{ "DmaPacketAggregated", "dma", "queue_name", "COALESCE(op, queue_type)" },
	{ "DmaPacket", "dma", "queue_name", "'packet'" },
	{ "SystemProfileEvents", "framework",
	  "concat_ws(' / ', instance_id, 'pid ' || process_id, 'tid ' || thread_id)", "name" },
};

void nx__lod_events_sql(struct nx_strbuf *sql, int s)
{
	const struct nx_lod_source *src = &nx__lod_sources[s];

	nx_strbuf_addf(sql, "(SELECT pcore_idx::BIGINT AS core, (%s)::VARCHAR AS track, "
			    "id::BIGINT AS id, start_ts, end_ts, (%s)::VARCHAR AS label FROM ",
		       src->track, src->label);
	nx_sql_quote_ident(sql, src->table);
	nx_strbuf_addstr(sql, " WHERE " NX_TL_IN_BOUNDS_SQL ")");
}

const struct nx_lod_counter nx__lod_counters[] = {
	{ "SbufUsage", "'SbufUsage'", "avg_util_percent" },
	{ "PsumUsage", "'PsumUsage'", "avg_util_percent" },
	{ "HbmUsage", "'HbmUsage'", "current_throughput" },
	{ "DmaUsage", "'DmaUsage'", "current_throughput" },
	{ "PendingDma", "'PendingDma'", "value" },
	{ "SemaphoreUpdate", "'sem ' || id", "value" },
};
const size_t nx__lod_ncounters = NX_ARRAY_SIZE(nx__lod_counters);

void nx__lod_file_list(struct nx_strbuf *sql, const char *dir, const struct nx_ptable *t)
{
	nx_strbuf_addch(sql, '[');
	for (size_t i = 0; i < t->nfiles; i++) {
		char *p = dir ? nx_path_join(dir, t->files[i]) : nx_xstrdup(t->files[i]);

		if (i)
			nx_strbuf_addch(sql, ',');
		nx_sql_quote(sql, p);
		free(p);
	}
	nx_strbuf_addch(sql, ']');
}

/* The view named as table t of the profile in dir, over its files as the build reads them
 * (sl); *read (may be NULL) gets those files. temp: a temporary view, of d's connection
 * alone (the early rest's, beside the events part's views of the same names). */
static int create_view(struct nx_duck *d, struct nx_lod_slices *sl, const char *dir,
		       const struct nx_ptable *t, const struct nx_ptable **read, bool temp,
		       struct nx_err *err)
{
	struct nx_strbuf sql = NX_STRBUF_INIT;
	int rc;

	if ((rc = nx__lod_sliced(sl, dir, t, &t, err)))
		return rc;
	if (read)
		*read = t;
	dir = NULL;
	nx_strbuf_addstr(&sql, temp ? "CREATE TEMP VIEW " : "CREATE VIEW ");
	nx_sql_quote_ident(&sql, t->name);
	nx_strbuf_addstr(&sql, " AS SELECT * FROM read_parquet(");
	nx__lod_file_list(&sql, dir, t);
	nx_strbuf_addch(&sql, ')');
	rc = nx_duck_exec(d, sql.buf, err);
	nx_strbuf_release(&sql);
	return rc;
}

/* The laps of a build's phases (struct nx_lod_phases; ph NULL: none kept): the CPU of
 * the process, or of the calling thread (thread: one of the events part's two threads,
 * whose DuckDB runs each statement on the thread that runs it). */
struct phase_clock {
	struct nx_lod_phases *ph;
	double cpu, wall; /* at the lap's start */
	bool thread;
};

static void clock_read(const struct phase_clock *c, double *cpu, double *wall)
{
	struct rusage ru;
	struct timespec ts;

	getrusage(c->thread ? RUSAGE_THREAD : RUSAGE_SELF, &ru);
	*cpu = (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6 +
	       (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	*wall = (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Ends the lap as the phase named fmt, and starts the next. */
static void NX_PRINTF(2, 3) clock_lap(struct phase_clock *c, const char *fmt, ...)
{
	double cpu, wall;
	va_list ap;

	if (!c->ph)
		return;
	clock_read(c, &cpu, &wall);
	if (c->ph->n < NX_LOD_MAX_PHASES) {
		size_t i = c->ph->n++;

		va_start(ap, fmt);
		vsnprintf(c->ph->ph[i].name, sizeof(c->ph->ph[i].name), fmt, ap);
		va_end(ap);
		c->ph->ph[i].cpu_s = cpu - c->cpu;
		c->ph->ph[i].wall_s = wall - c->wall;
	}
	c->cpu = cpu;
	c->wall = wall;
}

#define ceil_log2 nx__lod_ceil_log2

/* Whether t's files are in start order, as far as their row groups' start_ts
 * statistics tell: ordered when the row groups, in file order, overlap the ones
 * before them by less than 1 % of the span in total. Without statistics: no. */
static int in_start_order(struct nx_duck *d, const char *dir, const struct nx_ptable *t,
			  bool *ordered, struct nx_err *err)
{
	struct nx_strbuf sql = NX_STRBUF_INIT, files = NX_STRBUF_INIT;
	int64_t v = 0;
	int rc;

	nx__lod_file_list(&files, dir, t);
	nx_strbuf_addf(&sql,
		"SELECT CASE WHEN count(*) FILTER (lo IS NULL OR hi IS NULL) > 0 THEN 0 "
		"WHEN coalesce(sum(greatest(0, prev - lo)), 0) * 100 <= coalesce(max(hi) - min(lo), 0) "
		"THEN 1 ELSE 0 END FROM (SELECT lo, hi, max(hi) OVER (ORDER BY fi, rg ROWS BETWEEN "
		"UNBOUNDED PRECEDING AND 1 PRECEDING) AS prev FROM (SELECT list_position(%s, "
		"file_name) AS fi, row_group_id AS rg, TRY_CAST(stats_min_value AS HUGEINT) AS lo, "
		"TRY_CAST(stats_max_value AS HUGEINT) AS hi FROM parquet_metadata(%s) WHERE "
		"path_in_schema = 'start_ts'))",
		files.buf, files.buf);
	rc = nx_duck_query_i64(d, sql.buf, &v, err);
	*ordered = v == 1;
	nx_strbuf_release(&sql);
	nx_strbuf_release(&files);
	return rc;
}

/* The first row of query3's SELECT: its three BIGINTs (NULL -> 0). */
static int take_three(void *arg, const struct nx_dchunk *c, struct nx_err *err)
{
	int64_t *v = arg;

	(void)err;
	if (!nx_dchunk_rows(c))
		return 0;
	for (size_t i = 0; i < 3; i++)
		if (!nx_dchunk_i64(c, i, 0, &v[i]))
			v[i] = 0;
	return 0;
}

/* v gets the count of the rows of the relation `from`, the least of its column `first` and
 * the greatest of its column `last` (the events' first start and last end, the counters'
 * first and last time; 0 where NULL), in one scan. */
static int query3(struct nx_duck *d, const char *from, const char *first, const char *last,
		  int64_t v[3], struct nx_err *err)
{
	char *sql = nx_xasprintf("SELECT count(*)::BIGINT, min(%s)::BIGINT, max(%s)::BIGINT "
				 "FROM %s", first, last, from);
	int rc;

	v[0] = v[1] = v[2] = 0;
	rc = nx_duck_scan(d, sql, take_three, v, err);
	free(sql);
	return rc;
}

/* The statements of a pyramid level: of tl.lod<s> from the event rows (source, bucket
 * width) or from the level below (source, level), and of tl.ctr_lod from the counter
 * values (bucket width) or from the level below (level). The longest event is kept with
 * arg_max (see above); the last value is NX_LOD_LAST_SQL's, the greatest (time, value):
 * of the samples at the latest time, the greatest value, whatever their order. tl.ctr
 * holds it per series and time already (NX_LOD_LAST_TIED_SQL), so L0 takes it by the
 * time alone, as the levels above do. */
static const char insert_sql[] =
	"INSERT INTO tl.lod%d SELECT %d, k, core, track, count, busy, first_ts, last_ts, "
	"r.id, r.s, r.e, r.l FROM (SELECT ";
static const char from_events_sql[] =
	"start_ts // %" PRId64 " AS k, core, track, count(*)::BIGINT AS count, "
	"sum(end_ts - start_ts)::BIGINT AS busy, min(start_ts) AS first_ts, "
	"max(end_ts) AS last_ts, arg_max({'id': id, 's': start_ts, 'e': end_ts, 'l': label}, "
	"((end_ts - start_ts)::HUGEINT << 64) - id) AS r FROM %s WHERE true";
static const char from_level_sql[] =
	"k // 2 AS k, core, track, sum(count)::BIGINT AS count, sum(busy)::BIGINT AS busy, "
	"min(first_ts) AS first_ts, max(last_ts) AS last_ts, arg_max({'id': id, "
	"'s': start_ts, 'e': end_ts, 'l': label}, ((end_ts - start_ts)::HUGEINT << 64) - id) "
	"AS r FROM tl.lod%d WHERE level = %d";
static const char count_sql[] = "SELECT count(*) FROM tl.lod%d WHERE level = %d";
static const char ctr_insert_sql[] =
	"INSERT INTO tl.ctr_lod SELECT %d, k, core, track, lo, hi, r.v, r.ts FROM (SELECT ";
static const char ctr_from_values_sql[] =
	"ts // %" PRId64 " AS k, core, track, min(coalesce(lo, last)) AS lo, "
	"max(coalesce(hi, last)) AS hi, "
	"{'v': " NX_LOD_LAST_DISTINCT_SQL("ts", "last") ", 'ts': max(ts)} AS r "
	"FROM %s WHERE true";
static const char ctr_from_level_sql[] =
	"k // 2 AS k, core, track, min(lo) AS lo, max(hi) AS hi, "
	"{'v': " NX_LOD_LAST_DISTINCT_SQL("last_ts", "last") ", 'ts': max(last_ts)} AS r "
	"FROM tl.ctr_lod WHERE level = %d";
static const char ctr_count_sql[] = "SELECT count(*) FROM tl.ctr_lod WHERE level = %d";

/* One level of a pyramid: the INSERT's head, the grouped SELECT (list, FROM and WHERE)
 * whose rows are sliced by the column `time`, in units of `unit` ns, and the query
 * counting the level's rows. */
struct level_job {
	char *head, *body, *count;
	const char *time;
	int64_t unit;
};

static void level_job_release(struct level_job *j)
{
	free(j->head);
	free(j->body);
	free(j->count);
}

/* Runs job j, one time slice of the rows (nin of them, times first..last, bucket
 * 2^level) of about chunk rows at a time; *rows gets the level's row count. */
static int build_level(struct nx_duck *d, const struct level_job *j, int level, int64_t first,
		       int64_t last, int64_t nin, int64_t chunk, int64_t *rows,
		       struct nx_err *err)
{
	struct nx_strbuf sql = NX_STRBUF_INIT;
	int64_t w = nx__lod_slice_width(level, first, last, nin, chunk);
	int rc = 0;

	for (int64_t c = w == INT64_MAX ? 0 : nx__lod_floor_div(first, w);
	     !rc && (w == INT64_MAX ? c == 0 : c <= nx__lod_floor_div(last, w)); c++) {
		nx_strbuf_reset(&sql);
		nx_strbuf_addstr(&sql, j->head);
		nx_strbuf_addstr(&sql, j->body);
		if (w != INT64_MAX)
			nx_strbuf_addf(&sql, " AND %s >= %" PRId64 " AND %s < %" PRId64, j->time,
				       c * (w / j->unit), j->time, (c + 1) * (w / j->unit));
		nx_strbuf_addstr(&sql, " GROUP BY ALL) ORDER BY k, core, track");
		rc = nx_duck_exec(d, sql.buf, err);
	}
	nx_strbuf_release(&sql);
	if (!rc)
		rc = nx_duck_query_i64(d, j->count, rows, err);
	return rc;
}

static bool env_on(const char *name)
{
	const char *v = getenv(name);

	return v && !strcmp(v, "1");
}

/* Whether every level of the pyramids is built by grouping queries, as before the levels
 * were built in C: NX_LOD_SQL_LEVELS=1, the reference the tests compare the C levels with
 * and bench/bench_lod_build's "before". */
static bool sql_levels(void)
{
	return env_on("NX_LOD_SQL_LEVELS");
}

/* Whether the finest level of an event source is built by its grouping query rather
 * than in C (lod_l0.c): NX_LOD_SQL_L0=1 (the reference the tests compare the C level
 * with), or NX_LOD_SQL_LEVELS=1 (every level). */
static bool sql_l0(void)
{
	return sql_levels() || env_on("NX_LOD_SQL_L0");
}

/* Levels lo..hi of source s's pyramid (s < 0: the counters'), from n rows with times
 * first..last (an event source's in the relation `from`, named `name` in errors; the
 * counters' in the relation `from` of tl.ctr's columns, NULL: tl.ctr): the
 * finest in slices of about chunk_rows input rows (bounds), an event source's in C
 * (lod_l0.c) unless sql_l0(), the counters' by grouping queries; the others in C, each
 * from the one below (lod_levels.c), unless sql_levels(). The finest level of an event
 * source is a phase of its own (clk). */
static int build_levels(struct nx_duck *d, int s, const char *from, const char *name, int lo,
			int hi, int64_t first, int64_t last, int64_t n, const struct nx_lod_bounds *bounds,
			struct phase_clock *clk, struct nx_err *err)
{
	int64_t rows = n;
	int rc = 0;

	for (int l = lo; l <= hi && !rc; l++) {
		if (l == lo + 1 && clk)
			clock_lap(clk, "tl.lod %s L%d", nx__lod_sources[s].table, lo);
		if (l > lo && !sql_levels())
			return nx__lod_levels_up(d, s, lo, hi, bounds->chunk_rows, err);
		if (l == lo && s >= 0 && !sql_l0()) {
			rc = nx__lod_l0(d, s, from, name, lo, first, last, n, bounds->chunk_rows,
					&rows, err);
			continue;
		}
		struct level_job j = { .unit = l == lo ? 1 : (int64_t)1 << (l - 1) };

		if (s >= 0) {
			j.head = nx_xasprintf(insert_sql, s, l);
			j.body = l == lo ? nx_xasprintf(from_events_sql, (int64_t)1 << l, from)
					 : nx_xasprintf(from_level_sql, s, l - 1);
			j.count = nx_xasprintf(count_sql, s, l);
			j.time = l == lo ? "start_ts" : "k";
		} else {
			j.head = nx_xasprintf(ctr_insert_sql, l);
			j.body = l == lo ? nx_xasprintf(ctr_from_values_sql, (int64_t)1 << l,
							from ? from : "tl.ctr")
					 : nx_xasprintf(ctr_from_level_sql, l - 1);
			j.count = nx_xasprintf(ctr_count_sql, l);
			j.time = l == lo ? "ts" : "k";
		}
		rc = build_level(d, &j, l, first, last, rows, bounds->chunk_rows, &rows, err);
		level_job_release(&j);
	}
	return rc;
}

/* The SELECT of tl.ev<s> from the profile's table (s not the framework's), in file order;
 * from (may be NULL: the table's view) reads some of its files instead. */
static void events_select(struct nx_strbuf *sql, int s, const char *from)
{
	const struct nx_lod_source *src = &nx__lod_sources[s];

	nx_strbuf_addf(sql, "SELECT pcore_idx::BIGINT AS core, (%s)::VARCHAR AS track, id::BIGINT "
			    "AS id, start_ts::BIGINT AS start_ts, end_ts::BIGINT AS end_ts, "
			    "(%s)::VARCHAR AS label FROM ",
		       src->track, src->label);
	if (from)
		nx_strbuf_addstr(sql, from);
	else
		nx_sql_quote_ident(sql, src->table);
	nx_strbuf_addstr(sql, " WHERE " NX_TL_IN_BOUNDS_SQL);
}

/* The type of a text column that is no ENUM. */
static const char text_type[] = "VARCHAR";

/* The most distinct values a text column of tl.ev<s> is stored as an ENUM with. */
#define ENUM_MAX 65535

/* Whether tl.ev<s> keeps its text columns as VARCHAR: NX_LOD_TEXT_COLUMNS=1 (the cache
 * before they were ENUMs, for a before/after of the copy and of the server's replies). */
static bool text_columns(void)
{
	return env_on("NX_LOD_TEXT_COLUMNS");
}

/* Whether the copy casts track and label to their ENUMs as before, row by row:
 * NX_LOD_ENUM_CAST=1 (a before/after; 0 or unset: nx_duck_enum_function's functions,
 * which DuckDB runs once per entry of a parquet dictionary; docs/memory.md, "The events
 * part's CPU, again"). Another value is refused. */
static int enum_cast(bool *on, struct nx_err *err)
{
	long long v = 0;
	int rc = nx_env_whole("NX_LOD_ENUM_CAST", 1, "0 or 1 (1: the ENUMs cast row by row)", &v,
			      err);

	*on = v == 1;
	return rc;
}

/* The functions made in this process, each with a name of its own. */
static atomic_uint enum_functions;

/* *cols gets the columns of tl.ev<s> (s not the framework's) over events_select's: its
 * track and label as ENUM types made in tl from the sorted distinct values of their
 * expressions over the profile's table (tl.ev<s>_track, tl.ev<s>_label; sorted, so that
 * the ENUM orders and groups as its text: DuckDB orders ENUM values by their place), a
 * small integer per row that the copy stores for less than the string (docs/memory.md,
 * "ENUM columns"); a column with no value or more than ENUM_MAX stays VARCHAR, as both do
 * with text_columns(). The text becomes the ENUM's value through a function of ours
 * (nx_duck_enum_function) rather than a cast, unless enum_cast(). types[0] and types[1]
 * get the SQL types of track and label (the ENUM's name or VARCHAR), which tl.lod<s> uses
 * too. Caller frees *cols and types. */
static int events_cols(struct nx_duck *d, int s, char **cols, char *types[2],
		       struct nx_err *err)
{
	const struct nx_lod_source *src = &nx__lod_sources[s];
	const char *expr[2] = { src->track, src->label }, *name[2] = { "track", "label" };
	char *col[2] = { NULL, NULL }, *type[2] = { NULL, NULL };
	bool cast = false;
	int rc = enum_cast(&cast, err);

	for (int i = 0; i < 2; i++) {
		struct nx_strbuf q = NX_STRBUF_INIT;
		int64_t n = 0;

		/* the distinct values read once, kept (at most one past ENUM_MAX: enough to
		 * tell) in a table of this connection for their count and the type */
		nx_strbuf_addf(&q, "CREATE OR REPLACE TEMP TABLE nx_values%d AS SELECT DISTINCT "
				   "(%s)::VARCHAR AS v FROM ", s, expr[i]);
		nx_sql_quote_ident(&q, src->table);
		nx_strbuf_addf(&q, " WHERE (%s) IS NOT NULL LIMIT %d", expr[i], ENUM_MAX + 1);
		if (!rc && !text_columns()) {
			rc = nx_duck_exec(d, q.buf, err);
			nx_strbuf_reset(&q);
			nx_strbuf_addf(&q, "SELECT count(*) FROM nx_values%d", s);
			if (!rc)
				rc = nx_duck_query_i64(d, q.buf, &n, err);
		}
		if (!rc && n > 0 && n <= ENUM_MAX) {
			type[i] = nx_xasprintf("tl.ev%d_%s", s, name[i]);
			nx_strbuf_reset(&q);
			nx_strbuf_addf(&q, "CREATE TYPE %s AS ENUM (SELECT v FROM nx_values%d ORDER "
					   "BY 1)", type[i], s);
			rc = nx_duck_exec(d, q.buf, err);
			if (!rc && !cast) {
				char *fn = nx_xasprintf("nx_enum%u",
							atomic_fetch_add(&enum_functions, 1));

				rc = nx_duck_enum_function(d, fn, type[i], err);
				col[i] = nx_xasprintf("%s(%s)", fn, name[i]);
				free(fn);
			} else {
				col[i] = nx_xasprintf("%s::%s", name[i], type[i]);
			}
		}
		if (!rc && !text_columns()) {
			nx_strbuf_reset(&q);
			nx_strbuf_addf(&q, "DROP TABLE IF EXISTS nx_values%d", s);
			rc = nx_duck_exec(d, q.buf, err);
		}
		nx_strbuf_release(&q);
	}
	*cols = nx_xasprintf("core, %s AS track, id, start_ts, end_ts, %s AS label",
			     col[0] ? col[0] : "track", col[1] ? col[1] : "label");
	for (int i = 0; i < 2; i++) {
		types[i] = nx_xstrdup(type[i] ? type[i] : text_type);
		free(type[i]);
		free(col[i]);
	}
	return rc;
}

/* The SELECT of tl.ev<s> from the profile's table, in start order when it is not
 * (ordered) already; cols: events_cols's. Framework events get their depth lanes
 * (lod_lanes.c): their lane and stream are kept, and an event off lane 0 has the track
 * "<stream> / depth <lane>". */
static int events_sql(struct nx_duck *d, const char *dir, const char *scratch, int s,
		      const struct nx_ptable *t, bool ordered, const char *cols,
		      struct nx_strbuf *sql, struct nx_err *err)
{
	const struct nx_lod_source *src = &nx__lod_sources[s];
	char *csv = NULL;
	uint64_t laned = 0;
	int rc = 0;

	if (s != NX_LOD_SRC_FW) {
		nx_strbuf_addf(sql, "CREATE TABLE tl.ev%d AS SELECT %s FROM (", s, cols);
		events_select(sql, s, NULL);
		nx_strbuf_addch(sql, ')');
		if (!ordered)
			nx_strbuf_addstr(sql, " ORDER BY start_ts, id");
		return 0;
	}
	csv = nx_path_join(scratch, "lanes.csv");
	rc = nx__lod_lanes(dir, t, csv, &laned, err);
	if (!rc && laned) {
		struct nx_strbuf q = NX_STRBUF_INIT;

		nx_strbuf_addstr(&q, "CREATE TEMP TABLE nx_lanes AS SELECT * FROM read_csv(");
		nx_sql_quote(&q, csv);
		nx_strbuf_addstr(&q, ", header = false, columns = {'id': 'BIGINT', 'start_ts': "
				     "'BIGINT', 'lane': 'INTEGER'})");
		rc = nx_duck_exec(d, q.buf, err);
		nx_strbuf_release(&q);
	}
	remove(csv);
	free(csv);
	if (rc)
		return rc;
	nx_strbuf_addf(sql, "CREATE TABLE tl.ev%d AS SELECT core, CASE WHEN lane > 0 THEN stream || "
			    "' / depth ' || lane ELSE stream END AS track, id, start_ts, end_ts, label, "
			    "stream, lane FROM (SELECT pcore_idx::BIGINT AS core, (%s)::VARCHAR AS "
			    "stream, id::BIGINT AS id, start_ts::BIGINT AS start_ts, end_ts::BIGINT AS "
			    "end_ts, (%s)::VARCHAR AS label, %s AS lane FROM ",
		       s, src->track, src->label, laned ? "coalesce(l.lane, 0)" : "0");
	nx_sql_quote_ident(sql, src->table);
	nx_strbuf_addstr(sql, laned ? " LEFT JOIN nx_lanes l USING (id, start_ts)" : "");
	nx_strbuf_addstr(sql, " WHERE " NX_LOD_FW_DRAWN ")");
	if (!ordered || laned)
		nx_strbuf_addstr(sql, " ORDER BY start_ts, id");
	return 0;
}

/* Whether the events of a table in start order are read in place from the profile's
 * files, by this build and by the server's windows, rather than copied into tl.ev<s>:
 * NX_LOD_EVENTS_IN_PLACE=1. It saves the copy (a third of the build's CPU at 10M
 * records), but DuckDB walks the whole footer of a file for every window, about 12 ms
 * of CPU per window at 10M records and 90 ms at 100M, against 1 ms for tl.ev<s>
 * (docs/memory.md, "Events read in place"): off by default. */
static bool events_in_place(void)
{
	return env_on("NX_LOD_EVENTS_IN_PLACE");
}

/* The levels of an event source's pyramid from its count, first start and last end v:
 * one level past the one whose bucket spans the profile, for views wider than it (hi),
 * and the finest (lo), whose buckets hold LOD_K events on average; lo > hi: none. */
static void span_levels(const int64_t v[3], int *lo, int *hi)
{
	*hi = ceil_log2((double)(v[2] > v[1] ? v[2] - v[1] : 1)) + 1;
	*lo = v[0] > 0 ? ceil_log2((double)LOD_K * (double)(v[2] - v[1]) / (double)v[0]) : *hi + 1;
}

/* One row of stats_sql's result. */
static int take_stats(void *arg, const struct nx_dchunk *c, struct nx_err *err)
{
	int64_t *out = arg;

	(void)err;
	for (size_t i = 0; i < 6 && nx_dchunk_rows(c); i++)
		if (!nx_dchunk_i64(c, i, 0, &out[i]))
			out[6] = 1;
	return 0;
}

/* What the row groups' statistics say of a table's events (files, twice): the row
 * groups that do not bound them (a column without statistics, with NULLs, or a time
 * beyond NX_TL_TIME_BOUND), the rows, the least start, the greatest end, the lateness
 * (per row group of start_ts in file order, the greatest start up to it, its own
 * included, less its least start: a row starts at most that much before one read
 * earlier), and the row groups of end_ts less those of start_ts. */
static const char stats_sql[] =
	"WITH m AS (SELECT list_position(%s, file_name) AS fi, row_group_id AS rg, "
	"path_in_schema AS p, row_group_num_rows AS nr, stats_null_count AS nc, "
	"TRY_CAST(stats_min_value AS BIGINT) AS lo, TRY_CAST(stats_max_value AS BIGINT) AS hi "
	"FROM parquet_metadata(%s) WHERE path_in_schema IN ('start_ts', 'end_ts')), "
	"s AS (SELECT (max(hi) OVER (ORDER BY fi, rg ROWS UNBOUNDED PRECEDING))::HUGEINT - lo "
	"AS late "
	"FROM m WHERE p = 'start_ts') "
	"SELECT (SELECT count(*) FILTER (nc IS NULL OR nc > 0 OR lo IS NULL OR hi IS NULL OR "
	"lo < -2305843009213693952 OR hi > 2305843009213693952) FROM m)::BIGINT, "
	"(SELECT sum(nr) FROM m WHERE p = 'start_ts')::BIGINT, "
	"(SELECT min(lo) FROM m WHERE p = 'start_ts'), (SELECT max(hi) FROM m WHERE p = 'end_ts'), "
	"(SELECT least(max(late), 4611686018427387904)::BIGINT FROM s), "
	"((SELECT count(*) FROM m WHERE p = 'end_ts') - "
	"(SELECT count(*) FROM m WHERE p = 'start_ts'))::BIGINT";

/* v gets the count, first start and last end of the events of t (its files as read,
 * paths) and *late their lateness, from the row groups' statistics alone (stats_sql);
 * *ok false when the statistics do not tell. */
static int stats_span(struct nx_duck *d, const struct nx_ptable *t, int64_t v[3], int64_t *late,
		      bool *ok, struct nx_err *err)
{
	struct nx_strbuf files = NX_STRBUF_INIT;
	int64_t r[7] = { 1, 0, 0, 0, 0, 1, 0 };
	char *sql;
	int rc;

	nx__lod_file_list(&files, NULL, t);
	sql = nx_xasprintf(stats_sql, files.buf, files.buf);
	rc = nx_duck_scan(d, sql, take_stats, r, err);
	free(sql);
	nx_strbuf_release(&files);
	*ok = !rc && !r[6] && r[0] == 0 && r[1] > 0 && r[5] == 0 && r[4] >= 0;
	v[0] = r[1];
	v[1] = r[2];
	v[2] = r[3];
	*late = r[4];
	return rc;
}

/* Whether tl.ev<s> is copied first and its finest level then read back from the copy
 * (lod_l0.c), even when one pass could do both: NX_LOD_COPY_THEN_L0=1, the build before
 * the pass (the reference of the tests, and bench_lod_build's "before"). */
static bool copy_then_l0(void)
{
	return env_on("NX_LOD_COPY_THEN_L0");
}

/* The most time slices the pass keeps open: a file whose row groups overlap more is
 * copied, and its finest level read back from the copy. */
#define PASS_MAX_SLICES 16

/* What events_pass did. */
enum pass_done { PASS_NONE, PASS_COPY, PASS_COPY_L0 };

/* Instruction's events part shared by the two threads of the events part (events_two;
 * docs/memory.md, "The tail after the raw stage"): the first thread copies and folds
 * the rows of the table's first files (its slices, lod_slices.c), the second, between
 * its own sources, the rows of the files after them, on a connection of its own in a
 * transaction that it commits once the first's rows are in tl.ev0, so that they come
 * after them (lod_levels.h, struct nx_lod_l0_half). The first then joins the two halves
 * of L0 and appends the second's later slices (the stage table) after them: tl.ev0 and
 * tl.lod0 get the rows and row ids of the pass on one thread. */
struct events_split {
	pthread_mutex_t lock;
	pthread_cond_t cond;
	int offer;   /* 0: not decided yet; 1: offered; -1: none */
	bool taken;  /* by the second thread */
	bool closed; /* the second thread takes no offer (it is done, or failed) */
	int first;   /* the first half's rows: 0 being copied; 1 in tl.ev0; -1 failed */
	int second;  /* the second half's pass: 0 running; 1 done; -1 failed or declined */
	int committed; /* the second half's rows: 0 not yet; 1 committed; -1 rolled back */
	bool partner_failed; /* the first thread failed for the second's failure */
	int64_t others;      /* the rows of the second thread's own sources */
	/* the offer: the second half's pass */
	char *select, *cols;
	int level;
	int64_t v[3], chunk, late;
	struct nx_lod_l0_half half;
	struct nx_duck *d2; /* the second half's connection, until it commits */
	struct nx_lod_build_ref ref2;
};

/* The split passes' time slices hold a quarter of one pass's rows (chunk_rows): the
 * two halves run at once, each with its open slices, about 14 MB each at 10M records
 * with one pass's width (docs/memory.md, "The tail after the raw stage"). */
#define SPLIT_CHUNK_DIV 4

/* The stage of the second half's later slices (lod_levels.h). */
#define SPLIT_STAGE "nx_l0_stage0"

/* Sets *field to v and wakes the other thread. */
static void split_set(struct events_split *sp, int *field, int v)
{
	pthread_mutex_lock(&sp->lock);
	*field = v;
	pthread_cond_broadcast(&sp->cond);
	pthread_mutex_unlock(&sp->lock);
}

/* Waits until *field is set (not 0), and returns it. */
static int split_wait(struct events_split *sp, const int *field)
{
	int v;

	pthread_mutex_lock(&sp->lock);
	while (!*field)
		pthread_cond_wait(&sp->cond, &sp->lock);
	v = *field;
	pthread_mutex_unlock(&sp->lock);
	return v;
}

/* One file of the table as read: its rows and the least and greatest start of its row
 * groups' statistics. */
struct split_file {
	int64_t rows, lo, hi;
	bool seen;
};

struct split_files {
	struct split_file *f;
	size_t n;
};

static int take_split_files(void *arg, const struct nx_dchunk *c, struct nx_err *err)
{
	struct split_files *sf = arg;

	(void)err;
	for (size_t r = 0; r < nx_dchunk_rows(c); r++) {
		int64_t i = 0, v[3];

		if (!nx_dchunk_i64(c, 0, r, &i) || i < 1 || (size_t)i > sf->n)
			continue;
		for (int k = 0; k < 3; k++)
			if (!nx_dchunk_i64(c, (size_t)k + 1, r, &v[k]))
				return 0; /* a file unseen: no split */
		sf->f[i - 1] = (struct split_file){ v[0], v[1], v[2], true };
	}
	return 0;
}

/* read_parquet over files [a, b) of t (paths). */
static char *files_from(const struct nx_ptable *t, size_t a, size_t b)
{
	struct nx_ptable part = *t;
	struct nx_strbuf sql = NX_STRBUF_INIT;
	size_t len;

	part.files = t->files + a;
	part.nfiles = b - a;
	nx_strbuf_addstr(&sql, "read_parquet(");
	nx__lod_file_list(&sql, NULL, &part);
	nx_strbuf_addch(&sql, ')');
	return nx_strbuf_detach(&sql, &len);
}

/* Where Instruction's rows are split (*j: the first file of the second half; 0: no
 * split): the first thread's share of the rows is a half, plus the second's own
 * sources' weight (their rows count three quarters of one of Instruction's, as their
 * copies cost at 10M records, "Where the events part's CPU goes"), less the levels above
 * L0 that the first builds alone (a quarter of the copy's cost); at a file's boundary,
 * a file of each half at least. c gets, for width w, the least slice of the second's
 * rows and the greatest of the first's. */
static int split_point(struct nx_duck *d, const struct nx_ptable *t, const struct events_split *sp,
		       int64_t w, size_t *j, int64_t c[2], struct nx_err *err)
{
	struct split_files sf = { 0 };
	struct nx_strbuf sql = NX_STRBUF_INIT, files = NX_STRBUF_INIT;
	double x, best = 2, total = 0, cum = 0;
	int64_t lo = INT64_MAX, hi = INT64_MIN;
	int rc;

	*j = 0;
	if (t->nfiles < 2)
		return 0;
	sf.n = t->nfiles;
	sf.f = nx_xcalloc(sf.n, sizeof(*sf.f));
	nx__lod_file_list(&files, NULL, t);
	nx_strbuf_addf(&sql, "SELECT list_position(%s, file_name)::BIGINT, "
			     "sum(row_group_num_rows)::BIGINT, min(TRY_CAST(stats_min_value AS BIGINT)), "
			     "max(TRY_CAST(stats_max_value AS BIGINT)) FROM parquet_metadata(%s) "
			     "WHERE path_in_schema = 'start_ts' GROUP BY ALL",
		       files.buf, files.buf);
	rc = nx_duck_scan(d, sql.buf, take_split_files, &sf, err);
	for (size_t i = 0; i < sf.n && !rc; i++) {
		if (!sf.f[i].seen)
			goto out;
		total += (double)sf.f[i].rows;
	}
	if (rc || total <= 0)
		goto out;
	x = 0.5 + 0.5 * (0.75 * (double)sp->others / total - 0.25);
	x = x < 0.25 ? 0.25 : x > 0.9 ? 0.9 : x;
	for (size_t i = 1; i < sf.n; i++) {
		cum += (double)sf.f[i - 1].rows;
		if (fabs(cum / total - x) < best) {
			best = fabs(cum / total - x);
			*j = i;
		}
	}
	for (size_t i = 0; i < sf.n; i++) {
		if (i < *j && sf.f[i].hi > hi)
			hi = sf.f[i].hi;
		if (i >= *j && sf.f[i].lo < lo)
			lo = sf.f[i].lo;
	}
	c[0] = w == INT64_MAX ? 0 : nx__lod_floor_div(lo, w);
	c[1] = w == INT64_MAX ? 0 : nx__lod_floor_div(hi, w);
out:
	free(sf.f);
	nx_strbuf_release(&sql);
	nx_strbuf_release(&files);
	return rc;
}

/* The first thread: offers the second half of source s's pass (t its files as read)
 * when the second thread takes offers and the table has two files or more; then runs
 * the first half, joins the two, and appends the second's later slices. *split false:
 * no offer was made (the caller runs the whole pass). */
static int split_first(struct nx_duck *d, int s, const struct nx_ptable *t, const char *cols,
		       int lo, const int64_t v[3], int64_t late, int64_t chunk,
		       struct events_split *sp, bool *split, int64_t got[3], struct nx_err *err)
{
	struct nx_lod_l0_half first = { 0 };
	struct nx_strbuf a = NX_STRBUF_INIT, b = NX_STRBUF_INIT, q = NX_STRBUF_INIT;
	int64_t w, c[2], rows = 0;
	char *from_a = NULL, *from_b = NULL;
	size_t j = 0;
	bool closed;
	int rc;

	*split = false;
	/* narrower time slices than one pass's: each half keeps its own open (lod_levels.h),
	 * and the rows and their order do not depend on the width */
	chunk = chunk / SPLIT_CHUNK_DIV > NX_LOD_CHUNK_ROWS_MIN ? chunk / SPLIT_CHUNK_DIV
							       : NX_LOD_CHUNK_ROWS_MIN;
	w = nx__lod_slice_width(lo, v[1], v[2], v[0], chunk);
	pthread_mutex_lock(&sp->lock);
	closed = sp->closed;
	pthread_mutex_unlock(&sp->lock);
	if (closed || (rc = split_point(d, t, sp, w, &j, c, err)) || !j)
		return closed ? 0 : rc;
	from_a = files_from(t, 0, j);
	from_b = files_from(t, j, t->nfiles);
	events_select(&a, s, from_a);
	events_select(&b, s, from_b);
	/* tl.ev<s> and the stage, made before either half appends to them */
	nx_strbuf_addf(&q, "CREATE TABLE tl.ev%d AS SELECT %s FROM (%s) LIMIT 0; "
			   "CREATE TABLE " SPLIT_STAGE " AS SELECT * FROM tl.lod%d LIMIT 0",
		       s, cols, a.buf, s);
	rc = nx_duck_exec(d, q.buf, err);
	if (!rc) {
		pthread_mutex_lock(&sp->lock);
		if (!sp->closed) {
			sp->select = nx_strbuf_detach(&b, &(size_t){ 0 });
			sp->cols = nx_xstrdup(cols);
			sp->level = lo;
			memcpy(sp->v, v, sizeof(sp->v));
			sp->chunk = chunk;
			sp->late = late;
			sp->half = (struct nx_lod_l0_half){ .second = true, .c_first = c[0],
							    .c_aside = c[1], .stage = SPLIT_STAGE };
			sp->offer = 1;
			*split = true;
			pthread_cond_broadcast(&sp->cond);
		}
		pthread_mutex_unlock(&sp->lock);
	}
	if (!rc && !*split) /* the second thread closed meanwhile: one pass after all */
		rc = nx_duck_exec(d, "DROP TABLE " SPLIT_STAGE, err);
	if (!rc && !*split) {
		nx_strbuf_reset(&q);
		nx_strbuf_addf(&q, "DROP TABLE tl.ev%d", s);
		rc = nx_duck_exec(d, q.buf, err);
	}
	if (rc || !*split)
		goto out;
	rc = nx__lod_l0_half(d, s, a.buf, cols, nx__lod_sources[s].table, lo, v[1], v[2], v[0],
			     chunk, late, &first, err);
	split_set(sp, &sp->first, rc ? -1 : 1);
	if (split_wait(sp, &sp->second) < 0 && !rc) {
		sp->partner_failed = true;
		rc = nx_errf(err, NX_EDB, "the second half of %s failed",
			     nx__lod_sources[s].table);
	}
	rc = nx__lod_l0_half_join(d, rc, &first, &sp->half, &rows, got, err);
	/* the stage's rows are visible here although the second half's transaction has not
	 * committed: they were appended through the appenders' own connection, which commits
	 * each append (nx__duck_con_app, duck_conn.h), not in that transaction */
	if (!rc) {
		nx_strbuf_reset(&q);
		nx_strbuf_addf(&q, "INSERT INTO tl.lod%d SELECT * FROM " SPLIT_STAGE, s);
		rc = nx_duck_exec(d, q.buf, err);
	}
	if (!rc)
		rc = nx_duck_exec(d, "DROP TABLE " SPLIT_STAGE, err);
out:
	free(from_a);
	free(from_b);
	nx_strbuf_release(&a);
	nx_strbuf_release(&b);
	nx_strbuf_release(&q);
	return rc;
}

/* tl.ev<s> and the finest level of its pyramid in one pass over the profile's table t
 * (its files as read, in start order; lod_l0_pass.c), when the row groups' statistics
 * give the span, count and lateness of its events (v, *lo, *hi get them) and the
 * lateness keeps at most PASS_MAX_SLICES slices open. When the rows then prove the
 * statistics loose (another count or span), the level is removed again and *done says
 * only the copy was made. */
static int events_pass(struct nx_duck *d, int s, const struct nx_ptable *t, const char *cols,
		       const struct nx_lod_bounds *bounds, int64_t v[3], int *lo, int *hi,
		       enum pass_done *done, struct events_split *sp, struct nx_err *err)
{
	struct nx_strbuf sql = NX_STRBUF_INIT;
	int64_t late = 0, got[3], rows = 0, w, threads = 0;
	bool ok = false, split = false;
	int rc;

	*done = PASS_NONE;
	if (s == NX_LOD_SRC_FW || sql_l0() || copy_then_l0())
		return 0;
	/* the rows reach the pass in file order on one thread only (its settings are locked) */
	if ((rc = nx_duck_query_i64(d, "SELECT current_setting('threads')", &threads, err)) ||
	    threads != 1)
		return rc;
	if ((rc = stats_span(d, t, v, &late, &ok, err)) || !ok)
		return rc;
	span_levels(v, lo, hi);
	if (*lo > *hi)
		return 0;
	w = nx__lod_slice_width(*lo, v[1], v[2], v[0], bounds->chunk_rows);
	if (w != INT64_MAX && late / w + 2 > PASS_MAX_SLICES)
		return 0;
	if (sp && s == 0)
		rc = split_first(d, s, t, cols, *lo, v, late, bounds->chunk_rows, sp, &split, got,
				 err);
	events_select(&sql, s, NULL);
	if (!rc && !split)
		rc = nx__lod_l0_pass(d, s, sql.buf, cols, nx__lod_sources[s].table, *lo, v[1],
				     v[2], v[0], bounds->chunk_rows, late, &rows, got, err);
	nx_strbuf_reset(&sql);
	/* the rows prove the statistics loose: L0 is read back from tl.ev<s>, which must
	 * hold the second half's rows first (committed at the second thread's end) */
	if (!rc && split && (got[0] != v[0] || got[1] != v[1] || got[2] != v[2]) &&
	    split_wait(sp, &sp->committed) < 0) {
		sp->partner_failed = true;
		rc = nx_errf(err, NX_EDB, "the second half of %s failed", nx__lod_sources[s].table);
	}
	if (!rc && (got[0] != v[0] || got[1] != v[1] || got[2] != v[2])) {
		nx_strbuf_addf(&sql, "DELETE FROM tl.lod%d", s);
		rc = nx_duck_exec(d, sql.buf, err);
		*done = PASS_COPY;
	} else if (!rc) {
		*done = PASS_COPY_L0;
	}
	nx_strbuf_release(&sql);
	return rc;
}

/* tl.lod<s>, empty: its track and label of types (SQL; NULL: VARCHAR), tl.ev<s>'s. */
static int lod_table(struct nx_duck *d, int s, char *const types[2], struct nx_err *err)
{
	char *sql = nx_xasprintf("CREATE TABLE tl.lod%d (level UTINYINT, k BIGINT, core BIGINT, "
				 "track %s, count BIGINT, busy BIGINT, first_ts BIGINT, "
				 "last_ts BIGINT, id BIGINT, start_ts BIGINT, end_ts BIGINT, "
				 "label %s)",
				 s, types[0] ? types[0] : text_type, types[1] ? types[1] : text_type);
	int rc = nx_duck_exec(d, sql, err);

	free(sql);
	return rc;
}

/* tl.ev<s> (when copied), tl.lod<s> and its pyramid, its rows of tl.tracks and tl.meta;
 * with tail, those rows are not written but *tail gets the statements that write them
 * (the events part on two threads writes them after both, in source order). */
static int build_source(struct nx_duck *d, struct nx_lod_slices *sl, const char *dir,
			const char *scratch, int s, const struct nx_ptable *t,
			const struct nx_lod_bounds *bounds, uint64_t *events,
			struct phase_clock *clk, char **tail, struct events_split *sp,
			struct nx_lod_levels_two *two, struct nx_err *err)
{
	const struct nx_lod_source *src = &nx__lod_sources[s];
	struct nx_strbuf sql = NX_STRBUF_INIT, from = NX_STRBUF_INIT;
	enum pass_done pass = PASS_NONE;
	char *cols = NULL, *types[2] = { NULL, NULL };
	int64_t v[3];
	bool ordered = false, copy;
	int rc, lo = 0, hi = 0;

	/* from here on t's files are those read, as paths */
	rc = create_view(d, sl, dir, t, &t, false, err);
	if (!rc)
		rc = in_start_order(d, NULL, t, &ordered, err);
	copy = s == NX_LOD_SRC_FW || !ordered || !events_in_place();
	if (!rc && copy && s != NX_LOD_SRC_FW)
		rc = events_cols(d, s, &cols, types, err);
	if (!rc)
		rc = lod_table(d, s, types, err);
	free(types[0]);
	free(types[1]);
	if (!rc && copy && ordered)
		rc = events_pass(d, s, t, cols, bounds, v, &lo, &hi, &pass, sp, err);
	if (!rc && copy && pass == PASS_NONE)
		rc = events_sql(d, NULL, scratch, s, t, ordered, cols, &sql, err);
	free(cols);
	if (!rc && copy && pass == PASS_NONE)
		rc = nx_duck_exec(d, sql.buf, err);
	nx_strbuf_release(&sql);
	if (copy)
		nx_strbuf_addf(&from, "tl.ev%d", s);
	else
		nx__lod_events_sql(&from, s);
	if (!rc && pass != PASS_COPY_L0)
		rc = query3(d, from.buf, "start_ts", "end_ts", v, err);
	if (rc)
		goto out;
	*events += (uint64_t)v[0];
	if (pass == PASS_COPY_L0)
		clock_lap(clk, "tl.ev%d %s and tl.lod L%d", s, src->table, lo);
	else if (copy)
		clock_lap(clk, "tl.ev%d %s", s, src->table);
	else
		clock_lap(clk, "span of %s (read in place)", src->table);
	if (pass == PASS_COPY_L0) {
		if (lo < hi && (rc = nx__lod_levels_up_two(d, s, lo, hi, bounds->chunk_rows,
							    s == 0 ? two : NULL, err)))
			goto out;
	} else {
		span_levels(v, &lo, &hi);
		if ((rc = build_levels(d, s, from.buf, copy ? from.buf : src->table, lo, hi, v[1],
				       v[2], v[0], bounds, clk, err)))
			goto out;
	}
	if (lo < hi)
		clock_lap(clk, "tl.lod %s L%d..L%d", src->table, lo + 1, hi);
	else
		clock_lap(clk, "tl.lod %s L%d..L%d", src->table, lo, hi);
	if (s == NX_LOD_SRC_FW)
		nx_strbuf_addf(&sql, "INSERT INTO tl.tracks SELECT '%s', %d, core, track, "
				     "count(*)::BIGINT, min(start_ts), max(end_ts), stream, lane "
				     "FROM tl.ev%d GROUP BY ALL",
			       src->kind, s, s);
	else if (lo <= hi)
		nx_strbuf_addf(&sql, "INSERT INTO tl.tracks SELECT '%s', %d, core, track, "
				     "sum(count)::BIGINT, min(first_ts), max(last_ts), track, 0 "
				     "FROM (SELECT core, track::VARCHAR AS track, count, first_ts, "
				     "last_ts FROM tl.lod%d WHERE level = %d) GROUP BY ALL",
			       src->kind, s, s, lo);
	else
		nx_strbuf_addf(&sql, "INSERT INTO tl.tracks SELECT '%s', %d, core, track, "
				     "count(*)::BIGINT, min(start_ts), max(end_ts), track, 0 "
				     "FROM %s GROUP BY ALL",
			       src->kind, s, from.buf);
	nx_strbuf_addf(&sql, "; INSERT INTO tl.meta VALUES (%d, %" PRId64 ", %d, %d, %s)", s, v[0],
		       lo, hi, ordered ? "true" : "false");
	if (tail) {
		size_t len;

		*tail = nx_strbuf_detach(&sql, &len);
		goto out;
	}
	rc = nx_duck_exec(d, sql.buf, err);
	nx_strbuf_release(&sql);
	clock_lap(clk, "tl.tracks %s", src->table);
out:
	nx_strbuf_release(&from);
	return rc;
}

/* The most rows (times) one series has in one bucket of 2^l ns of tl.ctr: *n. */
static int densest_bucket(struct nx_duck *d, int l, int64_t *n, struct nx_err *err)
{
	char *sql = nx_xasprintf("SELECT max(n) FROM (SELECT count(*) AS n FROM tl.ctr GROUP BY "
				 "core, track, ts // %" PRId64 ")", (int64_t)1 << l);
	int rc = nx_duck_query_i64(d, sql, n, err);

	free(sql);
	return rc;
}

/* Lowers the counters' finest level *lo until no series holds more than LOD_K rows (times) in
 * one bucket of the level below it (the widest bucket of a window that reads tl.ctr), so
 * a burst (a dense stretch of a series) puts at most LOD_K rows per pixel under such a
 * window, not only the span's average: one grouping of tl.ctr at *lo - 1, and when a
 * bucket holds more, a binary search for the coarsest level that holds them (a series
 * has one row of tl.ctr per ns at most, so level 0 always does). */
static int bound_bursts(struct nx_duck *d, int *lo, struct nx_err *err)
{
	int64_t n = 0;
	int fits = -1, a = 0, b = *lo - 2, rc = 0;

	if (*lo <= 0)
		return 0;
	if ((rc = densest_bucket(d, *lo - 1, &n, err)) || n <= LOD_K)
		return rc;
	while (a <= b && !rc) {
		int mid = a + (b - a) / 2;

		if ((rc = densest_bucket(d, mid, &n, err)))
			break;
		if (n <= LOD_K) {
			fits = mid;
			a = mid + 1;
		} else {
			b = mid - 1;
		}
	}
	if (!rc)
		*lo = fits + 1;
	return rc;
}

/* Moves the rows of tl.ctr in dense cells to tl.ctr_burst: a cell is a series' bucket of
 * 2^cell ns, dense when it holds more than LOD_K rows (times). tl.ctr keeps the others in
 * their order; tl.ctr_burst gets the moved ones in the same order (time, core, track). */
static int split_bursts(struct nx_duck *d, int cell, struct nx_err *err)
{
	char *sql = nx_xasprintf(
		"CREATE TEMP TABLE nx_ctr_dense AS SELECT core, track, ts // %" PRId64 " AS c "
		"FROM tl.ctr GROUP BY ALL HAVING count(*) > %d; "
		"INSERT INTO tl.ctr_burst SELECT r.* FROM tl.ctr r SEMI JOIN nx_ctr_dense c ON "
		"r.core IS NOT DISTINCT FROM c.core AND r.track IS NOT DISTINCT FROM c.track AND "
		"r.ts // %" PRId64 " = c.c ORDER BY r.ts, r.core, r.track; "
		"DELETE FROM tl.ctr r USING nx_ctr_dense c WHERE r.core IS NOT DISTINCT FROM "
		"c.core AND r.track IS NOT DISTINCT FROM c.track AND r.ts // %" PRId64 " = c.c; "
		"DROP TABLE nx_ctr_dense",
		(int64_t)1 << cell, LOD_K, (int64_t)1 << cell, (int64_t)1 << cell);
	int rc = nx_duck_exec(d, sql, err);

	free(sql);
	return rc;
}

/* The counters' pyramid, tl.ctr_lod, and its rows of tl.meta (src -1; src -2 for the
 * bursts': the statements appended to meta), unless a value lies beyond +-2^61 ns: per
 * series, power-of-two time bucket and level, the least and greatest value and the last
 * one (with its time). Its finest level
 * L0 holds LOD_K values of the densest series (the one with the most values) per bucket on
 * average over the span, so a window whose buckets are finer reads tl.ctr, and a coarser
 * one one level. (L0 from the average series let a real NKI kernel's two dense
 * semaphores, half of its values, put 275k rows under 1,161 pixels: docs/memory.md, "The
 * counters' pyramid from the densest series".) A burst (a dense stretch of a series)
 * would put more than LOD_K values per pixel under such a window: bound_bursts finds the
 * level Lb it needs, and the rows of the series' buckets of 2^(L0 - 1) ns that hold more
 * than LOD_K move to tl.ctr_burst, whose levels Lb..L0 - 1 are built for them alone
 * (src -2 in tl.meta), L0 and above from both tables. So a window of buckets of 2^b ns
 * reads its level for b >= L0; tl.ctr and level b (the dense cells) for Lb <= b < L0;
 * tl.ctr and tl.ctr_burst below Lb: at most LOD_K values of any series per pixel (twice
 * that with the look-back), and the fine levels cost rows only where the bursts are
 * (docs/memory.md, "The counters' bursts bounded where they are"). */
static int build_counter_levels(struct nx_duck *d, const struct nx_lod_bounds *bounds,
				struct nx_strbuf *meta, struct nx_err *err)
{
	static const char all_sql[] = "(SELECT * FROM tl.ctr UNION ALL SELECT * FROM tl.ctr_burst)";
	int64_t v[4], vb[3] = { 0 };
	int rc, lo, hi, lb;

	rc = query3(d, "tl.ctr", "ts", "ts", v, err);
	if (!rc)
		rc = nx_duck_query_i64(d, "SELECT max(n) FROM (SELECT count(*) AS n FROM tl.ctr "
					  "GROUP BY core, track)", &v[3], err);
	/* times beyond the timeline's bound: no pyramid (windows read tl.ctr), so no span
	 * or slice overflows */
	if (rc || v[0] <= 0 || v[1] < -NX_TL_TIME_BOUND || v[2] > NX_TL_TIME_BOUND)
		return rc;
	hi = ceil_log2((double)(v[2] > v[1] ? v[2] - v[1] : 1)) + 1;
	lo = ceil_log2((double)LOD_K * (double)(v[2] - v[1]) / (double)v[3]);
	if (lo > hi)
		lo = hi + 1;
	lb = lo;
	if (lo <= hi)
		rc = bound_bursts(d, &lb, err);
	if (!rc && lb < lo)
		rc = split_bursts(d, lo - 1, err);
	if (!rc && lb < lo)
		rc = query3(d, "tl.ctr_burst", "ts", "ts", vb, err);
	if (!rc && lb < lo)
		rc = build_levels(d, -1, "tl.ctr_burst", NULL, lb, lo - 1, vb[1], vb[2], vb[0],
				  bounds, NULL, err);
	if (!rc)
		rc = build_levels(d, -1, lb < lo ? all_sql : NULL, NULL, lo, hi, v[1], v[2], v[0],
				  bounds, NULL, err);
	if (!rc) {
		nx_strbuf_addf(meta, "; INSERT INTO tl.meta VALUES (-1, %" PRId64 ", %d, %d, true)",
			       v[0], lo, hi);
		if (lb < lo)
			nx_strbuf_addf(meta, ", (-2, %" PRId64 ", %d, %d, true)", vb[0], lb, lo - 1);
	}
	return rc;
}

/* Inserts into tl.ctr the values of `values` (a relation of core, track, ts, v) whose
 * times meet `cond`: per series and time one row, its samples' last value, their least
 * and greatest where they are not the last and their count where it is not 1 (NULL
 * otherwise: a column of NULLs costs next to nothing to write and store), in time order. */
static int ctr_slice(struct nx_duck *d, const char *values, const char *cond, struct nx_err *err)
{
	char *sql = nx_xasprintf("INSERT INTO tl.ctr SELECT core, track, ts, nullif(lo, last), "
				 "nullif(hi, last), last, nullif(n, 1) FROM (SELECT core, track, "
				 "ts, min(v) AS lo, max(v) AS hi, " NX_LOD_LAST_TIED_SQL("v")
				 " AS last, count(*)::UINTEGER AS n FROM %s WHERE %s GROUP BY "
				 "core, track, ts) ORDER BY ts, core, track", values, cond);
	int rc = nx_duck_exec(d, sql, err);

	free(sql);
	return rc;
}

/* tl.ctr from the counter tables the profile has (per series and time one row: the
 * samples' least, greatest and last value and their count, so that the server's windows
 * over it take the last by the time alone, at arg_max's cost: docs/memory.md, "The
 * counters' raw replies at their old cost"), and their rows of tl.tracks and tl.meta
 * (with tail, not written: *tail gets the statements that write them, NULL for none);
 * temp: the views of their tables temporary (create_view). The grouping
 * holds its groups, so it runs in time slices of about bounds->chunk_rows values, as the
 * pyramids' levels do, of half their rows (one grouping of 2M values took more than the
 * build's 122 MiB, and slices of 500k values did too). */
static int build_counters(struct nx_duck *d, struct nx_lod_slices *sl, const char *dir,
			  const struct nx_pfiles *files, const struct nx_lod_bounds *bounds,
			  struct phase_clock *clk, bool temp, char **tail, struct nx_err *err)
{
	struct nx_strbuf vals = NX_STRBUF_INIT, rows = NX_STRBUF_INIT;
	int64_t v[3] = { 0 }, w;
	size_t n = 0;
	int rc = 0;

	nx_strbuf_addch(&vals, '(');
	for (size_t i = 0; i < nx__lod_ncounters && !rc; i++) {
		const struct nx_lod_counter *c = &nx__lod_counters[i];
		const struct nx_ptable *t = nx__pfiles_find(files, c->table);

		if (!t || t->members || !t->nfiles)
			continue;
		rc = create_view(d, sl, dir, t, NULL, temp, err);
		nx_strbuf_addf(&vals, "%sSELECT pcore_idx::BIGINT AS core, (%s)::VARCHAR AS track, "
				      "timestamp::BIGINT AS ts, (%s)::DOUBLE AS v FROM ",
			       n++ ? " UNION ALL " : "", c->series, c->value);
		nx_sql_quote_ident(&vals, c->table);
		nx_strbuf_addstr(&vals, " WHERE timestamp IS NOT NULL");
	}
	nx_strbuf_addch(&vals, ')');
	if (!rc && n)
		rc = query3(d, vals.buf, "ts", "ts", v, err);
	if (rc || !n || v[0] <= 0)
		goto out;
	/* times beyond the timeline's bound: one slice, so no slice arithmetic overflows */
	w = v[1] < -NX_TL_TIME_BOUND || v[2] > NX_TL_TIME_BOUND
		    ? INT64_MAX
		    : nx__lod_slice_width(0, v[1], v[2], v[0], bounds->chunk_rows / 2);
	if (w == INT64_MAX)
		rc = ctr_slice(d, vals.buf, "true", err);
	for (int64_t c = nx__lod_floor_div(v[1], w); w != INT64_MAX && !rc &&
						     c <= nx__lod_floor_div(v[2], w); c++) {
		char cond[96];

		snprintf(cond, sizeof(cond), "ts >= %" PRId64 " AND ts < %" PRId64, c * w,
			 (c + 1) * w);
		rc = ctr_slice(d, vals.buf, cond, err);
	}
	/* their rows of tl.tracks (with tail, in it: a grouping, in no defined order); tl.ctr
	 * with tl.ctr_burst, as with tail it runs after build_counter_levels moved the
	 * bursts' rows */
	nx_strbuf_addstr(&rows, "INSERT INTO tl.tracks SELECT 'counter', NULL, core, track, "
				"sum(coalesce(n, 1))::BIGINT, min(ts), max(ts), track, 0 FROM "
				"(SELECT * FROM tl.ctr UNION ALL SELECT * FROM tl.ctr_burst) "
				"GROUP BY ALL");
	if (!rc && !tail)
		rc = nx_duck_exec(d, rows.buf, err);
	if (rc)
		goto out;
	if (!tail)
		nx_strbuf_reset(&rows);
	clock_lap(clk, "tl.ctr");
	rc = build_counter_levels(d, bounds, &rows, err);
	if (!rc && !tail && rows.len) /* tl.meta's row; skip "; " */
		rc = nx_duck_exec(d, rows.buf + 2, err);
	clock_lap(clk, "tl.ctr_lod");
out:
	if (!rc && tail && rows.len)
		*tail = nx_xstrdup(rows.buf);
	nx_strbuf_release(&rows);
	nx_strbuf_release(&vals);
	return rc;
}

/* Whether a row of Instruction (its files as read, t) may have a source location: unless
 * the statistics of every row group say both location columns are NULL throughout. DuckDB
 * reads a single file's statistics when it plans a query, and then skips the scan of such
 * a table; over slices it plans without them, so the build asks the footers first. */
static int may_have_lines(struct nx_duck *d, const struct nx_ptable *t, bool *may,
			  struct nx_err *err)
{
	struct nx_strbuf sql = NX_STRBUF_INIT;
	int64_t v = 1;
	int rc;

	nx_strbuf_addstr(&sql, "SELECT count(*) FROM parquet_metadata(");
	nx__lod_file_list(&sql, NULL, t);
	nx_strbuf_addstr(&sql, ") WHERE path_in_schema IN ('bir_debug_info_source_location', "
			       "'nki_source_location') AND (stats_null_count IS NULL OR "
			       "stats_null_count < num_values)");
	rc = nx_duck_query_i64(d, sql.buf, &v, err);
	*may = v != 0;
	nx_strbuf_release(&sql);
	return rc;
}

/* tl.lines (lines_sql.c): per source location of Instruction the instruction count,
 * summed duration, first start and last end, and its DMA transfers when the profile has
 * Flow and DmaPacketAggregated; only when Instruction has the location columns (and
 * empty when no row has a location). */
static int build_lines(struct nx_duck *d, struct nx_lod_slices *sl, const char *dir,
		       const struct nx_pfiles *files, bool temp, struct nx_err *err)
{
	static const char *const need[] = { "bir_debug_info_source_location",
					     "nki_source_location", "duration_ns" };
	const struct nx_ptable *flow = nx__pfiles_find(files, "Flow");
	const struct nx_ptable *dpa = nx__pfiles_find(files, "DmaPacketAggregated");
	const struct nx_ptable *inst = nx__pfiles_find(files, "Instruction");
	bool dma = flow && !flow->members && flow->nfiles && dpa && !dpa->members && dpa->nfiles;
	bool may = true;
	struct nx_strbuf sql = NX_STRBUF_INIT;
	char **names = NULL;
	size_t n = 0, found = 0;
	int rc;

	rc = nx_duck_columns(d, "SELECT * FROM \"Instruction\" LIMIT 0", &names, &n, err);
	for (size_t i = 0; i < n; i++) {
		for (size_t k = 0; k < NX_ARRAY_SIZE(need); k++)
			found += !strcmp(names[i], need[k]);
		free(names[i]);
	}
	free(names);
	if (rc || found < NX_ARRAY_SIZE(need))
		return rc;
	/* Instruction's view exists (its events came first): its files as read */
	if ((rc = nx__lod_sliced(sl, dir, inst, &inst, err)) ||
	    (rc = may_have_lines(d, inst, &may, err)))
		return rc;
	if (dma)
		rc = create_view(d, sl, dir, flow, NULL, temp, err);
	nx_strbuf_addstr(&sql, "CREATE TABLE tl.lines AS ");
	nx__lines_sql(&sql, dma, NULL);
	nx_strbuf_addstr(&sql, may ? " ORDER BY dur + dma_ns DESC" : " LIMIT 0");
	if (!rc)
		rc = nx_duck_exec(d, sql.buf, err);
	nx_strbuf_release(&sql);
	return rc;
}

static bool cached_source(const struct nx_pfiles *files, int s)
{
	const struct nx_ptable *t = nx__pfiles_find(files, nx__lod_sources[s].table);

	return t && !t->members && t->nfiles;
}

static const char schema_sql[] =
	"CREATE TABLE tl.ctr (core BIGINT, track VARCHAR, ts BIGINT, lo DOUBLE, hi DOUBLE, "
	"last DOUBLE, n UINTEGER); "
	"CREATE TABLE tl.ctr_burst (core BIGINT, track VARCHAR, ts BIGINT, lo DOUBLE, hi DOUBLE, "
	"last DOUBLE, n UINTEGER); "
	"CREATE TABLE tl.ctr_lod (level UTINYINT, k BIGINT, core BIGINT, track VARCHAR, "
	"lo DOUBLE, hi DOUBLE, last DOUBLE, last_ts BIGINT); "
	"CREATE TABLE tl.tracks (kind VARCHAR, src INTEGER, core BIGINT, track VARCHAR, "
	"count BIGINT, \"start\" BIGINT, \"end\" BIGINT, stream VARCHAR, lane INTEGER); "
	"CREATE TABLE tl.meta (src INTEGER, n BIGINT, lo INTEGER, hi INTEGER, ordered BOOLEAN)";

void nx__lod_builds_init(struct nx_lod_builds *b)
{
	pthread_mutex_init(&b->lock, NULL);
	b->stopping = false;
	b->running = NULL;
}

void nx__lod_builds_stop(struct nx_lod_builds *b)
{
	pthread_mutex_lock(&b->lock);
	b->stopping = true;
	for (struct nx_lod_build_ref *r = b->running; r; r = r->next)
		nx_duck_interrupt(r->d);
	pthread_mutex_unlock(&b->lock);
}

void nx__lod_builds_release(struct nx_lod_builds *b)
{
	pthread_mutex_destroy(&b->lock);
}

/* Links ref (database d) into builds; fails when the server is stopping. */
static int builds_enter(struct nx_lod_builds *b, struct nx_lod_build_ref *ref, struct nx_duck *d,
			struct nx_err *err)
{
	int rc = 0;

	if (!b)
		return 0;
	pthread_mutex_lock(&b->lock);
	if (b->stopping) {
		rc = nx_errf(err, NX_EDB, "the server is stopping");
	} else {
		ref->d = d;
		ref->next = b->running;
		b->running = ref;
	}
	pthread_mutex_unlock(&b->lock);
	return rc;
}

/* Fails when the server (or the ingest, lod_carried.c) is stopping the builds: checked
 * between steps, for an interrupt that came while no statement ran is lost. */
static int builds_check(struct nx_lod_builds *b, struct nx_err *err)
{
	bool stopping = false;

	if (b) {
		pthread_mutex_lock(&b->lock);
		stopping = b->stopping;
		pthread_mutex_unlock(&b->lock);
	}
	return stopping ? nx_errf(err, NX_EDB, "the build was stopped") : 0;
}

static void builds_leave(struct nx_lod_builds *b, struct nx_lod_build_ref *ref)
{
	if (!b || !ref->d)
		return;
	pthread_mutex_lock(&b->lock);
	for (struct nx_lod_build_ref **pp = &b->running; *pp; pp = &(*pp)->next)
		if (*pp == ref) {
			*pp = ref->next;
			break;
		}
	pthread_mutex_unlock(&b->lock);
}

/* tl.stamp: the stamp of the cache but for its size (lod_cache.c). */
static int write_stamp(struct nx_duck *d, const struct nx_lod_stamp *s, struct nx_err *err)
{
	struct nx_strbuf sql = NX_STRBUF_INIT;
	int rc;

	nx_strbuf_addf(&sql, "CREATE TABLE tl.stamp AS SELECT %d AS format, ", s->format);
	nx_sql_quote(&sql, s->profile);
	nx_strbuf_addstr(&sql, " AS profile, ");
	nx_sql_quote(&sql, s->version);
	nx_strbuf_addstr(&sql, " AS version, ");
	nx_sql_quote(&sql, s->tables);
	nx_strbuf_addstr(&sql, " AS tables");
	rc = nx_duck_exec(d, sql.buf, err);
	nx_strbuf_release(&sql);
	return rc;
}

/* DuckDB's settings for a build part (docs/memory.md, "Where the build's memory is"): the
 * rows keep their order; no external file cache, for the build reads each file (or slice)
 * once, and the bytes it kept only filled the buffer pool; and a thread that allocated
 * 16 MB since its last task (DuckDB's default: 128 MB) gives the pages its allocator keeps
 * for reuse back after the task (at 100M records they were up to 89 MB beside the pool). */
static const char part_settings_sql[] =
	"SET preserve_insertion_order = true; SET enable_external_file_cache = false; "
	"SET allocator_flush_threshold = '16MB'; ";

/* Opens a database for a build part, on `threads` threads, with out_dir/timeline.duckdb
 * attached as tl (created when absent), sandboxed to the profile and out_dir (which locks
 * its settings), registered in builds. */
static int part_open(struct nx_duck **d, int threads, const char *dir, const char *out_dir,
		     const char *scratch, const struct nx_lod_bounds *bounds,
		     struct nx_lod_builds *builds, struct nx_lod_build_ref *ref, struct nx_err *err)
{
	struct nx_strbuf sql = NX_STRBUF_INIT;
	char *out = nx_path_join(out_dir, NX_LOD_FILE);
	int rc;

	if ((rc = nx_mkdirs(scratch, err)) ||
	    (rc = nx_duck_open(d, threads, bounds->memory_limit, err)) ||
	    (rc = builds_enter(builds, ref, *d, err)))
		goto out;
	nx_strbuf_addstr(&sql, part_settings_sql);
	nx_strbuf_addstr(&sql, "ATTACH ");
	nx_sql_quote(&sql, out);
	nx_strbuf_addstr(&sql, " AS tl");
	/* then the same sandbox as the server's queries: the profile and the build's own
	 * directory, which holds the spill folder */
	if (!(rc = nx_duck_exec(*d, sql.buf, err)))
		rc = nx_duck_sandbox(*d, (const char *[]){ dir, out_dir }, 2, scratch, err);
out:
	nx_strbuf_release(&sql);
	free(out);
	return rc;
}

/* Checkpoints and closes the database of a part, removes its scratch folder. */
static int part_close(struct nx_duck *d, int rc, const char *scratch,
		      struct nx_lod_builds *builds, struct nx_lod_build_ref *ref,
		      struct phase_clock *clk, const char *lap, struct nx_err *err)
{
	struct nx_err ignored = { 0 };

	if (!rc)
		rc = nx_duck_exec(d, "CHECKPOINT tl; DETACH tl", err);
	clock_lap(clk, "%s", lap);
	builds_leave(builds, ref);
	nx_duck_close(d);
	nx_remove_tree(scratch, &ignored);
	return rc;
}

/* The second thread: the second half's pass, in a transaction of a connection of its
 * own (sp->d2) that split_commit ends. */
static int split_second(struct nx_duck *d, struct nx_lod_builds *builds, struct events_split *sp,
			struct nx_err *err)
{
	int rc = nx_duck_open_sibling(d, &sp->d2, err);

	if (!rc)
		rc = builds_enter(builds, &sp->ref2, sp->d2, err);
	if (!rc)
		rc = nx_duck_exec(sp->d2, "BEGIN TRANSACTION", err);
	if (!rc)
		rc = nx__lod_l0_half(sp->d2, 0, sp->select, sp->cols, nx__lod_sources[0].table,
				     sp->level, sp->v[1], sp->v[2], sp->v[0], sp->chunk, sp->late,
				     &sp->half, err);
	split_set(sp, &sp->second, rc ? -1 : 1);
	return rc;
}

/* The second thread, between its sources (last: after them): takes the offer once made
 * (with wait or after its last source it waits for the first thread to decide), or,
 * after the last or a failure (failed), takes none from then on. */
static int split_poll(struct nx_duck *d, struct nx_lod_builds *builds, struct events_split *sp,
		      bool last, bool wait, bool failed, struct nx_err *err)
{
	bool take = false;

	if (!sp)
		return 0;
	pthread_mutex_lock(&sp->lock);
	while ((last || wait) && !failed && !sp->offer)
		pthread_cond_wait(&sp->cond, &sp->lock);
	if (sp->offer == 1 && !sp->taken && !failed) {
		take = sp->taken = true;
	} else if ((last || failed) && !sp->taken) {
		sp->closed = true;
		if (sp->offer == 1)
			sp->second = -1;
		pthread_cond_broadcast(&sp->cond);
	}
	pthread_mutex_unlock(&sp->lock);
	return take ? split_second(d, builds, sp, err) : 0;
}

/* The second thread, at its end: commits its half once the first half's rows are in
 * tl.ev0 (so that its rows come after them), or rolls it back when either failed. */
static int split_commit(struct nx_lod_builds *builds, struct events_split *sp, int rc,
			struct nx_err *err)
{
	if (!sp || !sp->taken)
		return rc;
	if (sp->d2 && split_wait(sp, &sp->first) == 1 && !rc && sp->second == 1 &&
	    !(rc = nx_duck_exec(sp->d2, "COMMIT", err))) {
		split_set(sp, &sp->committed, 1);
	} else {
		if (sp->d2)
			nx_duck_exec(sp->d2, "ROLLBACK", &(struct nx_err){ 0 });
		split_set(sp, &sp->committed, -1);
	}
	builds_leave(builds, &sp->ref2);
	nx_duck_close(sp->d2);
	sp->d2 = NULL;
	return rc;
}

/* How many threads build the events part: NX_LOD_EVENTS_THREADS, 1 or 2 (default 2:
 * Instruction on one, the other sources on the other, each on a connection of its own to
 * the part's database; docs/memory.md, "The events part on two threads"). */
static int events_threads(long long *n, struct nx_err *err)
{
	return nx_env_range("NX_LOD_EVENTS_THREADS", 1, 2, "threads", n, err);
}

/* One thread of the events part: the sources srcs[0..nsrc) on database d, in order, each
 * with its rows of tl.tracks and tl.meta left in tail[s] to be written after both
 * threads (in source order, as one thread writes them). */
struct events_job {
	struct nx_duck *d;
	const char *dir, *scratch;
	const struct nx_pfiles *files;
	const struct nx_lod_bounds *bounds;
	struct nx_lod_builds *builds;
	int srcs[NX_LOD_NSRC];
	size_t nsrc;
	char *tail[NX_LOD_NSRC];
	uint64_t n;
	struct nx_lod_phases ph;
	bool timed;
	struct events_split *split; /* Instruction's, shared by both (NULL: not split) */
	struct nx_lod_levels_two *levels; /* Instruction's levels above L0, shared (NULL: not) */
	bool second;                /* the second thread */
	struct nx_err err;
	int rc;
};

/* The first thread, at its end: no offer of Instruction's second half comes any more. */
static void split_settle(struct events_split *sp)
{
	if (!sp)
		return;
	pthread_mutex_lock(&sp->lock);
	if (!sp->offer)
		sp->offer = -1;
	pthread_cond_broadcast(&sp->cond);
	pthread_mutex_unlock(&sp->lock);
}

/* The second thread: Instruction's second half when offered (split_poll), its lap; a
 * failure of its own stays in j->err. */
static void split_turn(struct events_job *j, struct phase_clock *clk, bool last, bool wait)
{
	bool taken = j->split && j->split->taken;
	int rc;

	if (!j->second)
		return;
	if ((rc = split_poll(j->d, j->builds, j->split, last, wait, j->rc != 0, &j->err)))
		j->rc = rc;
	if (!taken && j->split && j->split->taken) {
		clock_lap(clk, "tl.ev0 %s, second half", nx__lod_sources[0].table);
		if (j->rc)
			nx_err_wrap(&j->err, "the events of %s", nx__lod_sources[0].table);
	}
}

static void *events_run(void *arg)
{
	struct events_job *j = arg;
	struct phase_clock clk = { .ph = j->timed ? &j->ph : NULL, .thread = true };
	struct nx_lod_slices sl;

	nx__lod_slices_init(&sl, j->scratch, j->bounds->slice_groups);
	if (clk.ph)
		clock_read(&clk, &clk.cpu, &clk.wall);
	for (size_t i = 0; i < j->nsrc && !j->rc; i++) {
		int s = j->srcs[i];
		const struct nx_ptable *t = nx__pfiles_find(j->files, nx__lod_sources[s].table);

		/* the first source (DmaPacketAggregated's, small) while the first thread
		 * prepares Instruction; then the offer first, when it comes, so that the
		 * first thread's wait for the second half is short */
		split_turn(j, &clk, false, i > 0);
		if (j->rc)
			break;
		if (!(j->rc = builds_check(j->builds, &j->err)))
			j->rc = build_source(j->d, &sl, j->dir, j->scratch, s, t, j->bounds, &j->n,
					     &clk, &j->tail[s], j->second ? NULL : j->split,
					     j->second ? NULL : j->levels, &j->err);
		if (j->rc)
			nx_err_wrap(&j->err, "the events of %s", nx__lod_sources[s].table);
	}
	if (j->second) {
		int was, lv[2] = { 0, 0 };

		split_turn(j, &clk, true, true);
		was = j->rc;
		if ((j->rc = split_commit(j->builds, j->split, j->rc, &j->err)) && !was)
			nx_err_wrap(&j->err, "the events of %s", nx__lod_sources[0].table);
		/* then it helps with Instruction's levels above L0 until the first ends them */
		if (nx__lod_levels_second(j->d, j->levels, j->rc != 0, lv))
			clock_lap(&clk, "tl.lod %s L%d..L%d, second thread",
				  nx__lod_sources[0].table, lv[0], lv[1]);
	} else {
		split_settle(j->split);
		nx__lod_levels_two_end(j->levels);
	}
	nx__lod_slices_release(&sl);
	return NULL;
}

/* Whether Instruction's events may be shared by both threads of the events part
 * (events_split): unless NX_LOD_EVENTS_SPLIT=0 (the build before, for a before/after). */
static bool split_on(void)
{
	const char *v = getenv("NX_LOD_EVENTS_SPLIT");

	return !v || strcmp(v, "0");
}

/* The least rows of a level of Instruction's pyramid for its level above to be built on
 * both threads of the events part: NX_LOD_LEVELS_SPLIT_ROWS, 0 (never: the first thread
 * builds them all) to 1,000,000,000, default LEVELS_SPLIT_ROWS (docs/memory.md, "The
 * levels on both threads"). */
#define LEVELS_SPLIT_ROWS 200000
static int levels_split_rows(long long *n, struct nx_err *err)
{
	*n = LEVELS_SPLIT_ROWS;
	return nx_env_range("NX_LOD_LEVELS_SPLIT_ROWS", 0, 1000000000, "rows", n, err);
}

/* *n gets the rows of the tables of sources srcs[0..nsrc) (their footers' counts). */
static int others_rows(struct nx_duck *d, const char *dir, const struct nx_pfiles *files,
		       const int *srcs, size_t nsrc, int64_t *n, struct nx_err *err)
{
	int rc = 0;

	*n = 0;
	for (size_t i = 0; i < nsrc && !rc; i++) {
		const struct nx_ptable *t = nx__pfiles_find(files, nx__lod_sources[srcs[i]].table);
		struct nx_strbuf sql = NX_STRBUF_INIT;
		int64_t v = 0;

		nx_strbuf_addstr(&sql, "SELECT count(*) FROM read_parquet(");
		nx__lod_file_list(&sql, dir, t);
		nx_strbuf_addch(&sql, ')');
		rc = nx_duck_query_i64(d, sql.buf, &v, err);
		*n += v;
		nx_strbuf_release(&sql);
	}
	return rc;
}

/* The events part on two threads (events_threads): Instruction on this one, on d, the
 * other sources on a second, on a connection of its own to d's database (threads=1:
 * each statement runs on the thread that runs it, so the two use both cores, and the L0
 * pass still sees its rows in order); the tables of one source are all its own, so each
 * has the rows and row ids of the one-thread build; tl.tracks and tl.meta then get their
 * rows in source order. Phases are timed per thread (RUSAGE_THREAD): Instruction's, then
 * the others', each thread's wall times overlapping the other's. */
static int events_two(struct nx_duck *d, const char *dir, const char *scratch,
		      const struct nx_pfiles *files, const struct nx_lod_bounds *bounds,
		      struct nx_lod_builds *builds, uint64_t *n, struct phase_clock *clk,
		      struct nx_err *err)
{
	struct events_job job[2];
	struct nx_lod_build_ref ref = { 0 };
	struct events_split split = { .lock = PTHREAD_MUTEX_INITIALIZER,
				      .cond = PTHREAD_COND_INITIALIZER };
	pthread_t th;
	bool started = false;
	long long min_rows = 0;
	int rc = 0;

	memset(job, 0, sizeof(job));
	for (int k = 0; k < 2; k++) {
		job[k] = (struct events_job){ .dir = dir, .scratch = scratch, .files = files,
					      .bounds = bounds, .builds = builds,
					      .timed = clk->ph != NULL, .second = k == 1 };
	}
	for (int s = 0; s < NX_LOD_NSRC; s++)
		if (cached_source(files, s))
			job[s ? 1 : 0].srcs[job[s ? 1 : 0].nsrc++] = s;
	/* Instruction shared by both threads when the second has sources of its own (their
	 * rows weigh the split; a table that cannot be read fails its thread, naming it) and
	 * NX_LOD_EVENTS_SPLIT is not 0 */
	if (job[0].nsrc && job[1].nsrc && split_on() &&
	    !others_rows(d, dir, files, job[1].srcs, job[1].nsrc, &split.others,
			 &(struct nx_err){ 0 })) /* a table that fails fails its thread */
		job[0].split = job[1].split = &split;
	/* Instruction's levels above L0 on both threads: the second helps once its sources
	 * are done (nx__lod_levels_up_two) */
	if (!(rc = levels_split_rows(&min_rows, err)) && min_rows && job[0].nsrc &&
	    job[0].srcs[0] == 0 && job[1].nsrc)
		job[0].levels = job[1].levels = nx__lod_levels_two_new(min_rows);
	job[0].d = d;
	if (!rc && job[1].nsrc && !(rc = nx_duck_open_sibling(d, &job[1].d, err)) &&
	    !(rc = builds_enter(builds, &ref, job[1].d, err)))
		started = !pthread_create(&th, NULL, events_run, &job[1]);
	if (!rc && job[1].nsrc && !started)
		rc = nx_errf(err, NX_EDB, "cannot start the second thread of the events part");
	if (!rc)
		events_run(&job[0]);
	if (started)
		pthread_join(th, NULL);
	builds_leave(builds, &ref);
	nx_duck_close(job[1].d);
	for (int k = 0; k < 2 && !rc; k++)
		if ((rc = job[k].rc))
			*err = job[k].err;
	/* the first thread failed for the second half's failure: the second's error says why */
	if (rc && job[0].rc && split.partner_failed && job[1].rc)
		*err = job[1].err;
	free(split.select);
	free(split.cols);
	nx__lod_levels_two_free(job[0].levels);
	pthread_mutex_destroy(&split.lock);
	pthread_cond_destroy(&split.cond);
	for (int k = 0; k < 2 && clk->ph; k++)
		for (size_t i = 0; i < job[k].ph.n && clk->ph->n < NX_LOD_MAX_PHASES; i++)
			clk->ph->ph[clk->ph->n++] = job[k].ph.ph[i];
	if (clk->ph)
		clock_read(clk, &clk->cpu, &clk->wall);
	for (int s = 0; s < NX_LOD_NSRC; s++) {
		if (!rc && job[s ? 1 : 0].tail[s]) {
			rc = nx_duck_exec(d, job[s ? 1 : 0].tail[s], err);
			clock_lap(clk, "tl.tracks %s", nx__lod_sources[s].table);
		}
		free(job[s ? 1 : 0].tail[s]);
	}
	*n += job[0].n + job[1].n;
	return rc;
}

/* The events part: tl.ev<s> and the pyramid of every event source, on one thread or two
 * (events_threads; one when the part's DuckDB runs on two threads, for the reference
 * builds NX_LOD_SQL_L0, NX_LOD_SQL_LEVELS and NX_LOD_COPY_THEN_L0). */
static int events_body(struct nx_duck *d, struct nx_lod_slices *sl, const char *dir,
		       const char *scratch, const struct nx_pfiles *files, const struct nx_lod_bounds *bounds,
		       struct nx_lod_builds *builds, uint64_t *n, struct phase_clock *clk,
		       struct nx_err *err)
{
	long long threads = 2;
	int rc = events_threads(&threads, err);

	if (!rc)
		rc = nx_duck_exec(d, schema_sql, err);
	clock_lap(clk, "open");
	if (!rc && threads == 2 && !sql_l0() && !copy_then_l0())
		return events_two(d, dir, scratch, files, bounds, builds, n, clk, err);
	for (int s = 0; s < NX_LOD_NSRC && !rc; s++) {
		const struct nx_ptable *t = nx__pfiles_find(files, nx__lod_sources[s].table);

		if (t && !t->members && t->nfiles && !(rc = builds_check(builds, err)))
			rc = build_source(d, sl, dir, scratch, s, t, bounds, n, clk, NULL, NULL, NULL,
					  err);
	}
	return rc;
}

/* The rest: the event tables written after the events part ran (the ingest's zero-row
 * files), the per-line summary, the counters (but their rows of tl.tracks and tl.meta,
 * when the events part built them, early), the stamp. */
static int rest_body(struct nx_duck *d, struct nx_lod_slices *sl, const char *dir,
		     const char *scratch, const struct nx_pfiles *files, const struct nx_lod_stamp *stamp,
		     const struct nx_lod_bounds *bounds, const struct nx_lod_early *early,
		     uint64_t *n, struct phase_clock *clk, struct nx_err *err)
{
	bool early_done = early && early->done;
	int rc = 0;

	for (int s = 0; s < NX_LOD_NSRC && !rc; s++) {
		const struct nx_ptable *t = nx__pfiles_find(files, nx__lod_sources[s].table);
		char *q = nx_xasprintf("SELECT count(*) FROM tl.meta WHERE src = %d", s);
		int64_t built = 0;

		if (cached_source(files, s))
			rc = nx_duck_query_i64(d, q, &built, err);
		free(q);
		if (!rc && cached_source(files, s) && !built)
			rc = build_source(d, sl, dir, scratch, s, t, bounds, n, clk, NULL, NULL, NULL,
					  err);
		else if (!rc && cached_source(files, s) && s < 2 && !early_done) /* the summary's */
			rc = create_view(d, sl, dir, t, NULL, false, err);
	}
	if (!rc && cached_source(files, 0) && !early_done) {
		rc = build_lines(d, sl, dir, files, false, err);
		clock_lap(clk, "tl.lines");
	}
	if (!rc && !early_done)
		rc = build_counters(d, sl, dir, files, bounds, clk, false, NULL, err);
	else if (!rc && early->tail)
		rc = nx_duck_exec(d, early->tail, err);
	return rc ? rc : write_stamp(d, stamp, err);
}

/* The early rest (struct nx_lod_early): once its gate opens, tl.lines, tl.ctr and
 * tl.ctr_lod on a connection of its own to the events part's database (d), over the
 * tables as they are then, through temporary views and slices of its own (the events
 * part's threads have views of the same names); only when Instruction is there, so that
 * the rest would find what it found (the tables written after, zero-row files, add no
 * rows). Not in a transaction: the levels append on connections of their own. Its
 * failure fails the events part, as a failure of the rest failed the rest. */
struct early_job {
	struct nx_duck *d;
	const char *dir, *scratch;
	const struct nx_lod_bounds *bounds;
	struct nx_lod_builds *builds;
	struct nx_lod_early *early;
	pthread_t thread;
	int rc;
	struct nx_err err;
};

static int early_body(struct early_job *j, struct nx_duck *c, struct nx_err *err)
{
	char *scratch = nx_path_join(j->scratch, "early");
	struct nx_pfiles files = { 0 };
	struct nx_lod_slices sl;
	char *tail = NULL;
	int rc;

	nx__lod_slices_init(&sl, scratch, j->bounds->slice_groups);
	if (!(rc = nx_mkdirs(scratch, err)) && !(rc = nx__pfiles_scan_plain(j->dir, &files, err)) &&
	    cached_source(&files, 0) && !(rc = builds_check(j->builds, err))) {
		for (int s = 0; s < 2 && !rc; s++)
			if (cached_source(&files, s))
				rc = create_view(c, &sl, j->dir,
						 nx__pfiles_find(&files, nx__lod_sources[s].table),
						 NULL, true, err);
		if (!rc)
			rc = build_lines(c, &sl, j->dir, &files, true, err);
		if (!rc && !(rc = builds_check(j->builds, err)))
			rc = build_counters(c, &sl, j->dir, &files, j->bounds,
					    &(struct phase_clock){ 0 }, true, &tail, err);
		if (!rc) {
			j->early->done = true;
			j->early->tail = tail;
			tail = NULL;
		}
	}
	free(tail);
	nx__lod_slices_release(&sl);
	nx__pfiles_release(&files);
	nx_remove_tree(scratch, &(struct nx_err){ 0 });
	free(scratch);
	return rc;
}

static void *early_run(void *arg)
{
	struct early_job *j = arg;
	struct nx_lod_build_ref ref = { 0 };
	struct nx_duck *c = NULL;

	if (!nx__lod_early_wait(j->early))
		return NULL;
	if (!(j->rc = nx_duck_open_sibling(j->d, &c, &j->err)) &&
	    !(j->rc = builds_enter(j->builds, &ref, c, &j->err)))
		j->rc = early_body(j, c, &j->err);
	if (j->rc)
		nx_err_wrap(&j->err, "the per-line summary and the counters");
	builds_leave(j->builds, &ref);
	nx_duck_close(c);
	return NULL;
}

/* One part of the build, in a database of its own: the events part when stamp is NULL,
 * else the rest; *events (may be NULL) gets (events part) or adds (rest) its events. */
static int build_part(const char *dir, const struct nx_pfiles *files,
		      const struct nx_lod_stamp *stamp, const char *out_dir,
		      const struct nx_lod_bounds *bounds, struct nx_lod_builds *builds,
		      struct nx_lod_early *early, uint64_t *events,
		      struct nx_lod_phases *phases, struct nx_err *err)
{
	struct phase_clock clk = { .ph = phases };
	struct nx_lod_build_ref ref = { 0 };
	char *scratch = nx_path_join(out_dir, ".scratch");
	struct nx_lod_slices sl;
	struct nx_duck *d = NULL;
	struct early_job ej = { .dir = dir, .scratch = scratch, .bounds = bounds,
				.builds = builds, .early = stamp ? NULL : early };
	bool ej_started = false;
	uint64_t n = 0;
	int rc;

	nx__lod_slices_init(&sl, scratch, bounds->slice_groups);
	if (phases && !stamp)
		phases->n = 0;
	if (phases)
		clock_read(&clk, &clk.cpu, &clk.wall);
	/* the pages DuckDB frees go back to the system while the part runs, not a second
	 * later: they were up to 90 MiB beside the pool (docs/memory.md) */
	nx_duck_alloc_purger_start(bounds->purge_ms);
	/* the events part on one thread when its copies may fold L0 (events_pass) */
	rc = part_open(&d, !stamp && !sql_l0() && !copy_then_l0() ? 1 : 2, dir, out_dir, scratch,
		       bounds, builds, &ref, err);
	/* the early rest beside the events part, once the gate opens */
	if (!rc && ej.early) {
		ej.d = d;
		ej_started = !pthread_create(&ej.thread, NULL, early_run, &ej);
	}
	if (!rc && !stamp)
		rc = events_body(d, &sl, dir, scratch, files, bounds, builds, &n, &clk, err);
	else if (!rc)
		rc = rest_body(d, &sl, dir, scratch, files, stamp, bounds, early, &n, &clk, err);
	if (ej_started)
		pthread_join(ej.thread, NULL);
	if (!rc && ej.rc) {
		rc = ej.rc;
		*err = ej.err;
	}
	rc = part_close(d, rc, scratch, builds, &ref, &clk,
			stamp ? "checkpoint" : "checkpoint of the events", err);
	nx_duck_alloc_purger_stop(bounds->purge_ms);
	nx__lod_slices_release(&sl);
	if (rc)
		nx_err_wrap(err, "cannot build the timeline summary of %s", dir);
	else if (events)
		*events = (stamp ? *events : 0) + n;
	free(scratch);
	return rc;
}

int nx__lod_build_events(const char *dir, const struct nx_pfiles *files, const char *out_dir,
			 const struct nx_lod_bounds *bounds, struct nx_lod_builds *builds,
			 struct nx_lod_early *early, uint64_t *events,
			 struct nx_lod_phases *phases, struct nx_err *err)
{
	return build_part(dir, files, NULL, out_dir, bounds, builds, early, events, phases, err);
}

int nx__lod_build_rest(const char *dir, const struct nx_pfiles *files,
		       const struct nx_lod_stamp *stamp, const char *out_dir,
		       const struct nx_lod_bounds *bounds, struct nx_lod_builds *builds,
		       const struct nx_lod_early *early, uint64_t *events,
		       struct nx_lod_phases *phases, struct nx_err *err)
{
	/* build_part reads early only when stamp is NULL */
	return build_part(dir, files, stamp, out_dir, bounds, builds, (struct nx_lod_early *)early,
			  events, phases, err);
}

int nx__lod_build(const char *dir, const struct nx_pfiles *files,
		  const struct nx_lod_stamp *stamp, const char *out_dir,
		  const struct nx_lod_bounds *bounds, struct nx_lod_builds *builds,
		  uint64_t *events, struct nx_lod_phases *phases, struct nx_err *err)
{
	int rc = nx__lod_build_events(dir, files, out_dir, bounds, builds, NULL, events, phases,
				      err);

	return rc ? rc : nx__lod_build_rest(dir, files, stamp, out_dir, bounds, builds, NULL,
					    events, phases, err);
}
