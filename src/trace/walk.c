/* SPDX-License-Identifier: MIT
 * walk.c: directory mode's file discovery and NEFF/NTFF pairing (see walk.h). */
#include "common/compat.h"
#include "trace/walk.h"
#include "common/fsutil.h"
#include "common/xalloc.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#define MAX_DEPTH 32

struct neff_file {
	char *path, *dir, *hash;
};

struct walk {
	struct nx_found *f;
	size_t trace_cap, pair_cap, lone_cap, neff_cap, ntff_cap, nneff, nntff;
	struct neff_file *neffs;
	char **ntffs;
};

static bool ends_with(const char *s, const char *suffix)
{
	size_t a = strlen(s), b = strlen(suffix);
	return a >= b && !strcmp(s + a - b, suffix);
}

static bool all_digits(const char *s, size_t n)
{
	if (!n)
		return false;
	for (size_t i = 0; i < n; i++)
		if (s[i] < '0' || s[i] > '9')
			return false;
	return true;
}

static bool is_trace_name(const char *b)
{
	static const char rank[] = "neuron_framework_trace_rank_";
	if (!strcmp(b, "trace.json") || !strcmp(b, "trace.json.gz") ||
	    ends_with(b, ".trace.json") || ends_with(b, ".trace.json.gz"))
		return true;
	if (strncmp(b, rank, sizeof(rank) - 1))
		return false;
	const char *d = b + sizeof(rank) - 1, *e = strstr(d, ".json");
	return e && all_digits(d, (size_t)(e - d)) && (!strcmp(e, ".json") || !strcmp(e, ".json.gz"));
}

/* The hash of neff_<hash>[_vnc_<k>].neff or graph_<hash>.neff, or NULL. */
static char *neff_hash(const char *b)
{
	const char *h;

	if (!ends_with(b, ".neff"))
		return NULL;
	if (!strncmp(b, "neff_", 5))
		h = b + 5;
	else if (!strncmp(b, "graph_", 6))
		h = b + 6;
	else
		return NULL;
	const char *e = strstr(h, "_vnc_");
	if (!e)
		e = b + strlen(b) - 5;
	return e > h ? nx_xstrndup(h, (size_t)(e - h)) : NULL;
}

/* Parses <hash>_instid_<i>_vnc_<k>.ntff. */
static bool ntff_parts(const char *b, char **hash, int64_t *instid, int64_t *vnc)
{
	const char *i = strstr(b, "_instid_"), *v;
	char *end;

	if (!i || i == b || !ends_with(b, ".ntff"))
		return false;
	v = strstr(i, "_vnc_");
	if (!v)
		return false;
	*instid = strtoll(i + 8, &end, 10);
	if (end != v)
		return false;
	*vnc = strtoll(v + 5, &end, 10);
	if (strcmp(end, ".ntff"))
		return false;
	*hash = nx_xstrndup(b, (size_t)(i - b));
	return true;
}

char *nx_trace_neff_names(const char *ntff)
{
	const char *base = strrchr(ntff, '/');
	char *hash = NULL, *names;
	int64_t instid, vnc;

	base = base ? base + 1 : ntff;
	if (!ntff_parts(base, &hash, &instid, &vnc))
		return nx_xstrdup("a NEFF named after the NTFF's hash");
	names = nx_xasprintf("neff_%s.neff, neff_%s_vnc_%" PRId64 ".neff or graph_%s.neff", hash,
			     hash, vnc, hash);
	free(hash);
	return names;
}

static char *dir_of(const char *path)
{
	const char *s = strrchr(path, '/');
	return s ? nx_xstrndup(path, (size_t)(s - path)) : nx_xstrdup(".");
}

/* Finds "<instance>_pid_<pid>" among the directories of path. */
static bool capture_dir(const char *path, char **instance, int64_t *pid)
{
	const char *seg = path, *slash;

	while ((slash = strchr(seg, '/'))) {
		const char *p = NULL;
		for (const char *q = seg; q + 5 <= slash; q++)
			if (!strncmp(q, "_pid_", 5))
				p = q;
		if (p && p > seg && all_digits(p + 5, (size_t)(slash - p - 5))) {
			if (instance)
				*instance = nx_xstrndup(seg, (size_t)(p - seg));
			if (pid)
				*pid = strtoll(p + 5, NULL, 10);
			return true;
		}
		seg = slash + 1;
	}
	return false;
}

char *nx_trace_instance_of(const char *path)
{
	static const char *const suffixes[] = { ".gz", ".json", ".trace", ".pt" };
	char *inst = NULL;
	const char *b = strrchr(path, '/');

	if (capture_dir(path, &inst, NULL))
		return inst;
	inst = nx_xstrdup(b ? b + 1 : path);
	for (size_t i = 0; i < NX_ARRAY_SIZE(suffixes); i++)
		if (ends_with(inst, suffixes[i]) && strlen(inst) > strlen(suffixes[i]))
			inst[strlen(inst) - strlen(suffixes[i])] = '\0';
	return inst;
}

static void add_file(struct walk *w, const char *path, const char *base)
{
	struct nx_found *f = w->f;
	char *h;
	int64_t a, b;

	if (is_trace_name(base)) {
		NX_GROW(f->traces, f->ntraces + 1, w->trace_cap);
		f->traces[f->ntraces++] = nx_xstrdup(path);
	} else if ((h = neff_hash(base))) {
		NX_GROW(w->neffs, w->nneff + 1, w->neff_cap);
		w->neffs[w->nneff].path = nx_xstrdup(path);
		w->neffs[w->nneff].dir = dir_of(path);
		w->neffs[w->nneff++].hash = h;
	} else if (ntff_parts(base, &h, &a, &b)) {
		free(h);
		NX_GROW(w->ntffs, w->nntff + 1, w->ntff_cap);
		w->ntffs[w->nntff++] = nx_xstrdup(path);
	}
}

static int walk_dir(struct walk *w, const char *dir, int depth, struct nx_err *err)
{
	DIR *dp;
	struct dirent *de;
	int rc = 0;

	if (depth > MAX_DEPTH)
		return nx_errf(err, NX_EUSAGE, "'%s' lies more than %d directories deep, deeper "
			       "than the walk goes; give a directory nearer to the traces", dir,
			       MAX_DEPTH);
	dp = opendir(dir);
	if (!dp)
		return nx_errf(err, -errno, "cannot read directory '%s': %s", dir, strerror(errno));
	while (!rc && (de = readdir(dp))) {
		struct stat st;
		if (de->d_name[0] == '.')
			continue;
		char *p = nx_path_join(dir, de->d_name);
		if (lstat(p, &st) == 0) {
			if (S_ISDIR(st.st_mode))
				rc = walk_dir(w, p, depth + 1, err);
			else if (S_ISREG(st.st_mode) || (S_ISLNK(st.st_mode) && nx_is_file(p)))
				add_file(w, p, de->d_name);
		}
		free(p);
	}
	closedir(dp);
	return rc;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static void pair_ntffs(struct walk *w)
{
	struct nx_found *f = w->f;

	for (size_t i = 0; i < w->nntff; i++) {
		const char *path = w->ntffs[i], *base = strrchr(path, '/');
		char *hash = NULL, *dir = dir_of(path);
		struct nx_dev_pair p = { 0 };
		const struct neff_file *best = NULL;

		base = base ? base + 1 : path;
		ntff_parts(base, &hash, &p.instid, &p.vnc);
		for (size_t k = 0; k < w->nneff; k++) {
			if (strcmp(w->neffs[k].hash, hash))
				continue;
			if (!best || (!strcmp(w->neffs[k].dir, dir) && strcmp(best->dir, dir)))
				best = &w->neffs[k];
		}
		free(hash);
		free(dir);
		if (!best) {
			NX_GROW(f->lone, f->nlone + 1, w->lone_cap);
			f->lone[f->nlone++] = nx_xstrdup(path);
			continue;
		}
		p.neff = nx_xstrdup(best->path);
		p.ntff = nx_xstrdup(path);
		p.name = nx_xstrndup(base, strlen(base) - 5);
		if (!capture_dir(path, &p.instance, &p.pid))
			p.instance = nx_xstrdup("");
		NX_GROW(f->pairs, f->npairs + 1, w->pair_cap);
		f->pairs[f->npairs++] = p;
	}
}

int nx_trace_walk(const char *root, struct nx_found *f, struct nx_err *err)
{
	struct walk w = { .f = f };
	int rc = 0;

	memset(f, 0, sizeof(*f));
	if (nx_is_file(root)) {
		f->traces = nx_xcalloc(1, sizeof(char *));
		f->traces[0] = nx_xstrdup(root);
		f->ntraces = 1;
	} else if (nx_is_dir(root)) {
		rc = walk_dir(&w, root, 0, err);
		if (f->ntraces > 1)
			qsort(f->traces, f->ntraces, sizeof(char *), cmp_str);
		if (w.nntff > 1)
			qsort(w.ntffs, w.nntff, sizeof(char *), cmp_str);
		if (!rc)
			pair_ntffs(&w);
	} else if (access(root, F_OK) != 0) {
		rc = nx_errf(err, NX_ENOTFOUND, "'%s': %s", root,
			     errno == ENOENT ? "no such file or directory" : strerror(errno));
	} else {
		rc = nx_errf(err, NX_EUSAGE, "'%s' is neither a directory nor a regular file", root);
	}
	if (f->ntraces) {
		f->instances = nx_xcalloc(f->ntraces, sizeof(char *));
		for (size_t i = 0; i < f->ntraces; i++)
			f->instances[i] = nx_trace_instance_of(f->traces[i]);
	}
	for (size_t i = 0; i < w.nneff; i++) {
		free(w.neffs[i].path);
		free(w.neffs[i].dir);
		free(w.neffs[i].hash);
	}
	free(w.neffs);
	for (size_t i = 0; i < w.nntff; i++)
		free(w.ntffs[i]);
	free(w.ntffs);
	return rc;
}

void nx_found_release(struct nx_found *f)
{
	for (size_t i = 0; i < f->ntraces; i++) {
		free(f->traces[i]);
		if (f->instances)
			free(f->instances[i]);
	}
	free(f->traces);
	free(f->instances);
	for (size_t i = 0; i < f->npairs; i++) {
		free(f->pairs[i].neff);
		free(f->pairs[i].ntff);
		free(f->pairs[i].name);
		free(f->pairs[i].instance);
	}
	free(f->pairs);
	for (size_t i = 0; i < f->nlone; i++)
		free(f->lone[i]);
	free(f->lone);
	memset(f, 0, sizeof(*f));
}
