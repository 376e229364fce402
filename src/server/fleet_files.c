/* SPDX-License-Identifier: MIT
 * fleet_files.c: the member tables of a fleet run's index profile (see
 * profile_files.h). A profile directory holding fleet-members.txt (written by
 * `neuron-explorer fleet index`) lists the run's member profiles; every table those
 * members have, and the index itself lacks, becomes one table of the run whose files
 * are "../<member>@latest/<file>" and which profile_db.c serves as a union view with a
 * `profile` column; its files are kept as member and base name numbers, not as paths
 * (nx__ptable_file renders them). Members must be sibling profile directories that
 * resolve inside the data path, and hold no link (profile_files.h); the others are
 * skipped. Their directories join the run's identity, so a member changed later is
 * noticed. No DuckDB here. */
#include "common/compat.h"
#include "server/profile_files.h"
#include "server/paths.h"
#include "common/fsutil.h"
#include "common/xalloc.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define MEMBERS_FILE "fleet-members.txt"

static int cmp_table(const void *a, const void *b)
{
	return strcmp(((const struct nx_ptable *)a)->name, ((const struct nx_ptable *)b)->name);
}

static struct nx_ptable *union_table(struct nx_pfiles *pf, const char *name)
{
	for (size_t i = 0; i < pf->n; i++)
		if (!strcasecmp(pf->t[i].name, name))
			return pf->t[i].members ? &pf->t[i] : NULL; /* the index's own wins */
	pf->t = nx_xrealloc(pf->t, (pf->n + 1) * sizeof(*pf->t));
	struct nx_ptable *t = &pf->t[pf->n++];
	memset(t, 0, sizeof(*t));
	t->name = nx_xstrdup(name);
	t->members = true;
	t->run = pf->members;
	return t;
}

/* The number of base name base in t, added when new. */
static uint32_t base_of(struct nx_ptable *t, const char *base)
{
	for (size_t i = 0; i < t->nbases; i++)
		if (!strcmp(t->bases[i], base))
			return (uint32_t)i;
	t->bases = nx_xrealloc(t->bases, (t->nbases + 1) * sizeof(*t->bases));
	t->bases[t->nbases] = nx_xstrdup(base);
	return (uint32_t)t->nbases++;
}

static void add_member(struct nx_pfiles *pf, const char *global, const char *member)
{
	char *path = nx_xasprintf("%s/%s@latest", global, member);
	char *real = nx__path_resolve_within(global, path);
	struct nx_pfiles m;
	struct nx_err ignored = { 0 };
	bool used = false;

	free(path);
	if (!real || !nx_is_dir(real) || nx__pfiles_scan_plain(real, &m, &ignored)) {
		free(real);
		return;
	}
	for (size_t i = 0; i < m.n; i++) {
		struct nx_ptable *t = union_table(pf, m.t[i].name);

		if (!t)
			continue;
		t->mf = nx_xrealloc(t->mf, (t->nfiles + m.t[i].nfiles) * sizeof(*t->mf));
		t->sizes = nx_xrealloc(t->sizes, (t->nfiles + m.t[i].nfiles) * sizeof(*t->sizes));
		for (size_t j = 0; j < m.t[i].nfiles; j++) {
			t->mf[t->nfiles].member = (uint32_t)pf->members->n;
			t->mf[t->nfiles].base = base_of(t, m.t[i].files[j]);
			t->sizes[t->nfiles++] = m.t[i].sizes[j];
			t->bytes += m.t[i].sizes[j];
			used = true;
		}
	}
	if (used) {
		struct nx_pmembers *pm = pf->members;

		pm->name = nx_xrealloc(pm->name, (pm->n + 1) * sizeof(*pm->name));
		pm->name[pm->n++] = nx_xstrdup(member);
	}
	nx__pfiles_take_dirs(pf, &m, real);
	nx__pfiles_release(&m);
	pf->allow = nx_xrealloc(pf->allow, (pf->nallow + 1) * sizeof(*pf->allow));
	pf->allow[pf->nallow++] = real;
}

int nx__pfiles_scan_fleet(const char *dir, struct nx_pfiles *pf, struct nx_err *err)
{
	char *list = nx_path_join(dir, MEMBERS_FILE), *data = NULL, *global, *line, *next;
	const char *slash = strrchr(dir, '/');
	size_t len = 0;
	int rc;

	if (!nx_is_file(list) || !slash) {
		free(list);
		return 0;
	}
	rc = nx_read_file(list, &data, &len, err);
	free(list);
	if (rc)
		return rc;
	global = nx_xstrndup(dir, (size_t)(slash - dir));
	if (!pf->members)
		pf->members = nx_xcalloc(1, sizeof(*pf->members));
	for (line = data; line && *line; line = next) {
		next = strchr(line, '\n');
		if (next)
			*next++ = '\0';
		if (*line && !nx__path_check_name(line))
			add_member(pf, global, line);
	}
	if (pf->n)
		qsort(pf->t, pf->n, sizeof(*pf->t), cmp_table);
	free(global);
	free(data);
	return 0;
}
