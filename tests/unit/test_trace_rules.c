/* SPDX-License-Identifier: MIT
 * test_trace_rules.c: the framework-trace rules of docs/framework-traces.md, one test
 * per rule, each on a small hand-written trace run through the real ingest
 * (nx_trace_ingest_dir) and read back from its parquet files with DuckDB: tolerated
 * grammar slips (trailing commas, raw control characters in strings) with their
 * Warning rows, the grammar errors that stay fatal, no event invented at time zero
 * (empty objects, unreadable ts) and the time range that follows, flow version 2
 * (bind_id, flow_in, flow_out) next to version 1 (s/t/f), and traces of one directory
 * on different clocks aligned onto the Unix epoch. */
#include "common/compat.h"
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "helper/asserts.h"

#include "common/fsutil.h"
#include "common/strbuf.h"
#include "common/xalloc.h"
#include "db/duck.h"
#include "export/perfetto.h"
#include "helper/fixture.h"
#include "ingest/ingest_dir.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct ctx {
	char *dir; /* this run's scratch directory */
	struct nx_duck *d;
};

/* One ingested trace: the input file and the profile directory. */
struct run {
	char *in, *out;
};

static char *vsql(const char *fmt, va_list ap)
{
	char *sql = NULL;

	NX_ASSERT_CMP(vasprintf(&sql, fmt, ap), >=, 0);
	return sql;
}

static int64_t q64(struct ctx *c, const char *fmt, ...) NX_PRINTF(2, 3);
static int64_t q64(struct ctx *c, const char *fmt, ...)
{
	va_list ap;
	int64_t v = -1;
	struct nx_err err = { 0 };

	va_start(ap, fmt);
	char *sql = vsql(fmt, ap);
	va_end(ap);
	if (nx_duck_query_i64(c->d, sql, &v, &err))
		fail_msg("query failed: %s\n%s", err.msg, sql);
	free(sql);
	return v;
}

static void cell(void *arg, size_t row, const char *column, int kind, const char *text)
{
	struct nx_strbuf *sb = arg;

	(void)column;
	if (row)
		nx_strbuf_addch(sb, '\n');
	nx_strbuf_addstr(sb, kind == NX_CELL_NULL ? "NULL" : text);
}

/* The first column of every row, one per line (caller releases). */
static void qtext(struct ctx *c, struct nx_strbuf *out, const char *fmt, ...) NX_PRINTF(3, 4);
static void qtext(struct ctx *c, struct nx_strbuf *out, const char *fmt, ...)
{
	va_list ap;
	struct nx_err err = { 0 };

	va_start(ap, fmt);
	char *sql = vsql(fmt, ap);
	va_end(ap);
	nx_strbuf_reset(out);
	if (nx_duck_query_cells(c->d, sql, cell, out, &err))
		fail_msg("query failed: %s\n%s", err.msg, sql);
	nx_strbuf_addstr(out, ""); /* never NULL */
	free(sql);
}

/* Writes doc as <dir>/<tag>.json and ingests it into <dir>/<tag>; returns the code. */
static int ingest(struct ctx *c, const char *tag, const char *doc, size_t len, struct run *r,
		  struct nx_err *err)
{
	struct nx_trace_opts o = { 0 };
	char *file = nx_xasprintf("%s.json", tag);

	r->in = nx_path_join(c->dir, file);
	r->out = nx_path_join(c->dir, tag);
	free(file);
	assert_int_equal(nx_write_file_atomic(r->in, doc, len, err), 0);
	o.input = r->in;
	o.output_dir = r->out;
	return nx_trace_ingest_dir(&o, NULL, err);
}

static void ingest_ok(struct ctx *c, const char *tag, const char *doc, struct run *r)
{
	struct nx_err err = { 0 };

	if (ingest(c, tag, doc, strlen(doc), r, &err))
		fail_msg("%s: %s", tag, err.msg);
}

static void run_free(struct run *r)
{
	free(r->in);
	free(r->out);
}

/* The Warning messages of a profile, sorted, one per line ("" when there are none). */
static void warnings(struct ctx *c, const struct run *r, struct nx_strbuf *out)
{
	char *w = nx_path_join(r->out, "Warning.parquet");

	if (nx_is_file(w))
		qtext(c, out, "SELECT category || ': ' || message FROM '%s' ORDER BY ALL", w);
	else
		nx_strbuf_reset(out), nx_strbuf_addstr(out, "");
	free(w);
}

/* The profile's time range as SystemProfileMetadata and Metadata state it. */
static void assert_range(struct ctx *c, const struct run *r, int64_t first, int64_t last)
{
	assert_int_equal(q64(c, "SELECT first_ts_ns::BIGINT FROM '%s/SystemProfileMetadata.parquet'",
			     r->out), first);
	assert_int_equal(q64(c, "SELECT last_ts_ns::BIGINT FROM '%s/SystemProfileMetadata.parquet'",
			     r->out), last);
	/* The text forms ("YYYY-MM-DD HH:MM:SS.nnnnnnnnn+00:00") agree with the numbers,
	 * in both tables. */
	assert_int_equal(q64(c, "SELECT count(*) FROM '%s/SystemProfileMetadata.parquet' s, "
			     "'%s/Metadata.parquet' m WHERE s.first_ts = m.first_ts AND "
			     "s.last_ts = m.last_ts AND epoch_ns(s.first_ts[1:19]::TIMESTAMP) + "
			     "s.first_ts[21:29]::BIGINT = %" PRId64 " AND epoch_ns(s.last_ts[1:19]"
			     "::TIMESTAMP) + s.last_ts[21:29]::BIGINT = %" PRId64, r->out, r->out,
			     first, last), 1);
}

/* name|start|end|flow of every row in id order. */
static void rows(struct ctx *c, const struct run *r, struct nx_strbuf *out)
{
	qtext(c, out, "SELECT concat_ws('|', name, start_ts, end_ts, coalesce(flow_id::VARCHAR, '-')) "
		      "FROM '%s/SystemProfileEvents.parquet' ORDER BY id", r->out);
}

static uint64_t offset_of(const char *doc, const char *needle, size_t plus)
{
	const char *p = strstr(doc, needle);

	assert_non_null(p);
	return (uint64_t)(p - doc) + plus;
}

static void expect_text(const struct nx_strbuf *got, const char *want)
{
	if (strcmp(got->buf, want))
		fail_msg("got:\n%s\nwant:\n%s", got->buf, want);
}

/* Rule: a trailing comma before the ']' of the event array is accepted, once per
 * file in a Warning; both forms of the format. */
static void test_trailing_comma_array(void **state)
{
	struct ctx *c = *state;
	static const char obj[] =
		"{\"traceEvents\": [\n"
		"{\"ph\":\"X\",\"name\":\"a\",\"ts\":10,\"dur\":5,\"pid\":1,\"tid\":1},\n"
		"{\"ph\":\"X\",\"name\":\"b\",\"ts\":12,\"dur\":20,\"pid\":1,\"tid\":1},\n"
		"]}";
	static const char bare[] = "[{\"ph\":\"i\",\"name\":\"x\",\"ts\":3,\"pid\":1,\"tid\":1,"
				   "\"args\":{\"v\":[1,2,]}},]";
	struct nx_strbuf t = NX_STRBUF_INIT, want = NX_STRBUF_INIT;
	struct run r;

	(void)state;
	ingest_ok(c, "comma_arr", obj, &r);
	rows(c, &r, &t);
	expect_text(&t, "a|10000|15000|-\nb|12000|32000|-");
	warnings(c, &r, &t);
	nx_strbuf_addf(&want, "Invalid Data: '%s': 1 trailing commas before a closing ']' (the "
		       "first at byte %" PRIu64 "); tolerated, as trace viewers do", r.in,
		       offset_of(obj, ",\n]", 2));
	expect_text(&t, want.buf);
	assert_range(c, &r, 10000, 32000);
	run_free(&r);
	/* A bare array, and a trailing comma in a nested array too: counted together. */
	ingest_ok(c, "comma_arr_bare", bare, &r);
	rows(c, &r, &t);
	expect_text(&t, "x|3000|3000|-");
	assert_int_equal(q64(c, "SELECT json_array_length(extra_attributes_json, '$.args.v') "
			     "FROM '%s/SystemProfileEvents.parquet'", r.out), 2);
	warnings(c, &r, &t);
	nx_strbuf_reset(&want);
	nx_strbuf_addf(&want, "Invalid Data: '%s': 2 trailing commas before a closing ']' (the "
		       "first at byte %" PRIu64 "); tolerated, as trace viewers do", r.in,
		       offset_of(bare, ",]", 1));
	expect_text(&t, want.buf);
	assert_range(c, &r, 3000, 3000);
	run_free(&r);
	nx_strbuf_release(&t);
	nx_strbuf_release(&want);
}

/* Rule: a trailing comma before the '}' of an object (args, the event itself, the
 * top-level object) is accepted, with a Warning counting them. */
static void test_trailing_comma_object(void **state)
{
	struct ctx *c = *state;
	static const char doc[] =
		"{\"traceEvents\": [\n"
		"{\"ph\":\"X\",\"name\":\"a\",\"ts\":1,\"dur\":1,\"pid\":1,\"tid\":1,"
		"\"args\":{\"k\":1,\"s\":\"v\",},},\n"
		"{\"ph\":\"X\",\"name\":\"b\",\"ts\":4,\"dur\":1,\"pid\":1,\"tid\":2}\n"
		"], \"traceName\": \"t\",}";
	struct nx_strbuf t = NX_STRBUF_INIT, want = NX_STRBUF_INIT;
	struct run r;

	(void)state;
	ingest_ok(c, "comma_obj", doc, &r);
	rows(c, &r, &t);
	expect_text(&t, "a|1000|2000|-\nb|4000|5000|-\ntrace_metadata|1000|1000|-");
	/* The args come out as proper JSON, without the comma. */
	qtext(c, &t, "SELECT json_extract(extra_attributes_json, '$.args')::VARCHAR FROM "
		     "'%s/SystemProfileEvents.parquet' WHERE name = 'a'", r.out);
	expect_text(&t, "{\"k\":1,\"s\":\"v\"}");
	qtext(c, &t, "SELECT json_extract_string(extra_attributes_json, '$.args.traceName') FROM "
		     "'%s/SystemProfileEvents.parquet' WHERE name = 'trace_metadata'", r.out);
	expect_text(&t, "t");
	warnings(c, &r, &t);
	nx_strbuf_addf(&want, "Invalid Data: '%s': 3 trailing commas before a closing '}' (the "
		       "first at byte %" PRIu64 "); tolerated, as trace viewers do", r.in,
		       offset_of(doc, ",}", 1));
	expect_text(&t, want.buf);
	assert_range(c, &r, 1000, 5000);
	run_free(&r);
	nx_strbuf_release(&t);
	nx_strbuf_release(&want);
}

/* Rule: a raw control character (newline, tab) inside a string is accepted and kept
 * as written; the Warning counts the characters. */
static void test_control_characters(void **state)
{
	struct ctx *c = *state;
	static const char doc[] =
		"[{\"ph\":\"X\",\"name\":\"two\nlines\",\"ts\":7,\"dur\":3,\"pid\":1,\"tid\":1,"
		"\"args\":{\"cmd\":\"a\tb\tc\"}},\n"
		"{\"ph\":\"X\",\"name\":\"plain\",\"ts\":8,\"dur\":1,\"pid\":1,\"tid\":1}]";
	struct nx_strbuf t = NX_STRBUF_INIT, want = NX_STRBUF_INIT;
	struct run r;

	(void)state;
	ingest_ok(c, "ctrl", doc, &r);
	rows(c, &r, &t);
	expect_text(&t, "two\nlines|7000|10000|-\nplain|8000|9000|-");
	assert_int_equal(q64(c, "SELECT count(*) FROM '%s/SystemProfileEvents.parquet' WHERE "
			     "name = 'two' || chr(10) || 'lines' AND json_valid(extra_attributes_json) "
			     "AND json_extract_string(extra_attributes_json, '$.args.cmd') = "
			     "'a' || chr(9) || 'b' || chr(9) || 'c'", r.out), 1);
	warnings(c, &r, &t);
	nx_strbuf_addf(&want, "Invalid Data: '%s': 3 raw control characters (newline, tab ...) "
		       "inside strings (the first at byte %" PRIu64 "); tolerated; the strings keep "
		       "them as written", r.in, offset_of(doc, "\n", 0));
	expect_text(&t, want.buf);
	assert_range(c, &r, 7000, 10000);
	run_free(&r);
	nx_strbuf_release(&t);
	nx_strbuf_release(&want);
}

/* Rule: anything else that breaks the grammar stays fatal, naming the file and the
 * byte offset; nothing is published. */
static void test_other_grammar_errors(void **state)
{
	struct ctx *c = *state;
	static const struct {
		const char *doc;
		size_t len; /* 0: strlen */
		const char *msg;
	} cases[] = {
		{ "[{\"ph\":\"X\",\"ts\":1,,}]", 0, "at byte 18: expected a member name in quotes, found ','" },
		{ "[{\"ph\":\"X\",\"ts\":1},,]", 0, "at byte 19: expected a value in an array, found ','" },
		{ "[,]", 0, "at byte 1: expected a value in an array, found ','" },
		{ "[{\"ph\":\"X\" \"ts\":1}]", 0, "at byte 11: expected ',' or '}' in an object" },
		{ "[{\"ph\":\"X\",\"ts\":01}]", 0, "at byte 16: '01' is not a valid JSON number" },
		{ "[{\"name\":\"a\0b\",\"ts\":1}]", 23, "at byte 11: NUL byte inside a string" },
		{ "[{\"ph\":\"X\",\"ts\":1}] x", 0, "at byte 20: unexpected 'x' after the end" },
	};
	struct nx_strbuf want = NX_STRBUF_INIT;

	(void)state;
	for (size_t i = 0; i < NX_ARRAY_SIZE(cases); i++) {
		struct nx_err err = { 0 };
		struct run r;
		char tag[32];
		size_t len = cases[i].len ? cases[i].len : strlen(cases[i].doc);
		snprintf(tag, sizeof(tag), "bad%zu", i);
		int rc = ingest(c, tag, cases[i].doc, len, &r, &err);
		nx_strbuf_reset(&want);
		nx_strbuf_addf(&want, "'%s': %s", r.in, cases[i].msg);
		if (rc != NX_ECORRUPT || strncmp(err.msg, want.buf, want.len))
			fail_msg("case %zu: rc %d, message '%s', want '%s...'", i, rc, err.msg, want.buf);
		assert_false(nx_is_dir(r.out));
		run_free(&r);
	}
	nx_strbuf_release(&want);
}

/* Rule: an empty object {} in the event array (JAX ends its array with one) is no
 * event: no row at time 0, no Warning, no effect on the time range. */
static void test_empty_object(void **state)
{
	struct ctx *c = *state;
	static const char doc[] =
		"{\"displayTimeUnit\":\"ns\",\"traceEvents\":[\n"
		"{\"ph\":\"X\",\"name\":\"xla\",\"ts\":500,\"dur\":25,\"pid\":1,\"tid\":1},{},\n"
		"{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":1,\"args\":{\"name\":\"TPU\"}},\n"
		"{\"ph\":\"X\",\"name\":\"fusion\",\"ts\":510,\"dur\":5,\"pid\":1,\"tid\":1},\n"
		"{}]}";
	struct nx_strbuf t = NX_STRBUF_INIT;
	struct run r;

	(void)state;
	ingest_ok(c, "empty_obj", doc, &r);
	rows(c, &r, &t);
	/* M rows are metadata: kept as written, outside the time range. */
	expect_text(&t, "xla|500000|525000|-\nprocess_name|0|0|-\nfusion|510000|515000|-\n"
			"trace_metadata|500000|500000|-");
	assert_int_equal(q64(c, "SELECT count(*) FROM '%s/SystemProfileEvents.parquet' WHERE "
			     "name = '' OR name IS NULL", r.out), 0);
	warnings(c, &r, &t);
	expect_text(&t, "");
	assert_range(c, &r, 500000, 525000);
	run_free(&r);
	nx_strbuf_release(&t);
}

/* Rule: an event whose ts cannot be read is dropped and counted in a Warning; the
 * time range counts only readable timestamps (a numeric string is readable). */
static void test_unreadable_ts(void **state)
{
	struct ctx *c = *state;
	static const char doc[] =
		"[{\"ph\":\"X\",\"name\":\"bad1\",\"ts\":\"invalid\",\"dur\":1,\"pid\":1,\"tid\":1},\n"
		"{\"ph\":\"X\",\"name\":\"ok1\",\"ts\":2000,\"dur\":10,\"pid\":1,\"tid\":1},\n"
		"{\"ph\":\"i\",\"name\":\"bad2\",\"ts\":\"100a\",\"pid\":1,\"tid\":1},\n"
		"{\"ph\":\"X\",\"name\":\"bad3\",\"dur\":4,\"pid\":1,\"tid\":1},\n"
		"{\"ph\":\"C\",\"name\":\"bad4\",\"ts\":null,\"pid\":1,\"args\":{\"v\":1}},\n"
		"{\"ph\":\"X\",\"name\":\"bad5\",\"ts\":1e300,\"dur\":1,\"pid\":1,\"tid\":1},\n"
		"{\"ph\":\"X\",\"name\":\"ok2\",\"ts\":\"2100.5\",\"dur\":1,\"pid\":1,\"tid\":1},\n"
		"{\"ph\":\"B\",\"name\":\"open\",\"ts\":2050,\"pid\":1,\"tid\":2},\n"
		"{\"ph\":\"E\",\"ts\":\"later\",\"pid\":1,\"tid\":2},\n"
		"{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":1,\"tid\":1,\"args\":{\"name\":\"main\"}}]";
	struct nx_strbuf t = NX_STRBUF_INIT, want = NX_STRBUF_INIT;
	struct run r;

	(void)state;
	ingest_ok(c, "bad_ts", doc, &r);
	rows(c, &r, &t);
	/* The B whose E was dropped stays open and ends at the file's last timestamp. */
	expect_text(&t, "ok1|2000000|2010000|-\nok2|2100500|2101500|-\n"
			"thread_name|0|0|-\nopen|2050000|2101500|-");
	assert_int_equal(q64(c, "SELECT count(*) FROM '%s/SystemProfileEvents.parquet' WHERE "
			     "name LIKE 'bad%%'", r.out), 0);
	warnings(c, &r, &t);
	nx_strbuf_addf(&want,
		       "Invalid Data: '%s': 1 B events have no matching E event (the first at byte "
		       "%" PRIu64 "); their rows end at the last timestamp of the file\n"
		       "Invalid Data: '%s': 6 events have no readable ts (missing, or not a number "
		       "of microseconds) (the first at byte 1); they were dropped rather than placed "
		       "at time 0", r.in, offset_of(doc, "{\"ph\":\"B\"", 0), r.in);
	expect_text(&t, want.buf);
	assert_range(c, &r, 2000000, 2101500);
	run_free(&r);
	nx_strbuf_release(&t);
	nx_strbuf_release(&want);
}

/* Rule: a file whose events all lack a readable ts gives no rows, and the range does
 * not reach back to the epoch through them. */
static void test_no_readable_ts_at_all(void **state)
{
	struct ctx *c = *state;
	static const char bad[] = "[{\"ph\":\"X\",\"name\":\"a\",\"dur\":1},"
				  "{\"ph\":\"X\",\"name\":\"b\",\"ts\":\"soon\",\"dur\":1}]";
	static const char good[] = "[{\"ph\":\"X\",\"name\":\"c\",\"ts\":5000000,\"dur\":2}]";
	struct nx_strbuf t = NX_STRBUF_INIT;
	char *root = nx_path_join(c->dir, "two_files");
	struct nx_err err = { 0 };
	struct nx_trace_opts o = { 0 };
	struct run r = { 0 };

	(void)state;
	/* Two traces in one directory: the range is the good file's alone. */
	assert_int_equal(nx_mkdirs(root, &err), 0);
	char *a = nx_path_join(root, "a.trace.json"), *b = nx_path_join(root, "b.trace.json");
	assert_int_equal(nx_write_file_atomic(a, bad, strlen(bad), &err), 0);
	assert_int_equal(nx_write_file_atomic(b, good, strlen(good), &err), 0);
	r.in = a;
	r.out = nx_path_join(c->dir, "two_files.out");
	o.input = root;
	o.output_dir = r.out;
	if (nx_trace_ingest_dir(&o, NULL, &err))
		fail_msg("%s", err.msg);
	rows(c, &r, &t);
	expect_text(&t, "c|5000000000|5000002000|-");
	assert_int_equal(q64(c, "SELECT count(*) FROM '%s/Warning.parquet' WHERE message = '''%s'': "
			     "2 events have no readable ts (missing, or not a number of microseconds) "
			     "(the first at byte 1); they were dropped rather than placed at time 0'",
			     r.out, a), 1);
	assert_range(c, &r, 5000000000LL, 5000002000LL);
	free(a);
	free(b);
	free(root);
	free(r.out);
	nx_strbuf_release(&t);
}

/* Rule: flow version 2 (bind_id with flow_out / flow_in on X and B slices) gives the
 * slices flow_id rows the way s/t/f events do; its ids do not meet version 1's. */
static void test_flow_v2(void **state)
{
	struct ctx *c = *state;
	static const char doc[] =
		"{\"traceEvents\":[\n"
		"{\"ph\":\"X\",\"name\":\"send\",\"ts\":10,\"dur\":2,\"pid\":1,\"tid\":1,"
		"\"bind_id\":\"0x1\",\"flow_out\":true},\n"
		"{\"ph\":\"X\",\"name\":\"relay\",\"ts\":13,\"dur\":2,\"pid\":1,\"tid\":2,"
		"\"bind_id\":\"0x1\",\"flow_in\":true,\"flow_out\":true},\n"
		"{\"ph\":\"B\",\"name\":\"recv\",\"ts\":16,\"pid\":2,\"tid\":1,"
		"\"bind_id\":\"0x1\",\"flow_in\":true},\n"
		"{\"ph\":\"B\",\"name\":\"inner\",\"ts\":17,\"pid\":2,\"tid\":1},\n"
		"{\"ph\":\"E\",\"ts\":18,\"pid\":2,\"tid\":1},\n"
		"{\"ph\":\"E\",\"ts\":19,\"pid\":2,\"tid\":1},\n"
		"{\"ph\":\"X\",\"name\":\"num\",\"ts\":20,\"dur\":1,\"pid\":1,\"tid\":1,"
		"\"bind_id\":7,\"flow_out\":true},\n"
		"{\"ph\":\"B\",\"name\":\"left_open\",\"ts\":21,\"pid\":3,\"tid\":1,"
		"\"bind_id\":7,\"flow_in\":true},\n"
		"{\"ph\":\"X\",\"name\":\"no_flags\",\"ts\":22,\"dur\":1,\"pid\":1,\"tid\":1,"
		"\"bind_id\":\"0x1\",\"flow_in\":false},\n"
		"{\"ph\":\"X\",\"name\":\"orphan\",\"ts\":23,\"dur\":1,\"pid\":1,\"tid\":1,"
		"\"bind_id\":\"0x9\",\"flow_in\":true},\n"
		"{\"ph\":\"s\",\"name\":\"v1\",\"cat\":\"c\",\"id\":\"0x1\",\"ts\":24,\"pid\":1,\"tid\":1},\n"
		"{\"ph\":\"f\",\"name\":\"v1\",\"cat\":\"c\",\"id\":\"0x1\",\"ts\":25,\"pid\":1,\"tid\":2,"
		"\"bp\":\"e\"}\n"
		"]}";
	struct nx_strbuf t = NX_STRBUF_INIT, want = NX_STRBUF_INIT;
	struct run r;

	(void)state;
	ingest_ok(c, "flow_v2", doc, &r);
	rows(c, &r, &t);
	/* Flow numbers in order of first sight: bind 0x1 -> 1, bind 7 -> 2, bind 0x9 -> 3,
	 * v1 (c, 0x1) -> 4. Rows of B events are written at their E (or at the end). */
	expect_text(&t, "send|10000|12000|[1]\n"
			"relay|13000|15000|[1]\n"
			"inner|17000|18000|-\n"
			"recv|16000|19000|[1]\n"
			"num|20000|21000|[2]\n"
			"no_flags|22000|23000|-\n"
			"orphan|23000|24000|[3]\n"
			"v1|24000|24000|[4]\n"
			"v1|25000|25000|[4]\n"
			"left_open|21000|25000|[2]");
	/* The version-2 members stay in extra_attributes_json, as every unmapped member. */
	assert_int_equal(q64(c, "SELECT count(*) FROM '%s/SystemProfileEvents.parquet' WHERE "
			     "json_extract_string(extra_attributes_json, '$.bind_id') = '0x1' AND "
			     "json_extract(extra_attributes_json, '$.flow_in')::BOOLEAN", r.out), 2);
	warnings(c, &r, &t);
	nx_strbuf_addf(&want,
		       "Invalid Data: '%s': 1 B events have no matching E event (the first at byte "
		       "%" PRIu64 "); their rows end at the last timestamp of the file\n"
		       "Invalid Data: '%s': 1 slices with flow_in of 1 bind_id values have no slice "
		       "with flow_out in the file; their rows are kept, unlinked",
		       r.in, offset_of(doc, "{\"ph\":\"B\",\"name\":\"left_open\"", 0), r.in);
	expect_text(&t, want.buf);
	assert_range(c, &r, 10000, 25000);
	/* The Perfetto export keeps the version-2 members, so reading it back gives the
	 * same flows on the same slices. */
	struct nx_err err = { 0 };
	struct nx_export_stats st;
	struct nx_trace_opts o = { 0 };
	char *json = nx_path_join(c->dir, "flow_v2.perfetto.json");
	char *back = nx_path_join(c->dir, "flow_v2.back");
	if (nx_export_perfetto_ex(r.out, json, &st, &err))
		fail_msg("%s", err.msg);
	o.input = json;
	o.output_dir = back;
	if (nx_trace_ingest_dir(&o, NULL, &err))
		fail_msg("%s", err.msg);
	struct nx_strbuf a = NX_STRBUF_INIT, b = NX_STRBUF_INIT;
	static const char flows[] =
		"SELECT name || ' ' || dense_rank() OVER (ORDER BY flow_id[1]::BIGINT) FROM "
		"'%s/SystemProfileEvents.parquet' WHERE len(flow_id) = 1 ORDER BY name, start_ts";
	qtext(c, &a, flows, r.out);
	qtext(c, &b, flows, back);
	expect_text(&b, a.buf);
	expect_text(&a, "left_open 2\nnum 2\norphan 3\nrecv 1\nrelay 1\nsend 1\nv1 4\nv1 4");
	nx_strbuf_release(&a);
	nx_strbuf_release(&b);
	free(json);
	free(back);
	run_free(&r);
	nx_strbuf_release(&t);
	nx_strbuf_release(&want);
}

/* Rule: framework_stream_id is <instance>/<pid>/<tid> with the ids as written, whatever
 * the event before it was: the same ids, the same number written as text, another
 * thread, or the same ids in another file (another instance). And text cells are kept
 * whole: a \u0000 in a name is a character like any other. */
static void test_stream_keys(void **state)
{
	struct ctx *c = *state;
	static const char a[] =
		"[{\"ph\":\"X\",\"name\":\"a1\",\"ts\":1,\"dur\":1,\"pid\":1,\"tid\":2},"
		"{\"ph\":\"B\",\"name\":\"a2\",\"ts\":2,\"pid\":1,\"tid\":2},"
		"{\"ph\":\"X\",\"name\":\"a3\",\"ts\":3,\"dur\":1,\"pid\":\"07\",\"tid\":2},"
		"{\"ph\":\"X\",\"name\":\"a4\",\"ts\":4,\"dur\":1,\"pid\":7,\"tid\":2},"
		"{\"ph\":\"i\",\"name\":\"a5\",\"ts\":5,\"pid\":7,\"tid\":\"main\"},"
		"{\"ph\":\"s\",\"name\":\"a6\",\"cat\":\"c\",\"id\":1,\"ts\":6,\"pid\":7,\"tid\":2},"
		"{\"ph\":\"E\",\"ts\":7,\"pid\":1,\"tid\":2},"
		"{\"ph\":\"X\",\"name\":\"a8\",\"ts\":8,\"dur\":1,\"pid\":1,\"tid\":2}]";
	static const char b[] =
		"[{\"ph\":\"X\",\"name\":\"b1\\u0000!\",\"ts\":9,\"dur\":1,\"pid\":1,\"tid\":2}]";
	struct nx_strbuf t = NX_STRBUF_INIT;
	struct nx_trace_opts o = { 0 };
	struct nx_err err = { 0 };
	char *dir = nx_path_join(c->dir, "streams");
	char *fa = nx_path_join(dir, "rank0.trace.json"), *fb = nx_path_join(dir, "rank1.trace.json");
	char *out = nx_path_join(c->dir, "streams.out");
	struct run r = { NULL, out };

	(void)state;
	assert_int_equal(nx_mkdirs(dir, &err), 0);
	assert_int_equal(nx_write_file_atomic(fa, a, strlen(a), &err), 0);
	assert_int_equal(nx_write_file_atomic(fb, b, strlen(b), &err), 0);
	o.input = dir;
	o.output_dir = out;
	if (nx_trace_ingest_dir(&o, NULL, &err))
		fail_msg("%s", err.msg);
	/* A NUL written as \u0000 stays in the name, as every other character. */
	qtext(c, &t, "SELECT replace(name, chr(0), '<NUL>') || ' ' || framework_stream_id FROM "
		     "'%s/SystemProfileEvents.parquet' ORDER BY id", r.out);
	expect_text(&t, "a1 rank0/1/2\n"
			"a3 rank0/07/2\n"
			"a4 rank0/7/2\n"
			"a5 rank0/7/main\n"
			"a6 rank0/7/2\n"
			"a2 rank0/1/2\n"
			"a8 rank0/1/2\n"
			"b1<NUL>! rank1/1/2");
	nx_strbuf_release(&t);
	free(dir);
	free(fa);
	free(fb);
	free(out);
}

/* Ingests the traces docs[] (file names names[]) of one directory `tag`; r gets it. */
static void ingest_dir_of(struct ctx *c, const char *tag, const char *const *names,
			  const char *const *docs, size_t n, struct run *r)
{
	struct nx_trace_opts o = { 0 };
	struct nx_err err = { 0 };
	char *dir = nx_path_join(c->dir, tag), *out = nx_xasprintf("%s.out", dir);

	assert_int_equal(nx_mkdirs(dir, &err), 0);
	for (size_t i = 0; i < n; i++) {
		char *f = nx_path_join(dir, names[i]);

		assert_int_equal(nx_write_file_atomic(f, docs[i], strlen(docs[i]), &err), 0);
		free(f);
	}
	o.input = dir;
	o.output_dir = out;
	if (nx_trace_ingest_dir(&o, NULL, &err))
		fail_msg("%s: %s", tag, err.msg);
	r->in = dir;
	r->out = out;
}

/* Rule: traces on the Unix epoch and traces on a clock of their own in one directory
 * are aligned: the latter are moved onto the epoch by their baseTimeNanoseconds, else
 * so that they start with the earliest epoch trace, one Warning each; traces that
 * agree are left as they are. */
static void test_mixed_clocks(void **state)
{
	struct ctx *c = *state;
	/* epoch: 2023-11-14 22:13:20 UTC and 1 ms later */
	static const char epoch[] =
		"[{\"ph\":\"X\",\"name\":\"e1\",\"ts\":1700000000000000,\"dur\":5,\"pid\":1,\"tid\":1},"
		"{\"ph\":\"X\",\"name\":\"e2\",\"ts\":1700000000001000,\"dur\":5,\"pid\":1,\"tid\":1}]";
	/* boot time, with the offset to the epoch (Kineto's baseTimeNanoseconds) */
	static const char based[] =
		"{\"traceEvents\":[{\"ph\":\"X\",\"name\":\"b1\",\"ts\":5000.5,\"dur\":2,\"pid\":2,"
		"\"tid\":1}],\"baseTimeNanoseconds\":1699999999000000000}";
	/* boot time, no offset */
	static const char bare[] =
		"[{\"ph\":\"X\",\"name\":\"r1\",\"ts\":300,\"dur\":2,\"pid\":3,\"tid\":1},"
		"{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":3,\"args\":{\"name\":\"x\"}}]";
	const char *names[] = { "a.trace.json", "b.trace.json", "c.trace.json" };
	const char *docs[] = { epoch, based, bare };
	struct nx_strbuf t = NX_STRBUF_INIT;
	struct run r = { 0 };

	ingest_dir_of(c, "clocks", names, docs, 3, &r);
	rows(c, &r, &t);
	/* b: 5000.5 us + base = 1699999999000000000 + 5000500; c: starts with a */
	expect_text(&t, "e1|1700000000000000000|1700000000000005000|-\n"
			"e2|1700000000001000000|1700000000001005000|-\n"
			"b1|1699999999005000500|1699999999005002500|-\n"
			"trace_metadata|1699999999005000500|1699999999005000500|-\n"
			"r1|1700000000000000000|1700000000000002000|-\n"
			"process_name|1699999999999700000|1699999999999700000|-");
	warnings(c, &r, &t);
	assert_non_null(strstr(t.buf, "b.trace.json': its timestamps are not on the Unix epoch "
				      "(its first event at 0.00500"));
	assert_non_null(strstr(t.buf, "moved by 1699999999000000000 ns, its baseTimeNanoseconds"));
	assert_non_null(strstr(t.buf, "c.trace.json': its timestamps are not on the Unix epoch "
				      "(its first event at 0.000300 s)"));
	assert_non_null(strstr(t.buf, "moved by 1699999999999700000 ns so that both start together"));
	assert_int_equal(q64(c, "SELECT count(*) FROM '%s/Warning.parquet'", r.out), 2);
	assert_range(c, &r, 1699999999005000500LL, 1700000000001005000LL);
	run_free(&r);

	/* two traces on boot clocks: nothing moves */
	const char *same[] = { bare, based };
	ingest_dir_of(c, "sameclock", names, same, 2, &r);
	rows(c, &r, &t);
	expect_text(&t, "r1|300000|302000|-\nprocess_name|0|0|-\nb1|5000500|5002500|-\n"
			"trace_metadata|5000500|5000500|-");
	warnings(c, &r, &t);
	expect_text(&t, "");
	run_free(&r);
	nx_strbuf_release(&t);
}

static int setup(void **state)
{
	struct ctx *c = nx_xcalloc(1, sizeof(*c));
	struct nx_err err = { 0 };

	c->dir = nx_test_dir("trace_rules");
	if (nx_duck_open(&c->d, 2, NULL, &err))
		return -1;
	*state = c;
	return 0;
}

static int teardown(void **state)
{
	struct ctx *c = *state;
	struct nx_err err = { 0 };

	nx_duck_close(c->d);
	nx_remove_tree(c->dir, &err);
	free(c->dir);
	free(c);
	return 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_trailing_comma_array),
		cmocka_unit_test(test_trailing_comma_object),
		cmocka_unit_test(test_control_characters),
		cmocka_unit_test(test_other_grammar_errors),
		cmocka_unit_test(test_empty_object),
		cmocka_unit_test(test_unreadable_ts),
		cmocka_unit_test(test_no_readable_ts_at_all),
		cmocka_unit_test(test_flow_v2),
		cmocka_unit_test(test_stream_keys),
		cmocka_unit_test(test_mixed_clocks),
	};
	return nx_test_done(cmocka_run_group_tests(tests, setup, teardown));
}
