/* SPDX-License-Identifier: MIT
 * runner.c: the two ways a fleet's tasks run (see fleet.h): local subprocesses of the
 * binary itself, -j N at a time, and one Slurm job array plus a dependent index job,
 * both executing the hidden `fleet run-task` subcommand on its line of a task list
 * (tasklist.c). The Slurm scripts and task lists (line i = array index i) are kept in
 * <data>/fleet/<run>/slurm/, the local run's list in <data>/fleet/<run>/local/. */
#include "common/compat.h"
#include "fleet/fleet.h"
#include "common/fsutil.h"
#include "common/strbuf.h"
#include "common/xalloc.h"

#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* `self fleet run-task` on line k of the task list. */
static pid_t spawn(const char *self, const char *data_path, const char *run, const char *list,
		   size_t k, const char *log, const sigset_t *mask, struct nx_err *err)
{
	char num[32];
	char *argv[] = { (char *)self, (char *)"fleet", (char *)"run-task", (char *)"--data-path",
			 (char *)data_path, (char *)"--run", (char *)run, (char *)"--list",
			 (char *)list, (char *)"--array-index", num, NULL };
	pid_t pid;

	snprintf(num, sizeof(num), "%zu", k);
	pid = fork();
	if (pid < 0)
		return nx_errf(err, -errno, "cannot start a task process: %s", strerror(errno));
	if (pid == 0) {
		int fd = open(log, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
		if (fd >= 0) {
			dup2(fd, 1);
			dup2(fd, 2);
		}
		sigprocmask(SIG_SETMASK, mask, NULL); /* the mask survives exec */
		execv(self, argv);
		_exit(127);
	}
	return pid;
}

/* The local runner's processes: at most `jobs`, each a pid or 0 for a free slot. */
struct slots {
	pid_t *pid;
	unsigned jobs, active;
};

/* Reaps the task processes that have ended (all of them, waiting, when `all`). */
static void reap(struct slots *s, bool all, size_t *failed)
{
	int status;
	pid_t done;

	while (s->active && (done = waitpid(-1, &status, all ? 0 : WNOHANG)) != 0) {
		if (done < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		for (unsigned k = 0; k < s->jobs; k++)
			if (s->pid[k] == done) {
				s->pid[k] = 0;
				s->active--;
				if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
					(*failed)++;
			}
	}
}

/* <fleet dir>/local/tasks-<pid>.list: this process's task list (one at a time per run:
 * the run's lock is held). */
static char *local_list(const char *data_path, const char *run, struct nx_err *err)
{
	char *dir = nx_xasprintf("%s/fleet/%s/local", data_path, run);
	char *path = nx_xasprintf("%s/tasks-%d.list", dir, (int)getpid());

	if (nx_mkdirs(dir, err)) {
		free(path);
		path = NULL;
	}
	free(dir);
	return path;
}

int nx_fleet_run_local(const char *self, const char *data_path, const struct nx_fleet_plan *p,
		       const size_t *idx, size_t n, unsigned jobs, size_t *failed, int *stopped_by,
		       struct nx_err *err)
{
	const char *run = p->run;
	struct slots s = { 0 };
	sigset_t wait_for, old;
	size_t next = 0;
	int sig = 0, rc;
	char *list;

	*failed = 0;
	*stopped_by = 0;
	if (!(list = local_list(data_path, run, err)))
		return -EIO;
	if ((rc = nx_fleet_list_write(list, p, idx, n, err))) {
		free(list);
		return rc;
	}
	s.jobs = jobs ? jobs : 1;
	s.pid = nx_xcalloc(s.jobs, sizeof(*s.pid));
	/* SIGCHLD and the signals that stop the run are taken with sigwaitinfo: a stop is
	 * forwarded to every task process, which are all reaped before returning */
	sigemptyset(&wait_for);
	sigaddset(&wait_for, SIGCHLD);
	sigaddset(&wait_for, SIGINT);
	sigaddset(&wait_for, SIGTERM);
	sigaddset(&wait_for, SIGHUP);
	sigprocmask(SIG_BLOCK, &wait_for, &old);
	for (;;) {
		reap(&s, false, failed);
		while (!sig && !rc && next < n && s.active < s.jobs) {
			char *log = nx_xasprintf("%s/fleet/%s/logs/%s.log", data_path, run,
						 p->t[idx[next]].profile);
			pid_t pid = spawn(self, data_path, run, list, next, log, &old, err);

			free(log);
			if (pid < 0) {
				rc = pid;
				break;
			}
			for (unsigned k = 0; k < s.jobs; k++)
				if (!s.pid[k]) {
					s.pid[k] = pid;
					break;
				}
			s.active++;
			next++;
		}
		if (!s.active)
			break;
		siginfo_t si;
		int got = sigwaitinfo(&wait_for, &si);
		if (got > 0 && got != SIGCHLD && !sig) {
			sig = got;
			for (unsigned k = 0; k < s.jobs; k++)
				if (s.pid[k])
					kill(s.pid[k], sig);
		}
	}
	reap(&s, true, failed);
	sigprocmask(SIG_SETMASK, &old, NULL);
	*failed += n - next; /* not started after a spawn error or a stop */
	if (!rc && sig) {
		*stopped_by = sig;
		rc = nx_errf(err, -EINTR, "stopped by signal %d (%s) after %zu of %zu task(s) "
			     "started; their processes were stopped and reaped, and running the "
			     "command again runs what did not finish", sig, strsignal(sig), next, n);
	}
	free(s.pid);
	unlink(list);
	free(list);
	return rc;
}

/* Appends s in single quotes for /bin/sh. */
static void sh_quote(struct nx_strbuf *sb, const char *s)
{
	nx_strbuf_addch(sb, '\'');
	for (; *s; s++) {
		if (*s == '\'')
			nx_strbuf_addstr(sb, "'\\''");
		else
			nx_strbuf_addch(sb, *s);
	}
	nx_strbuf_addch(sb, '\'');
}

static int write_script(const char *path, const char *body, struct nx_err *err)
{
	int rc = nx_write_file_atomic(path, body, strlen(body), err);
	if (!rc && chmod(path, 0755))
		rc = nx_errf(err, -errno, "cannot chmod '%s': %s", path, strerror(errno));
	return rc;
}

/* Runs argv, collecting stdout and stderr; *out gets them. Returns the exit status or a
 * negative error. */
static int run_capture(char *const *argv, char **out, struct nx_err *err)
{
	int fd[2], status;
	struct nx_strbuf sb = NX_STRBUF_INIT;
	char buf[4096];
	ssize_t got;
	pid_t pid;

	if (pipe(fd))
		return nx_errf(err, -errno, "pipe: %s", strerror(errno));
	pid = fork();
	if (pid < 0) {
		close(fd[0]);
		close(fd[1]);
		return nx_errf(err, -errno, "cannot start '%s': %s", argv[0], strerror(errno));
	}
	if (pid == 0) {
		close(fd[0]);
		dup2(fd[1], 1);
		dup2(fd[1], 2);
		close(fd[1]);
		execvp(argv[0], argv);
		fprintf(stderr, "cannot run '%s': %s\n", argv[0], strerror(errno));
		_exit(127);
	}
	close(fd[1]);
	while ((got = read(fd[0], buf, sizeof(buf))) != 0) {
		if (got < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		nx_strbuf_add(&sb, buf, (size_t)got);
	}
	close(fd[0]);
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	nx_strbuf_addstr(&sb, "");
	*out = nx_strbuf_detach(&sb, NULL);
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
}

struct argv_buf {
	char **v;
	size_t n, cap;
};

static void arg(struct argv_buf *a, char *s)
{
	NX_GROW(a->v, a->n + 2, a->cap);
	a->v[a->n++] = s;
	a->v[a->n] = NULL;
}

static void argv_release(struct argv_buf *a)
{
	for (size_t i = 0; i < a->n; i++)
		free(a->v[i]);
	free(a->v);
}

static void common_args(struct argv_buf *a, const struct nx_fleet_slurm *o)
{
	if (o->partition)
		arg(a, nx_xasprintf("--partition=%s", o->partition));
	if (o->time)
		arg(a, nx_xasprintf("--time=%s", o->time));
	if (o->mem)
		arg(a, nx_xasprintf("--mem=%s", o->mem));
	for (size_t i = 0; i < o->nextra; i++)
		arg(a, nx_xstrdup(o->extra[i]));
}

/* sbatch --parsable prints "<jobid>[;<cluster>]". */
static int sbatch(struct argv_buf *a, char **job, struct nx_err *err)
{
	char *out = NULL;
	int rc = run_capture(a->v, &out, err);

	if (rc < 0)
		return rc;
	if (rc != 0) {
		size_t len = strlen(out);
		while (len && (out[len - 1] == '\n' || out[len - 1] == ' '))
			out[--len] = '\0';
		nx_errf(err, NX_EUSAGE, "sbatch exited with status %d: %s", rc,
			out[0] ? out : "(no output)");
		free(out);
		return NX_EUSAGE;
	}
	size_t k = strspn(out, "0123456789");
	if (!k) {
		nx_errf(err, NX_ECORRUPT, "sbatch printed no job id: '%s'", out);
		free(out);
		return NX_ECORRUPT;
	}
	*job = nx_xstrndup(out, k);
	free(out);
	return 0;
}

/* One array over tasks idx[0..n) of p (chunk k of the submission). */
static int submit_array(const char *self, const char *data_path, const struct nx_fleet_plan *p,
			const char *dir, const char *base, const size_t *idx, size_t n,
			const struct nx_fleet_slurm *o, char **job, struct nx_err *err)
{
	char *list = nx_xasprintf("%s.list", base), *script = nx_xasprintf("%s.sh", base);
	const char *run = p->run;
	struct nx_strbuf sb = NX_STRBUF_INIT;
	struct argv_buf a = { 0 };
	int rc;

	if ((rc = nx_fleet_list_write(list, p, idx, n, err)))
		goto out;
	nx_strbuf_addstr(&sb, "#!/bin/sh\n# one task of the fleet run; written by "
			      "neuron-explorer fleet ingest\nexec ");
	sh_quote(&sb, self);
	nx_strbuf_addstr(&sb, " fleet run-task --data-path ");
	sh_quote(&sb, data_path);
	nx_strbuf_addstr(&sb, " --run ");
	sh_quote(&sb, run);
	nx_strbuf_addstr(&sb, " --list ");
	sh_quote(&sb, list);
	nx_strbuf_addstr(&sb, " --array-index \"$SLURM_ARRAY_TASK_ID\"\n");
	if ((rc = write_script(script, sb.buf, err)))
		goto out;
	arg(&a, nx_xstrdup("sbatch"));
	arg(&a, nx_xstrdup("--parsable"));
	arg(&a, nx_xasprintf("--job-name=nx-fleet-%s", run));
	arg(&a, o->throttle ? nx_xasprintf("--array=0-%zu%%%u", n - 1, o->throttle)
			    : nx_xasprintf("--array=0-%zu", n - 1));
	arg(&a, nx_xasprintf("--output=%s/logs/slurm-%%A_%%a.out", dir));
	common_args(&a, o);
	arg(&a, nx_xstrdup(script));
	if ((rc = sbatch(&a, job, err)))
		nx_err_wrap(err, "submitting the task array of run '%s'", run);
out:
	argv_release(&a);
	nx_strbuf_release(&sb);
	free(list);
	free(script);
	return rc;
}

int nx_fleet_submit_slurm(const char *self, const char *data_path,
			  const struct nx_fleet_plan *p, const size_t *idx, size_t n,
			  const struct nx_fleet_slurm *o, char **array_job, char **index_job,
			  struct nx_err *err)
{
	const char *run = p->run;
	char *dir = nx_fleet_dir(data_path, run);
	char *sdir = nx_path_join(dir, "slurm");
	char *stamp = nx_xasprintf("%ld-%d", (long)time(NULL), (int)getpid());
	char *iscript = nx_xasprintf("%s/index-%s.sh", sdir, stamp);
	size_t chunk = o->array_max ? o->array_max : 1000;
	struct nx_strbuf sb = NX_STRBUF_INIT, jobs = NX_STRBUF_INIT, deps = NX_STRBUF_INIT;
	struct argv_buf b = { 0 };
	int rc;

	*array_job = *index_job = NULL;
	if ((rc = nx_mkdirs(sdir, err)))
		goto out;
	if (n) {
		/* Whole rows, not task numbers: a re-plan may renumber the tasks while the
		 * array still runs. Arrays hold at most `chunk` tasks (Slurm's MaxArraySize). */
		for (size_t k = 0; k * chunk < n && !rc; k++) {
			char *base = nx_xasprintf("%s/array-%s-%zu", sdir, stamp, k), *job = NULL;
			size_t m = n - k * chunk < chunk ? n - k * chunk : chunk;

			rc = submit_array(self, data_path, p, dir, base, idx + k * chunk, m, o,
					  &job, err);
			if (!rc) {
				nx_strbuf_addf(&jobs, "%s%s", k ? "," : "", job);
				nx_strbuf_addf(&deps, ":%s", job);
			}
			free(job);
			free(base);
		}
		if (jobs.len)
			*array_job = nx_xstrdup(jobs.buf);
		if (rc)
			goto out;
	}
	nx_strbuf_reset(&sb);
	nx_strbuf_addstr(&sb, "#!/bin/sh\n# the fleet index of the run, after its tasks; written "
			      "by neuron-explorer fleet ingest\nexec ");
	sh_quote(&sb, self);
	nx_strbuf_addstr(&sb, " fleet index --data-path ");
	sh_quote(&sb, data_path);
	nx_strbuf_addstr(&sb, " --display-name ");
	sh_quote(&sb, run);
	nx_strbuf_addf(&sb, " --threshold %g\n", o->threshold);
	if ((rc = write_script(iscript, sb.buf, err)))
		goto out;
	arg(&b, nx_xstrdup("sbatch"));
	arg(&b, nx_xstrdup("--parsable"));
	arg(&b, nx_xasprintf("--job-name=nx-fleet-index-%s", run));
	if (deps.len)
		arg(&b, nx_xasprintf("--dependency=afterany%s", deps.buf));
	arg(&b, nx_xasprintf("--output=%s/logs/slurm-index-%%j.out", dir));
	common_args(&b, o);
	if (o->wait)
		arg(&b, nx_xstrdup("--wait"));
	arg(&b, nx_xstrdup(iscript));
	if ((rc = sbatch(&b, index_job, err)))
		nx_err_wrap(err, "submitting the index job of run '%s'%s%s", run,
			    *array_job ? " after array job " : "", *array_job ? *array_job : "");
out:
	argv_release(&b);
	nx_strbuf_release(&sb);
	nx_strbuf_release(&jobs);
	nx_strbuf_release(&deps);
	free(dir);
	free(sdir);
	free(stamp);
	free(iscript);
	return rc;
}
