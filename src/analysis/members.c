/* SPDX-License-Identifier: MIT
 * members.c: `recommend` over the members of a run (recommend.h, nx_recommend_members):
 * each member analysed as on its own, one after the other, and the run-wide part that
 * puts them side by side: every member's total, bottleneck and top finding, then each
 * investigation over the run (in how many members it found something, its summed
 * relevance, the member where it matters most). Only that small summary is kept of a
 * member once its report is written, so a run of many members costs one member's
 * analysis in memory, plus the reports' text. */
#include "common/compat.h"
#include "analysis/recommend.h"
#include "analysis/rec.h"
#include "common/json_writer.h"
#include "common/xalloc.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* What the run-wide part keeps of a member. */
struct member_sum {
	double total_ns;
	int bottleneck;         /* enum nx_rec_engine, -1 when unknown */
	int top;                /* the first finding (enum nx_rec_inv_id), -1 when none */
	int status[NX_REC_NINV];    /* enum nx_rec_status of each investigation */
	double relevance[NX_REC_NINV];
};

static void summarise(const struct nx_rec_result *r, struct member_sum *s)
{
	s->total_ns = r->bound[NX_REC_B_TOTAL];
	s->bottleneck = r->bottleneck;
	s->top = r->inv[r->order[0]].status == NX_REC_FOUND ? r->order[0] : -1;
	for (int i = 0; i < NX_REC_NINV; i++) {
		s->status[i] = r->inv[i].status;
		s->relevance[i] = r->inv[i].relevance_ns;
	}
}

/* An investigation over the run. */
struct inv_sum {
	size_t found, computable;
	double relevance;
	size_t largest; /* the member where its relevance is largest (valid when found) */
};

static void over_run(const struct member_sum *s, size_t n, int inv, struct inv_sum *o)
{
	memset(o, 0, sizeof(*o));
	for (size_t m = 0; m < n; m++) {
		if (s[m].status[inv] != NX_REC_UNAVAILABLE)
			o->computable++;
		if (s[m].status[inv] != NX_REC_FOUND)
			continue;
		if (!o->found || s[m].relevance[inv] > s[o->largest].relevance[inv])
			o->largest = m;
		o->found++;
		o->relevance += s[m].relevance[inv];
	}
}

static const char *engine_of(int e)
{
	return e >= 0 ? nx_rec_engine_name[e] : NULL;
}

static void run_md(const char *run, const struct nx_recommend_member *mem,
		   const struct member_sum *s, size_t n, struct nx_strbuf *out)
{
	nx_strbuf_addf(out, "# Performance analysis: run %s\n\n", run);
	nx_strbuf_addf(out, "Device members analysed, slowest first: %zu. Each one's report "
		       "follows the run-wide tables.\n\n", n);
	nx_strbuf_addstr(out, "| member | total | bottleneck | top finding | its relevance |\n"
			      "|---|---|---|---|---|\n");
	for (size_t m = 0; m < n; m++) {
		const struct nx_rec_inv_def *top = s[m].top >= 0 ? nx__rec_investigations[s[m].top]
							     : NULL;
		nx_strbuf_addf(out, "| %s | ", mem[m].name);
		nx__rec_fmt_us(out, s[m].total_ns);
		nx_strbuf_addf(out, " | %s | ", engine_of(s[m].bottleneck) ? engine_of(s[m].bottleneck)
									    : "?");
		if (top) {
			nx_strbuf_addf(out, "%s (%s) | ", top->title, top->group);
			nx__rec_fmt_us(out, s[m].relevance[s[m].top]);
		} else {
			nx_strbuf_addstr(out, "none | ");
		}
		nx_strbuf_addstr(out, " |\n");
	}
	nx_strbuf_addstr(out, "\n## Findings across the run\n\n"
			      "Relevance is each member's ordering key (docs/recommend.md, "
			      "\"Ordering\"), summed over the members where the investigation "
			      "found something.\n\n"
			      "| investigation | found in | summed relevance | largest in |\n"
			      "|---|---|---|---|\n");
	for (int i = 0; i < NX_REC_NINV; i++) {
		struct inv_sum o;
		over_run(s, n, i, &o);
		nx_strbuf_addf(out, "| %s (%s) | %zu of %zu | ", nx__rec_investigations[i]->title,
			       nx__rec_investigations[i]->group, o.found, o.computable);
		if (o.found) {
			nx__rec_fmt_us(out, o.relevance);
			nx_strbuf_addf(out, " | %s (", mem[o.largest].name);
			nx__rec_fmt_us(out, s[o.largest].relevance[i]);
			nx_strbuf_addstr(out, ") |\n");
		} else {
			nx_strbuf_addstr(out, "— | — |\n");
		}
	}
}

static void run_json(const char *run, const struct nx_recommend_member *mem,
		     const struct member_sum *s, size_t n, const struct nx_strbuf *reports,
		     struct nx_strbuf *out)
{
	struct nx_jw jw;

	nx_jw_init(&jw, out, true);
	nx_jw_object_begin(&jw);
	nx_jw_key(&jw, "kind");
	nx_jw_string(&jw, "recommend_run");
	nx_jw_key(&jw, "run");
	nx_jw_string(&jw, run);
	nx_jw_key(&jw, "members");
	nx_jw_array_begin(&jw);
	for (size_t m = 0; m < n; m++) {
		nx_jw_object_begin(&jw);
		nx_jw_key(&jw, "profile");
		nx_jw_string(&jw, mem[m].name);
		nx_jw_key(&jw, "total_ns");
		nx_jw_double(&jw, s[m].total_ns);
		nx_jw_key(&jw, "bottleneck");
		if (engine_of(s[m].bottleneck))
			nx_jw_string(&jw, engine_of(s[m].bottleneck));
		else
			nx_jw_null(&jw);
		nx_jw_key(&jw, "top_finding");
		if (s[m].top >= 0)
			nx_jw_string(&jw, nx__rec_investigations[s[m].top]->id);
		else
			nx_jw_null(&jw);
		nx_jw_key(&jw, "top_relevance_ns");
		nx_jw_double(&jw, s[m].top >= 0 ? s[m].relevance[s[m].top] : NAN);
		nx_jw_object_end(&jw);
	}
	nx_jw_array_end(&jw);
	nx_jw_key(&jw, "findings");
	nx_jw_array_begin(&jw);
	for (int i = 0; i < NX_REC_NINV; i++) {
		struct inv_sum o;
		over_run(s, n, i, &o);
		nx_jw_object_begin(&jw);
		nx_jw_key(&jw, "id");
		nx_jw_string(&jw, nx__rec_investigations[i]->id);
		nx_jw_key(&jw, "title");
		nx_jw_string(&jw, nx__rec_investigations[i]->title);
		nx_jw_key(&jw, "found_in");
		nx_jw_uint(&jw, o.found);
		nx_jw_key(&jw, "computable_in");
		nx_jw_uint(&jw, o.computable);
		nx_jw_key(&jw, "summed_relevance_ns");
		nx_jw_double(&jw, o.found ? o.relevance : NAN);
		nx_jw_key(&jw, "largest_in");
		if (o.found)
			nx_jw_string(&jw, mem[o.largest].name);
		else
			nx_jw_null(&jw);
		nx_jw_object_end(&jw);
	}
	nx_jw_array_end(&jw);
	nx_jw_key(&jw, "reports");
	nx_jw_raw(&jw, reports->buf ? reports->buf : "[]");
	nx_jw_object_end(&jw);
	nx_strbuf_addch(out, '\n');
}

int nx_recommend_members(const struct nx_recommend_opts *o, const char *run,
			 const struct nx_recommend_member *mem, size_t n, struct nx_strbuf *out,
			 struct nx_err *err)
{
	struct member_sum *s = nx_xcalloc(n ? n : 1, sizeof(*s));
	struct nx_strbuf reports = NX_STRBUF_INIT;
	struct nx_rec_result *r = nx_xcalloc(1, sizeof(*r));
	struct nx_jw jw;
	int rc = 0;

	if (o->format == NX_REC_JSON) {
		nx_jw_init(&jw, &reports, true);
		nx_jw_array_begin(&jw);
	}
	for (size_t m = 0; !rc && m < n; m++) {
		rc = nx__rec_analyse(o, mem[m].dir, r, err);
		if (rc) {
			nx_err_wrap(err, "recommend on member '%s'", mem[m].name);
		} else {
			r->source_root = o->source_root;
			r->details = o->details;
			summarise(r, &s[m]);
			if (o->format == NX_REC_JSON) {
				nx__rec_result_json(r, &jw);
			} else {
				nx_strbuf_addf(&reports, "\n=== recommend %s ===\n", mem[m].name);
				nx__rec_report_md(r, &reports);
			}
		}
		nx__rec_result_release(r);
	}
	if (o->format == NX_REC_JSON)
		nx_jw_array_end(&jw);
	if (!rc && o->format == NX_REC_JSON) {
		run_json(run, mem, s, n, &reports, out);
	} else if (!rc) {
		run_md(run, mem, s, n, out);
		nx_strbuf_add(out, reports.buf ? reports.buf : "", reports.len);
	}
	nx_strbuf_release(&reports);
	free(r);
	free(s);
	return rc;
}
