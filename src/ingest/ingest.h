/* SPDX-License-Identifier: MIT
 * ingest.h: `view`'s ingest stage. Reads a NEFF and an NTFF as streams, writes the raw
 * tables as parquet, runs the derive stage, and publishes the profile directory
 * <data-path>/profiles/global/<name>@latest atomically. */
#ifndef NX_INGEST_INGEST_H
#define NX_INGEST_INGEST_H

#include "common/compat.h"
#include "common/err.h"
#include "common/progress.h"

/* Work on a profile's temporary directory once all its tables are written, before it
 * is published as <name>@latest (`view` builds the timeline cache there, src/cli/):
 * fn(user, dir, name, &rows, err). A failure is reported as a warning and the profile
 * published without what fn failed to add (fn leaves nothing of it behind). Not run for
 * an output directory. */
struct nx_publish_hook {
	int (*fn)(void *user, const char *dir, const char *name, uint64_t *rows,
		  struct nx_err *err);
	void *user;
	const char *what; /* its progress line's name, e.g. "timeline_cache" */
	/* Optional, fn in two parts so that the first runs beside the derive stage:
	 * start(user, dir, name) once the raw tables are written returns a job running on
	 * a thread of its own (NULL: none; fn then runs at the end); wait(job) before the
	 * raw tables' files change (their parts are joined); finish(job, &rows, err) in
	 * fn's place, which frees job (a failure as fn's: a warning, nothing of it left);
	 * abort(job) when the ingest fails instead: stops it, removes what it made, frees
	 * job. */
	void *(*start)(void *user, const char *dir, const char *name);
	void (*wait)(void *job);
	int (*finish)(void *job, uint64_t *rows, struct nx_err *err);
	void (*abort)(void *job);
};

struct nx_ingest_opts {
	const char *neff_path;
	const char *ntff_path;
	const char *data_path;    /* root of the workspace (--data-path) */
	const char *display_name; /* profile name (--display-name) */
	const char *output_dir;   /* when set: publish exactly this directory instead */
	bool output_nested;       /* output_dir lies in another ingest's temporary directory */
	bool quiet;               /* kept for callers; the library never prints */
	const struct nx_progress *progress; /* per-table and per-batch events, or NULL */
	bool keep_staging;        /* tests: publish the internal tables under .staging/ */
	bool skip_buf_usage;      /* -F ignore-nc-buf-usage=true: no SBUF/PSUM usage tables */
	const struct nx_publish_hook *before_publish; /* or NULL */
};

/* Runs the whole ingest. On success *published (if non-NULL) receives the profile
 * directory (caller frees). On failure nothing is published and a previous profile of
 * the same name is left untouched. */
int nx_ingest(const struct nx_ingest_opts *o, char **published, struct nx_err *err);

/* The rule for display names, for messages and --help texts. */
#define NX_NAME_MAX 200
#define NX_NAME_RULE "letters, digits, '-', '_' and '.' (not first), at most 200 characters, " \
	"without '.tmp'"

/* Checks a display name against NX_NAME_RULE (usable as a directory name and URL
 * segment, reachable through the server). NX_EUSAGE with the reason otherwise. */
int nx_check_display_name(const char *name, struct nx_err *err);
/* <data-path>/profiles/global/<name>@latest, newly allocated. */
char *nx_profile_dir(const char *data_path, const char *name);

/* The hidden temporary sibling a profile is built in (or an upload's archive written
 * to): <data-path>/profiles/global/.<name>@latest.tmp-<pid>@<host>, newly allocated. */
char *nx_profile_tmp(const char *data_path, const char *name);
/* The directory of <data-path>/profiles/global where each publication records the
 * temporary it is about to make (an empty file of the temporary's name), so that the
 * next publication finds it should its process be killed. */
#define NX_TMP_RECORDS ".in-progress"
/* Records tmp (nx_profile_tmp), before it is made; one that cannot be recorded is left
 * to nx_remove_stale_tmp_all. */
void nx_profile_tmp_record(const char *data_path, const char *tmp);
/* Drops the record of tmp when tmp is gone (published, its previous version removed). */
void nx_profile_tmp_forget(const char *data_path, const char *tmp);
/* Removes the recorded temporaries of <data-path>/profiles/global whose process has
 * ended (an ingest or upload that was killed), then their records: on this host only,
 * never a live one, never anything but a temporary's name. What every publication
 * does: it reads the records of the publications in progress or ended since the last
 * one, not the profiles. */
void nx_remove_stale_tmp(const char *data_path);
/* The same over every entry of <data-path>/profiles/global, recorded or not (what a
 * server does when it starts). */
void nx_remove_stale_tmp_all(const char *data_path);

/* The lock of a data path's publications (<data-path>/profiles/global/.publish.lock,
 * flock): held while a profile is swapped in and while `upload` stores an archive. */
int nx_profiles_lock(const char *data_path, int *fd, struct nx_err *err);
void nx_profiles_unlock(int fd);

/* Where a profile is built and published: final (<data>/profiles/global/<name>@latest,
 * or output_dir as given), its parent, and the hidden temporary sibling it is built in
 * (nx_profile_tmp, or <parent>/.<output base>.tmp-<pid>). */
struct nx_publish_plan {
	char *final, *parent, *tmp;
	char *name;      /* the display name; NULL with an explicit output_dir */
	char *data_path; /* the data path (may be NULL with an output_dir): protected */
	bool nested;     /* output_dir is a fresh directory inside another ingest's
			  * temporary directory: no output rule, no marker */
};
/* Plans the paths only; nothing on disk changes. */
void nx_publish_plan(struct nx_publish_plan *p, const char *data_path, const char *name,
		     const char *output_dir);
/* Checks an output directory against the output rule (common/outpath.h), creates the
 * parent, removes the temporaries of killed ingests, and creates an empty tmp. */
int nx_publish_prepare(const struct nx_publish_plan *p, struct nx_err *err);
/* Runs hook (may be NULL) on p->tmp when p publishes a profile, reporting to progress
 * (may be NULL) a TABLE event named hook->what, or a warning when it failed: its finish
 * on job when job (hook->start's) is not NULL, else its fn. */
void nx_publish_hook_run(const struct nx_publish_hook *hook, const struct nx_publish_plan *p,
			 void *job, const struct nx_progress *progress);
/* Publishes tmp as final: a profile through nx_publish_profile, an output directory
 * checked again and marked (NX_OUT_MARKER), then swapped in. */
int nx_publish(const struct nx_publish_plan *p, struct nx_err *err);
void nx_publish_plan_release(struct nx_publish_plan *p);

/* Publishes tmp_dir as the profile <name> of data_path under the data path's lock,
 * carrying the previous version's source archive over (unless tmp_dir has its own). */
int nx_publish_profile(const char *data_path, const char *name, const char *tmp_dir,
		       struct nx_err *err);
/* Replaces `final_dir` by `tmp_dir` atomically (rename, or exchange when final_dir
 * exists, then removal of the old contents: a previous version that cannot be removed
 * is an error naming where it stays, though the new one is in place). */
int nx_publish_dir(const char *tmp_dir, const char *final_dir, struct nx_err *err);

/* Writes a zero-row <Table>.parquet, with the schema's columns and types, for every
 * stored schema table that has no file in dir yet (empty_tables.c), so a profile has
 * every table of the schema. Reports each one to progress (may be NULL). */
int nx_write_empty_tables(const char *dir, const struct nx_progress *progress,
			  struct nx_err *err);

#endif
