/* SPDX-License-Identifier: MIT
 * source_ahead.h: a row source run ahead on a producer thread of its own into a ring of
 * DuckDB data chunks, read by one or two writers (nx_duck_ahead_start in duck.h), for
 * the code of src/db that reads it: the nx_source() table function and the copies in
 * duck.c, and our parquet writer's feed (whose batches also carry the rows' keys when the
 * source has keys: struct nx_row_keys, db/duck.h). Private to src/db. */
#ifndef NX_DB_SOURCE_AHEAD_H
#define NX_DB_SOURCE_AHEAD_H

#include "common/compat.h"
#include "common/arena.h"
#include "common/err.h"
#include "db/duck.h"

#include <duckdb.h>
#include <pthread.h>

/* Chunks a source run ahead of the writer may hold ready (each at most one vector of
 * rows; nx_duck_copy_ahead). 16 is half a row group of the raw tables (32768 rows), so
 * the source fills the next while DuckDB encodes one, and it lets a source started
 * before its database (nx_duck_ahead_start) read on while DuckDB opens, about 30 ms. */
#define NX_AHEAD_CHUNKS 16
/* Batches in all: those ready, the one the writer was handed last (it reads it until it
 * asks for the next), and free ones. A batch's chunk is made once, when first needed,
 * and refilled: a chunk made on the producer thread and freed on DuckDB's, 3400 times
 * per 7M rows, left DuckDB's allocator holding 30 to 100 MB more, varying from run to
 * run. Free batches are reused last-in first-out, so a source slower than its writer
 * keeps using the same two or three. */
#define NX_AHEAD_BATCHES (NX_AHEAD_CHUNKS + 1)

/* Writers reading one source run ahead: one, or two for a copy split by columns
 * (nx_duck_copy_source_parts). */
#define NX_AHEAD_READERS 2

/* A chunk filled by a source run ahead, with the arena of its strings when it is bound
 * for our writer, and then too, when the source has keys (struct nx_row_keys), its
 * rows' keys (NULL otherwise). */
struct nx_ahead_batch {
	duckdb_data_chunk chunk;
	struct nx_arena arena;
	uint32_t *keys;
};

/* A source run on a producer thread into a bounded queue of chunks, which the scan of
 * nx_source() hands to DuckDB's writer by reference, or nx_pqw_write_ahead to ours.
 * Every reader reads every batch; a batch is free again once all readers asked for the
 * one after it. Batches are numbered in the order they were made: ring holds those
 * made and not yet freed, [oldest, made). Everything below mu is guarded by it. */
struct nx_duck_ahead {
	pthread_t thread;
	struct nx_row_source *src;
	bool own_strings; /* bound for our writer: strings in each batch's arena */
	unsigned readers;
	duckdb_logical_type types[128];
	pthread_mutex_t mu;
	pthread_cond_t ready, room;
	struct nx_ahead_batch batches[NX_AHEAD_BATCHES];
	struct nx_ahead_batch *ring[NX_AHEAD_BATCHES]; /* batch k at k % NX_AHEAD_BATCHES */
	uint64_t made, oldest;
	uint64_t next[NX_AHEAD_READERS];            /* the batch each reader takes next */
	bool holding[NX_AHEAD_READERS];             /* a reader holds batch next - 1 */
	struct nx_ahead_batch *free[NX_AHEAD_BATCHES]; /* a stack */
	size_t nfree;
	bool done; /* the producer has ended: rc and err are final */
	bool stop; /* the copy has ended: the producer must stop, readers get no more */
	int rc;
	struct nx_err err;
};

/* Starts src on its producer thread for `readers` (1 or NX_AHEAD_READERS) writers. */
int nx__ahead_begin(struct nx_row_source *src, bool own_strings, unsigned readers,
		    struct nx_duck_ahead **out, struct nx_err *err);
/* The next batch of a source run ahead for reader r, waiting for it; a NULL chunk at
 * the source's end or once the copy stopped. When the source ended with an error, that
 * error is returned (with err) instead. The batch is valid until r's next call, which
 * frees it for the producer when every reader is past it. */
int nx__ahead_take(struct nx_duck_ahead *a, unsigned r, struct nx_ahead_batch *batch,
		   struct nx_err *err);
/* Stops the producer and makes every reader's next take the end, without waiting. */
void nx__ahead_cancel(struct nx_duck_ahead *a);
/* Reader r's scan has been dropped by DuckDB: when it had not reached the source's end
 * (its COPY failed, maybe on one of DuckDB's threads that no one waits for), the copy
 * stops, so the other reader does not wait for room that r will never free. */
void nx__ahead_leave(struct nx_duck_ahead *a, unsigned r);

#endif
