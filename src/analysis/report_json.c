/* SPDX-License-Identifier: MIT
 * report_json.c: the same content as the Markdown report, machine-readable. Times
 * are nanoseconds, fractions are 0..1, NaN ("not computable") is null. The shape is
 * documented in docs/recommend.md. */
#include "common/compat.h"
#include "analysis/rec.h"
#include "common/xalloc.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static const char *const window_name[] = { "whole", "range", "kernel", "dpa" };
static const char *const status_key[] = { "found", "nothing", "not_computable" };

static void num(struct nx_jw *jw, const char *key, double v)
{
	nx_jw_key(jw, key);
	nx_jw_double(jw, v);
}

static bool is_share(const char *col)
{
	size_t n = strlen(col);
	return (n >= 4 && !strcmp(col + n - 4, "_pct")) || !strncmp(col, "pct_", 4);
}

static void table(struct nx_jw *jw, const struct nx_rec_table *t)
{
	nx_jw_object_begin(jw);
	nx_jw_key(jw, "columns");
	nx_jw_array_begin(jw);
	for (size_t c = 0; c < t->ncols; c++)
		nx_jw_string(jw, t->cols[c]);
	nx_jw_array_end(jw);
	nx_jw_key(jw, "rows");
	nx_jw_array_begin(jw);
	for (size_t r = 0; r < t->nrows; r++) {
		nx_jw_array_begin(jw);
		for (size_t c = 0; c < t->ncols; c++) {
			const struct nx_rec_cell *cell = &t->cells[r * t->ncols + c];
			if (cell->kind == NX_CELL_NULL || !cell->text)
				nx_jw_null(jw);
			else if ((cell->kind == NX_CELL_INT || cell->kind == NX_CELL_FLOAT) &&
				 is_share(t->cols[c]))
				nx_jw_double(jw, fmin(strtod(cell->text, NULL), 100)); /* shares <= 100 */
			else if (cell->kind == NX_CELL_INT || cell->kind == NX_CELL_FLOAT)
				nx_jw_double(jw, strtod(cell->text, NULL));
			else if (cell->kind == NX_CELL_BOOL)
				nx_jw_bool(jw, !strcmp(cell->text, "true"));
			else
				nx_jw_string(jw, cell->text);
		}
		nx_jw_array_end(jw);
	}
	nx_jw_array_end(jw);
	nx_jw_object_end(jw);
}

static void quality(struct nx_jw *jw, const struct nx_rec_result *r)
{
	const struct nx_rec_quality *q = &r->q;

	nx_jw_key(jw, "data_quality");
	nx_jw_object_begin(jw);
	nx_jw_key(jw, "counts");
	nx_jw_object_begin(jw);
	num(jw, "instructions", (double)q->instructions);
	num(jw, "instructions_with_source", (double)q->with_source);
	num(jw, "instructions_with_wait", (double)q->with_wait);
	num(jw, "dma_packets", (double)q->dma_packets);
	num(jw, "dma_packet_aggregated", (double)q->dpa_rows);
	num(jw, "flow_edges", (double)q->flow_rows);
	num(jw, "flow_dge_trigger", (double)q->flow_dge);
	num(jw, "flow_semaphore", (double)q->flow_sem);
	num(jw, "in_out_tensors", (double)q->tensors);
	num(jw, "warnings", (double)q->warnings);
	nx_jw_key(jw, "summary");
	nx_jw_bool(jw, q->summary);
	nx_jw_object_end(jw);
	nx_jw_key(jw, "not_computable");
	nx_jw_array_begin(jw);
	for (size_t i = 0; i < q->nnotes; i++) {
		nx_jw_object_begin(jw);
		nx_jw_key(jw, "part");
		nx_jw_string(jw, q->notes[i].part);
		nx_jw_key(jw, "reason");
		nx_jw_string(jw, q->notes[i].why);
		nx_jw_object_end(jw);
	}
	nx_jw_array_end(jw);
	nx_jw_object_end(jw);
}

/* One string per remedy; only findings have remedies. */
static void remedies(struct nx_jw *jw, const struct nx_rec_result *r, const struct nx_rec_inv *inv)
{
	struct nx_strbuf sb = NX_STRBUF_INIT;

	nx_jw_key(jw, "remedies");
	nx_jw_array_begin(jw);
	if (inv->status == NX_REC_FOUND)
		nx__rec_remedies(r, inv, &sb);
	for (const char *p = nx_strbuf_str(&sb); *p;) {
		const char *nl = strchr(p, '\n');
		size_t n = nl ? (size_t)(nl - p) : strlen(p);
		char *one = nx_xstrndup(p, n);
		nx_jw_string(jw, one);
		free(one);
		p += n + (nl != NULL);
	}
	nx_jw_array_end(jw);
	nx_strbuf_release(&sb);
}

/* The thresholds the analysis applies (docs/recommend.md), as numbers. */
static void thresholds(struct nx_jw *jw)
{
	nx_jw_key(jw, "thresholds");
	nx_jw_object_begin(jw);
	num(jw, "small_descriptor_bytes_per_partition", NX_REC_SMALL_DESC_BYTES);
	num(jw, "dma_efficiency_gap_fraction_of_memory_bound", 0.05);
	num(jw, "excess_traffic_fraction_of_moved_bytes", 0.01);
	num(jw, "serialisation_fraction_of_total", 0.01);
	num(jw, "bottleneck_margin_fraction", 0.10);
	num(jw, "te_tile_k_max", 128);
	num(jw, "te_tile_m_max", 128);
	num(jw, "te_tile_n_max", 512);
	nx_jw_object_end(jw);
	nx_jw_key(jw, "findings_overlap");
	nx_jw_string(jw, "findings can share the same time: their relevance_ns values do not add");
}

static void finding(struct nx_jw *jw, const struct nx_rec_result *r, const struct nx_rec_inv *inv,
		    int rank)
{
	nx_jw_object_begin(jw);
	nx_jw_key(jw, "rank");
	nx_jw_int(jw, rank);
	nx_jw_key(jw, "id");
	nx_jw_string(jw, inv->id);
	nx_jw_key(jw, "title");
	nx_jw_string(jw, inv->title);
	nx_jw_key(jw, "group");
	nx_jw_string(jw, inv->group);
	nx_jw_key(jw, "group_label");
	nx_jw_string(jw, nx__rec_group_label(inv->group));
	nx_jw_key(jw, "method");
	nx_jw_string(jw, inv->method);
	nx_jw_key(jw, "status");
	nx_jw_string(jw, status_key[inv->status]);
	nx_jw_key(jw, "summary");
	nx_jw_string(jw, inv->summary ? inv->summary : "");
	nx_jw_key(jw, "gap");
	if (inv->gap)
		nx_jw_string(jw, inv->gap);
	else
		nx_jw_null(jw);
	num(jw, "gap_ns", inv->gap_ns);
	num(jw, "relevance_ns", inv->relevance_ns);
	nx_jw_key(jw, "note");
	if (inv->note)
		nx_jw_string(jw, inv->note);
	else
		nx_jw_null(jw);
	nx_jw_key(jw, "metrics");
	nx_jw_object_begin(jw);
	for (size_t k = 0; k < inv->nm; k++)
		num(jw, inv->m[k].key, !strcmp(inv->m[k].unit, "%") ? fmin(inv->m[k].v, 100)
								      : inv->m[k].v);
	nx_jw_object_end(jw);
	nx_jw_key(jw, "lines");
	table(jw, &inv->lines);
	if (inv->extra.ncols) {
		nx_jw_key(jw, "tensors");
		table(jw, &inv->extra);
	}
	remedies(jw, r, inv);
	nx_jw_object_end(jw);
}

void nx__rec_result_json(const struct nx_rec_result *r, struct nx_jw *jw)
{
	static const int eng_rows[] = { NX_REC_ENG_DMA, NX_REC_ENG_TENSOR, NX_REC_ENG_VECTOR,
					NX_REC_ENG_SCALAR, NX_REC_ENG_GPSIMD };
	static const int gap_family[NX_REC_NGAPS] = { 0, 0, 0, 1, 1, 1, 2 };
	static const char *const family[] = { "memory", "compute", "pipeline" };
	double total = r->bound[NX_REC_B_TOTAL];

	nx_jw_object_begin(jw);
	nx_jw_key(jw, "profile");
	nx_jw_object_begin(jw);
	nx_jw_key(jw, "name");
	nx_jw_string(jw, r->name);
	nx_jw_key(jw, "dir");
	nx_jw_string(jw, r->dir);
	num(jw, "span_start_ns", (double)r->span0);
	num(jw, "span_end_ns", (double)r->span1);
	nx_jw_object_end(jw);

	nx_jw_key(jw, "window");
	nx_jw_object_begin(jw);
	nx_jw_key(jw, "source");
	nx_jw_string(jw, window_name[r->window]);
	num(jw, "t0_ns", (double)r->t0);
	num(jw, "t1_ns", (double)r->t1);
	if (r->window == NX_REC_WIN_RANGE) {
		num(jw, "requested_t0_ns", (double)r->req_t0);
		num(jw, "requested_t1_ns", (double)r->req_t1);
		nx_jw_key(jw, "clipped");
		nx_jw_bool(jw, r->clipped);
	}
	nx_jw_key(jw, "inputs");
	nx_jw_string(jw, r->inputs_source ? r->inputs_source : "");
	nx_jw_key(jw, "flops");
	nx_jw_string(jw, r->in.flops_source ? r->in.flops_source : "");
	nx_jw_object_end(jw);

	nx_jw_key(jw, "inputs");
	nx_jw_object_begin(jw);
	num(jw, "total_ns", r->in.total_ns);
	num(jw, "dma_active_ns", r->in.dma_active_ns);
	num(jw, "dma_transfer_bytes", r->in.dma_bytes);
	num(jw, "necessary_bytes", r->in.necessary_bytes);
	num(jw, "te_active_ns", r->in.te_active_ns);
	num(jw, "hw_flops", r->in.hw_flops);
	num(jw, "transpose_flops", r->in.tp_flops);
	num(jw, "dma_bw_peak_bytes_per_s", r->in.dma_bw);
	num(jw, "te_peak_flops_per_s", r->in.te_peak);
	nx_jw_object_end(jw);

	nx_jw_key(jw, "bounds");
	nx_jw_array_begin(jw);
	for (int k = 0; k < NX_REC_NBOUNDS; k++) {
		nx_jw_object_begin(jw);
		nx_jw_key(jw, "name");
		nx_jw_string(jw, nx_rec_bound_key[k]);
		num(jw, "ns", r->bound[k]);
		num(jw, "bn_speedup", r->speedup[k]);
		if (k == NX_REC_B_PIPELINE) {
			nx_jw_key(jw, "engine");
			if (r->bottleneck >= 0)
				nx_jw_string(jw, nx_rec_engine_name[r->bottleneck]);
			else
				nx_jw_null(jw);
		}
		nx_jw_object_end(jw);
	}
	nx_jw_array_end(jw);

	nx_jw_key(jw, "engines");
	nx_jw_array_begin(jw);
	for (size_t i = 0; i < 5; i++) {
		nx_jw_object_begin(jw);
		nx_jw_key(jw, "engine");
		nx_jw_string(jw, nx_rec_engine_name[eng_rows[i]]);
		num(jw, "active_ns", r->in.eng_ns[eng_rows[i]]);
		num(jw, "fraction_of_total", r->in.eng_ns[eng_rows[i]] / total);
		nx_jw_object_end(jw);
	}
	nx_jw_array_end(jw);
	nx_jw_key(jw, "bottleneck");
	if (r->bottleneck >= 0)
		nx_jw_string(jw, nx_rec_engine_name[r->bottleneck]);
	else
		nx_jw_null(jw);

	nx_jw_key(jw, "gaps");
	nx_jw_array_begin(jw);
	for (int g = 0; g < NX_REC_NGAPS; g++) {
		nx_jw_object_begin(jw);
		nx_jw_key(jw, "name");
		nx_jw_string(jw, nx_rec_gap_key[g]);
		nx_jw_key(jw, "label");
		nx_jw_string(jw, nx_rec_gap_label[g]);
		nx_jw_key(jw, "family");
		nx_jw_string(jw, family[gap_family[g]]);
		num(jw, "ns", r->gap[g]);
		num(jw, "fraction_of_total", r->gap[g] / total);
		if (g == NX_REC_G_EXCESS)
			num(jw, "fraction_of_traffic", r->bound[NX_REC_B_MEM_IDEAL] > 0
				? r->gap[g] / r->bound[NX_REC_B_MEM_IDEAL] : NAN);
		if (g == NX_REC_G_TRANSPOSE)
			num(jw, "fraction_of_flops", r->in.hw_flops > 0
				? r->in.tp_flops / r->in.hw_flops : NAN);
		nx_jw_object_end(jw);
	}
	nx_jw_array_end(jw);

	if (r->bounds_only) { /* no investigations ran: what follows is theirs */
		nx_jw_key(jw, "part");
		nx_jw_string(jw, "bounds");
		nx_jw_object_end(jw);
		return;
	}
	nx_jw_key(jw, "findings");
	nx_jw_array_begin(jw);
	for (int i = 0; i < NX_REC_NINV; i++)
		finding(jw, r, &r->inv[r->order[i]], i + 1);
	nx_jw_array_end(jw);
	thresholds(jw);

	quality(jw, r);

	nx_jw_key(jw, "choices");
	nx_jw_array_begin(jw);
	for (size_t i = 0; i < nx__rec_nchoices; i++) {
		nx_jw_object_begin(jw);
		nx_jw_key(jw, "topic");
		nx_jw_string(jw, nx__rec_choices[i][0]);
		nx_jw_key(jw, "choice");
		nx_jw_string(jw, nx__rec_choices[i][1]);
		nx_jw_object_end(jw);
	}
	nx_jw_array_end(jw);
	nx_jw_object_end(jw);
}

void nx__rec_report_json(const struct nx_rec_result *r, struct nx_strbuf *out)
{
	struct nx_jw jw;

	nx_jw_init(&jw, out, true);
	nx_jw_object_begin(&jw);
	nx_jw_key(&jw, "kind");
	nx_jw_string(&jw, "recommend");
	nx_jw_key(&jw, "report");
	nx__rec_result_json(r, &jw);
	nx_jw_object_end(&jw);
	nx_strbuf_addch(out, '\n');
}
