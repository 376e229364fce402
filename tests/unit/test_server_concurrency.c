/* SPDX-License-Identifier: MIT
 * test_server_concurrency.c: many clients at once against one server: each
 * thread mixes health checks, seed queries on two profiles and refused queries,
 * and every reply must be the right one. A profile is re-ingested meanwhile. */
#include "common/compat.h"
#include "server/server.h"
#include "helper/http_client.h"
#include "helper/server_fixture.h"

#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#define THREADS 24
#define ROUNDS 15

static char *data_dir;
static struct nx_server *srv;
static unsigned port;

static int setup(void **state)
{
	struct nx_server_opts o;

	(void)state;
	data_dir = nx_sfx_tmpdir("concurrency");
	if (!data_dir || nx_sfx_make_profile(data_dir, "a", 3000) ||
	    nx_sfx_make_profile(data_dir, "b", 500))
		return -1;
	nx_sfx_opts(&o, data_dir);
	o.threads = 2;
	if (!(srv = nx_sfx_start(&o, &port)))
		return -1;
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	nx_server_stop(srv);
	free(data_dir);
	return 0;
}

struct job {
	int id;
	int failures;
	char first_failure[256];
};

static void check(struct job *jb, bool ok, const char *what, const struct nx_http_resp *r)
{
	if (ok)
		return;
	if (!jb->failures++)
		snprintf(jb->first_failure, sizeof(jb->first_failure), "%s: %d %.150s", what,
			 r->status, r->body ? r->body : "");
}

static void *client(void *arg)
{
	struct job *jb = arg;
	struct nx_http_resp r;

	for (int i = 0; i < ROUNDS; i++) {
		const char *prof = (jb->id + i) % 2 ? "a" : "b";
		char path[64], want[64];

		nx_http_get(port, "/api/v1/health", &r);
		check(jb, r.status == 200 && strstr(r.body, "healthy"), "health", &r);
		nx_http_resp_free(&r);

		snprintf(path, sizeof(path), "/api/v1/db/%s/_search", prof);
		nx_http_post_json(port, path,
				  "{\"type\":\"databaseExplorerQuery\",\"tableName\":\"Instruction\","
				  "\"query\":\"SELECT COUNT(*) AS cnt FROM Instruction\"}", &r);
		snprintf(want, sizeof(want), "\"rows\":[[%d]]", prof[0] == 'a' ? 3000 : 500);
		check(jb, r.status == 200 && r.body && strstr(r.body, want), "count", &r);
		nx_http_resp_free(&r);

		nx_http_post_json(port, path,
				  "{\"type\":\"databaseExplorerQuery\",\"tableName\":\"Instruction\","
				  "\"query\":\"SELECT engine, opcode, COUNT(*) as cnt, SUM(duration_ns) "
				  "as total_dur_ns, SUM(evt_wait_time_ns) as total_evt_wait_ns FROM "
				  "Instruction GROUP BY engine, opcode ORDER BY total_dur_ns DESC\"}", &r);
		check(jb, r.status == 200 && r.body && strstr(r.body, "\"row_count\":25"),
		      "breakdown", &r);
		nx_http_resp_free(&r);

		nx_http_post_json(port, path,
				  "{\"type\":\"databaseExplorerQuery\",\"query\":\"SELECT 1; DROP VIEW "
				  "Instruction\"}", &r);
		check(jb, r.status == 403, "refusal", &r);
		nx_http_resp_free(&r);
	}
	return NULL;
}

static void test_many_clients(void **state)
{
	pthread_t th[THREADS];
	struct job jobs[THREADS];
	int failures = 0;

	(void)state;
	for (int i = 0; i < THREADS; i++) {
		memset(&jobs[i], 0, sizeof(jobs[i]));
		jobs[i].id = i;
		assert_int_equal(pthread_create(&th[i], NULL, client, &jobs[i]), 0);
	}
	/* Re-ingest profile b (same content) while the clients run. */
	for (int k = 0; k < 3; k++)
		assert_int_equal(nx_sfx_make_profile(data_dir, "b", 500), 0);
	for (int i = 0; i < THREADS; i++) {
		pthread_join(th[i], NULL);
		if (jobs[i].failures) {
			fprintf(stderr, "client %d: %d failures, first: %s\n", i, jobs[i].failures,
				jobs[i].first_failure);
			failures += jobs[i].failures;
		}
	}
	assert_int_equal(failures, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_many_clients),
	};

	return nx_test_done(cmocka_run_group_tests_name("server_concurrency", tests, setup, teardown));
}
