/* SPDX-License-Identifier: MIT
 * resident.h: small tables that queries keep reading are copied into the profile
 * database's memory. Every table starts as a view over its parquet files, and DuckDB
 * binds such a view again at every query: it opens the files, checks them and reads
 * the column chunks, which for a one-row Summary is most of a 0.7 ms query. A table
 * whose files are small, once read NX_RESIDENT_AFTER times, is copied into a DuckDB
 * table of the same name and the view dropped, in one transaction; queries that
 * follow read memory. A profile never changes under its database (a new version gets
 * a new one), so the copy cannot go stale.
 *
 * Memory is bounded per profile: a copy that takes more than NX_RESIDENT_TABLE_BYTES,
 * or would take DuckDB's in-memory tables past NX_RESIDENT_BUDGET bytes (its own
 * accounting, duckdb_memory()), is rolled back and the table stays a view for good, as
 * does one with more than NX_RESIDENT_ROWS rows. DuckDB gives each column a first
 * segment of about 14 KB and, past 2,048 rows, blocks of 256 KiB, so a 101-column
 * one-row Summary takes 1.4 MB and a 55-column Instruction of 4,342 rows 14.5 MB (from
 * 105 KB of parquet): the per-table cap keeps copies to tables that are small in
 * memory too.
 * A profile queried only once or twice per table, as the seed workflows do with curl,
 * never pays for a copy. */
#ifndef NX_SERVER_RESIDENT_H
#define NX_SERVER_RESIDENT_H

#include "common/compat.h"

#include <duckdb.h>
#include <pthread.h>

#define NX_RESIDENT_AFTER 3                    /* reads before a table is copied */
#define NX_RESIDENT_FILE_BYTES ((uint64_t)256 << 10) /* larger tables stay views */
#define NX_RESIDENT_ROWS 65536
#define NX_RESIDENT_BUDGET ((int64_t)16 << 20) /* DuckDB in-memory table bytes */
#define NX_RESIDENT_TABLE_BYTES ((int64_t)4 << 20) /* ... and for one copy */
#define NX_RESIDENT_MAX 64                     /* candidates: one bit each in a mask */

enum nx_rstate { NX_RS_VIEW, NX_RS_COPYING, NX_RS_RESIDENT, NX_RS_STAYS_VIEW };

struct nx_resident {
	pthread_mutex_t lock;
	struct nx_rtable {
		char *name;
		unsigned reads;
		enum nx_rstate state;
	} t[NX_RESIDENT_MAX];
	size_t n;
	unsigned copies; /* tables copied so far */
	int64_t budget;  /* NX_RESIDENT_BUDGET but in tests */
};

void nx__resident_init(struct nx_resident *r, int64_t budget);
void nx__resident_release(struct nx_resident *r);
/* Makes the table (a view of that name, over files of `bytes` bytes) a candidate when
 * it is small enough and there is room. */
void nx__resident_add(struct nx_resident *r, const char *name, uint64_t bytes);
/* The candidates that sql names, bit i for t[i]. Set before the database serves
 * queries, the names are read without the lock. */
uint64_t nx__resident_mask(const struct nx_resident *r, const char *sql);
/* Counts one read of each candidate in mask, and copies into memory, on c, the first
 * one that reaches NX_RESIDENT_AFTER reads (one per call, so a query waits for one
 * small copy at most). */
void nx__resident_read(struct nx_resident *r, duckdb_connection c, uint64_t mask);
/* How many tables have been copied: a statement prepared before the last copy may
 * still be bound to a view, and is prepared again. */
unsigned nx__resident_copies(struct nx_resident *r);
/* The state of the candidate `name`; NX_RS_STAYS_VIEW when it is none (tests). */
enum nx_rstate nx__resident_state(struct nx_resident *r, const char *name);

#endif
