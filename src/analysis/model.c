/* SPDX-License-Identifier: MIT
 * model.c: the recommend result model: lifecycle, notes, metrics, small result
 * tables copied out of DuckDB, and the window placeholders of the analysis SQL. */
#include "common/compat.h"
#include "analysis/rec.h"
#include "common/xalloc.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *const nx_rec_engine_name[NX_REC_NENG] = { "Tensor", "Vector", "Scalar", "GpSimd",
						       "DMA" };

const char *const nx_rec_bound_key[NX_REC_NBOUNDS] = {
	"total_time", "memory_bound", "memory_bound_ideal", "memory_bound_no_reloads",
	"compute_bound", "compute_bound_ideal", "compute_bound_ideal_useful", "perfect_pipeline",
};

const char *const nx_rec_gap_key[NX_REC_NGAPS] = {
	"dma_idle", "dma_inefficiency", "excess_traffic", "te_idle", "te_underutil",
	"transpose", "pipeline",
};

const char *const nx_rec_gap_label[NX_REC_NGAPS] = {
	"DMA idle", "DMA inefficiency", "Excess traffic", "TE idle", "TE underutil",
	"Transpose", "Pipeline (serialisation)",
};

void nx__rec_table_release(struct nx_rec_table *t)
{
	for (size_t i = 0; i < t->ncols; i++)
		free(t->cols[i]);
	for (size_t i = 0; i < t->nrows * t->ncols; i++)
		free(t->cells[i].text);
	free(t->cols);
	free(t->cells);
	memset(t, 0, sizeof(*t));
}

void nx__rec_result_release(struct nx_rec_result *r)
{
	for (size_t i = 0; i < r->q.nnotes; i++) {
		free(r->q.notes[i].part);
		free(r->q.notes[i].why);
	}
	free(r->q.notes);
	for (int i = 0; i < NX_REC_NINV; i++) {
		free(r->inv[i].summary);
		free(r->inv[i].note);
		nx__rec_table_release(&r->inv[i].lines);
		nx__rec_table_release(&r->inv[i].extra);
	}
	free(r->dir);
	free(r->name);
	memset(r, 0, sizeof(*r));
}

void nx__rec_note(struct nx_rec_quality *q, const char *part, const char *fmt, ...)
{
	va_list ap;
	struct nx_strbuf sb = NX_STRBUF_INIT;
	char buf[1024];

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	nx_strbuf_addstr(&sb, buf);
	NX_GROW(q->notes, q->nnotes + 1, q->cap);
	q->notes[q->nnotes].part = nx_xstrdup(part);
	q->notes[q->nnotes].why = nx_strbuf_detach(&sb, NULL);
	q->nnotes++;
}

void nx__rec_metric(struct nx_rec_inv *inv, const char *key, const char *label,
		    const char *unit, double v)
{
	if (inv->nm >= NX_REC_MAX_METRICS)
		abort(); /* a programming error: raise NX_REC_MAX_METRICS */
	inv->m[inv->nm++] = (struct nx_rec_metric){ key, label, unit, v };
}

double nx__rec_metric_get(const struct nx_rec_inv *inv, const char *key)
{
	for (size_t i = 0; i < inv->nm; i++)
		if (!strcmp(inv->m[i].key, key))
			return inv->m[i].v;
	return NAN;
}

void nx__rec_inv_init(struct nx_rec_inv *inv, const char *id, const char *title,
		      const char *group, const char *gap, const char *method)
{
	inv->id = id;
	inv->title = title;
	inv->group = group;
	inv->gap = gap;
	inv->method = method;
	inv->status = NX_REC_NOTHING;
	inv->gap_ns = NAN;
	inv->relevance_ns = 0;
}

void nx__rec_inv_set(struct nx_rec_inv *inv, int status, const char *fmt, ...)
{
	va_list ap;
	char buf[1024];

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	free(inv->summary);
	inv->summary = nx_xstrdup(buf);
	inv->status = status;
}

const char *nx__rec_cell(const struct nx_rec_table *t, size_t row, const char *col)
{
	for (size_t c = 0; c < t->ncols; c++)
		if (!strcmp(t->cols[c], col))
			return row < t->nrows ? t->cells[row * t->ncols + c].text : NULL;
	return NULL;
}

const char *nx__rec_cellq(const struct nx_rec_table *t, size_t row, const char *col)
{
	const char *s = nx__rec_cell(t, row, col);
	return s ? s : "?";
}

struct table_fill {
	struct nx_rec_table *t;
	size_t row, col;
	bool started;
};

static void table_cell(void *arg, size_t row, const char *column, int kind, const char *text)
{
	struct table_fill *f = arg;
	struct nx_rec_table *t = f->t;

	if (!f->started || row != f->row) {
		f->started = true;
		f->row = row;
		f->col = 0;
		t->nrows = row + 1;
		if (row > 0)
			NX_GROW(t->cells, t->nrows * t->ncols, t->cap);
	}
	if (row == 0) {
		/* the first row also names the columns */
		t->cols = nx_xrealloc(t->cols, (t->ncols + 1) * sizeof(*t->cols));
		t->cols[t->ncols++] = nx_xstrdup(column);
		NX_GROW(t->cells, t->ncols, t->cap);
	}
	if (f->col >= t->ncols)
		return;
	struct nx_rec_cell *c = &t->cells[row * t->ncols + f->col++];
	c->kind = kind;
	c->text = text ? nx_xstrdup(text) : NULL;
}

int nx__rec_query_table(struct nx_duck *d, const char *sql, struct nx_rec_table *t,
			struct nx_err *err)
{
	struct table_fill f = { t, 0, 0, false };

	nx__rec_table_release(t);
	return nx_duck_query_cells(d, sql, table_cell, &f, err);
}

struct row_fill {
	const char *const *names;
	double *out;
	size_t n;
};

static void row_cell(void *arg, size_t row, const char *column, int kind, const char *text)
{
	struct row_fill *f = arg;

	if (row)
		return;
	for (size_t i = 0; i < f->n; i++)
		if (!strcmp(f->names[i], column))
			f->out[i] = kind == NX_CELL_NULL || !text ? NAN
				  : kind == NX_CELL_BOOL ? !strcmp(text, "true")
				  : strtod(text, NULL);
}

int nx__rec_query_row(struct nx_duck *d, const char *sql, const char *const *names,
		      double *out, size_t n, struct nx_err *err)
{
	struct row_fill f = { names, out, n };

	for (size_t i = 0; i < n; i++)
		out[i] = NAN;
	return nx_duck_query_cells(d, sql, row_cell, &f, err);
}

void nx__rec_sql(struct nx_strbuf *sb, const struct nx_rec_result *r, const char *sql)
{
	for (const char *p = sql; *p; p++) {
		if (!strncmp(p, "{T0}", 4)) {
			nx_strbuf_addf(sb, "%" PRId64, r->t0);
			p += 3;
		} else if (!strncmp(p, "{T1}", 4)) {
			nx_strbuf_addf(sb, "%" PRId64, r->t1);
			p += 3;
		} else {
			nx_strbuf_addch(sb, *p);
		}
	}
}

double nx__rec_pipeline_cut(const struct nx_rec_result *r, int eng, double cut_ns)
{
	double before = 0, after = 0;

	if (eng < 0 || isnan(cut_ns) || cut_ns <= 0)
		return 0;
	for (int e = 0; e < NX_REC_NENG; e++) {
		double t = r->in.eng_ns[e];
		if (isnan(t))
			continue;
		before = fmax(before, t);
		after = fmax(after, e == eng ? fmax(t - cut_ns, 0) : t);
	}
	return before - after;
}
