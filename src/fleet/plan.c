/* SPDX-License-Identifier: MIT
 * plan.c: the fleet planner (run tree -> tasks and member profile names) and the
 * manifest <data>/fleet/<run>/manifest.tsv that writes the plan down (see fleet.h). A
 * member's name comes from its input alone (its path in the run and a fingerprint of its
 * content), so it is the same in every re-plan, whatever else the tree holds. */
#include "common/compat.h"
#include "fleet/fleet.h"
#include "common/fsutil.h"
#include "common/le.h"
#include "common/sha256.h"
#include "common/strbuf.h"
#include "common/xalloc.h"
#include "ingest/ingest.h"
#include "trace/walk.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define MANIFEST_HEADER "task\tkind\tprofile\tinstance\tpid\tnc\tmodel_id\trank\tneff\tinput"
#define NCOLS 10

char *nx_fleet_dir(const char *data_path, const char *run)
{
	return nx_xasprintf("%s/fleet/%s", data_path, run);
}

void nx_fleet_task_release(struct nx_fleet_task *t)
{
	free(t->profile);
	free(t->instance);
	free(t->neff);
	free(t->input);
	memset(t, 0, sizeof(*t));
}

void nx_fleet_plan_release(struct nx_fleet_plan *p)
{
	for (size_t i = 0; i < p->n; i++)
		nx_fleet_task_release(&p->t[i]);
	free(p->t);
	free(p->run);
	memset(p, 0, sizeof(*p));
}

/* Characters a display name may not hold become '_', and so does the '.' of ".tmp". */
static void sanitize(char *s)
{
	for (char *c = s; *c; c++)
		if (!((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') ||
		      (*c >= '0' && *c <= '9') || *c == '-' || *c == '_' || *c == '.'))
			*c = '_';
	for (char *t = strstr(s, ".tmp"); t; t = strstr(t, ".tmp"))
		*t = '_';
}

/* The content fingerprint of an input: its size and its first and last 64 KiB, which
 * for an NTFF hold the header (with the NEFF's uuid) and the END chunk's totals. */
static int fingerprint(const char *path, struct nx_sha256 *h, struct nx_err *err)
{
	static const size_t part = 65536;
	uint8_t *buf = nx_xmalloc(part), size_le[8];
	int fd = open(path, O_RDONLY | O_CLOEXEC), rc = 0;
	struct stat st;

	if (fd < 0 || fstat(fd, &st) != 0) {
		rc = nx_errf(err, NX_ENOTFOUND, "cannot read '%s': %s", path, strerror(errno));
		goto out;
	}
	nx_put_le64(size_le, (uint64_t)st.st_size);
	nx_sha256_update(h, size_le, sizeof(size_le));
	for (int k = 0; k < 2; k++) {
		off_t at = k == 0 || st.st_size <= (off_t)part ? 0 : st.st_size - (off_t)part;
		ssize_t n = pread(fd, buf, part, at);

		if (n < 0) {
			rc = nx_errf(err, -errno, "cannot read '%s': %s", path, strerror(errno));
			break;
		}
		nx_sha256_update(h, buf, (size_t)n);
	}
out:
	if (fd >= 0)
		close(fd);
	free(buf);
	return rc;
}

/* A member's name: <run>-<label>-<id>, where <id> is 8 hex digits of SHA-256 over the
 * task's kind, its input's path relative to the run directory (and its NEFF's), and the
 * input's content fingerprint. The label is cut to keep the name within NX_NAME_MAX. */
static int member_name(const char *run, const char *root, char kind, const char *input,
		       const char *neff, char *label, char **name, struct nx_err *err)
{
	struct nx_sha256 h;
	uint8_t d[NX_SHA256_SIZE];
	size_t rl = strlen(root), room;
	const char *in_rel = strncmp(input, root, rl) ? input : input + rl;
	const char *neff_rel = strncmp(neff, root, rl) ? neff : neff + rl;
	int rc;

	nx_sha256_init(&h);
	nx_sha256_update(&h, &kind, 1);
	nx_sha256_update(&h, in_rel, strlen(in_rel) + 1);
	nx_sha256_update(&h, neff_rel, strlen(neff_rel) + 1);
	if ((rc = fingerprint(input, &h, err)))
		return rc;
	nx_sha256_final(&h, d);
	sanitize(label);
	room = NX_NAME_MAX - strlen(run) - 10; /* "-", "-" and 8 digits */
	if (strlen(label) > room)
		label[room] = '\0';
	*name = label[0] ? nx_xasprintf("%s-%s-%02x%02x%02x%02x", run, label, d[0], d[1], d[2], d[3])
			 : nx_xasprintf("%s-%02x%02x%02x%02x", run, d[0], d[1], d[2], d[3]);
	return 0;
}

static int cmp_profile(const void *a, const void *b)
{
	const struct nx_fleet_task *const *x = a, *const *y = b;

	return strcmp((*x)->profile, (*y)->profile);
}

/* Two inputs with one member name (the same path and content fingerprint cannot occur
 * twice in one walk, but a hash can collide): found by sorting the names once, where a
 * search of the names planned so far for each new one would grow with the square of
 * the run. */
static int check_unique(const struct nx_fleet_plan *p, struct nx_err *err)
{
	const struct nx_fleet_task **order = nx_xcalloc(p->n ? p->n : 1, sizeof(*order));
	int rc = 0;

	for (size_t i = 0; i < p->n; i++)
		order[i] = &p->t[i];
	qsort(order, p->n, sizeof(*order), cmp_profile);
	for (size_t i = 1; i < p->n && !rc; i++) {
		const struct nx_fleet_task *a = order[i - 1], *b = order[i];

		if (!strcmp(a->profile, b->profile))
			rc = nx_errf(err, NX_ECORRUPT, "'%s' and '%s' of the run have the same "
				     "identity %s", a->input, b->input, b->profile);
	}
	free(order);
	return rc;
}

static char *absolute(const char *path)
{
	char *r = realpath(path, NULL);
	return r ? r : nx_xstrdup(path);
}

static int64_t rank_of(const char *path)
{
	static const char key[] = "neuron_framework_trace_rank_";
	const char *b = strrchr(path, '/'), *k;

	b = b ? b + 1 : path;
	k = strstr(b, key);
	if (!k)
		return -1;
	k += sizeof(key) - 1;
	if (*k < '0' || *k > '9')
		return -1;
	return strtoll(k, NULL, 10);
}

/* <instance>_pid_<pid> directory of a trace, for its pid. */
static int64_t pid_of(const char *path)
{
	const char *seg = path, *slash;

	while ((slash = strchr(seg, '/'))) {
		const char *p = NULL;
		for (const char *q = seg; q + 5 <= slash; q++)
			if (!strncmp(q, "_pid_", 5))
				p = q;
		if (p && p > seg && p + 5 < slash) {
			bool digits = true;
			for (const char *d = p + 5; d < slash; d++)
				digits = digits && *d >= '0' && *d <= '9';
			if (digits)
				return strtoll(p + 5, NULL, 10);
		}
		seg = slash + 1;
	}
	return -1;
}

static int check_field(const char *s, const char *what, struct nx_err *err)
{
	if (strpbrk(s, "\t\n\r"))
		return nx_errf(err, NX_EUSAGE, "%s '%s' holds a tab or a line break, which the "
			       "fleet manifest cannot record", what, s);
	return 0;
}

int nx_fleet_check_run(const char *data_path, const char *run, struct nx_err *err)
{
	char *dir = nx_profile_dir(data_path, run);
	char *members = nx_path_join(dir, NX_FLEET_MEMBERS);
	int rc = nx_check_display_name(run, err);

	if (!rc && strlen(run) > NX_FLEET_RUN_MAX)
		rc = nx_errf(err, NX_EUSAGE, "the run name is %zu characters long; a fleet run's "
			     "name has at most %d, so that its members' names fit", strlen(run),
			     NX_FLEET_RUN_MAX);
	else if (!rc && nx_is_dir(dir) && !nx_is_file(members))
		rc = nx_errf(err, NX_EUSAGE, "profile '%s' already exists and is not a fleet run "
			     "(it has no %s); choose another --display-name (nothing was "
			     "changed)", run, NX_FLEET_MEMBERS);
	free(dir);
	free(members);
	return rc;
}

/* One task per NEFF/NTFF pair found. */
static int plan_pairs(struct nx_fleet_plan *p, const struct nx_found *f, const char *root,
		      size_t *cap, struct nx_err *err)
{
	int rc = 0;

	for (size_t i = 0; i < f->npairs && !rc; i++) {
		const struct nx_dev_pair *d = &f->pairs[i];
		struct nx_fleet_task t = { .kind = NX_FLEET_DEVICE, .rank = -1 };
		char *label = d->instance[0] ? nx_xasprintf("%s_pid_%" PRId64 "-%s", d->instance,
							    d->pid, d->name)
					     : nx_xstrdup(d->name);

		t.instance = nx_xstrdup(d->instance);
		t.pid = d->instance[0] ? d->pid : -1;
		t.nc = d->vnc;
		t.model = d->instid;
		t.neff = absolute(d->neff);
		t.input = absolute(d->ntff);
		rc = member_name(p->run, root, 'd', t.input, t.neff, label, &t.profile, err);
		free(label);
		NX_GROW(p->t, p->n + 1, *cap);
		p->t[p->n++] = t;
		if (!rc)
			rc = check_field(t.input, "NTFF path", err);
		if (!rc)
			rc = check_field(t.neff, "NEFF path", err);
		if (!rc)
			rc = check_field(t.instance, "instance", err);
	}
	return rc;
}

/* One task per framework trace file found. */
static int plan_traces(struct nx_fleet_plan *p, const struct nx_found *f, const char *root,
		       size_t *cap, struct nx_err *err)
{
	int rc = 0;

	for (size_t i = 0; i < f->ntraces && !rc; i++) {
		struct nx_fleet_task t = { .kind = NX_FLEET_TRACE, .nc = -1, .model = -1 };
		char *label;

		t.instance = nx_xstrdup(f->instances[i]);
		t.pid = pid_of(f->traces[i]);
		t.rank = rank_of(f->traces[i]);
		t.neff = nx_xstrdup("");
		t.input = absolute(f->traces[i]);
		label = t.rank >= 0 ? nx_xasprintf("trace-%s-rank%" PRId64, t.instance, t.rank)
				    : nx_xasprintf("trace-%s", t.instance);
		rc = member_name(p->run, root, 't', t.input, "", label, &t.profile, err);
		free(label);
		NX_GROW(p->t, p->n + 1, *cap);
		p->t[p->n++] = t;
		if (!rc)
			rc = check_field(t.input, "trace path", err);
		if (!rc)
			rc = check_field(t.instance, "instance", err);
	}
	return rc;
}

int nx_fleet_plan(const char *run_dir, const char *run, struct nx_fleet_plan *p,
		  struct nx_err *err)
{
	struct nx_found f;
	size_t cap = 0;
	char *root = NULL;
	int rc;

	memset(p, 0, sizeof(*p));
	if ((rc = nx_check_display_name(run, err)))
		return rc;
	if (!nx_is_dir(run_dir))
		return nx_errf(err, NX_ENOTFOUND, "run directory '%s': %s", run_dir,
			       access(run_dir, F_OK) ? "no such file or directory"
						     : "not a directory");
	if ((rc = nx_trace_walk(run_dir, &f, err)))
		return rc;
	p->run = nx_xstrdup(run);
	if (!f.npairs && !f.ntraces) {
		rc = nx_errf(err, NX_ENOTFOUND, "no NEFF/NTFF pair and no framework trace under '%s'",
			     run_dir);
		goto out;
	}
	root = realpath(run_dir, NULL);
	if (!root)
		root = nx_xstrdup(run_dir);
	root = nx_xrealloc(root, strlen(root) + 2);
	strcat(root, "/");
	rc = plan_pairs(p, &f, root, &cap, err);
	if (!rc)
		rc = plan_traces(p, &f, root, &cap, err);
	if (!rc)
		rc = check_unique(p, err);
out:
	free(root);
	nx_found_release(&f);
	if (rc)
		nx_fleet_plan_release(p);
	return rc;
}

void nx_fleet_row(struct nx_strbuf *sb, size_t number, const struct nx_fleet_task *t)
{
	nx_strbuf_addf(sb, "%zu\t%s\t%s\t%s\t", number,
		       t->kind == NX_FLEET_DEVICE ? "device" : "trace", t->profile, t->instance);
	if (t->pid >= 0)
		nx_strbuf_addf(sb, "%" PRId64, t->pid);
	nx_strbuf_addch(sb, '\t');
	if (t->nc >= 0)
		nx_strbuf_addf(sb, "%" PRId64, t->nc);
	nx_strbuf_addch(sb, '\t');
	if (t->model >= 0)
		nx_strbuf_addf(sb, "%" PRId64, t->model);
	nx_strbuf_addch(sb, '\t');
	if (t->rank >= 0)
		nx_strbuf_addf(sb, "%" PRId64, t->rank);
	nx_strbuf_addf(sb, "\t%s\t%s", t->neff, t->input);
}

int nx_fleet_manifest_write(const char *data_path, const struct nx_fleet_plan *p,
			    struct nx_err *err)
{
	char *dir = nx_fleet_dir(data_path, p->run);
	char *status = nx_path_join(dir, "status");
	char *logs = nx_path_join(dir, "logs");
	char *path = nx_path_join(dir, "manifest.tsv");
	struct nx_strbuf sb = NX_STRBUF_INIT;
	int rc;

	nx_strbuf_addstr(&sb, MANIFEST_HEADER "\n");
	for (size_t i = 0; i < p->n; i++) {
		nx_fleet_row(&sb, i, &p->t[i]);
		nx_strbuf_addch(&sb, '\n');
	}
	rc = nx_mkdirs(status, err);
	if (!rc)
		rc = nx_mkdirs(logs, err);
	if (!rc)
		rc = nx_write_file_atomic(path, sb.buf, sb.len, err);
	nx_strbuf_release(&sb);
	free(dir);
	free(status);
	free(logs);
	free(path);
	return rc;
}

static int parse_i64(const char *s, int64_t *v)
{
	char *end;

	if (!*s) {
		*v = -1;
		return 0;
	}
	errno = 0;
	*v = strtoll(s, &end, 10);
	return *end || errno || *v < 0 ? -1 : 0;
}

int nx_fleet_row_parse(const char *run, char *line, const char *path, size_t lineno,
		       size_t *number, struct nx_fleet_task *t, struct nx_err *err)
{
	char *col[NCOLS], *s = line;
	size_t nc = 0;
	int64_t task, v[4];
	struct nx_err e = { 0 };

	memset(t, 0, sizeof(*t));
	while (nc < NCOLS) {
		col[nc++] = s;
		s = strchr(s, '\t');
		if (!s)
			break;
		*s++ = '\0';
	}
	if (nc != NCOLS || s)
		return nx_errf(err, NX_ECORRUPT, "'%s': line %zu: %s columns, expected %d", path,
			       lineno, s ? "too many" : "too few", NCOLS);
	if (parse_i64(col[0], &task) || task < 0 || parse_i64(col[4], &v[0]) ||
	    parse_i64(col[5], &v[1]) || parse_i64(col[6], &v[2]) || parse_i64(col[7], &v[3]) ||
	    (strcmp(col[1], "device") && strcmp(col[1], "trace")) || !col[2][0] || !col[9][0])
		return nx_errf(err, NX_ECORRUPT, "'%s': line %zu: malformed task row", path,
			       lineno);
	/* every name read back goes into paths: it must be one of this run's members */
	if (nx_check_display_name(col[2], &e) || strncmp(col[2], run, strlen(run)) ||
	    col[2][strlen(run)] != '-')
		return nx_errf(err, NX_ECORRUPT, "'%s': line %zu: '%.200s' is not a member name "
			       "of run '%s'", path, lineno, col[2], run);
	*number = (size_t)task;
	t->kind = strcmp(col[1], "device") ? NX_FLEET_TRACE : NX_FLEET_DEVICE;
	t->profile = nx_xstrdup(col[2]);
	t->instance = nx_xstrdup(col[3]);
	t->pid = v[0];
	t->nc = v[1];
	t->model = v[2];
	t->rank = v[3];
	t->neff = nx_xstrdup(col[8]);
	t->input = nx_xstrdup(col[9]);
	return 0;
}

int nx_fleet_manifest_read(const char *data_path, const char *run, struct nx_fleet_plan *p,
			   struct nx_err *err)
{
	char *dir = nx_fleet_dir(data_path, run);
	char *path = nx_path_join(dir, "manifest.tsv");
	char *data = NULL, *line, *next;
	size_t len = 0, cap = 0, lineno = 0;
	int rc;

	memset(p, 0, sizeof(*p));
	if (!nx_is_file(path)) {
		rc = nx_errf(err, NX_ENOTFOUND, "no fleet run '%s' in '%s' (no %s); run "
			     "'neuron-explorer fleet ingest' first", run, data_path, path);
		goto out;
	}
	if ((rc = nx_read_file(path, &data, &len, err)))
		goto out;
	p->run = nx_xstrdup(run);
	for (line = data; line && *line; line = next) {
		size_t task;
		struct nx_fleet_task t;

		next = strchr(line, '\n');
		if (!next) {
			rc = nx_errf(err, NX_ETRUNC, "'%s': line %zu: truncated (no line end)", path,
				     lineno + 1);
			break;
		}
		*next++ = '\0';
		if (lineno++ == 0) {
			if (strcmp(line, MANIFEST_HEADER))
				rc = nx_errf(err, NX_EVERSION, "'%s': line 1: not a fleet manifest "
					     "header (expected '%s')", path, MANIFEST_HEADER);
			if (rc)
				break;
			continue;
		}
		if ((rc = nx_fleet_row_parse(run, line, path, lineno, &task, &t, err)))
			break;
		if (task != p->n) {
			nx_fleet_task_release(&t);
			rc = nx_errf(err, NX_ECORRUPT, "'%s': line %zu: malformed task row (task "
				     "number %zu, expected %zu)", path, lineno, task, p->n);
			break;
		}
		NX_GROW(p->t, p->n + 1, cap);
		p->t[p->n++] = t;
	}
	if (!rc && lineno == 0)
		rc = nx_errf(err, NX_ETRUNC, "'%s': empty file", path);
	if (rc)
		nx_fleet_plan_release(p);
out:
	free(data);
	free(path);
	free(dir);
	return rc;
}
