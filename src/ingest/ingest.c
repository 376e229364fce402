/* SPDX-License-Identifier: MIT
 * ingest.c: the ingest driver. NEFF + NTFF in, a published profile directory out:
 *   1. parse the NEFF and open the NTFF (uuid must match),
 *   2. stream each raw table from its record kind into parquet (bounded memory),
 *   3. write the NEFF-derived tables and the occupancy pass's, then free the NEFF,
 *   4. run the derive SQL,
 *   5. write Metadata, ExecutionInfo, Warning, SchemaFields, and a zero-row file for
 *      every other stored schema table that got no rows,
 *   6. run the caller's hook on it (view: the timeline cache, whose first part, the
 *      events, started after step 2 and ran beside steps 3 and 4), then publish the
 *      temporary directory as <name>@latest in one rename.
 * The stages are the table `stages` at the end, run in its order by nx_ingest. */
#include "common/compat.h"
#include "db/parquet_concat.h"
#include "ingest/ingest.h"
#include "ingest/context.h"
#include "common/env_num.h"
#include "common/fsutil.h"
#include "common/log.h"
#include "common/strbuf.h"
#include "common/xalloc.h"
#include "derive/derive.h"
#include "derive/sql_files.h"
#include "ingest/dma_aggregated.h"
#include "ingest/ir_rollup.h"
#include "ingest/kernel_source.h"
#include "ingest/memory_note.h"

#include <dirent.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define now_s nx_now_s

/* Writes one table from a row source; a table with no rows leaves no file. */
static int write_table(struct nx_ingest_ctx *c, struct nx_duck *d, struct nx_row_source *src,
		       const char *dir, bool keep_empty, uint64_t *total, struct nx_err *err)
{
	char *path = nx_xasprintf("%s/%s.parquet", dir, src->table->name);
	uint64_t rows = 0;
	int rc = nx_ctx_copy(c, d, src, path, NULL, NULL, &rows, err);

	if (!rc && rows == 0 && !keep_empty)
		remove(path);
	if (!rc && total)
		*total += rows;
	free(path);
	return rc;
}

/* The trace tables were written as parts of 2M rows, which the derive stage reads as
 * they are; here each becomes the one "<T>.parquet" the seed workflows open
 * (db/parquet_concat.h says why). */
static int join_parts(struct nx_ingest_ctx *c, const char *dir, struct nx_err *err)
{
	double t0 = now_s();
	uint64_t bytes = 0;
	size_t tables = 0;
	int rc = nx_parquet_join_split_tables(dir, &bytes, &tables, err);
	char how[64];

	/* "joined: ..." makes the CLI count tables, not rows (cli/view_progress.c) */
	snprintf(how, sizeof(how), "joined: %.0f MB copied", (double)bytes / 1e6);
	if (!rc && tables)
		nx_ctx_table_done(c, "parts_joined", how, tables, now_s() - t0);
	return rc;
}

static int write_static(struct nx_ingest_ctx *c, struct nx_duck *d, const char *table,
			const char *dir, bool keep_empty, struct nx_err *err)
{
	struct nx_src_static s;
	struct nx_row_source src;
	int rc = nx_src_static_init(&s, c, table, &src, err);

	if (!rc)
		rc = write_table(c, d, &src, dir, keep_empty, &c->rows_total, err);
	nx_src_static_release(&s);
	return rc;
}

typedef int (*trace_init_fn)(struct nx_src_trace *, struct nx_ingest_ctx *,
			     struct nx_row_source *, struct nx_err *);

static int write_trace_tables(struct nx_ingest_ctx *c, struct nx_duck *d, const char *dir,
			      uint64_t *dma_rows, struct nx_err *err)
{
	/* DmaPacket before Instruction: its pass collects the DMA span of every
	 * triggering instruction for the Instruction table's dma_trigger_* columns. */
	static const trace_init_fn inits[] = { nx_src_dma_init, nx_src_instruction_init,
					       nx_src_sem_init, nx_src_throttle_init,
					       nx_src_error_init };
	for (size_t i = 0; i < NX_ARRAY_SIZE(inits); i++) {
		struct nx_src_trace s;
		struct nx_row_source src;
		uint64_t before = c->rows_total;
		uint64_t rows = 0;
		int rc = inits[i](&s, c, &src, err);
		/* in parts: see join_parts() */
		if (!rc)
			rc = nx_ctx_copy_parts(c, d, &src, dir, &rows, err);
		c->rows_total += rows;
		c->trace_rows += rows;
		if (!rc && s.kind == NX_REC_DMA)
			rc = nx_trig_seal(&c->trig, err);
		if (rc)
			return rc;
		if (s.kind == NX_REC_DMA)
			*dma_rows = c->rows_total - before;
	}
	return nx_read_exec_records(c, err);
}

/* The front end's compiler decisions (NEFF debug info), one "Compiler Decision" Warning
 * row each in NEFF order: "KIND KEY=VALUE ... (FILE:LINE)". */
static void decision_warnings(struct nx_ingest_ctx *c)
{
	struct nx_strbuf sb = NX_STRBUF_INIT;

	for (size_t i = 0; i < nx_ctx_dbg(c)->ndecisions; i++) {
		const struct nx_dbg_decision *d = &nx_ctx_dbg(c)->decisions[i];

		nx_strbuf_reset(&sb);
		nx_strbuf_addstr(&sb, d->kind ? d->kind : "");
		for (size_t k = 0; k < d->nargs; k++)
			nx_strbuf_addf(&sb, " %s=%s", d->keys[k], d->values[k]);
		if (d->file && d->line >= 0)
			nx_strbuf_addf(&sb, " (%s:%" PRId64 ")", d->file, d->line);
		else if (d->file)
			nx_strbuf_addf(&sb, " (%s)", d->file);
		nx_ctx_warn(c, "Compiler Decision", "%s", nx_strbuf_str(&sb));
	}
	nx_strbuf_release(&sb);
}

/* Data anomalies that do not stop ingest become Warning rows. */
static void collect_warnings(struct nx_ingest_ctx *c, uint64_t dma_rows)
{
	decision_warnings(c);
	if (dma_rows == 0) {
		if (!(c->info->flags & NX_NTFF_DGE_NOTIFICATIONS))
			nx_ctx_warn(c, "Missing Data",
				    "the trace has no DMA packet records: it was captured without DGE "
				    "notifications, so DmaPacket and DmaPacketAggregated are missing; "
				    "re-capture with NEURON_RT_ENABLE_DGE_NOTIFICATIONS=1");
		else
			nx_ctx_warn(c, "Missing Data", "the trace has no DMA packet records");
	}
	if (nx_ctx_dbg(c)->ninsts == 0)
		nx_ctx_warn(c, "Missing Data",
			    "the NEFF carries no kernel_debug_info.json: source locations "
			    "(nki_source_location, bir_debug_info_source_location) are null; "
			    "recompile with debug info to attribute time to source lines");
	if (c->unknown_inst)
		nx_ctx_warn(c, "Invalid Data",
			    "%" PRIu64 " instruction records name instructions that are not in the "
			    "NEFF; their opcode is UNKNOWN (is the NTFF from another compilation?)",
			    c->unknown_inst);
	if (c->unknown_queue)
		nx_ctx_warn(c, "Invalid Data",
			    "%" PRIu64 " DMA packet records name a queue not in the NEFF", c->unknown_queue);
	if (c->unknown_block)
		nx_ctx_warn(c, "Invalid Data",
			    "%" PRIu64 " DMA packet records name a DMA block not in the NEFF",
			    c->unknown_block);
	for (size_t i = 0; i < c->nexec; i++)
		if (c->exec[i].has_start != c->exec[i].has_stop)
			nx_ctx_warn(c, "Invalid Data", "execution %zu has a %s record but no %s record",
				    i, c->exec[i].has_start ? "start" : "stop",
				    c->exec[i].has_start ? "stop" : "start");
}

/* DuckDB's memory_limit while the raw tables stream: NX_INGEST_MEMORY_LIMIT or 256MB
 * (bound_memory has refused a value that is not a size). */
static const char *raw_limit(void)
{
	return nx_env_size_or("NX_INGEST_MEMORY_LIMIT", "256MB");
}

/* The ingest's three memory limits from the environment, refused up front when one is
 * not a size (a usage error naming it), rather than by DuckDB in the middle. */
static int limits_check(struct nx_err *err)
{
	const char *v;
	int rc = nx_env_size("NX_INGEST_MEMORY_LIMIT", &v, err);

	if (!rc)
		rc = nx_env_size("NX_DERIVE_MEMORY_LIMIT", &v, err);
	if (!rc)
		rc = nx_env_size("NX_DERIVE_RETRY_MEMORY_LIMIT", &v, err);
	return rc ? rc : nx_duck_part_writer_check(err);
}

/* Keeps DuckDB's memory bounded whatever the trace size: operators that need more
 * (sorts of the window functions in the derive SQL) spill into the staging directory.
 * DuckDB's external file cache stays off: it keeps the parquet bytes a query read in the
 * buffer pool after the query (63 MB after one scan of four Instruction columns at 100M
 * records), beside the timeline cache's events part in `view`; the files read here were
 * just written, and the page cache holds them (docs/memory.md). */
static int bound_memory(struct nx_duck *d, const char *staging, struct nx_err *err)
{
	struct nx_strbuf sql = NX_STRBUF_INIT;
	char *spill = nx_path_join(staging, "spill");
	int rc = limits_check(err);

	if (rc) {
		free(spill);
		return rc;
	}
	nx_strbuf_addf(&sql, "SET memory_limit = '%s'; SET preserve_insertion_order = true; "
			     "SET enable_external_file_cache = false; SET temp_directory = ",
		       raw_limit());
	nx_sql_quote(&sql, spill);
	rc = nx_duck_exec(d, sql.buf, err);
	nx_strbuf_release(&sql);
	free(spill);
	return rc;
}

/* The derive SQL runs with a smaller buffer pool than the raw stage: its hash tables
 * and sorts spill, while the rest of the process (code, writer buffers) is still
 * resident, so this keeps the peak of the two stages level (see docs/memory.md). */
static int derive_memory(struct nx_duck *d, struct nx_err *err)
{
	char sql[128];

	snprintf(sql, sizeof(sql), "SET memory_limit = '%s'", nx_derive_memory_limit());
	return nx_duck_exec(d, sql, err);
}

/* nx_Profile: one row with the profile's time frame and the interval unions merged
 * while streaming, for the derive SQL. total_ns is the summed length of the executions
 * bounded by start/stop records, or the span of all records when there are none. With
 * them the counts the ingest made as it wrote (Summary's, which read the tables' files
 * for them before): the trace tables' rows, DmaPacketAggregated's rows and the sum of
 * their duration_ns (NULL without rows, as SQL's sum), with the types of count(*) and
 * sum(BIGINT). */
static int create_profile_view(struct nx_ingest_ctx *c, struct nx_duck *d, struct nx_err *err)
{
	int64_t first = c->first_ns <= c->last_ns ? c->first_ns : 0;
	int64_t last = c->first_ns <= c->last_ns ? c->last_ns : 0;
	int64_t total = nx_ctx_total_ns(c);
	const struct nx_active *a = &c->active;
	char sql[1024], dpa_t[48] = "NULL";

	if (c->dpa_rows) { /* decimal digits of an unsigned 128-bit sum */
		char rev[48];
		size_t n = 0;
		unsigned __int128 v = c->dpa_dur_ns;
		do {
			rev[n++] = (char)('0' + (int)(v % 10));
			v /= 10;
		} while (v);
		for (size_t i = 0; i < n; i++)
			dpa_t[i] = rev[n - 1 - i];
		dpa_t[n] = '\0';
	}
	snprintf(sql, sizeof(sql),
		 "CREATE OR REPLACE VIEW nx_Profile AS SELECT %" PRId64 "::BIGINT AS total_ns, "
		 "%" PRId64 "::BIGINT AS first_ns, %" PRId64 "::BIGINT AS last_ns, "
		 "%" PRId64 "::BIGINT AS dma_active_ns, %" PRId64 "::BIGINT AS static_dma_active_ns, "
		 "%" PRId64 "::BIGINT AS dynamic_dma_active_ns, "
		 "%" PRId64 "::BIGINT AS software_dma_active_ns, "
		 "%" PRId64 "::BIGINT AS hardware_dma_active_ns, %" PRId64 "::BIGINT AS all_active_ns, "
		 "%" PRIu64 "::BIGINT AS trace_rows, %" PRIu64 "::BIGINT AS dpa_n, "
		 "%s::HUGEINT AS dpa_t",
		 total, first, last, a->dma[NX_DMA_ALL].total, a->dma[NX_DMA_STATIC].total,
		 a->dma[NX_DMA_DYNAMIC].total, a->dma[NX_DMA_SOFTWARE].total,
		 a->dma[NX_DMA_HARDWARE].total, a->all_ns, c->trace_rows, c->dpa_rows, dpa_t);
	return nx_duck_exec(d, sql, err);
}


/* An input must be a file: says which of missing or a directory it is. */
static int input_file(const char *kind, const char *path, struct nx_err *err)
{
	if (nx_is_file(path))
		return 0;
	if (nx_is_dir(path))
		return nx_errf(err, -EISDIR, "%s file '%s' is a directory, not a file", kind, path);
	return nx_errf(err, -ENOENT, "%s file '%s' does not exist", kind, path);
}

static int open_inputs(struct nx_ingest_ctx *c, const struct nx_ingest_opts *o,
		       struct nx_err *err)
{
	char neff_uuid[33], ntff_uuid[33];
	struct nx_neff_header tmp = { 0 };
	int rc;

	rc = input_file("NEFF", o->neff_path, err);
	if (!rc)
		rc = input_file("NTFF", o->ntff_path, err);
	if (rc)
		return rc;
	rc = nx_neff_read(o->neff_path, &c->neff, err);
	if (rc)
		return rc;
	rc = nx_ntff_reader_open(&c->ntff, o->ntff_path, err);
	if (rc)
		return rc;
	c->info = nx_ntff_reader_info(c->ntff);
	c->tpn = c->info->ticks_per_ns ? c->info->ticks_per_ns : 1;
	c->target_v3 = strcmp(c->info->target, "trn1") != 0;
	memcpy(tmp.uuid, c->info->neff_uuid, 16);
	nx_neff_uuid_hex(&c->neff.hdr, neff_uuid);
	nx_neff_uuid_hex(&tmp, ntff_uuid);
	if (memcmp(c->neff.hdr.uuid, c->info->neff_uuid, 16) != 0)
		return nx_errf(err, NX_EMISMATCH,
			       "'%s' was captured from a NEFF with uuid %s, but '%s' has uuid %s: "
			       "pass the NEFF that produced this trace",
			       o->ntff_path, ntff_uuid, o->neff_path, neff_uuid);
	nx_ctx_prepare_statics(c);
	return 0;
}

/* What the stages of one ingest share. */
struct run {
	const struct nx_ingest_opts *o;
	struct nx_ingest_ctx c;
	struct nx_duck *d;
	struct nx_publish_plan pp;
	struct nx_onchip_job *onchip; /* the occupancy pass, until it is finished */
	char *staging, *spill;
	void *hook_job; /* the caller's hook's first part, while it runs (ingest.h) */
	uint64_t dma_rows;
	double t0, t_raw, t_derived;
};

/* The inputs, the temporary directory the profile is written in (with the kernel source
 * the NEFF carries, for a profile of a data path), its staging folder and the database,
 * with the raw stage's memory bounds; then the occupancy pass starts on its own thread
 * (nx_onchip_start). */
static int stage_open(struct run *r, struct nx_err *err)
{
	const struct nx_ingest_opts *o = r->o;
	int rc;

	if (!o->output_dir && (rc = nx_check_display_name(o->display_name, err)))
		return rc;
	nx_publish_plan(&r->pp, o->data_path, o->display_name, o->output_dir);
	r->pp.nested = o->output_nested;
	if ((rc = open_inputs(&r->c, o, err)) || (rc = nx_publish_prepare(&r->pp, err)))
		return rc;
	if (r->pp.name && (rc = nx_kernel_source_store(&r->c.neff.source, r->pp.tmp,
							r->c.progress, err)))
		return rc;
	r->staging = nx_path_join(r->pp.tmp, ".staging");
	if ((rc = nx_duck_open(&r->d, 2, NULL, err)) || (rc = nx_mkdirs(r->staging, err)) ||
	    (rc = bound_memory(r->d, r->staging, err)))
		return rc;
	return nx_onchip_start(&r->c, r->staging, &r->onchip, err);
}

/* The trace tables, streamed from the NTFF, with the interval unions merged meanwhile. */
static int stage_trace(struct run *r, struct nx_err *err)
{
	int rc;

	nx_trig_init(&r->c.trig, r->staging);
	r->spill = nx_path_join(r->staging, "active.bin");
	if ((rc = nx_active_init(&r->c.active, r->spill, (int)r->c.info->pcore_idx, err)) ||
	    (rc = write_trace_tables(&r->c, r->d, r->pp.tmp, &r->dma_rows, err)) ||
	    (rc = nx_active_finish(&r->c.active, err)))
		return rc;
	return nx_active_finish_all(&r->c.active, err); /* reader errors name the NTFF */
}

/* The NEFF's tables, Metadata, ExecutionInfo and ActiveTime; then the statics and the
 * debug info go, which nothing after reads. */
static int stage_neff(struct run *r, struct nx_err *err)
{
	static const char *const neff_tables[] = { "NeffHeader", "TensorInfo", "DmaQueuesInfo",
						    "KernelInstructions", "KernelStackFrames",
						    "KernelIterationVariables", "StackFrame",
						    "StackFrameFileLocation", "StackFrameFileName",
						    "StackFrameFunctionName" };
	int rc;

	for (size_t i = 0; i < NX_ARRAY_SIZE(neff_tables); i++)
		if ((rc = write_static(&r->c, r->d, neff_tables[i], r->pp.tmp, false, err)))
			return rc;
	collect_warnings(&r->c, r->dma_rows);
	if ((rc = write_static(&r->c, r->d, "Metadata", r->pp.tmp, true, err)) ||
	    (rc = write_static(&r->c, r->d, "ExecutionInfo", r->pp.tmp, false, err)) ||
	    (rc = nx_active_write(&r->c.active, r->d, r->pp.tmp, nx_ctx_total_ns(&r->c),
				  r->c.progress, err)))
		return rc;
	nx_ctx_drop_statics(&r->c);
	return 0;
}

/* The staging tables and the C merges the derive SQL reads; they only serve the derived
 * tables, so the raw stage's time ends here. Then the caller's hook starts its first part
 * (view: the events of the timeline cache), which runs beside the derive stage. */
static int stage_staging(struct run *r, struct nx_err *err)
{
	const struct nx_publish_hook *hook = r->o->before_publish;
	int rc;

	r->t_raw = now_s() - r->t0;
	if ((rc = nx_write_staging(&r->c, r->d, r->staging, err)) ||
	    (rc = nx_write_dma_aggregated(&r->c, r->d, r->pp.tmp, r->staging, err)) ||
	    (rc = create_profile_view(&r->c, r->d, err)) ||
	    (rc = nx_sums_create_views(&r->c.isums, &r->c.dsums, r->d, err)))
		return rc;
	if (hook && hook->start && r->pp.name)
		r->hook_job = hook->start(hook->user, r->pp.tmp, r->pp.name);
	return 0;
}

/* The tables of the occupancy pass (its rest, if any, on this thread), the last that read
 * the NEFF, which then goes: the derive SQL runs without it. */
static int stage_onchip(struct run *r, struct nx_err *err)
{
	int rc = nx_onchip_finish(r->onchip, r->d, r->pp.tmp, err);

	r->onchip = NULL;
	if (!rc)
		nx_ctx_drop_neff(&r->c);
	return rc;
}

/* The derive SQL in its own memory bound, then the raw stage's again (the last tables must
 * not need the spill folder, which goes away with the staging one). */
static int stage_derive(struct run *r, struct nx_err *err)
{
	char limit_sql[96];
	int rc;

	/* the IR hierarchy's tables (ir_rollup.c) where their SQL files were, before the
	 * files that read them (89_framework_node.sql on) */
	size_t ir_at = 0;
	while (ir_at < nx_sql_file_count && strcmp(nx_sql_files[ir_at].name, "89") < 0)
		ir_at++;
	if ((rc = derive_memory(r->d, err)) ||
	    (rc = nx_derive_run_files(r->d, r->pp.tmp, r->staging, nx_sql_files, ir_at,
				      r->c.progress, NULL, NULL, err)) ||
	    (rc = nx_ir_rollup_write(&r->c, r->d, r->pp.tmp, err)) ||
	    (rc = nx_derive_run_files(r->d, r->pp.tmp, r->staging, nx_sql_files + ir_at,
				      nx_sql_file_count - ir_at, r->c.progress, NULL, NULL, err)))
		return rc;
	if (nx_memory_note_on())
		nx_memory_note(r->d, r->c.progress, "the derive SQL");
	snprintf(limit_sql, sizeof(limit_sql), "SET memory_limit = '%s'", raw_limit());
	rc = nx_duck_exec(r->d, limit_sql, err);
	r->t_derived = now_s() - r->t0 - r->t_raw;
	return rc;
}

/* The staging folder goes, or stays (keep_staging) with nx_Profile beside its tables. */
static int stage_unstage(struct run *r, struct nx_err *err)
{
	char *path;
	struct nx_strbuf q = NX_STRBUF_INIT;
	int rc;

	if (!r->o->keep_staging)
		return nx_remove_tree(r->staging, err);
	path = nx_xasprintf("%s/nx_Profile.parquet", r->staging);
	nx_strbuf_addstr(&q, "COPY (SELECT * FROM nx_Profile) TO ");
	nx_sql_quote(&q, path);
	nx_strbuf_addstr(&q, " (FORMAT parquet)");
	rc = nx_duck_exec(r->d, q.buf, err);
	nx_strbuf_release(&q);
	free(path);
	return rc;
}

/* The ingest's database for its last two tables (Warning, SchemaFields: a few rows),
 * opened again after the wait for the hook's first part. The staging folder, its spill
 * folder, is gone by then, and so is any need to spill. */
static int reopen_small(struct run *r, struct nx_err *err)
{
	char sql[160];
	int rc = nx_duck_open(&r->d, 1, NULL, err);

	snprintf(sql, sizeof(sql), "SET memory_limit = '%s'; SET preserve_insertion_order = true; "
		 "SET temp_directory = ''", raw_limit());
	return rc ? rc : nx_duck_exec(r->d, sql, err);
}

/* The trace tables' parts joined, the last tables, and a zero-row file for each stored
 * table that got no rows. Quiet: the library reports through c.progress only. While the
 * hook's first part runs on (view: the timeline cache's events, the whole peak of a
 * large profile, docs/memory.md), the ingest's database is closed: it holds about 10 MB
 * (its catalog, its pool's pages) that the part can use. */
static int stage_finish(struct run *r, struct nx_err *err)
{
	int rc;

	if (r->hook_job) { /* it reads the parts */
		if (nx_memory_note_on())
			nx_memory_note(r->d, r->c.progress, "the ingest's work, before the wait");
		nx_duck_close(r->d);
		r->d = NULL;
		r->o->before_publish->wait(r->hook_job);
		if ((rc = reopen_small(r, err)))
			return rc;
		if (nx_memory_note_on())
			nx_memory_note(r->d, r->c.progress, "the wait for the hook's first part");
	}
	if ((rc = join_parts(&r->c, r->pp.tmp, err)) ||
	    (rc = write_static(&r->c, r->d, "Warning", r->pp.tmp, false, err)) ||
	    (rc = write_static(&r->c, r->d, "SchemaFields", r->pp.tmp, true, err)))
		return rc;
	return nx_write_empty_tables(r->pp.tmp, NULL, err);
}

/* The caller's hook, then the temporary directory published in one rename. */
static int stage_publish(struct run *r, struct nx_err *err)
{
	int rc;

	nx_duck_close(r->d);
	r->d = NULL;
	nx_publish_hook_run(r->o->before_publish, &r->pp, r->hook_job, r->c.progress);
	r->hook_job = NULL;
	rc = nx_publish(&r->pp, err);
	if (rc)
		return rc;
	struct nx_progress_event done = { .kind = NX_PROGRESS_DONE, .table = r->pp.final,
		.rows = r->c.rows_total, .seconds = now_s() - r->t0, .raw_s = r->t_raw,
		.derived_s = r->t_derived };
	nx_progress_emit(r->c.progress, &done);
	return 0;
}

/* The ingest, in order: each stage's name (what it does, logged at debug level), its
 * function and the stage its progress events name (nx_ingest_ctx.stage: "raw", "staging"
 * or "derive"). The first failure stops it; nx_ingest then cleans up after them all. */
static const struct {
	const char *name;
	int (*run)(struct run *r, struct nx_err *err);
	const char *progress;
} stages[] = {
	{ "open the inputs and the output", stage_open, "raw" },
	{ "stream the trace tables", stage_trace, "raw" },
	{ "write the NEFF's tables", stage_neff, "raw" },
	{ "write the staging tables", stage_staging, "staging" },
	{ "write the occupancy pass's tables", stage_onchip, "derive" },
	{ "run the derive SQL", stage_derive, "derive" },
	{ "remove (or keep) the staging tables", stage_unstage, "derive" },
	{ "join the parts, write the last tables", stage_finish, "raw" },
	{ "publish", stage_publish, "raw" },
};

int nx_ingest(const struct nx_ingest_opts *o, char **published, struct nx_err *err)
{
	struct run r = { .o = o, .t0 = now_s() };
	int rc = 0;

	r.c.first_ns = 1;
	r.c.last_ns = 0;
	r.c.neff_path = o->neff_path;
	r.c.ntff_path = o->ntff_path;
	r.c.display_name = o->display_name;
	r.c.skip_buf_usage = o->skip_buf_usage;
	r.c.keep_staging = o->keep_staging;
	r.c.progress = o->progress;
	if (nx_memory_note_on())
		nx_memory_watch_start();
	for (size_t i = 0; !rc && i < NX_ARRAY_SIZE(stages); i++) {
		r.c.stage = stages[i].progress;
		nx_log(NX_LOG_DEBUG, "ingest: %s", stages[i].name);
		rc = stages[i].run(&r, err);
		if (!rc && nx_memory_note_on())
			nx_memory_note(r.d, r.c.progress, stages[i].name);
	}
	if (nx_memory_note_on())
		nx_memory_watch_stop(o->progress);
	if (!rc && published) {
		*published = r.pp.final;
		r.pp.final = NULL;
	}
	if (r.hook_job) /* before the directory it writes into goes */
		o->before_publish->abort(r.hook_job);
	nx_onchip_abort(r.onchip); /* before the staging it writes into goes */
	if (rc && r.pp.tmp) {
		struct nx_err ignored = { 0 };
		nx_remove_tree(r.pp.tmp, &ignored);
	}
	nx_duck_close(r.d);
	nx_ctx_release(&r.c);
	nx_publish_plan_release(&r.pp);
	free(r.staging);
	free(r.spill);
	return rc;
}
