/* SPDX-License-Identifier: MIT
 * lod_early.c: the gate of what `view`'s events part builds of the timeline cache's rest
 * while the ingest still writes its last tables (lod.h, struct nx_lod_early): the thread
 * that builds it waits here until the ingest says those tables are written, or gives up
 * when the ingest fails. */
#include "common/compat.h"
#include "server/lod.h"

#include <stdlib.h>

void nx__lod_early_init(struct nx_lod_early *e)
{
	pthread_mutex_init(&e->lock, NULL);
	pthread_cond_init(&e->cond, NULL);
	e->gate = 0;
	e->done = false;
	e->tail = NULL;
}

void nx__lod_early_release(struct nx_lod_early *e)
{
	pthread_mutex_destroy(&e->lock);
	pthread_cond_destroy(&e->cond);
	free(e->tail);
	e->tail = NULL;
}

void nx__lod_early_open(struct nx_lod_early *e, bool go)
{
	pthread_mutex_lock(&e->lock);
	if (!e->gate)
		e->gate = go ? 1 : -1;
	pthread_cond_broadcast(&e->cond);
	pthread_mutex_unlock(&e->lock);
}

bool nx__lod_early_wait(struct nx_lod_early *e)
{
	int gate;

	pthread_mutex_lock(&e->lock);
	while (!e->gate)
		pthread_cond_wait(&e->cond, &e->lock);
	gate = e->gate;
	pthread_mutex_unlock(&e->lock);
	return gate == 1;
}
