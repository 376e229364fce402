/* SPDX-License-Identifier: MIT
 * source_ahead.c: a row source run ahead on a producer thread into a ring of data
 * chunks, read by one writer or two (see source_ahead.h). */
#include "common/compat.h"
#include "db/source_ahead.h"
#include "db/rowbuf.h"
#include "common/xalloc.h"

#include <stdlib.h>
#include <string.h>

/* The batch number every reader has let go of: readers hold batch next - 1 until they
 * ask for the next. */
static uint64_t read_by_all(const struct nx_duck_ahead *a)
{
	uint64_t low = UINT64_MAX;

	for (unsigned i = 0; i < a->readers; i++)
		if (a->next[i] - a->holding[i] < low)
			low = a->next[i] - a->holding[i];
	return low;
}

/* The batches a reader has yet to take, for the slowest reader. */
static uint64_t unread(const struct nx_duck_ahead *a)
{
	uint64_t low = UINT64_MAX;

	for (unsigned i = 0; i < a->readers; i++)
		if (a->next[i] < low)
			low = a->next[i];
	return a->made - low;
}

/* The producer thread of a source run ahead: fills batches until the source ends,
 * fails, or the copy stops it. With fewer than NX_AHEAD_CHUNKS unread and every reader
 * holding at most the batch before them, one of the NX_AHEAD_BATCHES is always free. */
static void *ahead_main(void *arg)
{
	struct nx_duck_ahead *a = arg;
	const struct nx_table *t = a->src->table;
	struct nx_err err = { 0 };

	pthread_setname_np(pthread_self(), "nx-rows"); /* for top -H and perf */
	for (;;) {
		struct nx_ahead_batch *slot;
		struct nx_rowbuf b;
		int n;

		pthread_mutex_lock(&a->mu);
		while (unread(a) >= NX_AHEAD_CHUNKS && !a->stop)
			pthread_cond_wait(&a->room, &a->mu);
		slot = a->stop ? NULL : a->free[--a->nfree];
		pthread_mutex_unlock(&a->mu);
		n = 0;
		if (slot) {
			if (slot->chunk)
				duckdb_data_chunk_reset(slot->chunk);
			else
				slot->chunk = duckdb_create_data_chunk(a->types, t->nfields);
			nx_rowbuf_bind(&b, slot->chunk, t);
			if (a->own_strings)
				b.arena = &slot->arena;
			b.keys = slot->keys;
			n = a->src->next(a->src->self, &b, &err);
			if (n > 0)
				duckdb_data_chunk_set_size(slot->chunk, (idx_t)n);
		}
		pthread_mutex_lock(&a->mu);
		if (n <= 0 || a->stop) {
			if (slot)
				a->free[a->nfree++] = slot;
			a->rc = n < 0 ? n : 0;
			a->err = err;
			a->done = true;
			pthread_cond_broadcast(&a->ready);
			pthread_mutex_unlock(&a->mu);
			return NULL;
		}
		a->ring[a->made++ % NX_AHEAD_BATCHES] = slot;
		pthread_cond_broadcast(&a->ready);
		pthread_mutex_unlock(&a->mu);
	}
}

int nx__ahead_take(struct nx_duck_ahead *a, unsigned r, struct nx_ahead_batch *batch,
		   struct nx_err *err)
{
	int rc = 0;

	batch->chunk = NULL;
	pthread_mutex_lock(&a->mu);
	if (a->holding[r]) {
		uint64_t upto;
		a->holding[r] = false;
		for (upto = read_by_all(a); a->oldest < upto; a->oldest++) {
			struct nx_ahead_batch *done = a->ring[a->oldest % NX_AHEAD_BATCHES];
			nx_arena_free(&done->arena); /* its strings are read */
			a->free[a->nfree++] = done;
		}
	}
	while (a->next[r] == a->made && !a->done && !a->stop)
		pthread_cond_wait(&a->ready, &a->mu);
	if (a->stop) {
		/* the copy ended elsewhere: no more batches */
	} else if (a->next[r] < a->made) {
		*batch = *a->ring[a->next[r]++ % NX_AHEAD_BATCHES];
		a->holding[r] = true;
		pthread_cond_signal(&a->room);
	} else if (a->rc) {
		rc = a->rc;
		if (err)
			*err = a->err;
	}
	pthread_mutex_unlock(&a->mu);
	return rc;
}

void nx__ahead_cancel(struct nx_duck_ahead *a)
{
	pthread_mutex_lock(&a->mu);
	a->stop = true;
	pthread_cond_signal(&a->room);
	pthread_cond_broadcast(&a->ready);
	pthread_mutex_unlock(&a->mu);
}

void nx__ahead_leave(struct nx_duck_ahead *a, unsigned r)
{
	bool early;

	pthread_mutex_lock(&a->mu);
	early = !(a->done && a->next[r] == a->made);
	pthread_mutex_unlock(&a->mu);
	if (early)
		nx__ahead_cancel(a);
}

int nx__ahead_begin(struct nx_row_source *src, bool own_strings, unsigned readers,
		    struct nx_duck_ahead **out, struct nx_err *err)
{
	struct nx_duck_ahead *a = nx_xcalloc(1, sizeof(*a));
	const struct nx_table *t = src->table;
	int e;

	*out = NULL;
	if (t->nfields > NX_ARRAY_SIZE(a->types)) {
		free(a);
		return nx_errf(err, NX_EUSAGE, "table %s has too many fields", t->name);
	}
	a->src = src;
	a->own_strings = own_strings;
	a->readers = readers;
	for (size_t i = 0; i < NX_AHEAD_BATCHES; i++)
		a->free[a->nfree++] = &a->batches[NX_AHEAD_BATCHES - 1 - i];
	/* the rows' keys, for our writer only (DuckDB's has no use for them) */
	for (size_t i = 0; own_strings && src->keys && i < NX_AHEAD_BATCHES; i++)
		a->batches[i].keys = nx_xmalloc(duckdb_vector_size() * sizeof(uint32_t));
	for (size_t c = 0; c < t->nfields; c++)
		a->types[c] = nx_rowbuf_logical_type(&t->fields[c]);
	pthread_mutex_init(&a->mu, NULL);
	pthread_cond_init(&a->ready, NULL);
	pthread_cond_init(&a->room, NULL);
	e = pthread_create(&a->thread, NULL, ahead_main, a);
	if (e) {
		for (size_t c = 0; c < t->nfields; c++)
			duckdb_destroy_logical_type(&a->types[c]);
		pthread_cond_destroy(&a->room);
		pthread_cond_destroy(&a->ready);
		pthread_mutex_destroy(&a->mu);
		for (size_t i = 0; i < NX_AHEAD_BATCHES; i++)
			free(a->batches[i].keys);
		free(a);
		return nx_errf(err, -e, "cannot start the row source's thread: %s", strerror(e));
	}
	*out = a;
	return 0;
}

int nx_duck_ahead_start(struct nx_row_source *src, bool own_strings,
			struct nx_duck_ahead **out, struct nx_err *err)
{
	return nx__ahead_begin(src, own_strings, 1, out, err);
}

void nx_duck_ahead_stop(struct nx_duck_ahead *a)
{
	if (!a)
		return;
	nx__ahead_cancel(a);
	pthread_join(a->thread, NULL);
	for (size_t i = 0; i < NX_AHEAD_BATCHES; i++) {
		if (a->batches[i].chunk)
			duckdb_destroy_data_chunk(&a->batches[i].chunk);
		nx_arena_free(&a->batches[i].arena);
		free(a->batches[i].keys);
	}
	for (size_t c = 0; c < a->src->table->nfields; c++)
		duckdb_destroy_logical_type(&a->types[c]);
	pthread_cond_destroy(&a->room);
	pthread_cond_destroy(&a->ready);
	pthread_mutex_destroy(&a->mu);
	free(a);
}
