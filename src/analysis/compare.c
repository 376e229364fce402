/* SPDX-License-Identifier: MIT
 * compare.c: the follow-up report (docs/recommend.md, "Follow-up report"): two analyses side by
 * side, bounds, engine times and both gap families with a delta column ("-<delta> us (<old/new>x)",
 * "+<delta> us", an em dash when unchanged), the bottleneck change, and the new profile's findings.
 * Markdown and JSON. */
#include "common/compat.h"
#include "analysis/rec.h"

#include <math.h>
#include <string.h>

static const int eng_rows[] = { NX_REC_ENG_DMA, NX_REC_ENG_TENSOR, NX_REC_ENG_VECTOR,
				NX_REC_ENG_SCALAR, NX_REC_ENG_GPSIMD };

static const char *bn_name(const struct nx_rec_result *r)
{
	return r->bottleneck >= 0 ? nx_rec_engine_name[r->bottleneck] : "unknown";
}

static void row(struct nx_strbuf *out, const char *label, double a, double b,
		const char *ea, const char *eb)
{
	nx_strbuf_addf(out, "| %s | ", label);
	nx__rec_fmt_us(out, a);
	if (ea)
		nx_strbuf_addf(out, " (%s)", ea);
	nx_strbuf_addstr(out, " | ");
	nx__rec_fmt_us(out, b);
	if (eb)
		nx_strbuf_addf(out, " (%s)", eb);
	nx_strbuf_addstr(out, " | ");
	nx__rec_fmt_delta(out, a, b);
	nx_strbuf_addstr(out, " |\n");
}

static void header(struct nx_strbuf *out, const char *title, const char *first,
		   const struct nx_rec_result *a, const struct nx_rec_result *b)
{
	nx_strbuf_addf(out, "\n## %s\n\n| %s | %s | %s | delta |\n|---|---|---|---|\n", title,
		       first, a->name, b->name);
}

void nx__rec_compare_md(const struct nx_rec_result *a, const struct nx_rec_result *b,
			struct nx_strbuf *out)
{
	static const char *const status[] = { "found", "nothing", "not computable" };

	nx_strbuf_addf(out, "# Follow-up: %s -> %s\n\n", a->name, b->name);
	if (a->bottleneck != b->bottleneck)
		nx_strbuf_addf(out, "Bottleneck: %s \xe2\x86\x92 %s\n", bn_name(a), bn_name(b));
	else
		nx_strbuf_addf(out, "Bottleneck: %s (unchanged)\n", bn_name(a));
	nx_strbuf_addstr(out, "\nTotal time: ");
	nx__rec_fmt_us(out, a->bound[NX_REC_B_TOTAL]);
	nx_strbuf_addstr(out, " \xe2\x86\x92 ");
	nx__rec_fmt_us(out, b->bound[NX_REC_B_TOTAL]);
	nx_strbuf_addstr(out, ", ");
	nx__rec_fmt_delta(out, a->bound[NX_REC_B_TOTAL], b->bound[NX_REC_B_TOTAL]);
	nx_strbuf_addstr(out, ". Deltas are new - previous (\xe2\x80\x94: unchanged); the ratio is "
			      "previous / new.\n");

	header(out, "Bounds", "bound", a, b);
	for (int k = 0; k < NX_REC_NBOUNDS; k++) {
		bool pp = k == NX_REC_B_PIPELINE;
		row(out, nx_rec_bound_key[k], a->bound[k], b->bound[k],
		    pp ? bn_name(a) : NULL, pp ? bn_name(b) : NULL);
	}
	header(out, "Engine active times", "engine", a, b);
	for (size_t i = 0; i < 5; i++)
		row(out, nx_rec_engine_name[eng_rows[i]], a->in.eng_ns[eng_rows[i]],
		    b->in.eng_ns[eng_rows[i]], NULL, NULL);
	header(out, "Memory family gaps", "gap", a, b);
	for (int g = NX_REC_G_DMA_IDLE; g <= NX_REC_G_EXCESS; g++)
		row(out, nx_rec_gap_label[g], a->gap[g], b->gap[g], NULL, NULL);
	header(out, "Compute family gaps", "gap", a, b);
	for (int g = NX_REC_G_TE_IDLE; g <= NX_REC_G_TRANSPOSE; g++)
		row(out, nx_rec_gap_label[g], a->gap[g], b->gap[g], NULL, NULL);
	row(out, nx_rec_gap_label[NX_REC_G_PIPELINE], a->gap[NX_REC_G_PIPELINE],
	    b->gap[NX_REC_G_PIPELINE], NULL, NULL);

	nx_strbuf_addf(out, "\n## Investigations\n\n| investigation | %s | %s |\n|---|---|---|\n",
		       a->name, b->name);
	for (int i = 0; i < NX_REC_NINV; i++) {
		const struct nx_rec_inv *x = &a->inv[i], *y = &b->inv[i];
		nx_strbuf_addf(out, "| %s | %s", x->title, status[x->status]);
		if (x->status == NX_REC_FOUND) {
			nx_strbuf_addstr(out, ", up to ");
			nx__rec_fmt_us(out, x->relevance_ns);
		}
		nx_strbuf_addf(out, " | %s", status[y->status]);
		if (y->status == NX_REC_FOUND) {
			nx_strbuf_addstr(out, ", up to ");
			nx__rec_fmt_us(out, y->relevance_ns);
		}
		nx_strbuf_addstr(out, " |\n");
	}
	nx_strbuf_addf(out, "\n# Findings of %s (the new version)\n", b->name);
	nx__rec_md_findings(b, out);
	nx_strbuf_addf(out, "\n# Data quality of %s\n", a->name);
	nx__rec_md_quality(a, out);
	nx_strbuf_addf(out, "\n# Data quality of %s\n", b->name);
	nx__rec_md_quality(b, out);
	if (a->details)
		nx__rec_md_choices(out);
}

static void delta(struct nx_jw *jw, const char *name, double a, double b)
{
	struct nx_strbuf text = NX_STRBUF_INIT;

	nx__rec_fmt_delta(&text, a, b);
	nx_jw_object_begin(jw);
	nx_jw_key(jw, "name");
	nx_jw_string(jw, name);
	nx_jw_key(jw, "before_ns");
	nx_jw_double(jw, a);
	nx_jw_key(jw, "after_ns");
	nx_jw_double(jw, b);
	nx_jw_key(jw, "delta_ns");
	nx_jw_double(jw, b - a);
	nx_jw_key(jw, "ratio");
	nx_jw_double(jw, b > 0 ? a / b : NAN);
	nx_jw_key(jw, "text");
	nx_jw_string(jw, text.buf ? text.buf : "");
	nx_jw_object_end(jw);
	nx_strbuf_release(&text);
}

void nx__rec_compare_json(const struct nx_rec_result *a, const struct nx_rec_result *b,
			  struct nx_strbuf *out)
{
	struct nx_jw jw;

	nx_jw_init(&jw, out, true);
	nx_jw_object_begin(&jw);
	nx_jw_key(&jw, "kind");
	nx_jw_string(&jw, "recommend_compare");
	nx_jw_key(&jw, "bottleneck");
	nx_jw_object_begin(&jw);
	nx_jw_key(&jw, "before");
	nx_jw_string(&jw, bn_name(a));
	nx_jw_key(&jw, "after");
	nx_jw_string(&jw, bn_name(b));
	nx_jw_key(&jw, "changed");
	nx_jw_bool(&jw, a->bottleneck != b->bottleneck);
	nx_jw_object_end(&jw);
	nx_jw_key(&jw, "deltas");
	nx_jw_object_begin(&jw);
	nx_jw_key(&jw, "bounds");
	nx_jw_array_begin(&jw);
	for (int k = 0; k < NX_REC_NBOUNDS; k++)
		delta(&jw, nx_rec_bound_key[k], a->bound[k], b->bound[k]);
	nx_jw_array_end(&jw);
	nx_jw_key(&jw, "engines");
	nx_jw_array_begin(&jw);
	for (size_t i = 0; i < 5; i++)
		delta(&jw, nx_rec_engine_name[eng_rows[i]], a->in.eng_ns[eng_rows[i]],
		      b->in.eng_ns[eng_rows[i]]);
	nx_jw_array_end(&jw);
	nx_jw_key(&jw, "gaps");
	nx_jw_array_begin(&jw);
	for (int g = 0; g < NX_REC_NGAPS; g++)
		delta(&jw, nx_rec_gap_key[g], a->gap[g], b->gap[g]);
	nx_jw_array_end(&jw);
	nx_jw_object_end(&jw);
	nx_jw_key(&jw, "before");
	nx__rec_result_json(a, &jw);
	nx_jw_key(&jw, "after");
	nx__rec_result_json(b, &jw);
	nx_jw_object_end(&jw);
	nx_strbuf_addch(out, '\n');
}
