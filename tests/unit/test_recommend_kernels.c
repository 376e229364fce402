/* SPDX-License-Identifier: MIT
 * test_recommend_kernels.c: recommend end to end on simulated library kernels
 * (generated small, captured with DGE notifications, ingested, analysed through the
 * C API as JSON): the planted kernels name their planted bottleneck and source line
 * first, the matmul V0 -> V1 -> V2 series gets faster while the bottleneck moves from
 * DMA to Tensor (and the comparison says so; V0's reloads written in the Summary's
 * units, 3.00 MiB, in the JSON and the Markdown), a capture without DGE notifications
 * reports the DMA parts as not computable, the report as a reader sees it (remedies,
 * explained thresholds, shares <= 100, details on request), the same report with Flow's
 * edges out of order, the transfers' merge against DuckDB's joins (also with the DMA
 * tables out of order), --window kernel's extent from the footers against the pass,
 * and the CLI's exit codes. */
#include "common/compat.h"
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "helper/asserts.h"

#include "analysis/recommend.h"
#include "common/bytes_text.h"
#include "common/fsutil.h"
#include "common/xalloc.h"
#include "helper/fixture.h"

#include <jansson.h>
#include <stdlib.h>
#include <string.h>

struct ctx {
	char *dir;
	const char *bin;
};

static struct ctx *g;

static int setup(void **state)
{
	g = nx_xcalloc(1, sizeof(*g));
	g->dir = nx_test_dir("recommend-kernels");
	g->bin = nx_test_bin();
	*state = g;
	return 0;
}

static int teardown(void **state)
{
	struct ctx *c = *state;
	free(c->dir);
	free(c);
	return 0;
}

/* Generates, captures and ingests a kernel; returns its profile directory. */
static char *profile(const char *kernel, int size, bool dge, const char *name)
{
	int rc = nx_test_sh("cd '%s' && '%s' kernel gen %s --size %d -o %s.neff && "
			    "%s '%s' capture -n %s.neff -s %s.ntff >/dev/null && "
			    "'%s' view -n %s.neff -s %s.ntff --data-path data --display-name %s "
			    "--ingest-only -q >/dev/null",
			    g->dir, g->bin, kernel, size, name,
			    dge ? "NEURON_RT_ENABLE_DGE_NOTIFICATIONS=1" : "env -u "
			    "NEURON_RT_ENABLE_DGE_NOTIFICATIONS", g->bin, name, name,
			    g->bin, name, name, name);
	assert_int_equal(rc, 0);
	return nx_xasprintf("%s/data/profiles/global/%s@latest", g->dir, name);
}

static json_t *analyse(const char *dir, const char *compare, bool markdown_check,
		       const char *expect_md)
{
	struct nx_recommend_opts o;
	struct nx_strbuf out = NX_STRBUF_INIT;
	struct nx_err err = { 0 };
	json_error_t jerr;

	nx_recommend_opts_init(&o);
	o.profile_dir = dir;
	o.compare_dir = compare;
	o.threads = 2;
	if (markdown_check) {
		if (nx_recommend_run(&o, &out, &err))
			fail_msg("%s", err.msg);
		if (!strstr(out.buf, expect_md))
			fail_msg("'%s' not in the report:\n%s", expect_md, out.buf);
		nx_strbuf_reset(&out);
	}
	o.format = NX_REC_JSON;
	if (nx_recommend_run(&o, &out, &err))
		fail_msg("%s", err.msg);
	json_t *j = json_loads(out.buf, 0, &jerr);
	if (!j)
		fail_msg("bad JSON: %s", jerr.text);
	nx_strbuf_release(&out);
	return j;
}

static const char *str(json_t *j, const char *path)
{
	/* path: dot-separated keys; numbers index arrays */
	char *copy = nx_xstrdup(path), *save = NULL;
	for (char *k = strtok_r(copy, ".", &save); k && j; k = strtok_r(NULL, ".", &save))
		j = json_is_array(j) ? json_array_get(j, (size_t)atoi(k)) : json_object_get(j, k);
	free(copy);
	return json_is_string(j) ? json_string_value(j) : NULL;
}

static double num(json_t *j, const char *path)
{
	char *copy = nx_xstrdup(path), *save = NULL;
	for (char *k = strtok_r(copy, ".", &save); k && j; k = strtok_r(NULL, ".", &save))
		j = json_is_array(j) ? json_array_get(j, (size_t)atoi(k)) : json_object_get(j, k);
	free(copy);
	return json_is_number(j) ? json_number_value(j) : -1;
}

static void first_finding(json_t *j, const char *id, const char *line_a, const char *line_b)
{
	const char *got = str(j, "report.findings.0.id");
	const char *line = str(j, "report.findings.0.lines.rows.0.0");

	if (!got || strcmp(got, id))
		fail_msg("first finding %s, want %s", got ? got : "(none)", id);
	if (!line || (strcmp(line, line_a) && strcmp(line, line_b)))
		fail_msg("first line %s, want %s or %s", line ? line : "(none)", line_a, line_b);
	assert_string_equal(str(j, "report.findings.0.status"), "found");
}

static void test_dma_tiny(void **state)
{
	(void)state;
	char *p = profile("dma_tiny", 512, true, "dma_tiny");
	json_t *j = analyse(p, NULL, true, "Bottleneck: **DMA**");
	assert_string_equal(str(j, "report.bottleneck"), "DMA");
	first_finding(j, "dma_efficiency", "dma_tiny.py:25", "dma_tiny.py:26");
	json_decref(j);
	free(p);
}

static void test_vector_bound(void **state)
{
	(void)state;
	char *p = profile("vector_bound", 512, true, "vector_bound");
	json_t *j = analyse(p, NULL, true, "Bottleneck: **Vector**");
	assert_string_equal(str(j, "report.bottleneck"), "Vector");
	first_finding(j, "engine_hotspots", "vector_bound.py:25", "vector_bound.py:26");
	json_decref(j);
	free(p);
}

static void test_serial_sem(void **state)
{
	(void)state;
	char *p = profile("serial_sem", 512, true, "serial_sem");
	json_t *j = analyse(p, NULL, false, NULL);
	/* the single-buffered load waits for the previous store while DMA idles */
	first_finding(j, "serialisation", "serial_sem.py:29", "serial_sem.py:30");
	json_decref(j);
	free(p);
}

static void test_matmul_series(void **state)
{
	(void)state;
	char *v0 = profile("matmul_v0", 1024, true, "mm_v0");
	char *v1 = profile("matmul_v1", 1024, true, "mm_v1");
	char *v2 = profile("matmul_v2", 1024, true, "mm_v2");
	json_t *a = analyse(v0, NULL, true, " MiB moved for "), *b = analyse(v1, NULL, false, NULL);
	json_t *c = analyse(v2, NULL, false, NULL);

	double t0 = num(a, "report.bounds.0.ns"), t1 = num(b, "report.bounds.0.ns");
	double t2 = num(c, "report.bounds.0.ns");
	NX_ASSERT_CMP(t0, >, t1);
	NX_ASSERT_CMP(t1, >, t2);
	assert_string_equal(str(a, "report.bottleneck"), "DMA");
	assert_string_equal(str(c, "report.bottleneck"), "Tensor");
	/* V0 reloads its inputs: that is its first finding */
	assert_string_equal(str(a, "report.findings.0.id"), "redundant_dma");
	/* its text writes its bytes as the Summary does (bytes_text.h): "3.00 MiB moved for
	 * ..." where the metrics keep them in bytes */
	struct nx_strbuf want = NX_STRBUF_INIT;
	nx_bytes_text(&want, num(a, "report.findings.0.metrics.dma_transfer_bytes"));
	nx_strbuf_addstr(&want, " moved for ");
	nx_bytes_text(&want, num(a, "report.findings.0.metrics.necessary_bytes"));
	nx_strbuf_addstr(&want, " needed (");
	const char *summary = str(a, "report.findings.0.summary");
	if (!summary || strncmp(summary, want.buf, want.len) || !strstr(want.buf, "iB moved"))
		fail_msg("summary '%s', want it to start with '%s'", summary, want.buf);
	nx_strbuf_release(&want);
	json_decref(a);
	json_decref(b);
	json_decref(c);

	json_t *cmp = analyse(v0, v2, true, "Bottleneck: DMA \xe2\x86\x92 Tensor");
	assert_true(json_is_true(json_object_get(json_object_get(cmp, "bottleneck"), "changed")));
	const char *delta = str(cmp, "deltas.bounds.0.text");
	assert_non_null(delta);
	NX_ASSERT_CMP(delta[0], ==, '-');
	json_decref(cmp);
	free(v0);
	free(v1);
	free(v2);
}

static void test_no_dge(void **state)
{
	(void)state;
	char *p = profile("dma_tiny", 512, false, "nodge");
	json_t *j = analyse(p, NULL, true, "NEURON_RT_ENABLE_DGE_NOTIFICATIONS=1");
	json_t *findings = json_object_get(json_object_get(j, "report"), "findings");
	size_t i;
	json_t *f;
	int unavailable = 0;

	json_array_foreach(findings, i, f) {
		const char *id = json_string_value(json_object_get(f, "id"));
		if (!strcmp(id, "dma_efficiency") || !strcmp(id, "redundant_dma")) {
			assert_string_equal(json_string_value(json_object_get(f, "status")),
					    "not_computable");
			unavailable++;
		}
	}
	assert_int_equal(unavailable, 2);
	assert_true(json_is_null(json_object_get(json_array_get(json_object_get(
		json_object_get(j, "report"), "bounds"), 1), "ns")));
	NX_ASSERT_CMP(num(j, "report.bounds.4.ns"), >=, 0); /* compute_bound is still there */
	NX_ASSERT_CMP(json_array_size(json_object_get(json_object_get(json_object_get(j, "report"),
		"data_quality"), "not_computable")), >, 0);
	json_decref(j);
	free(p);
}


/* Every "N%" printed in a report is at most 100. */
static void no_share_above_100(const char *md)
{
	for (const char *p = strchr(md, '%'); p; p = strchr(p + 1, '%')) {
		const char *b = p;
		while (b > md && ((b[-1] >= '0' && b[-1] <= '9') || b[-1] == '.'))
			b--;
		if (b < p && strtod(b, NULL) > 100.0)
			fail_msg("a share above 100%%: '%.*s'", (int)(p - b + 1), b);
	}
}

static int count(const char *hay, const char *needle)
{
	int n = 0;
	for (const char *p = strstr(hay, needle); p; p = strstr(p + 1, needle))
		n++;
	return n;
}

/* The report as a kernel engineer reads it: every finding says what to change, the
 * terms and thresholds are explained, tables are in us with shares <= 100, and the
 * choices and Step 1 appendix only come with --details. Markdown and JSON agree. */
static void test_reader_report(void **state)
{
	(void)state;
	static const char *const names[] = { "dma_tiny", "vector_bound", "serial_sem", "mm_v0",
					     "mm_tp" };
	char *tp = profile("matmul_transpose", 512, true, "mm_tp");
	int kinds = 0;

	free(tp);
	for (size_t k = 0; k < NX_ARRAY_SIZE(names); k++) {
		char *dir = nx_xasprintf("%s/data/profiles/global/%s@latest", g->dir, names[k]);
		struct nx_recommend_opts o;
		struct nx_strbuf md = NX_STRBUF_INIT;
		struct nx_err err = { 0 };

		nx_recommend_opts_init(&o);
		o.profile_dir = dir;
		o.threads = 2;
		if (nx_recommend_run(&o, &md, &err))
			fail_msg("%s: %s", names[k], err.msg);
		json_t *j = analyse(dir, NULL, false, NULL);
		json_t *findings = json_object_get(json_object_get(j, "report"), "findings");
		size_t i;
		json_t *f;
		int found = 0;

		json_array_foreach(findings, i, f) {
			json_t *rem = json_object_get(f, "remedies");
			assert_true(json_is_array(rem));
			assert_non_null(json_string_value(json_object_get(f, "group_label")));
			if (strcmp(json_string_value(json_object_get(f, "status")), "found"))
				continue;
			found++;
			kinds++;
			if (json_array_size(rem) == 0)
				fail_msg("%s: finding %s has no remedy", names[k],
					 json_string_value(json_object_get(f, "id")));
			/* shares in the JSON tables are <= 100 too */
			json_t *cols = json_object_get(json_object_get(f, "lines"), "columns");
			json_t *rows = json_object_get(json_object_get(f, "lines"), "rows");
			size_t c, r;
			json_t *col, *row;
			json_array_foreach(cols, c, col) {
				if (strcmp(json_string_value(col), "share_pct"))
					continue;
				json_array_foreach(rows, r, row)
					NX_ASSERT_CMP(json_number_value(json_array_get(row, c)), <=, 100.0);
			}
		}
		assert_true(json_is_object(json_object_get(json_object_get(j, "report"),
							   "thresholds")));
		if (count(md.buf, "\nWhat to change:\n") != found)
			fail_msg("%s: %d findings, %d remedy blocks:\n%s", names[k], found,
				 count(md.buf, "\nWhat to change:\n"), md.buf);
		assert_non_null(strstr(md.buf, "bn_speedup (bottleneck-aware speedup)"));
		assert_non_null(strstr(md.buf, "Findings overlap"));
		assert_non_null(strstr(md.buf, "## How to read this report"));
		assert_non_null(strstr(md.buf, "small below 4 KiB"));
		assert_null(strstr(md.buf, "excess_ns"));
		assert_null(strstr(md.buf, "share_pct"));
		assert_null(strstr(md.buf, "## Choices"));
		assert_null(strstr(md.buf, "## Appendix"));
		no_share_above_100(md.buf);

		nx_strbuf_reset(&md);
		o.details = true;
		assert_int_equal(nx_recommend_run(&o, &md, &err), 0);
		assert_non_null(strstr(md.buf, "## Choices"));
		assert_non_null(strstr(md.buf, "## Appendix"));
		no_share_above_100(md.buf);
		nx_strbuf_release(&md);
		json_decref(j);
		free(dir);
	}
	NX_ASSERT_CMP(kinds, >=, 4);
	assert_int_equal(nx_test_sh("'%s' recommend --data-path '%s/data' --display-name mm_v0 "
				    "--details | grep -q '^## Appendix'", g->bin, g->dir), 0);
}

/* The pass over Instruction reads Flow's trigger edges in file order, and the engines'
 * runs come from ActiveTime in file order; in another order (here reversed) the passes
 * start again with DuckDB sorting the rows, and the reports (whole kernel, and windowed,
 * which reads ActiveTime) are the same, as they are when DuckDB reads every pass
 * (NX_REC_READ=duckdb). */
static void test_flow_order(void **state)
{
	(void)state;
	const char *src = "data/profiles/global/dma_tiny@latest";
	const char *copy = "flow/profiles/global/dma_tiny@latest";

	assert_int_equal(nx_test_sh("cd '%s' && mkdir -p flow/profiles/global && cp -r %s %s && "
				    "rm %s/Flow.parquet %s/ActiveTime.parquet && "
				    "\"$(dirname '%s')/nx-sql\" -C %s "
				    "\"COPY (SELECT * FROM Flow ORDER BY in_id DESC NULLS FIRST, "
				    "out_id) TO '%s/Flow.parquet'; COPY (SELECT * FROM ActiveTime "
				    "ORDER BY start_ts DESC) TO '%s/ActiveTime.parquet'\" >/dev/null",
				    g->dir, src, copy, copy, copy, g->bin, src, copy, copy), 0);
	/* the reversed file holds edges of several instructions, out of order */
	assert_int_equal(nx_test_sh("cd '%s' && test \"$(\"$(dirname '%s')/nx-sql\" -C %s "
				    "\"SELECT count(DISTINCT in_id) > 1 FROM Flow WHERE "
				    "dependency_type = 'DGE_TRIGGER'\")\" = true", g->dir, g->bin,
				    copy), 0);
	for (int w = 0; w < 2; w++)
		assert_int_equal(nx_test_sh("cd '%s' && for d in data flow; do '%s' recommend "
					    "--data-path $d --display-name dma_tiny --format json %s "
					    ">$d.json || exit 1; done && NX_REC_READ=duckdb '%s' "
					    "recommend --data-path flow --display-name dma_tiny "
					    "--format json %s >duck.json && "
					    "grep -q dma_efficiency data.json && "
					    "sed 's,\"flow/,\"data/,' flow.json | cmp data.json - && "
					    "sed 's,\"flow/,\"data/,' duck.json | cmp data.json -",
					    g->dir, g->bin, w ? "--window kernel" : "", g->bin,
					    w ? "--window kernel" : ""), 0);
}

/* The DmaPacket pass keeps the union's runs for the serialisation investigation when DMA
 * is the bottleneck; read again from DmaPacket (NX_REC_DMA_RUNS=read, as when there are
 * too many to keep) they give the same reports, whole and windowed, JSON and Markdown
 * with details, on every kernel, and on a copy with DmaPacket in reverse order (the pass
 * then runs sorted by DuckDB). */
static void test_dma_runs(void **state)
{
	static const char *const names[] = { "dma_tiny", "serial_sem", "mm_v0", "vector_bound" };
	static const char *const windows[] = { "", "--window kernel", "--window dpa" };

	(void)state;
	assert_int_equal(nx_test_sh("cd '%s' && mkdir -p runs/profiles/global && "
				    "cp -r data/profiles/global/dma_tiny@latest runs/profiles/global/ "
				    "&& p=runs/profiles/global/dma_tiny@latest && "
				    "rm $p/DmaPacket.parquet && \"$(dirname '%s')/nx-sql\" "
				    "-C data/profiles/global/dma_tiny@latest \"COPY (SELECT * FROM "
				    "DmaPacket ORDER BY start_ts DESC) TO '$p/DmaPacket.parquet'\" "
				    ">/dev/null", g->dir, g->bin), 0);
	for (size_t i = 0; i <= sizeof(names) / sizeof(*names); i++)
		for (size_t w = 0; w < 3; w++) {
			const char *data = i < 4 ? "data" : "runs";
			const char *name = i < 4 ? names[i] : "dma_tiny";
			assert_int_equal(nx_test_sh("cd '%s' && for how in keep read; do "
						    "NX_REC_DMA_RUNS=$how '%s' recommend --data-path "
						    "%s --display-name %s --format json %s "
						    ">runs-$how.json && NX_REC_DMA_RUNS=$how '%s' "
						    "recommend --data-path %s --display-name %s "
						    "--details %s >runs-$how.md || exit 1; done && "
						    "cmp runs-keep.json runs-read.json && "
						    "cmp runs-keep.md runs-read.md",
						    g->dir, g->bin, data, name, windows[w], g->bin,
						    data, name, windows[w]), 0);
		}
	/* the investigation ran beside DMA's runs */
	assert_int_equal(nx_test_sh("cd '%s' && grep -q '\"bottleneck\": *\"DMA\"' runs-keep.json "
				    "&& grep -q serialisation runs-keep.json", g->dir), 0);
}

/* --window kernel from the row groups DmaPacket's statistics point at (scan_kext.c) gives
 * the reports the pass over every packet gives (NX_REC_KEXT=pass), JSON and Markdown
 * with details, on every kernel and on the copy with DmaPacket in reverse order. */
static void test_kernel_extent(void **state)
{
	static const char *const names[] = { "dma_tiny", "serial_sem", "mm_v0", "vector_bound" };

	(void)state;
	assert_int_equal(nx_test_sh("cd '%s' && mkdir -p kext/profiles/global && "
				    "cp -r data/profiles/global/dma_tiny@latest kext/profiles/global/ "
				    "&& p=kext/profiles/global/dma_tiny@latest && "
				    "rm $p/DmaPacket.parquet && \"$(dirname '%s')/nx-sql\" "
				    "-C data/profiles/global/dma_tiny@latest \"COPY (SELECT * FROM "
				    "DmaPacket ORDER BY start_ts DESC) TO '$p/DmaPacket.parquet'\" "
				    ">/dev/null", g->dir, g->bin), 0);
	for (size_t i = 0; i <= sizeof(names) / sizeof(*names); i++) {
		const char *data = i < 4 ? "data" : "kext";
		const char *name = i < 4 ? names[i] : "dma_tiny";
		assert_int_equal(nx_test_sh("cd '%s' && for how in footers pass; do "
					    "NX_REC_KEXT=$how '%s' recommend --data-path %s "
					    "--display-name %s --format json --window kernel "
					    ">kext-$how.json && NX_REC_KEXT=$how '%s' recommend "
					    "--data-path %s --display-name %s --details --window kernel "
					    ">kext-$how.md || exit 1; done && "
					    "grep -q '\"window\"' kext-pass.json && "
					    "cmp kext-footers.json kext-pass.json && "
					    "cmp kext-footers.md kext-pass.md",
					    g->dir, g->bin, data, name, g->bin, data, name), 0);
	}
}

/* Both reports of one profile (JSON and Markdown with details, in window w) with the
 * transfers' merge (scan_xfer.c) and with DuckDB's joins (NX_REC_XFER=sql), into
 * DATA-NAME.{json,md} and DATA-NAME.sql.{json,md} of the test directory; 0 when the
 * two agree. */
static int merge_and_sql(const char *data, const char *name, const char *w)
{
	return nx_test_sh("cd '%s' && for how in merge sql; do x=; [ $how = sql ] && x=.sql; "
			  "NX_REC_XFER=$how '%s' recommend --data-path %s --display-name %s "
			  "--format json %s >%s-%s$x.json && NX_REC_XFER=$how '%s' recommend "
			  "--data-path %s --display-name %s --details %s >%s-%s$x.md || exit 1; "
			  "done && cmp %s-%s.json %s-%s.sql.json && cmp %s-%s.md %s-%s.sql.md",
			  g->dir, g->bin, data, name, w, data, name, g->bin, data, name, w, data,
			  name, data, name, data, name, data, name, data, name);
}

/* DMA efficiency and redundant DMA group the window's transfers in a merge in C of the
 * transfers, the Flow edges and the packets' busy time, each sorted by transfer id
 * (scan_xfer.c); with NX_REC_XFER=sql DuckDB joins them as before. The reports agree on
 * every kernel here, whole and windowed, and on a copy of two whose DmaPacketAggregated,
 * DmaPacket and Flow files are in reverse order (the merge sorts them; the packet pass
 * starts again sorted by DuckDB), which also gives the reports of the originals; and on a
 * copy with spills and NULL cells planted in DmaPacketAggregated. */
static void test_xfer_merge(void **state)
{
	static const char *const names[] = { "dma_tiny", "serial_sem", "mm_v0", "mm_v1", "mm_v2",
					     "vector_bound" };
	static const char *const windows[] = { "", "--window kernel", "--window dpa" };

	(void)state;
	for (size_t i = 0; i < sizeof(names) / sizeof(*names); i++)
		for (size_t w = 0; w < 3; w++)
			assert_int_equal(merge_and_sql("data", names[i], windows[w]), 0);
	/* the merge found lines to report: dma_tiny's planted ones, mm_v0's reloads */
	assert_int_equal(nx_test_sh("cd '%s' && grep -q 'dma_tiny.py:25' data-dma_tiny.json && "
				    "grep -q 'input reload' data-mm_v0.json", g->dir), 0);
	for (int i = 0; i < 2; i++) {
		const char *name = i ? "mm_v0" : "dma_tiny";
		assert_int_equal(nx_test_sh("cd '%s' && mkdir -p rev/profiles/global && "
					    "cp -r data/profiles/global/%s@latest rev/profiles/global/ "
					    "&& p=rev/profiles/global/%s@latest && rm $p/Flow.parquet "
					    "$p/DmaPacket.parquet $p/DmaPacketAggregated.parquet && "
					    "\"$(dirname '%s')/nx-sql\" -C data/profiles/global/%s@latest "
					    "\"COPY (SELECT * FROM Flow ORDER BY in_id DESC NULLS FIRST, "
					    "out_id) TO '$p/Flow.parquet'; COPY (SELECT * FROM DmaPacket "
					    "ORDER BY packet_aggregation_id DESC, start_ts DESC) TO "
					    "'$p/DmaPacket.parquet'; COPY (SELECT * FROM "
					    "DmaPacketAggregated ORDER BY id DESC) TO "
					    "'$p/DmaPacketAggregated.parquet'\" >/dev/null", g->dir, name,
					    name, g->bin, name), 0);
		for (size_t w = 0; w < 3; w++) {
			assert_int_equal(merge_and_sql("rev", name, windows[w]), 0);
			assert_int_equal(merge_and_sql("data", name, windows[w]), 0);
			assert_int_equal(nx_test_sh("cd '%s' && sed 's,\"rev/,\"data/,' "
						    "rev-%s.json | cmp data-%s.json - && "
						    "sed 's,rev/,data/,' rev-%s.md | cmp data-%s.md -",
						    g->dir, name, name, name, name), 0);
		}
	}
	/* spills (VIRTUAL in a source or destination) and NULL cells where the merge
	 * counts, sums, takes medians and the most frequent tensor */
	assert_int_equal(nx_test_sh("cd '%s' && mkdir -p virt/profiles/global && "
				    "cp -r data/profiles/global/mm_v0@latest virt/profiles/global/ && "
				    "p=virt/profiles/global/mm_v0@latest && "
				    "rm $p/DmaPacketAggregated.parquet && \"$(dirname '%s')/nx-sql\" "
				    "-C data/profiles/global/mm_v0@latest \"COPY (SELECT * REPLACE ("
				    "CASE WHEN id %% 3 = 0 THEN '[[VIRTUAL]]' ELSE source END AS source, "
				    "CASE WHEN id %% 5 = 0 THEN 'x[VIRTUAL]' ELSE dest END AS dest, "
				    "CASE WHEN id %% 7 = 0 THEN NULL ELSE variable END AS variable, "
				    "CASE WHEN id %% 11 = 0 THEN NULL ELSE transfer_bytes END AS "
				    "transfer_bytes, CASE WHEN id %% 13 = 0 THEN NULL ELSE "
				    "write_num_sbuf_partitions END AS write_num_sbuf_partitions) FROM "
				    "DmaPacketAggregated ORDER BY id DESC) TO "
				    "'$p/DmaPacketAggregated.parquet'\" >/dev/null", g->dir, g->bin), 0);
	for (size_t w = 0; w < 3; w++)
		assert_int_equal(merge_and_sql("virt", "mm_v0", windows[w]), 0);
	assert_int_equal(nx_test_sh("cd '%s' && grep -q '\"spill\"' virt-mm_v0.json", g->dir), 0);
}

static void test_cli(void **state)
{
	(void)state;
	assert_int_equal(nx_test_sh("'%s' recommend --bogus 2>/dev/null", g->bin), 2);
	assert_int_equal(nx_test_sh("'%s' recommend 2>/dev/null", g->bin), 2);
	assert_int_equal(nx_test_sh("'%s' recommend --window 5:1 --display-name x 2>/dev/null",
				    g->bin), 2);
	assert_int_equal(nx_test_sh("'%s' recommend --data-path '%s/data' --display-name nope "
				    "2>/dev/null", g->bin, g->dir), 1);
	assert_int_equal(nx_test_sh("'%s' recommend --help >/dev/null", g->bin), 0);
	/* -n/-s ingests into a temporary data path; the window and JSON options apply */
	assert_int_equal(nx_test_sh("cd '%s' && '%s' recommend -n dma_tiny.neff -s dma_tiny.ntff "
				    "--window kernel --format json | grep -q '\"source\": \"kernel\"'",
				    g->dir, g->bin), 0);
	/* a reader that closes the pipe at once ends no run before its temporary data path is
	 * removed: nothing is left in TMPDIR */
	assert_int_equal(nx_test_sh("cd '%s' && rm -rf piped && mkdir piped && TMPDIR=\"$PWD/piped\" "
				    "'%s' recommend -n dma_tiny.neff -s dma_tiny.ntff --format json | "
				    "true && test -z \"$(ls -A piped)\"", g->dir, g->bin), 0);
	/* V0 and V1 both wait on their small static-ring loads */
	assert_int_equal(nx_test_sh("'%s' recommend --data-path '%s/data' --compare mm_v0 mm_v1 | "
				    "grep -q 'Bottleneck: DMA (unchanged)'", g->bin, g->dir), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_dma_tiny),
		cmocka_unit_test(test_vector_bound),
		cmocka_unit_test(test_serial_sem),
		cmocka_unit_test(test_matmul_series),
		cmocka_unit_test(test_no_dge),
		cmocka_unit_test(test_reader_report),
		cmocka_unit_test(test_flow_order),
		cmocka_unit_test(test_xfer_merge),
		cmocka_unit_test(test_dma_runs),
		cmocka_unit_test(test_kernel_extent),
		cmocka_unit_test(test_cli),
	};
	return nx_test_done(cmocka_run_group_tests(tests, setup, teardown));
}
