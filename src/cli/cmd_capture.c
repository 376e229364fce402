/* SPDX-License-Identifier: MIT
 * cmd_capture.c: `neuron-explorer capture`, which executes a NEFF on the NeuronCore
 * simulator (src/sim) and writes the device trace as an NTFF marked as simulated.
 * DMA packet records are written only with NEURON_RT_ENABLE_DGE_NOTIFICATIONS=1 or
 * --enable-dge-notifs, as on hardware. With --profile-nth-exec=N the trace of
 * execution N goes to profile_exec_N.ntff next to the -s path. */
#include "common/compat.h"
#include "cli/cli_opts.h"
#include "cli/cli_output.h"
#include "cli/cli_util.h"
#include "cli/commands.h"
#include "common/fsutil.h"
#include "common/strbuf.h"
#include "common/xalloc.h"
#include "neff/neff.h"
#include "sim/sim.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static void usage(FILE *f)
{
	nx_cli_usage(f,
		"usage: neuron-explorer capture [-n K.neff] [-s profile.ntff] [--num-exec N]\n"
		"                               [--profile-nth-exec N] [--target trn2|trn1]\n"
		"                               [--enable-dge-notifs] [--start-ns T] [-v | -q]\n"
		"\n"
		"Executes a NEFF on the simulated NeuronCore and writes its device profile.\n"
		"  -n, --neff FILE           NEFF to run (default file.neff)\n"
		"  -s, --session-file FILE   NTFF to write (default profile.ntff)\n"
		"      --num-exec N          executions to run, 1 or more (default 1, or N of\n"
		"                            --profile-nth-exec)\n"
		"      --profile-nth-exec N  profile execution N (1..--num-exec; 0 = profile\n"
		"                            none); the file is then profile_exec_N.ntff in the\n"
		"                            directory of -s\n"
		"      --target T            trn2 (NeuronCore-v3, default) or trn1 (v2)\n"
		"      --enable-dge-notifs   record DMA packets (same as the environment\n"
		"                            variable NEURON_RT_ENABLE_DGE_NOTIFICATIONS=1)\n"
		"      --start-ns T          the device clock's time in ns when the profiled\n"
		"                            execution starts: every record is at T + its time\n"
		"                            in the execution (default 0). `inspect` gives the\n"
		"                            Unix time, the clock of its host trace\n"
		"  -v, --verbose             report progress on stderr as the run goes\n"
		"  -q, --quiet               no line on stderr saying what was written\n"
		"\n"
		"The trace is simulated (docs/simulator.md) and says so in its header. An existing\n"
		"file at the output path is replaced only when it is an NTFF; the trace is written\n"
		"to a temporary file of its own beside it and renamed into place when complete.\n");
}

static void progress(void *arg, uint64_t done, uint64_t total, uint64_t now_ns)
{
	(void)arg;
	fprintf(stderr, "\rcapture: %" PRIu64 "/%" PRIu64 " instructions, %.1f us simulated", done,
		total, now_ns / 1000.0);
	fflush(stderr);
}

static double wall_seconds(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* The NEFF run when -n is not given (the runtime's name of it). */
static const char default_neff[] = "file.neff";

/* profile_exec_N.ntff in the directory of the -s path. */
static char *nth_path(const char *session, unsigned long n)
{
	const char *slash = strrchr(session, '/');

	if (!slash)
		return nx_xasprintf("profile_exec_%lu.ntff", n);
	return nx_xasprintf("%.*s/profile_exec_%lu.ntff", (int)(slash - session), session, n);
}

/* The command line, as parsed. */
struct capture_args {
	struct nx_cli_common co;
	const char *neff_path, *session;
	unsigned long long num_exec, nth;
	bool nth_given, num_given, verbose;
	struct nx_sim_opts so;
};

/* One option of capture's own (the common ones are taken before). */
static int parse_opt(struct capture_args *a, int c, char **argv)
{
	switch (c) {
	case 'n': a->neff_path = optarg; break;
	case 's': a->session = optarg; break;
	case 'N':
		if (nx_cli_uint("capture", "--num-exec", optarg, 1, 1000000, &a->num_exec))
			return NX_EXIT_USAGE;
		a->num_given = true;
		break;
	case 'P':
		if (nx_cli_uint("capture", "--profile-nth-exec", optarg, 0, 1000000, &a->nth))
			return NX_EXIT_USAGE;
		a->nth_given = true;
		break;
	case 't':
		if (strcmp(optarg, "trn2") && strcmp(optarg, "trn1")) {
			nx_cli_error("capture", "--target must be trn2 or trn1, not '%s'", optarg);
			return NX_EXIT_USAGE;
		}
		a->so.target = optarg;
		break;
	case 'D': a->so.dma_packets = true; break;
	case 'S': {
		unsigned long long v;
		/* below the 2^61 ns the timeline endpoints take (about year 2043) */
		if (nx_cli_uint("capture", "--start-ns", optarg, 0, 1ull << 61, &v))
			return NX_EXIT_USAGE;
		a->so.start_ns = v;
		break;
	}
	case 'v': a->verbose = true; break;
	default:
		return nx_cli_bad_option("capture", c, argv);
	}
	return NX_EXIT_OK;
}

/* Returns an exit status; NX_EXIT_OK with co.help set when --help was answered. */
static int parse(int argc, char **argv, struct capture_args *a)
{
	static const struct option opts[] = {
		{ "neff", required_argument, NULL, 'n' },
		{ "session-file", required_argument, NULL, 's' },
		{ "num-exec", required_argument, NULL, 'N' },
		{ "profile-nth-exec", required_argument, NULL, 'P' },
		{ "target", required_argument, NULL, 't' },
		{ "enable-dge-notifs", no_argument, NULL, 'D' },
		{ "start-ns", required_argument, NULL, 'S' },
		{ "verbose", no_argument, NULL, 'v' },
		NX_CLI_LONG_QUIET,
		NX_CLI_LONG_HELP,
		{ NULL, 0, NULL, 0 },
	};
	int c, rc;

	memset(a, 0, sizeof(*a));
	nx_cli_common_init(&a->co, "capture");
	a->neff_path = default_neff;
	a->session = "profile.ntff";
	a->num_exec = a->nth = 1;
	a->so.target = "trn2";
	a->so.exec_index = 1;
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":n:s:vqh", opts, NULL)) != -1) {
		if (nx_cli_common_opt(&a->co, c, optarg)) {
			if (a->co.help) {
				usage(stdout);
				return NX_EXIT_OK;
			}
		} else if ((rc = parse_opt(a, c, argv))) {
			return rc;
		}
	}
	if (optind != argc) {
		nx_cli_error("capture", "unexpected argument '%s' (input tensors are not needed: "
			     "the simulator models timing only)", argv[optind]);
		return NX_EXIT_USAGE;
	}
	return NX_EXIT_OK;
}

/* Settles the executions to run and profile, reads the NEFF and checks the output
 * path (*out: NULL when profiling is disabled). */
static int prepare(struct capture_args *a, struct nx_neff *neff, char **out)
{
	const char *env = getenv("NEURON_RT_ENABLE_DGE_NOTIFICATIONS");
	struct nx_err err = { 0 };

	if (env && !strcmp(env, "1"))
		a->so.dma_packets = true;
	if (a->num_given && a->nth > a->num_exec) {
		nx_cli_error("capture", "--profile-nth-exec %llu is past the last execution "
			     "(--num-exec %llu)", a->nth, a->num_exec);
		return NX_EXIT_USAGE;
	}
	if (!a->num_given && a->nth > a->num_exec)
		a->num_exec = a->nth;
	a->so.exec_index = (uint32_t)(a->nth ? a->nth : 1);
	if (a->verbose || (!a->co.quiet && isatty(2)))
		a->so.progress = progress;
	if (a->neff_path == default_neff && access(default_neff, F_OK) != 0) {
		nx_cli_error("capture", "no NEFF to run: give one with -n K.neff (the default, "
			     "'%s', is not in this directory)", default_neff);
		return NX_EXIT_USAGE;
	}
	if (nx_neff_read(a->neff_path, neff, &err)) {
		memset(neff, 0, sizeof(*neff)); /* released already */
		nx_cli_error("capture", "%s", err.msg);
		return NX_EXIT_FAIL;
	}
	if (!a->nth)
		return NX_EXIT_OK;
	*out = a->nth_given ? nth_path(a->session, a->nth) : nx_xstrdup(a->session);
	/* its directory is created as the runtime does for its output; an existing file is
	 * replaced only when it is an NTFF (cli_output.h) */
	return nx_cli_out_file("capture", *out, NX_CLI_OUT_NTFF, NX_OUT_MAKE_DIR);
}

/* Simulates (and profiles) the executions. */
static int run(const struct capture_args *a, const struct nx_neff *neff, const char *out)
{
	unsigned long long n = a->num_exec;
	struct nx_err err = { 0 };
	struct nx_sim_stats st;
	double t0;
	int rc;

	t0 = wall_seconds();
	nx_cli_guard_outputs();
	if (!a->nth)
		/* profiling disabled: run for errors only */
		rc = nx_sim_run(neff, &a->so, NULL, &st, &err);
	else
		rc = nx_sim_capture(neff, &a->so, out, &st, &err);
	if (a->so.progress)
		fputc('\n', stderr);
	if (rc) {
		nx_cli_error("capture", "'%s': %s", a->neff_path, err.msg);
		return NX_EXIT_FAIL;
	}
	if (a->co.quiet)
		return NX_EXIT_OK;
	/* the one line capture prints (README) */
	if (out)
		fprintf(stderr, "capture: wrote %s: %s on %s, %llu execution%s, profiled #%llu: ",
			out, a->neff_path, a->so.target, n, n == 1 ? "" : "s", a->nth);
	else
		fprintf(stderr, "capture: ran %s on %s, %llu execution%s, none profiled: ",
			a->neff_path, a->so.target, n, n == 1 ? "" : "s");
	fprintf(stderr, "%" PRIu64 " instructions, %" PRIu64 " DMA packets%s, %.3f us simulated, "
		"%.2f s wall\n", st.insts, st.dma_packets, a->so.dma_packets ? "" : " (not recorded)",
		st.end_ns / 1000.0, wall_seconds() - t0);
	return NX_EXIT_OK;
}

int cmd_capture(int argc, char **argv)
{
	struct capture_args a;
	struct nx_neff neff;
	char *out = NULL;
	int rc = parse(argc, argv, &a);

	if (rc || a.co.help)
		return rc;
	memset(&neff, 0, sizeof(neff));
	rc = prepare(&a, &neff, &out);
	if (!rc)
		rc = run(&a, &neff, out);
	free(out);
	nx_neff_release(&neff);
	return rc;
}
