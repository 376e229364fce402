/* SPDX-License-Identifier: MIT
 * lod_carried.c: builds the timeline cache into a profile's temporary directory before
 * the ingest publishes it (lod_carried.h). The cache is the same as a server builds
 * (lod_build.c), within the same bounds (lod_bounds.c), in NX_LOD_CARRIED_DIR with its
 * stamp file written last; its stamp's version is NX_LOD_CARRIED_VERSION, for the
 * profile directory's identity is not known yet and the cache moves with the directory,
 * and its hash of the table files is the one a server computes over the published
 * profile, so a server uses it only while the tables are the ones it was built from
 * (lod_cache.c). DuckDB spills into the cache's scratch folder. `view` builds it in two
 * parts: the events and their pyramids on a thread of their own while its derive stage
 * runs, with the per-line summary and the counters beside them once the ingest waits for
 * them (its tables written: struct nx_lod_early), the rest and the stamp (hashed over the
 * tables as published) once every table is written. */
#include "common/compat.h"
#include "server/lod_carried.h"
#include "server/lod.h"
#include "server/profile_files.h"
#include "common/fsutil.h"
#include "common/xalloc.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/statvfs.h>

struct nx_lod_carried_job {
	char *dir, *name, *out;
	pthread_t thread;
	bool running; /* the thread was started and not joined yet */
	struct nx_lod_builds builds; /* so that abort interrupts the first part */
	struct nx_lod_early early;   /* the lines and counters beside it */
	struct nx_lod_phases phases;
	uint64_t events;
	int rc;             /* the first part's */
	struct nx_err err;
};

/* The directory the cache is built in, refused when it exists (not ours). */
static int out_prepare(const char *out, struct nx_err *err)
{
	if (nx_is_dir(out))
		return nx_errf(err, -EEXIST, "'%s' exists already", out);
	return nx_mkdirs(out, err);
}

/* The rest of the build and the stamp, over the tables as they are now; the first part
 * (up to the events, and what early says it built beside them) done already when
 * events_done. */
static int build_rest(const char *dir, const char *name, const char *out, bool events_done,
		      const struct nx_lod_early *early, uint64_t *events,
		      struct nx_lod_phases *phases, struct nx_err *err)
{
	struct nx_lod_stamp stamp = { 0 };
	struct nx_pfiles files = { 0 };
	struct nx_lod_bounds bounds;
	int rc;

	rc = nx__lod_bounds(&bounds, err);
	if (!rc)
		rc = nx__pfiles_scan_plain(dir, &files, err);
	if (!rc && !events_done)
		rc = out_prepare(out, err);
	if (rc)
		goto out;
	nx__lod_stamp_expect(name, NX_LOD_CARRIED_VERSION, &files, &stamp);
	if (!events_done)
		rc = nx__lod_build_events(dir, &files, out, &bounds, NULL, NULL, events, phases,
					  err);
	if (!rc)
		rc = nx__lod_build_rest(dir, &files, &stamp, out, &bounds, NULL, early, events,
					phases, err);
	if (!rc)
		rc = nx__lod_stamp_write(out, &stamp, err);
out:
	nx__lod_stamp_release(&stamp);
	nx__pfiles_release(&files);
	return rc;
}

static void remove_out(const char *out)
{
	struct nx_err ignored = { 0 };

	nx_remove_tree(out, &ignored);
}

int nx_lod_build_carried(const char *dir, const char *name, uint64_t *events,
			 struct nx_lod_phases *phases, struct nx_err *err)
{
	char *out = nx_path_join(dir, NX_LOD_CARRIED_DIR);
	bool ours = !nx_is_dir(out);
	int rc;

	*events = 0;
	rc = build_rest(dir, name, out, false, NULL, events, phases, err);
	if (rc && ours)
		remove_out(out);
	free(out);
	return rc;
}

/* The first part: the events and their pyramids, in a smaller buffer pool than the
 * build's (unless NX_LOD_MEMORY_LIMIT sets both), since the ingest's database is open
 * beside it. */
static void *events_part(void *arg)
{
	struct nx_lod_carried_job *job = arg;
	struct nx_pfiles files = { 0 };
	struct nx_lod_bounds bounds;

	job->rc = nx__lod_bounds(&bounds, &job->err);
	if (!job->rc && !bounds.memory_given)
		bounds.memory_limit = NX_LOD_CARRIED_OVERLAP_MEMORY;
	if (!job->rc)
		job->rc = nx__pfiles_scan_plain(job->dir, &files, &job->err);
	if (!job->rc)
		job->rc = nx__lod_build_events(job->dir, &files, job->out, &bounds, &job->builds,
					       &job->early, &job->events, &job->phases, &job->err);
	nx__pfiles_release(&files);
	return NULL;
}

/* Whether dir's file system has room for the cache beside what the ingest still writes:
 * at least twice the bytes of dir's tables so far, and 64 MB, free. The cache must never
 * take space the ingest needs (a cache that does not fit costs a warning, not the
 * profile), so without that room it is built at the end, when the ingest is done. */
static bool room_to_overlap(const char *dir)
{
	struct nx_pfiles files = { 0 };
	struct nx_err ignored = { 0 };
	struct statvfs vfs;
	uint64_t bytes = 0;

	if (statvfs(dir, &vfs) || nx__pfiles_scan_plain(dir, &files, &ignored))
		return false;
	for (size_t i = 0; i < files.n; i++)
		bytes += files.t[i].bytes;
	nx__pfiles_release(&files);
	return (uint64_t)vfs.f_bavail * vfs.f_frsize >= 2 * bytes + ((uint64_t)64 << 20);
}

struct nx_lod_carried_job *nx_lod_carried_start(const char *dir, const char *name)
{
	struct nx_lod_carried_job *job;

	if (!room_to_overlap(dir))
		return NULL;
	job = nx_xcalloc(1, sizeof(*job));

	job->dir = nx_xstrdup(dir);
	job->name = nx_xstrdup(name);
	job->out = nx_path_join(dir, NX_LOD_CARRIED_DIR);
	nx__lod_builds_init(&job->builds);
	nx__lod_early_init(&job->early);
	job->rc = out_prepare(job->out, &job->err);
	if (job->rc)
		return job; /* finish reports it */
	if (pthread_create(&job->thread, NULL, events_part, job)) {
		remove_out(job->out);
		nx_lod_carried_abort(job);
		return NULL;
	}
	job->running = true;
	return job;
}

void nx_lod_carried_wait(struct nx_lod_carried_job *job)
{
	if (job)
		nx__lod_early_open(&job->early, true); /* every table it reads is written */
	if (job && job->running) {
		pthread_join(job->thread, NULL);
		job->running = false;
	}
}

static void job_free(struct nx_lod_carried_job *job)
{
	nx__lod_builds_release(&job->builds);
	nx__lod_early_release(&job->early);
	free(job->dir);
	free(job->name);
	free(job->out);
	free(job);
}

int nx_lod_carried_finish(struct nx_lod_carried_job *job, uint64_t *events,
			  struct nx_lod_phases *phases, struct nx_err *err)
{
	int rc;

	nx_lod_carried_wait(job);
	*events = job->events;
	if (job->rc) {
		rc = job->rc;
		*err = job->err;
		if (rc != -EEXIST) /* the directory was there before: not ours */
			remove_out(job->out);
		job_free(job);
		return rc;
	}
	if (phases)
		*phases = job->phases;
	rc = build_rest(job->dir, job->name, job->out, true, &job->early, events, phases, err);
	if (rc)
		remove_out(job->out);
	job_free(job);
	return rc;
}

void nx_lod_carried_abort(struct nx_lod_carried_job *job)
{
	if (!job)
		return;
	nx__lod_builds_stop(&job->builds);
	nx__lod_early_open(&job->early, false);
	nx_lod_carried_wait(job);
	if (job->rc != -EEXIST)
		remove_out(job->out);
	job_free(job);
}
