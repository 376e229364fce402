/* SPDX-License-Identifier: MIT
 * scan_inst.c: recommend's pass over Instruction (see scan.h). One read of the columns
 * the analysis needs yields:
 *  - the counts and extremes of the data-quality step and the profile span;
 *  - per (source line, engine, opcode, tensor instruction type), over the rows in the
 *    window: rows, flops, time, the operands of the earliest row and the stream row of
 *    the first, written to rx_InstAgg (bounded by the program, not the trace);
 *  - for each Flow edge that attributes a DMA transfer to an instruction (attribution.h),
 *    the instruction's source line and HBM flags, into an external sort by transfer id
 *    (one record per edge, as the SQL join gave; scan_xfer.c merges them with the
 *    transfers): the Flow edges are read in instruction id order beside the pass, which
 *    reads Instruction in file order, where the ingest writes the ids in order; should
 *    an id come before the one above it, the pass runs again sorted by id (by DuckDB).
 *    Flow itself is read in file order by the C reader, holding one row group (the
 *    ingest writes it by in_id too); should its ids go back, or a file not suit the
 *    reader, the pass starts again with the edges sorted by DuckDB;
 *  - every semaphore wait, into an external sort by its start, for the serialisation
 *    investigation. */
#include "common/compat.h"
#include "analysis/scan.h"
#include "analysis/rec.h"
#include "analysis/attribution.h"
#include "common/hash.h"
#include "common/xalloc.h"

#include <stdlib.h>
#include <string.h>

/* The waits' sort buffer: beyond it the waits go to sorted runs on disk. */
#define WAIT_SORT_BYTES ((size_t)4 << 20)
/* The attributed edges' sort buffer (24 bytes an edge) */
#define EDGE_SORT_BYTES ((size_t)2 << 20)

enum { C_ID, C_ENGINE, C_OPCODE, C_TTI, C_START, C_END, C_DUR, C_WAIT, C_FLOPS, C_OPERANDS,
       C_SRC, C_RD, C_WR, C_N };

/* The columns of rx_Instruction the pass reads (quality.c gives the view's types); the
 * view's expressions (engine lower-cased, the source line's base name) are applied
 * here. */
static const struct nx_rec_colspec inst_cols[C_N] = {
	{ "id", NX_REC_BIGINT }, { "engine", NX_REC_VARCHAR }, { "opcode", NX_REC_VARCHAR },
	{ "tensor_instruction_type", NX_REC_VARCHAR }, { "start_ts", NX_REC_BIGINT },
	{ "end_ts", NX_REC_BIGINT }, { "duration_ns", NX_REC_BIGINT },
	{ "evt_wait_time_ns", NX_REC_BIGINT },
	{ "adjusted_flops", NX_REC_DOUBLE }, { "operands", NX_REC_VARCHAR },
	{ "bir_debug_info_source_location", NX_REC_VARCHAR }, { "hbm_read_bytes", NX_REC_BIGINT },
	{ "hbm_write_bytes", NX_REC_BIGINT },
};

/* The edges out of instructions that the analysis follows, all DGE_TRIGGER ones (what
 * feeds DMA); those that attribute a transfer to its instruction (attribution.h) go to
 * the edges' sort, for DMA efficiency and redundant DMA. In file order, Flow's columns are
 * tested in C as rx_Flow's expressions (quality.c) and EDGE_SQL test them. */
enum { F_IN_TABLE, F_OUT_TABLE, F_IN_ID, F_OUT_ID, F_DEP, F_N };
static const struct nx_rec_colspec flow_cols[F_N] = {
	{ "in_table", NX_REC_VARCHAR }, { "out_table", NX_REC_VARCHAR },
	{ "in_id", NX_REC_BIGINT }, { "out_id", NX_REC_BIGINT },
	{ "dependency_type", NX_REC_VARCHAR },
};

/* The Flow edges, read in file order, came out of id order (or the C reader refused a
 * file): the pass starts again with them sorted by EDGE_SQL. */
#define EDGES_BY_SQL 2

static const char EDGE_SQL[] =
	"SELECT in_id, out_id, coalesce(" NX_DMA_TRIGGER_SQL ", false) AS to_dpa,\n"
	"    true AS dge\n"
	"FROM rx_Flow\n"
	"WHERE in_table = 'Instruction' AND in_id IS NOT NULL\n"
	"  AND dependency_type = 'DGE_TRIGGER'\n"
	"ORDER BY in_id";

void nx__rec_dict_init(struct nx_rec_dict *d)
{
	memset(d, 0, sizeof(*d));
	nx_strmap_init(&d->map, sizeof(int32_t));
}

int32_t nx__rec_dict_id(struct nx_rec_dict *d, const char *s, size_t len)
{
	bool added;
	int32_t *id = nx_strmap_get(&d->map, s, len, &added);

	if (added) {
		NX_GROW(d->text, d->n + 1, d->cap);
		d->text[d->n] = nx_xstrndup(s, len);
		*id = (int32_t)d->n++;
	}
	return *id;
}

void nx__rec_dict_release(struct nx_rec_dict *d)
{
	for (size_t i = 0; i < d->n; i++)
		free(d->text[i]);
	free(d->text);
	nx_strmap_release(&d->map);
	memset(d, 0, sizeof(*d));
}

/* A group's key: dictionary numbers, -1 for NULL. */
struct group_key {
	int32_t src, engine, opcode, tti;
};

struct group {
	int64_t n, dur, op_start, first_row;
	double flops;
	bool has_flops, has_dur, has_op;
	char *op;
};

/* An edge out of the instruction whose id the pass is at. */
struct edge {
	int64_t out;
	bool has_out, to_dpa, dge;
};

/* The dictionary numbers of a string column's recent texts, by where the text lies:
 * the C reader's dictionary-encoded strings share their bytes within a batch, so a row
 * repeating a value costs a compare; cleared at every batch. A batch whose column comes
 * with its chunk's dictionary indices (nx_pqr_col.idx) is looked up by index instead:
 * by_idx[i] is the number of the dictionary's value i plus 2 (0: not yet looked up),
 * sized and zeroed per batch for its dictionary. */
#define TEXT_CACHE 256
struct text_cache {
	const char *p[TEXT_CACHE];
	size_t len[TEXT_CACHE];
	int32_t id[TEXT_CACHE];
};

struct text_by_idx {
	int32_t *id;
	size_t cap;
};

/* The groups of recent rows by their key: a row of a group met before costs a compare
 * instead of a lookup in the map (a tenth of the pass, one per row). Emptied when a group
 * is added, since the map may then move its values. */
#define GROUP_CACHE 1024
struct group_cache {
	struct group_key k[GROUP_CACHE];
	struct group *g[GROUP_CACHE];
};

struct pass {
	struct nx_duck *d;
	struct nx_rec_scan *sc;
	/* the edge stream, one row ahead: Flow in file order (flow), or EDGE_SQL (cur) */
	struct nx_rec_read *flow;
	const struct nx_pqr_batch *fb;
	struct nx_duck_cursor *cur;
	const struct nx_dchunk *chunk;
	size_t at;
	bool edges_done;
	struct edge next; /* the edge at the stream's head, with its in_id */
	int64_t next_in;
	bool have_next; /* p->next holds the head row, not taken yet */
	int64_t flow_last; /* the last in_id read in file order */
	bool flow_any;
	/* the edges of the instruction id last seen */
	struct edge *edges;
	size_t nedges, edges_cap;
	int64_t edge_id;
	bool have_edge_id;
	int64_t row, last_id;
	bool any_id;
	struct text_cache cache[4]; /* src, engine, opcode, tti */
	struct text_by_idx by_idx[4];
	struct group_cache groups;
	struct nx_rec_waits_ahead waits; /* to sc->waits */
};

/* Whether a cell, upper-cased (or lower-cased), is want; -1 when it holds a byte
 * outside ASCII, whose case DuckDB maps by Unicode's rules (EDGE_SQL then decides). */
static int text_is(const struct nx_pqr_batch *b, size_t col, size_t r, const char *want)
{
	const char *s;
	size_t len, n = strlen(want);

	if (!nx__rec_str(b, col, r, &s, &len))
		return 0;
	for (size_t i = 0; i < len; i++)
		if ((unsigned char)s[i] >= 0x80)
			return -1;
	if (len != n)
		return 0;
	for (size_t i = 0; i < n; i++) {
		char c = s[i], w = want[i];
		if (c >= 'a' && c <= 'z')
			c = (char)(c - 'a' + 'A');
		if (w >= 'a' && w <= 'z')
			w = (char)(w - 'a' + 'A');
		if (c != w)
			return 0;
	}
	return 1;
}

/* Flow's row r as an edge of EDGE_SQL: 1 when it is one, 0 when not, EDGES_BY_SQL when
 * C cannot tell. rx_Flow maps in_table and out_table case-blind ('dma_block' being
 * DmaPacketAggregated) and upper-cases dependency_type. */
static int flow_edge(struct pass *p, const struct nx_pqr_batch *b, size_t r)
{
	int dep = text_is(b, F_DEP, r, "DGE_TRIGGER");
	int in = text_is(b, F_IN_TABLE, r, "instruction");
	int dpa = text_is(b, F_OUT_TABLE, r, "dmapacketaggregated");
	int blk = text_is(b, F_OUT_TABLE, r, "dma_block");

	if (dep < 0 || in < 0 || dpa < 0 || blk < 0)
		return EDGES_BY_SQL;
	if (!dep || !in || !nx__rec_i64(b, F_IN_ID, r, &p->next_in))
		return 0;
	p->next.has_out = nx__rec_i64(b, F_OUT_ID, r, &p->next.out);
	p->next.to_dpa = dpa || blk;
	p->next.dge = true;
	return 1;
}

/* The next rows of the edge stream once those read are used up; at its end,
 * edges_done and no row ahead. */
static int edge_refill(struct pass *p, struct nx_err *err)
{
	bool more;
	int rc;

	if (p->edges_done)
		return 0;
	if (p->flow && (!p->fb || p->at >= p->fb->rows)) {
		rc = nx__rec_read_next(p->flow, &p->fb, err);
		more = p->fb != NULL;
		rc = rc == NX_EVERSION ? EDGES_BY_SQL : rc;
	} else if (!p->flow && (!p->chunk || p->at >= nx_dchunk_rows(p->chunk))) {
		rc = nx_duck_cursor_next(p->cur, &p->chunk, err);
		more = p->chunk != NULL;
	} else {
		return 0;
	}
	if (rc)
		return rc;
	p->at = 0;
	p->edges_done = !more;
	p->have_next = false;
	return 0;
}

/* The next edge of Flow in file order into p->next (have_next false at the end). */
static int flow_peek(struct pass *p, struct nx_err *err)
{
	int rc;

	for (;;) {
		if ((rc = edge_refill(p, err)) || p->edges_done)
			return rc;
		int is = flow_edge(p, p->fb, p->at);
		if (is == EDGES_BY_SQL)
			return is;
		if (is) {
			if (p->flow_any && p->next_in < p->flow_last)
				return EDGES_BY_SQL;
			p->flow_any = true;
			p->flow_last = p->next_in;
			p->have_next = true;
			return 0;
		}
		p->at++;
	}
}

/* The edge stream's next row into p->next (have_next false at its end); the row stays
 * there until edges_of takes it. */
static int edge_peek(struct pass *p, struct nx_err *err)
{
	int64_t v;

	if (p->have_next)
		return 0;
	int rc;

	if (p->flow)
		return flow_peek(p, err);
	for (;;) {
		if ((rc = edge_refill(p, err)) || p->edges_done)
			return rc;
		if (nx_dchunk_i64(p->chunk, 0, p->at, &p->next_in)) {
			p->next.has_out = nx_dchunk_i64(p->chunk, 1, p->at, &p->next.out);
			p->next.to_dpa = nx_dchunk_i64(p->chunk, 2, p->at, &v) && v;
			p->next.dge = nx_dchunk_i64(p->chunk, 3, p->at, &v) && v;
			p->have_next = true;
			return 0;
		}
		p->at++; /* no in_id: the SQL excluded those, never here */
	}
}

/* Loads the edges of instruction id (the stream is sorted by in_id). */
static int edges_of(struct pass *p, int64_t id, struct nx_err *err)
{
	int rc;

	if (p->have_edge_id && p->edge_id == id)
		return 0; /* a repeated id: the same edges again */
	p->nedges = 0;
	p->edge_id = id;
	p->have_edge_id = true;
	while (!(rc = edge_peek(p, err)) && p->have_next && p->next_in <= id) {
		if (p->next_in == id) {
			NX_GROW(p->edges, p->nedges + 1, p->edges_cap);
			p->edges[p->nedges++] = p->next;
		}
		p->at++;
		p->have_next = false;
	}
	return rc;
}

/* The view's expressions: lower(engine); the base name of the source location (what
 * follows its last slash before any newline: the view's regexp_replace, whose dot stops
 * at a newline), NULL when empty. */
enum text_kind { TEXT_AS_IS, TEXT_LOWER, TEXT_BASENAME };

/* The number of a text the cache did not have. */
static int32_t text_lookup(struct nx_rec_dict *d, const char *s, size_t len, enum text_kind kind)
{
	char small[64] = "", *buf = small; /* initialised: gcc -fsanitize sees a read of it */
	int32_t id;

	if (kind == TEXT_AS_IS) {
		id = nx__rec_dict_id(d, s, len);
	} else if (kind == TEXT_LOWER) {
		if (len > sizeof(small))
			buf = nx_xmalloc(len);
		for (size_t i = 0; i < len; i++)
			buf[i] = s[i] >= 'A' && s[i] <= 'Z' ? (char)(s[i] - 'A' + 'a') : s[i];
		id = nx__rec_dict_id(d, buf, len);
		if (buf != small)
			free(buf);
	} else {
		const char *nl = memchr(s, '\n', len);
		size_t head = nl ? (size_t)(nl - s) : len, from = 0;
		for (size_t i = 0; i < head; i++)
			if (s[i] == '/')
				from = i + 1;
		id = from < len ? nx__rec_dict_id(d, s + from, len - from) : -1;
	}
	return id;
}

static int32_t text_id(struct nx_rec_dict *d, struct text_cache *c, const char *s, size_t len,
		       enum text_kind kind)
{
	size_t slot = ((uintptr_t)s >> 3 ^ len) % TEXT_CACHE;
	int32_t id;

	if (c->p[slot] == s && c->len[slot] == len)
		return c->id[slot];
	id = text_lookup(d, s, len, kind);
	c->p[slot] = s;
	c->len[slot] = len;
	c->id[slot] = id;
	return id;
}

/* The number of column col's text at row r (-1 for NULL): by its dictionary index when
 * the batch gives one (bi readied for the batch by text_by_idx_ready), else by where it
 * lies. */
static inline int32_t text_cell(struct nx_rec_dict *d, struct text_cache *c,
				struct text_by_idx *bi, const struct nx_pqr_col *cl, size_t r,
				enum text_kind kind)
{
	const char *s;
	size_t len;

	if (nx__rec_null(cl, r))
		return -1;
	if (cl->idx) {
		uint32_t i = cl->idx[r];
		int32_t id = bi->id[i];
		if (id)
			return id - 2;
		id = text_lookup(d, cl->dict_str[i], cl->dict_len[i], kind);
		bi->id[i] = id + 2;
		return id;
	}
	s = cl->str[r];
	len = cl->len[r];
	return text_id(d, c, s, len, kind);
}

/* bi sized and emptied for column col's dictionary in batch b (none: nothing to do). */
static void text_by_idx_ready(struct text_by_idx *bi, const struct nx_pqr_batch *b, size_t col)
{
	size_t n = b->col[col].idx ? b->col[col].ndict : 0;

	if (!n)
		return;
	if (n > bi->cap) {
		free(bi->id);
		bi->id = nx_xmalloc(n * sizeof(*bi->id));
		bi->cap = n;
	}
	memset(bi->id, 0, n * sizeof(*bi->id));
}

static bool in_window(const struct nx_rec_scan_window *w, bool has_start, int64_t start)
{
	return has_start && (w->whole || (start >= w->t0 && start < w->t1));
}

/* The group of key k, added (with the stream row at hand as its first) when new. */
static struct group *group_of(struct pass *p, const struct group_key *k)
{
	struct group_cache *c = &p->groups;
	uint32_t h = (uint32_t)k->src * 0x9E3779B1u ^ (uint32_t)k->engine * 0x85EBCA77u ^
		     (uint32_t)k->opcode * 0xC2B2AE3Du ^ (uint32_t)k->tti;
	size_t slot = (h ^ h >> 16) % GROUP_CACHE;
	bool added;
	struct group *g;

	if (c->g[slot] && !memcmp(&c->k[slot], k, sizeof(*k)))
		return c->g[slot];
	g = nx_strmap_get(&p->sc->groups, (const char *)k, sizeof(*k), &added);
	if (added) {
		memset(c, 0, sizeof(*c));
		g->first_row = p->row;
	}
	c->k[slot] = *k;
	c->g[slot] = g;
	return g;
}

static void add_to_group(struct pass *p, const struct nx_pqr_col *col, size_t r,
			 const struct group_key *k, int64_t start)
{
	struct group *g = group_of(p, k);
	const struct nx_pqr_col *flops = &col[C_FLOPS], *ops = &col[C_OPERANDS];
	int64_t v;

	g->n++;
	if (!nx__rec_null(flops, r)) {
		g->flops += flops->f64[r];
		g->has_flops = true;
	}
	if (nx__rec_col_i64(&col[C_DUR], r, &v)) {
		g->dur += v;
		g->has_dur = true;
	}
	/* arg_min(operands, start_ts): the earliest row whose operands are not NULL, the
	 * first of equals */
	if (!nx__rec_null(ops, r) && (!g->has_op || start < g->op_start)) {
		free(g->op);
		g->op = nx_xstrndup(ops->str[r], ops->len[r]);
		g->op_start = start;
		g->has_op = true;
	}
}

/* The edges of the instruction at hand that attribute a transfer to it, into the sort
 * by transfer id (scan_xfer.c merges them with the transfers). */
static int sort_edges(struct pass *p, int32_t line, bool rd, bool hbm, struct nx_err *err)
{
	struct nx_rec_scan *sc = p->sc;
	int rc = 0;

	for (size_t i = 0; !rc && i < p->nedges; i++) {
		struct nx_rec_edge e;
		if (!p->edges[i].to_dpa || !p->edges[i].has_out)
			continue;
		memset(&e, 0, sizeof(e));
		e.dpa_id = p->edges[i].out;
		e.seq = sc->edge_seq++;
		e.line = line;
		e.rd = rd;
		e.hbm = hbm;
		sc->edges_to_lines += hbm && line >= 0;
		rc = nx_xsort_add(&sc->edges, &e, err);
	}
	return rc;
}

/* The least value of column c over the batch's valid rows into *lo (lo_set false when
 * none before), or the greatest (hi): the data-quality step's extremes, a loop per
 * batch. */
static void fold_extreme(const struct nx_pqr_col *c, size_t rows, bool hi, int64_t *lo,
			 bool *lo_set)
{
	const int64_t *v = c->i64;
	const uint8_t *ok = c->valid;
	int64_t m = hi ? INT64_MIN : INT64_MAX;
	bool any = ok ? memchr(ok, 1, rows) != NULL : rows > 0;

	if (c->kind == NX_PQR_NULL || !any)
		return;
	if (hi && ok) {
		for (size_t r = 0; r < rows; r++)
			m = ok[r] && v[r] > m ? v[r] : m;
	} else if (hi) {
		for (size_t r = 0; r < rows; r++)
			m = v[r] > m ? v[r] : m;
	} else if (ok) {
		for (size_t r = 0; r < rows; r++)
			m = ok[r] && v[r] < m ? v[r] : m;
	} else {
		for (size_t r = 0; r < rows; r++)
			m = v[r] < m ? v[r] : m;
	}
	if (!*lo_set || (hi ? m > *lo : m < *lo)) {
		*lo = m;
		*lo_set = true;
	}
}

/* The valid rows of column c in the batch. */
static int64_t count_valid(const struct nx_pqr_col *c, size_t rows)
{
	int64_t n = 0;

	if (c->kind == NX_PQR_NULL)
		return 0;
	if (!c->valid)
		return (int64_t)rows;
	for (size_t r = 0; r < rows; r++)
		n += c->valid[r] != 0;
	return n;
}

static int inst_batch(void *arg, const struct nx_pqr_batch *b, struct nx_err *err)
{
	struct pass *p = arg;
	struct nx_rec_scan *sc = p->sc;
	struct nx_pqr_col col[C_N];
	int rc = 0;

	/* the columns as locals of the loop (read through b, every cell reloaded its
	 * column's pointers: a store to the pass's state might have moved them); a column
	 * none of whose rows is NULL comes with valid NULL (db/parquet_read.h), so its
	 * rows skip the valid bytes */
	memcpy(col, b->col, sizeof(col));
	sc->insts += (int64_t)b->rows;
	sc->with_wait += count_valid(&col[C_WAIT], b->rows);
	fold_extreme(&col[C_START], b->rows, false, &sc->in_lo, &sc->in_lo_set);
	fold_extreme(&col[C_END], b->rows, true, &sc->in_hi, &sc->in_hi_set);
	memset(p->cache, 0, sizeof(p->cache));
	text_by_idx_ready(&p->by_idx[0], b, C_SRC);
	text_by_idx_ready(&p->by_idx[1], b, C_ENGINE);
	text_by_idx_ready(&p->by_idx[2], b, C_OPCODE);
	text_by_idx_ready(&p->by_idx[3], b, C_TTI);
	for (size_t r = 0; !rc && r < b->rows; r++, p->row++) {
		int64_t id = 0, start = 0, wait, rb = 0, wb = 0;
		bool has_id = nx__rec_col_i64(&col[C_ID], r, &id);
		bool has_start = nx__rec_col_i64(&col[C_START], r, &start);
		bool has_rb = nx__rec_col_i64(&col[C_RD], r, &rb);
		bool has_wb = nx__rec_col_i64(&col[C_WR], r, &wb);
		bool rd = has_rb && rb > 0, hbm = rd || (has_wb && wb > 0), dge = false;
		struct group_key k;

		k.src = text_cell(&sc->src, &p->cache[0], &p->by_idx[0], &col[C_SRC], r,
				  TEXT_BASENAME);
		sc->with_source += k.src >= 0;
		if (!nx__rec_col_i64(&col[C_WAIT], r, &wait))
			wait = 0;
		if (has_id) {
			if (p->any_id && id < p->last_id)
				return NX_REC_UNSORTED;
			p->any_id = true;
			p->last_id = id;
			if ((rc = edges_of(p, id, err)) ||
			    (rc = sort_edges(p, k.src, rd, hbm, err)))
				break;
			for (size_t i = 0; i < p->nedges; i++)
				dge |= p->edges[i].dge;
		}
		k.engine = text_cell(&sc->engine, &p->cache[1], &p->by_idx[1], &col[C_ENGINE], r,
				     TEXT_LOWER);
		if (in_window(&sc->win, has_start, start)) {
			k.opcode = text_cell(&sc->opcode, &p->cache[2], &p->by_idx[2],
					     &col[C_OPCODE], r, TEXT_AS_IS);
			k.tti = text_cell(&sc->tti, &p->cache[3], &p->by_idx[3], &col[C_TTI], r,
					  TEXT_AS_IS);
			add_to_group(p, col, r, &k, start);
		}
		if (wait > 0 && has_start) {
			int64_t feeds = (has_rb ? rb : 0) + (has_wb ? wb : 0);
			struct nx_rec_wait w = { .from = start - wait, .start = start,
						 .row = p->row, .id = has_id ? id : 0,
						 .line = k.src, .engine = (int16_t)k.engine };
			w.feeds_dma = feeds > 0 || dge;
			w.has_id = has_id;
			rc = nx__rec_waits_add(&p->waits, &w, err);
		}
	}
	return rc;
}

static int wait_cmp(const void *a, const void *b)
{
	const struct nx_rec_wait *x = a, *y = b;

	if (x->from != y->from)
		return x->from < y->from ? -1 : 1;
	return x->row < y->row ? -1 : x->row > y->row;
}

static void reset(struct nx_rec_scan *sc)
{
	size_t pos = 0;
	struct group *g;

	while ((g = nx_strmap_next(&sc->groups, &pos, NULL, NULL)))
		free(g->op);
	nx_strmap_release(&sc->groups);
	nx_strmap_init(&sc->groups, sizeof(struct group));
	nx__rec_dict_release(&sc->src);
	nx__rec_dict_release(&sc->engine);
	nx__rec_dict_release(&sc->opcode);
	nx__rec_dict_release(&sc->tti);
	nx__rec_dict_init(&sc->src);
	nx__rec_dict_init(&sc->engine);
	nx__rec_dict_init(&sc->opcode);
	nx__rec_dict_init(&sc->tti);
	nx__rec_xsort_restart(&sc->waits, &sc->waits_open, sc->spill, sizeof(struct nx_rec_wait),
			      wait_cmp, WAIT_SORT_BYTES);
	nx__rec_xsort_restart(&sc->edges, &sc->edges_open, sc->spill, sizeof(struct nx_rec_edge),
			      nx__rec_edge_cmp, EDGE_SORT_BYTES);
	sc->edges_done = false;
	sc->edge_seq = sc->edges_to_lines = 0;
	sc->insts = sc->with_source = sc->with_wait = 0;
	sc->in_lo_set = sc->in_hi_set = false;
}

/* A group with its key, for writing them in order. */
struct keyed {
	const struct group *g;
	struct group_key k;
};

static int by_first_row(const void *a, const void *b)
{
	const struct keyed *x = a, *y = b;

	return x->g->first_row < y->g->first_row ? -1 : x->g->first_row > y->g->first_row;
}

static void append_text(struct nx_duck_appender *a, const struct nx_rec_dict *d, int32_t id)
{
	if (id >= 0)
		nx_duck_append_str(a, d->text[id], strlen(d->text[id]));
	else
		nx_duck_append_null(a);
}

/* rx_InstAgg from the groups, in the order of their first rows. */
static int write_groups(struct nx_duck *d, struct nx_rec_scan *sc, struct nx_err *err)
{
	struct keyed *v = nx_xcalloc(sc->groups.used ? sc->groups.used : 1, sizeof(*v));
	struct nx_duck_appender *a = NULL;
	size_t pos = 0, n = 0, klen;
	const char *key;
	const struct group *g;
	int rc;

	while ((g = nx_strmap_next(&sc->groups, &pos, &key, &klen))) {
		v[n].g = g;
		memcpy(&v[n++].k, key, sizeof(v->k));
	}
	qsort(v, n, sizeof(*v), by_first_row);
	rc = nx_duck_exec(d, "CREATE OR REPLACE TABLE rx_InstAgg (src VARCHAR, engine VARCHAR, "
			     "opcode VARCHAR, tti VARCHAR, n BIGINT, flops DOUBLE, dur BIGINT, "
			     "op VARCHAR, op_start BIGINT, first_row BIGINT)", err);
	if (!rc)
		rc = nx_duck_appender_open(d, "rx_InstAgg", &a, err);
	for (size_t i = 0; !rc && i < n; i++) {
		const struct group *x = v[i].g;
		append_text(a, &sc->src, v[i].k.src);
		append_text(a, &sc->engine, v[i].k.engine);
		append_text(a, &sc->opcode, v[i].k.opcode);
		append_text(a, &sc->tti, v[i].k.tti);
		nx_duck_append_i64(a, x->n);
		if (x->has_flops)
			nx_duck_append_f64(a, x->flops);
		else
			nx_duck_append_null(a);
		if (x->has_dur)
			nx_duck_append_i64(a, x->dur);
		else
			nx_duck_append_null(a);
		nx_duck_append_str(a, x->has_op ? x->op : NULL, x->has_op ? strlen(x->op) : 0);
		if (x->has_op)
			nx_duck_append_i64(a, x->op_start);
		else
			nx_duck_append_null(a);
		nx_duck_append_i64(a, x->first_row);
		rc = nx_duck_append_end_row(a, err);
	}
	int rc2 = nx_duck_appender_close(a, err);
	free(v);
	return rc ? rc : rc2;
}

/* NX_REC_XFER=sql: rx_Edge, what the investigations' former SQL joins, from the sorted
 * edges (rx_EdgeLine, the lines as numbers) and the lines' texts (rx_EdgeText). */
static int write_edge_lines(struct nx_duck *d, struct nx_rec_scan *sc, struct nx_err *err)
{
	struct nx_duck_appender *a = NULL;
	struct nx_rec_edge e;
	int rc = nx_duck_exec(d, "CREATE OR REPLACE TABLE rx_EdgeLine (dpa_id BIGINT, line INTEGER, "
			      "rd BOOLEAN, hbm BOOLEAN); CREATE OR REPLACE TABLE rx_EdgeText "
			      "(line INTEGER, src VARCHAR)", err);

	if (!rc)
		rc = nx_duck_appender_open(d, "rx_EdgeLine", &a, err);
	while (!rc && (rc = nx_xsort_next(&sc->edges, &e, err)) == 1) {
		nx_duck_append_i64(a, e.dpa_id);
		if (e.line >= 0)
			nx_duck_append_i64(a, e.line);
		else
			nx_duck_append_null(a);
		nx_duck_append_bool(a, e.rd);
		nx_duck_append_bool(a, e.hbm);
		rc = nx_duck_append_end_row(a, err);
	}
	int rc2 = nx_duck_appender_close(a, err);
	rc = rc < 0 ? rc : rc2;
	a = NULL;
	if (!rc)
		rc = nx_duck_appender_open(d, "rx_EdgeText", &a, err);
	for (size_t i = 0; !rc && i < sc->src.n; i++) {
		nx_duck_append_i64(a, (int64_t)i);
		nx_duck_append_str(a, sc->src.text[i], strlen(sc->src.text[i]));
		rc = nx_duck_append_end_row(a, err);
	}
	rc2 = nx_duck_appender_close(a, err);
	if (!rc)
		rc = rc2;
	if (!rc)
		rc = nx_duck_exec(d, "CREATE OR REPLACE VIEW rx_Edge AS SELECT e.dpa_id, t.src, "
				  "e.rd, e.hbm FROM rx_EdgeLine e "
				  "LEFT JOIN rx_EdgeText t ON t.line = e.line", err);
	return rc;
}

/* Before each start of the pass: the state of the last one dropped, the sorts emptied, the
 * edge stream started again. Errors wait for the first batch (reset cannot fail). */
struct attempt {
	struct pass p;
	bool edges_by_sql; /* Flow in file order did not do: EDGE_SQL sorts the edges */
	int rc;
	struct nx_err err;
};

static void attempt_end(struct attempt *a)
{
	nx__rec_waits_stop(&a->p.waits);
	nx__rec_read_close(a->p.flow);
	a->p.flow = NULL;
	nx_duck_cursor_close(a->p.cur);
	free(a->p.edges);
	a->p.cur = NULL;
	a->p.edges = NULL;
	for (size_t i = 0; i < NX_ARRAY_SIZE(a->p.by_idx); i++) {
		free(a->p.by_idx[i].id);
		a->p.by_idx[i] = (struct text_by_idx){ 0 };
	}
}

static void attempt_reset(void *arg)
{
	struct attempt *a = arg;
	struct nx_duck *d = a->p.d;
	struct nx_rec_scan *sc = a->p.sc;

	attempt_end(a);
	memset(&a->p, 0, sizeof(a->p));
	a->p.d = d;
	a->p.sc = sc;
	a->rc = 0;
	reset(sc);
	nx__rec_waits_start(&a->p.waits, &sc->waits);
	if (a->edges_by_sql)
		a->rc = nx_duck_cursor_open(d, EDGE_SQL, true, &a->p.cur, &a->err);
	else
		a->rc = nx__rec_read_open(d, sc->dir, "Flow", flow_cols, F_N, NULL, false,
					  &a->p.flow, &a->err);
}

static int attempt_batch(void *arg, const struct nx_pqr_batch *b, struct nx_err *err)
{
	struct attempt *a = arg;

	if (a->rc) {
		*err = a->err;
		return a->rc;
	}
	return inst_batch(&a->p, b, err);
}

int nx__rec_scan_instructions(struct nx_duck *d, struct nx_rec_scan *sc, struct nx_err *err)
{
	struct attempt a;
	int rc;

	memset(&a, 0, sizeof(a));
	a.p.d = d;
	a.p.sc = sc;
	for (;;) {
		rc = nx__rec_read_pass(d, sc->dir, "Instruction", inst_cols, C_N, "id",
				       attempt_reset, attempt_batch, &a, err);
		if (rc != EDGES_BY_SQL || a.edges_by_sql)
			break;
		a.edges_by_sql = true;
	}
	if (!rc) /* every wait in the sort before it is finished */
		rc = nx__rec_waits_flush(&a.p.waits, err);
	if (!rc && a.rc) { /* a table without rows: no batch saw the reset's error */
		rc = a.rc;
		*err = a.err;
	}
	attempt_end(&a);
	if (!rc && a.rc) {
		rc = a.rc;
		*err = a.err;
	}
	if (!rc)
		rc = nx_xsort_finish(&sc->waits, err);
	if (!rc)
		rc = write_groups(d, sc, err);
	if (!rc)
		rc = nx_xsort_finish(&sc->edges, err);
	sc->edges_done = !rc;
	if (!rc && nx__rec_xfers_by_sql())
		rc = write_edge_lines(d, sc, err);
	return rc ? nx_err_wrap(err, "reading Instruction") : 0;
}

/* The number of a text in a dictionary, -2 when it is not there. */
static int32_t dict_find(const struct nx_rec_dict *d, const char *s)
{
	const int32_t *id = nx_strmap_find(&d->map, s, strlen(s));

	return id ? *id : -2;
}

void nx__rec_scan_matmuls(const struct nx_rec_scan *sc, int64_t *n, double *flops, int64_t *n_tp,
			  int64_t *n_reg, double *tp_flops)
{
	int32_t tensor = dict_find(&sc->engine, "tensor"), mm = dict_find(&sc->opcode, "MATMUL");
	int32_t tp = dict_find(&sc->tti, "TRANSPOSE"), reg = dict_find(&sc->tti, "REGULAR");
	int64_t cn = 0, ctp = 0, creg = 0;
	double f = 0, ftp = 0;
	size_t pos = 0, klen;
	const char *key;
	const struct group *g;

	while ((g = nx_strmap_next(&sc->groups, &pos, &key, &klen))) {
		struct group_key k;
		memcpy(&k, key, sizeof(k));
		if (k.engine != tensor || k.opcode != mm)
			continue;
		cn += g->n;
		f += g->has_flops ? g->flops : 0;
		if (k.tti == tp) {
			ctp += g->n;
			ftp += g->has_flops ? g->flops : 0;
		}
		creg += k.tti == reg ? g->n : 0;
	}
	if (n)
		*n = cn;
	if (flops)
		*flops = f;
	if (n_tp)
		*n_tp = ctp;
	if (n_reg)
		*n_reg = creg;
	if (tp_flops)
		*tp_flops = ftp;
}

void nx__rec_scan_release(struct nx_rec_scan *sc)
{
	size_t pos = 0;
	struct group *g;

	if (sc->groups.vsize) {
		while ((g = nx_strmap_next(&sc->groups, &pos, NULL, NULL)))
			free(g->op);
		nx_strmap_release(&sc->groups);
	}
	nx__rec_dict_release(&sc->src);
	nx__rec_dict_release(&sc->engine);
	nx__rec_dict_release(&sc->opcode);
	nx__rec_dict_release(&sc->tti);
	if (sc->waits_open)
		nx_xsort_release(&sc->waits);
	sc->waits_open = false;
	if (sc->edges_open)
		nx_xsort_release(&sc->edges);
	if (sc->busy_open)
		nx_xsort_release(&sc->busy);
	sc->edges_open = sc->busy_open = false;
	free(sc->busy_cache);
	sc->busy_cache = NULL;
	nx__rec_stretches_release(&sc->dma_runs);
	sc->dma_runs_kept = false;
}
