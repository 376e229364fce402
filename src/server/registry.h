/* SPDX-License-Identifier: MIT
 * registry.h: the profiles of a data path, discovered on demand. Every lookup
 * stats <data>/profiles/global/<name>@latest; when the directory's identity
 * (device, inode, mtime, and the mtimes of the directories below it and of a fleet
 * run's members) differs from the cached one (a new profile, ingest renamed a fresh
 * directory into place, an entry was added), the entry is rebuilt and the old one is
 * freed once its last user lets go. Entries are reference counted because a
 * request may still be querying a profile that has just been replaced. */
#ifndef NX_SERVER_REGISTRY_H
#define NX_SERVER_REGISTRY_H

#include "common/compat.h"
#include "common/err.h"
#include "server/profile_db.h"
#include "server/profile_files.h"

#include <pthread.h>
#include <sys/types.h>
#include <time.h>

struct nx_lod;

struct nx_profile {
	char *name;
	char *dir; /* resolved directory */
	dev_t dev;
	ino_t ino;
	struct timespec mtime;
	struct nx_pfiles files;
	pthread_mutex_t open_lock; /* serializes the lazy database open */
	struct nx_pdb *db;         /* NULL until the first query */
	pthread_mutex_t lod_lock;  /* serializes the lazy timeline pyramid (lod.h) */
	struct nx_lod *lod;        /* NULL until the first timeline request (holds a ref) */
	char *lod_error;           /* why there is no pyramid (timeline_cache.c) */
	bool lod_no_carried;       /* the cache in the profile was damaged while served */
	double lod_failed_at;      /* when that build failed (monotonic s): retried later */
	pthread_mutex_t bounds_lock; /* guards bounds_json */
	char *bounds_json;         /* the reply of .../analysis?part=bounds, once made: the
				    * profile version never changes (the web UI's lists ask it) */
	unsigned refs;             /* guarded by the registry lock */
	bool stale;                /* replaced or gone: freed at refs == 0 */
};

struct nx_registry {
	char *data_real;  /* resolved data path */
	char *global_dir; /* <data>/profiles/global */
	unsigned threads;
	bool quiet; /* else damaged tables are reported on stderr when a profile is opened */
	pthread_mutex_t lock;
	struct nx_profile **v;
	size_t n, cap;
};

int nx__reg_init(struct nx_registry *r, const char *data_path, unsigned threads,
		 struct nx_err *err);
void nx__reg_release(struct nx_registry *r);

/* Looks a profile up (and opens its database when with_db). Errors: NX_EUSAGE for
 * an invalid name, NX_ENOTFOUND when absent, -EACCES when it resolves outside the
 * data path, NX_EDB when the database cannot be opened. Release with _put. */
int nx__reg_get(struct nx_registry *r, const char *name, bool with_db, struct nx_profile **out,
		struct nx_err *err);
void nx__reg_put(struct nx_registry *r, struct nx_profile *p);

/* Names of the profiles that exist now (finished ones only), sorted. */
int nx__reg_names(struct nx_registry *r, char ***names, size_t *n, struct nx_err *err);
void nx__reg_names_free(char **names, size_t n);

#endif
