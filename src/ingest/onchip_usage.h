/* SPDX-License-Identifier: MIT
 * onchip_usage.h: SbufUsage and PsumUsage accumulated while the on-chip occupancy
 * intervals (nx_OnchipAlloc) are produced. Each interval [start, end) of `bytes` in
 * one unit (SBUF partition group, PSUM bank) is two events, +bytes at start and -bytes
 * at end. The integral of the occupied bytes up to a bucket edge t is
 *   A(t) = sum over events before t of delta * (t - ts) = t * D(t) - M(t),
 * with D the summed deltas and M the summed delta * ts of those events, so each event
 * only adds to the two prefix sums of the first edge after it: O(1) per interval and
 * O(buckets) memory, whatever the trace size or the interval lengths. This replaced the
 * window-function SQL (54_sbuf_usage.sql, 55_psum_usage.sql, kept as the reference in
 * tests/unit/test_onchip_usage.c), which sorted every event and grew superlinearly. */
#ifndef NX_INGEST_ONCHIP_USAGE_H
#define NX_INGEST_ONCHIP_USAGE_H

#include "common/compat.h"
#include "common/err.h"
#include "db/duck.h"

enum { NX_USAGE_SBUF = 0, NX_USAGE_PSUM = 1, NX_USAGE_NMEM = 2 };
#define NX_USAGE_UNITS 8 /* SBUF: 4 partition groups; PSUM: 8 banks */

struct nx_onchip_usage {
	int64_t first, w;       /* bucket grid: edge k at first + k * w */
	size_t nedges;          /* buckets + 1 */
	int64_t pcore;
	bool seen[NX_USAGE_NMEM];
	int64_t capacity[NX_USAGE_NMEM];
	__int128 *dsum[NX_USAGE_NMEM][NX_USAGE_UNITS];  /* deltas first seen at edge k */
	__int128 *msum[NX_USAGE_NMEM][NX_USAGE_UNITS];  /* delta * ts, likewise */
};

/* The DmaUsage grid over [first_ns, last_ns]: at most 2000 buckets of at least 100 ns. */
void nx_onchip_usage_init(struct nx_onchip_usage *u, int64_t first_ns, int64_t last_ns,
			  int64_t pcore);
/* One occupancy row: `unit` is the SBUF group's first partition or the PSUM bank;
 * `capacity` the unit's bytes. Rows of length <= 0 only mark the memory as seen. */
void nx_onchip_usage_add(struct nx_onchip_usage *u, int mem, unsigned unit, int64_t start,
			 int64_t end, int64_t bytes, int64_t capacity);
/* Writes SbufUsage.parquet and PsumUsage.parquet into dir (a memory with no rows has no
 * table); rows[] gets the row counts. */
int nx_onchip_usage_write(struct nx_onchip_usage *u, struct nx_duck *d, const char *dir,
			  uint64_t rows[NX_USAGE_NMEM], struct nx_err *err);
void nx_onchip_usage_release(struct nx_onchip_usage *u);

#endif
