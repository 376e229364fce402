/* SPDX-License-Identifier: MIT
 * profile_set.c: the device profiles a published profile stands for (see profile_set.h):
 * a fleet index's member list, or a directory-mode profile's DeviceProfileList. */
#include "common/compat.h"
#include "export/profile_set.h"
#include "common/fsutil.h"
#include "common/strbuf.h"
#include "common/xalloc.h"
#include "db/duck.h"
#include "db/profile_views.h"
#include "db/table_files.h"

#include <stdlib.h>
#include <string.h>

static void add(struct nx_profile_set *s, char *name, char *dir)
{
	if (!nx_is_dir(dir)) {
		free(name);
		free(dir);
		return;
	}
	s->p = nx_xrealloc(s->p, (s->n + 1) * sizeof(*s->p));
	s->p[s->n].name = name;
	s->p[s->n++].dir = dir;
}

/* The directory holding the profile directories (the parent of dir). */
static char *parent_of(const char *dir)
{
	size_t len = strlen(dir);

	while (len > 1 && dir[len - 1] == '/')
		len--;
	while (len > 0 && dir[len - 1] != '/')
		len--;
	return len ? nx_xstrndup(dir, len > 1 ? len - 1 : 1) : nx_xstrdup(".");
}

/* A member name read back from disk names a sibling profile and nothing else. */
static bool plain_name(const char *s, size_t len)
{
	return len > 0 && s[0] != '.' && !memchr(s, '/', len) && !memchr(s, '\0', len);
}

static int fleet_members(const char *dir, const char *list, struct nx_profile_set *s,
			 struct nx_err *err)
{
	char *data = NULL, *parent = parent_of(dir);
	size_t len = 0;
	int rc = nx_read_file(list, &data, &len, err);

	s->fleet = true;
	for (char *line = data, *end; !rc && line && line < data + len; line = end + 1) {
		end = memchr(line, '\n', (size_t)(data + len - line));
		if (!end)
			end = data + len;
		size_t n = (size_t)(end - line);
		if (n && line[n - 1] == '\r')
			n--;
		if (!plain_name(line, n))
			continue;
		char *name = nx_xstrndup(line, n);
		add(s, name, nx_xasprintf("%s/%s@latest", parent, name));
	}
	free(data);
	free(parent);
	return rc;
}

struct pairs {
	char **names;
	size_t n;
};

static void pair_cell(void *arg, size_t row, const char *column, int kind, const char *text)
{
	struct pairs *p = arg;

	(void)row;
	(void)column;
	p->names = nx_xrealloc(p->names, (p->n + 1) * sizeof(*p->names));
	p->names[p->n++] = nx_xstrdup(kind == NX_CELL_TEXT ? text : "");
}

/* The further NEFF/NTFF pairs of a directory-mode profile, after the first one, which
 * is the profile itself. */
static int siblings(const char *dir, const char *name, struct nx_profile_set *s,
		    struct nx_err *err)
{
	const char *dirs[] = { dir, NULL };
	struct nx_strbuf sql = NX_STRBUF_INIT;
	struct nx_duck *d = NULL;
	struct pairs p = { 0 };
	int rc = 0;

	if (!nx_db_table_has_file(dirs, "DeviceProfileList"))
		goto out;
	nx_strbuf_addstr(&sql, "SELECT device_profile_name FROM ");
	if (!(rc = nx_db_add_table_scan(&sql, dir, "DeviceProfileList", err)) &&
	    !(rc = nx_duck_open(&d, 1, NULL, err)))
		rc = nx_duck_query_cells(d, sql.buf, pair_cell, &p, err);
	if (rc) {
		nx_err_wrap(err, "reading the DeviceProfileList of '%s'", dir);
		goto out;
	}
	char *parent = parent_of(dir);
	for (size_t i = 1; i < p.n; i++) {
		const char *pair = p.names[i];
		if (!plain_name(pair, strlen(pair)))
			continue;
		char *inside = nx_xasprintf("%s/devices/%s", dir, pair);
		char *sib = nx_xasprintf("%s-%s", name, pair);
		if (nx_is_dir(inside)) {
			add(s, sib, inside);
		} else {
			free(inside);
			add(s, sib, nx_xasprintf("%s/%s@latest", parent, sib));
		}
	}
	free(parent);
out:
	for (size_t i = 0; i < p.n; i++)
		free(p.names[i]);
	free(p.names);
	nx_duck_close(d);
	nx_strbuf_release(&sql);
	return rc;
}

int nx_profile_set_of(const char *dir, const char *name, struct nx_profile_set *s,
		      struct nx_err *err)
{
	char *list = nx_path_join(dir, NX_PROFILE_FLEET_MEMBERS);
	int rc;

	memset(s, 0, sizeof(*s));
	if (nx_is_file(list)) {
		rc = fleet_members(dir, list, s, err);
	} else {
		add(s, nx_xstrdup(name), nx_xstrdup(dir));
		rc = siblings(dir, name, s, err);
	}
	free(list);
	if (rc)
		nx_profile_set_release(s);
	return rc;
}

void nx_profile_set_release(struct nx_profile_set *s)
{
	for (size_t i = 0; i < s->n; i++) {
		free(s->p[i].name);
		free(s->p[i].dir);
	}
	free(s->p);
	memset(s, 0, sizeof(*s));
}
