/* SPDX-License-Identifier: MIT
 * task.c: one fleet task (the atomic ingest of one pair or trace as a member profile)
 * and its status files <data>/fleet/<run>/status/<profile>.{running,done,failed}, each
 * one line (below). A task killed mid-way leaves
 * only its .running file (and the ingest's hidden temporary directory, which the next
 * ingest of the same name removes); its state then reads as failed "killed". The line
 * is "host<TAB>pid<TAB>job<TAB>seconds<TAB>peak RSS kB<TAB>message". */
#include "common/compat.h"
#include "fleet/fleet.h"
#include "common/fsutil.h"
#include "common/strbuf.h"
#include "common/xalloc.h"
#include "ingest/ingest.h"
#include "ingest/ingest_dir.h"

#include <signal.h>
#include <sys/resource.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static char *status_path(const char *data_path, const char *run, const char *profile,
			 const char *ext)
{
	return nx_xasprintf("%s/fleet/%s/status/%s.%s", data_path, run, profile, ext);
}

static void host_name(char *buf, size_t n)
{
	if (gethostname(buf, n) != 0)
		snprintf(buf, n, "?");
	buf[n - 1] = '\0';
}

/* The Slurm job of this process ("<array job>_<index>" in an array), else "-". */
static char *job_name(void)
{
	const char *a = getenv("SLURM_ARRAY_JOB_ID"), *i = getenv("SLURM_ARRAY_TASK_ID");
	const char *j = getenv("SLURM_JOB_ID");

	if (a && i)
		return nx_xasprintf("%s_%s", a, i);
	return nx_xstrdup(j ? j : "-");
}

static int write_status(const char *path, double seconds, const char *msg, struct nx_err *err)
{
	char host[256];
	char *job = job_name();
	struct nx_strbuf sb = NX_STRBUF_INIT;
	int rc;

	struct rusage ru;

	host_name(host, sizeof(host));
	if (getrusage(RUSAGE_SELF, &ru))
		ru.ru_maxrss = 0;
	nx_strbuf_addf(&sb, "%s\t%d\t%s\t%.3f\t%ld\t", host, (int)getpid(), job, seconds,
		       (long)ru.ru_maxrss);
	for (const char *m = msg; *m; m++)
		nx_strbuf_addch(&sb, *m == '\n' || *m == '\t' || *m == '\r' ? ' ' : *m);
	nx_strbuf_addch(&sb, '\n');
	rc = nx_write_file_atomic(path, sb.buf, sb.len, err);
	nx_strbuf_release(&sb);
	free(job);
	return rc;
}

const char *nx_fleet_state_name(enum nx_fleet_state s)
{
	switch (s) {
	case NX_FLEET_RUNNING: return "running";
	case NX_FLEET_DONE: return "done";
	case NX_FLEET_FAILED: return "failed";
	default: return "pending";
	}
}

void nx_fleet_status_release(struct nx_fleet_status *st)
{
	free(st->where);
	free(st->message);
	memset(st, 0, sizeof(*st));
}

/* Reads a status file: 0 when it exists and parses. */
static int read_status(const char *path, char **host, int *pid, char **job, double *secs,
		       long *rss, char **msg)
{
	char *data = NULL, *f[6] = { 0 }, *s;
	size_t len = 0, n = 0;
	struct nx_err ignored = { 0 };

	if (!nx_is_file(path) || nx_read_file(path, &data, &len, &ignored))
		return -1;
	s = data;
	while (n < 6) {
		f[n++] = s;
		s = strchr(s, n < 6 ? '\t' : '\n');
		if (!s)
			break;
		*s++ = '\0';
	}
	for (; n < 6; n++)
		f[n] = (char *)"";
	*host = nx_xstrdup(f[0]);
	*pid = atoi(f[1]);
	*job = nx_xstrdup(f[2]);
	*secs = atof(f[3]);
	*rss = atol(f[4]);
	*msg = nx_xstrdup(f[5]);
	free(data);
	return 0;
}

void nx_fleet_task_status(const char *data_path, const char *run, const struct nx_fleet_task *t,
			  struct nx_fleet_status *st)
{
	static const char *const exts[] = { "done", "running", "failed" };
	char *profile = nx_profile_dir(data_path, t->profile);
	bool published = nx_is_dir(profile);

	memset(st, 0, sizeof(*st));
	free(profile);
	for (size_t k = 0; k < NX_ARRAY_SIZE(exts); k++) {
		char *path = status_path(data_path, run, t->profile, exts[k]);
		char *host = NULL, *job = NULL, *msg = NULL;
		int pid = 0, rc = read_status(path, &host, &pid, &job, &st->seconds, &st->rss_kb,
					     &msg);

		free(path);
		if (rc)
			continue;
		st->where = nx_xasprintf("%s pid %d job %s", host, pid, job);
		if (k == 0 && published) {
			st->state = NX_FLEET_DONE;
			st->message = nx_xstrdup("");
		} else if (k == 0) {
			st->state = NX_FLEET_PENDING;
			st->message = nx_xstrdup("marked done but the profile is gone");
		} else if (k == 1) {
			char me[256];

			host_name(me, sizeof(me));
			if (!strcmp(host, me) && pid > 0 && kill(pid, 0) != 0 && errno == ESRCH) {
				st->state = NX_FLEET_FAILED;
				st->message = nx_xasprintf("killed: process %d on %s ended without "
							   "a result", pid, host);
			} else {
				st->state = NX_FLEET_RUNNING;
				st->message = nx_xstrdup("");
			}
			st->seconds = 0;
			st->rss_kb = 0;
		} else {
			st->state = NX_FLEET_FAILED;
			st->message = nx_xstrdup(msg);
		}
		free(host);
		free(job);
		free(msg);
		return;
	}
	st->state = NX_FLEET_PENDING;
	st->where = nx_xstrdup("");
	st->message = nx_xstrdup("");
}

/* An old status file that cannot be removed would give the task a wrong state. */
static int remove_status(const char *path, struct nx_err *err)
{
	if (unlink(path) == 0 || errno == ENOENT)
		return 0;
	return nx_errf(err, -errno, "cannot remove the status file '%s': %s", path,
		       strerror(errno));
}

/* status/<member>.lock, held while the task runs: a second process given the same task
 * (a re-run while it runs, a Slurm array element started twice) leaves it alone. */
static int lock_task(const char *data_path, const char *run, const char *profile, int *fd,
		     struct nx_err *err)
{
	char *path = status_path(data_path, run, profile, "lock");
	int rc = nx_lock_file(path, false, fd, err);

	if (rc == -EBUSY)
		rc = nx_errf(err, -EBUSY, "member '%s' is being ingested by another process (%s "
			     "is locked)", profile, path);
	free(path);
	return rc;
}

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int nx_fleet_run_task(const char *data_path, const char *run, const struct nx_fleet_task *t,
		      size_t i, struct nx_err *err)
{
	char *running = status_path(data_path, run, t->profile, "running");
	char *done = status_path(data_path, run, t->profile, "done");
	char *failed = status_path(data_path, run, t->profile, "failed");
	double t0 = now_s();
	int lock = -1, rc;

	if ((rc = lock_task(data_path, run, t->profile, &lock, err)))
		goto out;
	if ((rc = write_status(running, 0, "", err)) || (rc = remove_status(done, err)) ||
	    (rc = remove_status(failed, err))) {
		nx_err_wrap(err, "task %zu (%s)", i, t->profile);
		goto out;
	}
	if (t->kind == NX_FLEET_DEVICE) {
		struct nx_ingest_opts io = { 0 };

		io.neff_path = t->neff;
		io.ntff_path = t->input;
		io.data_path = data_path;
		io.display_name = t->profile;
		io.quiet = true;
		rc = nx_ingest(&io, NULL, err);
	} else {
		struct nx_trace_opts to = { 0 };

		to.input = t->input;
		to.data_path = data_path;
		to.display_name = t->profile;
		rc = nx_trace_ingest_dir(&to, NULL, err);
	}
	if (rc) {
		struct nx_err e2 = { 0 };

		nx_err_wrap(err, "task %zu (%s)", i, t->profile);
		write_status(failed, now_s() - t0, err->msg, &e2);
	} else {
		rc = write_status(done, now_s() - t0, "", err);
	}
	if (!rc)
		rc = remove_status(running, err);
	else
		remove(running);
out:
	if (lock >= 0)
		close(lock);
	free(running);
	free(done);
	free(failed);
	return rc;
}
