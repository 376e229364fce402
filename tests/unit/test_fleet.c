/* SPDX-License-Identifier: MIT
 * test_fleet.c: the fleet's planning and bookkeeping (src/fleet) on real files: the plan
 * of a run directory (one task per NEFF/NTFF pair and per framework trace, their fields),
 * member names (stable across re-plans and a moved run, new when an input changes, cut
 * to fit), the manifest written and read back and its bad forms (each named by file and
 * line), the task lists a submission's tasks read their own rows from (every line of
 * one length, any line read back alone, with the manifest gone; their bad forms), a
 * task's state from its status files, and the run-name checks. */
#include "common/compat.h"
#include "helper/test_dirs.h"
#include "common/fsutil.h"
#include "common/strbuf.h"
#include "common/xalloc.h"
#include "fleet/fleet.h"
#include "ingest/ingest.h"

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

static char *tmp; /* this test's directory */

static char *at(const char *rel)
{
	return nx_path_join(tmp, rel);
}

/* Writes text to tmp/rel, making its directories. */
static void put(const char *rel, const char *text)
{
	struct nx_err err = { 0 };
	char *path = at(rel);
	char *dir = nx_xstrdup(path);

	*strrchr(dir, '/') = '\0';
	if (nx_mkdirs(dir, &err) || nx_write_file_atomic(path, text, strlen(text), &err))
		fail_msg("%s", err.msg);
	free(dir);
	free(path);
}

/* A run of one instance (pid 4001) with two NeuronCores of one NEFF and a ranked
 * framework trace, and a trace of another node. */
static const struct {
	const char *rel, *text;
} run_files[] = {
	{ "ip-10-0-0-1_pid_4001/neff_abc.neff", "a NEFF" },
	{ "ip-10-0-0-1_pid_4001/abc_instid_0_vnc_0.ntff", "core 0" },
	{ "ip-10-0-0-1_pid_4001/abc_instid_0_vnc_1.ntff", "core 1" },
	{ "ip-10-0-0-1_pid_4001/neuron_framework_trace_rank_3.json", "{\"traceEvents\": []}" },
	{ "node7/trace.json", "{\"traceEvents\": []}" },
};

static void make_run(const char *root)
{
	char rel[256];

	for (size_t i = 0; i < NX_ARRAY_SIZE(run_files); i++) {
		snprintf(rel, sizeof(rel), "%s/%s", root, run_files[i].rel);
		put(rel, run_files[i].text);
	}
}

static int setup(void **state)
{
	struct nx_err err = { 0 };

	(void)state;
	tmp = nx_test_fresh_dir("", "fleet");
	if (!tmp)
		fail_msg("no test directory");
	if (nx_mkdirs(tmp, &err))
		fail_msg("%s", err.msg);
	make_run("run");
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	free(tmp);
	return 0;
}

static const struct nx_fleet_task *find(const struct nx_fleet_plan *p, const char *input_end)
{
	for (size_t i = 0; i < p->n; i++) {
		size_t a = strlen(p->t[i].input), b = strlen(input_end);
		if (a >= b && !strcmp(p->t[i].input + a - b, input_end))
			return &p->t[i];
	}
	fail_msg("no task for %s", input_end);
	return NULL;
}

/* <run>-<label>-<8 hex digits> */
static void check_name(const char *name, const char *run_label)
{
	size_t n = strlen(run_label);

	assert_true(strlen(name) == n + 9);
	assert_memory_equal(name, run_label, n);
	assert_int_equal(name[n], '-');
	assert_int_equal(strspn(name + n + 1, "0123456789abcdef"), 8);
}

static void plan_of_a_run(void **state)
{
	struct nx_fleet_plan p;
	struct nx_err err = { 0 };
	char *run = at("run");
	const struct nx_fleet_task *t;

	(void)state;
	if (nx_fleet_plan(run, "r1", &p, &err))
		fail_msg("%s", err.msg);
	assert_string_equal(p.run, "r1");
	assert_int_equal(p.n, 4);

	t = find(&p, "/abc_instid_0_vnc_1.ntff");
	assert_int_equal(t->kind, NX_FLEET_DEVICE);
	assert_string_equal(t->instance, "ip-10-0-0-1");
	assert_int_equal(t->pid, 4001);
	assert_int_equal(t->nc, 1);
	assert_int_equal(t->model, 0);
	assert_int_equal(t->rank, -1);
	assert_true(t->input[0] == '/' && t->neff[0] == '/'); /* absolute */
	assert_non_null(strstr(t->neff, "/run/ip-10-0-0-1_pid_4001/neff_abc.neff"));
	check_name(t->profile, "r1-ip-10-0-0-1_pid_4001-abc_instid_0_vnc_1");
	assert_true(nx_is_file(t->input));

	t = find(&p, "/neuron_framework_trace_rank_3.json");
	assert_int_equal(t->kind, NX_FLEET_TRACE);
	assert_string_equal(t->instance, "ip-10-0-0-1");
	assert_int_equal(t->pid, 4001);
	assert_int_equal(t->rank, 3);
	assert_int_equal(t->nc, -1);
	assert_int_equal(t->model, -1);
	assert_string_equal(t->neff, "");
	check_name(t->profile, "r1-trace-ip-10-0-0-1-rank3");

	t = find(&p, "/node7/trace.json");
	assert_int_equal(t->kind, NX_FLEET_TRACE);
	assert_int_equal(t->pid, -1);
	assert_int_equal(t->rank, -1);
	check_name(t->profile, "r1-trace-trace");
	nx_fleet_plan_release(&p);
	free(run);
}

/* The member names of the plan of tmp/rel, one a line: vnc_0, vnc_1, the ranked trace,
 * the other trace. */
static char *names(const char *rel, const char *run)
{
	struct nx_fleet_plan p;
	struct nx_err err = { 0 };
	struct nx_strbuf sb = NX_STRBUF_INIT;
	char *dir = at(rel);
	const char *const inputs[] = { "vnc_0.ntff", "vnc_1.ntff", "rank_3.json",
				       "node7/trace.json" };

	if (nx_fleet_plan(dir, run, &p, &err))
		fail_msg("%s", err.msg);
	for (size_t i = 0; i < NX_ARRAY_SIZE(inputs); i++)
		nx_strbuf_addf(&sb, "%s\n", find(&p, inputs[i])->profile);
	nx_fleet_plan_release(&p);
	free(dir);
	return nx_strbuf_detach(&sb, NULL);
}

/* Whether line i of a and of b are the same. */
static bool same_line(const char *a, const char *b, unsigned i)
{
	for (unsigned k = 0; k < i; k++) {
		a = strchr(a, '\n') + 1;
		b = strchr(b, '\n') + 1;
	}
	size_t la = strcspn(a, "\n"), lb = strcspn(b, "\n");
	return la == lb && !memcmp(a, b, la);
}

static void member_names(void **state)
{
	char *first, *again, *moved, *changed, *cmd;
	char long_run[NX_FLEET_RUN_MAX + 1];

	(void)state;
	first = names("run", "r1");
	again = names("run", "r1");
	assert_string_equal(first, again);
	/* the same inputs elsewhere: the same members */
	make_run("moved/deeper/run");
	moved = names("moved/deeper/run", "r1");
	assert_string_equal(first, moved);
	/* a changed input: a new member for it, the others kept */
	put("moved/deeper/run/ip-10-0-0-1_pid_4001/abc_instid_0_vnc_1.ntff", "core 1, again");
	changed = names("moved/deeper/run", "r1");
	for (unsigned i = 0; i < 4; i++) /* names() lists vnc_0, vnc_1, then the traces */
		assert_true(same_line(first, changed, i) == (i != 1));
	/* a run name as long as allowed: every member name still fits */
	memset(long_run, 'x', NX_FLEET_RUN_MAX);
	long_run[NX_FLEET_RUN_MAX] = '\0';
	free(again);
	again = names("run", long_run);
	for (char *l = again, *e; *l; l = e + 1) {
		struct nx_err err = { 0 };
		e = strchr(l, '\n');
		*e = '\0';
		assert_true(strlen(l) <= NX_NAME_MAX);
		assert_int_equal(nx_check_display_name(l, &err), 0);
	}
	cmd = nx_xasprintf("rm -rf '%s/moved'", tmp);
	assert_int_equal(system(cmd), 0);
	free(cmd);
	free(first);
	free(again);
	free(moved);
	free(changed);
}

static void plan_errors(void **state)
{
	struct nx_fleet_plan p;
	struct nx_err err = { 0 };
	char *nosuch = at("nosuch"), *empty = at("empty"), *run = at("run"), *want;

	(void)state;
	assert_int_equal(nx_fleet_plan(nosuch, "r1", &p, &err), NX_ENOTFOUND);
	want = nx_xasprintf("run directory '%s': no such file or directory", nosuch);
	assert_string_equal(err.msg, want);
	free(want);
	assert_int_equal(nx_mkdirs(empty, &err), 0);
	assert_int_equal(nx_fleet_plan(empty, "r1", &p, &err), NX_ENOTFOUND);
	want = nx_xasprintf("no NEFF/NTFF pair and no framework trace under '%s'", empty);
	assert_string_equal(err.msg, want);
	free(want);
	assert_int_not_equal(nx_fleet_plan(run, "a/b", &p, &err), 0);
	assert_non_null(strstr(err.msg, "'/'"));
	free(nosuch);
	free(empty);
	free(run);
}

static void plan_equal(const struct nx_fleet_plan *a, const struct nx_fleet_plan *b)
{
	assert_string_equal(a->run, b->run);
	assert_int_equal(a->n, b->n);
	for (size_t i = 0; i < a->n; i++) {
		const struct nx_fleet_task *x = &a->t[i], *y = &b->t[i];
		assert_int_equal(x->kind, y->kind);
		assert_string_equal(x->profile, y->profile);
		assert_string_equal(x->instance, y->instance);
		assert_int_equal(x->pid, y->pid);
		assert_int_equal(x->nc, y->nc);
		assert_int_equal(x->model, y->model);
		assert_int_equal(x->rank, y->rank);
		assert_string_equal(x->neff, y->neff);
		assert_string_equal(x->input, y->input);
	}
}

static void manifest_round_trip(void **state)
{
	struct nx_fleet_plan p, back;
	struct nx_err err = { 0 };
	char *run = at("run"), *data = at("data"), *dir, *sub;

	(void)state;
	if (nx_fleet_plan(run, "r1", &p, &err) || nx_fleet_manifest_write(data, &p, &err))
		fail_msg("%s", err.msg);
	dir = nx_fleet_dir(data, "r1");
	assert_true(strlen(dir) > strlen(data) && !strcmp(dir + strlen(data), "/fleet/r1"));
	sub = nx_path_join(dir, "status");
	assert_true(nx_is_dir(sub));
	free(sub);
	sub = nx_path_join(dir, "logs");
	assert_true(nx_is_dir(sub));
	free(sub);
	if (nx_fleet_manifest_read(data, "r1", &back, &err))
		fail_msg("%s", err.msg);
	plan_equal(&p, &back);
	nx_fleet_plan_release(&back);
	nx_fleet_plan_release(&p);
	free(dir);
	free(data);
	free(run);
}

/* Reads data/fleet/bad/manifest.tsv holding text: fails with want in the message. */
static void bad_manifest(const char *text, const char *want)
{
	struct nx_fleet_plan p;
	struct nx_err err = { 0 };
	char *data = at("data");

	put("data/fleet/bad/manifest.tsv", text);
	assert_int_not_equal(nx_fleet_manifest_read(data, "bad", &p, &err), 0);
	if (!strstr(err.msg, want) || !strstr(err.msg, "/fleet/bad/manifest.tsv"))
		fail_msg("'%s' does not name the file and say '%s'", err.msg, want);
	assert_null(p.t);
	free(data);
}

/* Manifests whose rows (after a good header) are bad, and what the error says. */
static const struct {
	const char *rows, *want;
} bad_rows[] = {
	{ "0\tdevice\tbad-m\n", "line 2: too few columns, expected 10" },
	{ "0\tdevice\tbad-m\tip\t1\t0\t0\t\t/n\t/i\textra\n", "line 2: too many columns" },
	{ "0\tdevice\tbad-m\tip\t1\t0\t0\t\t/n\t/i\n0\tdevice\tbad-m\tip\t1\t0\t0\t\t/n\t/i\n",
	  "line 3: malformed task row" }, /* task 0 twice */
	{ "0\tpair\tbad-m\tip\t1\t0\t0\t\t/n\t/i\n", "line 2: malformed task row" },
	{ "0\tdevice\tbad-m\tip\t-4\t0\t0\t\t/n\t/i\n", "line 2: malformed task row" },
	{ "0\tdevice\tother-m\tip\t1\t0\t0\t\t/n\t/i\n",
	  "line 2: 'other-m' is not a member name of run 'bad'" },
	{ "0\tdevice\tbad-/../../x\tip\t1\t0\t0\t\t/n\t/i\n",
	  "line 2: 'bad-/../../x' is not a member name of run 'bad'" },
	{ "0\tdevice\tbad-m\tip\t1\t0\t0\t\t/n\t/i", "line 2: truncated (no line end)" },
};

static void manifest_errors(void **state)
{
	const char *hdr = "task\tkind\tprofile\tinstance\tpid\tnc\tmodel_id\trank\tneff\tinput\n";
	struct nx_fleet_plan p;
	struct nx_err err = { 0 };
	char *data = at("data"), text[1024];

	(void)state;
	assert_int_equal(nx_fleet_manifest_read(data, "never", &p, &err), NX_ENOTFOUND);
	assert_non_null(strstr(err.msg, "no fleet run 'never' in"));
	assert_non_null(strstr(err.msg, "run 'neuron-explorer fleet ingest' first"));
	bad_manifest("", "empty file");
	bad_manifest("task\tkind\n", "line 1: not a fleet manifest header");
	bad_manifest("task\tkind", "line 1: truncated (no line end)");
	for (size_t i = 0; i < NX_ARRAY_SIZE(bad_rows); i++) {
		snprintf(text, sizeof(text), "%s%s", hdr, bad_rows[i].rows);
		bad_manifest(text, bad_rows[i].want);
	}
	/* a header alone: a run with no task */
	put("data/fleet/bad/manifest.tsv", hdr);
	if (nx_fleet_manifest_read(data, "bad", &p, &err))
		fail_msg("%s", err.msg);
	assert_int_equal(p.n, 0);
	nx_fleet_plan_release(&p);
	free(data);
}

/* A task list of the run's tasks in reverse order: every line has one length, and line
 * k, read alone, is task idx[k] with its manifest number, without any manifest. */
static void task_list_round_trip(void **state)
{
	struct nx_fleet_plan p;
	struct nx_err err = { 0 };
	char *run = at("run"), *list = at("lists/a.list"), *dir = at("lists"), *data = NULL;
	size_t idx[8], len = 0, width, number;

	(void)state;
	if (nx_fleet_plan(run, "r1", &p, &err) || nx_mkdirs(dir, &err))
		fail_msg("%s", err.msg);
	assert_true(p.n >= 2 && p.n <= NX_ARRAY_SIZE(idx));
	for (size_t k = 0; k < p.n; k++)
		idx[k] = p.n - 1 - k;
	if (nx_fleet_list_write(list, &p, idx, p.n, &err) ||
	    nx_read_file(list, &data, &len, &err))
		fail_msg("%s", err.msg);
	width = (size_t)(strchr(data, '\n') - data) + 1;
	assert_int_equal(len, width * p.n);
	for (size_t k = 0; k < p.n; k++)
		assert_int_equal(data[(k + 1) * width - 1], '\n');
	for (size_t k = 0; k < p.n; k++) {
		struct nx_fleet_task t;
		struct nx_fleet_plan one = { .run = p.run, .t = &t, .n = 1 };
		struct nx_fleet_plan want = { .run = p.run, .t = &p.t[idx[k]], .n = 1 };

		if (nx_fleet_list_read(list, "r1", k, &t, &number, &err))
			fail_msg("line %zu: %s", k + 1, err.msg);
		assert_int_equal(number, idx[k]);
		plan_equal(&want, &one);
		nx_fleet_task_release(&t);
	}
	free(data);
	nx_fleet_plan_release(&p);
	free(dir);
	free(list);
	free(run);
}

/* Reads line k of lists/bad.list holding text as a task of run "bad": fails with want
 * in the message, which names the file. */
static void bad_list(const char *text, size_t k, const char *want)
{
	struct nx_fleet_task t;
	struct nx_err err = { 0 };
	size_t number = 0;
	char *list = at("lists/bad.list");

	put("lists/bad.list", text);
	assert_int_not_equal(nx_fleet_list_read(list, "bad", k, &t, &number, &err), 0);
	if (!strstr(err.msg, want) || !strstr(err.msg, "lists/bad.list"))
		fail_msg("'%s' does not name the file and say '%s'", err.msg, want);
	assert_null(t.profile);
	free(list);
}

static void task_list_errors(void **state)
{
	struct nx_fleet_task t;
	struct nx_err err = { 0 };
	size_t number;
	char *nosuch = at("lists/nosuch.list"), *good_path = at("lists/bad.list");
	/* two good lines of 40 bytes: rows, a tab, spaces */
	const char *good = "0\tdevice\tbad-a\tip\t1\t0\t0\t\t/n\t/i\t            \n"
			   "1\tdevice\tbad-b\tip\t1\t1\t0\t\t/n\t/j\t            \n";
	char text[512];

	(void)state;
	assert_int_equal(nx_fleet_list_read(nosuch, "bad", 0, &t, &number, &err), NX_ENOTFOUND);
	assert_non_null(strstr(err.msg, "lists/nosuch.list"));
	put("lists/bad.list", good);
	if (nx_fleet_list_read(good_path, "bad", 1, &t, &number, &err))
		fail_msg("%s", err.msg);
	assert_string_equal(t.profile, "bad-b");
	assert_string_equal(t.input, "/j");
	assert_int_equal(number, 1);
	nx_fleet_task_release(&t);
	bad_list(good, 2, "has 2 task(s): there is no line 3");
	bad_list("", 0, "empty file");
	bad_list("0\tdevice\tbad-a", 0, "line 1: no line end");
	snprintf(text, sizeof(text), "%.*s", (int)strlen(good) - 1, good); /* cut short */
	bad_list(text, 0, "are not whole lines of");
	bad_list("0\tdevice\tbad-a\tip\t1\t0\t0\t\t/n\t/i     \n", 0,
		 "line 1: not a padded task row");
	bad_list("0\tdevice\tbad-a\tip\t1\t0\t0\t\t/n\t\t\n", 0, "line 1: malformed task row");
	bad_list("0\tdevice\tother-a\tip\t1\t0\t0\t\t/n\t/i\t\n", 0,
		 "line 1: 'other-a' is not a member name of run 'bad'");
	bad_list("0\tdevice\tbad-a\t/n\t/i\t\n", 0, "line 1: too few columns");
	free(good_path);
	free(nosuch);
}

/* The state of a task of run r2 whose status files hold what the test wrote. */
static enum nx_fleet_state state_of(const struct nx_fleet_task *t, struct nx_fleet_status *st)
{
	char *data = at("data");

	nx_fleet_task_status(data, "r2", t, st);
	free(data);
	return st->state;
}

static void task_states(void **state)
{
	struct nx_fleet_task t = { .kind = NX_FLEET_TRACE, .profile = (char *)"r2-m-0000abcd" };
	struct nx_fleet_status st;
	char host[256], line[512], *profile, *data = at("data");
	struct nx_err err = { 0 };
	pid_t dead;

	(void)state;
	assert_int_equal(gethostname(host, sizeof(host)), 0);
	host[sizeof(host) - 1] = '\0';
	assert_int_equal(state_of(&t, &st), NX_FLEET_PENDING);
	assert_string_equal(st.where, "");
	assert_string_equal(st.message, "");
	nx_fleet_status_release(&st);

	put("data/fleet/r2/status/r2-m-0000abcd.failed", "h1\t77\t123_4\t1.500\t2048\tit broke\n");
	assert_int_equal(state_of(&t, &st), NX_FLEET_FAILED);
	assert_string_equal(st.where, "h1 pid 77 job 123_4");
	assert_string_equal(st.message, "it broke");
	assert_true(st.seconds == 1.5);
	assert_int_equal(st.rss_kb, 2048);
	nx_fleet_status_release(&st);

	/* running, on this host, by a live process; then by one that is gone */
	snprintf(line, sizeof(line), "%s\t%d\t-\t0\t0\t\n", host, (int)getpid());
	put("data/fleet/r2/status/r2-m-0000abcd.running", line);
	assert_int_equal(state_of(&t, &st), NX_FLEET_RUNNING);
	nx_fleet_status_release(&st);
	dead = fork();
	assert_true(dead >= 0);
	if (dead == 0)
		_exit(0);
	assert_int_equal(waitpid(dead, NULL, 0), dead);
	snprintf(line, sizeof(line), "%s\t%d\t-\t0\t0\t\n", host, (int)dead);
	put("data/fleet/r2/status/r2-m-0000abcd.running", line);
	assert_int_equal(state_of(&t, &st), NX_FLEET_FAILED);
	snprintf(line, sizeof(line), "killed: process %d on %s ended without a result", (int)dead,
		 host);
	assert_string_equal(st.message, line);
	nx_fleet_status_release(&st);

	/* done, but no profile: pending again; with its profile: done */
	put("data/fleet/r2/status/r2-m-0000abcd.done", "h1\t77\t-\t2.250\t10\t\n");
	assert_int_equal(state_of(&t, &st), NX_FLEET_PENDING);
	assert_string_equal(st.message, "marked done but the profile is gone");
	nx_fleet_status_release(&st);
	profile = nx_profile_dir(data, t.profile);
	assert_int_equal(nx_mkdirs(profile, &err), 0);
	assert_int_equal(state_of(&t, &st), NX_FLEET_DONE);
	assert_true(st.seconds == 2.25);
	nx_fleet_status_release(&st);

	assert_string_equal(nx_fleet_state_name(NX_FLEET_PENDING), "pending");
	assert_string_equal(nx_fleet_state_name(NX_FLEET_RUNNING), "running");
	assert_string_equal(nx_fleet_state_name(NX_FLEET_DONE), "done");
	assert_string_equal(nx_fleet_state_name(NX_FLEET_FAILED), "failed");
	free(profile);
	free(data);
}

static void run_names(void **state)
{
	struct nx_err err = { 0 };
	char *data = at("data"), *dir, *members;
	char long_run[NX_FLEET_RUN_MAX + 2];

	(void)state;
	assert_int_equal(nx_fleet_check_run(data, "fresh", &err), 0);
	memset(long_run, 'x', NX_FLEET_RUN_MAX + 1);
	long_run[NX_FLEET_RUN_MAX + 1] = '\0';
	assert_int_equal(nx_fleet_check_run(data, long_run, &err), NX_EUSAGE);
	assert_non_null(strstr(err.msg, "a fleet run's name has at most 190"));
	long_run[NX_FLEET_RUN_MAX] = '\0';
	assert_int_equal(nx_fleet_check_run(data, long_run, &err), 0);
	assert_int_not_equal(nx_fleet_check_run(data, "../x", &err), 0);
	/* an ordinary profile of that name is refused; a fleet run's index is not */
	dir = nx_profile_dir(data, "plain");
	assert_int_equal(nx_mkdirs(dir, &err), 0);
	assert_int_equal(nx_fleet_check_run(data, "plain", &err), NX_EUSAGE);
	assert_non_null(strstr(err.msg, "profile 'plain' already exists and is not a fleet run"));
	members = nx_path_join(dir, NX_FLEET_MEMBERS);
	assert_int_equal(nx_write_file_atomic(members, "", 0, &err), 0);
	assert_int_equal(nx_fleet_check_run(data, "plain", &err), 0);
	free(members);
	free(dir);
	free(data);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(plan_of_a_run),
		cmocka_unit_test(member_names),
		cmocka_unit_test(plan_errors),
		cmocka_unit_test(manifest_round_trip),
		cmocka_unit_test(manifest_errors),
		cmocka_unit_test(task_list_round_trip),
		cmocka_unit_test(task_list_errors),
		cmocka_unit_test(task_states),
		cmocka_unit_test(run_names),
	};
	return nx_test_done(cmocka_run_group_tests(tests, setup, teardown));
}
