/* SPDX-License-Identifier: MIT
 * lod.h: the timeline's cache of one profile version (docs/ui.md "Level of detail"): a
 * DuckDB database file, timeline.duckdb, built by `view` into the profile before it is
 * published (lod_carried.c), or else once per profile version under
 * <data>/.cache/timeline/ by the server, and then only read, through its own sandboxed
 * database, after its stamp says it is this version's and whole (lod_cache.c). It holds
 * tl.stamp and,
 * per event source (Instruction, DmaPacketAggregated, DmaPacket, SystemProfileEvents):
 *   tl.ev<s>   the events reduced to what the timeline draws (core, track, id, start_ts,
 *              end_ts, label), in start order, so a window reads one or two row groups;
 *              but for the framework's, track and label are ENUM types of tl
 *              (tl.ev<s>_track, tl.ev<s>_label, their values sorted) unless a column has
 *              more than 65535 distinct values, so readers cast them to VARCHAR;
 *              framework events (not their metadata rows) on depth lanes: a nested or
 *              overlapping event's track is its stream's name plus " / depth N"
 *              (lod_lanes.c), and tl.ev3 also keeps the stream and the lane. With
 *              NX_LOD_EVENTS_IN_PLACE=1 only a table not in start order and the
 *              framework events are copied: the events of the others are read from
 *              the profile's own files (nx__lod_events_sql), by the build and by the
 *              server's windows (a cache built so needs a server that knows it; slower
 *              windows: docs/memory.md, "Events read in place");
 *   tl.lod<s>  the pyramid: per track, power-of-two time bucket and level, the event
 *              count, busy time, first start, last end and the longest event; its
 *              track and label of tl.ev<s>'s types (the ENUMs where it has them, so
 *              readers cast them to VARCHAR; VARCHAR for a source read in place);
 * and tl.ctr (the counter and semaphore values, by time: per series and time the last
 * of its samples, NX_LOD_LAST_TIED_SQL, their least and greatest, NULL where that is
 * the last, and their count, NULL where it is 1) with its
 * pyramid tl.ctr_lod (per series, bucket and level: least, greatest and last value),
 * tl.tracks (the rows
 * of the timeline with their counts and spans), tl.meta (per source: rows, span, levels) and,
 * when Instruction has source locations, tl.lines (per source line: instruction count,
 * summed duration, first start, last end, and the DMA transfers the line triggered:
 * count, bytes, summed duration, first start, last end; lines_sql.c). */
#ifndef NX_SERVER_LOD_H
#define NX_SERVER_LOD_H

#include "common/compat.h"
#include "common/err.h"
#include "server/lod_carried.h"
#include "server/profile_db.h"
#include "server/profile_files.h"

#include <pthread.h>
#include <stdbool.h>
#include <sys/stat.h>

/* The bound of the timeline's times, |t| <= 2^61 ns (73 years): the window arithmetic
 * of the endpoints (bounds snapped to a bucket, the counters' look-back one window
 * width before t0) and of the build (spans, slices) then stays inside int64. The cache
 * leaves out events with a time beyond it, and the endpoints refuse such windows. */
#define NX_TL_TIME_BOUND ((int64_t)1 << 61)
/* The condition on an event's times that keeps it (the cache's, and the profile's own
 * tables' when they serve without a cache). */
#define NX_TL_IN_BOUNDS_SQL                                                                  \
	"start_ts BETWEEN -2305843009213693952 AND 2305843009213693952 AND "                 \
	"end_ts BETWEEN -2305843009213693952 AND 2305843009213693952"

#define NX_LOD_FILE "timeline.duckdb"
#define NX_LOD_NSRC 4
#define NX_LOD_SRC_FW 3 /* SystemProfileEvents in nx__lod_sources */
/* The deepest lane of a framework stream: deeper events share it. */
#define NX_LOD_MAX_LANE 63
/* The framework rows the timeline draws: timed, and not metadata (ph M, the events the
 * ingest writes with extra_attributes_json starting {"ph":"M"; they sit at time 0 or at
 * their file's start and are no events). */
#define NX_LOD_FW_DRAWN                                                                    \
	NX_TL_IN_BOUNDS_SQL " AND NOT starts_with(coalesce(extra_attributes_json, ''), "    \
	"'{\"ph\":\"M\"')"

/* The event sources, in the order of nx_lod.src[] (s of tl.ev<s> and tl.lod<s>). */
struct nx_lod_source {
	const char *table;
	const char *kind;  /* "instruction", "dma" or "framework" */
	const char *track; /* SQL of the track name */
	const char *label; /* SQL of the label */
};
extern const struct nx_lod_source nx__lod_sources[NX_LOD_NSRC];
struct nx_strbuf;
/* Appends the events of source s (not the framework's) as the timeline reads them from
 * the profile's own table: a parenthesized SELECT of the columns of tl.ev<s>, events
 * with times within the bound only; start_ts and end_ts are the table's, so a window's
 * condition on them prunes its row groups. */
void nx__lod_events_sql(struct nx_strbuf *sql, int s);

/* The value tracks (kind "counter"): one series per table and core, per semaphore. */
struct nx_lod_counter {
	const char *table;
	const char *series; /* SQL of the series name */
	const char *value;  /* SQL of the value */
};
extern const struct nx_lod_counter nx__lod_counters[];
extern const size_t nx__lod_ncounters;

/* The last value of a series' samples (or buckets) with times ts and values v, one rule
 * wherever it is chosen (the counters' pyramid in SQL, its levels in C, lod_levels.c,
 * and the server's reply, h_timeline_counters.c): the greatest (time, value) in DuckDB's
 * order of a struct, so of the samples at the latest time the greatest value, NULL above
 * NaN above every number, whatever order the rows come in (arg_max by the time alone
 * took any of the tied rows, so two builds of one profile differed). An SQL aggregate of
 * type STRUCT(ts, v): its .v is the value, its .ts the time. */
#define NX_LOD_LAST_SQL(ts, v) "max({'ts': " ts ", 'v': " v "})"
/* The same rule's value where no two rows of a series share their time (the buckets of
 * one level of the pyramid, and tl.ctr's rows): the time alone decides, and
 * arg_max_null (NULL values kept, as in the struct) costs a third of the struct's max
 * (docs/memory.md, "The counters' last value on tied times, and bursts below L0"). */
#define NX_LOD_LAST_DISTINCT_SQL(ts, v) "arg_max_null(" v ", " ts ")"
/* The same rule's value of samples that all share one time (a group of tl.ctr's build):
 * NULL when one is NULL, else the greatest (DuckDB's max orders NaN above every number),
 * as NX_LOD_LAST_SQL's .v gives on them, without building a struct per row. */
#define NX_LOD_LAST_TIED_SQL(v) "CASE WHEN count(" v ") < count(*) THEN NULL ELSE max(" v ") END"

/* The stamp of a cache (lod_cache.c): which profile version it was built from. */
#define NX_LOD_FORMAT 12 /* 12: the counters' bursts bounded where they are:
			  * the rows of a series' dense buckets in tl.ctr_burst,
			  * levels below L0 for them alone (src -2 in tl.meta);
			  * 11: tl.ctr one row per series and time (least, greatest
			  * and last of its samples, their count), so the server's
			  * windows over it take the last by the time alone;
			  * 10: the counters' last value on tied times the greatest
			  * (NX_LOD_LAST_SQL), not any of them, and their finest
			  * level lowered for bursts (at most 32 values per bucket
			  * below it);
			  * 9: the counters' finest level from the densest series;
			  * 8: one pyramid table per source, tl.lod<s>, its track and
			  * label of tl.ev<s>'s types; 7: tl.ev<s>'s track and label as
			  * ENUMs; 6: the counters' pyramid (tl.ctr_lod); 5: framework
			  * lanes, tracks with stream and lane, lines with DMA */
/* The cache `view` builds into a profile before publishing it (lod_carried.c): the
 * directory inside the profile, and the version its stamp names (the profile
 * directory's identity is not known before it is published; the cache moves with it). */
#define NX_LOD_CARRIED_DIR ".timeline"
#define NX_LOD_CARRIED_VERSION "carried"
struct nx_lod_stamp {
	int format;     /* NX_LOD_FORMAT */
	char *profile;  /* the profile's name */
	char *version;  /* its directory's identity: "<dev>-<inode>-<mtime>", or
			 * NX_LOD_CARRIED_VERSION for a cache inside the profile */
	char *tables;   /* a hash of its table files' names and sizes, in hex */
	uint64_t bytes; /* the size of timeline.duckdb (in the stamp file only) */
};
void nx__lod_stamp_release(struct nx_lod_stamp *s);
/* The stamp a cache of the profile name (tables files) must carry for version. */
void nx__lod_stamp_expect(const char *name, const char *version, const struct nx_pfiles *files,
			  struct nx_lod_stamp *s);
/* Writes dir/timeline.stamp for dir/timeline.duckdb (s->bytes gets its size), last. */
int nx__lod_stamp_write(const char *dir, struct nx_lod_stamp *s, struct nx_err *err);
/* Why the text of a stamp file does not match want (NULL: it does; then *bytes gets the
 * size it records). Caller frees. */
char *nx__lod_stamp_check(const char *text, const struct nx_lod_stamp *want, uint64_t *bytes);

struct nx_lod {
	char *dir;         /* the cache directory (resolved) */
	struct nx_pdb *db; /* timeline.duckdb attached read-only as tl, sandboxed to dir */
	dev_t dev;         /* timeline.duckdb as opened: changed later, the cache is damaged */
	ino_t ino;
	unsigned refs;     /* the profile's and its requests' (registry.h) */
	struct {
		bool present;   /* the source is in the cache (its row of tl.meta) */
		bool copied;    /* tl.ev<s> exists; else its events are read from the
				 * profile's table (nx__lod_events_sql, NX_LOD_EVENTS_IN_PLACE) */
		uint64_t n;     /* its rows */
		int lo, hi;     /* pyramid levels lo..hi (bucket 2^level ns); lo > hi: none */
	} src[NX_LOD_NSRC];
	bool counters; /* tl.ctr has rows */
	int ctr_lo, ctr_hi; /* the counters' pyramid levels (tl.ctr_lod); lo > hi: none */
	int ctr_burst_lo;   /* levels ctr_burst_lo..ctr_lo - 1 of tl.ctr_lod hold the bursts'
			     * cells (tl.ctr_burst's rows) alone; ctr_lo: none */
	bool carried;  /* the cache inside the profile (NX_LOD_CARRIED_DIR): never removed */
	bool lines;    /* tl.lines exists */
	uint64_t bytes; /* size of timeline.duckdb */
	double build_s; /* 0 when it was found in the cache */
};

/* The builds in progress in a server, so that a stopping server interrupts them rather
 * than waiting (their statement fails, the private build directory is removed). Each
 * build links a node on its own stack while its database is open. */
struct nx_duck;
struct nx_lod_build_ref {
	struct nx_duck *d;
	struct nx_lod_build_ref *next;
};
struct nx_lod_builds {
	pthread_mutex_t lock;
	bool stopping; /* no new build starts */
	struct nx_lod_build_ref *running;
};
void nx__lod_builds_init(struct nx_lod_builds *b);
/* Interrupts the running builds and refuses new ones. */
void nx__lod_builds_stop(struct nx_lod_builds *b);
void nx__lod_builds_release(struct nx_lod_builds *b);

/* Appends the files of t (in dir; dir NULL: t's files are paths) as a SQL list literal. */
struct nx_strbuf;
void nx__lod_file_list(struct nx_strbuf *sql, const char *dir, const struct nx_ptable *t);
/* Writes the depth lanes of the framework events of t (SystemProfileEvents in dir) to
 * csv_path as id,start_ts,lane lines, for the events off lane 0 (*laned of them). */
int nx__lod_lanes(const char *dir, const struct nx_ptable *t, const char *csv_path,
		  uint64_t *laned, struct nx_err *err);

/* The table files a build reads (lod_slices.c): a file of more than per row groups as
 * slices of per of them, written once into scratch and removed by release; per 0: every
 * file whole. */
struct nx_lod_slices {
	const char *scratch;
	uint32_t per;
	struct nx_ptable **t; /* the tables read so far, their files paths */
	size_t n, cap;
};
void nx__lod_slices_init(struct nx_lod_slices *sl, const char *scratch, uint32_t per);
void nx__lod_slices_release(struct nx_lod_slices *sl);
/* *out gets table t of the profile in dir as the build reads it: its files, paths of
 * slices or of the profile's files, in order (read with dir NULL). */
int nx__lod_sliced(struct nx_lod_slices *sl, const char *dir, const struct nx_ptable *t,
		   const struct nx_ptable **out, struct nx_err *err);

/* Appends the SELECT of the per-line summary (lines_sql.c): loc, n, dur, t0, t1, dma_n,
 * dma_bytes, dma_ns, dma_t0, dma_t1, over the tables Instruction and, with dma, Flow and
 * DmaPacketAggregated (the DMA columns are 0 and NULL without); with win ({t0, t1}) over
 * the events overlapping that window, durations clipped to it. */
void nx__lines_sql(struct nx_strbuf *sql, bool dma, const int64_t *win);

/* What bounds a build's memory: DuckDB's memory_limit, and the input rows of each of
 * the pyramid's grouping queries (a level is built in time slices of about that many). */
struct nx_lod_bounds {
	const char *memory_limit;
	bool memory_given; /* memory_limit is NX_LOD_MEMORY_LIMIT's */
	int64_t chunk_rows;
	uint32_t slice_groups; /* a table file of more row groups is read in slices of them */
	long purge_ms; /* DuckDB's allocator purged this often during a build; 0: never */
};
/* The bounds of every build, view's and the server's alike (lod_bounds.c; the peaks they
 * give are in docs/memory.md, "The timeline cache"): NX_LOD_MEMORY for DuckDB and slices
 * of NX_LOD_CHUNK_ROWS rows. NX_LOD_MEMORY_LIMIT and NX_LOD_CHUNK_ROWS in the environment
 * override them (a usage error when the value is not one). */
#define NX_LOD_MEMORY "128MB"
#define NX_LOD_CHUNK_ROWS 500000
#define NX_LOD_CHUNK_ROWS_MIN 10000
#define NX_LOD_CHUNK_ROWS_MAX 100000000
/* Row groups per slice of a large table file (lod_slices.c): 64 of 32768 rows, as the
 * json export's; NX_LOD_SLICE_GROUPS overrides it, 0 reading every file whole (the
 * build before slices, for a before/after). */
#define NX_LOD_SLICE_GROUPS 64
#define NX_LOD_SLICE_GROUPS_MAX 1000000
/* How often, in ms, a build has DuckDB's allocator give back the pages it freed
 * (db/duck_alloc.h; docs/memory.md, "Where the build's memory is");
 * NX_LOD_PURGE_MS overrides it, 0 never purging (the build before, for a before/after). */
#define NX_LOD_PURGE_MS 100
#define NX_LOD_PURGE_MS_MAX 60000
int nx__lod_bounds(struct nx_lod_bounds *b, struct nx_err *err);
/* The least l with 2^l >= x (at most 62), and a / b rounded down. */
int nx__lod_ceil_log2(double x);
int64_t nx__lod_floor_div(int64_t a, int64_t b);
/* Whether the event [s, e) of id takes the place of a bucket's representative [s0, e0)
 * of id0 (has0: the bucket has one): the longest wins, then the lowest id; of equals the
 * one there stays. Times are within +-2^61 ns (NX_TL_TIME_BOUND), so a duration fits.
 * The one rule of the fold, of the merge of L0's halves and of the levels above. */
static inline bool nx__lod_longer(int64_t s, int64_t e, int64_t id, bool has0, int64_t s0,
				  int64_t e0, int64_t id0)
{
	return !has0 || e - s > e0 - s0 || (e - s == e0 - s0 && id < id0);
}
/* The time slices a level of bucket 2^level is built in, from nin input rows with times
 * first..last, about chunk rows each: slice c holds the times [c * w, (c + 1) * w) for the
 * w returned, a power of two at least the level's bucket; INT64_MAX: one slice, all. */
int64_t nx__lod_slice_width(int level, int64_t first, int64_t last, int64_t nin,
			    int64_t chunk);
/* Builds the cache of the profile in dir (tables files) as out_dir/timeline.duckdb,
 * holding stamp as tl.stamp, with a private scratch folder in out_dir for DuckDB's
 * spills, within bounds; builds (may be NULL) is where it registers to be
 * interruptible; *events (may be NULL) gets the events it holds, *phases (may be NULL)
 * where its time went (lod_carried.h). */
int nx__lod_build(const char *dir, const struct nx_pfiles *files,
		  const struct nx_lod_stamp *stamp, const char *out_dir,
		  const struct nx_lod_bounds *bounds, struct nx_lod_builds *builds,
		  uint64_t *events, struct nx_lod_phases *phases, struct nx_err *err);
/* nx__lod_build in two parts, each with its own database on out_dir/timeline.duckdb:
 * the events part (tl.ev<s>, their pyramids, rows of tl.tracks and tl.meta), which reads
 * only the event tables (files needs only those), then the rest (the events of a source
 * whose table came after the events part, tl.lines, the counters tl.ctr and tl.ctr_lod,
 * tl.stamp), which reads Instruction, Flow, DmaPacketAggregated and the counter tables;
 * `view` runs the first beside its derive stage (lod_carried.h). *events (may be NULL)
 * gets the events of the first, and the second adds its own. Failed, either leaves
 * out_dir/timeline.duckdb incomplete: the caller removes it. */
/* What `view`'s events part builds of the rest beside it (lod_early.c has the gate): once
 * the gate opens (the ingest has written every table but its zero-row files, whose tables
 * add no rows), a thread of the part builds tl.lines, tl.ctr and tl.ctr_lod on a
 * connection of its own, in one transaction, so that they no longer run after the events
 * part on one core while the other idles; the counters' rows of tl.tracks and tl.meta
 * are left in tail, for the rest to write in their place (after the late sources, as
 * before: the same rows at the same row ids). done: committed (else, a failure or a
 * closed gate, nothing was written and the rest builds them all, as before). */
struct nx_lod_early {
	pthread_mutex_t lock;
	pthread_cond_t cond;
	int gate;   /* 0: closed; 1: open; -1: given up (the ingest failed) */
	bool done;  /* tl.lines, tl.ctr and tl.ctr_lod committed */
	char *tail; /* the counters' rows of tl.tracks and tl.meta (SQL; NULL: none) */
};
void nx__lod_early_init(struct nx_lod_early *e);
void nx__lod_early_release(struct nx_lod_early *e);
/* Opens the gate (go) or gives up (!go); only the first call counts. */
void nx__lod_early_open(struct nx_lod_early *e, bool go);
/* Waits for the gate: true when it opened. */
bool nx__lod_early_wait(struct nx_lod_early *e);
/* early (may be NULL: none) is built beside the events part, then used by the rest. */
int nx__lod_build_events(const char *dir, const struct nx_pfiles *files, const char *out_dir,
			 const struct nx_lod_bounds *bounds, struct nx_lod_builds *builds,
			 struct nx_lod_early *early, uint64_t *events,
			 struct nx_lod_phases *phases, struct nx_err *err);
int nx__lod_build_rest(const char *dir, const struct nx_pfiles *files,
		       const struct nx_lod_stamp *stamp, const char *out_dir,
		       const struct nx_lod_bounds *bounds, struct nx_lod_builds *builds,
		       const struct nx_lod_early *early, uint64_t *events,
		       struct nx_lod_phases *phases, struct nx_err *err);

/* The cache of a profile version (its directory's identity st): the one the ingest
 * left in the profile (NX_LOD_CARRIED_DIR) when carried and it is this profile's and
 * whole; else the one under data_real, built first when absent, and built again when
 * the one found is not this version's or not whole (*why then says why a cache was not
 * used; caller frees). Safe against other processes doing the same: a build goes to a
 * private directory renamed into place. */
int nx__lod_open(const char *data_real, const char *name, const char *dir,
		 const struct stat *st, const struct nx_pfiles *files, bool carried,
		 struct nx_lod_builds *builds, struct nx_lod **out, char **why,
		 struct nx_err *err);
void nx__lod_free(struct nx_lod *lod);

/* Whether the cache was damaged while served, after a query on it failed with qerr
 * (may be NULL): its file removed, replaced or of another size, or DuckDB's I/O error
 * (a block that does not match its checksum). *why says how (caller frees). */
bool nx__lod_damaged(const struct nx_lod *lod, const struct nx_err *qerr, char **why);
/* Removes the cache's directory (a damaged cache), so the next open builds it again;
 * a cache inside the profile is left alone (the server never writes a profile). */
void nx__lod_discard(const struct nx_lod *lod);

/* When a server starts: removes below data_real/.cache/timeline the private build
 * directories of processes of this host that are gone, and the caches of profiles that
 * global_dir no longer holds; never a live process's directory or an existing
 * profile's cache. One line per removal is appended to log. */
struct nx_strbuf;
void nx__lod_clean(const char *data_real, const char *global_dir, struct nx_strbuf *log);

#endif
