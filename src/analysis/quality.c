/* SPDX-License-Identifier: MIT
 * quality.c: the data-quality step. Builds one normalised view rx_<Table> per table
 * the analysis reads with SQL (only the fields it needs, cast to fixed types, NULL
 * where a profile lacks a field, engine names lower-cased; Instruction is read by the
 * passes of scan.h, which normalise it the same way), then counts what the profile
 * offers and notes what cannot be computed and why. Works on any profile directory,
 * ours or AWS's. */
#include "common/compat.h"
#include "analysis/rec.h"
#include "db/profile_views.h"
#include "common/xalloc.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

struct nx_rec_col {
	const char *name;
	const char *type;
	const char *expr; /* expression over the raw column "$" (NULL: the column itself) */
};

struct nx_rec_view {
	const char *table;
	const struct nx_rec_col *cols;
};

#define LOWER "lower($)"
#define FLOW_TABLE "CASE lower($) WHEN 'instruction' THEN 'Instruction' " \
		   "WHEN 'dmapacketaggregated' THEN 'DmaPacketAggregated' " \
		   "WHEN 'dma_block' THEN 'DmaPacketAggregated' ELSE $ END"

static const struct nx_rec_col active_cols[] = {
	{ "engine", "VARCHAR", LOWER }, { "start_ts", "BIGINT", NULL },
	{ "end_ts", "BIGINT", NULL }, { NULL, NULL, NULL },
};
static const struct nx_rec_col packet_cols[] = {
	{ "start_ts", "BIGINT", NULL }, { "end_ts", "BIGINT", NULL },
	{ "duration_ns", "BIGINT", NULL }, { "queue_type", "VARCHAR", NULL },
	{ "transfer_bytes", "BIGINT", NULL }, { "packet_aggregation_id", "BIGINT", NULL },
	{ NULL, NULL, NULL },
};
static const struct nx_rec_col dpa_cols[] = {
	{ "id", "BIGINT", NULL }, { "start_ts", "BIGINT", NULL }, { "end_ts", "BIGINT", NULL },
	{ "transfer_bytes", "BIGINT", NULL }, { "source", "VARCHAR", NULL },
	{ "dest", "VARCHAR", NULL }, { "variable", "VARCHAR", NULL },
	{ "is_transpose_mode", "BOOLEAN", NULL }, { "write_num_sbuf_partitions", "BIGINT", NULL },
	{ "read_num_sbuf_partitions", "BIGINT", NULL }, { NULL, NULL, NULL },
};
static const struct nx_rec_col tensor_cols[] = {
	{ "variable_name", "VARCHAR", NULL }, { "type", "VARCHAR", "upper($)" },
	{ "size", "BIGINT", NULL }, { NULL, NULL, NULL },
};
static const struct nx_rec_col flow_cols[] = {
	{ "in_table", "VARCHAR", FLOW_TABLE }, { "out_table", "VARCHAR", FLOW_TABLE },
	{ "in_id", "BIGINT", NULL }, { "out_id", "BIGINT", NULL },
	{ "dependency_type", "VARCHAR", "upper($)" }, { NULL, NULL, NULL },
};
static const struct nx_rec_col metadata_cols[] = {
	{ "dma_ddr_bandwidth", "DOUBLE", NULL }, { "tensor_engine_num_rows", "DOUBLE", NULL },
	{ "tensor_engine_num_cols", "DOUBLE", NULL }, { "tensor_engine_clock_freq", "DOUBLE", NULL },
	{ "num_dma_engines_per_neuroncore", "DOUBLE", NULL }, { NULL, NULL, NULL },
};
static const struct nx_rec_col summary_cols[] = {
	{ "total_time", "DOUBLE", NULL }, { "dma_active_time", "DOUBLE", NULL },
	{ "dma_transfer_total_bytes", "DOUBLE", NULL },
	{ "inputs_outputs_weights_size_bytes", "DOUBLE", NULL },
	{ "tensor_engine_active_time", "DOUBLE", NULL },
	{ "vector_engine_active_time", "DOUBLE", NULL },
	{ "scalar_engine_active_time", "DOUBLE", NULL },
	{ "gpsimd_engine_active_time", "DOUBLE", NULL },
	{ "hardware_flops", "DOUBLE", NULL }, { "transpose_flops", "DOUBLE", NULL },
	{ "adjusted_hardware_flops", "DOUBLE", NULL },
	{ "adjusted_transpose_flops", "DOUBLE", NULL }, { NULL, NULL, NULL },
};
static const struct nx_rec_col warning_cols[] = {
	{ "message", "VARCHAR", NULL }, { "category", "VARCHAR", NULL }, { NULL, NULL, NULL },
};

/* Instruction has no view: its passes read it (scan.h); its columns and their types are
 * those of scan_inst.c. */
static const struct nx_rec_view views[] = {
	{ "ActiveTime", active_cols },
	{ "DmaPacket", packet_cols }, { "DmaPacketAggregated", dpa_cols },
	{ "TensorInfo", tensor_cols }, { "Flow", flow_cols }, { "Metadata", metadata_cols },
	{ "Summary", summary_cols }, { "Warning", warning_cols },
};

static bool has(char **names, size_t n, const char *name)
{
	for (size_t i = 0; i < n; i++)
		if (!strcmp(names[i], name))
			return true;
	return false;
}

static void add_expr(struct nx_strbuf *sql, const char *expr, const char *col)
{
	for (const char *p = expr; *p; p++) {
		if (*p == '$')
			nx_strbuf_addf(sql, "\"%s\"", col);
		else
			nx_strbuf_addch(sql, *p);
	}
}

/* The view rx_<T> over dir's files of T (read_parquet over them: DuckDB reads only the
 * footers of the tables the analysis reads with SQL). */
static int create_view(struct nx_duck *d, const char *dir, const struct nx_rec_view *v,
		       struct nx_err *err)
{
	struct nx_strbuf sql = NX_STRBUF_INIT, probe = NX_STRBUF_INIT, scan = NX_STRBUF_INIT;
	char **names = NULL;
	size_t n = 0;
	struct nx_err ignored = { 0 };
	int rc;

	bool present = !nx_db_add_table_scan(&scan, dir, v->table, &ignored);
	if (present) {
		nx_strbuf_addf(&probe, "SELECT * FROM %s", scan.buf);
		present = !nx_duck_columns(d, probe.buf, &names, &n, &ignored);
	}
	nx_strbuf_addf(&sql, "CREATE OR REPLACE VIEW rx_%s AS SELECT ", v->table);
	for (const struct nx_rec_col *c = v->cols; c->name; c++) {
		nx_strbuf_addstr(&sql, c == v->cols ? "" : ", ");
		if (present && has(names, n, c->name)) {
			nx_strbuf_addstr(&sql, "CAST(");
			if (c->expr)
				add_expr(&sql, c->expr, c->name);
			else
				nx_strbuf_addf(&sql, "\"%s\"", c->name);
			nx_strbuf_addf(&sql, " AS %s)", c->type);
		} else {
			nx_strbuf_addf(&sql, "CAST(NULL AS %s)", c->type);
		}
		nx_strbuf_addf(&sql, " AS %s", c->name);
	}
	if (present)
		nx_strbuf_addf(&sql, " FROM %s", scan.buf);
	else
		nx_strbuf_addstr(&sql, " WHERE false");
	rc = nx_duck_exec(d, sql.buf, err);
	for (size_t i = 0; i < n; i++)
		free(names[i]);
	free(names);
	nx_strbuf_release(&sql);
	nx_strbuf_release(&probe);
	nx_strbuf_release(&scan);
	return rc;
}

int nx__rec_views(struct nx_duck *d, const char *dir, struct nx_err *err)
{
	int rc = 0;

	for (size_t i = 0; !rc && i < sizeof(views) / sizeof(views[0]); i++) {
		/* DmaPacket is read by the passes alone; its view serves DuckDB's joins of
		 * NX_REC_XFER=sql only, and binding it parses the file's whole footer */
		if (!strcmp(views[i].table, "DmaPacket") && !nx__rec_xfers_by_sql())
			continue;
		rc = create_view(d, dir, &views[i], err);
	}
	return rc ? nx_err_wrap(err, "reading the profile tables of '%s'", dir) : 0;
}

static const char QUALITY_SQL[] =
	"SELECT\n"
	"  (SELECT count(*) FROM rx_DmaPacketAggregated) AS dpa_rows,\n"
	"  (SELECT count(*) FROM rx_Flow) AS flow_rows,\n"
	"  (SELECT count(*) FROM rx_Flow WHERE dependency_type = 'DGE_TRIGGER') AS flow_dge,\n"
	"  (SELECT count(*) FROM rx_Flow WHERE dependency_type = 'SEMAPHORE') AS flow_sem,\n"
	"  (SELECT count(*) FROM rx_TensorInfo WHERE type IN ('IN', 'OUT')) AS tensors,\n"
	"  (SELECT count(*) FROM rx_Warning\n"
	"      WHERE category IS DISTINCT FROM 'Compiler Decision') AS warnings,\n"
	"  (SELECT count(*) FROM rx_Summary) AS summary,\n"
	"  (SELECT count(*) FROM rx_Metadata WHERE dma_ddr_bandwidth > 0\n"
	"      AND tensor_engine_clock_freq > 0) AS metadata";

int nx__rec_quality(struct nx_duck *d, struct nx_rec_result *r, struct nx_err *err)
{
	static const char *const names[] = {
		"dpa_rows", "flow_rows", "flow_dge", "flow_sem", "tensors", "warnings", "summary",
		"metadata",
	};
	double v[8];
	struct nx_rec_quality *q = &r->q;
	int rc = nx__rec_query_row(d, QUALITY_SQL, names, v, 8, err);

	if (rc)
		return nx_err_wrap(err, "data-quality step");
	q->instructions = r->scan->insts;
	q->with_source = r->scan->with_source;
	q->with_wait = r->scan->with_wait;
	q->dma_packets = r->scan->packets;
	q->dpa_rows = (int64_t)v[0];
	q->flow_rows = (int64_t)v[1];
	q->flow_dge = (int64_t)v[2];
	q->flow_sem = (int64_t)v[3];
	q->tensors = (int64_t)v[4];
	q->warnings = (int64_t)v[5];
	q->summary = v[6] > 0;
	q->metadata = v[7] > 0;

	if (!q->instructions)
		nx__rec_note(q, "compute bounds, Tensor investigations, serialisation",
			     "Instruction has no rows");
	if (!q->dma_packets)
		nx__rec_note(q, "memory_bound, memory_bound_ideal, DMA engine time, DMA investigations",
			     "DmaPacket has no rows: the profile was captured without "
			     "NEURON_RT_ENABLE_DGE_NOTIFICATIONS=1");
	else if (!q->dpa_rows)
		nx__rec_note(q, "Step 2 of the DMA investigations",
			     "DmaPacketAggregated has no rows: transfers cannot be attributed to "
			     "variables or source lines (re-profile before interpreting)");
	if (q->dpa_rows && !q->flow_dge)
		nx__rec_note(q, "source lines of DMA transfers",
			     "Flow has no Instruction -> DmaPacketAggregated (DGE_TRIGGER) edges "
			     "(possible with dge_mode=swdge)");
	if (q->instructions && !q->with_source)
		nx__rec_note(q, "localisation to source lines",
			     "bir_debug_info_source_location is NULL on every instruction: the NEFF "
			     "was compiled without debug info (NEURON_FRAMEWORK_DEBUG=1)");
	else if (q->instructions && q->with_source * 2 < q->instructions)
		nx__rec_note(q, "part of the localisation",
			     "only %" PRId64 " of %" PRId64 " instructions carry a source location",
			     q->with_source, q->instructions);
	if (q->instructions && !q->with_wait)
		nx__rec_note(q, "serialisation investigation",
			     "Instruction.evt_wait_time_ns is not populated");
	if (!q->tensors)
		nx__rec_note(q, "memory_bound_no_reloads, redundant DMA transfers",
			     "TensorInfo lists no IN/OUT tensors");
	if (!q->metadata)
		nx__rec_note(q, "ideal bounds (memory_bound_ideal*, compute_bound_ideal*)",
			     "Metadata lacks dma_ddr_bandwidth or the Tensor engine geometry");
	if (!q->summary)
		nx__rec_note(q, "whole-kernel inputs from Summary",
			     "Summary has no rows: inputs are recomputed from the raw tables");
	if (q->warnings) {
		struct nx_rec_table t = { 0 };
		rc = nx__rec_query_table(d, "SELECT string_agg(coalesce(category, '') || ': ' || "
					 "coalesce(message, ''), '; ') AS m FROM "
					 "(SELECT * FROM rx_Warning WHERE category IS "
					 "DISTINCT FROM 'Compiler Decision' LIMIT 3)", &t, err);
		if (rc)
			return nx_err_wrap(err, "reading Warning");
		nx__rec_note(q, "ingestion warnings",
			     "the Warning table has %" PRId64 " rows (first: %s); check them before "
			     "trusting the results", q->warnings, nx__rec_cellq(&t, 0, "m"));
		nx__rec_table_release(&t);
	}
	return 0;
}
