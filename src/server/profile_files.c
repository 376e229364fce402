/* SPDX-License-Identifier: MIT
 * profile_files.c: table discovery in a profile directory (see profile_files.h). */
#include "common/compat.h"
#include "server/profile_files.h"
#include "server/paths.h"
#include "db/table_files.h"
#include "common/fsutil.h"
#include "common/xalloc.h"

#include <dirent.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

/* Directories nested deeper than this below a profile are refused. */
#define MAX_DEPTH 16

/* A regular file (the tree holds no links: check_tree). */
static bool usable(const char *path, uint64_t *bytes)
{
	struct stat st;

	if (lstat(path, &st) != 0 || !S_ISREG(st.st_mode))
		return false;
	*bytes = (uint64_t)st.st_size;
	return true;
}

/* Keeps the table files that are usable (no temporaries). */
static bool keep_file(void *arg, const char *dir, const char *file, uint64_t *bytes)
{
	char *path;
	bool ok;

	(void)arg;
	if (nx__path_in_progress(file))
		return false;
	path = nx_path_join(dir, file);
	ok = usable(path, bytes);
	free(path);
	return ok;
}

static void find_source(const char *dir, struct nx_pfiles *out)
{
	char *path = nx_path_join(dir, NX_SOURCE_ARCHIVE);
	uint64_t bytes = 0;

	if (usable(path, &bytes)) {
		out->has_source = true;
		out->source_bytes = bytes;
	}
	free(path);
}

static void add_dir(struct nx_pfiles *pf, const char *path, const struct stat *st)
{
	struct nx_pdir *d;

	pf->dirs = nx_xrealloc(pf->dirs, (pf->ndirs + 1) * sizeof(*pf->dirs));
	d = &pf->dirs[pf->ndirs++];
	d->path = nx_xstrdup(path);
	d->dev = st->st_dev;
	d->ino = st->st_ino;
	d->mtime = st->st_mtim;
}

/* Refuses a tree (top: the profile directory) holding a link or anything but regular
 * files and directories; records the identity of each directory below top. */
static int check_tree(const char *top, const char *dir, int depth, struct nx_pfiles *pf,
		      struct nx_err *err)
{
	DIR *dp = opendir(dir);
	struct dirent *de;
	int rc = 0;

	if (!dp && depth && errno == ENOENT)
		return 0; /* a subdirectory removed meanwhile */
	if (!dp)
		return nx_errf(err, -errno, "cannot open profile directory '%s': %s", dir,
			       strerror(errno));
	while (!rc && (de = readdir(dp))) {
		const char *rel;
		struct stat st;
		char *path;

		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		path = nx_path_join(dir, de->d_name);
		rel = path + strlen(top) + 1;
		if (lstat(path, &st) != 0) {
			if (errno != ENOENT) /* else removed meanwhile */
				rc = nx_errf(err, -errno, "cannot inspect '%s': %s", path,
					     strerror(errno));
		} else if (S_ISLNK(st.st_mode)) {
			rc = nx_errf(err, -EACCES,
				     "profile directory '%s' holds a symbolic link, '%s': a link can "
				     "lead outside the profile, so it is not served (replace the link "
				     "by the file it names)", top, rel);
		} else if (S_ISDIR(st.st_mode)) {
			if (depth >= MAX_DEPTH)
				rc = nx_errf(err, -EACCES,
					     "profile directory '%s' nests directories deeper than "
					     "%d levels ('%s'), so it is not served", top, MAX_DEPTH,
					     rel);
			else
				add_dir(pf, path, &st);
			if (!rc)
				rc = check_tree(top, path, depth + 1, pf, err);
		} else if (!S_ISREG(st.st_mode)) {
			rc = nx_errf(err, -EACCES,
				     "profile directory '%s' holds '%s', which is neither a regular "
				     "file nor a directory, so it is not served", top, rel);
		}
		free(path);
	}
	closedir(dp);
	return rc;
}

void nx__pfiles_take_dirs(struct nx_pfiles *pf, struct nx_pfiles *from, const char *dir)
{
	struct stat st;

	if (stat(dir, &st) == 0)
		add_dir(pf, dir, &st);
	else /* gone already: a directory that never matches, so the next look rescans */
		add_dir(pf, dir, &(struct stat){ 0 });
	for (size_t i = 0; i < from->ndirs; i++) {
		pf->dirs = nx_xrealloc(pf->dirs, (pf->ndirs + 1) * sizeof(*pf->dirs));
		pf->dirs[pf->ndirs++] = from->dirs[i];
	}
	free(from->dirs);
	from->dirs = NULL;
	from->ndirs = 0;
}

bool nx__pfiles_dirs_unchanged(const struct nx_pfiles *pf)
{
	for (size_t i = 0; i < pf->ndirs; i++) {
		const struct nx_pdir *d = &pf->dirs[i];
		struct stat st;

		if (lstat(d->path, &st) != 0 || !S_ISDIR(st.st_mode) || st.st_dev != d->dev ||
		    st.st_ino != d->ino || st.st_mtim.tv_sec != d->mtime.tv_sec ||
		    st.st_mtim.tv_nsec != d->mtime.tv_nsec)
			return false;
	}
	return true;
}

int nx__pfiles_scan_plain(const char *dir, struct nx_pfiles *out, struct nx_err *err)
{
	struct nx_table_file *parts = NULL;
	size_t np = 0;
	int rc;

	memset(out, 0, sizeof(*out));
	rc = check_tree(dir, dir, 0, out, err);
	if (rc) {
		nx__pfiles_release(out);
		return rc;
	}
	rc = nx_table_files_list(dir, keep_file, NULL, &parts, &np, err);
	if (rc) {
		nx__pfiles_release(out);
		return nx_errf(err, rc, "cannot open profile directory '%s': %s", dir,
			       strerror(-rc));
	}
	find_source(dir, out);
	for (size_t i = 0; i < np; i++) {
		struct nx_ptable *t = out->n ? &out->t[out->n - 1] : NULL;

		if (!t || strcmp(t->name, parts[i].table)) {
			out->t = nx_xrealloc(out->t, (out->n + 1) * sizeof(*out->t));
			t = &out->t[out->n++];
			memset(t, 0, sizeof(*t));
			t->name = parts[i].table;
		} else {
			free(parts[i].table);
		}
		t->files = nx_xrealloc(t->files, (t->nfiles + 1) * sizeof(*t->files));
		t->sizes = nx_xrealloc(t->sizes, (t->nfiles + 1) * sizeof(*t->sizes));
		t->sizes[t->nfiles] = parts[i].bytes;
		t->files[t->nfiles++] = parts[i].file;
		t->bytes += parts[i].bytes;
	}
	free(parts); /* the names moved into out */
	return 0;
}

int nx__pfiles_scan(const char *dir, struct nx_pfiles *out, struct nx_err *err)
{
	int rc = nx__pfiles_scan_plain(dir, out, err);

	if (!rc && (rc = nx__pfiles_scan_fleet(dir, out, err)))
		nx__pfiles_release(out);
	return rc;
}

void nx__pfiles_release(struct nx_pfiles *pf)
{
	for (size_t i = 0; i < pf->n; i++) {
		struct nx_ptable *t = &pf->t[i];

		for (size_t j = 0; t->files && j < t->nfiles; j++)
			free(t->files[j]);
		for (size_t j = 0; j < t->nbases; j++)
			free(t->bases[j]);
		free(t->files);
		free(t->mf);
		free(t->bases);
		free(t->sizes);
		free(t->name);
	}
	free(pf->t);
	if (pf->members) {
		for (size_t i = 0; i < pf->members->n; i++)
			free(pf->members->name[i]);
		free(pf->members->name);
		free(pf->members);
	}
	for (size_t i = 0; i < pf->nallow; i++)
		free(pf->allow[i]);
	free(pf->allow);
	for (size_t i = 0; i < pf->ndirs; i++)
		free(pf->dirs[i].path);
	free(pf->dirs);
	memset(pf, 0, sizeof(*pf));
}

const struct nx_ptable *nx__pfiles_find(const struct nx_pfiles *pf, const char *name)
{
	for (size_t i = 0; i < pf->n; i++)
		if (!strcasecmp(pf->t[i].name, name))
			return &pf->t[i];
	return NULL;
}

char *nx__ptable_file(const struct nx_ptable *t, size_t i)
{
	if (t->files)
		return nx_xstrdup(t->files[i]);
	return nx_xasprintf("../%s@latest/%s", t->run->name[t->mf[i].member],
			    t->bases[t->mf[i].base]);
}

const char *nx__ptable_member(const struct nx_ptable *t, size_t i)
{
	return t->files ? NULL : t->run->name[t->mf[i].member];
}
