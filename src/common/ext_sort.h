/* SPDX-License-Identifier: MIT
 * ext_sort.h: an external merge sort of fixed-size records in bounded memory.
 *
 * Records are added one at a time into a buffer of mem_bytes; a full buffer is sorted
 * (qsort) and written to disk as a run. When NX_XSORT_FANIN runs are on disk they are
 * merged into one, so no more than that many files are ever open (the merged run is
 * rewritten at every 63 new runs: cheap up to a few thousand runs, 4 MB each; a tiered
 * merge would do better past that). nx_xsort_finish
 * sorts what is left; nx_xsort_next then returns every record in order, merging the
 * runs through a heap with a 64 KB read buffer each. Memory: the buffer, plus 64 KB per
 * run while merging (NX_XSORT_FANIN x 64 KB = 4 MB at most). Disk: each record once per
 * merge level. Run files are unlinked as soon as they are open: nothing is left behind,
 * whatever happens. A sort that never filled its buffer never touches the disk. */
#ifndef NX_COMMON_EXT_SORT_H
#define NX_COMMON_EXT_SORT_H

#include "common/compat.h"
#include "common/err.h"

#define NX_XSORT_FANIN 64

typedef int (*nx_xsort_cmp)(const void *a, const void *b);

struct nx_xsort_run;

struct nx_xsort {
	char *dir;                 /* where run files are made */
	size_t size;               /* bytes per record */
	nx_xsort_cmp cmp;
	char *buf;                 /* the buffer: n of cap records */
	size_t cap, n;
	struct nx_xsort_run *runs; /* on disk, or being merged */
	size_t nruns;
	size_t *heap, nheap;       /* merge: run indices, smallest record first */
	size_t pos;                /* in-memory only: next record of buf */
	bool finished;
	uint64_t count;            /* records added */
	uint64_t spilled;          /* records written to runs (all levels) */
	/* the first error: later calls do nothing and return it */
	int rc;
	struct nx_err err;
};

/* An empty sort of size-byte records ordered by cmp, with a buffer of mem_bytes
 * (at least one record), spilling into dir. */
void nx_xsort_init(struct nx_xsort *s, const char *dir, size_t size, nx_xsort_cmp cmp,
		   size_t mem_bytes);
/* Adds one record; fails only on a disk error (then every later call fails too). */
int nx_xsort_add(struct nx_xsort *s, const void *rec, struct nx_err *err);
/* Ends the adding; the records can then be read in order. */
int nx_xsort_finish(struct nx_xsort *s, struct nx_err *err);
/* The next record in order into rec: 1, or 0 at the end, or a negative error. */
int nx_xsort_next(struct nx_xsort *s, void *rec, struct nx_err *err);
void nx_xsort_release(struct nx_xsort *s);

#endif
