/* SPDX-License-Identifier: MIT
 * profile_files.c: table discovery in a profile directory (see profile_files.h). */
#include "common/compat.h"
#include "server/profile_files.h"
#include "server/paths.h"
#include "db/table_files.h"
#include "common/fsutil.h"
#include "common/xalloc.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

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

/* Keeps the table files that are usable (no temporaries, no links out of dir). */
static bool keep_file(void *arg, const char *dir, const char *file, uint64_t *bytes)
{
	char *path;
	bool ok;

	(void)arg;
	if (nx__path_in_progress(file))
		return false;
	path = nx_path_join(dir, file);
	ok = usable(dir, path, bytes);
	free(path);
	return ok;
}

static void find_source(const char *dir, struct nx_pfiles *out)
{
	char *path = nx_path_join(dir, NX_SOURCE_ARCHIVE);
	uint64_t bytes = 0;

	if (usable(dir, path, &bytes)) {
		out->has_source = true;
		out->source_bytes = bytes;
	}
	free(path);
}

int nx__pfiles_scan_plain(const char *dir, struct nx_pfiles *out, struct nx_err *err)
{
	struct nx_table_file *parts = NULL;
	size_t np = 0;
	int rc;

	memset(out, 0, sizeof(*out));
	rc = nx_table_files_list(dir, keep_file, NULL, &parts, &np, err);
	if (rc)
		return nx_errf(err, rc, "cannot open profile directory '%s': %s", dir,
			       strerror(-rc));
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
