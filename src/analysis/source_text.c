/* SPDX-License-Identifier: MIT
 * source_text.c: quotes the kernel source lines a finding names ("file.py:NN"), read
 * from the tree given with --nki-source-root, under the finding's table in the
 * Markdown report. The file is looked up as root/<path>, then by its base name
 * anywhere below root (a few levels deep). Lines that cannot be found are skipped. */
#include "common/compat.h"
#include "analysis/rec.h"
#include "common/fsutil.h"
#include "common/xalloc.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Finds `base` below dir (depth-limited); returns a new path or NULL. */
static char *find_below(const char *dir, const char *base, int depth)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	char *found = NULL;

	if (!d)
		return NULL;
	while (!found && (de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		char *p = nx_path_join(dir, de->d_name);
		if (!strcmp(de->d_name, base) && nx_is_file(p)) {
			found = p;
			break;
		}
		if (depth > 0 && nx_is_dir(p))
			found = find_below(p, base, depth - 1);
		free(p);
	}
	closedir(d);
	return found;
}

/* Copies line `n` (1-based) of path into out; false when there is no such line. */
static bool read_line(const char *path, long n, struct nx_strbuf *out)
{
	FILE *f = fopen(path, "r");
	char *line = NULL;
	size_t cap = 0;
	ssize_t len;
	long k = 0;
	bool ok = false;

	if (!f)
		return false;
	while ((len = getline(&line, &cap, f)) >= 0)
		if (++k == n) {
			while (len > 0 && (line[len - 1] == '\n' || line[len - 1] == '\r'))
				len--;
			nx_strbuf_add(out, line, (size_t)len);
			ok = true;
			break;
		}
	free(line);
	fclose(f);
	return ok;
}

void nx__rec_md_source(const char *root, const struct nx_rec_table *lines, struct nx_strbuf *out)
{
	struct nx_strbuf code = NX_STRBUF_INIT;
	size_t shown = 0;

	if (!root)
		return;
	for (size_t r = 0; r < lines->nrows && shown < 3; r++) {
		const char *src = nx__rec_cell(lines, r, "source");
		const char *colon = src ? strrchr(src, ':') : NULL;
		if (!colon || colon == src)
			continue;
		long n = strtol(colon + 1, NULL, 10);
		char *file = nx_xstrndup(src, (size_t)(colon - src));
		char *path = nx_path_join(root, file);
		if (!nx_is_file(path)) {
			const char *base = strrchr(file, '/');
			free(path);
			path = find_below(root, base ? base + 1 : file, 6);
		}
		struct nx_strbuf text = NX_STRBUF_INIT;
		if (path && n > 0 && read_line(path, n, &text)) {
			nx_strbuf_addf(&code, "%s  %s\n", src, nx_strbuf_str(&text));
			shown++;
		}
		nx_strbuf_release(&text);
		free(path);
		free(file);
	}
	if (shown)
		nx_strbuf_addf(out, "\n```python\n%s```\n", nx_strbuf_str(&code));
	nx_strbuf_release(&code);
}
