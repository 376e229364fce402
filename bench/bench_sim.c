/* SPDX-License-Identifier: MIT
 * bench_sim.c: simulator speed. For each library kernel at its default size: the
 * time to generate and assemble it, the simulation alone (no output; best of 3) as
 * instructions and DMA packets per second, and a full capture with DMA packets
 * written to an NTFF, on trn2 or with --target trn1 on trn1 (whose cost model has
 * more to track: docs/simulator.md). usage: bench_sim [WORKDIR] [--target T] [KERNEL ...] */
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

static int bench(const struct nx_kernel_def *k, const char *dir, const char *target)
{
	struct nx_kopts ko = { .size = 0, .target = target };
	struct nx_sim_opts o = { .target = target, .dma_packets = true, .exec_index = 1 };
	struct nx_sim_stats st;
	struct nx_err err = { 0 };
	struct nx_neff neff;
	struct stat sb;
	double t0, gen, sim = 1e9, cap;
	char *path = nx_xasprintf("%s/%s.ntff", dir, k->name);
	int rc;

	t0 = now();
	rc = nx_kernel_build(k, &ko, &neff, &err);
	gen = now() - t0;
	if (rc)
		goto out;
	for (int i = 0; i < 3 && !rc; i++) {
		t0 = now();
		rc = nx_sim_run(&neff, &o, NULL, &st, &err);
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
	printf("%-17s %5u %8" PRIu64 " %9" PRIu64 " %10.1f %8.3f %8.3f %10.2f %10.2f %8.3f %9.1f\n",
	       k->name, k->default_size, st.insts, st.dma_packets, st.end_ns / 1000.0, gen, sim,
	       st.insts / sim / 1e6, st.dma_packets / sim / 1e6, cap,
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
	int rc = 0, first = 2;

	if (argc > 3 && !strcmp(argv[2], "--target")) {
		target = argv[3];
		first = 4;
	}

	if (nx_mkdirs(dir, &err)) {
		fprintf(stderr, "bench_sim: %s\n", err.msg);
		return 1;
	}
	printf("# simulator speed (%s, DMA packets on); sim = simulation alone, best of 3;\n"
	       "# capture = simulation + NTFF writing\n", target);
	printf("%-17s %5s %8s %9s %10s %8s %8s %10s %10s %8s %9s\n", "kernel", "size", "insts",
	       "dma_pkts", "sim_us", "gen_s", "sim_s", "Minst/s", "Mpkt/s", "capt_s", "ntff_MB");
	k = nx_kernels(&n);
	for (size_t i = 0; i < n; i++) {
		bool want = argc <= first;

		for (int a = first; a < argc; a++)
			want |= !strcmp(argv[a], k[i]->name);
		if (want)
			rc |= bench(k[i], dir, target);
	}
	return rc ? 1 : 0;
}
