/* SPDX-License-Identifier: MIT
 * report_md.c: the Markdown report of one profile (docs/recommend.md, "Reading the report"):
 * summary prose, bounds table with gaps and bn_speedup, engine times with the bottleneck, the two
 * gap families, findings by relevance (each with what to change in the kernel, and the ones that
 * found nothing), how to read the numbers, data quality; with --details also the choices taken and
 * each investigation's Step 1. Times are microseconds throughout; shares never exceed 100%. */
#include "common/compat.h"
#include "analysis/rec.h"
#include "common/bytes_text.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static const int bound_gap[NX_REC_NBOUNDS] = {
	-1, NX_REC_G_DMA_IDLE, NX_REC_G_DMA_INEFF, NX_REC_G_EXCESS, NX_REC_G_TE_IDLE,
	NX_REC_G_TE_UNDERUTIL, NX_REC_G_TRANSPOSE, NX_REC_G_PIPELINE,
};

static const char *const status_name[] = { "found", "nothing found", "not computable" };

void nx__rec_md_bound_name(const struct nx_rec_result *r, int k, struct nx_strbuf *out)
{
	nx_strbuf_addstr(out, nx_rec_bound_key[k]);
	if (k == NX_REC_B_PIPELINE && r->bottleneck >= 0)
		nx_strbuf_addf(out, " (%s)", nx_rec_engine_name[r->bottleneck]);
}

/* Bytes exactly, then in the Summary's units (bytes_text.h): "5435817984 B (5.06 GiB)". */
static void md_bytes(double v, struct nx_strbuf *out)
{
	nx_strbuf_addf(out, "%.0f B (", v);
	nx_bytes_text(out, v);
	nx_strbuf_addch(out, ')');
}

void nx__rec_md_metric(const struct nx_rec_metric *m, struct nx_strbuf *out)
{
	if (isnan(m->v))
		nx_strbuf_addstr(out, "n/a");
	else if (!strcmp(m->unit, "ns"))
		nx__rec_fmt_us(out, m->v);
	else if (!strcmp(m->unit, "bytes"))
		md_bytes(m->v, out);
	else if (!strcmp(m->unit, "flops"))
		nx_strbuf_addf(out, "%.0f (%.3f GFLOP)", m->v, m->v / 1e9);
	else if (!strcmp(m->unit, "%"))
		nx_strbuf_addf(out, "%.1f%%", fmin(m->v, 100)); /* shares are shown <= 100 */
	else if (!strcmp(m->unit, "x"))
		nx_strbuf_addf(out, "%.2fx", m->v);
	else if (*m->unit)
		nx_strbuf_addf(out, "%.2f %s", m->v, m->unit);
	else
		nx_strbuf_addf(out, "%.0f", m->v);
}

static bool ends_with(const char *s, const char *suffix)
{
	size_t n = strlen(s), m = strlen(suffix);
	return n >= m && !strcmp(s + n - m, suffix);
}

/* Column headers as a reader wants them: times in us (the tables hold ns), the
 * threshold behind "small", "%" for shares. */
static void md_header(const char *col, struct nx_strbuf *out)
{
	if (!strcmp(col, "small"))
		nx_strbuf_addf(out, "small (< %d KiB)", NX_REC_SMALL_DESC_BYTES / 1024);
	else if (!strcmp(col, "excess_ns"))
		nx_strbuf_addstr(out, "excess engine time (us)");
	else if (!strcmp(col, "share_pct"))
		nx_strbuf_addstr(out, "share %");
	else if (!strcmp(col, "pct_of_bytes"))
		nx_strbuf_addstr(out, "% of bytes");
	else if (!strcmp(col, "pct_of_flops"))
		nx_strbuf_addstr(out, "% of flops");
	else if (ends_with(col, "_ns"))
		nx_strbuf_addf(out, "%.*s (us)", (int)(strlen(col) - 3), col);
	else
		nx_strbuf_addstr(out, col);
}

void nx__rec_md_table(const struct nx_rec_table *t, struct nx_strbuf *out)
{
	for (size_t c = 0; c < t->ncols; c++) {
		nx_strbuf_addstr(out, "| ");
		md_header(t->cols[c], out);
		nx_strbuf_addch(out, ' ');
	}
	nx_strbuf_addstr(out, "|\n");
	for (size_t c = 0; c < t->ncols; c++)
		nx_strbuf_addstr(out, "|---");
	nx_strbuf_addstr(out, "|\n");
	for (size_t r = 0; r < t->nrows; r++) {
		for (size_t c = 0; c < t->ncols; c++) {
			const struct nx_rec_cell *cell = &t->cells[r * t->ncols + c];
			const char *col = t->cols[c];
			bool number = cell->text && (cell->kind == NX_CELL_INT ||
						     cell->kind == NX_CELL_FLOAT);

			nx_strbuf_addstr(out, "| ");
			if (number && ends_with(col, "_ns")) {
				nx__rec_fmt_us_bare(out, strtod(cell->text, NULL));
			} else if (number && (ends_with(col, "_pct") || !strncmp(col, "pct_", 4))) {
				nx_strbuf_addf(out, "%.1f", fmin(strtod(cell->text, NULL), 100));
			} else {
				nx_strbuf_addstr(out, cell->text ? cell->text : "");
			}
			nx_strbuf_addch(out, ' ');
		}
		nx_strbuf_addstr(out, "|\n");
	}
}

static void window_line(const struct nx_rec_result *r, struct nx_strbuf *out)
{
	static const char *const src[] = {
		"whole kernel", "explicit window", "kernel DMA packet extent", "DmaPacketAggregated extent",
	};
	nx_strbuf_addf(out, "Window: %s", src[r->window]);
	if (r->window != NX_REC_WIN_WHOLE)
		nx_strbuf_addf(out, " [%" PRId64 ", %" PRId64 ") ns", r->t0, r->t1);
	if (r->clipped)
		nx_strbuf_addf(out, " (clipped to the end of the profile from the requested [%" PRId64
			       ", %" PRId64 "))", r->req_t0, r->req_t1);
	nx_strbuf_addf(out, "; bound inputs: %s; flops: %s. Profile span: %" PRId64 "..%" PRId64
		       " ns.\n", r->inputs_source, r->in.flops_source ? r->in.flops_source : "n/a",
		       r->span0, r->span1);
}

static const struct nx_rec_inv *first_found(const struct nx_rec_result *r)
{
	const struct nx_rec_inv *inv = &r->inv[r->order[0]];
	return inv->status == NX_REC_FOUND ? inv : NULL;
}

static int largest_gap(const struct nx_rec_result *r, int from, int to)
{
	int best = -1;
	for (int g = from; g <= to; g++)
		if (!isnan(r->gap[g]) && (best < 0 || r->gap[g] > r->gap[best]))
			best = g;
	return best;
}

static void prose(const struct nx_rec_result *r, struct nx_strbuf *out)
{
	double total = r->bound[NX_REC_B_TOTAL];
	int bn = r->bottleneck;

	nx_strbuf_addstr(out, "The kernel takes ");
	nx__rec_fmt_us(out, total);
	if (bn < 0) {
		nx_strbuf_addstr(out, "; no engine time is known, so no bottleneck.\n");
		return;
	}
	nx_strbuf_addf(out, ". It is bound by **%s** (", nx_rec_engine_name[bn]);
	nx__rec_fmt_us(out, r->in.eng_ns[bn]);
	nx_strbuf_addstr(out, ", ");
	nx__rec_fmt_pct(out, r->in.eng_ns[bn] / total);
	nx_strbuf_addstr(out, " of the total)");
	if (isnan(r->in.eng_ns[NX_REC_ENG_DMA]))
		nx_strbuf_addstr(out, " among the compute engines: the DMA engine time is unknown");
	for (int e = 0; e < NX_REC_NENG; e++)
		if (e != bn && r->in.eng_ns[e] >= 0.9 * r->in.eng_ns[bn])
			nx_strbuf_addf(out, "; %s is within 10%% and should be treated as a "
				       "bottleneck too", nx_rec_engine_name[e]);
	nx_strbuf_addstr(out, ". ");
	if (bn == NX_REC_ENG_DMA || bn == NX_REC_ENG_TENSOR) {
		bool mem = bn == NX_REC_ENG_DMA;
		int g = mem ? largest_gap(r, NX_REC_G_DMA_IDLE, NX_REC_G_EXCESS)
			    : largest_gap(r, NX_REC_G_TE_IDLE, NX_REC_G_TRANSPOSE);
		if (g >= 0) {
			nx_strbuf_addf(out, "The largest gap of the %s family is %s (",
				       mem ? "memory" : "compute", nx_rec_gap_label[g]);
			nx__rec_fmt_us(out, r->gap[g]);
			nx_strbuf_addstr(out, ", ");
			nx__rec_fmt_pct(out, r->gap[g] / total);
			nx_strbuf_addstr(out, " of the total). ");
		}
		int b0 = mem ? NX_REC_B_MEM : NX_REC_B_COMP;
		nx_strbuf_addf(out, "If %s reached %s, the kernel would run %.2fx faster (%s: "
			       "%.2fx, %s: %.2fx)", mem ? "DMA" : "the Tensor engine",
			       nx_rec_bound_key[b0], r->speedup[b0], nx_rec_bound_key[b0 + 1],
			       r->speedup[b0 + 1], nx_rec_bound_key[b0 + 2], r->speedup[b0 + 2]);
		nx_strbuf_addstr(out, "; these are bn_speedup, explained under the bounds table, "
				 "and not predicted savings. ");
	} else {
		nx_strbuf_addf(out, "Neither DMA nor the Tensor engine is the bottleneck: support for "
			       "%s efficiency analysis is work in progress; its busiest source lines "
			       "are listed below. ", nx_rec_engine_name[bn]);
	}
	nx_strbuf_addstr(out, "Serialisation (total - perfect_pipeline) is ");
	nx__rec_fmt_us(out, r->gap[NX_REC_G_PIPELINE]);
	nx_strbuf_addstr(out, " (");
	nx__rec_fmt_pct(out, r->gap[NX_REC_G_PIPELINE] / total);
	nx_strbuf_addstr(out, ").");
	const struct nx_rec_inv *f = first_found(r);
	if (f && f->lines.nrows && nx__rec_cell(&f->lines, 0, "share_pct"))
		nx_strbuf_addf(out, " Next target: %s at %s (%.1f%% of that finding), see finding 1.",
			       f->title, nx__rec_cell(&f->lines, 0, "source"),
			       fmin(strtod(nx__rec_cell(&f->lines, 0, "share_pct"), NULL), 100));
	else if (f)
		nx_strbuf_addf(out, " Next target: %s, see finding 1.", f->title);
	nx_strbuf_addch(out, '\n');
}

static void bounds_table(const struct nx_rec_result *r, struct nx_strbuf *out)
{
	nx_strbuf_addstr(out, "\n## Bounds\n\n| bound | time | gap from previous | bn_speedup |\n"
			 "|---|---|---|---|\n");
	for (int k = 0; k < NX_REC_NBOUNDS; k++) {
		nx_strbuf_addstr(out, "| ");
		nx__rec_md_bound_name(r, k, out);
		nx_strbuf_addstr(out, " | ");
		nx__rec_fmt_us(out, r->bound[k]);
		nx_strbuf_addstr(out, " | ");
		if (bound_gap[k] >= 0) {
			nx_strbuf_addf(out, "%s ", nx_rec_gap_label[bound_gap[k]]);
			nx__rec_fmt_us(out, r->gap[bound_gap[k]]);
		}
		if (isnan(r->speedup[k]))
			nx_strbuf_addstr(out, " | n/a |\n");
		else
			nx_strbuf_addf(out, " | %.2fx |\n", r->speedup[k]);
	}
	nx_strbuf_addstr(out, "\nbn_speedup (bottleneck-aware speedup): total_time divided by "
			 "what the kernel would take if the engine a bound describes (DMA for the "
			 "memory bounds, Tensor for the compute bounds) reached that bound while every "
			 "other engine kept its active time; the busiest other engine caps it. A bound "
			 "with bn_speedup near 1.00x is not worth chasing until that other engine "
			 "shrinks.\n");
}

static void engines_table(const struct nx_rec_result *r, struct nx_strbuf *out)
{
	static const int rows[] = { NX_REC_ENG_DMA, NX_REC_ENG_TENSOR, NX_REC_ENG_VECTOR,
				    NX_REC_ENG_SCALAR, NX_REC_ENG_GPSIMD };

	nx_strbuf_addstr(out, "\n## Engine active times\n\n| engine | active |\n|---|---|\n");
	for (size_t i = 0; i < 5; i++) {
		double t = r->in.eng_ns[rows[i]];
		nx_strbuf_addf(out, "| %s | ", nx_rec_engine_name[rows[i]]);
		nx__rec_fmt_us(out, t);
		if (!isnan(t) && t > 0) {
			nx_strbuf_addstr(out, " (");
			nx__rec_fmt_pct(out, t / r->bound[NX_REC_B_TOTAL]);
			nx_strbuf_addch(out, ')');
		}
		nx_strbuf_addstr(out, " |\n");
	}
	nx_strbuf_addf(out, "\nBottleneck: **%s**\n",
		       r->bottleneck >= 0 ? nx_rec_engine_name[r->bottleneck] : "unknown");
	if (isnan(r->in.eng_ns[NX_REC_ENG_DMA]))
		nx_strbuf_addstr(out, "(DMA engine time is unknown: no DmaPacket rows.)\n");
}

void nx__rec_md_gaps(const struct nx_rec_result *r, int from, int to, struct nx_strbuf *out)
{
	double total = r->bound[NX_REC_B_TOTAL];

	nx_strbuf_addstr(out, "| gap | value | % of total |\n|---|---|---|\n");
	for (int g = from; g <= to; g++) {
		nx_strbuf_addf(out, "| %s | ", nx_rec_gap_label[g]);
		nx__rec_fmt_us(out, r->gap[g]);
		nx_strbuf_addstr(out, " | ");
		nx__rec_fmt_pct(out, r->gap[g] / total);
		if (g == NX_REC_G_EXCESS && r->bound[NX_REC_B_MEM_IDEAL] > 0) {
			nx_strbuf_addstr(out, " (");
			nx__rec_fmt_pct(out, r->gap[g] / r->bound[NX_REC_B_MEM_IDEAL]);
			nx_strbuf_addstr(out, " of traffic)");
		}
		if (g == NX_REC_G_TRANSPOSE && r->in.hw_flops > 0) {
			nx_strbuf_addstr(out, " (");
			nx__rec_fmt_pct(out, r->in.tp_flops / r->in.hw_flops);
			nx_strbuf_addstr(out, " of Flops)");
		}
		nx_strbuf_addstr(out, " |\n");
	}
}


const char *nx__rec_group_label(const char *group)
{
	static const char *const labels[][2] = {
		{ "1a", "DMA idle" },
		{ "1b", "DMA underused: bandwidth below peak" },
		{ "1c", "DMA redundant: bytes beyond the IN/OUT tensors" },
		{ "2a", "Tensor engine idle" },
		{ "2b", "Tensor engine underused: fewer flops than peak while active" },
		{ "2c", "Tensor engine redundant: flops that do not reach the result" },
		{ "3", "Vector, Scalar or GpSimd engine is the bottleneck" },
		{ "pipeline", "engines waiting on each other" },
	};
	for (size_t i = 0; i < sizeof(labels) / sizeof(labels[0]); i++)
		if (!strcmp(group, labels[i][0]))
			return labels[i][1];
	return "other";
}

/* What to change in the kernel for a finding: its investigation's remedies. */
void nx__rec_remedies(const struct nx_rec_result *r, const struct nx_rec_inv *inv,
		      struct nx_strbuf *out)
{
	const struct nx_rec_inv_def *def = nx__rec_investigation(inv->id);

	if (def && def->remedies)
		def->remedies(r, inv, out);
	else
		nx_strbuf_addstr(out, "See docs/recommend.md for this investigation.\n");
}

static void remedies_md(const struct nx_rec_result *r, const struct nx_rec_inv *inv,
			struct nx_strbuf *out)
{
	struct nx_strbuf sb = NX_STRBUF_INIT;

	nx__rec_remedies(r, inv, &sb);
	nx_strbuf_addstr(out, "\nWhat to change:\n\n");
	for (const char *p = nx_strbuf_str(&sb); *p;) {
		const char *nl = strchr(p, '\n');
		size_t n = nl ? (size_t)(nl - p) : strlen(p);
		nx_strbuf_addf(out, "- %.*s\n", (int)n, p);
		p += n + (nl != NULL);
	}
	nx_strbuf_release(&sb);
}

void nx__rec_md_findings(const struct nx_rec_result *r, struct nx_strbuf *out)
{
	int n = 0;

	nx_strbuf_addstr(out, "\n## Findings (by relevance)\n\n"
			 "Findings overlap: the same DMA or engine time can sit behind several of them "
			 "(reloads are often also small transfers), so their estimated reductions do "
			 "not add up; fix the first, capture again and re-run.\n");
	for (int i = 0; i < NX_REC_NINV; i++) {
		const struct nx_rec_inv *inv = &r->inv[r->order[i]];
		if (inv->status != NX_REC_FOUND)
			continue;
		nx_strbuf_addf(out, "\n### %d. %s\n\n", ++n, inv->title);
		nx_strbuf_addf(out, "Group %s (%s), method: %s. ", inv->group,
			       nx__rec_group_label(inv->group),
			       !strcmp(inv->method, "ours") ? "ours (not in the AWS skill)" : "AWS skill");
		if (inv->gap) {
			nx_strbuf_addf(out, "Gap: %s ", inv->gap);
			nx__rec_fmt_us(out, inv->gap_ns);
			nx_strbuf_addstr(out, ". ");
		}
		nx_strbuf_addstr(out, "Estimated reduction of the kernel time: up to ");
		nx__rec_fmt_us(out, inv->relevance_ns);
		nx_strbuf_addf(out, ".\n\n%s.\n", inv->summary);
		if (inv->note)
			nx_strbuf_addf(out, "\nNote: %s.\n", inv->note);
		if (inv->lines.nrows) {
			nx_strbuf_addstr(out, "\n");
			nx__rec_md_table(&inv->lines, out);
			nx__rec_md_source(r->source_root, &inv->lines, out);
		}
		remedies_md(r, inv, out);
	}
	if (!n)
		nx_strbuf_addstr(out, "\nNo investigation found an inefficiency.\n");
	nx_strbuf_addstr(out, "\n### Investigations that found nothing or could not run\n\n");
	for (int i = 0; i < NX_REC_NINV; i++) {
		const struct nx_rec_inv *inv = &r->inv[r->order[i]];
		if (inv->status != NX_REC_FOUND)
			nx_strbuf_addf(out, "- %s (%s): %s.\n", inv->title, status_name[inv->status],
				       inv->summary);
	}
}

/* The thresholds and terms a reader needs, once per report. */
static void how_to_read(struct nx_strbuf *out)
{
	nx_strbuf_addstr(out,
		"\n## How to read this report\n\n"
		"- Gaps are differences between consecutive bounds, in us and as a share of "
		"total_time. They say where time goes, not what a change saves: the ideals may be "
		"unreachable and another engine may take over as the bottleneck.\n"
		"- Group labels: 1 = DMA, 2 = Tensor engine, 3 = another engine; a = idle, "
		"b = underused, c = redundant work; \"pipeline\" = engines waiting on each other.\n"
		"- Estimated reduction: how much the busiest engine's active time (the "
		"perfect_pipeline bound) would shrink if the finding's time went away; for excess "
		"traffic it is priced at the achieved bandwidth, so it can exceed the gap, which "
		"is priced at peak.\n");
	nx_strbuf_addf(out, "- Thresholds: a DMA descriptor is small below %d KiB per partition",
		       NX_REC_SMALL_DESC_BYTES / 1024);
	nx_strbuf_addstr(out,
		" (bytes per transfer / partitions); DMA efficiency is reported when its gap is "
		">= 5% of memory_bound; excess traffic when it is > 1% of the moved bytes; serialisation "
		"when the exposed waits are >= 1% of the total; Tensor tiles are full at K=128, "
		"M=128, N=512; engines within 10% of the bottleneck count as bottlenecks too.\n"
		"- share %: a line's part of its finding's gap (or excess), capped at 100. "
		"\"excess engine time\" of a DMA line: its packets' DMA-engine time, summed over "
		"the DMA engines that ran them in parallel (so it can exceed the kernel time), "
		"minus the time its bytes need at peak.\n");
}

void nx__rec_md_quality(const struct nx_rec_result *r, struct nx_strbuf *out)
{
	const struct nx_rec_quality *q = &r->q;

	nx_strbuf_addf(out, "\n## Data quality\n\n"
		       "Instructions: %" PRId64 " (%" PRId64 " with a source location, %" PRId64
		       " with wait times); DmaPacket: %" PRId64 "; DmaPacketAggregated: %" PRId64
		       "; Flow: %" PRId64 " (%" PRId64 " DGE_TRIGGER, %" PRId64 " SEMAPHORE); "
		       "IN/OUT tensors: %" PRId64 "; Summary: %s; Warning rows: %" PRId64 ".\n\n",
		       q->instructions, q->with_source, q->with_wait, q->dma_packets, q->dpa_rows,
		       q->flow_rows, q->flow_dge, q->flow_sem, q->tensors, q->summary ? "yes" : "no",
		       q->warnings);
	if (!q->nnotes)
		nx_strbuf_addstr(out, "Every part of the analysis could be computed.\n");
	for (size_t i = 0; i < q->nnotes; i++)
		nx_strbuf_addf(out, "- Not computable or incomplete: %s. Why: %s.\n",
			       q->notes[i].part, q->notes[i].why);
}

void nx__rec_md_choices(struct nx_strbuf *out)
{
	nx_strbuf_addstr(out, "\n## Choices (where the reference method is ambiguous)\n\n");
	for (size_t i = 0; i < nx__rec_nchoices; i++)
		nx_strbuf_addf(out, "- %s: %s.\n", nx__rec_choices[i][0], nx__rec_choices[i][1]);
}

static void appendix(const struct nx_rec_result *r, struct nx_strbuf *out)
{
	nx_strbuf_addstr(out, "\n## Appendix: Step 1 of each investigation\n");
	for (int i = 0; i < NX_REC_NINV; i++) {
		const struct nx_rec_inv *inv = &r->inv[i];
		if (!inv->nm && !inv->extra.nrows)
			continue;
		nx_strbuf_addf(out, "\n### %s\n\n| quantity | value |\n|---|---|\n", inv->title);
		for (size_t k = 0; k < inv->nm; k++) {
			nx_strbuf_addf(out, "| %s | ", inv->m[k].label);
			nx__rec_md_metric(&inv->m[k], out);
			nx_strbuf_addstr(out, " |\n");
		}
		if (inv->extra.nrows) {
			nx_strbuf_addf(out, "\n%s:\n\n", inv->extra_title);
			nx__rec_md_table(&inv->extra, out);
		}
	}
}

void nx__rec_report_md(const struct nx_rec_result *r, struct nx_strbuf *out)
{
	nx_strbuf_addf(out, "# Performance analysis: %s\n\n", r->name);
	window_line(r, out);
	nx_strbuf_addstr(out, "\n## Summary\n\n");
	prose(r, out);
	bounds_table(r, out);
	engines_table(r, out);
	nx_strbuf_addstr(out, "\n## Memory family gaps\n\n");
	nx__rec_md_gaps(r, NX_REC_G_DMA_IDLE, NX_REC_G_EXCESS, out);
	nx_strbuf_addstr(out, "\n## Compute family gaps\n\n");
	nx__rec_md_gaps(r, NX_REC_G_TE_IDLE, NX_REC_G_TRANSPOSE, out);
	nx_strbuf_addstr(out, "\nPipeline gap (total_time - perfect_pipeline): ");
	nx__rec_fmt_us(out, r->gap[NX_REC_G_PIPELINE]);
	nx_strbuf_addstr(out, " (");
	nx__rec_fmt_pct(out, r->gap[NX_REC_G_PIPELINE] / r->bound[NX_REC_B_TOTAL]);
	nx_strbuf_addstr(out, " of total).\n");
	nx__rec_md_findings(r, out);
	how_to_read(out);
	nx__rec_md_quality(r, out);
	if (r->details) {
		nx__rec_md_choices(out);
		appendix(r, out);
	} else {
		nx_strbuf_addstr(out, "\nThe method's choices and the Step 1 tables of every "
				 "investigation: run with --details.\n");
	}
}
