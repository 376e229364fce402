/* SPDX-License-Identifier: MIT
 * lod_cache.c: where the timeline cache of a profile lives (lod.h). It is
 * <data>/.cache/timeline/<name>@v3-<dev>-<ino>-<mtime>/timeline.duckdb, keyed by the
 * identity of the profile directory the registry saw, so a re-ingested profile gets a
 * new pyramid and the profile directory itself is never written. A build goes to a
 * private hidden directory that is renamed into place; when another process won the
 * race, its result is used and ours dropped. Older versions of the same profile are
 * removed after a build. */
#include "common/compat.h"
#include "server/lod.h"
#include "common/fsutil.h"
#include "common/strbuf.h"
#include "common/xalloc.h"

#include <dirent.h>
#include <jansson.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define LOD_VERSION "v3"
/* DuckDB threads per cache database: its queries are small, and one thread does them
 * with about half the CPU time of two on this kind of machine */
#define LOD_THREADS 1

static atomic_uint build_seq;

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

void nx__lod_free(struct nx_lod *lod)
{
	if (!lod)
		return;
	nx__pdb_free(&lod->db);
	free(lod->dir);
	free(lod);
}

/* Removes root/<name>@* other than keep (older versions of the profile). */
static void drop_old(const char *root, const char *name, const char *keep)
{
	DIR *dp = opendir(root);
	size_t n = strlen(name);
	struct dirent *de;

	while (dp && (de = readdir(dp))) {
		if (strncmp(de->d_name, name, n) || de->d_name[n] != '@' || !strcmp(de->d_name, keep))
			continue;
		char *p = nx_path_join(root, de->d_name);
		struct nx_err ignored = { 0 };
		nx_remove_tree(p, &ignored);
		free(p);
	}
	if (dp)
		closedir(dp);
}

static int build_into(const char *root, const char *key, const char *final, const char *dir,
		      const struct nx_pfiles *files, const char *name, struct nx_lod_builds *builds,
		      struct nx_lod *lod, struct nx_err *err)
{
	char *tmp = nx_xasprintf("%s/.%s.tmp-%d-%u", root, key, (int)getpid(),
				 atomic_fetch_add(&build_seq, 1));
	double t = now_s();
	struct nx_err ignored = { 0 };
	int rc;

	rc = nx_mkdirs(tmp, err);
	if (!rc)
		rc = nx__lod_build(dir, files, tmp, builds, err);
	if (!rc && rename(tmp, final) != 0) {
		if (errno != EEXIST && errno != ENOTEMPTY)
			rc = nx_errf(err, -errno, "cannot rename %s to %s: %s", tmp, final,
				     strerror(errno));
		/* else another process built it first: use theirs */
	}
	nx_remove_tree(tmp, &ignored);
	free(tmp);
	if (!rc) {
		lod->build_s = now_s() - t;
		drop_old(root, name, key);
	}
	return rc;
}

/* Reads the rows and level range of each source, and whether there are counters. */
static int read_meta(struct nx_lod *lod, struct nx_err *err)
{
	static const char sql[] = "SELECT src, n, lo, hi, (SELECT count(*) FROM tl.ctr), "
				  "(SELECT count(*) FROM duckdb_tables() WHERE database_name = 'tl' "
				  "AND table_name = 'lines') FROM tl.meta";
	struct nx_query_limits lim = { .max_rows = 100, .max_bytes = 1 << 16 };
	struct nx_strbuf out = NX_STRBUF_INIT;
	json_t *root, *row;
	size_t i;
	int rc;

	rc = nx__pdb_query(lod->db, sql, &lim, &out, err);
	if (rc)
		return rc;
	root = json_loadb(out.buf, out.len, 0, NULL);
	nx_strbuf_release(&out);
	if (!root)
		return nx_errf(err, -EIO, "cannot read the levels of %s", lod->dir);
	json_array_foreach(json_object_get(root, "rows"), i, row) {
		json_int_t s = json_integer_value(json_array_get(row, 0));

		if (s < 0 || s >= NX_LOD_NSRC)
			continue;
		lod->src[s].present = true;
		lod->src[s].n = (uint64_t)json_integer_value(json_array_get(row, 1));
		lod->src[s].lo = (int)json_integer_value(json_array_get(row, 2));
		lod->src[s].hi = (int)json_integer_value(json_array_get(row, 3));
		lod->counters = json_integer_value(json_array_get(row, 4)) > 0;
		lod->lines = json_integer_value(json_array_get(row, 5)) > 0;
	}
	json_decref(root);
	return 0;
}

int nx__lod_open(const char *data_real, const char *name, const char *dir,
		 const struct stat *st, const struct nx_pfiles *files,
		 struct nx_lod_builds *builds, struct nx_lod **out, struct nx_err *err)
{
	char *root = nx_path_join(data_real, ".cache/timeline");
	char *key = nx_xasprintf("%s@" LOD_VERSION "-%llu-%llu-%lld.%09ld", name,
				 (unsigned long long)st->st_dev, (unsigned long long)st->st_ino,
				 (long long)st->st_mtim.tv_sec, (long)st->st_mtim.tv_nsec);
	char *final = nx_path_join(root, key);
	char *table = nx_path_join(final, NX_LOD_FILE);
	struct nx_lod *lod = nx_xcalloc(1, sizeof(*lod));
	struct stat fst;
	int rc = 0;

	if (stat(table, &fst) != 0) {
		rc = nx_mkdirs(root, err);
		if (!rc)
			rc = build_into(root, key, final, dir, files, name, builds, lod, err);
	}
	if (!rc && stat(table, &fst) != 0)
		rc = nx_errf(err, -ENOENT, "the timeline summary %s is missing", table);
	if (rc)
		goto out;
	lod->bytes = (uint64_t)fst.st_size;
	lod->dir = final;
	final = NULL;
	free(table);
	table = nx_path_join(lod->dir, NX_LOD_FILE);
	rc = nx__pdb_open_attached(&lod->db, table, lod->dir, LOD_THREADS, err);
	if (!rc)
		rc = read_meta(lod, err);
out:
	if (rc) {
		nx__lod_free(lod);
		lod = NULL;
	}
	*out = lod;
	free(root);
	free(key);
	free(final);
	free(table);
	return rc;
}
