/* SPDX-License-Identifier: MIT
 * src_static.c: tables whose rows come from memory rather than the trace stream:
 * NEFF facts (NeffHeader, TensorInfo, DmaQueuesInfo, KernelInstructions,
 * KernelStackFrames, KernelIterationVariables, and the kernel's call stack as StackFrame,
 * StackFrameFileLocation, StackFrameFileName, StackFrameFunctionName) and profile facts (Metadata, Warning,
 * SchemaFields, ExecutionInfo). Cells are addressed by field name: these tables are
 * small, so readability wins over a precomputed column map. */
#include "common/compat.h"
#include "ingest/context.h"
#include "common/strbuf.h"
#include "common/xalloc.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static size_t col(struct nx_src_static *s, const char *name)
{
	int i = nx_schema_field_index(s->map.table, name);
	return i < 0 ? 0 : (size_t)i; /* names are checked by test_ingest against the schema */
}
#define STR(name, v) nx_rowbuf_str(b, col(s, name), row, (v))
#define I64(name, v) nx_rowbuf_i64(b, col(s, name), row, (int64_t)(v))
#define F64(name, v) nx_rowbuf_f64(b, col(s, name), row, (double)(v))
#define BOOL(name, v) nx_rowbuf_bool(b, col(s, name), row, (v))

static void neff_header_row(struct nx_src_static *s, struct nx_rowbuf *b, size_t row, size_t i)
{
	const struct nx_neff_header *h = &nx_ctx_neff(s->ctx)->hdr;
	char uuid[33], hash[65], ver[32];
	struct nx_strbuf feat = NX_STRBUF_INIT;

	(void)i;
	nx_neff_uuid_hex(h, uuid);
	nx_neff_hash_hex(h, hash);
	nx_neff_features(h->feature_bits, &feat);
	snprintf(ver, sizeof(ver), "%" PRIu64, h->pkg_version);
	STR("network_name", h->name);
	STR("uuid", uuid);
	STR("hash", hash);
	STR("enabled_features", nx_strbuf_str(&feat));
	I64("header_size", h->header_size);
	I64("data_size", h->data_size);
	I64("major_version", h->major_version);
	I64("minor_version", h->minor_version);
	STR("package_version", ver);
	STR("build_version", h->build_version);
	I64("cc_participant_count", 0);
	I64("neuroncore_count", h->num_tpb);
	I64("logical_neuroncore_count", h->requested_tpb_count ? h->requested_tpb_count : h->num_tpb);
	I64("pcore_count_per_lnc", h->lnc_size ? h->lnc_size : 1);
	nx_strbuf_release(&feat);
}

static void tensor_row(struct nx_src_static *s, struct nx_rowbuf *b, size_t row, size_t i)
{
	const struct nx_tensor *t = &nx_ctx_neff(s->ctx)->tensors[i];
	struct nx_strbuf shape = NX_STRBUF_INIT;

	nx_strbuf_addch(&shape, '[');
	for (unsigned d = 0; d < t->rank; d++)
		nx_strbuf_addf(&shape, "%s%" PRIu64, d ? " " : "", t->shape[d]);
	nx_strbuf_addch(&shape, ']');
	STR("variable_name", t->name);
	STR("type", nx_tensor_kind_name(t->kind));
	STR("format", t->format);
	STR("shape", nx_strbuf_str(&shape));
	I64("size", t->size);
	if (t->node >= 0)
		I64("node", t->node);
	I64("pcore_idx", s->ctx->info->pcore_idx);
	nx_strbuf_release(&shape);
}

static void queue_row(struct nx_src_static *s, struct nx_rowbuf *b, size_t row, size_t i)
{
	const struct nx_dma_queue *q = &nx_ctx_neff(s->ctx)->queues[i];

	STR("name", q->name);
	STR("type", nx_queue_type_name(q->queue_type));
	I64("pcore_idx", s->ctx->info->pcore_idx);
	I64("idx", q->queue_idx);
	I64("engine_idx", q->engine_idx);
	I64("axi_port", q->axi_port);
	I64("dram_channel", q->dram_channel);
}

/* A frame's or iteration variable's id and its position in the debug info's list. */
struct nx_dbg_by_id {
	int64_t id;
	size_t pos;
};

static int by_id_cmp(const void *a, const void *b)
{
	const struct nx_dbg_by_id *x = a, *y = b;

	if (x->id != y->id)
		return x->id < y->id ? -1 : 1;
	return (x->pos > y->pos) - (x->pos < y->pos);
}

/* The list's (id, position) pairs sorted by id, then position (NULL when n is 0). */
static struct nx_dbg_by_id *sort_ids(size_t n, const int64_t *first_id, size_t stride)
{
	struct nx_dbg_by_id *v = n ? nx_xmalloc(n * sizeof(*v)) : NULL;

	for (size_t k = 0; k < n; k++) {
		v[k].id = *(const int64_t *)((const char *)first_id + k * stride);
		v[k].pos = k;
	}
	if (n)
		qsort(v, n, sizeof(*v), by_id_cmp);
	return v;
}

/* The first position of id in the list, as a scan from the start would find it;
 * SIZE_MAX when no entry has it. */
static size_t pos_of(const struct nx_dbg_by_id *v, size_t n, int64_t id)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (v[mid].id < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < n && v[lo].id == id ? v[lo].pos : SIZE_MAX;
}

/* Depth of a linked list walked through parent ids, bounded against cycles. */
static int64_t frame_depth(const struct nx_src_static *s, int64_t id)
{
	const struct nx_debug_info *d = nx_ctx_dbg(s->ctx);
	int64_t depth = 0;

	for (int guard = 0; id >= 0 && guard < 1024; guard++) {
		size_t k = pos_of(s->frames_by_id, d->nframes, id);
		if (k == SIZE_MAX)
			break;
		depth++;
		id = d->frames[k].parent;
	}
	return depth;
}

static int64_t itervar_depth(const struct nx_src_static *s, int64_t id)
{
	const struct nx_debug_info *d = nx_ctx_dbg(s->ctx);
	int64_t depth = 0;

	for (int guard = 0; id >= 0 && guard < 1024; guard++) {
		size_t k = pos_of(s->itervars_by_id, d->nitervars, id);
		if (k == SIZE_MAX)
			break;
		depth++;
		id = d->itervars[k].parent;
	}
	return depth;
}

static void kinst_row(struct nx_src_static *s, struct nx_rowbuf *b, size_t row, size_t i)
{
	const struct nx_debug_info *d = nx_ctx_dbg(s->ctx);
	const struct nx_dbg_inst *k = &d->insts[i];

	STR("kernel_instruction_name", k->name ? k->name : "");
	if (k->stack_frame_id >= 0) {
		I64("stack_frame_id", k->stack_frame_id);
		I64("stack_frame_depth", frame_depth(s, k->stack_frame_id));
	}
	if (k->iteration_vars_id >= 0) {
		I64("iteration_variables_id", k->iteration_vars_id);
		I64("iteration_variable_depth", itervar_depth(s, k->iteration_vars_id));
	}
	I64("pcore_idx", s->ctx->info->pcore_idx);
	STR("file_path", k->file);
	if (k->file)
		I64("line_number", k->line);
}

static void kframe_row(struct nx_src_static *s, struct nx_rowbuf *b, size_t row, size_t i)
{
	const struct nx_dbg_frame *f = &nx_ctx_dbg(s->ctx)->frames[i];

	I64("stack_frame_id", f->id);
	STR("fully_qualified_function_name", f->function);
	if (f->parent >= 0)
		I64("parent_stack_frame_id", f->parent);
	I64("pcore_idx", s->ctx->info->pcore_idx);
	STR("file_path", f->file);
	I64("line_number", f->line);
}

static void kitervar_row(struct nx_src_static *s, struct nx_rowbuf *b, size_t row, size_t i)
{
	const struct nx_dbg_itervar *v = &nx_ctx_dbg(s->ctx)->itervars[i];

	I64("iteration_variable_id", v->id);
	STR("variable_name", v->name);
	I64("variable_value", v->value);
	if (v->parent >= 0)
		I64("parent_iteration_variable_id", v->parent);
	I64("pcore_idx", s->ctx->info->pcore_idx);
	STR("file_path", v->file);
	I64("line_number", v->line);
}

/* ---- StackFrame*: the kernel's call stack as the framework stack tables. Frame i of
 * the debug info is StackFrame and StackFrameFileLocation id i+1; file and function
 * names are interned in order of first use (ids 1, 2, ...). */

static const char *frame_file(const struct nx_dbg_frame *f)
{
	return f->file ? f->file : "";
}

static const char *frame_func(const struct nx_dbg_frame *f)
{
	return f->function ? f->function : "";
}

/* 1-based rank of the distinct value of frame i among the first occurrences. */
static size_t intern_id(const struct nx_debug_info *d, size_t i,
			const char *(*get)(const struct nx_dbg_frame *))
{
	size_t id = 0;
	for (size_t k = 0; k <= i; k++) {
		bool first = true;
		for (size_t j = 0; j < k && first; j++)
			first = strcmp(get(&d->frames[j]), get(&d->frames[k])) != 0;
		if (first)
			id++;
		if (first && !strcmp(get(&d->frames[k]), get(&d->frames[i])))
			return id;
	}
	return id;
}

/* The i-th distinct value, as its frame index. */
static size_t intern_frame(const struct nx_debug_info *d, size_t nth,
			   const char *(*get)(const struct nx_dbg_frame *))
{
	for (size_t k = 0, seen = 0; k < d->nframes; k++) {
		bool first = true;
		for (size_t j = 0; j < k && first; j++)
			first = strcmp(get(&d->frames[j]), get(&d->frames[k])) != 0;
		if (first && seen++ == nth)
			return k;
	}
	return 0;
}

static size_t intern_count(const struct nx_debug_info *d,
			   const char *(*get)(const struct nx_dbg_frame *))
{
	size_t n = 0;
	for (size_t k = 0; k < d->nframes; k++) {
		bool first = true;
		for (size_t j = 0; j < k && first; j++)
			first = strcmp(get(&d->frames[j]), get(&d->frames[k])) != 0;
		n += first;
	}
	return n;
}

static void id_text(struct nx_src_static *s, struct nx_rowbuf *b, size_t row, const char *name,
		    size_t v)
{
	char t[24];
	snprintf(t, sizeof(t), "%zu", v);
	STR(name, t);
}

static void sframe_row(struct nx_src_static *s, struct nx_rowbuf *b, size_t row, size_t i)
{
	const struct nx_debug_info *d = nx_ctx_dbg(s->ctx);
	size_t parent = 0;

	for (size_t k = 0; k < d->nframes && d->frames[i].parent >= 0; k++)
		if (d->frames[k].id == d->frames[i].parent)
			parent = k + 1;
	id_text(s, b, row, "id", i + 1);
	nx_rowbuf_i32(b, col(s, "file_location_id"), row, (int32_t)(i + 1));
	id_text(s, b, row, "parent_frame_id", parent);
}

static void sloc_row(struct nx_src_static *s, struct nx_rowbuf *b, size_t row, size_t i)
{
	const struct nx_debug_info *d = nx_ctx_dbg(s->ctx);

	id_text(s, b, row, "id", i + 1);
	nx_rowbuf_i32(b, col(s, "file_name_id"), row, (int32_t)intern_id(d, i, frame_file));
	nx_rowbuf_i32(b, col(s, "function_name_id"), row, (int32_t)intern_id(d, i, frame_func));
	nx_rowbuf_i32(b, col(s, "line_number"), row,
		      (int32_t)(d->frames[i].line > 0 ? d->frames[i].line : 0));
}

static void sfile_row(struct nx_src_static *s, struct nx_rowbuf *b, size_t row, size_t i)
{
	const struct nx_debug_info *d = nx_ctx_dbg(s->ctx);

	id_text(s, b, row, "id", i + 1);
	STR("name", frame_file(&d->frames[intern_frame(d, i, frame_file)]));
}

static void sfunc_row(struct nx_src_static *s, struct nx_rowbuf *b, size_t row, size_t i)
{
	const struct nx_debug_info *d = nx_ctx_dbg(s->ctx);

	id_text(s, b, row, "id", i + 1);
	STR("name", frame_func(&d->frames[intern_frame(d, i, frame_func)]));
}

/* Device time rendered as UTC text: the capture's wall-clock origin plus ns. */
static void unix_text(uint64_t origin_ns, int64_t ns, char *out, size_t size)
{
	int64_t t = (int64_t)origin_ns + ns;
	time_t sec = (time_t)(t / 1000000000);
	struct tm tm;
	char base[40];

	gmtime_r(&sec, &tm);
	strftime(base, sizeof(base), "%Y-%m-%d %H:%M:%S", &tm);
	snprintf(out, size, "%s.%09" PRId64 "+00:00", base, t % 1000000000);
}

static void metadata_row(struct nx_src_static *s, struct nx_rowbuf *b, size_t row, size_t i)
{
	struct nx_ingest_ctx *c = s->ctx;
	const struct nx_ntff_info *in = c->info;
	int64_t first = c->first_ns <= c->last_ns ? c->first_ns : 0;
	int64_t last = c->first_ns <= c->last_ns ? c->last_ns : 0;
	char t0[64], t1[64];

	(void)i;
	unix_text(in->capture_unix_ns, first, t0, sizeof(t0));
	unix_text(in->capture_unix_ns, last, t1, sizeof(t1));
	STR("profile_schema_version", NX_SCHEMA_VERSION);
	I64("ntff_version", in->version);
	I64("num_physical_cores", in->num_physical_cores);
	BOOL("vnc_enabled", in->num_physical_cores > 1);
	I64("first_hw_timestamp", first);
	I64("last_hw_timestamp", last);
	STR("first_ts", t0);
	STR("last_ts", t1);
	F64("dma_ddr_bandwidth", in->dma_ddr_bandwidth);
	I64("num_dma_engines_per_neuroncore", in->num_dma_engines);
	F64("hbm_ddr_bandwidth", in->hbm_ddr_bandwidth);
	I64("tensor_engine_num_rows", in->te_rows);
	I64("tensor_engine_num_cols", in->te_cols);
	F64("tensor_engine_clock_freq", in->te_clock_ghz);
	F64("vector_engine_clock_freq", in->ve_clock_ghz);
	I64("vector_engine_num_channels", in->ve_channels);
	F64("scalar_engine_clock_freq", in->se_clock_ghz);
	I64("scalar_engine_num_channels", in->se_channels);
	F64("gpsimd_engine_clock_freq", in->gp_clock_ghz);
	I64("gpsimd_engine_num_channels", in->gp_channels);
	F64("neuroncore_clock_freq", in->nc_clock_ghz);
	I64("ticks_per_nanosec", in->ticks_per_ns);
	if (in->instance_type[0])
		STR("instance_type", in->instance_type);
	if (in->runtime_version[0])
		STR("runtime_version", in->runtime_version);
	if (in->driver_version[0])
		STR("driver_version", in->driver_version);
	STR("explorer_version", "neuron-explorer (open C implementation) " NX_VERSION);
	STR("compiler_version", nx_ctx_neff(c)->tool_version);
	I64("neuroncore_idx", in->neuroncore_idx);
	I64("neuron_device_idx", in->neuron_device_idx);
	STR("profile_name", c->display_name);
	STR("explorer_build_time", __DATE__ " " __TIME__);
	BOOL("is_simulation", (in->flags & NX_NTFF_SIMULATED) != 0);
}

static void warning_row(struct nx_src_static *s, struct nx_rowbuf *b, size_t row, size_t i)
{
	STR("message", s->ctx->warn[i].message);
	STR("category", s->ctx->warn[i].category);
}

/* SchemaFields rows enumerate (table, field) over the schema in order. */
static void schema_field_row(struct nx_src_static *s, struct nx_rowbuf *b, size_t row, size_t i)
{
	size_t t = 0;
	char enums[512];

	while (i >= nx_schema_tables[t].nfields) {
		i -= nx_schema_tables[t].nfields;
		t++;
	}
	const struct nx_table *tab = &nx_schema_tables[t];
	const struct nx_field *f = &tab->fields[i];
	STR("table_name", tab->name);
	STR("table_description", tab->description);
	STR("field_name", f->name);
	STR("field_description", f->description);
	if (f->example[0])
		STR("field_example", f->example);
	STR("field_type", f->type);
	BOOL("field_required", f->required);
	if (f->format[0])
		STR("field_format", f->format);
	if (f->unit[0])
		STR("field_unit", f->unit);
	if (f->has_min)
		F64("field_minimum", f->min);
	if (f->has_max)
		F64("field_maximum", f->max);
	nx_schema_enum_list(f->enum_name, enums, sizeof(enums));
	if (enums[0])
		STR("field_enum_values", enums);
}

/* Executions that left a trace: a start or stop record, or instructions. */
static bool exec_seen(const struct nx_exec_window *x)
{
	return x->has_start || x->has_stop || x->rows;
}

static void exec_row(struct nx_src_static *s, struct nx_rowbuf *b, size_t row, size_t k)
{
	struct nx_ingest_ctx *c = s->ctx;
	size_t i = 0;

	/* k-th execution that was seen; execution indices need not start at 0. */
	for (;; i++)
		if (exec_seen(&c->exec[i]) && k-- == 0)
			break;
	const struct nx_exec_window *x = &c->exec[i];
	int64_t origin = c->first_ns <= c->last_ns ? c->first_ns : 0;

	I64("execution_index", i);
	STR("neff_name", c->info->neff_name[0] ? c->info->neff_name : nx_ctx_neff(c)->hdr.name);
	if (x->has_start)
		I64("execution_start_ts", x->start - origin);
	if (x->has_stop)
		I64("execution_end_ts", x->stop - origin);
	I64("num_subgraphs", 1);
	I64("row_count", x->rows);
}

struct static_table {
	const char *name;
	void (*row)(struct nx_src_static *, struct nx_rowbuf *, size_t, size_t);
};
static const struct static_table statics[] = {
	{ "NeffHeader", neff_header_row }, { "TensorInfo", tensor_row },
	{ "DmaQueuesInfo", queue_row }, { "KernelInstructions", kinst_row },
	{ "KernelStackFrames", kframe_row }, { "KernelIterationVariables", kitervar_row },
	{ "Metadata", metadata_row }, { "Warning", warning_row },
	{ "SchemaFields", schema_field_row }, { "ExecutionInfo", exec_row },
	{ "StackFrame", sframe_row }, { "StackFrameFileLocation", sloc_row },
	{ "StackFrameFileName", sfile_row }, { "StackFrameFunctionName", sfunc_row },
};

static size_t count_of(struct nx_ingest_ctx *c, const char *name)
{
	if (!strcmp(name, "NeffHeader") || !strcmp(name, "Metadata"))
		return 1;
	if (!strcmp(name, "TensorInfo"))
		return nx_ctx_neff(c)->ntensors;
	if (!strcmp(name, "DmaQueuesInfo"))
		return nx_ctx_neff(c)->nqueues;
	if (!strcmp(name, "KernelInstructions"))
		return nx_ctx_dbg(c)->ninsts;
	if (!strcmp(name, "KernelStackFrames"))
		return nx_ctx_dbg(c)->nframes;
	if (!strcmp(name, "StackFrame") || !strcmp(name, "StackFrameFileLocation"))
		return nx_ctx_dbg(c)->nframes;
	if (!strcmp(name, "StackFrameFileName"))
		return intern_count(nx_ctx_dbg(c), frame_file);
	if (!strcmp(name, "StackFrameFunctionName"))
		return intern_count(nx_ctx_dbg(c), frame_func);
	if (!strcmp(name, "KernelIterationVariables"))
		return nx_ctx_dbg(c)->nitervars;
	if (!strcmp(name, "Warning"))
		return c->nwarn;
	if (!strcmp(name, "ExecutionInfo")) {
		size_t n = 0;
		for (size_t i = 0; i < c->nexec; i++)
			n += exec_seen(&c->exec[i]);
		return n;
	}
	if (!strcmp(name, "SchemaFields")) {
		size_t n = 0;
		for (size_t t = 0; t < nx_schema_table_count; t++)
			n += nx_schema_tables[t].nfields;
		return n;
	}
	return 0;
}

static int next(void *self, struct nx_rowbuf *b, struct nx_err *err)
{
	struct nx_src_static *s = self;
	size_t cap = nx_rowbuf_capacity(b), n = 0;

	(void)err;
	while (s->pos < s->count && n < cap)
		s->row(s, b, n++, s->pos++);
	return (int)n;
}

int nx_src_static_init(struct nx_src_static *s, struct nx_ingest_ctx *c, const char *table,
		       struct nx_row_source *src, struct nx_err *err)
{
	static const char *const none[] = { NULL };

	memset(s, 0, sizeof(*s));
	s->ctx = c;
	for (size_t i = 0; i < NX_ARRAY_SIZE(statics); i++)
		if (!strcmp(statics[i].name, table))
			s->row = statics[i].row;
	if (!s->row)
		return nx_errf(err, NX_EUSAGE, "no static source for table %s", table);
	int rc = nx_colmap_init(&s->map, table, none, err);
	if (rc)
		return rc;
	s->count = count_of(c, table);
	if (!strcmp(table, "KernelInstructions")) {
		const struct nx_debug_info *d = nx_ctx_dbg(c);
		s->frames_by_id = sort_ids(d->nframes, d->nframes ? &d->frames[0].id : NULL,
					   sizeof(d->frames[0]));
		s->itervars_by_id = sort_ids(d->nitervars,
					     d->nitervars ? &d->itervars[0].id : NULL,
					     sizeof(d->itervars[0]));
	}
	src->table = s->map.table;
	src->self = s;
	src->next = next;
	src->keys = NULL;
	return 0;
}

void nx_src_static_release(struct nx_src_static *s)
{
	free(s->frames_by_id);
	free(s->itervars_by_id);
	s->frames_by_id = s->itervars_by_id = NULL;
}
