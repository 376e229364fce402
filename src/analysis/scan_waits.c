/* SPDX-License-Identifier: MIT
 * scan_waits.c: the Instruction pass's semaphore waits handed to their external sort
 * (scan.h) on a thread of their own. The sort writes a sorted run each time its buffer
 * fills, and merges its runs every 63: tens of ms each, hundreds for a merge, during
 * which the pass's thread would stop folding while the reader's thread, one row group
 * ahead, waits for it. The pass fills one block of waits while a helper adds the block
 * before to the sort (in the same order, so the runs and the sorted waits are the same
 * as the pass adding them itself). NX_REC_THREADS=1: the pass adds them itself, as
 * before. */
#include "common/compat.h"
#include "analysis/scan.h"
#include "common/xalloc.h"

#include <stdlib.h>
#include <string.h>

/* A block of waits: 2 MiB (52,428 waits), two of them while the helper runs. */
#define BLOCK ((size_t)(2 << 20) / sizeof(struct nx_rec_wait))

static void *helper(void *arg)
{
	struct nx_rec_waits_ahead *w = arg;

	w->rc = 0;
	for (size_t i = 0; i < w->n_other && !w->rc; i++)
		w->rc = nx_xsort_add(w->sort, &w->other[i], &w->err);
	return NULL;
}

/* Waits for the helper; its error, once. */
static int join(struct nx_rec_waits_ahead *w, struct nx_err *err)
{
	if (!w->running)
		return 0;
	pthread_join(w->thread, NULL);
	w->running = false;
	if (w->rc && err)
		*err = w->err;
	return w->rc;
}

/* Hands the filled block to the helper (once it is done with the one before). */
static int hand(struct nx_rec_waits_ahead *w, struct nx_err *err)
{
	struct nx_rec_wait *t;
	int rc = join(w, err);

	if (rc)
		return rc;
	t = w->other;
	w->other = w->fill;
	w->fill = t;
	w->n_other = w->n;
	w->n = 0;
	if (!pthread_create(&w->thread, NULL, helper, w)) {
		w->running = true;
		return 0;
	}
	helper(w); /* no thread: here */
	if (w->rc && err)
		*err = w->err;
	return w->rc;
}

void nx__rec_waits_start(struct nx_rec_waits_ahead *w, struct nx_xsort *sort)
{
	memset(w, 0, sizeof(*w));
	w->sort = sort;
	w->ahead = nx__rec_threads() >= 2;
}

int nx__rec_waits_add(struct nx_rec_waits_ahead *w, const struct nx_rec_wait *x,
		      struct nx_err *err)
{
	int rc;

	if (!w->ahead)
		return nx_xsort_add(w->sort, x, err);
	if (!w->fill) {
		w->fill = nx_xmalloc(BLOCK * sizeof(*w->fill));
		w->other = nx_xmalloc(BLOCK * sizeof(*w->other));
	}
	if (w->n == BLOCK && (rc = hand(w, err)))
		return rc;
	w->fill[w->n++] = *x;
	return 0;
}

int nx__rec_waits_flush(struct nx_rec_waits_ahead *w, struct nx_err *err)
{
	int rc = w->n ? hand(w, err) : 0;

	if (!rc)
		rc = join(w, err);
	return rc;
}

void nx__rec_waits_stop(struct nx_rec_waits_ahead *w)
{
	join(w, NULL);
	free(w->fill);
	free(w->other);
	w->fill = w->other = NULL;
	w->n = w->n_other = 0;
}
