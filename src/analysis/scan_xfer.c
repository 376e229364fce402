/* SPDX-License-Identifier: MIT
 * scan_xfer.c: the DMA transfers of the window with their attribution, for DMA efficiency
 * and redundant DMA (docs/recommend.md, "Memory and time"), as a streaming merge in C of
 * three streams sorted by transfer id: the window's DmaPacketAggregated rows (read in
 * file order into an external sort), the attributed Flow edges (sorted by the
 * Instruction pass, scan_inst.c) and the packets' busy time per transfer (summed by the
 * DmaPacket pass, scan_packets.c). What the two investigations' SQL joined and grouped
 * in DuckDB is grouped here per source line (and per line and tensor), bounded by the
 * program, not the trace, and written to small tables their SQL reads: rx_XferLine,
 * rx_XferLoad, rx_XferSpill and rx_XferMoved (the bytes per tensor); the window's bytes
 * and the spills' bytes are two sums. */
#include "common/compat.h"
#include "analysis/scan.h"
#include "analysis/rec.h"
#include "common/xalloc.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

enum { D_ID, D_START, D_BYTES, D_SOURCE, D_DEST, D_VAR, D_TP, D_WPARTS, D_RPARTS, D_N };
static const struct nx_rec_colspec dpa_cols[D_N] = {
	{ "id", NX_REC_BIGINT }, { "start_ts", NX_REC_BIGINT },
	{ "transfer_bytes", NX_REC_BIGINT }, { "source", NX_REC_VARCHAR },
	{ "dest", NX_REC_VARCHAR }, { "variable", NX_REC_VARCHAR }, { "is_transpose_mode", NX_REC_BIGINT },
	{ "write_num_sbuf_partitions", NX_REC_BIGINT },
	{ "read_num_sbuf_partitions", NX_REC_BIGINT },
};

/* What a transfer's flags say (NULL cells have theirs clear). */
enum {
	X_BYTES = 1,      /* transfer_bytes is known */
	X_WPARTS = 2,     /* write_num_sbuf_partitions is known */
	X_RPARTS = 4,     /* read_num_sbuf_partitions is known */
	X_INPUT = 8,      /* source = '[[INPUT]]' */
	X_VIRTUAL = 16,   /* source LIKE '%VIRTUAL%' */
	X_TRANSPOSE = 32, /* is_transpose_mode is true */
	X_SOURCE = 64,    /* source is known */
};

/* A DmaPacketAggregated row in the window, sorted by id, then file row. */
struct xfer {
	int64_t id, row, start, bytes, wparts, rparts;
	int32_t var; /* in the merge's tensor names, -1 for NULL */
	uint32_t flags;
};

/* The sorts' buffers: beyond them, sorted runs on disk. */
#define XFER_SORT_BYTES ((size_t)2 << 20)

static int xfer_cmp(const void *a, const void *b)
{
	const struct xfer *x = a, *y = b;

	if (x->id != y->id)
		return x->id < y->id ? -1 : 1;
	return x->row < y->row ? -1 : x->row > y->row;
}

int nx__rec_edge_cmp(const void *a, const void *b)
{
	const struct nx_rec_edge *x = a, *y = b;

	if (x->dpa_id != y->dpa_id)
		return x->dpa_id < y->dpa_id ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

int nx__rec_busy_cmp(const void *a, const void *b)
{
	const struct nx_rec_busy *x = a, *y = b;

	return x->id < y->id ? -1 : x->id > y->id;
}

/* ---- the packets' busy time per transfer (the DmaPacket pass) --------------------------- */

void nx__rec_xsort_restart(struct nx_xsort *s, bool *open, const char *dir, size_t size,
			   nx_xsort_cmp cmp, size_t mem_bytes)
{
	if (*open)
		nx_xsort_release(s);
	nx_xsort_init(s, dir, size, cmp, mem_bytes);
	*open = true;
}

void nx__rec_busy_reset(struct nx_rec_scan *sc)
{
	nx__rec_xsort_restart(&sc->busy, &sc->busy_open, sc->spill, sizeof(struct nx_rec_busy),
			      nx__rec_busy_cmp, XFER_SORT_BYTES);
	sc->busy_done = false;
	if (!sc->busy_cache)
		sc->busy_cache = nx_xcalloc(NX_REC_BUSY_CACHE, sizeof(*sc->busy_cache));
	memset(sc->busy_cache, 0, NX_REC_BUSY_CACHE * sizeof(*sc->busy_cache));
}

/* Packets of one transfer come close together in start order: their durations are
 * summed in a small cache by transfer id, and a sum goes to the sort when another id
 * takes its slot (a transfer may so reach the sort in parts; the merge adds them). */
int nx__rec_busy_add(struct nx_rec_scan *sc, int64_t id, int64_t ns, struct nx_err *err)
{
	struct nx_rec_busy_slot *s = &sc->busy_cache[(uint64_t)id * 0x9E3779B97F4A7C15u >>
						     (64 - NX_REC_BUSY_CACHE_BITS)];

	if (s->used && s->b.id != id) {
		int rc = nx_xsort_add(&sc->busy, &s->b, err);
		if (rc)
			return rc;
		s->used = false;
	}
	if (!s->used) {
		s->b.id = id;
		s->b.ns = 0;
		s->used = true;
	}
	s->b.ns += ns;
	return 0;
}

int nx__rec_busy_finish(struct nx_rec_scan *sc, struct nx_err *err)
{
	int rc = 0;

	for (size_t i = 0; !rc && i < NX_REC_BUSY_CACHE; i++)
		if (sc->busy_cache[i].used) {
			rc = nx_xsort_add(&sc->busy, &sc->busy_cache[i].b, err);
			sc->busy_cache[i].used = false;
		}
	if (!rc)
		rc = nx_xsort_finish(&sc->busy, err);
	sc->busy_done = !rc;
	return rc;
}

bool nx__rec_xfers_by_sql(void)
{
	const char *v = getenv("NX_REC_XFER");

	return v && !strcmp(v, "sql");
}

/* ---- the window's transfers --------------------------------------------------------- */

/* A sum of transfer_bytes (NULL when no cell was known) and its rows. */
struct sum_group {
	int64_t n, bytes;
	bool has_bytes;
	int32_t var; /* spills: any_value(variable), the first known one */
};

struct dpa_pass {
	struct nx_rec_scan *sc;
	int64_t t0, t1, row;
	struct nx_xsort sort;
	bool open;
	struct nx_rec_dict vars;
	/* over every row in the window: the bytes (DMA efficiency's coverage), the bytes
	 * per tensor (redundant DMA's moved bytes) and those of spills by destination and
	 * by source */
	struct sum_group all, virt_dest, virt_src;
	struct nx_strmap moved; /* tensor number (-1 for NULL) -> struct sum_group */
};

static void dpa_reset(void *arg)
{
	struct dpa_pass *p = arg;

	nx__rec_xsort_restart(&p->sort, &p->open, p->sc->spill, sizeof(struct xfer), xfer_cmp,
			      XFER_SORT_BYTES);
	nx__rec_dict_release(&p->vars);
	nx__rec_dict_init(&p->vars);
	nx_strmap_release(&p->moved);
	nx_strmap_init(&p->moved, sizeof(struct sum_group));
	memset(&p->all, 0, sizeof(p->all));
	memset(&p->virt_dest, 0, sizeof(p->virt_dest));
	memset(&p->virt_src, 0, sizeof(p->virt_src));
	p->row = 0;
}

static void sum_bytes(struct sum_group *g, bool has, int64_t bytes)
{
	g->n++;
	if (has) {
		g->bytes += bytes;
		g->has_bytes = true;
	}
}

static bool contains(const char *s, size_t len, const char *what)
{
	size_t n = strlen(what);

	for (size_t i = 0; i + n <= len; i++)
		if (!memcmp(s + i, what, n))
			return true;
	return false;
}

static int dpa_batch(void *arg, const struct nx_pqr_batch *b, struct nx_err *err)
{
	struct dpa_pass *p = arg;
	int rc = 0;

	for (size_t r = 0; !rc && r < b->rows; r++, p->row++) {
		struct xfer x = { .row = p->row, .var = -1 };
		const char *s;
		size_t len;
		int64_t tp;

		/* the SQL's window on start_ts */
		if (!nx__rec_i64(b, D_START, r, &x.start) || x.start < p->t0 || x.start >= p->t1)
			continue;
		x.flags |= nx__rec_i64(b, D_BYTES, r, &x.bytes) ? X_BYTES : 0;
		x.flags |= nx__rec_i64(b, D_WPARTS, r, &x.wparts) ? X_WPARTS : 0;
		x.flags |= nx__rec_i64(b, D_RPARTS, r, &x.rparts) ? X_RPARTS : 0;
		x.flags |= nx__rec_i64(b, D_TP, r, &tp) && tp ? X_TRANSPOSE : 0;
		if (nx__rec_str(b, D_SOURCE, r, &s, &len)) {
			x.flags |= X_SOURCE;
			x.flags |= len == 9 && !memcmp(s, "[[INPUT]]", 9) ? X_INPUT : 0;
			x.flags |= contains(s, len, "VIRTUAL") ? X_VIRTUAL : 0;
		}
		if (nx__rec_str(b, D_VAR, r, &s, &len))
			x.var = nx__rec_dict_id(&p->vars, s, len);
		bool has = x.flags & X_BYTES;
		sum_bytes(&p->all, has, x.bytes);
		sum_bytes(nx_strmap_get(&p->moved, (const char *)&x.var, sizeof(x.var), NULL), has,
			  x.bytes);
		if (x.flags & X_VIRTUAL)
			sum_bytes(&p->virt_src, has, x.bytes);
		if (nx__rec_str(b, D_DEST, r, &s, &len) && contains(s, len, "VIRTUAL"))
			sum_bytes(&p->virt_dest, has, x.bytes);
		/* the join on id */
		if (nx__rec_i64(b, D_ID, r, &x.id))
			rc = nx_xsort_add(&p->sort, &x, err);
	}
	return rc;
}

/* ---- the groups ------------------------------------------------------------------------ */

/* A value's count in a multiset, and where it first came (mode's ties). */
struct tally {
	int64_t n, first;
};

/* DMA efficiency's group of a line (inv_dma.c): the columns of its former SQL's g. */
struct line_group {
	int64_t xfers, bytes, busy;
	bool has_bytes, has_first, first_input;
	int64_t first_start;
	struct nx_strmap vars;   /* tensor number -> struct tally: mode(variable) */
	struct nx_strmap med[3]; /* transfer_bytes, write and read partitions -> count */
};

/* Redundant DMA's input loads by (line, tensor) and spills by line (inv_reload.c). */
struct load_key {
	int32_t line, var;
};

/* A sorted stream read one record ahead. */
struct head {
	struct nx_xsort *s;
	void *rec;
	bool more, ahead;
};

struct merge {
	struct nx_strmap lines;  /* line number -> struct line_group */
	struct nx_strmap loads;  /* struct load_key -> struct sum_group */
	struct nx_strmap spills; /* line number (-1 for none) -> struct sum_group */
	int64_t seen;            /* (transfer, edge) pairs, mode's tie order */
	/* the edges and busy time of the transfer id at hand */
	struct nx_rec_edge *edges;
	size_t nedges, edges_cap;
	struct head edge, busy;
	struct nx_rec_edge edge_rec;
	struct nx_rec_busy busy_rec;
};

static void sum_add(struct sum_group *g, const struct xfer *x)
{
	g->n++;
	if (x->flags & X_BYTES) {
		g->bytes += x->bytes;
		g->has_bytes = true;
	}
}

static void tally(struct nx_strmap *m, const void *key, size_t klen, int64_t first)
{
	bool added;
	struct tally *t = nx_strmap_get(m, key, klen, &added);

	if (added)
		t->first = first;
	t->n++;
}

static void line_add(struct merge *m, const struct xfer *x, const struct nx_rec_edge *e,
		     int64_t busy)
{
	bool added;
	struct line_group *g = nx_strmap_get(&m->lines, (const char *)&e->line, sizeof(e->line),
					     &added);

	if (added) {
		nx_strmap_init(&g->vars, sizeof(struct tally));
		for (int k = 0; k < 3; k++)
			nx_strmap_init(&g->med[k], sizeof(struct tally));
	}
	g->xfers++;
	g->busy += busy;
	if (x->flags & X_BYTES) {
		g->bytes += x->bytes;
		g->has_bytes = true;
		tally(&g->med[0], (const char *)&x->bytes, sizeof(x->bytes), 0);
	}
	if (x->flags & X_WPARTS)
		tally(&g->med[1], (const char *)&x->wparts, sizeof(x->wparts), 0);
	if (x->flags & X_RPARTS)
		tally(&g->med[2], (const char *)&x->rparts, sizeof(x->rparts), 0);
	if (x->var >= 0)
		tally(&g->vars, (const char *)&x->var, sizeof(x->var), m->seen);
	/* arg_min(source, start_ts): the earliest start with a source, the first of equals */
	if ((x->flags & X_SOURCE) && (!g->has_first || x->start < g->first_start)) {
		g->has_first = true;
		g->first_start = x->start;
		g->first_input = (x->flags & X_INPUT) != 0;
	}
}

/* One (transfer, edge) pair of the former joins. */
static void pair(struct merge *m, const struct xfer *x, const struct nx_rec_edge *e, int64_t busy)
{
	bool added;

	m->seen++;
	if (e->hbm && e->line >= 0 && !(x->flags & X_TRANSPOSE))
		line_add(m, x, e, busy);
	if (e->rd && e->line >= 0 && (x->flags & X_INPUT)) {
		struct load_key k = { e->line, x->var };
		sum_add(nx_strmap_get(&m->loads, (const char *)&k, sizeof(k), NULL), x);
	}
	if (x->flags & X_VIRTUAL) {
		struct sum_group *g = nx_strmap_get(&m->spills, (const char *)&e->line,
						    sizeof(e->line), &added);
		if (added)
			g->var = -1;
		sum_add(g, x);
		if (g->var < 0)
			g->var = x->var;
	}
}

/* The id (the first member) of a sorted stream's head record, read when needed: 1, 0 at
 * the stream's end, or an error. */
static int head_id(struct head *h, int64_t *id, struct nx_err *err)
{
	if (!h->ahead && h->more) {
		int rc = nx_xsort_next(h->s, h->rec, err);
		if (rc < 0)
			return rc;
		h->more = h->ahead = rc == 1;
	}
	if (!h->ahead)
		return 0;
	memcpy(id, h->rec, sizeof(*id));
	return 1;
}

/* The edges of transfer id into m->edges, and its packets' busy time. */
static int heads_to(struct merge *m, int64_t id, int64_t *busy, struct nx_err *err)
{
	int64_t at;
	int rc;

	m->nedges = 0;
	while ((rc = head_id(&m->edge, &at, err)) == 1 && at <= id) {
		if (at == id) {
			NX_GROW(m->edges, m->nedges + 1, m->edges_cap);
			m->edges[m->nedges++] = m->edge_rec;
		}
		m->edge.ahead = false;
	}
	*busy = 0;
	while (rc >= 0 && (rc = head_id(&m->busy, &at, err)) == 1 && at <= id) {
		if (at == id)
			*busy += m->busy_rec.ns;
		m->busy.ahead = false;
	}
	return rc < 0 ? rc : 0;
}

static int merge_run(struct nx_rec_scan *sc, struct dpa_pass *p, struct merge *m,
		     struct nx_err *err)
{
	struct xfer x;
	int64_t id = 0, busy = 0;
	bool any = false;
	int rc;

	m->edge = (struct head){ .s = &sc->edges, .rec = &m->edge_rec, .more = true };
	m->busy = (struct head){ .s = &sc->busy, .rec = &m->busy_rec, .more = true };
	while ((rc = nx_xsort_next(&p->sort, &x, err)) == 1) {
		if (!any || x.id != id) {
			any = true;
			id = x.id;
			if ((rc = heads_to(m, id, &busy, err)))
				return rc;
		}
		for (size_t i = 0; i < m->nedges; i++)
			pair(m, &x, &m->edges[i], busy);
	}
	return rc;
}

/* ---- the tables ------------------------------------------------------------------------ */

static void append_text(struct nx_duck_appender *a, const struct nx_rec_dict *d, int32_t id)
{
	if (id >= 0)
		nx_duck_append_str(a, d->text[id], strlen(d->text[id]));
	else
		nx_duck_append_null(a);
}

static void append_sum(struct nx_duck_appender *a, const struct sum_group *g)
{
	nx_duck_append_i64(a, g->n);
	if (g->has_bytes)
		nx_duck_append_f64(a, (double)g->bytes);
	else
		nx_duck_append_null(a);
}

struct valued {
	int64_t v, n;
};

static int by_value(const void *a, const void *b)
{
	const struct valued *x = a, *y = b;

	return x->v < y->v ? -1 : x->v > y->v;
}

/* floor(median(x))::BIGINT of DuckDB over the multiset: the middle value, or between
 * the two middle ones, interpolated as DuckDB does. */
static void append_median(struct nx_duck_appender *a, const struct nx_strmap *m)
{
	struct valued *v = nx_xcalloc(m->used ? m->used : 1, sizeof(*v));
	const struct tally *t;
	const char *key;
	size_t pos = 0, n = 0, klen;
	int64_t total = 0, lo = 0, hi = 0, seen = 0;

	while ((t = nx_strmap_next(m, &pos, &key, &klen))) {
		memcpy(&v[n].v, key, sizeof(v[n].v));
		v[n++].n = t->n;
		total += t->n;
	}
	if (!total) {
		free(v);
		nx_duck_append_null(a);
		return;
	}
	qsort(v, n, sizeof(*v), by_value);
	int64_t at_lo = (total - 1) / 2, at_hi = total / 2;
	for (size_t i = 0; i < n; i++) {
		if (seen <= at_lo && at_lo < seen + v[i].n)
			lo = v[i].v;
		if (seen <= at_hi && at_hi < seen + v[i].n)
			hi = v[i].v;
		seen += v[i].n;
	}
	free(v);
	double mid = lo == hi ? (double)lo : (double)lo + ((double)hi - (double)lo) * 0.5;
	nx_duck_append_i64(a, (int64_t)floor(mid));
}

/* mode(variable): the most frequent, the first to come of equals. */
static int32_t mode_of(const struct nx_strmap *m)
{
	const struct tally *t, *best = NULL;
	const char *key;
	size_t pos = 0, klen;
	int32_t var = -1;

	while ((t = nx_strmap_next(m, &pos, &key, &klen)))
		if (!best || t->n > best->n || (t->n == best->n && t->first < best->first)) {
			best = t;
			memcpy(&var, key, sizeof(var));
		}
	return var;
}

static int write_lines(struct nx_duck *d, const struct nx_rec_scan *sc, struct merge *m,
		       const struct nx_rec_dict *vars, struct nx_err *err)
{
	struct nx_duck_appender *a = NULL;
	const struct line_group *g;
	const char *key;
	size_t pos = 0, klen;
	int32_t line;
	int rc = nx_duck_exec(d, "CREATE OR REPLACE TABLE rx_XferLine (src VARCHAR, xfers BIGINT, "
			      "bytes DOUBLE, tensor VARCHAR, first_input BOOLEAN, "
			      "xfer_bytes BIGINT, wparts BIGINT, rparts BIGINT, busy DOUBLE)", err);

	if (!rc)
		rc = nx_duck_appender_open(d, "rx_XferLine", &a, err);
	while (!rc && (g = nx_strmap_next(&m->lines, &pos, &key, &klen))) {
		memcpy(&line, key, sizeof(line));
		append_text(a, &sc->src, line);
		nx_duck_append_i64(a, g->xfers);
		if (g->has_bytes)
			nx_duck_append_f64(a, (double)g->bytes);
		else
			nx_duck_append_null(a);
		append_text(a, vars, mode_of(&g->vars));
		if (g->has_first)
			nx_duck_append_bool(a, g->first_input);
		else
			nx_duck_append_null(a);
		for (int k = 0; k < 3; k++)
			append_median(a, &g->med[k]);
		nx_duck_append_f64(a, (double)g->busy);
		rc = nx_duck_append_end_row(a, err);
	}
	int rc2 = nx_duck_appender_close(a, err);
	return rc ? rc : rc2;
}

static int write_sums(struct nx_duck *d, const struct nx_rec_scan *sc, struct merge *m,
		      const struct nx_rec_dict *vars, struct nx_err *err)
{
	struct nx_duck_appender *a = NULL;
	const struct sum_group *g;
	const char *key;
	size_t pos = 0, klen;
	int rc = nx_duck_exec(d, "CREATE OR REPLACE TABLE rx_XferLoad (src VARCHAR, "
			      "variable VARCHAR, n BIGINT, bytes DOUBLE); CREATE OR REPLACE TABLE "
			      "rx_XferSpill (src VARCHAR, tensor VARCHAR, n BIGINT, bytes DOUBLE)",
			      err);

	if (!rc)
		rc = nx_duck_appender_open(d, "rx_XferLoad", &a, err);
	while (!rc && (g = nx_strmap_next(&m->loads, &pos, &key, &klen))) {
		struct load_key k;
		memcpy(&k, key, sizeof(k));
		append_text(a, &sc->src, k.line);
		append_text(a, vars, k.var);
		append_sum(a, g);
		rc = nx_duck_append_end_row(a, err);
	}
	int rc2 = nx_duck_appender_close(a, err);
	rc = rc ? rc : rc2;
	a = NULL;
	pos = 0;
	if (!rc)
		rc = nx_duck_appender_open(d, "rx_XferSpill", &a, err);
	while (!rc && (g = nx_strmap_next(&m->spills, &pos, &key, &klen))) {
		int32_t line;
		memcpy(&line, key, sizeof(line));
		append_text(a, &sc->src, line);
		append_text(a, vars, g->var);
		append_sum(a, g);
		rc = nx_duck_append_end_row(a, err);
	}
	rc2 = nx_duck_appender_close(a, err);
	return rc ? rc : rc2;
}

/* Redundant DMA's moved bytes per tensor (rx_XferMoved). */
static int write_moved(struct nx_duck *d, struct dpa_pass *p, struct nx_err *err)
{
	struct nx_duck_appender *a = NULL;
	const struct sum_group *g;
	const char *key;
	size_t pos = 0, klen;
	int rc = nx_duck_exec(d, "CREATE OR REPLACE TABLE rx_XferMoved (variable VARCHAR, "
			      "total DOUBLE)", err);

	if (!rc)
		rc = nx_duck_appender_open(d, "rx_XferMoved", &a, err);
	while (!rc && (g = nx_strmap_next(&p->moved, &pos, &key, &klen))) {
		int32_t var;
		memcpy(&var, key, sizeof(var));
		append_text(a, &p->vars, var);
		if (g->has_bytes)
			nx_duck_append_f64(a, (double)g->bytes);
		else
			nx_duck_append_null(a);
		rc = nx_duck_append_end_row(a, err);
	}
	int rc2 = nx_duck_appender_close(a, err);
	return rc ? rc : rc2;
}

static void merge_release(struct merge *m)
{
	size_t pos = 0;
	struct line_group *g;

	while ((g = nx_strmap_next(&m->lines, &pos, NULL, NULL))) {
		nx_strmap_release(&g->vars);
		for (int k = 0; k < 3; k++)
			nx_strmap_release(&g->med[k]);
	}
	nx_strmap_release(&m->lines);
	nx_strmap_release(&m->loads);
	nx_strmap_release(&m->spills);
	free(m->edges);
}

int nx__rec_scan_xfers(struct nx_duck *d, struct nx_rec_scan *sc, int64_t t0, int64_t t1,
		       struct nx_err *err)
{
	struct dpa_pass p = { .sc = sc, .t0 = t0, .t1 = t1 };
	struct merge m;
	int rc;

	if (sc->xfers_done)
		return 0;
	if (!sc->edges_done || !sc->busy_done)
		return nx_errf(err, NX_EUSAGE, "the transfers' merge runs after both passes");
	memset(&m, 0, sizeof(m));
	nx_strmap_init(&m.lines, sizeof(struct line_group));
	nx_strmap_init(&m.loads, sizeof(struct sum_group));
	nx_strmap_init(&m.spills, sizeof(struct sum_group));
	nx__rec_dict_init(&p.vars);
	nx_strmap_init(&p.moved, sizeof(struct sum_group));
	rc = nx__rec_read_pass(d, sc->dir, "DmaPacketAggregated", dpa_cols, D_N, NULL, dpa_reset,
			       dpa_batch, &p, err);
	if (!rc)
		rc = nx_xsort_finish(&p.sort, err);
	if (!rc)
		rc = merge_run(sc, &p, &m, err);
	if (!rc)
		rc = write_lines(d, sc, &m, &p.vars, err);
	if (!rc)
		rc = write_sums(d, sc, &m, &p.vars, err);
	if (!rc)
		rc = write_moved(d, &p, err);
	/* the sums of DuckDB's DOUBLE cells, as the SQL gave them */
	sc->xfer_bytes = p.all.has_bytes ? nx__rec_as_cell((double)p.all.bytes) : NAN;
	sc->xfer_spill_bytes = nx__rec_as_cell((double)p.virt_dest.bytes + (double)p.virt_src.bytes);
	merge_release(&m);
	nx_strmap_release(&p.moved);
	if (p.open)
		nx_xsort_release(&p.sort);
	nx__rec_dict_release(&p.vars);
	/* the sorted streams are used up: a second merge would find them empty */
	sc->xfers_done = !rc;
	return rc ? nx_err_wrap(err, "merging the DMA transfers") : 0;
}
