/* SPDX-License-Identifier: MIT
 * workers.h: long-lived threads that run the request handlers. libmicrohttpd runs
 * every connection on a few polling threads (one per core), which must never wait for
 * DuckDB: the connection is suspended, its handler (or the next piece of a streamed
 * reply) is posted here, and the job resumes the connection when it is done
 * (dispatch.c). The worker that went idle last takes a job, its caches still warm.
 * nx__workers_run is the same with the poster waiting for its job. */
#ifndef NX_SERVER_WORKERS_H
#define NX_SERVER_WORKERS_H

#include "common/compat.h"
#include "common/err.h"

#include <pthread.h>

#define NX_WORKERS_MAX 16

/* A job; the poster owns its memory. Posted with nx__workers_post, the worker does
 * not touch it after fn returns (fn may free it). */
struct nx_job {
	void (*fn)(void *arg);
	void *arg;
	bool detached;      /* posted: nobody waits for it */
	bool done;          /* nx__workers_run's: fn has returned */
	pthread_cond_t done_cond;
	struct nx_job *next;
};

struct nx_workers {
	pthread_mutex_t lock;
	struct nx_worker {
		struct nx_workers *pool;
		pthread_t thread;
		pthread_cond_t wake;
		struct nx_job *job; /* set by the poster, taken by this worker */
	} w[NX_WORKERS_MAX];
	size_t n;                   /* threads started */
	size_t idle[NX_WORKERS_MAX]; /* a stack of idle workers: the top went idle last */
	size_t nidle;
	struct nx_job *head, *tail; /* jobs waiting for a worker, oldest first */
	size_t posters;             /* callers inside nx__workers_run */
	pthread_cond_t left;        /* a poster left */
	bool stop;
	bool ready; /* lock and conds initialised */
};

/* Starts n (at most NX_WORKERS_MAX) threads; on failure none is left running (release
 * the pool still). */
int nx__workers_start(struct nx_workers *p, size_t n, struct nx_err *err);

/* Runs fn(arg) on a worker and returns once it is done. Runs it on the calling thread
 * when there are no workers (not started, or stopping). */
void nx__workers_run(struct nx_workers *p, void (*fn)(void *arg), void *arg);

/* Starts j->fn(j->arg) on a worker and returns at once; with no workers (not started,
 * or stopping) it runs it on the calling thread before returning. */
void nx__workers_post(struct nx_workers *p, struct nx_job *j, void (*fn)(void *arg),
		      void *arg);

/* Finishes the jobs posted so far, joins the threads and waits for their posters to
 * return. Jobs posted after it run on their poster's thread. */
void nx__workers_stop(struct nx_workers *p);

/* Stops the pool if it still runs and frees it; call it when nothing can post any
 * more (the server stops its daemons first). */
void nx__workers_release(struct nx_workers *p);

#endif
