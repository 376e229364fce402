/* SPDX-License-Identifier: MIT
 * bench_sim.c: simulator speed. For each library kernel at its default size: the
 * time to generate and assemble it, the simulation alone (no output; best of --runs,
 * default 3) as instructions and DMA packets per second of wall time and of CPU time
 * (on a loaded machine only the second means much), and a full capture with DMA
 * packets written to an NTFF, on trn2 or with --target trn1 on trn1 (whose cost model
 * has more to track: docs/simulator.md).
 * usage: bench_sim [WORKDIR] [--target T] [--runs N] [KERNEL ...] */
#include "common/compat.h"
#include "common/fsutil.h"
#include "common/xalloc.h"
#include "kernels/library.h"
#include "sim/sim.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* CPU seconds this thread has run (user and system; the kernel's exact count, where
 * getrusage's user time is a coarse share of it). */
static double cpu_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static int bench(const struct nx_kernel_def *k, const char *dir, const char *target, int runs)
{
	struct nx_kopts ko = { .size = 0, .target = target };
	struct nx_sim_opts o = { .target = target, .dma_packets = true, .exec_index = 1 };
	struct nx_sim_stats st;
	struct nx_err err = { 0 };
	struct nx_neff neff;
	struct stat sb;
	double t0, c0, gen, sim = 1e9, cpu = 1e9, cap;
	char *path = nx_xasprintf("%s/%s.ntff", dir, k->name);
	int rc;

	t0 = now();
	rc = nx_kernel_build(k, &ko, &neff, &err);
	gen = now() - t0;
	if (rc)
		goto out;
	for (int i = 0; i < runs && !rc; i++) {
		t0 = now();
		c0 = cpu_now();
		rc = nx_sim_run(&neff, &o, NULL, &st, &err);
		if (cpu_now() - c0 < cpu)
			cpu = cpu_now() - c0;
		if (now() - t0 < sim)
			sim = now() - t0;
	}
	t0 = now();
	if (!rc)
		rc = nx_sim_capture(&neff, &o, path, &st, &err);
	cap = now() - t0;
	nx_neff_release(&neff);
	if (rc)
		goto out;
	printf("%-17s %5u %8" PRIu64 " %9" PRIu64 " %10.1f %8.3f %8.4f %8.4f %10.2f %10.2f %10.2f "
	       "%10.2f %8.3f %9.1f\n",
	       k->name, k->default_size, st.insts, st.dma_packets, st.end_ns / 1000.0, gen, sim,
	       cpu, st.insts / sim / 1e6, st.dma_packets / sim / 1e6,
	       st.insts / cpu / 1e6, st.dma_packets / cpu / 1e6, cap,
	       stat(path, &sb) ? 0.0 : sb.st_size / 1e6);
out:
	if (rc)
		fprintf(stderr, "bench_sim: %s: %s\n", k->name, err.msg);
	remove(path);
	free(path);
	return rc;
}

int main(int argc, char **argv)
{
	const char *dir = argc > 1 ? argv[1] : "/tmp", *target = "trn2";
	const struct nx_kernel_def *const *k;
	struct nx_err err = { 0 };
	size_t n;
	int rc = 0, first = 2, runs = 3;

	/* WORKDIR, then the options, then the kernels */
	while (first + 1 < argc && (!strcmp(argv[first], "--target") ||
				    !strcmp(argv[first], "--runs"))) {
		if (!strcmp(argv[first], "--target")) {
			target = argv[first + 1];
		} else {
			runs = atoi(argv[first + 1]);
			if (runs < 1) {
				fprintf(stderr, "bench_sim: --runs wants a count of 1 or more\n");
				return 2;
			}
		}
		first += 2;
	}

	if (nx_mkdirs(dir, &err)) {
		fprintf(stderr, "bench_sim: %s\n", err.msg);
		return 1;
	}
	printf("# simulator speed (%s, DMA packets on); sim = simulation alone, best of %d\n"
	       "# (sim_s wall, cpu_s CPU time, and the rates per second of each);\n"
	       "# capture = simulation + NTFF writing\n", target, runs);
	printf("%-17s %5s %8s %9s %10s %8s %8s %8s %10s %10s %10s %10s %8s %9s\n", "kernel",
	       "size", "insts", "dma_pkts", "sim_us", "gen_s", "sim_s", "cpu_s", "Minst/s",
	       "Mpkt/s", "Minst/cpu", "Mpkt/cpu", "capt_s", "ntff_MB");
	k = nx_kernels(&n);
	for (size_t i = 0; i < n; i++) {
		bool want = argc <= first;

		for (int a = first; a < argc; a++)
			want |= !strcmp(argv[a], k[i]->name);
		if (want)
			rc |= bench(k[i], dir, target, runs);
	}
	return rc ? 1 : 0;
}
