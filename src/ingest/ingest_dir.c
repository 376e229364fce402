/* SPDX-License-Identifier: MIT
 * ingest_dir.c: directory mode's driver (see ingest_dir.h).
 *   1. find the traces and NEFF/NTFF pairs (walk.c),
 *   2. ingest each device pair with the device ingest into the temporary profile
 *      directory (the first one at its top level, further ones under devices/<name>/),
 *   3. stream every trace into SystemProfileEvents in one pass (db/parquet_write.h); when
 *      the traces turn out to mix clocks (Unix-epoch and boot or program time), move
 *      those on a clock of their own onto the epoch, say so in Warning rows, and read
 *      the traces again with those shifts (align_clocks),
 *   4. write SystemProfileMetadata, DeviceProfileList, Metadata, Warning, SchemaFields
 *      (DuckDB only opens to merge a device profile's warnings with ours),
 *      and a zero-row file for every other stored schema table,
 *   5. publish the directory in one rename; on any error remove it instead. */
#include "common/compat.h"
#include "ingest/ingest_dir.h"
#include "common/fsutil.h"
#include "common/strbuf.h"
#include "common/xalloc.h"
#include "db/parquet_write.h"
#include "ingest/context.h"
#include "ingest/ingest.h"
#include "trace/events.h"
#include "trace/src_small.h"
#include "trace/walk.h"

#include <dirent.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* A trace whose first timed event comes after this (1973-03-03) is taken to be on the
 * Unix epoch; one before it on a clock of its own (boot time, program start). */
#define EPOCH_MIN_NS 100000000000000000LL

struct run {
	const struct nx_trace_opts *o;
	char *tmp;
	struct nx_duck *d;
	struct nx_ingest_ctx ctx; /* only its warning list is used */
	struct nx_found found;
	struct nx_small_facts facts;
	bool device_warnings;     /* tmp/.device-Warning.parquet exists */
	size_t warn0;             /* warnings before the traces were read */
	int64_t *shifts;          /* per trace, after align_clocks: its shift (NULL: none) */
	int64_t dev_first, dev_last; /* the first device profile's time bounds (its clock) */
	/* SystemProfileEvents' source: read on a thread of its own while this thread
	 * writes what it has read (and, with device profiles, opens DuckDB meanwhile). */
	struct events {
		struct nx_tev_file *files;
		struct nx_tev_src s;
		struct nx_row_source src;
		struct nx_duck_ahead *ahead; /* running, not yet copied */
		bool init;                   /* s is to be released */
		double t0;
	} ev;
};

static void progress(const struct run *r, const char *table, uint64_t rows, double t0)
{
	struct nx_progress_event ev = { .kind = NX_PROGRESS_TABLE, .stage = "raw", .table = table,
					.rows = rows, .seconds = nx_now_s() - t0 };
	nx_progress_emit(r->o->progress, &ev);
}

static void note(const struct run *r, int kind, const char *fmt, ...) NX_PRINTF(3, 4);
static void note(const struct run *r, int kind, const char *fmt, ...)
{
	struct nx_strbuf msg = NX_STRBUF_INIT;
	va_list ap;

	va_start(ap, fmt);
	nx_strbuf_vaddf(&msg, fmt, ap);
	va_end(ap);
	struct nx_progress_event ev = { .kind = kind, .message = nx_strbuf_str(&msg) };
	nx_progress_emit(r->o->progress, &ev);
	nx_strbuf_release(&msg);
}

/* Row groups of SystemProfileEvents: its rows are wide (most of a trace's bytes are kept
 * as extra_attributes_json), and a row group that stays in the cache is written
 * faster (bench/trace.sh: 8192 rows against 32768 saved about a fifth of the ingest). */
#define EVENTS_ROW_GROUP 8192UL

/* Writes one small table from a source; a table without rows leaves no file. */
static int write_source(struct nx_row_source *src, const char *path, uint64_t *rows,
			struct nx_err *err)
{
	uint64_t n = 0;
	int rc = nx_pqw_write_source(src, path, &n, err);

	if (!rc && n == 0)
		remove(path);
	if (rows)
		*rows = n;
	return rc;
}

/* Moves the first device profile's files to the top level of the profile. */
static int lift_device(struct run *r, const char *sub, struct nx_err *err)
{
	DIR *dp = opendir(sub);
	struct dirent *de;
	int rc = 0;

	if (!dp)
		return nx_errf(err, -errno, "cannot read '%s': %s", sub, strerror(errno));
	while (!rc && (de = readdir(dp))) {
		if (de->d_name[0] == '.')
			continue;
		char *from = nx_path_join(sub, de->d_name);
		char *to = !strcmp(de->d_name, "Warning.parquet")
				   ? nx_path_join(r->tmp, ".device-Warning.parquet")
				   : nx_path_join(r->tmp, de->d_name);
		if (!strcmp(de->d_name, "Warning.parquet"))
			r->device_warnings = true;
		if (rename(from, to))
			rc = nx_errf(err, -errno, "cannot move '%s' to '%s': %s", from, to,
				     strerror(errno));
		free(from);
		free(to);
	}
	closedir(dp);
	if (!rc && rmdir(sub))
		rc = nx_errf(err, -errno, "cannot remove '%s': %s", sub, strerror(errno));
	return rc;
}

static int ingest_devices(struct run *r, struct nx_err *err)
{
	for (size_t i = 0; i < r->found.npairs; i++) {
		const struct nx_dev_pair *p = &r->found.pairs[i];
		struct nx_ingest_opts io = { 0 };
		char *sub = i ? nx_xasprintf("%s/devices/%s", r->tmp, p->name)
			      : nx_xasprintf("%s/.device", r->tmp);
		char *parent = nx_xasprintf("%s/devices", r->tmp);
		int rc = i ? nx_mkdirs(parent, err) : 0;

		free(parent);
		io.neff_path = p->neff;
		io.ntff_path = p->ntff;
		io.data_path = r->o->data_path;
		io.display_name = r->o->display_name;
		io.output_dir = sub;
		io.output_nested = true;
		io.quiet = true; /* its DONE line would name the temporary directory */
		if (!rc && (rc = nx_ingest(&io, NULL, err)))
			nx_err_wrap(err, "device profile '%s' + '%s'", p->neff, p->ntff);
		if (!rc && i == 0)
			rc = lift_device(r, sub, err);
		if (!rc && i > 0 && !r->o->output_dir)
			nx_ctx_warn(&r->ctx, "Info",
				    "device profile '%s' (one of %zu in the tree) is published as its "
				    "own profile '%s-%s'", p->name, r->found.npairs,
				    r->o->display_name, p->name);
		free(sub);
		if (rc)
			return rc;
	}
	for (size_t i = 0; i < r->found.nlone; i++) {
		char *names = nx_trace_neff_names(r->found.lone[i]);

		nx_ctx_warn(&r->ctx, "Missing Data",
			    "'%s' has no NEFF with the same hash in the tree (%s); it was not "
			    "ingested", r->found.lone[i], names);
		note(r, NX_PROGRESS_WARNING, "warning: '%s' has no NEFF of its hash in the tree "
		     "(%s); it was not ingested", r->found.lone[i], names);
		free(names);
	}
	return 0;
}

/* The second and later NEFF/NTFF pairs of a tree become sibling profiles
 * <name>-<pair>@latest, so the server serves them like any other profile. Runs after
 * the main profile is published; a failure leaves that pair under devices/ and says so. */
static void publish_extra_devices(struct run *r, const char *final)
{
	for (size_t i = 1; i < r->found.npairs; i++) {
		const struct nx_dev_pair *p = &r->found.pairs[i];
		char *name = nx_xasprintf("%s-%s", r->o->display_name, p->name);
		char *from = nx_xasprintf("%s/devices/%s", final, p->name);
		char *to = nx_profile_dir(r->o->data_path, name);
		struct nx_err e = { 0 };

		if (nx_check_display_name(name, &e) ||
		    nx_publish_profile(r->o->data_path, name, from, &e))
			note(r, NX_PROGRESS_WARNING, "device profile '%s' stays under '%s/devices': %s",
			     p->name, final, e.msg);
		else
			note(r, NX_PROGRESS_NOTE, "Wrote %s", to);
		free(name);
		free(from);
		free(to);
	}
	char *devices = nx_path_join(final, "devices");
	rmdir(devices); /* only when it is empty */
	free(devices);
}

/* Starts reading the traces into SystemProfileEvents' rows (see struct events). */
static int events_start(struct run *r, struct nx_err *err)
{
	struct events *ev = &r->ev;
	int rc;

	ev->t0 = nx_now_s();
	ev->files = nx_xcalloc(r->found.ntraces + 1, sizeof(*ev->files));
	for (size_t i = 0; i < r->found.ntraces; i++) {
		ev->files[i].path = r->found.traces[i];
		ev->files[i].instance = r->found.instances[i];
		ev->files[i].shift_ns = r->shifts ? r->shifts[i] : 0;
	}
	r->warn0 = r->ctx.nwarn;
	rc = nx_tev_init(&ev->s, ev->files, r->found.ntraces, nx_ctx_warning, &r->ctx, &ev->src,
			 err);
	ev->init = true;
	return rc ? rc : nx_duck_ahead_start(&ev->src, true, &ev->ahead, err);
}

static void events_release(struct events *ev)
{
	nx_duck_ahead_stop(ev->ahead);
	if (ev->init)
		nx_tev_release(&ev->s);
	free(ev->files);
	memset(ev, 0, sizeof(*ev));
}

/* After a first read of the traces: when some are on the Unix epoch and others on a
 * clock of their own, the latter are moved onto the epoch (by their
 * baseTimeNanoseconds when it puts them there, else so that they start with the
 * earliest epoch trace) and r->shifts says by how much; one Warning row per moved
 * trace. False when the clocks agree. */
static bool align_clocks(struct run *r)
{
	const struct events *ev = &r->ev;
	const struct nx_tev_file *ref = NULL;
	bool other = false;

	for (size_t i = 0; i < r->found.ntraces; i++) {
		const struct nx_tev_file *f = &ev->files[i];

		if (f->first_ns > f->last_ns)
			continue;
		if (f->first_ns < EPOCH_MIN_NS)
			other = true;
		else if (!ref || f->first_ns < ref->first_ns)
			ref = f;
	}
	if (!ref || !other)
		return false;
	r->shifts = nx_xcalloc(r->found.ntraces, sizeof(*r->shifts));
	for (size_t i = 0; i < r->found.ntraces; i++) {
		const struct nx_tev_file *f = &ev->files[i];
		bool base = f->has_base && f->first_ns + f->base_ns >= EPOCH_MIN_NS;

		if (f->first_ns > f->last_ns || f->first_ns >= EPOCH_MIN_NS)
			continue;
		r->shifts[i] = base ? f->base_ns : ref->first_ns - f->first_ns;
		if (base)
			nx_ctx_warn(&r->ctx, "Invalid Data",
				    "'%s': its timestamps are not on the Unix epoch (its first event at "
				    "%.6f s) unlike those of '%s'; its events were moved by %" PRId64
				    " ns, its baseTimeNanoseconds, onto the epoch", f->path,
				    (double)f->first_ns / 1e9, ref->path, r->shifts[i]);
		else
			nx_ctx_warn(&r->ctx, "Invalid Data",
				    "'%s': its timestamps are not on the Unix epoch (its first event at "
				    "%.6f s) unlike those of '%s', and it states no baseTimeNanoseconds; "
				    "its events were moved by %" PRId64 " ns so that both start "
				    "together: times across the two files are not comparable",
				    f->path, (double)f->first_ns / 1e9, ref->path, r->shifts[i]);
	}
	return true;
}

static int write_events(struct run *r, struct nx_err *err)
{
	struct events *ev = &r->ev;
	char *final = nx_path_join(r->tmp, "SystemProfileEvents.parquet");
	uint64_t rows = 0;
	int rc = nx_pqw_write_ahead(ev->ahead, final, EVENTS_ROW_GROUP, &rows, err);

	ev->ahead = NULL; /* stopped and freed by the write */
	if (!rc && !rows)
		remove(final);
	r->facts.first_ns = ev->s.first_ns;
	r->facts.last_ns = ev->s.last_ns;
	r->facts.hbm_capacity = ev->s.hbm_capacity;
	if (!rc && !r->shifts && rows && r->found.ntraces > 1) {
		struct nx_ingest_ctx *c = &r->ctx;
		size_t first = c->nwarn;

		if (align_clocks(r)) {
			/* the first read's own warnings come again with the second: keep those
			 * from before it and the clock warnings */
			size_t mine = c->nwarn - first;

			for (size_t i = r->warn0; i < first; i++) {
				free(c->warn[i].category);
				free(c->warn[i].message);
			}
			memmove(&c->warn[r->warn0], &c->warn[first], mine * sizeof(*c->warn));
			c->nwarn = r->warn0 + mine;
			events_release(ev);
			remove(final); /* ours: written by the first read */
			free(final);
			note(r, NX_PROGRESS_NOTE, "The traces mix clocks: reading them again, aligned");
			rc = events_start(r, err);
			return rc ? rc : write_events(r, err);
		}
	}
	if (!rc && rows)
		progress(r, "SystemProfileEvents", rows, ev->t0);
	events_release(ev);
	free(final);
	return rc;
}

static int write_small(struct run *r, const char *table, struct nx_err *err)
{
	struct nx_src_small s;
	struct nx_row_source src;
	char *path = nx_xasprintf("%s/%s.parquet", r->tmp, table);
	uint64_t rows = 0;
	double t0 = nx_now_s();
	int rc = nx_src_small_init(&s, table, &r->facts, &src, err);

	if (!rc)
		rc = write_source(&src, path, &rows, err);
	if (!rc)
		progress(r, table, rows, t0);
	free(path);
	return rc;
}

static int write_static(struct run *r, const char *table, const char *path, uint64_t *rows,
			struct nx_err *err)
{
	struct nx_src_static s;
	struct nx_row_source src;
	int rc = nx_src_static_init(&s, &r->ctx, table, &src, err);

	if (!rc)
		rc = write_source(&src, path, rows, err);
	nx_src_static_release(&s);
	return rc;
}

/* Our warnings, merged with the device ingest's when there are both. */
static int write_warnings(struct run *r, struct nx_err *err)
{
	char *mine = nx_path_join(r->tmp, ".trace-Warning.parquet");
	char *dev = nx_path_join(r->tmp, ".device-Warning.parquet");
	char *final = nx_path_join(r->tmp, "Warning.parquet");
	struct nx_strbuf sql = NX_STRBUF_INIT;
	uint64_t rows = 0, n = 0;
	double t0 = nx_now_s();
	int rc = write_static(r, "Warning", r->device_warnings ? mine : final, &rows, err);

	if (!rc && r->device_warnings) {
		if (rows == 0) {
			if (rename(dev, final))
				rc = nx_errf(err, -errno, "cannot rename '%s': %s", dev, strerror(errno));
			rows = 0;
		} else {
			nx_strbuf_addstr(&sql, "SELECT * FROM read_parquet([");
			nx_sql_quote(&sql, dev);
			nx_strbuf_addch(&sql, ',');
			nx_sql_quote(&sql, mine);
			nx_strbuf_addstr(&sql, "])");
			rc = nx_duck_copy_query(r->d, sql.buf, final, &n, err);
			rows = n;
		}
		remove(mine);
		remove(dev);
	}
	if (!rc)
		progress(r, "Warning", rows, t0);
	nx_strbuf_release(&sql);
	free(mine);
	free(dev);
	free(final);
	return rc;
}

/* A device profile's clock (its ticks) and the traces' (the epoch, or boot time) need
 * not meet: when their spans lie apart by more than a hundred times the longer one,
 * a Warning says so (the web UI then shows them one at a time). */
static void device_clock(struct run *r)
{
	int64_t f0 = r->facts.first_ns, f1 = r->facts.last_ns;
	int64_t d0 = r->dev_first, d1 = r->dev_last;
	double gap, span;

	if (f0 > f1 || d0 > d1)
		return;
	gap = f0 > d1 ? (double)f0 - (double)d1 : d0 > f1 ? (double)d0 - (double)f1 : 0;
	span = fmax((double)f1 - (double)f0, (double)d1 - (double)d0);
	if (gap > 100 * fmax(span, 1))
		nx_ctx_warn(&r->ctx, "Invalid Data",
			    "the device profile '%s' (events from %" PRId64 " to %" PRId64 " ns on "
			    "its own clock) and the framework traces (from %" PRId64 " to %" PRId64
			    " ns%s) are on clocks that do not meet; their times cannot be compared",
			    r->found.pairs[0].name, d0, d1, f0, f1,
			    f0 >= EPOCH_MIN_NS ? ", Unix epoch" : "");
}

static int write_rest(struct run *r, bool device, struct nx_err *err)
{
	int rc;

	if (r->found.ntraces && (rc = write_events(r, err)))
		return rc;
	if (device && r->found.ntraces)
		device_clock(r);
	if (r->found.ntraces && (rc = write_small(r, "SystemProfileMetadata", err)))
		return rc;
	if (device && (rc = write_small(r, "DeviceProfileList", err)))
		return rc;
	if (!device && (rc = write_small(r, "Metadata", err)))
		return rc;
	if ((rc = write_warnings(r, err)))
		return rc;
	if (!device) {
		char *path = nx_path_join(r->tmp, "SchemaFields.parquet");
		uint64_t rows = 0;
		double t0 = nx_now_s();
		rc = write_static(r, "SchemaFields", path, &rows, err);
		free(path);
		if (!rc)
			progress(r, "SchemaFields", rows, t0);
	}
	return rc;
}

static int write_tables(struct run *r, struct nx_err *err)
{
	bool device = r->found.npairs > 0;
	int rc;

	if ((rc = ingest_devices(r, err)))
		return rc;
	if (r->found.ntraces && (rc = events_start(r, err)))
		return rc;
	if (device) {
		/* DuckDB only reads the device profile's version and merges the warnings */
		if ((rc = nx_duck_open(&r->d, 2, NULL, err)))
			return rc;
		struct nx_strbuf sql = NX_STRBUF_INIT;
		char *meta = nx_path_join(r->tmp, "Metadata.parquet");
		nx_strbuf_addstr(&sql, "SELECT ntff_version FROM read_parquet(");
		nx_sql_quote(&sql, meta);
		nx_strbuf_addch(&sql, ')');
		rc = nx_duck_query_i64(r->d, sql.buf, &r->facts.ntff_version, err);
		for (int k = 0; k < 2 && !rc; k++) {
			nx_strbuf_reset(&sql);
			nx_strbuf_addf(&sql, "SELECT coalesce(%s, %d) FROM read_parquet(",
				       k ? "last_hw_timestamp" : "first_hw_timestamp", k ? 0 : 1);
			nx_sql_quote(&sql, meta);
			nx_strbuf_addch(&sql, ')');
			rc = nx_duck_query_i64(r->d, sql.buf, k ? &r->dev_last : &r->dev_first, err);
		}
		nx_strbuf_release(&sql);
		free(meta);
		if (rc)
			return rc;
	}
	if ((rc = write_rest(r, device, err)))
		return rc;
	/* then every table still missing, reported in schema order */
	return nx_write_empty_tables(r->tmp, r->o->progress, err);
}

static void release_warnings(struct nx_ingest_ctx *c)
{
	for (size_t i = 0; i < c->nwarn; i++) {
		free(c->warn[i].category);
		free(c->warn[i].message);
	}
	free(c->warn);
	c->warn = NULL;
	c->nwarn = c->warn_cap = 0;
}

int nx_trace_ingest_dir(const struct nx_trace_opts *o, char **published, struct nx_err *err)
{
	struct run r;
	struct nx_publish_plan pp = { 0 };
	int rc;

	memset(&r, 0, sizeof(r));
	r.o = o;
	r.facts.first_ns = 1;
	r.facts.display_name = o->display_name;
	r.facts.found = &r.found;
	if (!o->output_dir && (rc = nx_check_display_name(o->display_name, err)))
		goto out;
	if ((rc = nx_trace_walk(o->input, &r.found, err)))
		goto out;
	if (!r.found.ntraces && !r.found.npairs) {
		rc = nx_errf(err, NX_ENOTFOUND,
			     "no framework trace (trace.json[.gz], *.trace.json[.gz], "
			     "neuron_framework_trace_rank_<N>.json) and no NEFF/NTFF pair under '%s'",
			     o->input);
		if (r.found.nlone) {
			char *names = nx_trace_neff_names(r.found.lone[0]);

			nx_errf(err, NX_ENOTFOUND, "no NEFF/NTFF pair under '%s': the NTFF '%s' has "
				"no NEFF of its hash beside it or elsewhere in the tree (%s)%s",
				o->input, r.found.lone[0], names,
				r.found.nlone > 1 ? ", nor have the other NTFFs" : "");
			free(names);
		}
		goto out;
	}
	nx_publish_plan(&pp, o->data_path, o->display_name, o->output_dir);
	r.tmp = pp.tmp;
	if ((rc = nx_publish_prepare(&pp, err)))
		goto out;
	note(&r, NX_PROGRESS_NOTE, "Ingesting %zu framework trace(s) and %zu device profile(s) "
	     "from '%s' as '%s'", r.found.ntraces, r.found.npairs, o->input,
	     o->display_name ? o->display_name : pp.final);
	r.ctx.first_ns = 1;
	if ((rc = write_tables(&r, err)))
		goto out;
	nx_duck_close(r.d);
	r.d = NULL;
	nx_publish_hook_run(o->before_publish, &pp, NULL, o->progress);
	if ((rc = nx_publish(&pp, err)))
		goto out;
	note(&r, NX_PROGRESS_NOTE, "Wrote %s", pp.final);
	if (!o->output_dir)
		publish_extra_devices(&r, pp.final);
	if (published) {
		*published = pp.final;
		pp.final = NULL;
	}
out:
	if (rc && r.tmp) {
		struct nx_err ignored = { 0 };
		nx_remove_tree(r.tmp, &ignored);
	}
	events_release(&r.ev);
	free(r.shifts);
	nx_duck_close(r.d);
	release_warnings(&r.ctx);
	nx_found_release(&r.found);
	nx_publish_plan_release(&pp);
	return rc;
}
