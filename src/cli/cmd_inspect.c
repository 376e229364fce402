/* SPDX-License-Identifier: MIT
 * cmd_inspect.c: `neuron-explorer inspect [-o DIR] [-n N] -- COMMAND [ARGS...]`. Runs a
 * user's program unchanged with the NKI shim on its PYTHONPATH and the runtime's inspect
 * variables (NEURON_RT_INSPECT_*) set, as the real tool does: every kernel the program
 * executes leaves its NEFF and its device profile in DIR/<instance>_pid_<pid>/, beside
 * the host side's system-profile trace (docs/nki.md, "inspect"). DIR follows the output
 * rule (common/outpath.h): the program writes into a temporary sibling, which replaces
 * DIR when it ends. The command's exit status is the program's. */
#include "common/compat.h"
#include "cli/cli_output.h"
#include "cli/cli_util.h"
#include "cli/commands.h"
#include "cli/nki_env.h"
#include "common/fsutil.h"
#include "common/xalloc.h"
#include "ingest/ingest.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* The real tool's limit of system-trace events (per NeuronCore; here per process). */
#define DEFAULT_MAX_EVENTS 1000000ull
#define TRACE_FILE "system_profile.trace.json"

static void usage(FILE *f)
{
	nx_cli_usage(f,
		"usage: neuron-explorer inspect [-o DIR] [-n N] [-q] [--] COMMAND [ARGS...]\n"
		"\n"
		"Runs COMMAND (a Python program that executes NKI kernels, unchanged) with the NKI\n"
		"shim of 'neuron-explorer nki path' first on its PYTHONPATH and the runtime's\n"
		"inspect variables set (NEURON_RT_INSPECT_ENABLE=1, NEURON_RT_INSPECT_OUTPUT_DIR,\n"
		"NEURON_RT_INSPECT_SYS_TRACE_MAX_EVENTS_PER_NC, NEURON_RT_INSPECT_SYSTEM_PROFILE=1,\n"
		"NEURON_RT_INSPECT_DEVICE_PROFILE=1). Each process that executes kernels gets a\n"
		"directory DIR/<instance>_pid_<pid>/ holding, as the runtime's inspect writes them:\n"
		"  neff_<hash>.neff                   each kernel compiled (hash: of the NEFF)\n"
		"  <hash>_instid_0_vnc_0.ntff         the device profile of its first execution,\n"
		"                                     simulated (docs/simulator.md)\n"
		"  " TRACE_FILE "       the host side (Chrome trace JSON): each kernel\n"
		"                                     call with its arguments' shapes, its trace,\n"
		"                                     compile, assemble and simulate steps, and the\n"
		"                                     device's execution (nc_exec_running)\n"
		"Host and device share one clock, the Unix time in ns, so that\n"
		"  neuron-explorer view -d DIR --data-path D --display-name NAME\n"
		"shows both on one time axis (one profile per kernel, docs/framework-traces.md).\n"
		"\n"
		"  -o, --output-dir DIR        where to write (default ./output, the runtime's): a\n"
		"                              new or empty directory, or one an earlier run wrote\n"
		"                              (it holds " NX_OUT_MARKER "), then replaced whole\n"
		"                              when COMMAND ends; anything else is refused (exit\n"
		"                              2). The program writes into a temporary sibling\n"
		"                              until then\n"
		"  -n, --num-trace-events N    keep at most N events of the host trace per process\n"
		"                              (default 1000000): past N the oldest are dropped\n"
		"  -q, --quiet                 no line on stderr saying what was written\n"
		"  -h, --help                  this text\n"
		"\n"
		"Exit status: COMMAND's (128+N when signal N ended it); 1 when DIR cannot be\n"
		"written or COMMAND cannot be run, 2 a usage error. Ctrl-C reaches COMMAND, which\n"
		"ends as it does; what it recorded is kept.\n");
}

struct inspect_args {
	const char *out;
	unsigned long long max_events;
	bool quiet;
	char **cmd; /* NULL-terminated */
};

static int parse(int argc, char **argv, struct inspect_args *a, bool *done)
{
	static const struct option opts[] = {
		{ "output-dir", required_argument, NULL, 'o' },
		{ "num-trace-events", required_argument, NULL, 'n' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int c;

	memset(a, 0, sizeof(*a));
	a->out = "output";
	a->max_events = DEFAULT_MAX_EVENTS;
	*done = false;
	optind = 1;
	opterr = 0;
	/* '+': options end at COMMAND, whose own options are its own */
	while ((c = getopt_long(argc, argv, "+:o:n:qh", opts, NULL)) != -1) {
		switch (c) {
		case 'o': a->out = optarg; break;
		case 'n':
			if (nx_cli_uint("inspect", "-n", optarg, 1, 1000000000, &a->max_events))
				return NX_EXIT_USAGE;
			break;
		case 'q': a->quiet = true; break;
		case 'h':
			usage(stdout);
			*done = true;
			return NX_EXIT_OK;
		case ':':
			nx_cli_error("inspect", "option '%s' needs a value", argv[optind - 1]);
			return NX_EXIT_USAGE;
		default:
			nx_cli_error("inspect", "unknown option '%s' (the program to run comes "
				     "after the options, or after --)", argv[optind - 1]);
			return NX_EXIT_USAGE;
		}
	}
	if (optind >= argc) {
		nx_cli_error("inspect", "no command to run: give it after the options, e.g. "
			     "'%s inspect -o out -- python3 my_kernels.py'", nx_cli_prog);
		return NX_EXIT_USAGE;
	}
	a->cmd = argv + optind;
	return NX_EXIT_OK;
}

/* The environment of the program: the shim, and the runtime's inspect variables with the
 * session's clock (CLOCK_MONOTONIC and Unix time read together, in ns). */
static int set_env(const struct inspect_args *a, const char *tmp)
{
	struct timespec mono, wall;
	char n[32], clk[64];
	int rc = nx_cli_nki_env("inspect");

	if (rc)
		return rc;
	clock_gettime(CLOCK_MONOTONIC, &mono);
	clock_gettime(CLOCK_REALTIME, &wall);
	snprintf(n, sizeof(n), "%llu", a->max_events);
	snprintf(clk, sizeof(clk), "%lld:%lld",
		 (long long)mono.tv_sec * 1000000000LL + mono.tv_nsec,
		 (long long)wall.tv_sec * 1000000000LL + wall.tv_nsec);
	if (setenv("NEURON_RT_INSPECT_ENABLE", "1", 1) ||
	    setenv("NEURON_RT_INSPECT_OUTPUT_DIR", tmp, 1) ||
	    setenv("NEURON_RT_INSPECT_SYS_TRACE_MAX_EVENTS_PER_NC", n, 1) ||
	    setenv("NEURON_RT_INSPECT_SYSTEM_PROFILE", "1", 1) ||
	    setenv("NEURON_RT_INSPECT_DEVICE_PROFILE", "1", 1) ||
	    setenv("NX_NKI_INSPECT_CLOCK", clk, 1)) {
		nx_cli_error("inspect", "cannot set the environment: %s", strerror(errno));
		return NX_EXIT_FAIL;
	}
	return NX_EXIT_OK;
}

static volatile sig_atomic_t child_pid;

/* SIGTERM and SIGHUP sent to inspect go on to the program. */
static void forward(int sig)
{
	if (child_pid > 0)
		kill((pid_t)child_pid, sig);
}

/* Runs the command and waits for it; returns its exit status as a shell reports it, or
 * -1 (message printed) when it could not be started. */
static int run_command(char **cmd)
{
	struct sigaction fw = { .sa_handler = forward }, ign = { .sa_handler = SIG_IGN };
	struct sigaction old_int, old_quit, old_term, old_hup;
	int status = 0, err_pipe[2];
	ssize_t got;
	int child_errno = 0;
	pid_t pid;

	/* the child tells its exec failure through a close-on-exec pipe */
	if (pipe2(err_pipe, O_CLOEXEC) != 0) {
		nx_cli_error("inspect", "cannot run '%s': %s", cmd[0], strerror(errno));
		return -1;
	}
	fflush(stdout);
	fflush(stderr);
	/* like system(3): the terminal's Ctrl-C reaches the program, not inspect */
	sigaction(SIGINT, &ign, &old_int);
	sigaction(SIGQUIT, &ign, &old_quit);
	sigaction(SIGTERM, &fw, &old_term);
	sigaction(SIGHUP, &fw, &old_hup);
	pid = fork();
	if (pid == 0) {
		sigaction(SIGINT, &old_int, NULL);
		sigaction(SIGQUIT, &old_quit, NULL);
		sigaction(SIGTERM, &old_term, NULL);
		sigaction(SIGHUP, &old_hup, NULL);
		close(err_pipe[0]);
		execvp(cmd[0], cmd);
		child_errno = errno;
		(void)!write(err_pipe[1], &child_errno, sizeof(child_errno));
		_exit(127);
	}
	close(err_pipe[1]);
	if (pid < 0) {
		nx_cli_error("inspect", "cannot run '%s': %s", cmd[0], strerror(errno));
		close(err_pipe[0]);
		status = -1;
		goto out;
	}
	child_pid = pid;
	while ((got = read(err_pipe[0], &child_errno, sizeof(child_errno))) < 0 && errno == EINTR)
		;
	close(err_pipe[0]);
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	child_pid = 0;
	if (got == (ssize_t)sizeof(child_errno)) {
		nx_cli_error("inspect", "cannot run '%s': %s", cmd[0], strerror(child_errno));
		status = -1;
	} else {
		status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
	}
out:
	sigaction(SIGINT, &old_int, NULL);
	sigaction(SIGQUIT, &old_quit, NULL);
	sigaction(SIGTERM, &old_term, NULL);
	sigaction(SIGHUP, &old_hup, NULL);
	return status;
}

/* What the program left in dir: its processes' directories, their NEFF/NTFF pairs and
 * host traces. */
struct tally {
	size_t processes, ntffs, neffs, traces;
};

static bool ends_with(const char *s, const char *tail)
{
	size_t n = strlen(s), k = strlen(tail);

	return n >= k && !strcmp(s + n - k, tail);
}

static void count(const char *dir, struct tally *t)
{
	DIR *d = opendir(dir), *p;
	struct dirent *de, *fe;

	memset(t, 0, sizeof(*t));
	while (d && (de = readdir(d))) {
		char *sub;

		if (de->d_name[0] == '.' || !strstr(de->d_name, "_pid_"))
			continue;
		sub = nx_path_join(dir, de->d_name);
		if ((p = opendir(sub))) {
			t->processes++;
			while ((fe = readdir(p))) {
				t->ntffs += ends_with(fe->d_name, ".ntff");
				t->neffs += ends_with(fe->d_name, ".neff");
				t->traces += !strcmp(fe->d_name, TRACE_FILE);
			}
			closedir(p);
		}
		free(sub);
	}
	if (d)
		closedir(d);
}

int cmd_inspect(int argc, char **argv)
{
	struct inspect_args a;
	struct nx_publish_plan pp;
	struct nx_err err = { 0 };
	struct tally t;
	char *tmp = NULL;
	bool done;
	int rc = parse(argc, argv, &a, &done), status;

	if (rc || done)
		return rc;
	if ((rc = nx_cli_out_dir("inspect", a.out, NULL)))
		return rc;
	nx_publish_plan(&pp, NULL, NULL, a.out);
	if ((rc = nx_publish_prepare(&pp, &err))) {
		nx_cli_error("inspect", "%s", err.msg);
		rc = rc == NX_EUSAGE ? NX_EXIT_USAGE : NX_EXIT_FAIL;
		nx_publish_plan_release(&pp);
		return rc;
	}
	/* the program may change its directory: it gets the temporary one's full path */
	if (!(tmp = realpath(pp.tmp, NULL))) {
		nx_cli_error("inspect", "cannot resolve '%s': %s", pp.tmp, strerror(errno));
		rc = NX_EXIT_FAIL;
	} else if (!(rc = set_env(&a, tmp)) && (status = run_command(a.cmd)) < 0) {
		rc = NX_EXIT_FAIL;
	}
	if (rc) {
		nx_remove_tree(pp.tmp, &err);
		goto out;
	}
	count(tmp, &t);
	if (nx_publish(&pp, &err)) {
		nx_cli_error("inspect", "%s (what the program recorded stays in '%s')", err.msg,
			     pp.tmp);
		rc = NX_EXIT_FAIL;
		goto out;
	}
	if (!a.quiet)
		fprintf(stderr, "inspect: wrote %s: %zu device profile%s (%zu NEFF%s) and %zu host "
			"trace%s from %zu process%s; '%s' exited with %d. View them with: %s view -d "
			"%s\n", a.out, t.ntffs, t.ntffs == 1 ? "" : "s", t.neffs,
			t.neffs == 1 ? "" : "s", t.traces, t.traces == 1 ? "" : "s", t.processes,
			t.processes == 1 ? "" : "es", a.cmd[0], status, nx_cli_prog, a.out);
	rc = status;
out:
	free(tmp);
	nx_publish_plan_release(&pp);
	return rc;
}
