/* SPDX-License-Identifier: MIT
 * lod_cache.c: where the timeline's pyramid of a profile lives. The cache is
 * <data>/.cache/timeline/<name>@v1-<dev>-<ino>-<mtime>/TimelineLod.parquet, keyed by the
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

#define LOD_VERSION "v1"

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
		      const struct nx_pfiles *files, const char *name, struct nx_lod *lod,
		      struct nx_err *err)
{
	char *tmp = nx_xasprintf("%s/.%s.tmp-%d-%u", root, key, (int)getpid(),
				 atomic_fetch_add(&build_seq, 1));
	int levels[NX_LOD_NSRC][2];
	double t = now_s();
	struct nx_err ignored = { 0 };
	int rc;

	rc = nx_mkdirs(tmp, err);
	if (!rc)
		rc = nx__lod_build(dir, files, tmp, levels, &lod->rows, err);
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

/* Reads the level range of each source from the pyramid. */
static int read_levels(struct nx_lod *lod, struct nx_err *err)
{
	static const char sql[] = "SELECT source, min(level), max(level) FROM " NX_LOD_TABLE
				  " GROUP BY ALL";
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
		const char *src = json_string_value(json_array_get(row, 0));

		for (int s = 0; src && s < NX_LOD_NSRC; s++) {
			if (strcmp(src, nx__lod_sources[s].table))
				continue;
			lod->src[s].present = true;
			lod->src[s].lo = (int)json_integer_value(json_array_get(row, 1));
			lod->src[s].hi = (int)json_integer_value(json_array_get(row, 2));
		}
	}
	json_decref(root);
	return 0;
}

int nx__lod_open(const char *data_real, const char *name, const char *dir,
		 const struct stat *st, const struct nx_pfiles *files, unsigned threads,
		 struct nx_lod **out, struct nx_err *err)
{
	char *root = nx_path_join(data_real, ".cache/timeline");
	char *key = nx_xasprintf("%s@" LOD_VERSION "-%llu-%llu-%lld.%09ld", name,
				 (unsigned long long)st->st_dev, (unsigned long long)st->st_ino,
				 (long long)st->st_mtim.tv_sec, (long)st->st_mtim.tv_nsec);
	char *final = nx_path_join(root, key);
	char *table = nx_path_join(final, NX_LOD_TABLE ".parquet");
	struct nx_lod *lod = nx_xcalloc(1, sizeof(*lod));
	struct nx_pfiles pf = { 0 };
	struct stat fst;
	int rc = 0;

	if (stat(table, &fst) != 0) {
		rc = nx_mkdirs(root, err);
		if (!rc)
			rc = build_into(root, key, final, dir, files, name, lod, err);
	}
	if (!rc && stat(table, &fst) != 0)
		rc = nx_errf(err, -ENOENT, "the timeline summary %s is missing", table);
	if (rc)
		goto out;
	lod->bytes = (uint64_t)fst.st_size;
	lod->dir = final;
	final = NULL;
	rc = nx__pfiles_scan_plain(lod->dir, &pf, err);
	if (!rc)
		rc = nx__pdb_open(&lod->db, lod->dir, &pf, threads, err);
	if (!rc)
		rc = read_levels(lod, err);
	nx__pfiles_release(&pf);
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
