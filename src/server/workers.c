/* SPDX-License-Identifier: MIT
 * workers.c: the handler threads (see workers.h). A posted job goes straight to the
 * worker on top of the idle stack, or waits in a queue that workers drain before they
 * go idle again. A poster that waits (nx__workers_run) sleeps on the job's own
 * condition until it is done. */
#include "common/compat.h"
#include "server/workers.h"

#include <errno.h>
#include <string.h>

static void *worker_main(void *arg)
{
	struct nx_worker *me = arg;
	struct nx_workers *p = me->pool;
	size_t self = (size_t)(me - p->w);

	pthread_mutex_lock(&p->lock);
	for (;;) {
		struct nx_job *j = me->job;

		if (!j && p->head) {
			j = p->head;
			p->head = j->next;
			if (!p->head)
				p->tail = NULL;
		}
		if (!j) {
			if (p->stop)
				break;
			p->idle[p->nidle++] = self;
			while (!me->job && !p->stop)
				pthread_cond_wait(&me->wake, &p->lock);
			/* stopping with a job handed over: the job still runs */
			if (!me->job) {
				for (size_t i = 0; i < p->nidle; i++)
					if (p->idle[i] == self)
						p->idle[i] = p->idle[--p->nidle];
			}
			continue;
		}
		me->job = NULL;
		pthread_mutex_unlock(&p->lock);
		bool detached = j->detached; /* a detached job may be gone once fn returns */
		j->fn(j->arg);
		pthread_mutex_lock(&p->lock);
		if (!detached) {
			j->done = true;
			pthread_cond_signal(&j->done_cond);
		}
	}
	pthread_mutex_unlock(&p->lock);
	return NULL;
}

int nx__workers_start(struct nx_workers *p, size_t n, struct nx_err *err)
{
	memset(p, 0, sizeof(*p));
	pthread_mutex_init(&p->lock, NULL);
	pthread_cond_init(&p->left, NULL);
	for (size_t i = 0; i < NX_WORKERS_MAX; i++) {
		p->w[i].pool = p;
		pthread_cond_init(&p->w[i].wake, NULL);
	}
	p->ready = true;
	if (n > NX_WORKERS_MAX)
		n = NX_WORKERS_MAX;
	for (; p->n < n; p->n++) {
		int e = pthread_create(&p->w[p->n].thread, NULL, worker_main, &p->w[p->n]);
		if (e) {
			nx__workers_stop(p);
			return nx_errf(err, -e, "cannot start a handler thread: %s", strerror(e));
		}
	}
	return 0;
}

/* With p->lock held: the idle worker on top takes j, or j joins the queue. */
static void hand_over(struct nx_workers *p, struct nx_job *j)
{
	j->next = NULL;
	if (p->nidle) {
		struct nx_worker *w = &p->w[p->idle[--p->nidle]];
		w->job = j;
		pthread_cond_signal(&w->wake);
	} else if (p->tail) {
		p->tail->next = j;
		p->tail = j;
	} else {
		p->head = p->tail = j;
	}
}

/* Takes p->lock unless there is no worker to run a job (then false, lock not held). */
static bool lock_if_running(struct nx_workers *p)
{
	if (!p->ready)
		return false;
	pthread_mutex_lock(&p->lock);
	if (p->stop || p->n == 0) {
		pthread_mutex_unlock(&p->lock);
		return false;
	}
	return true;
}

void nx__workers_post(struct nx_workers *p, struct nx_job *j, void (*fn)(void *arg),
		      void *arg)
{
	*j = (struct nx_job){ .fn = fn, .arg = arg, .detached = true };
	if (!lock_if_running(p)) {
		fn(arg);
		return;
	}
	hand_over(p, j);
	pthread_mutex_unlock(&p->lock);
}

void nx__workers_run(struct nx_workers *p, void (*fn)(void *arg), void *arg)
{
	struct nx_job j = { .fn = fn, .arg = arg };

	if (!lock_if_running(p)) {
		fn(arg);
		return;
	}
	pthread_cond_init(&j.done_cond, NULL);
	p->posters++;
	hand_over(p, &j);
	while (!j.done)
		pthread_cond_wait(&j.done_cond, &p->lock);
	if (--p->posters == 0)
		pthread_cond_signal(&p->left);
	pthread_mutex_unlock(&p->lock);
	pthread_cond_destroy(&j.done_cond);
}

void nx__workers_stop(struct nx_workers *p)
{
	if (!p->ready)
		return;
	pthread_mutex_lock(&p->lock);
	p->stop = true;
	for (size_t i = 0; i < p->n; i++)
		pthread_cond_signal(&p->w[i].wake);
	pthread_mutex_unlock(&p->lock);
	for (size_t i = 0; i < p->n; i++)
		pthread_join(p->w[i].thread, NULL);
	pthread_mutex_lock(&p->lock); /* a poster may still be waking up from its job */
	while (p->posters)
		pthread_cond_wait(&p->left, &p->lock);
	p->n = 0;
	pthread_mutex_unlock(&p->lock);
}

void nx__workers_release(struct nx_workers *p)
{
	if (!p->ready)
		return;
	nx__workers_stop(p);
	for (size_t i = 0; i < NX_WORKERS_MAX; i++)
		pthread_cond_destroy(&p->w[i].wake);
	pthread_cond_destroy(&p->left);
	pthread_mutex_destroy(&p->lock);
	p->ready = false;
}
