/* SPDX-License-Identifier: MIT
 * profile_files.c: table discovery in a profile directory (see profile_files.h). */
#include "common/compat.h"
#include "server/profile_files.h"
#include "server/paths.h"
#include "common/fsutil.h"
#include "common/xalloc.h"

#include <dirent.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

struct part {
	char *table;
	char *file;
	long index; /* -1 for an unsplit "<T>.parquet" */
	uint64_t bytes;
};

static int cmp_part(const void *a, const void *b)
{
	const struct part *x = a, *y = b;
	int c = strcmp(x->table, y->table);

	if (c)
		return c;
	return (x->index > y->index) - (x->index < y->index);
}

/* "<T>_<digits>" names a part of split table T. */
static char *table_of(const char *stem, long *index)
{
	const char *us = strrchr(stem, '_');

	*index = -1;
	if (us && us != stem && us[1]) {
		const char *p = us + 1;
		while (*p >= '0' && *p <= '9')
			p++;
		if (!*p && p - (us + 1) <= 9) {
			*index = strtol(us + 1, NULL, 10);
			return nx_xstrndup(stem, (size_t)(us - stem));
		}
	}
	return nx_xstrdup(stem);
}

/* A regular file inside dir (symlinks must resolve inside too). */
static bool usable(const char *dir, const char *path, uint64_t *bytes)
{
	struct stat st;
	char *r;

	if (lstat(path, &st) != 0)
		return false;
	if (S_ISLNK(st.st_mode)) {
		r = nx__path_resolve_within(dir, path);
		if (!r)
			return false;
		free(r);
		if (stat(path, &st) != 0)
			return false;
	}
	*bytes = (uint64_t)st.st_size;
	return S_ISREG(st.st_mode);
}

int nx__pfiles_scan_plain(const char *dir, struct nx_pfiles *out, struct nx_err *err)
{
	struct part *parts = NULL;
	size_t np = 0, cap = 0;
	struct dirent *de;
	DIR *d;

	memset(out, 0, sizeof(*out));
	d = opendir(dir);
	if (!d)
		return nx_errf(err, -errno, "cannot open profile directory '%s': %s", dir,
			       strerror(errno));
	while ((de = readdir(d))) {
		const char *nm = de->d_name;
		size_t len = strlen(nm);
		uint64_t bytes = 0;
		char *path;
		bool ok;

		if (nx__path_in_progress(nm))
			continue;
		path = nx_path_join(dir, nm);
		ok = usable(dir, path, &bytes);
		free(path);
		if (!ok)
			continue;
		if (!strcmp(nm, NX_SOURCE_ARCHIVE)) {
			out->has_source = true;
			out->source_bytes = bytes;
			continue;
		}
		if (len <= 8 || strcmp(nm + len - 8, ".parquet"))
			continue;
		char *stem = nx_xstrndup(nm, len - 8);
		NX_GROW(parts, np + 1, cap);
		parts[np].table = table_of(stem, &parts[np].index);
		parts[np].file = nx_xstrdup(nm);
		parts[np].bytes = bytes;
		np++;
		free(stem);
	}
	closedir(d);
	if (np)
		qsort(parts, np, sizeof(*parts), cmp_part);
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
	free(parts);
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
		for (size_t j = 0; j < pf->t[i].nfiles; j++)
			free(pf->t[i].files[j]);
		free(pf->t[i].files);
		free(pf->t[i].sizes);
		free(pf->t[i].name);
	}
	free(pf->t);
	for (size_t i = 0; i < pf->nallow; i++)
		free(pf->allow[i]);
	free(pf->allow);
	memset(pf, 0, sizeof(*pf));
}

const struct nx_ptable *nx__pfiles_find(const struct nx_pfiles *pf, const char *name)
{
	for (size_t i = 0; i < pf->n; i++)
		if (!strcasecmp(pf->t[i].name, name))
			return &pf->t[i];
	return NULL;
}
