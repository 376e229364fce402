/* SPDX-License-Identifier: MIT
 * test_server_workers.c: the server's handler threads (server/workers.h). A job runs
 * on a worker and the poster returns after it; one client's jobs in a row land on the
 * same worker; many more posters than workers all finish; stopping runs the jobs
 * already queued; a posted job runs on a worker while its poster goes on, and may free
 * itself; with no workers a job runs on the caller's thread. Runs under TSan (and
 * ASan) with the other server tests. */
#include "common/compat.h"
#include "server/workers.h"

#include <pthread.h>
#include <semaphore.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

struct probe {
	pthread_t ran_on;
	atomic_int *count;
	sem_t *gate; /* waited for first, when set */
};

static void job(void *arg)
{
	struct probe *p = arg;

	if (p->gate)
		sem_wait(p->gate);
	p->ran_on = pthread_self();
	if (p->count)
		atomic_fetch_add(p->count, 1);
}

static bool on_worker(const struct nx_workers *w, pthread_t t)
{
	for (size_t i = 0; i < w->n; i++)
		if (pthread_equal(w->w[i].thread, t))
			return true;
	return false;
}

enum what { IDLE, QUEUED, STOPPING };

/* Waits until the pool is in that state (IDLE: n workers idle), read under its lock. */
static void wait_for(struct nx_workers *w, enum what what, size_t n)
{
	for (;;) {
		bool yes;
		pthread_mutex_lock(&w->lock);
		yes = what == IDLE ? w->nidle == n : what == QUEUED ? w->head != NULL : w->stop;
		pthread_mutex_unlock(&w->lock);
		if (yes)
			return;
		sched_yield();
	}
}

static void test_runs_on_a_worker_and_reuses_the_last_idle(void **state)
{
	struct nx_workers w;
	struct nx_err err = { 0 };
	struct probe first = { 0 };

	(void)state;
	assert_int_equal(nx__workers_start(&w, 4, &err), 0);
	assert_int_equal(w.n, 4);
	wait_for(&w, IDLE, 4); /* all started: none can push itself on top later */
	nx__workers_run(&w, job, &first);
	assert_true(on_worker(&w, first.ran_on));
	assert_false(pthread_equal(first.ran_on, pthread_self()));
	for (int i = 0; i < 10; i++) {
		struct probe again = { 0 };
		nx__workers_run(&w, job, &again);
		assert_true(pthread_equal(again.ran_on, first.ran_on));
	}
	nx__workers_release(&w);
}

struct poster {
	struct nx_workers *w;
	atomic_int *count;
	int jobs;
	bool all_on_workers;
};

static void *post_many(void *arg)
{
	struct poster *ps = arg;

	ps->all_on_workers = true;
	for (int i = 0; i < ps->jobs; i++) {
		struct probe p = { .count = ps->count };
		nx__workers_run(ps->w, job, &p);
		if (!on_worker(ps->w, p.ran_on))
			ps->all_on_workers = false;
	}
	return NULL;
}

static void test_more_posters_than_workers(void **state)
{
	enum { POSTERS = 24, JOBS = 200 };
	struct nx_workers w;
	struct nx_err err = { 0 };
	struct poster ps[POSTERS];
	pthread_t th[POSTERS];
	atomic_int count = 0;

	(void)state;
	assert_int_equal(nx__workers_start(&w, 3, &err), 0);
	for (int i = 0; i < POSTERS; i++) {
		ps[i] = (struct poster){ .w = &w, .count = &count, .jobs = JOBS };
		assert_int_equal(pthread_create(&th[i], NULL, post_many, &ps[i]), 0);
	}
	for (int i = 0; i < POSTERS; i++) {
		pthread_join(th[i], NULL);
		assert_true(ps[i].all_on_workers);
	}
	assert_int_equal(atomic_load(&count), POSTERS * JOBS);
	nx__workers_release(&w);
}

struct one_post {
	struct nx_workers *w;
	struct probe p;
};

static void *post_one(void *arg)
{
	struct one_post *o = arg;

	nx__workers_run(o->w, job, &o->p);
	return NULL;
}

static void *stop_pool(void *arg)
{
	nx__workers_stop(arg);
	return NULL;
}

/* One worker, blocked in a first job; a second job waits in the queue; stopping must
 * still run it before the worker exits. */
static void test_stop_runs_queued_jobs(void **state)
{
	struct nx_workers w;
	struct nx_err err = { 0 };
	sem_t gate;
	atomic_int count = 0;
	struct one_post a = { .w = &w }, b = { .w = &w };
	pthread_t ta, tb, tc;

	(void)state;
	sem_init(&gate, 0, 0);
	a.p = (struct probe){ .count = &count, .gate = &gate };
	b.p = (struct probe){ .count = &count };
	assert_int_equal(nx__workers_start(&w, 1, &err), 0);
	pthread_t worker = w.w[0].thread;
	wait_for(&w, IDLE, 1);
	assert_int_equal(pthread_create(&ta, NULL, post_one, &a), 0);
	wait_for(&w, IDLE, 0); /* a went to the worker, which now waits at the gate */
	assert_int_equal(pthread_create(&tb, NULL, post_one, &b), 0);
	wait_for(&w, QUEUED, 0);
	assert_int_equal(pthread_create(&tc, NULL, stop_pool, &w), 0);
	wait_for(&w, STOPPING, 0);
	sem_post(&gate);
	pthread_join(ta, NULL);
	pthread_join(tb, NULL);
	pthread_join(tc, NULL);
	assert_int_equal(atomic_load(&count), 2);
	assert_true(pthread_equal(a.p.ran_on, worker));
	assert_true(pthread_equal(b.p.ran_on, worker));
	nx__workers_release(&w);
	sem_destroy(&gate);
}

/* A posted job owns itself: it runs on a worker, the poster does not wait, and the
 * job may free its own memory (the worker must not touch it afterwards: ASan). */
struct self_job {
	struct nx_job job;
	const struct nx_workers *w;
	atomic_int *on_workers;
	sem_t *finished;
};

static void self_job_fn(void *arg)
{
	struct self_job *j = arg;
	sem_t *finished = j->finished;

	if (on_worker(j->w, pthread_self()))
		atomic_fetch_add(j->on_workers, 1);
	free(j);
	sem_post(finished);
}

static void test_posted_jobs_run_detached(void **state)
{
	enum { JOBS = 500 };
	struct nx_workers w;
	struct nx_err err = { 0 };
	atomic_int on_workers = 0;
	sem_t finished;

	(void)state;
	sem_init(&finished, 0, 0);
	assert_int_equal(nx__workers_start(&w, 3, &err), 0);
	for (int i = 0; i < JOBS; i++) {
		struct self_job *j = calloc(1, sizeof(*j));
		assert_non_null(j);
		*j = (struct self_job){ .w = &w, .on_workers = &on_workers, .finished = &finished };
		nx__workers_post(&w, &j->job, self_job_fn, j);
	}
	for (int i = 0; i < JOBS; i++)
		sem_wait(&finished);
	assert_int_equal(atomic_load(&on_workers), JOBS);
	nx__workers_release(&w);
	sem_destroy(&finished);
}

static void test_without_workers_runs_inline(void **state)
{
	struct nx_workers w;
	struct nx_err err = { 0 };
	struct probe p = { 0 }, q = { 0 };
	struct nx_job j;

	(void)state;
	memset(&w, 0, sizeof(w));
	nx__workers_run(&w, job, &p); /* never started */
	assert_true(pthread_equal(p.ran_on, pthread_self()));
	assert_int_equal(nx__workers_start(&w, 0, &err), 0);
	nx__workers_run(&w, job, &p); /* started with none */
	assert_true(pthread_equal(p.ran_on, pthread_self()));
	nx__workers_release(&w);
	assert_int_equal(nx__workers_start(&w, NX_WORKERS_MAX + 5, &err), 0);
	assert_int_equal(w.n, NX_WORKERS_MAX);
	nx__workers_stop(&w);
	nx__workers_run(&w, job, &p); /* stopped */
	assert_true(pthread_equal(p.ran_on, pthread_self()));
	nx__workers_post(&w, &j, job, &q); /* stopped: done before it returns */
	assert_true(pthread_equal(q.ran_on, pthread_self()));
	nx__workers_release(&w);
	memset(&q, 0, sizeof(q));
	nx__workers_post(&w, &j, job, &q); /* released */
	assert_true(pthread_equal(q.ran_on, pthread_self()));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_runs_on_a_worker_and_reuses_the_last_idle),
		cmocka_unit_test(test_more_posters_than_workers),
		cmocka_unit_test(test_stop_runs_queued_jobs),
		cmocka_unit_test(test_posted_jobs_run_detached),
		cmocka_unit_test(test_without_workers_runs_inline),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
