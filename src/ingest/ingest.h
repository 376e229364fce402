/* SPDX-License-Identifier: MIT
 * ingest.h: `view`'s ingest stage. Reads a NEFF and an NTFF as streams, writes the raw
 * tables as parquet, runs the derive stage, and publishes the profile directory
 * <data-path>/profiles/global/<name>@latest atomically. */
#ifndef NX_INGEST_INGEST_H
#define NX_INGEST_INGEST_H

#include "common/compat.h"
#include "common/err.h"
#include "common/progress.h"

struct nx_ingest_opts {
	const char *neff_path;
	const char *ntff_path;
	const char *data_path;    /* root of the workspace (--data-path) */
	const char *display_name; /* profile name (--display-name) */
	const char *output_dir;   /* when set: publish exactly this directory instead */
	bool quiet;               /* kept for callers; the library never prints */
	const struct nx_progress *progress; /* per-table and per-batch events, or NULL */
	bool keep_staging;        /* tests: publish the internal tables under .staging/ */
	bool skip_buf_usage;      /* -F ignore-nc-buf-usage=true: no SBUF/PSUM usage tables */
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

/* Removes <parent>/.<name>@latest.tmp-<pid> directories whose process is gone (left
 * by ingests that were killed). */
void nx_remove_stale_tmp(const char *parent, const char *name);

/* Where a profile is built and published: final (<data>/profiles/global/<name>@latest,
 * or output_dir as given), its parent, and the hidden temporary sibling it is built in
 * (.<name>@latest.tmp-<pid>, or <output_dir>.tmp-<pid>). */
struct nx_publish_plan {
	char *final, *parent, *tmp;
	char *name; /* the display name; NULL with an explicit output_dir */
};
/* Plans the paths only; nothing on disk changes. */
void nx_publish_plan(struct nx_publish_plan *p, const char *data_path, const char *name,
		     const char *output_dir);
/* Creates the parent, removes the temporaries of killed ingests of the same name, and
 * creates an empty tmp. */
int nx_publish_prepare(const struct nx_publish_plan *p, struct nx_err *err);
void nx_publish_plan_release(struct nx_publish_plan *p);

/* Replaces `final_dir` by `tmp_dir` atomically (rename, or exchange when final_dir
 * exists, then removal of the old contents). */
int nx_publish_dir(const char *tmp_dir, const char *final_dir, struct nx_err *err);

/* Writes a zero-row <Table>.parquet, with the schema's columns and types, for every
 * stored schema table that has no file in dir yet (empty_tables.c), so a profile has
 * every table of the schema. Reports each one to progress (may be NULL). */
int nx_write_empty_tables(const char *dir, const struct nx_progress *progress,
			  struct nx_err *err);

#endif
