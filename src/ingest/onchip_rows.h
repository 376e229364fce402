/* SPDX-License-Identifier: MIT
 * onchip_rows.h: the occupancy pass's rows kept for SbufUsage and PsumUsage until the
 * trace's time bounds are known. The usage grid (onchip_usage.h) needs the bounds, which
 * the raw stage collects as it reads the trace; the pass runs beside it, so rather than
 * read the whole trace once more for the bounds first, it logs each row (memory, unit,
 * start, end, bytes: a few varint bytes, the times as deltas) into a 64 KB buffer that
 * spills to an unlinked file in the staging directory, and the rows are replayed into
 * the grid once the raw stage has ended. Memory: two 64 KB buffers. Disk: the log, a
 * few bytes per row. A log that never filled its buffer never touches the disk. */
#ifndef NX_INGEST_ONCHIP_ROWS_H
#define NX_INGEST_ONCHIP_ROWS_H

#include "common/compat.h"
#include "common/err.h"
#include "ingest/onchip_usage.h"

struct nx_onchip_rows {
	char *dir;
	unsigned char *buf;
	size_t n;               /* bytes in buf */
	int fd;                 /* the spill file, -1 until the buffer first fills */
	uint64_t spilled;       /* bytes written to it */
	uint64_t rows;
	int64_t prev_start;
	int64_t capacity[NX_USAGE_NMEM];
	/* the first error: later calls do nothing and replay returns it */
	int rc;
	struct nx_err err;
};

/* An empty log spilling into dir. */
void nx_onchip_rows_init(struct nx_onchip_rows *q, const char *dir);
/* One row, as nx_onchip_usage_add takes it. */
void nx_onchip_rows_add(struct nx_onchip_rows *q, int mem, unsigned unit, int64_t start,
			int64_t end, int64_t bytes, int64_t capacity);
/* Feeds every row, in the order they came, to nx_onchip_usage_add on u. */
int nx_onchip_rows_replay(struct nx_onchip_rows *q, struct nx_onchip_usage *u,
			  struct nx_err *err);
void nx_onchip_rows_release(struct nx_onchip_rows *q);

#endif
