/* SPDX-License-Identifier: MIT
 * cmd_capture.c: `neuron-explorer capture`, which executes a NEFF on the NeuronCore
 * simulator (src/sim) and writes the device trace as an NTFF marked as simulated.
 * DMA packet records are written only with NEURON_RT_ENABLE_DGE_NOTIFICATIONS=1 or
 * --enable-dge-notifs, as on hardware. With --profile-nth-exec=N the trace of
 * execution N goes to profile_exec_N.ntff next to the -s path. */
#include "common/compat.h"
#include "cli/commands.h"
#include "common/fsutil.h"
#include "common/strbuf.h"
#include "common/xalloc.h"
#include "neff/neff.h"
#include "sim/sim.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static void usage(FILE *f)
{
	fprintf(f,
		"usage: neuron-explorer capture [-n K.neff] [-s profile.ntff] [--num-exec N]\n"
		"                               [--profile-nth-exec N] [--target trn2|trn1]\n"
		"                               [--enable-dge-notifs] [-v]\n"
		"\n"
		"Executes a NEFF on the simulated NeuronCore and writes its device profile.\n"
		"  -n, --neff FILE           NEFF to run (default file.neff)\n"
		"  -s, --session-file FILE   NTFF to write (default profile.ntff)\n"
		"      --num-exec N          executions to run (default 1)\n"
		"      --profile-nth-exec N  profile execution N; the file is then\n"
		"                            profile_exec_N.ntff in the directory of -s\n"
		"      --target T            trn2 (NeuronCore-v3, default) or trn1 (v2)\n"
		"      --enable-dge-notifs   record DMA packets (same as the environment\n"
		"                            variable NEURON_RT_ENABLE_DGE_NOTIFICATIONS=1)\n"
		"  -v, --verbose             report progress on stderr\n"
		"\n"
		"The trace is simulated (docs/simulator.md) and says so in its header.\n");
}

static int parse_count(const char *opt, const char *arg, unsigned long *v)
{
	char *end;

	*v = strtoul(arg, &end, 10);
	if (!*arg || *end || *v > 1000000) {
		nx_cli_error("capture", "%s needs a number between 0 and 1000000, not '%s'", opt, arg);
		return -1;
	}
	return 0;
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

/* profile_exec_N.ntff in the directory of the -s path. */
static char *nth_path(const char *session, unsigned long n)
{
	const char *slash = strrchr(session, '/');

	if (!slash)
		return nx_xasprintf("profile_exec_%lu.ntff", n);
	return nx_xasprintf("%.*s/profile_exec_%lu.ntff", (int)(slash - session), session, n);
}

/* Creates the directory the trace goes to, as the runtime does for its output. */
static int make_parent(const char *path, struct nx_err *err)
{
	const char *slash = strrchr(path, '/');
	char *dir;
	int rc;

	if (!slash || slash == path)
		return 0;
	dir = nx_xstrndup(path, (size_t)(slash - path));
	rc = nx_mkdirs(dir, err);
	free(dir);
	return rc;
}

int cmd_capture(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "neff", required_argument, NULL, 'n' },
		{ "session-file", required_argument, NULL, 's' },
		{ "num-exec", required_argument, NULL, 'N' },
		{ "profile-nth-exec", required_argument, NULL, 'P' },
		{ "target", required_argument, NULL, 't' },
		{ "enable-dge-notifs", no_argument, NULL, 'D' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *neff_path = "file.neff", *session = "profile.ntff", *env;
	unsigned long num_exec = 1, nth = 1;
	bool nth_given = false, verbose = false;
	struct nx_sim_opts so = { .target = "trn2", .exec_index = 1 };
	struct nx_sim_stats st;
	struct nx_neff neff;
	struct nx_err err = { 0 };
	char *out = NULL;
	double t0;
	int c, rc;

	optind = 1;
	while ((c = getopt_long(argc, argv, "n:s:vh", opts, NULL)) != -1) {
		switch (c) {
		case 'n':
			neff_path = optarg;
			break;
		case 's':
			session = optarg;
			break;
		case 'N':
			if (parse_count("--num-exec", optarg, &num_exec))
				return NX_EXIT_USAGE;
			break;
		case 'P':
			if (parse_count("--profile-nth-exec", optarg, &nth))
				return NX_EXIT_USAGE;
			nth_given = true;
			break;
		case 't':
			if (strcmp(optarg, "trn2") && strcmp(optarg, "trn1")) {
				nx_cli_error("capture", "--target must be trn2 or trn1, not '%s'", optarg);
				return NX_EXIT_USAGE;
			}
			so.target = optarg;
			break;
		case 'D':
			so.dma_packets = true;
			break;
		case 'v':
			verbose = true;
			break;
		case 'h':
			usage(stdout);
			return NX_EXIT_OK;
		default:
			usage(stderr);
			return NX_EXIT_USAGE;
		}
	}
	if (optind != argc) {
		nx_cli_error("capture", "unexpected argument '%s' (input tensors are not needed: "
			     "the simulator models timing only)", argv[optind]);
		return NX_EXIT_USAGE;
	}
	env = getenv("NEURON_RT_ENABLE_DGE_NOTIFICATIONS");
	if (env && !strcmp(env, "1"))
		so.dma_packets = true;
	if (num_exec < nth)
		num_exec = nth;
	so.exec_index = (uint32_t)(nth ? nth : 1);
	if (verbose || isatty(2))
		so.progress = progress;

	if (nx_neff_read(neff_path, &neff, &err)) {
		nx_cli_error("capture", "%s", err.msg);
		return NX_EXIT_FAIL;
	}
	t0 = wall_seconds();
	if (!nth) {
		/* profiling disabled: run for errors only */
		rc = nx_sim_run(&neff, &so, NULL, &st, &err);
	} else {
		out = nth_given ? nth_path(session, nth) : nx_xstrdup(session);
		rc = make_parent(out, &err);
		if (!rc)
			rc = nx_sim_capture(&neff, &so, out, &st, &err);
	}
	if (so.progress)
		fputc('\n', stderr);
	if (rc) {
		nx_cli_error("capture", "'%s': %s", neff_path, err.msg);
		rc = NX_EXIT_FAIL;
		goto out;
	}
	printf("captured %s: %lu execution%s, profiled #%lu: %" PRIu64 " instructions, %" PRIu64
	       " DMA packets%s, %.3f us simulated on %s, %.2f s wall\n",
	       out ? out : "(profiling disabled)", num_exec, num_exec == 1 ? "" : "s", nth,
	       st.insts, st.dma_packets, so.dma_packets ? "" : " (not recorded)",
	       st.end_ns / 1000.0, so.target, wall_seconds() - t0);
	rc = NX_EXIT_OK;
out:
	free(out);
	nx_neff_release(&neff);
	return rc;
}
