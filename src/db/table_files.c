/* SPDX-License-Identifier: MIT
 * table_files.c: which files of a directory are which table (see table_files.h). */
#include "common/compat.h"
#include "db/table_files.h"
#include "common/xalloc.h"

#include <dirent.h>
#include <stdlib.h>
#include <string.h>

#define SUFFIX ".parquet"
#define MAX_PART_DIGITS 9

bool nx_table_file_parse(const char *file, char **table, long *index)
{
	size_t len = strlen(file), slen = sizeof(SUFFIX) - 1;
	const char *us, *p;

	*table = NULL;
	*index = -1;
	if (file[0] == '.' || strstr(file, ".tmp") || len <= slen ||
	    strcmp(file + len - slen, SUFFIX))
		return false;
	len -= slen;
	/* The last '_' of the stem, when only 1 to 9 digits follow it, starts a part number. */
	for (us = file + len; us > file && us[-1] != '_'; us--)
		;
	if (us > file + 1 && us < file + len) {
		for (p = us; p < file + len && *p >= '0' && *p <= '9'; p++)
			;
		if (p == file + len && p - us <= MAX_PART_DIGITS) {
			*index = strtol(us, NULL, 10);
			len = (size_t)(us - 1 - file);
		}
	}
	*table = nx_xstrndup(file, len);
	return true;
}

static int cmp_file(const void *a, const void *b)
{
	const struct nx_table_file *x = a, *y = b;
	int c = strcmp(x->table, y->table);

	if (c)
		return c;
	return (x->index > y->index) - (x->index < y->index);
}

int nx_table_files_list(const char *dir, nx_table_file_keep keep, void *arg,
			struct nx_table_file **out, size_t *n, struct nx_err *err)
{
	struct nx_table_file *v = NULL;
	size_t nv = 0, cap = 0;
	struct dirent *de;
	DIR *d = opendir(dir);

	*out = NULL;
	*n = 0;
	if (!d)
		return nx_errf(err, -errno, "cannot list '%s': %s", dir, strerror(errno));
	while ((de = readdir(d))) {
		uint64_t bytes = 0;
		char *table;
		long index;

		if (!nx_table_file_parse(de->d_name, &table, &index))
			continue;
		if (keep && !keep(arg, dir, de->d_name, &bytes)) {
			free(table);
			continue;
		}
		NX_GROW(v, nv + 1, cap);
		v[nv].table = table;
		v[nv].file = nx_xstrdup(de->d_name);
		v[nv].index = index;
		v[nv].bytes = bytes;
		nv++;
	}
	closedir(d);
	if (nv)
		qsort(v, nv, sizeof(*v), cmp_file);
	*out = v;
	*n = nv;
	return 0;
}

void nx_table_files_free(struct nx_table_file *v, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(v[i].table);
		free(v[i].file);
	}
	free(v);
}
