/* SPDX-License-Identifier: MIT
 * source_write.c: a row source written to parquet by our own writer (parquet_write.c),
 * without DuckDB: read inline, or run ahead on its thread (see parquet_write.h); or
 * read to its end and dropped (nx_duck_drain_source, duck.h). */
#include "common/compat.h"
#include "db/parquet_write.h"
#include "db/duck.h"
#include "db/duck_copy.h"
#include "db/rowbuf.h"
#include "db/source_ahead.h"
#include "common/assert.h"
#include "common/xalloc.h"

#include <stdlib.h>

/* b made to read the rows of a batch's chunk of t's columns; its row count. */
static size_t bind_batch(struct nx_rowbuf *b, const struct nx_table *t, duckdb_data_chunk chunk)
{
	b->ncols = t->nfields;
	b->capacity = duckdb_vector_size();
	b->arena = NULL;
	b->keys = NULL;
	for (size_t c = 0; c < t->nfields; c++) {
		b->type[c] = nx_rowbuf_coltype(&t->fields[c]);
		b->vec[c] = duckdb_data_chunk_get_vector(chunk, c);
		b->data[c] = duckdb_vector_get_data(b->vec[c]);
		b->validity[c] = duckdb_vector_get_validity(b->vec[c]);
	}
	return (size_t)duckdb_data_chunk_get_size(chunk);
}

int nx_pqw_write_ahead(struct nx_duck_ahead *a, const char *path, unsigned long row_group,
		       uint64_t *rows, struct nx_err *err)
{
	const struct nx_table *t = a->src->table;
	struct nx_pqw *w = NULL;
	int rc = nx_pqw_open(&w, t, path, nx__source_row_group(row_group), err);

	if (!rc)
		rc = nx_pqw_keys(w, a->src->keys, err);
	while (!rc) {
		struct nx_ahead_batch batch;
		struct nx_rowbuf b;
		if ((rc = nx__ahead_take(a, 0, &batch, err)) || !batch.chunk)
			break;
		size_t n = bind_batch(&b, t, batch.chunk);
		b.keys = batch.keys;
		rc = nx_pqw_add(w, &b, n, err);
		/* the batch is freed for the producer by the next take */
	}
	nx_duck_ahead_stop(a);
	if (rc) {
		nx_pqw_abort(w);
		return rc;
	}
	return nx_pqw_close(w, rows, err);
}

int nx_pqw_write_parts(struct nx_duck_ahead *a, const char *dir, uint64_t part_rows,
		       unsigned long row_group, uint64_t *rows, size_t *nparts,
		       struct nx_err *err)
{
	const struct nx_table *t = a->src->table;
	struct nx_pqw *w = NULL;
	uint64_t in_part = 0, total = 0;
	size_t np = 0;
	int rc = 0;

	NX_ASSERT(part_rows > 0);
	while (!rc) {
		struct nx_ahead_batch batch;
		struct nx_rowbuf b;
		if ((rc = nx__ahead_take(a, 0, &batch, err)) || !batch.chunk)
			break;
		size_t n = bind_batch(&b, t, batch.chunk);
		b.keys = batch.keys;
		for (size_t done = 0; !rc && done < n;) {
			if (!w) {
				char *path = nx_xasprintf("%s/%s_%zu.parquet", dir, t->name, np);
				rc = nx_pqw_open(&w, t, path, row_group, err);
				free(path);
				in_part = 0;
				if (rc)
					break;
				if ((rc = nx_pqw_keys(w, a->src->keys, err)))
					break;
			}
			/* the rows of the batch that fit the part */
			size_t to = n - done > part_rows - in_part ? done + (size_t)(part_rows - in_part)
								   : n;
			rc = nx_pqw_add_rows(w, &b, done, to, err);
			in_part += to - done;
			total += to - done;
			done = to;
			if (!rc && in_part == part_rows) {
				struct nx_pqw *full = w;
				w = NULL;
				rc = nx_pqw_close(full, NULL, err);
				np += !rc;
			}
		}
		/* the batch is freed for the producer by the next take */
	}
	nx_duck_ahead_stop(a);
	if (w && rc) {
		nx_pqw_abort(w);
	} else if (w) {
		rc = nx_pqw_close(w, NULL, err);
		np += !rc;
	}
	if (rc)
		return nx_err_wrap(err, "writing %s in parts", t->name);
	*rows = total;
	*nparts = np;
	return 0;
}

/* Called with each batch of a source read inline: its n rows. */
typedef int (*batch_fn)(void *arg, const struct nx_rowbuf *b, size_t n, struct nx_err *err);

/* Reads src to its end, batch by batch, into one chunk of its own with the strings of
 * each batch in an arena (as the batches bound for our writer), handing each to fn:
 * the source's error, or fn's. */
static int each_batch(struct nx_row_source *src, batch_fn fn, void *arg, struct nx_err *err)
{
	const struct nx_table *t = src->table;
	duckdb_logical_type types[128];
	duckdb_data_chunk chunk;
	struct nx_rowbuf b;
	uint32_t *keys = src->keys ? nx_xmalloc(duckdb_vector_size() * sizeof(*keys)) : NULL;
	int n, rc = 0;

	if (t->nfields > NX_ARRAY_SIZE(types)) {
		free(keys);
		return nx_errf(err, NX_EUSAGE, "table %s has too many fields", t->name);
	}
	for (size_t c = 0; c < t->nfields; c++)
		types[c] = nx_rowbuf_logical_type(&t->fields[c]);
	chunk = duckdb_create_data_chunk(types, t->nfields);
	for (size_t c = 0; c < t->nfields; c++)
		duckdb_destroy_logical_type(&types[c]);
	do {
		struct nx_arena arena = NX_ARENA_INIT;
		duckdb_data_chunk_reset(chunk);
		nx_rowbuf_bind(&b, chunk, t);
		b.arena = &arena;
		b.keys = keys;
		n = src->next(src->self, &b, err);
		if (n > 0) {
			duckdb_data_chunk_set_size(chunk, (idx_t)n);
			rc = fn(arg, &b, (size_t)n, err);
		}
		nx_arena_free(&arena);
	} while (n > 0 && !rc);
	duckdb_destroy_data_chunk(&chunk);
	free(keys);
	return n < 0 ? n : rc;
}

static int count_batch(void *arg, const struct nx_rowbuf *b, size_t n, struct nx_err *err)
{
	(void)b;
	(void)err;
	*(uint64_t *)arg += n;
	return 0;
}

int nx_duck_drain_source(struct nx_row_source *src, uint64_t *rows, struct nx_err *err)
{
	*rows = 0;
	return each_batch(src, count_batch, rows, err);
}

static int write_batch(void *arg, const struct nx_rowbuf *b, size_t n, struct nx_err *err)
{
	return nx_pqw_add(arg, b, n, err);
}

int nx_pqw_write_source(struct nx_row_source *src, const char *path, uint64_t *rows,
			struct nx_err *err)
{
	struct nx_pqw *w = NULL;
	int rc = nx_pqw_open(&w, src->table, path, nx__source_row_group(0), err);

	if (!rc && !(rc = nx_pqw_keys(w, src->keys, err)))
		rc = each_batch(src, write_batch, w, err);
	if (rc) {
		nx_pqw_abort(w);
		return rc;
	}
	return nx_pqw_close(w, rows, err);
}
