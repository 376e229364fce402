/* SPDX-License-Identifier: MIT
 * workers.h: long-lived threads that run the request handlers. libmicrohttpd gives
 * every connection a new thread, and DuckDB work on a fresh thread is expensive: its
 * first allocations fault in new heap pages and its exit returns them (a TLB
 * shootdown per madvise on a virtual machine). Measured on a 1M-record profile,
 * Summary on a new connection took 4.8-5.1 ms of server CPU against 1.4 ms on a
 * kept-alive one (docs/api.md). So the connection thread hands the handler to a
 * worker and waits; the worker that went idle last takes it, its caches still warm. */
#ifndef NX_SERVER_WORKERS_H
#define NX_SERVER_WORKERS_H

#include "common/compat.h"
#include "common/err.h"

#include <pthread.h>

#define NX_WORKERS_MAX 16

struct nx_job;

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

/* Starts n (at most NX_WORKERS_MAX) threads; on failure none is left running. */
int nx__workers_start(struct nx_workers *p, size_t n, struct nx_err *err);

/* Runs fn(arg) on a worker and returns once it is done. Runs it on the calling thread
 * when there are no workers (not started, or stopping). */
void nx__workers_run(struct nx_workers *p, void (*fn)(void *arg), void *arg);

/* Finishes the jobs posted so far, joins the threads and waits for their posters to
 * return. Call it when no new nx__workers_run can start (the server stops its daemons
 * first). */
void nx__workers_stop(struct nx_workers *p);

#endif
