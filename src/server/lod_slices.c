/* SPDX-License-Identifier: MIT
 * lod_slices.c: the table files a timeline cache build reads, a large file as slices of
 * its row groups (lod.h, struct nx_lod_slices; db/parquet_slice.h). DuckDB parses a
 * parquet file's whole footer for every query over it, about 1.7 KB per column chunk
 * (some 200 MB for the 100M-record profile's Instruction.parquet); over a list of slice
 * files it holds one slice's footer at a time. A table is cut once, when the build first
 * reads it, into the build's scratch folder, and its slices stay there until the build
 * ends; the slices hold the file's row groups in file order, so every query reads the
 * same rows in the same order as from the file itself. */
#include "common/compat.h"
#include "server/lod.h"
#include "common/fsutil.h"
#include "common/xalloc.h"
#include "db/parquet_slice.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

void nx__lod_slices_init(struct nx_lod_slices *sl, const char *scratch, uint32_t per)
{
	memset(sl, 0, sizeof(*sl));
	sl->scratch = scratch;
	sl->per = per;
}

/* Frees t, and removes its files that are slices of ours (those in the scratch folder;
 * a file of the profile read whole is never one). */
static void table_free(const struct nx_lod_slices *sl, struct nx_ptable *t)
{
	size_t n = strlen(sl->scratch);

	for (size_t i = 0; i < t->nfiles; i++) {
		if (!strncmp(t->files[i], sl->scratch, n) && t->files[i][n] == '/')
			unlink(t->files[i]);
		free(t->files[i]);
	}
	free(t->files);
	free(t->name);
	free(t);
}

void nx__lod_slices_release(struct nx_lod_slices *sl)
{
	for (size_t i = 0; i < sl->n; i++)
		table_free(sl, sl->t[i]);
	free(sl->t);
	memset(sl, 0, sizeof(*sl));
}

/* The table being cut, its files so far. */
struct cut {
	struct nx_ptable *t;
	size_t cap;
};

static int add_piece(void *arg, const char *path, uint32_t index, struct nx_err *err)
{
	struct cut *c = arg;

	(void)index;
	(void)err;
	NX_GROW(c->t->files, c->t->nfiles + 1, c->cap);
	c->t->files[c->t->nfiles++] = nx_xstrdup(path);
	return 0;
}

int nx__lod_sliced(struct nx_lod_slices *sl, const char *dir, const struct nx_ptable *t,
		   const struct nx_ptable **out, struct nx_err *err)
{
	struct cut c = { 0 };
	int rc = 0;

	for (size_t i = 0; i < sl->n; i++)
		if (!strcmp(sl->t[i]->name, t->name)) {
			*out = sl->t[i];
			return 0;
		}
	c.t = nx_xcalloc(1, sizeof(*c.t));
	c.t->name = nx_xstrdup(t->name);
	for (size_t i = 0; i < t->nfiles && !rc; i++) {
		char *path = nx_path_join(dir, t->files[i]);
		char *stem = nx_xasprintf("%s-%zu", t->name, i);

		if (sl->per)
			rc = nx_pq_each_slice(path, sl->per, sl->scratch, stem, true, add_piece, &c,
					      NULL, err);
		else
			rc = add_piece(&c, path, 0, err);
		free(stem);
		free(path);
	}
	if (rc) {
		table_free(sl, c.t);
		return rc;
	}
	NX_GROW(sl->t, sl->n + 1, sl->cap);
	sl->t[sl->n++] = c.t;
	*out = c.t;
	return 0;
}
