/* SPDX-License-Identifier: MIT
 * cmd_fleet.c: `neuron-explorer fleet`: ingest a whole run (one task per NEFF/NTFF pair
 * and per framework trace) locally or as a Slurm job array, show the tasks' status,
 * build the fleet index, report stragglers, export hive-style partitions. The hidden
 * `fleet run-task` is what each local subprocess and each Slurm array task runs. */
#include "common/compat.h"
#include "cli/cli_opts.h"
#include "cli/cli_output.h"
#include "cli/cli_util.h"
#include "cli/commands.h"
#include "common/fsutil.h"
#include "common/outpath.h"
#include "common/strbuf.h"
#include "common/xalloc.h"
#include "fleet/fleet.h"

#include <fcntl.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define CMD "fleet"

static void usage(FILE *out)
{
	nx_cli_usage(out,
		"usage: neuron-explorer fleet ingest RUN_DIR --display-name RUN [--data-path DIR]\n"
		"                             [-j N] [--threshold PCT] [--slurm [--partition P]\n"
		"                             [--time T] [--mem M] [--array-throttle K]\n"
		"                             [--array-max N] [--sbatch-arg ARG]... [--wait]]\n"
		"       neuron-explorer fleet status --display-name RUN [--data-path DIR]\n"
		"       neuron-explorer fleet index --display-name RUN [--data-path DIR] [--threshold PCT]\n"
		"       neuron-explorer fleet report --display-name RUN [--data-path DIR] [--top N]\n"
		"                                    [--recommend N]\n"
		"       neuron-explorer fleet export --display-name RUN [--data-path DIR] -o OUT_DIR\n"
		"\n"
		"A training run's capture tree (<instance>_pid_<pid>/ directories with NEFF/NTFF\n"
		"pairs and framework traces, as 'view -d' reads) is ingested as one task per pair\n"
		"and per trace file, each an atomic ingest into its own profile RUN-...@latest.\n"
		"The task list and states live in DIR/fleet/RUN/; the fleet index (FleetProfile,\n"
		"FleetRank, FleetStraggler, ...) is published as the profile RUN. Re-running ingest\n"
		"runs only the tasks that are missing or failed. See docs/fleet.md.\n"
		"\n"
		"options:\n"
		"      --data-path DIR       workspace (default %s)\n"
		"      --display-name RUN    name of the run (its members are RUN-...)\n"
		"  -j, --jobs N              local tasks at a time (default 1)\n"
		"      --threshold PCT       straggler: more than PCT %% over the median (default 10)\n"
		"      --slurm               submit the tasks as one sbatch --array job and the index\n"
		"                            as a job depending on it (afterany)\n"
		"      --partition P, --time T, --mem M   sbatch options of every job\n"
		"      --array-throttle K    at most K array tasks at once (--array=...%%K)\n"
		"      --array-max N         at most N tasks per array, more arrays beyond\n"
		"                            (Slurm's MaxArraySize; default 1000)\n"
		"      --sbatch-arg ARG      extra sbatch argument (repeatable)\n"
		"      --wait                with --slurm: return when the index job has finished\n"
		"      --top N               report: at most N members per list (default 20)\n"
		"      --recommend N         report: also run 'recommend' on the N slowest members\n"
		"  -o, --output DIR          export: directory to write: new or empty, or one an\n"
		"                            earlier export wrote (it holds " NX_OUT_MARKER "),\n"
		"                            which is then replaced whole, atomically; anything\n"
		"                            else is refused\n"
		"  -h, --help                this text\n",
		NX_CLI_DEFAULT_DATA_PATH);
}

enum {
	OPT_THRESHOLD = 256, OPT_SLURM, OPT_PARTITION, OPT_TIME, OPT_MEM, OPT_THROTTLE,
	OPT_SBATCH_ARG, OPT_WAIT, OPT_TOP, OPT_RECOMMEND, OPT_ARRAY_MAX, OPT_RUN, OPT_TASK,
	OPT_LIST, OPT_INDEX,
};

static const struct option long_opts[] = {
	NX_CLI_LONG_DATA_PATH,
	NX_CLI_LONG_DISPLAY_NAME,
	{ "jobs", required_argument, NULL, 'j' },
	{ "threshold", required_argument, NULL, OPT_THRESHOLD },
	{ "slurm", no_argument, NULL, OPT_SLURM },
	{ "partition", required_argument, NULL, OPT_PARTITION },
	{ "time", required_argument, NULL, OPT_TIME },
	{ "mem", required_argument, NULL, OPT_MEM },
	{ "array-throttle", required_argument, NULL, OPT_THROTTLE },
	{ "sbatch-arg", required_argument, NULL, OPT_SBATCH_ARG },
	{ "array-max", required_argument, NULL, OPT_ARRAY_MAX },
	{ "wait", no_argument, NULL, OPT_WAIT },
	{ "top", required_argument, NULL, OPT_TOP },
	{ "recommend", required_argument, NULL, OPT_RECOMMEND },
	{ "output", required_argument, NULL, 'o' },
	{ "run", required_argument, NULL, OPT_RUN },
	{ "task", required_argument, NULL, OPT_TASK },
	{ "list", required_argument, NULL, OPT_LIST },
	{ "array-index", required_argument, NULL, OPT_INDEX },
	NX_CLI_LONG_HELP,
	{ NULL, 0, NULL, 0 },
};

struct opts {
	struct nx_cli_common co; /* --data-path, --display-name (or --run), --help */
	const char *sub, *out, *list, *input;
	char *data_path;
	unsigned jobs, top, recommend;
	long task, array_index;
	double threshold;
	bool slurm;
	struct nx_fleet_slurm so;
	const char **extra;
	size_t nextra;
};

/* A whole number from 1 to max into an unsigned. */
static int parse_positive(const char *opt, const char *s, unsigned long max, unsigned *out)
{
	unsigned long long v;

	if (nx_cli_uint(CMD, opt, s, 1, max, &v))
		return -1;
	*out = (unsigned)v;
	return 0;
}

/* The options with a numeric value; 1 when c is not one of them. */
static int parse_number(struct opts *o, int c)
{
	unsigned long long v = 0;
	char *end;

	switch (c) {
	case 'j': return parse_positive("-j", optarg, 1024, &o->jobs);
	case OPT_ARRAY_MAX:
		return parse_positive("--array-max", optarg, 10000000, &o->so.array_max);
	case OPT_THRESHOLD:
		o->threshold = strtod(optarg, &end);
		if (!*optarg || *end || !(o->threshold >= 0 && o->threshold < 1e6)) {
			nx_cli_error(CMD, "--threshold wants a percentage, got '%s'", optarg);
			return -1;
		}
		return 0;
	case OPT_THROTTLE:
		if (nx_cli_uint(CMD, "--array-throttle", optarg, 0, 1000000, &v))
			return -1;
		o->so.throttle = (unsigned)v;
		return 0;
	case OPT_TOP:
		if (nx_cli_uint(CMD, "--top", optarg, 0, 1000000, &v))
			return -1;
		o->top = (unsigned)v;
		return 0;
	case OPT_RECOMMEND:
		if (nx_cli_uint(CMD, "--recommend", optarg, 0, 1000, &v))
			return -1;
		o->recommend = (unsigned)v;
		return 0;
	case OPT_TASK:
		if (nx_cli_uint(CMD, "--task", optarg, 0, 100000000, &v))
			return -1;
		o->task = (long)v;
		return 0;
	case OPT_INDEX:
		if (nx_cli_uint(CMD, "--array-index", optarg, 0, 100000000, &v))
			return -1;
		o->array_index = (long)v;
		return 0;
	}
	return 1;
}

/* One option of fleet's own (the common ones are taken before). */
static int parse_opt(struct opts *o, int c, char **argv)
{
	int rc = parse_number(o, c);

	if (rc <= 0)
		return rc;
	switch (c) {
	case OPT_RUN: o->co.display_name = optarg; break;
	case OPT_SLURM: o->slurm = true; break;
	case OPT_PARTITION: o->so.partition = optarg; break;
	case OPT_TIME: o->so.time = optarg; break;
	case OPT_MEM: o->so.mem = optarg; break;
	case OPT_SBATCH_ARG:
		o->extra = nx_xrealloc(o->extra, (o->nextra + 1) * sizeof(*o->extra));
		o->extra[o->nextra++] = optarg;
		break;
	case OPT_WAIT: o->so.wait = true; break;
	case 'o': o->out = optarg; break;
	case OPT_LIST: o->list = optarg; break;
	case ':':
		nx_cli_error(CMD, "option '%s' needs a value", argv[optind - 1]);
		return -1;
	default:
		nx_cli_error(CMD, "unknown option '%s'", argv[optind - 1]);
		return -1;
	}
	return 0;
}

static int parse(int argc, char **argv, struct opts *o)
{
	int c;

	memset(o, 0, sizeof(*o));
	nx_cli_common_init(&o->co, CMD);
	o->jobs = 1;
	o->top = 20;
	o->task = o->array_index = -1;
	o->threshold = 10;
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":j:o:h", long_opts, NULL)) != -1) {
		if (nx_cli_common_opt(&o->co, c, optarg)) {
			if (o->co.help)
				return 0;
		} else if (parse_opt(o, c, argv)) {
			return -1;
		}
	}
	for (; optind < argc; optind++) {
		if (!o->sub)
			o->sub = argv[optind];
		else if (!o->input)
			o->input = argv[optind];
		else {
			nx_cli_error(CMD, "unexpected argument '%s'", argv[optind]);
			return -1;
		}
	}
	o->so.extra = o->extra;
	o->so.nextra = o->nextra;
	o->so.threshold = o->threshold;
	return 0;
}

/* The message of a failure and its exit status: 2 for what the command line asked
 * wrongly, 1 for everything else, a missing run or directory included (as for every
 * command's missing input). */
static int fail(const struct nx_err *err)
{
	nx_cli_error(CMD, "%s", err->msg);
	return err->code == NX_EUSAGE ? NX_EXIT_USAGE : NX_EXIT_FAIL;
}

/* The data path as an absolute path (Slurm jobs do not share our working directory),
 * made first by the verbs that write a run (ingest, run-task); the others only read, so
 * a data path that does not exist is left so (they then find no run in it). */
static char *absolute_data_path(const char *opt, bool make, struct nx_err *err)
{
	char *p = nx_expand_home(opt), *r, *cwd;

	if (make && nx_mkdirs(p, err)) {
		free(p);
		return NULL;
	}
	if (!make && access(p, F_OK) != 0 && errno == ENOENT) {
		if (p[0] == '/')
			return p;
		cwd = getcwd(NULL, 0);
		r = cwd ? nx_path_join(cwd, p) : NULL;
		if (!r)
			nx_errf(err, -errno, "cannot resolve data path '%s': %s", opt,
				strerror(errno));
		free(cwd);
		free(p);
		return r;
	}
	r = realpath(p, NULL);
	free(p);
	if (!r)
		nx_errf(err, -errno, "cannot resolve data path '%s': %s", opt, strerror(errno));
	return r;
}

static char *self_path(struct nx_err *err)
{
	char buf[4096];
	ssize_t n = readlink("/proc/self/exe", buf, sizeof(buf) - 1);

	if (n <= 0) {
		nx_errf(err, -errno, "cannot find this program's path: %s", strerror(errno));
		return NULL;
	}
	buf[n] = '\0';
	return nx_xstrdup(buf);
}

struct counts {
	size_t n[4];
};

static void count_states(const char *data_path, const struct nx_fleet_plan *p,
			 struct counts *c, size_t **todo, size_t *ntodo)
{
	memset(c, 0, sizeof(*c));
	if (todo)
		*todo = nx_xcalloc(p->n ? p->n : 1, sizeof(size_t));
	if (ntodo)
		*ntodo = 0;
	for (size_t i = 0; i < p->n; i++) {
		struct nx_fleet_status st;

		nx_fleet_task_status(data_path, p->run, &p->t[i], &st);
		c->n[st.state]++;
		if (todo && st.state != NX_FLEET_DONE && st.state != NX_FLEET_RUNNING)
			(*todo)[(*ntodo)++] = i;
		nx_fleet_status_release(&st);
	}
}

static void print_counts(const struct nx_fleet_plan *p, const struct counts *c)
{
	printf("%zu tasks: %zu done, %zu running, %zu failed, %zu pending\n", p->n,
	       c->n[NX_FLEET_DONE], c->n[NX_FLEET_RUNNING], c->n[NX_FLEET_FAILED],
	       c->n[NX_FLEET_PENDING]);
}

/* The tasks in todo as a Slurm array job plus the index job. Returns -1 when the
 * command is to go on (--wait) and the exit status otherwise. */
static int ingest_slurm(struct opts *o, const char *self, const struct nx_fleet_plan *p,
			const size_t *todo, size_t ntodo)
{
	struct nx_err err = { 0 };
	char *ajob = NULL, *ijob = NULL;
	int rc = NX_EXIT_OK;

	if (nx_fleet_submit_slurm(self, o->data_path, p, todo, ntodo, &o->so, &ajob, &ijob,
				  &err)) {
		rc = fail(&err);
		if (rc == NX_EXIT_USAGE)
			rc = NX_EXIT_FAIL;
		goto out;
	}
	if (ajob)
		printf("Submitted %zu task(s) as Slurm array job%s %s\n", ntodo,
		       strchr(ajob, ',') ? "s" : "", ajob);
	printf("Submitted the fleet index as Slurm job %s (after the array)\n", ijob);
	if (o->so.wait)
		rc = -1;
out:
	free(ajob);
	free(ijob);
	return rc;
}

/* The tasks in todo as local subprocesses, then the index. A signal that stopped the
 * tasks ends this process the same way once they are reaped. */
static int ingest_local(struct opts *o, const char *self, const struct nx_fleet_plan *p,
			const size_t *todo, size_t ntodo)
{
	struct nx_err err = { 0 };
	size_t failed = 0;
	int sig = 0;

	if (ntodo && nx_fleet_run_local(self, o->data_path, p, todo, ntodo, o->jobs,
					&failed, &sig, &err)) {
		int rc = fail(&err);
		if (sig) {
			fflush(stdout);
			signal(sig, SIG_DFL);
			raise(sig);
		}
		return rc;
	}
	if (nx_fleet_index(o->data_path, p->run, o->threshold, &err))
		return fail(&err);
	return -1;
}

/* The final state counts; a failure when some task did not finish. */
static int ingest_result(struct opts *o, const struct nx_fleet_plan *p)
{
	struct counts c;

	count_states(o->data_path, p, &c, NULL, NULL);
	print_counts(p, &c);
	if (c.n[NX_FLEET_FAILED] || c.n[NX_FLEET_PENDING]) {
		nx_cli_error(CMD, "%zu task(s) did not finish; '%s fleet status "
			     "--display-name %s' shows why, and re-running this command runs them "
			     "again", c.n[NX_FLEET_FAILED] + c.n[NX_FLEET_PENDING], nx_cli_prog,
			     p->run);
		return NX_EXIT_FAIL;
	}
	printf("Fleet index: %s/profiles/global/%s@latest\n", o->data_path, p->run);
	return NX_EXIT_OK;
}

/* <data>/fleet/<run>/.lock, held by one `fleet ingest` of the run at a time (it holds
 * that process's pid for the message of the next one). */
static int lock_run(const char *data_path, const char *run, int *fd, struct nx_err *err)
{
	char *dir = nx_fleet_dir(data_path, run), *path = nx_path_join(dir, ".lock");
	char pid[32] = "";
	int rc = nx_mkdirs(dir, err);

	*fd = -1;
	if (!rc && (rc = nx_lock_file(path, false, fd, err)) == -EBUSY) {
		int rfd = open(path, O_RDONLY | O_CLOEXEC);
		ssize_t n = rfd >= 0 ? pread(rfd, pid, sizeof(pid) - 1, 0) : 0;

		if (rfd >= 0)
			close(rfd);
		pid[n > 0 ? n : 0] = '\0';
		pid[strcspn(pid, "\n")] = '\0';
		rc = nx_errf(err, -EBUSY, "run '%s' is being ingested by another 'fleet ingest'%s%s%s "
			     "(%s is locked); wait for it to end", run, pid[0] ? " (process " : "",
			     pid, pid[0] ? ")" : "", path);
	} else if (!rc) {
		int n = snprintf(pid, sizeof(pid), "%d\n", (int)getpid());
		if (ftruncate(*fd, 0) != 0 || pwrite(*fd, pid, (size_t)n, 0) != n)
			rc = nx_errf(err, -errno, "cannot write '%s': %s", path, strerror(errno));
	}
	if (rc && *fd >= 0) {
		close(*fd);
		*fd = -1;
	}
	free(dir);
	free(path);
	return rc;
}

static int do_ingest(struct opts *o)
{
	struct nx_fleet_plan p = { 0 };
	struct nx_err err = { 0 };
	struct counts c;
	size_t *todo = NULL, ntodo = 0;
	char *self = NULL;
	int lock = -1, rc;

	if (!o->input) {
		nx_cli_error(CMD, "ingest needs the run directory");
		return NX_EXIT_USAGE;
	}
	if (!o->slurm && (o->so.partition || o->so.time || o->so.mem || o->so.throttle ||
			  o->so.array_max || o->nextra || o->so.wait)) {
		nx_cli_error(CMD, "--partition, --time, --mem, --array-throttle, --array-max, "
			     "--sbatch-arg and --wait go with --slurm");
		return NX_EXIT_USAGE;
	}
	/* the run directory is read (planned) before anything is written into the data
	 * path, so a wrong one leaves nothing behind */
	if (nx_fleet_check_run(o->data_path, o->co.display_name, &err) ||
	    nx_fleet_plan(o->input, o->co.display_name, &p, &err) ||
	    lock_run(o->data_path, o->co.display_name, &lock, &err) || !(self = self_path(&err)) ||
	    nx_fleet_manifest_write(o->data_path, &p, &err)) {
		rc = fail(&err);
		goto out;
	}
	count_states(o->data_path, &p, &c, &todo, &ntodo);
	printf("Run %s: %zu tasks (%zu already done, %zu running elsewhere, %zu to run); "
	       "manifest %s/fleet/%s/manifest.tsv\n", p.run, p.n, c.n[NX_FLEET_DONE],
	       c.n[NX_FLEET_RUNNING], ntodo, o->data_path, p.run);
	fflush(stdout);
	rc = o->slurm ? ingest_slurm(o, self, &p, todo, ntodo)
		      : ingest_local(o, self, &p, todo, ntodo);
	if (rc < 0)
		rc = ingest_result(o, &p);
out:
	if (lock >= 0)
		close(lock);
	free(todo);
	free(self);
	nx_fleet_plan_release(&p);
	return rc;
}

/* The task to run: line --array-index of the task list --list (two small reads), or
 * --task N of the manifest (which is read whole). */
static int task_to_run(const struct opts *o, struct nx_fleet_task *t, size_t *number,
		       struct nx_err *err)
{
	struct nx_fleet_plan p;
	int rc;

	if (o->list)
		return nx_fleet_list_read(o->list, o->co.display_name, (size_t)o->array_index, t,
					  number, err);
	if ((rc = nx_fleet_manifest_read(o->data_path, o->co.display_name, &p, err)))
		return rc;
	if ((size_t)o->task >= p.n) {
		rc = nx_errf(err, NX_EUSAGE, "run '%s' has %zu tasks; there is no task %ld", p.run,
			     p.n, o->task);
	} else {
		*t = p.t[o->task];
		memset(&p.t[o->task], 0, sizeof(*t));
		*number = (size_t)o->task;
	}
	nx_fleet_plan_release(&p);
	return rc;
}

static int do_run_task(struct opts *o)
{
	struct nx_fleet_task t = { 0 };
	struct nx_err err = { 0 };
	size_t number = 0;
	int rc = NX_EXIT_OK;

	if (o->list && o->array_index < 0) {
		const char *env = getenv("SLURM_ARRAY_TASK_ID");
		unsigned long long v;
		if (!env) {
			nx_cli_error(CMD, "run-task --list needs --array-index K, or "
				     "SLURM_ARRAY_TASK_ID in the environment");
			return NX_EXIT_USAGE;
		}
		if (nx_cli_uint(CMD, "SLURM_ARRAY_TASK_ID", env, 0, 100000000, &v))
			return NX_EXIT_USAGE;
		o->array_index = (long)v;
	}
	if ((o->task < 0) == !o->list) {
		nx_cli_error(CMD, "run-task needs --task N, or --list FILE with --array-index K");
		return NX_EXIT_USAGE;
	}
	if (task_to_run(o, &t, &number, &err) ||
	    nx_fleet_run_task(o->data_path, o->co.display_name, &t, number, &err))
		rc = fail(&err);
	else
		printf("task %zu done: %s\n", number, t.profile);
	nx_fleet_task_release(&t);
	return rc;
}

static int do_status(struct opts *o)
{
	struct nx_fleet_plan p = { 0 };
	struct nx_err err = { 0 };
	struct counts c;

	if (nx_fleet_manifest_read(o->data_path, o->co.display_name, &p, &err))
		return fail(&err);
	memset(&c, 0, sizeof(c));
	printf("%-5s %-8s %-8s %s\n", "TASK", "KIND", "STATE", "PROFILE / WHERE / MESSAGE");
	for (size_t i = 0; i < p.n; i++) {
		struct nx_fleet_status st;

		nx_fleet_task_status(o->data_path, p.run, &p.t[i], &st);
		c.n[st.state]++;
		printf("%-5zu %-8s %-8s %s", i, p.t[i].kind == NX_FLEET_DEVICE ? "device" : "trace",
		       nx_fleet_state_name(st.state), p.t[i].profile);
		if (st.where[0])
			printf("  [%s]", st.where);
		if (st.state == NX_FLEET_DONE)
			printf("  %.2f s  %ld MB", st.seconds, st.rss_kb / 1024);
		if (st.message[0])
			printf("  %s", st.message);
		putchar('\n');
		nx_fleet_status_release(&st);
	}
	print_counts(&p, &c); /* the states printed, not read again */
	nx_fleet_plan_release(&p);
	return NX_EXIT_OK;
}

static int do_index(struct opts *o)
{
	struct nx_err err = { 0 };

	if (nx_fleet_index(o->data_path, o->co.display_name, o->threshold, &err))
		return fail(&err);
	printf("Fleet index: %s/profiles/global/%s@latest\n", o->data_path, o->co.display_name);
	return NX_EXIT_OK;
}

static int do_report(struct opts *o)
{
	struct nx_strbuf sb = NX_STRBUF_INIT;
	struct nx_fleet_plan p = { 0 };
	struct nx_err err = { 0 };
	int rc = NX_EXIT_OK;

	/* a run that was never ingested is said so, as by the other verbs */
	if (nx_fleet_manifest_read(o->data_path, o->co.display_name, &p, &err))
		return fail(&err);
	nx_fleet_plan_release(&p);
	if (nx_fleet_report(o->data_path, o->co.display_name, o->top, o->recommend, &sb, &err))
		rc = fail(&err);
	else
		fputs(sb.buf ? sb.buf : "", stdout);
	nx_strbuf_release(&sb);
	return rc;
}

static int do_export(struct opts *o)
{
	struct nx_err err = { 0 };
	size_t n = 0;

	if (!o->out) {
		nx_cli_error(CMD, "export needs -o OUT_DIR");
		return NX_EXIT_USAGE;
	}
	int rc = nx_cli_out_dir(CMD, o->out, o->data_path);
	if (rc)
		return rc;
	if (nx_fleet_export(o->data_path, o->co.display_name, o->out, &n, &err))
		return fail(&err);
	printf("Exported %zu member tables of run %s to %s\n", n, o->co.display_name, o->out);
	return NX_EXIT_OK;
}

static const struct {
	const char *name;
	int (*fn)(struct opts *o);
} subs[] = {
	{ "ingest", do_ingest }, { "run-task", do_run_task }, { "status", do_status },
	{ "index", do_index }, { "report", do_report }, { "export", do_export },
};

/* After parsing: a subcommand, a run name, and an input only for ingest. Returns -1 to
 * go on, or the exit status. */
static int check(const struct opts *o)
{
	bool known = false;

	if (o->co.help || !o->sub) {
		usage(o->co.help ? stdout : stderr);
		return o->co.help ? NX_EXIT_OK : NX_EXIT_USAGE;
	}
	for (size_t i = 0; i < NX_ARRAY_SIZE(subs); i++)
		known = known || !strcmp(o->sub, subs[i].name);
	if (!known) {
		nx_cli_error(CMD, "'%s' is not a fleet subcommand (ingest, status, index, report, "
			     "export)", o->sub);
		return NX_EXIT_USAGE;
	}
	if (!o->co.display_name) {
		nx_cli_error(CMD, "%s needs --display-name RUN", o->sub);
		return NX_EXIT_USAGE;
	}
	/* the run's name goes into paths: checked for every verb */
	if (nx_cli_common_check(&o->co))
		return NX_EXIT_USAGE;
	if (strcmp(o->sub, "ingest") && o->input) {
		nx_cli_error(CMD, "unexpected argument '%s'", o->input);
		return NX_EXIT_USAGE;
	}
	return -1;
}

int cmd_fleet(int argc, char **argv)
{
	struct opts o;
	struct nx_err err = { 0 };
	int rc = NX_EXIT_USAGE;
	bool make;

	if (parse(argc, argv, &o) || (rc = check(&o)) >= 0) {
		free(o.extra);
		return rc;
	}
	make = !strcmp(o.sub, "ingest") || !strcmp(o.sub, "run-task");
	if (!(o.data_path = absolute_data_path(o.co.data_path, make, &err))) {
		free(o.extra);
		return fail(&err);
	}
	for (size_t i = 0; i < NX_ARRAY_SIZE(subs); i++)
		if (!strcmp(o.sub, subs[i].name))
			rc = subs[i].fn(&o);
	free(o.data_path);
	free(o.extra);
	return rc;
}
