/* SPDX-License-Identifier: MIT
 * test_cli.c: the neuron-explorer binary as a user runs it ($NX_BIN): --version,
 * --help of every subcommand, exit codes (2 usage, 1 failure), the seed's
 * --show-profile-schema split into one YAML per table, `view --ingest-only` on the
 * fixture pair with its completion line, summary outputs, an independent parquet
 * reader (hyparquet) agreeing with DuckDB, and `view` serving the seed query. */
#include "common/compat.h"
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "helper/asserts.h"

#include "common/fsutil.h"
#include "common/xalloc.h"
#include "helper/fixture.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static const char *bin;
static char *dir;

static char *slurp(const char *path)
{
	char *t = NULL;
	struct nx_err err = { 0 };
	if (nx_read_file(path, &t, NULL, &err))
		fail_msg("%s", err.msg);
	return t;
}

/* Runs a command with stdout/stderr captured into dir/out and dir/err. */
static int run(const char *fmt, ...)
{
	va_list ap;
	char *cmd = NULL;
	va_start(ap, fmt);
	NX_ASSERT_CMP(vasprintf(&cmd, fmt, ap), >=, 0);
	va_end(ap);
	int rc = nx_test_sh("%s >'%s/out' 2>'%s/err'", cmd, dir, dir);
	free(cmd);
	return rc;
}

static char *out_text(void)
{
	char *p = nx_path_join(dir, "out"), *t = slurp(p);
	free(p);
	return t;
}

static char *err_text(void)
{
	char *p = nx_path_join(dir, "err"), *t = slurp(p);
	free(p);
	return t;
}

static int setup(void **state)
{
	struct nx_fixture_opts fo;
	struct nx_err err = { 0 };
	(void)state;
	bin = nx_test_bin();
	dir = nx_test_dir("cli");
	nx_fixture_opts_default(&fo);
	assert_int_equal(nx_fixture_write(dir, &fo, &err), 0);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	free(dir);
	return 0;
}

static void test_version_help_usage(void **state)
{
	(void)state;
	assert_int_equal(run("%s --version", bin), 0);
	char *t = out_text();
	assert_non_null(strstr(t, "neuron-explorer"));
	assert_non_null(strstr(t, "7.4.0"));
	free(t);
	static const char *const cmds[] = { "view", "capture", "recommend", "upload", "kernel" };
	for (size_t i = 0; i < NX_ARRAY_SIZE(cmds); i++) {
		assert_int_equal(run("%s %s --help", bin, cmds[i]), 0);
		t = out_text();
		assert_non_null(strstr(t, "usage"));
		free(t);
	}
	assert_int_equal(run("%s", bin), 2);
	assert_int_equal(run("%s frobnicate", bin), 2);
	assert_int_equal(run("%s view --no-such-flag", bin), 2);
	assert_int_equal(run("%s view -n x.neff", bin), 2);
	assert_int_equal(run("%s view --output-format xml -n a -s b", bin), 2);
}

static void test_schema_split(void **state)
{
	(void)state;
	char *src = getenv("NX_SOURCE_DIR");
	assert_non_null(src);
	assert_int_equal(nx_test_sh("%s --show-profile-schema | python3 %s/tests/tools/split_schema.py "
				    "--out %s/schema", bin, src, dir), 0);
	/* schema.yaml + 52 tables + 4 enums */
	assert_int_equal(nx_test_sh("test $(ls %s/schema/*.yaml | wc -l) -eq 57", dir), 0);
	assert_int_equal(nx_test_sh("grep -q '^openapi:' %s/schema/schema.yaml", dir), 0);
	/* The seed's grep finds every table with its description on the next line. */
	assert_int_equal(nx_test_sh("cd %s && test $(grep -A1 -E '^[A-Z][A-Za-z]+:$' ./schema/*.yaml | "
				    "grep -cE 'description:') -eq 56", dir), 0);
	assert_int_equal(nx_test_sh("cd %s && grep -qinE 'source_location' ./schema/Instruction.yaml", dir), 0);
	assert_int_equal(run("%s view --show-profile-schema", bin), 0);
}

static void test_ingest_only(void **state)
{
	(void)state;
	assert_int_equal(run("%s view -n %s/fixture.neff -s %s/fixture.ntff --data-path %s/data "
			     "--display-name my-kernel --ingest-only", bin, dir, dir, dir), 0);
	char *t = out_text();
	assert_non_null(strstr(t, "Processing for my-kernel is complete"));
	free(t);
	assert_int_equal(nx_test_sh("test -f %s/data/profiles/global/my-kernel@latest/Instruction.parquet", dir), 0);
	assert_int_equal(nx_test_sh("test -f %s/data/profiles/global/my-kernel@latest/Summary.parquet", dir), 0);

	/* SBUF/PSUM usage by default; skipped with the real tool's feature flag */
	assert_int_equal(nx_test_sh("test -f %s/data/profiles/global/my-kernel@latest/SbufAllocation.parquet", dir), 0);
	assert_int_equal(run("%s view -n %s/fixture.neff -s %s/fixture.ntff --data-path %s/data "
			     "--display-name nobuf --ingest-only -q -F ignore-nc-buf-usage=true", bin, dir, dir, dir), 0);
	/* skipped tables are still present, with no rows (every schema table has a file) */
	assert_int_equal(nx_test_sh("cd %s/data/profiles/global/nobuf@latest && test -f Summary.parquet && "
				    "for t in SbufAllocation SbufUsage PsumUsage; do node %s/tests/tools/"
				    "check_parquet.mjs $t.parquet 1 | grep -q '\"num_rows\":0,' || exit 1; done",
				    dir, getenv("NX_SOURCE_DIR")), 0);

	/* failures: exit 1 with the file named; nothing published */
	assert_int_equal(run("%s view -n %s/missing.neff -s %s/fixture.ntff --data-path %s/data "
			     "--display-name other --ingest-only", bin, dir, dir, dir), 1);
	t = err_text();
	assert_non_null(strstr(t, "missing.neff"));
	free(t);
	assert_int_equal(nx_test_sh("test ! -e %s/data/profiles/global/other@latest", dir), 0);
	assert_int_equal(run("%s view -n %s/fixture.ntff -s %s/fixture.ntff --data-path %s/data "
			     "--display-name other --ingest-only", bin, dir, dir, dir), 1);
	assert_int_equal(nx_test_sh("test ! -e %s/data/profiles/global/other@latest", dir), 0);
}

/* A killed ingest leaves the published profile as it was, and the next ingest of the
 * same name cleans up the dead run's temporary directory. */
static void test_killed_ingest(void **state)
{
	(void)state;
	const char *build = getenv("NX_BUILD_DIR");
	assert_non_null(build);
	assert_int_equal(nx_test_sh("%s/bench/bench_gen_trace %s/big 2 >/dev/null", build, dir), 0);
	assert_int_equal(run("%s view -n %s/big/bench.neff -s %s/big/bench.ntff --data-path %s/kill "
			     "--display-name k --ingest-only -q", bin, dir, dir, dir), 0);
	assert_int_equal(nx_test_sh("cd %s/kill/profiles/global/k@latest && ls > %s/before.txt", dir, dir), 0);
	/* start a second ingest of the same name and kill it while it writes */
	assert_int_equal(nx_test_sh(
		"%s view -n %s/big/bench.neff -s %s/big/bench.ntff --data-path %s/kill --display-name k "
		"--ingest-only -q >/dev/null 2>&1 & pid=$!; "
		"for i in $(seq 1 3000); do ls -a %s/kill/profiles/global | grep -q '^\\.k@latest\\.tmp' && break; "
		"sleep 0.01; done; kill -9 $pid; wait $pid 2>/dev/null; "
		"ls -a %s/kill/profiles/global | grep -q '^\\.k@latest\\.tmp'", bin, dir, dir, dir, dir, dir), 0);
	assert_int_equal(nx_test_sh("cd %s/kill/profiles/global/k@latest && ls | diff - %s/before.txt", dir, dir), 0);
	assert_int_equal(run("%s view -n %s/fixture.neff -s %s/fixture.ntff --data-path %s/kill "
			     "--display-name k --ingest-only -q", bin, dir, dir, dir), 0);
	assert_int_equal(nx_test_sh("test -z \"$(ls -a %s/kill/profiles/global | grep '^\\.k@')\"", dir), 0);
}

static void test_summary_formats(void **state)
{
	(void)state;
	assert_int_equal(run("%s view -n %s/fixture.neff -s %s/fixture.ntff --data-path %s/data "
			     "--display-name sj --output-format summary-json -q", bin, dir, dir, dir), 0);
	/* stdout is the JSON document alone: the Summary under the profile's name */
	assert_int_equal(nx_test_sh("python3 -c 'import json,sys; "
				    "d=json.load(open(sys.argv[1])); assert list(d)==[\"sj\"], list(d); "
				    "s=d[\"sj\"]; assert len(s)==101, len(s); "
				    "assert abs(s[\"total_time\"]-1e-6)<1e-12' %s/out", dir), 0);
	assert_int_equal(run("%s view -n %s/fixture.neff -s %s/fixture.ntff --data-path %s/data "
			     "--display-name st --output-format summary-text -q", bin, dir, dir, dir), 0);
	char *t = out_text();
	assert_non_null(strstr(t, "matmul_instruction_count"));
	free(t);
}

/* hyparquet (npm) reads our files independently of DuckDB: same rows, same types. */
static void test_independent_reader(void **state)
{
	(void)state;
	char *src = getenv("NX_SOURCE_DIR");
	const char *p = "data/profiles/global/my-kernel@latest";
	assert_int_equal(nx_test_sh("test -d %s/tests/tools/node_modules/hyparquet", src), 0);
	assert_int_equal(nx_test_sh("cd %s && node %s/tests/tools/check_parquet.mjs %s/Instruction.parquet 100 "
				    "> hp.json", dir, src, p), 0);
	assert_int_equal(nx_test_sh(
		"cd %s && python3 - <<'PY'\n"
		"import json\n"
		"d = json.load(open('hp.json'))\n"
		"assert d['num_rows'] == 7, d['num_rows']\n"
		"cols = {c['name']: c for c in d['columns']}\n"
		"assert len(cols) == 55, len(cols)\n"
		"assert cols['start_ts']['type'] == 'INT64'\n"
		"assert cols['engine']['type'] == 'BYTE_ARRAY'\n"
		"rows = {int(r['id']): r for r in d['rows']}\n"
		"assert rows[3]['opcode'] == 'MATMUL' and int(rows[3]['evt_wait_time_ns']) == 40\n"
		"assert rows[3]['nki_source_location'] == 'kernels/fixture.py:16'\n"
		"assert rows[3]['engine'] == 'Tensor'\n"
		"PY", dir), 0);
	assert_int_equal(nx_test_sh("cd %s && node %s/tests/tools/check_parquet.mjs %s/DmaPacket.parquet 10 "
				    "> hp2.json && python3 -c \"import json; d=json.load(open('hp2.json')); "
				    "c={x['name']:x for x in d['columns']}; assert d['num_rows']==5; "
				    "assert c['packet_idx']['type']=='INT32'; assert c['throughput']['type']=='FLOAT'\"",
				    dir, src, p), 0);
}

/* A profile in the layout AWS's tool writes (large tables split into Table_0/Table_1
 * parquet files, none of our staging files) is analysed like ours. */
static void test_foreign_layout_recommend(void **state)
{
	(void)state;
	const char *src = "data/profiles/global/my-kernel@latest", *dst = "aws/profiles/global/split@latest";
	const char *build = getenv("NX_BUILD_DIR");
	assert_non_null(build);
	assert_int_equal(nx_test_sh(
		"cd %s && mkdir -p %s && cp %s/*.parquet %s/ && cd %s && "
		"%s/nx-sql \"COPY (SELECT * FROM 'Instruction.parquet' WHERE id %% 2 = 0) TO 'Instruction_0.parquet'\" "
		"\"COPY (SELECT * FROM 'Instruction.parquet' WHERE id %% 2 = 1) TO 'Instruction_1.parquet'\" "
		">/dev/null && rm Instruction.parquet", dir, dst, src, dst, dst, build), 0);
	assert_int_equal(run("%s recommend --data-path %s/aws --display-name split --format json", bin, dir), 0);
	assert_int_equal(nx_test_sh("python3 -c \"import json; d=json.load(open('%s/out'))['report']; "
				    "assert d['inputs']['hw_flops'] > 0; assert d['bottleneck']\"", dir), 0);
}

/* Directory mode and the Perfetto export through the CLI. */
static void test_dir_mode_and_perfetto(void **state)
{
	(void)state;
	char *src = getenv("NX_SOURCE_DIR");
	assert_int_equal(nx_test_sh("mkdir -p %s/cap/plugins/profile && cp %s/tests/data/framework-traces/"
				    "kineto_h100_docs_trace.json %s/cap/plugins/profile/trace.json", dir, src, dir), 0);
	assert_int_equal(run("%s view -d %s/cap --data-path %s/data --display-name fw --ingest-only",
			     bin, dir, dir), 0);
	char *t = out_text();
	assert_non_null(strstr(t, "Processing for fw is complete"));
	free(t);
	assert_int_equal(nx_test_sh("test -f %s/data/profiles/global/fw@latest/SystemProfileEvents.parquet", dir), 0);
	/* the trace's deviceProperties state the GPU memory size */
	assert_int_equal(nx_test_sh("test \"$(%s/nx-sql -C %s/data/profiles/global/fw@latest "
				    "'SELECT hbm_capacity_bytes > 0 FROM SystemProfileMetadata')\" = true",
				    getenv("NX_BUILD_DIR"), dir), 0);
	assert_int_equal(run("%s view -n %s/fixture.neff -s %s/fixture.ntff --data-path %s/data "
			     "--display-name pf -q --output-format perfetto --output-file %s/pf.json",
			     bin, dir, dir, dir, dir), 0);
	assert_int_equal(nx_test_sh("python3 -c \"import json; d=json.load(open('%s/pf.json')); "
				    "assert any(e.get('name') == 'MATMUL' for e in d['traceEvents'])\"", dir), 0);
	/* Two NEFF/NTFF pairs: the first joins the profile, the second becomes a sibling. */
	assert_int_equal(nx_test_sh("mkdir -p %s/two/i-1_pid_7 && cd %s/two/i-1_pid_7 && "
				    "cp %s/fixture.neff neff_111.neff && cp %s/fixture.ntff 111_instid_0_vnc_0.ntff && "
				    "cp %s/fixture.neff neff_222.neff && cp %s/fixture.ntff 222_instid_0_vnc_0.ntff && "
				    "cp %s/cap/plugins/profile/trace.json .", dir, dir, dir, dir, dir, dir, dir), 0);
	assert_int_equal(run("%s view -d %s/two --data-path %s/data --display-name two --ingest-only -q",
			     bin, dir, dir), 0);
	assert_int_equal(nx_test_sh("test -f %s/data/profiles/global/two@latest/Instruction.parquet && "
				    "test -f %s/data/profiles/global/two@latest/SystemProfileEvents.parquet && "
				    "test -f %s/data/profiles/global/two-222_instid_0_vnc_0@latest/Instruction.parquet && "
				    "test ! -e %s/data/profiles/global/two@latest/devices", dir, dir, dir, dir), 0);
	assert_int_equal(run("%s view -n a.neff -s b.ntff -d %s/cap", bin, dir), 2);
	/* perfetto without --output-file: the document on stdout, as --help says */
	assert_int_equal(run("%s view -n %s/fixture.neff -s %s/fixture.ntff -q --output-format perfetto",
			     bin, dir, dir), 0);
	assert_int_equal(nx_test_sh("python3 -c \"import json; d=json.load(open('%s/out')); "
				    "assert any(e.get('name') == 'MATMUL' for e in d['traceEvents'])\"", dir), 0);
	assert_int_equal(nx_test_sh("test ! -s %s/err", dir), 0);
}


/* Exports print only their document on stdout and publish nothing unless a data path
 * or a name is given; without -q the completion line goes to stderr. */
static void test_export_side_effects(void **state)
{
	(void)state;
	const char *env = "HOME=%s/exphome TMPDIR=%s/exptmp";
	char *pre = nx_xasprintf(env, dir, dir);

	assert_int_equal(nx_test_sh("mkdir -p %s/exphome %s/exptmp", dir, dir), 0);
	assert_int_equal(run("%s %s view -n %s/fixture.neff -s %s/fixture.ntff --output-format summary-json",
			     pre, bin, dir, dir), 0);
	assert_int_equal(nx_test_sh("python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); "
				    "assert len(d[\"fixture\"])==101' %s/out", dir), 0);
	char *t = err_text();
	assert_non_null(strstr(t, "not published"));
	free(t);
	assert_int_equal(run("%s %s view -n %s/fixture.neff -s %s/fixture.ntff -q "
			     "--output-format perfetto --output-file %s/exp.json", pre, bin, dir, dir, dir), 0);
	assert_int_equal(nx_test_sh("test ! -s %s/out && test -s %s/exp.json", dir, dir), 0);
	/* nothing in the default data path, no temporary directory left */
	assert_int_equal(nx_test_sh("test -z \"$(ls -A %s/exphome)\" && test -z \"$(ls -A %s/exptmp)\"",
				    dir, dir), 0);
	/* asked for: published */
	assert_int_equal(run("%s %s view -n %s/fixture.neff -s %s/fixture.ntff -q --display-name keep "
			     "--output-format summary-text", pre, bin, dir, dir), 0);
	assert_int_equal(nx_test_sh("test -f %s/exphome/.local/share/neuron-profile/profiles/global/"
				    "keep@latest/Summary.parquet", dir), 0);
	free(pre);
}

/* One rule for display names, checked by every command before any work. */
static void test_display_names(void **state)
{
	(void)state;
	static const char *const bad[] = {
		"'x.tmp'", "'a.tmp.b'", "\"$(printf 'a\\tb')\"", "\"$(printf 'a\\nb')\"",
		"\"$(printf 'a\\377b')\"", "'caf\xc3\xa9'", "'a b'", "'.hidden'", "''",
	};
	for (size_t i = 0; i < NX_ARRAY_SIZE(bad); i++) {
		assert_int_equal(run("%s view -n %s/fixture.neff -s %s/fixture.ntff --data-path %s/names "
				     "--display-name %s --ingest-only", bin, dir, dir, dir, bad[i]), 2);
		char *t = err_text();
		assert_non_null(strstr(t, "letters, digits"));
		assert_null(strstr(t, "Ingesting"));
		free(t);
		assert_int_equal(run("%s recommend --data-path %s/names --display-name %s", bin, dir,
				     bad[i]), 2);
		assert_int_equal(run("%s upload --source-code %s --data-path %s/names --display-name %s",
				     bin, dir, dir, bad[i]), 2);
		assert_int_equal(run("%s recommend -n %s/fixture.neff -s %s/fixture.ntff "
				     "--display-name %s", bin, dir, dir, bad[i]), 2);
	}
	assert_int_equal(nx_test_sh("test ! -e %s/names/profiles/global || "
				    "test -z \"$(ls -A %s/names/profiles/global)\"", dir, dir), 0);
	/* the rule is in --help */
	assert_int_equal(run("%s view --help", bin), 0);
	char *t = out_text();
	assert_non_null(strstr(t, "without '.tmp'"));
	free(t);
	/* a good one with every allowed character */
	assert_int_equal(run("%s view -n %s/fixture.neff -s %s/fixture.ntff --data-path %s/names "
			     "--display-name Ab_9-x.y --ingest-only -q", bin, dir, dir, dir), 0);
	/* an empty data path would put the profile under /profiles */
	assert_int_equal(run("%s view -n %s/fixture.neff -s %s/fixture.ntff --data-path '' "
			     "--display-name rootless --ingest-only -q", bin, dir, dir), 2);
	t = err_text();
	assert_non_null(strstr(t, "--data-path is empty"));
	free(t);
	assert_int_equal(nx_test_sh("test ! -e /profiles/global/rootless@latest"), 0);
	assert_int_equal(run("%s recommend --data-path '' --display-name x", bin), 2);
	assert_int_equal(run("%s upload --source-code %s --data-path '' --display-name x", bin, dir), 2);
}

/* Wrong inputs and bad numbers: the message names what is wrong. */
static void test_input_errors(void **state)
{
	(void)state;
	char *t;

	assert_int_equal(run("%s view -n %s/fixture.ntff -s %s/fixture.ntff --data-path %s/data "
			     "--display-name swap --ingest-only", bin, dir, dir, dir), 1);
	t = err_text();
	assert_non_null(strstr(t, "this is an NTFF (device trace), not a NEFF"));
	assert_null(strstr(t, "header_size"));
	free(t);
	assert_int_equal(run("%s view -n %s/fixture.neff -s %s/fixture.neff --data-path %s/data "
			     "--display-name swap --ingest-only", bin, dir, dir, dir), 1);
	t = err_text();
	assert_non_null(strstr(t, "this is a NEFF (compiled kernel), not an NTFF"));
	free(t);

	/* capture: the output is named, not the input */
	assert_int_equal(run("%s capture -n %s/fixture.neff -s %s", bin, dir, dir), 2);
	t = err_text();
	assert_non_null(strstr(t, "is a directory"));
	assert_null(strstr(t, "fixture.neff"));
	free(t);
	assert_int_equal(run("%s capture -n %s/fixture.neff -s %s/fixture.neff/x.ntff", bin, dir, dir), 1);
	t = err_text();
	assert_non_null(strstr(t, "output"));
	assert_non_null(strstr(t, "fixture.neff/x.ntff"));
	free(t);
	assert_int_equal(run("%s capture -n %s/fixture.neff -s %s/c.ntff --num-exec 0", bin, dir, dir), 2);
	t = err_text();
	assert_non_null(strstr(t, "--num-exec"));
	free(t);
	assert_int_equal(run("%s capture -n %s/fixture.neff -s %s/c.ntff --num-exec 2 "
			     "--profile-nth-exec 5", bin, dir, dir), 2);
	t = err_text();
	assert_non_null(strstr(t, "--profile-nth-exec 5"));
	free(t);
	assert_int_equal(nx_test_sh("test ! -e %s/c.ntff && test ! -e %s/profile_exec_5.ntff", dir, dir), 0);
	assert_int_equal(run("%s capture -n %s/fixture.neff -s %s/c.ntff --num-exec -1", bin, dir, dir), 2);

	/* kernel gen --size: no wrapped values */
	assert_int_equal(run("%s kernel gen matmul_v0 --size -512 -o %s/neg.neff", bin, dir), 2);
	t = err_text();
	assert_non_null(strstr(t, "--size"));
	assert_non_null(strstr(t, "'-512'"));
	assert_null(strstr(t, "4294966784"));
	free(t);
	assert_int_equal(run("%s kernel gen matmul_v0 --size 99999999999999999999 -o %s/neg.neff",
			     bin, dir), 2);
	assert_int_equal(run("%s kernel gen matmul_v0 --size 4294967808 -o %s/neg.neff", bin, dir), 2);
	assert_int_equal(nx_test_sh("test ! -e %s/neg.neff", dir), 0);

	/* recommend: a missing source root is an error naming it */
	assert_int_equal(run("%s recommend --data-path %s/data --display-name my-kernel "
			     "--nki-source-root %s/nonexistent", bin, dir, dir), 2);
	t = err_text();
	assert_non_null(strstr(t, "nonexistent"));
	free(t);
}

/* kernel gen and capture say one line each on stderr, none with -q. */
static void test_progress_lines(void **state)
{
	(void)state;
	char *t;

	assert_int_equal(run("%s kernel gen matmul_v0 --size 512 -o %s/g.neff", bin, dir), 0);
	t = err_text();
	assert_non_null(strstr(t, "wrote"));
	assert_non_null(strstr(t, "g.neff"));
	free(t);
	assert_int_equal(run("%s kernel gen matmul_v0 --size 512 -o %s/g.neff -q", bin, dir), 0);
	assert_int_equal(nx_test_sh("test ! -s %s/err", dir), 0);
	assert_int_equal(run("%s capture -n %s/g.neff -s %s/g.ntff", bin, dir, dir), 0);
	t = err_text();
	assert_memory_equal(t, "capture: wrote ", 15);
	assert_non_null(strstr(t, "g.ntff: "));
	assert_int_equal(strchr(t, '\n') - t, (ptrdiff_t)strlen(t) - 1); /* one line */
	free(t);
	assert_int_equal(nx_test_sh("test ! -s %s/out", dir), 0);
	assert_int_equal(run("%s capture -n %s/g.neff -s %s/g.ntff -q", bin, dir, dir), 0);
	assert_int_equal(nx_test_sh("test ! -s %s/err && test ! -s %s/out", dir, dir), 0);
}

/* --window: negative and empty windows and windows that miss the profile are usage
 * errors; a window reaching past the profile is clipped, and the report says so. */
static void test_recommend_windows(void **state)
{
	(void)state;
	static const char *const bad[] = { "-5:100", "-500:-100", "100:100", "200:100",
					   "5000000:6000000" };
	for (size_t i = 0; i < NX_ARRAY_SIZE(bad); i++) {
		assert_int_equal(run("%s recommend --data-path %s/data --display-name my-kernel "
				     "--window=%s", bin, dir, bad[i]), 2);
		assert_int_equal(nx_test_sh("test ! -s %s/out", dir), 0);
	}
	char *t = err_text();
	assert_non_null(strstr(t, "outside the profile"));
	free(t);
	assert_int_equal(run("%s recommend --data-path %s/data --display-name my-kernel "
			     "--window=0:99999999", bin, dir), 0);
	t = out_text();
	assert_non_null(strstr(t, "clipped to the end of the profile"));
	free(t);
	assert_int_equal(run("%s recommend --data-path %s/data --display-name my-kernel "
			     "--window=0:99999999 --format json", bin, dir), 0);
	assert_int_equal(nx_test_sh("python3 -c \"import json; w=json.load(open('%s/out'))['report']"
				    "['window']; assert w['clipped'] is True; "
				    "assert w['requested_t1_ns'] == 99999999; assert w['t1_ns'] < 99999999\"",
				    dir), 0);
}

/* An interrupted `recommend -n/-s` removes its temporary data path (the binary is
 * started from here, not from a shell, whose background jobs ignore SIGINT). */
static void test_recommend_interrupted(void **state)
{
	(void)state;
	const char *build = getenv("NX_BUILD_DIR");
	char *tmp = nx_path_join(dir, "rtmp");
	char *neff = nx_path_join(dir, "big/bench.neff"), *ntff = nx_path_join(dir, "big/bench.ntff");
	static const int sigs[] = { SIGINT, SIGTERM };

	assert_non_null(build);
	assert_int_equal(nx_test_sh("test -f %s || %s/bench/bench_gen_trace %s/big 2 >/dev/null",
				    ntff, build, dir), 0);
	for (size_t i = 0; i < NX_ARRAY_SIZE(sigs); i++) {
		assert_int_equal(nx_test_sh("rm -rf %s && mkdir -p %s", tmp, tmp), 0);
		pid_t pid = fork();
		NX_ASSERT_CMP(pid, >=, 0);
		if (pid == 0) {
			signal(SIGINT, SIG_DFL);
			signal(SIGTERM, SIG_DFL);
			setenv("TMPDIR", tmp, 1);
			FILE *f = freopen("/dev/null", "w", stdout);
			(void)f;
			execl(bin, bin, "recommend", "-n", neff, "-s", ntff, (char *)NULL);
			_exit(127);
		}
		/* wait until the ingest writes into the temporary data path, then interrupt */
		for (int k = 0; k < 3000; k++) {
			if (nx_test_sh("ls -A %s/nx-recommend-*/profiles/global 2>/dev/null | grep -q .",
				       tmp) == 0)
				break;
			usleep(10000);
		}
		kill(pid, sigs[i]);
		int status = 0;
		assert_int_equal(waitpid(pid, &status, 0), pid);
		/* killed by the signal, or done before it arrived: either way nothing is left */
		assert_true(WIFSIGNALED(status) ? WTERMSIG(status) == sigs[i]
						: WEXITSTATUS(status) == 0);
		assert_int_equal(nx_test_sh("test -z \"$(ls -A %s)\"", tmp), 0);
	}
	free(tmp);
	free(neff);
	free(ntff);
}

/* view serves the API: the seed's health poll and Summary query answer. */
static void test_view_serves(void **state)
{
	(void)state;
	char *log = nx_path_join(dir, "serve.log");
	pid_t pid = fork();
	NX_ASSERT_CMP(pid, >=, 0);
	if (pid == 0) {
		FILE *f = freopen(log, "w", stdout);
		(void)f;
		execl(bin, bin, "view", "--data-path", dir, "--disable-ui", "--api-server-port", "0",
		      "-q", (char *)NULL);
		_exit(127);
	}
	/* The data path is dir/ which holds no profiles yet; ingest one while it serves. */
	int port = 0;
	for (int i = 0; i < 200 && !port; i++) {
		usleep(50000);
		char *t = NULL;
		struct nx_err err = { 0 };
		if (nx_read_file(log, &t, NULL, &err) == 0) {
			char *at = strstr(t, "127.0.0.1:");
			if (at)
				port = atoi(at + 10);
			/* the line scripts wait for (README, demo.sh) */
			if (at)
				assert_non_null(strstr(t, "Ready: API server listening on"));
			free(t);
		}
	}
	NX_ASSERT_CMP(port, >, 0);
	assert_int_equal(run("curl -s http://localhost:%d/api/v1/health", port), 0);
	char *t = out_text();
	assert_non_null(strstr(t, "healthy"));
	free(t);
	assert_int_equal(run("%s view -n %s/fixture.neff -s %s/fixture.ntff --data-path %s "
			     "--display-name live --ingest-only -q", bin, dir, dir, dir), 0);
	assert_int_equal(run("curl -s -X POST http://localhost:%d/api/v1/db/live/_search "
			     "-H 'Content-Type: application/json' "
			     "-d '{\"type\":\"databaseExplorerQuery\",\"tableName\":\"Summary\",\"query\":"
			     "\"SELECT total_time, mfu_estimated_percent, tensor_engine_active_time_percent, "
			     "dma_active_time_percent FROM Summary\"}'", port), 0);
	t = out_text();
	assert_non_null(strstr(t, "tensor_engine_active_time_percent"));
	assert_null(strstr(t, "\"error\""));
	free(t);
	/* The analysis endpoint: JSON by default, Markdown on request, bad window refused. */
	assert_int_equal(run("curl -s http://localhost:%d/api/v1/profiles/namespace/global/profile_name/"
			     "live/analysis", port), 0);
	t = out_text();
	assert_non_null(strstr(t, "\"bounds\""));
	assert_non_null(strstr(t, "memory_bound"));
	free(t);
	assert_int_equal(run("curl -s 'http://localhost:%d/api/v1/profiles/namespace/global/profile_name/"
			     "live/analysis?format=markdown&compare=live'", port), 0);
	t = out_text();
	assert_non_null(strstr(t, "Bottleneck"));
	free(t);
	assert_int_equal(run("curl -s -o /dev/null -w '%%{http_code}' 'http://localhost:%d/api/v1/profiles/"
			     "namespace/global/profile_name/live/analysis?window=oops'", port), 0);
	t = out_text();
	assert_string_equal(t, "400");
	free(t);
	/* A second server on the same port fails with a clear message, exit 1. */
	assert_int_equal(run("%s view --data-path %s --disable-ui --api-server-port %d -q", bin, dir, port), 1);
	t = err_text();
	assert_non_null(strstr(t, "in use"));
	free(t);
	kill(pid, SIGTERM);
	int status = 0;
	waitpid(pid, &status, 0);
	assert_true(WIFEXITED(status));
	free(log);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_version_help_usage),
		cmocka_unit_test(test_schema_split),
		cmocka_unit_test(test_ingest_only),
		cmocka_unit_test(test_killed_ingest),
		cmocka_unit_test(test_summary_formats),
		cmocka_unit_test(test_independent_reader),
		cmocka_unit_test(test_foreign_layout_recommend),
		cmocka_unit_test(test_dir_mode_and_perfetto),
		cmocka_unit_test(test_view_serves),
		cmocka_unit_test(test_export_side_effects),
		cmocka_unit_test(test_display_names),
		cmocka_unit_test(test_input_errors),
		cmocka_unit_test(test_progress_lines),
		cmocka_unit_test(test_recommend_windows),
		cmocka_unit_test(test_recommend_interrupted),
	};
	return nx_test_done(cmocka_run_group_tests(tests, setup, teardown));
}
