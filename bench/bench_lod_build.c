/* SPDX-License-Identifier: MIT
 * bench_lod_build.c: builds the timeline cache of a profile as `view` does at the end of
 * its ingest (server/lod_carried.h), into PROFILE_DIR/.timeline, and prints the events
 * it summarizes, its time, CPU time and the process's peak RSS, then one line per phase
 * of the build (the events copy and pyramid of each source, the counters, the per-line
 * summary, the checkpoint) with its CPU and wall seconds and the largest RSS sampled in
 * it: on a loaded machine the CPU seconds are the figure to compare. The profile must not
 * carry one yet. Every half second a thread samples where the memory is: the process's
 * RSS and anonymous pages (/proc/self/smaps_rollup), glibc's heap (mallinfo2: in use and
 * free in its arenas, and its own mmaps) and DuckDB's allocator (its jemalloc's allocated,
 * active, dirty, muzzy, resident and retained bytes); each phase line shows them at the
 * phase's largest RSS, and NX_BENCH_MEM_TRACE=1 prints every sample to stderr.
 * NX_LOD_MEMORY_LIMIT and NX_LOD_CHUNK_ROWS set its bounds (server/lod.h); NX_LOD_SQL_LEVELS=1
 * builds the pyramids' levels above the finest by grouping queries (the build before they
 * were built in C), and NX_LOD_SLICE_GROUPS=0 reads every table file whole (the build
 * before it read large files as slices of row groups), for a before/after on one profile;
 * NX_LOD_PURGE_MS=0 builds without purging DuckDB's allocator (the build before it did);
 * NX_LOD_EVENTS_IN_PLACE=1 leaves the events of a table in start order in the profile's
 * parquet rather than copying them (docs/memory.md, "Events read in place"), and
 * NX_LOD_COPY_THEN_L0=1 copies the events first and reads them back for L0 (the build
 * before the two were one pass; bench/lod_pass_compare.sh runs both and compares).
 * usage: bench_lod_build PROFILE_DIR NAME */
#include "common/compat.h"
#include "server/lod_carried.h"

#include <dlfcn.h>
#include <malloc.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#define MIB (1024.0 * 1024.0)

/* One sample of where the process's memory is, in bytes. */
struct mem_sample {
	double rss, anon;
	double glibc_used, glibc_free, glibc_mmap;
	double je_alloc, je_resident, je_retained;
	double je_active, je_dirty, je_muzzy; /* bytes: active pages, dirty and muzzy pages */
};

typedef int (*mallctl_fn)(const char *, void *, size_t *, void *, size_t);

/* The sampler: the largest sample (by RSS) of each phase, the phase being the number of
 * phases the build has ended so far. */
struct sampler {
	struct nx_lod_phases *ph;
	struct mem_sample peak[NX_LOD_MAX_PHASES + 1];
	atomic_bool stop;
	mallctl_fn mallctl;
	bool trace;
};

static double proc_field(const char *path, const char *key)
{
	FILE *f = fopen(path, "r");
	char line[256];
	size_t n = strlen(key);
	double v = 0;

	while (f && fgets(line, sizeof(line), f))
		if (!strncmp(line, key, n)) {
			v = strtod(line + n, NULL) * 1024;
			break;
		}
	if (f)
		fclose(f);
	return v;
}

static double je_stat(mallctl_fn mallctl, const char *name)
{
	size_t v = 0, len = sizeof(v);

	if (!mallctl || mallctl(name, &v, &len, NULL, 0))
		return 0;
	return (double)v;
}

static void sample(struct sampler *s, struct mem_sample *m)
{
	struct mallinfo2 mi = mallinfo2();
	double page = (double)sysconf(_SC_PAGESIZE);
	uint64_t epoch = 1;

	m->rss = proc_field("/proc/self/smaps_rollup", "Rss:");
	m->anon = proc_field("/proc/self/smaps_rollup", "Anonymous:");
	m->glibc_used = (double)mi.uordblks;
	m->glibc_free = (double)mi.fordblks;
	m->glibc_mmap = (double)mi.hblkhd;
	if (s->mallctl)
		s->mallctl("epoch", NULL, NULL, &epoch, sizeof(epoch));
	m->je_alloc = je_stat(s->mallctl, "stats.allocated");
	m->je_resident = je_stat(s->mallctl, "stats.resident");
	m->je_retained = je_stat(s->mallctl, "stats.retained");
	m->je_active = je_stat(s->mallctl, "stats.active");
	/* in pages, of every arena (4096: MALLCTL_ARENAS_ALL) */
	m->je_dirty = je_stat(s->mallctl, "stats.arenas.4096.pdirty") * page;
	m->je_muzzy = je_stat(s->mallctl, "stats.arenas.4096.pmuzzy") * page;
}

static void print_sample(FILE *f, const struct mem_sample *m)
{
	fprintf(f, "RSS %4.0f (anon %4.0f; glibc used %3.0f free %3.0f mmap %3.0f; duckdb "
		   "allocated %3.0f active %3.0f dirty %3.0f muzzy %3.0f resident %3.0f "
		   "retained %4.0f) MiB",
		m->rss / MIB, m->anon / MIB, m->glibc_used / MIB, m->glibc_free / MIB,
		m->glibc_mmap / MIB, m->je_alloc / MIB, m->je_active / MIB, m->je_dirty / MIB,
		m->je_muzzy / MIB, m->je_resident / MIB, m->je_retained / MIB);
}

static void *sampler_run(void *arg)
{
	struct sampler *s = arg;
	struct timespec t0, t;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	while (!atomic_load(&s->stop)) {
		size_t i = __atomic_load_n(&s->ph->n, __ATOMIC_RELAXED);
		struct mem_sample m;

		sample(s, &m);
		if (i > NX_LOD_MAX_PHASES)
			i = NX_LOD_MAX_PHASES;
		if (m.rss > s->peak[i].rss)
			s->peak[i] = m;
		if (s->trace) {
			clock_gettime(CLOCK_MONOTONIC, &t);
			fprintf(stderr, "%7.1f s phase %2zu ",
				(double)(t.tv_sec - t0.tv_sec) +
					(double)(t.tv_nsec - t0.tv_nsec) / 1e9, i);
			print_sample(stderr, &m);
			fputc('\n', stderr);
		}
		usleep(500000);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	struct nx_lod_phases ph = { 0 };
	struct sampler s = { .ph = &ph };
	struct nx_err err = { 0 };
	struct timespec a, b;
	struct rusage ru;
	pthread_t th;
	uint64_t events = 0;
	double cpu = 0;
	const char *trace = getenv("NX_BENCH_MEM_TRACE");
	int rc;

	if (argc != 3) {
		fprintf(stderr, "usage: bench_lod_build PROFILE_DIR NAME\n");
		return 2;
	}
	*(void **)&s.mallctl = dlsym(RTLD_DEFAULT, "duckdb_je_mallctl");
	s.trace = trace && !strcmp(trace, "1");
	atomic_init(&s.stop, false);
	clock_gettime(CLOCK_MONOTONIC, &a);
	if (pthread_create(&th, NULL, sampler_run, &s)) {
		fprintf(stderr, "bench_lod_build: cannot start the memory sampler\n");
		return 1;
	}
	rc = nx_lod_build_carried(argv[1], argv[2], &events, &ph, &err);
	atomic_store(&s.stop, true);
	pthread_join(th, NULL);
	if (rc) {
		fprintf(stderr, "bench_lod_build: %s\n", err.msg);
		return 1;
	}
	clock_gettime(CLOCK_MONOTONIC, &b);
	getrusage(RUSAGE_SELF, &ru);
	for (size_t i = 0; i < ph.n; i++)
		cpu += ph.ph[i].cpu_s;
	printf("timeline cache of %s: %llu events, %.2f s, CPU %.2f s, peak RSS %.0f MB\n",
	       argv[1], (unsigned long long)events,
	       (double)(b.tv_sec - a.tv_sec) + (double)(b.tv_nsec - a.tv_nsec) / 1e9, cpu,
	       (double)ru.ru_maxrss / 1024);
	for (size_t i = 0; i < ph.n; i++) {
		printf("  %-34s CPU %7.2f s  wall %7.2f s  ", ph.ph[i].name, ph.ph[i].cpu_s,
		       ph.ph[i].wall_s);
		print_sample(stdout, &s.peak[i]);
		putchar('\n');
	}
	return 0;
}
