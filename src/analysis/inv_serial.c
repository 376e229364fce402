/* SPDX-License-Identifier: MIT
 * inv_serial.c: serialisation between engines (pipeline gap). Our own method; the AWS
 * skill publishes none (docs/recommend.md, "Gap groups" and
 * "Serialisation between engines"):
 *
 *   a semaphore wait is the stretch [start_ts - evt_wait_time_ns, start_ts) before an
 *   instruction issues. Only the waits of instructions that feed the bottleneck count:
 *   its own instructions for a compute engine, the instructions that trigger DMA
 *   (HBM bytes or a DGE_TRIGGER edge) for DMA. The part of such a wait during which the
 *   bottleneck is idle is "exposed": the busiest engine has nothing to do because its
 *   next work is blocked on a semaphore, i.e. serialisation on the critical path. The
 *   finding's size is the union of the exposed stretches; each waiting source line
 *   gets its exposed time and share, and the Flow SEMAPHORE edge into the waiter names
 *   what it waited on (the producing engine and line, or the DMA variable).
 *
 * The waits come from the pass over Instruction, sorted by their start (scan.h); one
 * sweep over them, beside the bottleneck's busy runs, gives the union of the waits, each
 * wait's exposed part, and the sums per waiting line. Only the producers of the lines'
 * longest exposed waits are looked up in SQL. */
#include "common/compat.h"
#include "analysis/rec.h"
#include "analysis/scan.h"
#include "common/strbuf.h"
#include "common/xalloc.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define ENGINE_LABEL(x) \
	"CASE " x " WHEN 'tensor' THEN 'Tensor' WHEN 'vector' THEN 'Vector' " \
	"WHEN 'scalar' THEN 'Scalar' WHEN 'gpsimd' THEN 'GpSimd' WHEN 'sync' THEN 'Sync' " \
	"ELSE " x " END"

/* The lines' rows are rx_SerLines: one per waiting line with exposed waits; waits_on is
 * what the longest exposed wait of the line waited on (arg_max over the waits). */
static const char LINES_SQL[] =
	"SELECT src AS source, " ENGINE_LABEL("engine") " AS engine, waits,\n"
	"    wait_ns::BIGINT AS wait_ns, exposed_ns::BIGINT AS exposed_ns, waits_on,\n"
	"    round(exposed_ns * 100 / nullif(sum(exposed_ns) OVER (), 0), 1) AS share_pct\n"
	"FROM rx_SerLines ORDER BY exposed_ns DESC, source LIMIT 20";

/* The Flow SEMAPHORE edges into the waits in (list): a transfer's label made here, an
 * instruction's by the pass over Instruction (producer_labels). */
static const char EDGES_SQL[] =
	"SELECT f.out_id, coalesce(f.in_table = 'Instruction', false) AS inst, f.in_id,\n"
	"    CASE WHEN f.in_table = 'Instruction' THEN NULL\n"
	"         ELSE concat('DMA ', coalesce(nullif(a.variable, ''), '?')) END AS dma\n"
	"FROM rx_Flow f\n"
	"LEFT JOIN rx_DmaPacketAggregated a ON f.in_table = 'DmaPacketAggregated' AND a.id = f.in_id\n"
	"WHERE f.dependency_type = 'SEMAPHORE' AND f.out_table = 'Instruction'\n"
	"  AND f.out_id IN (%s)";

/* A waiting line: the coalesce(src, '?') of its waits. */
struct line {
	int64_t waits, wait_ns, exposed_ns;
	int64_t *eng_n, *eng_row; /* per engine: waits and the first one's row */
	int64_t best, best_row, best_id; /* the longest exposed wait, the first of equals */
	bool has_best, best_has_id;
	char *waits_on;           /* what that wait waited on (the least producer label) */
};

struct sweep {
	const struct nx_rec_scan *sc;
	struct nx_rec_stretches busy;
	struct line *lines;   /* by dictionary number + 1 (0: no source) */
	size_t nlines, nengines;
	int64_t n, waits, exposed;
};

static const char *unavailable(const struct nx_rec_result *r)
{
	if (!r->q.instructions)
		return "no Instruction rows";
	if (!r->q.with_wait)
		return "Instruction.evt_wait_time_ns is not populated";
	if (r->bottleneck < 0)
		return "no engine time";
	return NULL;
}

static void lower(const char *name, char *out, size_t size)
{
	size_t i;

	for (i = 0; name[i] && i + 1 < size; i++)
		out[i] = name[i] >= 'A' && name[i] <= 'Z' ? (char)(name[i] - 'A' + 'a') : name[i];
	out[i] = '\0';
}

/* The line of a wait: its source, NULL and '?' being one line as coalesce makes them. */
static size_t line_of(const struct nx_rec_scan *sc, int32_t src)
{
	const int32_t *q;

	if (src >= 0)
		return (size_t)src + 1;
	q = nx_strmap_find(&sc->src.map, "?", 1);
	return q ? (size_t)*q + 1 : 0;
}

static void see_exposed(struct sweep *sw, const struct nx_rec_wait *w, int64_t len, int64_t exposed)
{
	struct line *l = &sw->lines[line_of(sw->sc, w->line)];

	if (!l->eng_n) {
		l->eng_n = nx_xcalloc(sw->nengines ? sw->nengines : 1, sizeof(*l->eng_n));
		l->eng_row = nx_xcalloc(sw->nengines ? sw->nengines : 1, sizeof(*l->eng_row));
	}
	l->waits++;
	l->wait_ns += len;
	l->exposed_ns += exposed;
	if (w->engine >= 0) {
		if (!l->eng_n[w->engine]++)
			l->eng_row[w->engine] = w->row;
	}
	if (!l->has_best || exposed > l->best || (exposed == l->best && w->row < l->best_row)) {
		l->has_best = true;
		l->best = exposed;
		l->best_row = w->row;
		l->best_id = w->id;
		l->best_has_id = w->has_id;
	}
}

/* One pass over the waits in start order: the union and the exposed part of each. */
static int sweep(struct nx_duck *d, struct nx_rec_result *r, struct sweep *sw, struct nx_err *err)
{
	const struct nx_rec_scan *sc = r->scan;
	struct nx_xsort *ws = &r->scan->waits;
	struct nx_rec_union u = { 0 };
	char engine[16];
	int32_t eng = -2;
	int64_t rs, re;
	struct nx_rec_wait w;
	int rc;

	lower(nx_rec_engine_name[r->bottleneck], engine, sizeof(engine));
	rc = nx__rec_busy_runs(d, r->scan, r->bottleneck == NX_REC_ENG_DMA ? NULL : engine, &sw->busy,
			       err);
	if (rc)
		return rc;
	if (r->bottleneck != NX_REC_ENG_DMA) {
		const int32_t *id = nx_strmap_find(&sc->engine.map, engine, strlen(engine));
		eng = id ? *id : -2;
	}
	sw->nlines = sc->src.n + 1;
	sw->nengines = sc->engine.n;
	sw->lines = nx_xcalloc(sw->nlines, sizeof(*sw->lines));
	while ((rc = nx_xsort_next(ws, &w, err)) > 0) {
		bool feeds = r->bottleneck == NX_REC_ENG_DMA ? w.feeds_dma : w.engine == eng;
		int64_t s, e, cov;

		if (!feeds || !(w.start > r->t0 && w.from < r->t1))
			continue;
		s = w.from > r->t0 ? w.from : r->t0;
		e = w.start < r->t1 ? w.start : r->t1;
		sw->n++;
		sw->waits += e - s;
		if (nx__rec_union_add(&u, s, e, &rs, &re))
			sw->exposed += (re - rs) - nx__rec_stretches_cover(&sw->busy, rs, re);
		/* the SQL it replaced joined a wait to the busy time by its instruction id */
		cov = w.has_id ? nx__rec_stretches_cover(&sw->busy, s, e) : 0;
		if ((e - s) - cov > 0)
			see_exposed(sw, &w, e - s, (e - s) - cov);
	}
	if (rc < 0)
		return rc;
	if (nx__rec_union_end(&u, &rs, &re))
		sw->exposed += (re - rs) - nx__rec_stretches_cover(&sw->busy, rs, re);
	return 0;
}

/* mode(engine) of a line: the most waits, the first met of equals. */
static int32_t mode_engine(const struct sweep *sw, const struct line *l)
{
	int32_t best = -1;

	for (size_t k = 0; k < sw->nengines; k++) {
		if (!l->eng_n[k])
			continue;
		if (best < 0 || l->eng_n[k] > l->eng_n[best] ||
		    (l->eng_n[k] == l->eng_n[best] && l->eng_row[k] < l->eng_row[best]))
			best = (int32_t)k;
	}
	return best;
}

/* DuckDB's order of VARCHARs: bytes, then length. */
static int text_cmp(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b);
	int c = memcmp(a, b, la < lb ? la : lb);

	return c ? c : (la > lb) - (la < lb);
}

/* Keeps the least of *slot and label (which it takes). */
static void keep_least(char **slot, char *label)
{
	if (!*slot || text_cmp(label, *slot) < 0) {
		free(*slot);
		*slot = label;
	} else {
		free(label);
	}
}

/* A Flow edge into a wait. */
struct sem_edge {
	int64_t out, in;
	bool inst, has_in;
	char *dma;
};

struct edges {
	struct sem_edge *v;
	size_t n, cap;
	/* the instructions the edges start at: sorted ids, each one's least label */
	int64_t *ids;
	char **labels;
	size_t nids;
};

static void edge_cell(void *arg, size_t row, const char *column, int kind, const char *text)
{
	struct edges *e = arg;

	if (row >= e->n) {
		NX_GROW(e->v, row + 1, e->cap);
		memset(&e->v[row], 0, sizeof(e->v[row]));
		e->n = row + 1;
	}
	struct sem_edge *x = &e->v[row];
	if (!strcmp(column, "out_id") && kind == NX_CELL_INT)
		x->out = strtoll(text, NULL, 10);
	else if (!strcmp(column, "inst"))
		x->inst = kind == NX_CELL_BOOL && !strcmp(text, "true");
	else if (!strcmp(column, "in_id") && kind == NX_CELL_INT)
		x->in = strtoll(text, NULL, 10), x->has_in = true;
	else if (!strcmp(column, "dma") && kind != NX_CELL_NULL)
		x->dma = nx_xstrdup(text);
}

static int cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return (x > y) - (x < y);
}

/* The label of an instruction as a producer: its engine's name and its line. */
static char *inst_label(const char *engine, size_t elen, const char *src, size_t slen)
{
	static const char *const from[] = { "tensor", "vector", "scalar", "gpsimd", "sync" };
	static const char *const to[] = { "Tensor", "Vector", "Scalar", "GpSimd", "Sync" };
	struct nx_strbuf sb = NX_STRBUF_INIT;

	if (engine) {
		size_t k;
		for (k = 0; k < 5; k++)
			if (strlen(from[k]) == elen && !memcmp(from[k], engine, elen))
				break;
		if (k < 5)
			nx_strbuf_addstr(&sb, to[k]);
		else
			nx_strbuf_add(&sb, engine, elen);
	}
	nx_strbuf_addch(&sb, ' ');
	if (src)
		nx_strbuf_add(&sb, src, slen);
	else
		nx_strbuf_addch(&sb, '?');
	return nx_strbuf_detach(&sb, NULL);
}

static int producer_batch(void *arg, const struct nx_pqr_batch *b, struct nx_err *err)
{
	struct edges *e = arg;
	char low[32];

	(void)err;
	for (size_t r = 0; r < b->rows; r++) {
		int64_t id;
		const char *eng = NULL, *src = NULL;
		size_t elen = 0, slen = 0;
		if (!nx__rec_i64(b, 0, r, &id) ||
		    !bsearch(&id, e->ids, e->nids, sizeof(*e->ids), cmp_i64))
			continue;
		int64_t *at = bsearch(&id, e->ids, e->nids, sizeof(*e->ids), cmp_i64);
		if (nx__rec_str(b, 1, r, &eng, &elen)) {
			/* lower(engine), as the view had it */
			size_t n = elen < sizeof(low) ? elen : sizeof(low);
			for (size_t i = 0; i < n; i++)
				low[i] = eng[i] >= 'A' && eng[i] <= 'Z' ? (char)(eng[i] - 'A' + 'a')
									  : eng[i];
			eng = elen < sizeof(low) ? low : eng;
		}
		if (nx__rec_str(b, 2, r, &src, &slen)) {
			/* the base name, as the view had it (scan_inst.c) */
			const char *nl = memchr(src, '\n', slen);
			size_t head = nl ? (size_t)(nl - src) : slen, from = 0;
			for (size_t i = 0; i < head; i++)
				if (src[i] == '/')
					from = i + 1;
			src = from < slen ? src + from : NULL;
			slen -= from;
		}
		keep_least(&e->labels[at - e->ids], inst_label(eng, elen, src, slen));
	}
	return 0;
}

/* What each line's longest exposed wait waited on: the least label of the Flow
 * SEMAPHORE edges into it, an instruction's (engine and line; " ?" when no instruction
 * has its id) or a transfer's ("DMA <variable>"). */
static int producers(struct nx_duck *d, const struct nx_rec_result *r, struct sweep *sw,
		     struct nx_err *err)
{
	static const struct nx_rec_colspec cols[] = {
		{ "id", NX_REC_BIGINT }, { "engine", NX_REC_VARCHAR },
		{ "bir_debug_info_source_location", NX_REC_VARCHAR },
	};
	struct nx_strbuf ids = NX_STRBUF_INIT, sql = NX_STRBUF_INIT;
	struct edges e = { 0 };
	int rc = 0;

	for (size_t i = 0; i < sw->nlines; i++)
		if (sw->lines[i].waits && sw->lines[i].best_has_id)
			nx_strbuf_addf(&ids, "%s%" PRId64, ids.len ? ", " : "", sw->lines[i].best_id);
	if (!ids.len)
		goto out;
	nx_strbuf_addf(&sql, EDGES_SQL, ids.buf);
	if ((rc = nx_duck_query_cells(d, sql.buf, edge_cell, &e, err)))
		goto out;
	e.ids = nx_xcalloc(e.n ? e.n : 1, sizeof(*e.ids));
	for (size_t i = 0; i < e.n; i++)
		if (e.v[i].inst && e.v[i].has_in)
			e.ids[e.nids++] = e.v[i].in;
	qsort(e.ids, e.nids, sizeof(*e.ids), cmp_i64);
	size_t u = 0;
	for (size_t i = 0; i < e.nids; i++)
		if (!u || e.ids[u - 1] != e.ids[i])
			e.ids[u++] = e.ids[i];
	e.nids = u;
	e.labels = nx_xcalloc(u ? u : 1, sizeof(*e.labels));
	if (u && (rc = nx__rec_read_pass(d, r->scan->dir, "Instruction", cols, 3, NULL, NULL,
					 producer_batch, &e, err)))
		goto out;
	for (size_t i = 0; i < sw->nlines; i++) {
		struct line *l = &sw->lines[i];
		if (!l->waits || !l->best_has_id)
			continue;
		for (size_t k = 0; k < e.n; k++) {
			const struct sem_edge *x = &e.v[k];
			if (x->out != l->best_id)
				continue;
			if (!x->inst) {
				keep_least(&l->waits_on, nx_xstrdup(x->dma ? x->dma : "DMA ?"));
				continue;
			}
			int64_t *at = x->has_in ? bsearch(&x->in, e.ids, e.nids, sizeof(*e.ids),
							  cmp_i64) : NULL;
			const char *label = at && e.labels[at - e.ids] ? e.labels[at - e.ids] : " ?";
			keep_least(&l->waits_on, nx_xstrdup(label));
		}
	}
out:
	for (size_t i = 0; i < e.n; i++)
		free(e.v[i].dma);
	for (size_t i = 0; i < e.nids; i++)
		free(e.labels[i]);
	free(e.labels);
	free(e.ids);
	free(e.v);
	nx_strbuf_release(&ids);
	nx_strbuf_release(&sql);
	return rc;
}

/* rx_SerLines from the sweep's lines. */
static int write_lines(struct nx_duck *d, const struct sweep *sw, struct nx_err *err)
{
	struct nx_duck_appender *a = NULL;
	int rc = nx_duck_exec(d, "CREATE OR REPLACE TABLE rx_SerLines (src VARCHAR, engine "
			      "VARCHAR, waits BIGINT, wait_ns BIGINT, exposed_ns BIGINT, "
			      "waits_on VARCHAR)", err);

	if (!rc)
		rc = nx_duck_appender_open(d, "rx_SerLines", &a, err);
	for (size_t i = 0; !rc && i < sw->nlines; i++) {
		const struct line *l = &sw->lines[i];
		const char *src = i ? sw->sc->src.text[i - 1] : "?";
		int32_t eng;
		if (!l->waits)
			continue;
		eng = mode_engine(sw, l);
		nx_duck_append_str(a, src, strlen(src));
		if (eng >= 0)
			nx_duck_append_str(a, sw->sc->engine.text[eng], strlen(sw->sc->engine.text[eng]));
		else
			nx_duck_append_null(a);
		nx_duck_append_i64(a, l->waits);
		nx_duck_append_i64(a, l->wait_ns);
		nx_duck_append_i64(a, l->exposed_ns);
		const char *on = l->waits_on ? l->waits_on : "?";
		nx_duck_append_str(a, on, strlen(on));
		rc = nx_duck_append_end_row(a, err);
	}
	int rc2 = nx_duck_appender_close(a, err);
	return rc ? rc : rc2;
}

static void release(struct sweep *sw)
{
	for (size_t i = 0; i < sw->nlines; i++) {
		free(sw->lines[i].eng_n);
		free(sw->lines[i].eng_row);
		free(sw->lines[i].waits_on);
	}
	free(sw->lines);
	nx__rec_stretches_release(&sw->busy);
}

static int run(struct nx_duck *d, struct nx_rec_result *r, struct nx_rec_inv *inv,
	       struct nx_err *err)
{
	struct sweep sw;
	double v[3], total = r->bound[NX_REC_B_TOTAL], gap = r->gap[NX_REC_G_PIPELINE];
	int rc;

	memset(&sw, 0, sizeof(sw));
	sw.sc = r->scan;
	inv->gap_ns = gap;
	rc = sweep(d, r, &sw, err);
	if (rc)
		goto out;
	v[0] = (double)sw.exposed;
	v[1] = (double)sw.waits;
	v[2] = (double)sw.n;
	nx__rec_metric(inv, "pipeline_gap_ns", "pipeline gap", "ns", gap);
	nx__rec_metric(inv, "semaphore_waits", "semaphore waits of the bottleneck's feeders", "", v[2]);
	nx__rec_metric(inv, "wait_ns", "summed wait time", "ns", v[1]);
	nx__rec_metric(inv, "exposed_ns", "bottleneck idle while its feeders wait (union)", "ns",
		       v[0]);
	nx__rec_metric(inv, "exposed_pct_of_total", "exposed, % of total", "%",
		       total > 0 ? v[0] * 100 / total : NAN);
	if (!r->q.flow_sem)
		inv->note = nx_xasprintf("Flow has no SEMAPHORE edges: the producers waited on "
					 "are unknown");
	if (!(v[0] >= 0.01 * total)) {
		nx__rec_inv_set(inv, NX_REC_NOTHING, "the bottleneck (%s) is idle while its next work "
				"waits on a semaphore for %.2f us, under 1%% of the total",
				nx_rec_engine_name[r->bottleneck], v[0] / 1e3);
		goto out;
	}
	if ((rc = producers(d, r, &sw, err)) || (rc = write_lines(d, &sw, err)) ||
	    (rc = nx__rec_query_table(d, LINES_SQL, &inv->lines, err)))
		goto out;
	inv->relevance_ns = isnan(gap) ? v[0] : fmin(v[0], fmax(gap, 0));
	nx__rec_inv_set(inv, NX_REC_FOUND, "for %.2f us (%.1f%% of the total) the bottleneck (%s) is idle "
			"while its next work waits on a semaphore; %s waits most (%s%%), on %s",
			v[0] / 1e3, v[0] * 100 / total, nx_rec_engine_name[r->bottleneck],
			nx__rec_cellq(&inv->lines, 0, "source"),
			nx__rec_cellq(&inv->lines, 0, "share_pct"),
			nx__rec_cellq(&inv->lines, 0, "waits_on"));
out:
	release(&sw);
	return rc;
}

/* What to change in the kernel for a finding (render). */
static void remedies(const struct nx_rec_result *r, const struct nx_rec_inv *inv,
		     struct nx_strbuf *out)
{
	(void)r;
	(void)inv;
	nx_strbuf_addstr(out, "The bottleneck engine waits on a semaphore for work from "
			 "another engine. Overlap them: double-buffer the tiles (two or more "
			 "buffers per pool) so the producer fills buffer i+1 while the "
			 "consumer works on buffer i, and issue the loads of the next "
			 "iteration before the compute of this one.\n"
			 "Split large dependencies: a consumer that needs a whole tile "
			 "waits for its last byte; smaller tiles in a deeper pipeline let it "
			 "start earlier.\n");
}

const struct nx_rec_inv_def nx__rec_inv_serial = {
	.id = "serialisation", .title = "Serialisation between engines (semaphore waits)",
	.group = "pipeline", .gap = "Pipeline (serialisation)", .method = "ours",
	.what = "serialisation", .unavailable = unavailable, .run = run, .remedies = remedies,
};
