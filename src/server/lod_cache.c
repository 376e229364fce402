/* SPDX-License-Identifier: MIT
 * lod_cache.c: where the timeline cache of a profile lives, and whether it can be
 * trusted (lod.h). It is <data>/.cache/timeline/<name>@v6-<dev>-<ino>-<mtime>/, keyed by
 * the identity of the profile directory the registry saw, so a re-ingested profile gets
 * a new pyramid and the profile directory itself is never written. The directory holds
 * timeline.duckdb and timeline.stamp, the stamp, written last: the format, the profile's
 * name, its version (that identity), a hash of its table files (names and sizes) and
 * the size of timeline.duckdb. The database holds the same stamp (tl.stamp) but for the
 * size. A cache is used only when both stamps name this profile version in this format
 * and the file has the stamp's size; else the reason is returned, the directory removed
 * and the cache built again. A build, one at a time in a process and within
 * the bounds of every build (lod_bounds.c), goes to a private hidden directory,
 * .<key>.tmp-<host>-<pid>-<n>, renamed into place; when another process won the race,
 * its result is used (after the same checks) and ours dropped. Older versions of the
 * same profile are removed after a build; the private directories of dead processes
 * and the caches of deleted profiles when a server starts (nx__lod_clean). A cache that
 * `view` left inside the profile (NX_LOD_CARRIED_DIR, stamped as carried) is looked at
 * first and used when its stamps pass the same checks; else it is left there unused. */
#include "common/compat.h"
#include "server/lod.h"
#include "common/fsutil.h"
#include "common/hash.h"
#include "common/strbuf.h"
#include "common/xalloc.h"

#include <dirent.h>
#include <limits.h>
#include <jansson.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define LOD_STAMP "timeline.stamp"
#define STAMP_MAGIC "neuron-explorer timeline cache"
/* DuckDB threads per cache database: its queries are small, and one thread does them
 * with about half the CPU time of two on this kind of machine */
#define LOD_THREADS 1
/* One build at a time in a process: each runs within the bounds of lod_bounds.c, so the
 * server's builds of several profiles opened together stay within them too */
static pthread_mutex_t build_lock = PTHREAD_MUTEX_INITIALIZER;

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

void nx__lod_stamp_release(struct nx_lod_stamp *s)
{
	free(s->profile);
	free(s->version);
	free(s->tables);
	memset(s, 0, sizeof(*s));
}

void nx__lod_stamp_expect(const char *name, const char *version, const struct nx_pfiles *files,
			  struct nx_lod_stamp *s)
{
	struct nx_strbuf list = NX_STRBUF_INIT;

	for (size_t i = 0; i < files->n; i++)
		for (size_t j = 0; j < files->t[i].nfiles; j++) {
			char *file = nx__ptable_file(&files->t[i], j);

			nx_strbuf_addf(&list, "%s\t%s\t%" PRIu64 "\n", files->t[i].name, file,
				       files->t[i].sizes[j]);
			free(file);
		}
	s->format = NX_LOD_FORMAT;
	s->profile = nx_xstrdup(name);
	s->version = nx_xstrdup(version);
	s->tables = nx_xasprintf("%016" PRIx64, nx_fnv1a(list.buf ? list.buf : "", list.len));
	s->bytes = 0;
	nx_strbuf_release(&list);
}

/* The stamp a cache of this profile version (directory identity st) must carry. */
static void expected_stamp(const char *name, const struct stat *st,
			   const struct nx_pfiles *files, struct nx_lod_stamp *s)
{
	char *version = nx_xasprintf("%llu-%llu-%lld.%09ld", (unsigned long long)st->st_dev,
				     (unsigned long long)st->st_ino,
				     (long long)st->st_mtim.tv_sec, (long)st->st_mtim.tv_nsec);

	nx__lod_stamp_expect(name, version, files, s);
	free(version);
}

static char *stamp_text(const struct nx_lod_stamp *s)
{
	return nx_xasprintf(STAMP_MAGIC "\nformat %d\nprofile %s\nversion %s\ntables %s\n"
			    "bytes %" PRIu64 "\n",
			    s->format, s->profile, s->version, s->tables, s->bytes);
}

/* The value of "key <value>" in text (a copy), or NULL. */
static char *stamp_field(const char *text, const char *key)
{
	size_t n = strlen(key);

	for (const char *l = text; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL)
		if (!strncmp(l, key, n) && l[n] == ' ')
			return nx_xstrndup(l + n + 1, strcspn(l + n + 1, "\n"));
	return NULL;
}

char *nx__lod_stamp_check(const char *text, const struct nx_lod_stamp *want, uint64_t *bytes)
{
	char *format = stamp_field(text, "format"), *profile = stamp_field(text, "profile");
	char *version = stamp_field(text, "version"), *tables = stamp_field(text, "tables");
	char *size = stamp_field(text, "bytes"), *why = NULL, *end = NULL;

	if (strncmp(text, STAMP_MAGIC "\n", sizeof(STAMP_MAGIC)) || !format || !profile ||
	    !version || !tables || !size)
		why = nx_xstrdup("its stamp is damaged");
	else if (strtol(format, &end, 10) != want->format || *end)
		why = nx_xasprintf("it is in format %.20s, not %d", format, want->format);
	else if (strcmp(profile, want->profile))
		why = nx_xasprintf("it was built for profile '%.200s'", profile);
	else if (strcmp(version, want->version))
		why = nx_xasprintf("it was built for another version of the profile (%.100s, not "
				   "%s)", version, want->version);
	else if (strcmp(tables, want->tables))
		why = nx_xstrdup("the profile's table files changed since it was built");
	else if (!*size || (*bytes = strtoull(size, &end, 10), *end))
		why = nx_xstrdup("its stamp is damaged");
	free(format);
	free(profile);
	free(version);
	free(tables);
	free(size);
	return why;
}

/* Why the stamp file of cache directory dir does not match want (NULL: it does);
 * *bytes gets the size it records. */
static char *check_stamp_file(const char *dir, const struct nx_lod_stamp *want,
			      uint64_t *bytes)
{
	char *path = nx_path_join(dir, LOD_STAMP), *text = NULL, *why;
	struct nx_err err = { 0 };
	size_t len;

	if (nx_read_file(path, &text, &len, &err))
		why = nx_xasprintf("it has no stamp (%s): its build did not finish", err.msg);
	else if (strlen(text) != len)
		why = nx_xstrdup("its stamp is damaged");
	else
		why = nx__lod_stamp_check(text, want, bytes);
	free(path);
	free(text);
	return why;
}

static bool same(const json_t *v, const char *s)
{
	return json_is_string(v) && !strcmp(json_string_value(v), s);
}

/* Why the database's own stamp (tl.stamp) does not match want (NULL: it does). */
static char *check_db_stamp(struct nx_lod *lod, const struct nx_lod_stamp *want)
{
	struct nx_query_limits lim = { .max_rows = 2, .max_bytes = 1 << 14 };
	struct nx_strbuf out = NX_STRBUF_INIT;
	struct nx_err err = { 0 };
	json_t *root, *row;
	char *why = NULL;

	if (nx__pdb_query(lod->db, "SELECT format, profile, version, tables FROM tl.stamp", &lim,
			  &out, &err)) {
		nx_strbuf_release(&out);
		return nx_xasprintf("its database has no stamp (%s)", err.msg);
	}
	root = json_loadb(out.buf, out.len, 0, NULL);
	row = json_array_get(json_object_get(root, "rows"), 0);
	if (json_array_size(json_object_get(root, "rows")) != 1 ||
	    json_integer_value(json_array_get(row, 0)) != want->format ||
	    !same(json_array_get(row, 1), want->profile) ||
	    !same(json_array_get(row, 2), want->version) ||
	    !same(json_array_get(row, 3), want->tables))
		why = nx_xstrdup("its database's stamp is not the one of its stamp file (the "
				 "database was replaced)");
	json_decref(root);
	nx_strbuf_release(&out);
	return why;
}

/* The host name, for the names of private directories. */
static void host_name(char *buf, size_t n)
{
	if (gethostname(buf, n) != 0 || !buf[0])
		snprintf(buf, n, "localhost");
	buf[n - 1] = '\0';
	for (char *c = buf; *c; c++)
		if (*c == '/' || *c == '-')
			*c = '_';
}

/* root/.<key>.<what>-<host>-<pid>-<n>: a directory private to this process. */
static char *private_name(const char *root, const char *key, const char *what)
{
	char host[256];

	host_name(host, sizeof(host));
	return nx_xasprintf("%s/.%s.%s-%s-%d-%u", root, key, what, host, (int)getpid(),
			    atomic_fetch_add(&build_seq, 1));
}

/* Removes a cache directory: renamed to a private name first, so no reader finds it
 * half removed. */
static void discard(const char *root, const char *key, const char *dir)
{
	char *old = private_name(root, key, "old");
	struct nx_err ignored = { 0 };

	nx_remove_tree(rename(dir, old) == 0 ? old : dir, &ignored);
	free(old);
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

int nx__lod_stamp_write(const char *dir, struct nx_lod_stamp *s, struct nx_err *err)
{
	char *db = nx_path_join(dir, NX_LOD_FILE), *path = nx_path_join(dir, LOD_STAMP), *text;
	struct stat st;
	int rc;

	if (stat(db, &st) != 0) {
		rc = nx_errf(err, -errno, "cannot stat %s: %s", db, strerror(errno));
	} else {
		s->bytes = (uint64_t)st.st_size;
		text = stamp_text(s);
		rc = nx_write_file_atomic(path, text, strlen(text), err);
		free(text);
	}
	free(db);
	free(path);
	return rc;
}

static int build_into(const char *root, const char *key, const char *final, const char *dir,
		      const struct nx_pfiles *files, const char *name, struct nx_lod_stamp *stamp,
		      struct nx_lod_builds *builds, struct nx_lod *lod, struct nx_err *err)
{
	char *tmp = private_name(root, key, "tmp");
	double t = now_s();
	struct nx_err ignored = { 0 };
	struct nx_lod_bounds bounds;
	int rc;

	rc = nx__lod_bounds(&bounds, err);
	if (!rc)
		rc = nx_mkdirs(tmp, err);
	if (!rc) {
		pthread_mutex_lock(&build_lock);
		rc = nx__lod_build(dir, files, stamp, tmp, &bounds, builds, NULL, NULL, err);
		pthread_mutex_unlock(&build_lock);
	}
	if (!rc)
		rc = nx__lod_stamp_write(tmp, stamp, err);
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

/* Reads the rows and level range of each source, whether its events were copied, and
 * whether there are counters. */
static int read_meta(struct nx_lod *lod, struct nx_err *err)
{
	static const char sql[] = "SELECT src, n, lo, hi, (SELECT count(*) FROM tl.ctr) + "
				  "(SELECT count(*) FROM tl.ctr_burst), "
				  "(SELECT count(*) FROM duckdb_tables() WHERE database_name = 'tl' "
				  "AND table_name = 'lines'), (SELECT count(*) FROM duckdb_tables() t "
				  "WHERE t.database_name = 'tl' AND t.table_name = 'ev' || m.src) "
				  "FROM tl.meta m";
	struct nx_query_limits lim = { .max_rows = 100, .max_bytes = 1 << 16 };
	struct nx_strbuf out = NX_STRBUF_INIT;
	json_t *root, *row;
	size_t i;
	int rc, burst_lo = INT_MAX;

	rc = nx__pdb_query(lod->db, sql, &lim, &out, err);
	if (rc)
		return rc;
	root = json_loadb(out.buf, out.len, 0, NULL);
	nx_strbuf_release(&out);
	if (!root)
		return nx_errf(err, -EIO, "cannot read the levels of %s", lod->dir);
	lod->ctr_lo = 1;
	lod->ctr_hi = 0;
	json_array_foreach(json_object_get(root, "rows"), i, row) {
		json_int_t s = json_integer_value(json_array_get(row, 0));

		lod->counters = json_integer_value(json_array_get(row, 4)) > 0;
		lod->lines = json_integer_value(json_array_get(row, 5)) > 0;
		if (s == -1) { /* the counters' pyramid */
			lod->ctr_lo = (int)json_integer_value(json_array_get(row, 2));
			lod->ctr_hi = (int)json_integer_value(json_array_get(row, 3));
		}
		if (s == -2) /* its levels of the bursts' cells */
			burst_lo = (int)json_integer_value(json_array_get(row, 2));
		if (s < 0 || s >= NX_LOD_NSRC)
			continue;
		lod->src[s].present = true;
		lod->src[s].copied = json_integer_value(json_array_get(row, 6)) > 0;
		lod->src[s].n = (uint64_t)json_integer_value(json_array_get(row, 1));
		lod->src[s].lo = (int)json_integer_value(json_array_get(row, 2));
		lod->src[s].hi = (int)json_integer_value(json_array_get(row, 3));
	}
	lod->ctr_burst_lo = burst_lo < lod->ctr_lo ? burst_lo : lod->ctr_lo;
	json_decref(root);
	return 0;
}

/* Opens the cache in dir when it is this profile version's (want) and whole; else
 * returns NULL with the reason in *why. */
static struct nx_lod *open_valid(const char *dir, const struct nx_lod_stamp *want, char **why)
{
	char *table = nx_path_join(dir, NX_LOD_FILE);
	struct nx_lod *lod = nx_xcalloc(1, sizeof(*lod));
	struct nx_err err = { 0 };
	uint64_t bytes = 0;
	struct stat st;

	lod->dir = nx_xstrdup(dir);
	if ((*why = check_stamp_file(dir, want, &bytes)))
		goto fail;
	if (stat(table, &st) != 0) {
		*why = nx_xasprintf("%s is missing", NX_LOD_FILE);
		goto fail;
	}
	if ((uint64_t)st.st_size != bytes) {
		*why = nx_xasprintf("%s has %llu bytes where its stamp says %llu (truncated or "
				    "replaced)", NX_LOD_FILE, (unsigned long long)st.st_size,
				    (unsigned long long)bytes);
		goto fail;
	}
	lod->bytes = bytes;
	lod->dev = st.st_dev;
	lod->ino = st.st_ino;
	if (nx__pdb_open_attached(&lod->db, table, dir, LOD_THREADS, &err) ||
	    read_meta(lod, &err)) {
		*why = nx_xasprintf("%s cannot be read (%s)", NX_LOD_FILE, err.msg);
		goto fail;
	}
	if ((*why = check_db_stamp(lod, want)))
		goto fail;
	free(table);
	return lod;
fail:
	free(table);
	nx__lod_free(lod);
	return NULL;
}

/* The cache the ingest left in profile dir (NX_LOD_CARRIED_DIR) when it is this
 * profile's and whole; else NULL, with the reason in *why when there is one. */
static struct nx_lod *open_carried(const char *dir, const char *name,
				   const struct nx_pfiles *files, char **why)
{
	char *carried = nx_path_join(dir, NX_LOD_CARRIED_DIR);
	struct nx_lod_stamp want = { 0 };
	struct nx_lod *lod = NULL;
	char *reason = NULL;

	if (nx_is_dir(carried)) {
		nx__lod_stamp_expect(name, NX_LOD_CARRIED_VERSION, files, &want);
		lod = open_valid(carried, &want, &reason);
		if (lod)
			lod->carried = true;
		else
			*why = nx_xasprintf("the one in the profile, %s: %s", carried, reason);
		nx__lod_stamp_release(&want);
	}
	free(reason);
	free(carried);
	return lod;
}

int nx__lod_open(const char *data_real, const char *name, const char *dir,
		 const struct stat *st, const struct nx_pfiles *files, bool carried,
		 struct nx_lod_builds *builds, struct nx_lod **out, char **why,
		 struct nx_err *err)
{
	char *root = nx_path_join(data_real, ".cache/timeline");
	char *key = nx_xasprintf("%s@v%d-%llu-%llu-%lld.%09ld", name, NX_LOD_FORMAT,
				 (unsigned long long)st->st_dev, (unsigned long long)st->st_ino,
				 (long long)st->st_mtim.tv_sec, (long)st->st_mtim.tv_nsec);
	char *final = nx_path_join(root, key);
	struct nx_lod_stamp want = { 0 };
	struct nx_lod *lod = NULL;
	double build_s = 0;
	int rc = 0;

	*out = NULL;
	*why = NULL;
	if (carried && (*out = open_carried(dir, name, files, why))) {
		free(root);
		free(key);
		free(final);
		return 0;
	}
	expected_stamp(name, st, files, &want);
	/* at most: the cache found, not valid, removed; built; checked */
	for (int attempt = 0; !rc && attempt < 2; attempt++) {
		char *reason = NULL;

		if (nx_is_dir(final)) {
			lod = open_valid(final, &want, &reason);
			if (lod)
				break;
			if (attempt) { /* our own build does not pass: give up */
				rc = nx_errf(err, -EIO, "the timeline summary built in %s is not "
						       "usable: %s", final, reason);
				free(reason);
				break;
			}
			free(*why); /* the carried one's: this one's reason is the later */
			*why = reason;
			discard(root, key, final);
		}
		struct nx_lod built = { 0 };

		rc = nx_mkdirs(root, err);
		if (!rc)
			rc = build_into(root, key, final, dir, files, name, &want, builds, &built,
					err);
		build_s = built.build_s;
	}
	if (!rc && !lod)
		rc = nx_errf(err, -ENOENT, "the timeline summary %s is missing", final);
	if (lod)
		lod->build_s = build_s;
	*out = lod;
	nx__lod_stamp_release(&want);
	free(root);
	free(key);
	free(final);
	return rc;
}

bool nx__lod_damaged(const struct nx_lod *lod, const struct nx_err *qerr, char **why)
{
	char *table = nx_path_join(lod->dir, NX_LOD_FILE);
	struct stat st;

	*why = NULL;
	if (stat(table, &st) != 0)
		*why = nx_xasprintf("%s was removed while served", table);
	else if (st.st_dev != lod->dev || st.st_ino != lod->ino)
		*why = nx_xasprintf("%s was replaced while served", table);
	else if ((uint64_t)st.st_size != lod->bytes)
		*why = nx_xasprintf("%s changed from %llu to %llu bytes while served", table,
				    (unsigned long long)lod->bytes,
				    (unsigned long long)st.st_size);
	else if (qerr && qerr->code == NX_EDB && !strncmp(qerr->msg, "IO Error", 8))
		*why = nx_xasprintf("%s cannot be read (%s)", table, qerr->msg);
	free(table);
	return *why != NULL;
}

void nx__lod_discard(const struct nx_lod *lod)
{
	const char *slash = strrchr(lod->dir, '/');
	char *root;

	if (!slash || lod->carried)
		return;
	root = nx_xstrndup(lod->dir, (size_t)(slash - lod->dir));
	discard(root, slash + 1, lod->dir);
	free(root);
}

/* Whether process pid of this host is gone (a PID we may not signal is alive). */
static bool pid_dead(long pid)
{
	return pid > 0 && pid <= INT32_MAX && kill((pid_t)pid, 0) != 0 && errno == ESRCH;
}

/* Whether entry is ".<key>.tmp-<host>-<pid>-<n>" or ".<key>.old-..." (private_name), or
 * ".<key>.tmp-<pid>-<n>" (the servers before the cache's format 4, of this host), of a
 * dead process of this host. */
static bool stale_private(const char *entry, const char *host)
{
	const char *dash[3] = { NULL, NULL, NULL }; /* the last three '-': before n, pid, host */
	size_t k = 0, len = strlen(entry), hl = strlen(host);
	const char *tag;
	char *end;
	long pid;

	if (entry[0] != '.')
		return false;
	for (size_t i = len; i > 0 && k < 3; i--)
		if (entry[i - 1] == '-')
			dash[k++] = entry + i - 1;
	if (k < 2)
		return false;
	pid = strtol(dash[1] + 1, &end, 10);
	if (end != dash[0] || end == dash[1] + 1)
		return false;
	if (k == 3 && (size_t)(dash[1] - dash[2] - 1) == hl && !strncmp(dash[2] + 1, host, hl))
		tag = dash[2]; /* ".tmp" or ".old" ends here */
	else if (strstr(entry, "@v3-"))
		tag = dash[1];
	else
		return false;
	if (tag - entry < 5 || (strncmp(tag - 4, ".tmp", 4) && strncmp(tag - 4, ".old", 4)))
		return false;
	return pid_dead(pid);
}

/* Whether entry is "<name>@v..." for a profile no longer in global_dir. */
static bool deleted_profile(const char *entry, const char *global_dir)
{
	const char *at = strchr(entry, '@');
	char *path;
	struct stat st;
	bool gone;

	if (entry[0] == '.' || !at || at == entry || at[1] != 'v')
		return false;
	path = nx_xasprintf("%s/%.*s@latest", global_dir, (int)(at - entry), entry);
	gone = lstat(path, &st) != 0 && errno == ENOENT;
	free(path);
	return gone;
}

void nx__lod_clean(const char *data_real, const char *global_dir, struct nx_strbuf *log)
{
	char *root = nx_path_join(data_real, ".cache/timeline");
	DIR *dp = opendir(root);
	struct dirent *de;
	char host[256];

	host_name(host, sizeof(host));
	while (dp && (de = readdir(dp))) {
		const char *what = NULL;
		struct nx_err err = { 0 };
		char *path;

		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		if (stale_private(de->d_name, host))
			what = "the private directory of a process that is gone";
		else if (deleted_profile(de->d_name, global_dir))
			what = "the cache of a deleted profile";
		if (!what)
			continue;
		path = nx_path_join(root, de->d_name);
		if (nx_remove_tree(path, &err))
			nx_strbuf_addf(log, "cannot remove %s, %s: %s\n", path, what, err.msg);
		else
			nx_strbuf_addf(log, "removed %s, %s\n", path, what);
		free(path);
	}
	if (dp)
		closedir(dp);
	free(root);
}
