/* SPDX-License-Identifier: MIT
 * registry.c: on-demand profile discovery with identity checks (see registry.h). */
#include "common/compat.h"
#include "server/registry.h"
#include "server/lod.h"
#include "server/paths.h"
#include "common/fsutil.h"
#include "common/xalloc.h"
#include "common/log.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define SUFFIX "@latest"

int nx__reg_init(struct nx_registry *r, const char *data_path, unsigned threads,
		 struct nx_err *err)
{
	memset(r, 0, sizeof(*r));
	pthread_mutex_init(&r->lock, NULL);
	r->data_real = realpath(data_path, NULL);
	if (!r->data_real || !nx_is_dir(r->data_real)) {
		int e = r->data_real ? ENOTDIR : errno;
		free(r->data_real);
		r->data_real = NULL;
		return nx_errf(err, -e, "data path '%s' is not a usable directory: %s", data_path,
			       strerror(e));
	}
	r->global_dir = nx_path_join(r->data_real, "profiles/global");
	r->threads = threads;
	return 0;
}

static void profile_free(struct nx_profile *p)
{
	nx__pdb_free(&p->db);
	nx__lod_free(p->lod); /* no request holds it any more: the profile is unused */
	free(p->lod_error);
	free(p->bounds_json);
	nx__pfiles_release(&p->files);
	pthread_mutex_destroy(&p->open_lock);
	pthread_mutex_destroy(&p->lod_lock);
	pthread_mutex_destroy(&p->bounds_lock);
	free(p->name);
	free(p->dir);
	free(p);
}

void nx__reg_release(struct nx_registry *r)
{
	for (size_t i = 0; i < r->n; i++)
		profile_free(r->v[i]);
	free(r->v);
	free(r->global_dir);
	free(r->data_real);
	pthread_mutex_destroy(&r->lock);
	memset(r, 0, sizeof(*r));
}

/* The directory and every directory below it (a fleet run's members too) as scanned:
 * an entry added anywhere, a link planted later included, makes a new entry. */
static bool same_identity(const struct nx_profile *p, const struct stat *st)
{
	return p->dev == st->st_dev && p->ino == st->st_ino &&
	       p->mtime.tv_sec == st->st_mtim.tv_sec && p->mtime.tv_nsec == st->st_mtim.tv_nsec &&
	       nx__pfiles_dirs_unchanged(&p->files);
}

/* Drops the registry's reference to entry i (the caller holds the lock). */
static void unlink_entry(struct nx_registry *r, size_t i)
{
	struct nx_profile *p = r->v[i];

	r->v[i] = r->v[--r->n];
	p->stale = true;
	if (--p->refs == 0)
		profile_free(p);
}

static int build(struct nx_registry *r, const char *name, const char *path, struct nx_profile **out,
		 struct nx_err *err)
{
	struct nx_profile *p;
	struct stat st;
	char *real = nx__path_resolve_within(r->data_real, path);
	int rc;

	if (!real)
		return nx_errf(err, -EACCES, "profile '%s' resolves outside the data path", name);
	if (stat(real, &st) != 0 || !S_ISDIR(st.st_mode)) {
		free(real);
		return nx_errf(err, NX_ENOTFOUND, "profile '%s' is not a directory", name);
	}
	p = nx_xcalloc(1, sizeof(*p));
	p->name = nx_xstrdup(name);
	p->dir = real;
	p->dev = st.st_dev;
	p->ino = st.st_ino;
	p->mtime = st.st_mtim;
	pthread_mutex_init(&p->open_lock, NULL);
	pthread_mutex_init(&p->lod_lock, NULL);
	pthread_mutex_init(&p->bounds_lock, NULL);
	rc = nx__pfiles_scan(real, &p->files, err);
	if (rc) {
		profile_free(p);
		return rc;
	}
	p->refs = 1; /* the registry's own */
	*out = p;
	return 0;
}

static int open_db(struct nx_registry *r, struct nx_profile *p, struct nx_err *err)
{
	int rc = 0;

	pthread_mutex_lock(&p->open_lock);
	if (!p->db) {
		rc = nx__pdb_open(&p->db, p->dir, &p->files, r->threads, err);
		if (rc)
			nx_err_wrap(err, "cannot open profile '%s'", p->name);
		if (!rc && !r->quiet)
			nx_log(NX_LOG_DEBUG, "neuron-explorer api: profile '%s' opened from %s",
			       p->name, p->dir);
		for (size_t i = 0; !rc && !r->quiet && nx__pdb_broken(p->db, i); i++)
			nx_log(NX_LOG_WARN, "neuron-explorer api: profile '%s' in %s: %s", p->name,
			       p->dir, nx__pdb_broken(p->db, i));
	}
	pthread_mutex_unlock(&p->open_lock);
	return rc;
}

int nx__reg_get(struct nx_registry *r, const char *name, bool with_db, struct nx_profile **out,
		struct nx_err *err)
{
	const char *why = nx__path_check_name(name);
	struct nx_profile *p = NULL, *fresh = NULL;
	struct stat st;
	char *path;
	int rc = 0;

	*out = NULL;
	if (why)
		return nx_errf(err, NX_EUSAGE, "invalid profile name: %s", why);
	path = nx_xasprintf("%s/%s" SUFFIX, r->global_dir, name);
	bool exists = stat(path, &st) == 0 && S_ISDIR(st.st_mode);

	pthread_mutex_lock(&r->lock);
	for (size_t i = 0; i < r->n; i++) {
		if (strcmp(r->v[i]->name, name))
			continue;
		if (exists && same_identity(r->v[i], &st))
			p = r->v[i];
		else
			unlink_entry(r, i);
		break;
	}
	if (!p && exists) {
		rc = build(r, name, path, &fresh, err);
		if (!rc) {
			NX_GROW(r->v, r->n + 1, r->cap);
			r->v[r->n++] = p = fresh;
		}
	} else if (!p) {
		rc = nx_errf(err, NX_ENOTFOUND,
			     "no profile named '%s' in %s (GET /api/v1/profiles lists them)", name,
			     r->global_dir);
	}
	if (p)
		p->refs++;
	pthread_mutex_unlock(&r->lock);
	free(path);
	if (!rc && with_db) {
		rc = open_db(r, p, err);
		if (rc) {
			nx__reg_put(r, p);
			p = NULL;
		}
	}
	*out = p;
	return rc;
}

void nx__reg_put(struct nx_registry *r, struct nx_profile *p)
{
	bool dead;

	if (!p)
		return;
	pthread_mutex_lock(&r->lock);
	dead = --p->refs == 0;
	pthread_mutex_unlock(&r->lock);
	if (dead)
		profile_free(p);
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

int nx__reg_names(struct nx_registry *r, char ***names, size_t *n, struct nx_err *err)
{
	char **v = NULL;
	size_t nv = 0, cap = 0;
	struct dirent *de;
	DIR *d;

	*names = NULL;
	*n = 0;
	d = opendir(r->global_dir);
	if (!d) {
		if (errno == ENOENT)
			return 0; /* nothing ingested yet */
		return nx_errf(err, -errno, "cannot list '%s': %s", r->global_dir, strerror(errno));
	}
	while ((de = readdir(d))) {
		size_t len = strlen(de->d_name), sl = strlen(SUFFIX);
		char *nm, *path;
		bool ok;

		if (nx__path_in_progress(de->d_name) || len <= sl ||
		    strcmp(de->d_name + len - sl, SUFFIX))
			continue;
		nm = nx_xstrndup(de->d_name, len - sl);
		path = nx_path_join(r->global_dir, de->d_name);
		ok = !nx__path_check_name(nm) && nx_is_dir(path);
		free(path);
		if (!ok) {
			free(nm);
			continue;
		}
		NX_GROW(v, nv + 1, cap);
		v[nv++] = nm;
	}
	closedir(d);
	if (nv)
		qsort(v, nv, sizeof(*v), cmp_str);
	*names = v;
	*n = nv;
	return 0;
}

void nx__reg_names_free(char **names, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(names[i]);
	free(names);
}
