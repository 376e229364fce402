/* SPDX-License-Identifier: MIT
 * cmd_capture.c: `neuron-explorer capture`, which executes a NEFF on the NeuronCore
 * simulator (src/sim) and writes the device trace as an NTFF marked as simulated.
 * DMA packet records are written only with NEURON_RT_ENABLE_DGE_NOTIFICATIONS=1 or
 * --enable-dge-notifs, as on hardware. With --profile-nth-exec=N the trace of
 * execution N goes to profile_exec_N.ntff next to the -s path. */
#include "common/compat.h"
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
	fprintf(f,
		"usage: neuron-explorer capture [-n K.neff] [-s profile.ntff] [--num-exec N]\n"
		"                               [--profile-nth-exec N] [--target trn2|trn1]\n"
		"                               [--enable-dge-notifs] [-v | -q]\n"
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
		"  -v, --verbose             report progress on stderr as the run goes\n"
		"  -q, --quiet               no start line on stderr\n"
		"\n"
		"The trace is simulated (docs/simulator.md) and says so in its header.\n");
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

/* Creates the directory the trace goes to, as the runtime does for its output, and
 * checks that the trace file can be written there, so that a bad -s is reported
 * before the run and by its own name. Prints its error. */
static int check_output(const char *path)
{
	const char *slash = strrchr(path, '/');
	struct nx_err err = { 0 };
	int fd;

	if (nx_is_dir(path)) {
		nx_cli_error("capture", "-s '%s' is a directory; give the NTFF file to write "
			     "(e.g. '%s/profile.ntff')", path, path);
		return NX_EXIT_USAGE;
	}
	if (slash && slash != path) {
		char *dir = nx_xstrndup(path, (size_t)(slash - path));
		int rc = nx_mkdirs(dir, &err);

		free(dir);
		if (rc) {
			nx_cli_error("capture", "cannot create the directory of the output '%s': %s",
				     path, err.msg);
			return NX_EXIT_FAIL;
		}
	}
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
	if (fd >= 0) {
		close(fd);
		unlink(path);
		return NX_EXIT_OK;
	}
	if (errno == EEXIST && (fd = open(path, O_WRONLY | O_CLOEXEC)) >= 0) {
		close(fd);
		return NX_EXIT_OK;
	}
	nx_cli_error("capture", "cannot write the output '%s': %s", path, strerror(errno));
	return NX_EXIT_FAIL;
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
		{ "quiet", no_argument, NULL, 'q' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *neff_path = "file.neff", *session = "profile.ntff", *env;
	unsigned long long num_exec = 1, nth = 1;
	bool nth_given = false, num_given = false, verbose = false, quiet = false;
	struct nx_sim_opts so = { .target = "trn2", .exec_index = 1 };
	struct nx_sim_stats st;
	struct nx_neff neff;
	struct nx_err err = { 0 };
	char *out = NULL;
	double t0;
	int c, rc;

	optind = 1;
	while ((c = getopt_long(argc, argv, "n:s:vqh", opts, NULL)) != -1) {
		switch (c) {
		case 'n':
			neff_path = optarg;
			break;
		case 's':
			session = optarg;
			break;
		case 'N':
			if (nx_cli_uint("capture", "--num-exec", optarg, 1, 1000000, &num_exec))
				return NX_EXIT_USAGE;
			num_given = true;
			break;
		case 'P':
			if (nx_cli_uint("capture", "--profile-nth-exec", optarg, 0, 1000000, &nth))
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
		case 'q':
			quiet = true;
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
	if (num_given && nth > num_exec) {
		nx_cli_error("capture", "--profile-nth-exec %llu is past the last execution "
			     "(--num-exec %llu)", nth, num_exec);
		return NX_EXIT_USAGE;
	}
	if (!num_given && nth > num_exec)
		num_exec = nth;
	so.exec_index = (uint32_t)(nth ? nth : 1);
	if (verbose || (!quiet && isatty(2)))
		so.progress = progress;

	if (nx_neff_read(neff_path, &neff, &err)) {
		nx_cli_error("capture", "%s", err.msg);
		return NX_EXIT_FAIL;
	}
	if (nth) {
		out = nth_given ? nth_path(session, nth) : nx_xstrdup(session);
		if ((rc = check_output(out)))
			goto out;
	}
	if (!quiet) {
		fprintf(stderr, "capture: simulating %s on %s, %llu execution%s, ", neff_path,
			so.target, num_exec, num_exec == 1 ? "" : "s");
		if (out)
			fprintf(stderr, "profiling #%llu into %s\n", nth, out);
		else
			fprintf(stderr, "profiling none\n");
	}
	t0 = wall_seconds();
	if (!nth)
		/* profiling disabled: run for errors only */
		rc = nx_sim_run(&neff, &so, NULL, &st, &err);
	else
		rc = nx_sim_capture(&neff, &so, out, &st, &err);
	if (so.progress)
		fputc('\n', stderr);
	if (rc) {
		nx_cli_error("capture", "'%s': %s", neff_path, err.msg);
		rc = NX_EXIT_FAIL;
		goto out;
	}
	printf("captured %s: %llu execution%s, profiled #%llu: %" PRIu64 " instructions, %" PRIu64
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
