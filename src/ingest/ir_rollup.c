/* SPDX-License-Identifier: MIT
 * ir_rollup.c: the IR hierarchy tables rolled up in C (see ir_rollup.h). */
#include "common/compat.h"
#include "ingest/ir_rollup.h"
#include "common/arena.h"
#include "common/strbuf.h"
#include "common/strmap.h"
#include "common/xalloc.h"
#include "db/duck.h"
#include "db/profile_views.h"
#include "ingest/context.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The levels, bottom up: the id column each rolls up by is ids[level]. */
enum { L_BIR, L_PENGUIN, L_HLO, L_FRAMEWORK, L_COUNT };
static const char *const ids[L_COUNT] = { "raw_bir_id", "raw_penguin_id", "raw_hlo_id",
					  "raw_framework_id" };
static const struct {
	const char *table, *name_out, *name_in;
} levels[L_COUNT] = {
	{ "BirInstruction", "bir_name", "bir_instruction_name" },
	{ "PenguinInstruction", "penguin_name", "kernel_instruction_name" },
	{ "HloInstruction", "hlo_name", "hlo_name" },
	{ "FrameworkInstruction", "framework_name", "layer" },
};

/* The engines FrameworkInstruction counts instructions of (lower(engine)). */
#define ENGINES 5
static const char *const engines[ENGINES] = { "tensor", "scalar", "sync", "gpsimd", "vector" };

/* A merged busy interval and what its instructions add up to. */
struct ir_iv {
	int64_t s, e, el, tel, hbm;
};

enum { S_HBM_R, S_HBM_W, S_SB_R, S_SB_W, S_LDW, SUMS };

struct ir_node {
	int64_t k;
	int64_t up[L_COUNT]; /* the least id of each level above (as min(...) did) */
	int64_t pcore, start, end;
	int64_t sums[SUMS];
	int64_t eng[ENGINES];
	const char *name;    /* the first one seen (any_value), or NULL */
	bool has_pcore;
	size_t iv0, niv;     /* its intervals in the level's array */
};

struct ir_level {
	int level;
	struct ir_node *n;
	size_t nn, capn;
	struct ir_iv *iv;
	size_t niv, capiv;
	int64_t run_end; /* the current node's largest end so far */
	struct nx_strmap seen; /* name -> its copy in `text` */
	struct nx_arena text;
	struct nx_strbuf scratch;
};

/* The query's columns, in order. */
enum { Q_K, Q_BIR, Q_PENGUIN, Q_HLO, Q_FW, Q_NAME, Q_PCORE, Q_START, Q_END, Q_HBM_R, Q_HBM_W,
       Q_SB_R, Q_SB_W, Q_LDW, Q_ENGINE, Q_EL, Q_TEL, Q_COUNT };

static const char *keep_once(struct ir_level *l, const char *s, size_t len)
{
	bool added;
	char **copy = nx_strmap_get(&l->seen, s, len, &added);

	if (added) { /* DuckDB's bytes end without a NUL: the copy gets one */
		nx_strbuf_reset(&l->scratch);
		nx_strbuf_add(&l->scratch, s, len);
		nx_strbuf_addch(&l->scratch, '\0');
		*copy = nx_arena_copy(&l->text, l->scratch.buf, len + 1);
	}
	return *copy;
}

/* The query's BIGINT columns of one chunk, each read once (nx_dchunk_i64s) rather than a
 * call per cell; NULL reads as 0 (only pcore_idx may be NULL: the others are coalesced,
 * filtered or always set). */
struct ir_cols {
	const int64_t *v[Q_COUNT];
	const uint64_t *valid[Q_COUNT];
};

static int cols_of(struct ir_cols *q, const struct nx_dchunk *c, struct nx_err *err)
{
	for (size_t col = 0; col < Q_COUNT; col++) {
		if (col == Q_NAME)
			continue;
		if (!(q->v[col] = nx_dchunk_i64s(c, col, &q->valid[col])))
			return nx_errf(err, NX_EDB, "the roll-up's column %zu is not BIGINT", col);
	}
	return 0;
}

static int64_t cell(const struct ir_cols *q, size_t col, size_t row)
{
	return nx_dchunk_valid(q->valid[col], row) ? q->v[col][row] : 0;
}

/* One instruction row, in the query's order (node, start_ts, end_ts): a new node, a new
 * interval when it starts after every earlier end of its node (as the SQL's window), or
 * the current interval grown. start_ts and end_ts are never NULL (src_instruction.c sets
 * both on every row); the other NULLs are made 0 in the query, as the SQL's coalesce. */
static int take_rows(void *arg, const struct nx_dchunk *c, struct nx_err *err)
{
	struct ir_level *l = arg;
	size_t rows = nx_dchunk_rows(c);
	struct ir_cols q;

	if (cols_of(&q, c, err))
		return -1;
	for (size_t r = 0; r < rows; r++) {
		int64_t k = cell(&q, Q_K, r), start = cell(&q, Q_START, r);
		int64_t end = cell(&q, Q_END, r), el = cell(&q, Q_EL, r), tel = cell(&q, Q_TEL, r);
		int64_t hbm_r = cell(&q, Q_HBM_R, r), hbm_w = cell(&q, Q_HBM_W, r);
		int64_t sb_r = cell(&q, Q_SB_R, r);
		struct ir_node *n = l->nn ? &l->n[l->nn - 1] : NULL;
		const char *s;
		size_t len;

		if (!n || n->k != k) {
			if (l->nn == l->capn) {
				l->capn = l->capn ? l->capn * 2 : 1024;
				l->n = nx_xrealloc(l->n, l->capn * sizeof(*l->n));
			}
			n = &l->n[l->nn++];
			memset(n, 0, sizeof(*n));
			n->k = k;
			for (int u = 0; u < L_COUNT; u++)
				n->up[u] = u == l->level ? k : u < l->level ? -1 : INT64_MAX;
			n->start = start;
			n->end = end;
			n->iv0 = l->niv;
		}
		for (int u = l->level + 1; u < L_COUNT; u++) {
			int64_t v = cell(&q, Q_BIR + (size_t)u, r);
			if (v < n->up[u])
				n->up[u] = v;
		}
		if (!n->name && nx_dchunk_str(c, Q_NAME, r, &s, &len))
			n->name = keep_once(l, s, len);
		if (!n->has_pcore && nx_dchunk_valid(q.valid[Q_PCORE], r)) {
			n->has_pcore = true;
			n->pcore = q.v[Q_PCORE][r];
		}
		n->start = start < n->start ? start : n->start;
		n->end = end > n->end ? end : n->end;
		n->sums[S_HBM_R] += hbm_r;
		n->sums[S_HBM_W] += hbm_w;
		n->sums[S_SB_R] += sb_r;
		n->sums[S_SB_W] += cell(&q, Q_SB_W, r);
		if (cell(&q, Q_LDW, r))
			n->sums[S_LDW] += sb_r;
		int64_t e = cell(&q, Q_ENGINE, r);
		if (e >= 0 && e < ENGINES)
			n->eng[e]++;
		if (n->niv == 0 || start > l->run_end) {
			if (l->niv == l->capiv) {
				l->capiv = l->capiv ? l->capiv * 2 : 4096;
				l->iv = nx_xrealloc(l->iv, l->capiv * sizeof(*l->iv));
			}
			l->iv[l->niv++] = (struct ir_iv){ .s = start, .e = end };
			n->niv++;
			l->run_end = end;
		}
		struct ir_iv *iv = &l->iv[l->niv - 1];
		if (end > iv->e)
			iv->e = end;
		if (end > l->run_end)
			l->run_end = end;
		iv->el += el;
		iv->tel += tel;
		iv->hbm += hbm_r + hbm_w;
	}
	return 0;
}

/* The tables' order: start_ts, then the node's id. */
static int node_cmp(const void *pa, const void *pb)
{
	const struct ir_node *a = pa, *b = pb;

	if (a->start != b->start)
		return a->start < b->start ? -1 : 1;
	return a->k < b->k ? -1 : a->k > b->k;
}

/* The tables' columns; after the shared ones, BirInstruction's pcore_idx or
 * FrameworkInstruction's counts per engine (O_EXTRA on). */
enum { O_ID, O_BIR, O_PENGUIN, O_HLO, O_FW, O_NAME, O_START, O_END, O_HBM_R, O_HBM_W,
       O_SB_R, O_SB_W, O_LDW, O_MF, O_TIMES, O_EL, O_TEL, O_HBM, O_EXTRA };

struct ir_src {
	struct ir_level *l;
	struct nx_colmap map;
	size_t next;
	struct nx_strbuf text;
	int64_t *list;
	size_t caplist;
};

static void put_list(struct ir_src *s, struct nx_rowbuf *b, int col, size_t row,
		     const struct ir_node *n, size_t field)
{
	for (size_t i = 0; i < n->niv; i++) {
		const struct ir_iv *iv = &s->l->iv[n->iv0 + i];
		s->list[i] = field == 0 ? iv->el : field == 1 ? iv->tel : iv->hbm;
	}
	nx_rowbuf_i64list(b, (size_t)col, row, s->list, n->niv);
}

static int ir_next(void *self, struct nx_rowbuf *b, struct nx_err *err)
{
	struct ir_src *s = self;
	const int *ix = s->map.idx;
	size_t cap = nx_rowbuf_capacity(b), row = 0;

	(void)err;
	for (; row < cap && s->next < s->l->nn; row++, s->next++) {
		const struct ir_node *n = &s->l->n[s->next];

		nx_rowbuf_i64(b, ix[O_ID], row, n->k);
		for (int u = 0; u < L_COUNT; u++)
			nx_rowbuf_i64(b, ix[O_BIR + u], row, n->up[u]);
		nx_rowbuf_str(b, ix[O_NAME], row, n->name);
		if (n->has_pcore && s->l->level == L_BIR)
			nx_rowbuf_i64(b, ix[O_EXTRA], row, n->pcore);
		nx_rowbuf_i64(b, ix[O_START], row, n->start);
		nx_rowbuf_i64(b, ix[O_END], row, n->end);
		for (int k = 0; k < SUMS; k++)
			nx_rowbuf_i64(b, ix[O_HBM_R + k], row, n->sums[k]);
		nx_rowbuf_i64(b, ix[O_MF], row, 0);
		/* "[[s,e],...]" */
		nx_strbuf_reset(&s->text);
		nx_strbuf_addch(&s->text, '[');
		for (size_t i = 0; i < n->niv; i++) {
			const struct ir_iv *iv = &s->l->iv[n->iv0 + i];
			nx_strbuf_addstr(&s->text, i ? ",[" : "[");
			nx_strbuf_addi64(&s->text, iv->s);
			nx_strbuf_addch(&s->text, ',');
			nx_strbuf_addi64(&s->text, iv->e);
			nx_strbuf_addch(&s->text, ']');
		}
		nx_strbuf_addch(&s->text, ']');
		nx_rowbuf_strn(b, ix[O_TIMES], row, s->text.buf, s->text.len);
		if (n->niv > s->caplist) {
			s->caplist = n->niv;
			s->list = nx_xrealloc(s->list, s->caplist * sizeof(*s->list));
		}
		put_list(s, b, ix[O_EL], row, n, 0);
		put_list(s, b, ix[O_TEL], row, n, 1);
		put_list(s, b, ix[O_HBM], row, n, 2);
		if (s->l->level == L_FRAMEWORK)
			for (int e = 0; e < ENGINES; e++)
				nx_rowbuf_i64(b, ix[O_EXTRA + e], row, n->eng[e]);
	}
	return (int)row;
}

/* One level's table: its rows from DuckDB, its nodes into dir/<table>.parquet. */
static int write_level(struct nx_ingest_ctx *c, struct nx_duck *d, const char *dir, int level,
		       struct nx_err *err)
{
	const char *names[O_EXTRA + ENGINES + 1] = {
		"id", "raw_bir_id", "raw_penguin_id", "raw_hlo_id", "raw_framework_id",
		levels[level].name_out, "start_ts", "end_ts", "hbm_read_bytes",
		"hbm_write_bytes", "sbuf_read_bytes", "sbuf_write_bytes", "load_weight_bytes",
		"modular_flow_invocation_idx", "time_intervals", "element_count_per_interval",
		"transpose_element_count_per_interval", "hbm_transfer_size_per_interval",
	};
	struct ir_level l = { .level = level, .scratch = NX_STRBUF_INIT };
	struct ir_src s = { .l = &l, .text = NX_STRBUF_INIT };
	struct nx_strbuf q = NX_STRBUF_INIT;
	char *path = nx_xasprintf("%s/%s.parquet", dir, levels[level].table);
	uint64_t rows = 0;
	int rc;

	if (level == L_BIR)
		names[O_EXTRA] = "pcore_idx";
	if (level == L_FRAMEWORK)
		for (int e = 0; e < ENGINES; e++)
			names[O_EXTRA + e] = nx_xasprintf("%s_engine_instruction_count", engines[e]);
	nx_strmap_init(&l.seen, sizeof(char *));
	nx_strbuf_addf(&q, "SELECT %s, raw_bir_id, raw_penguin_id, raw_hlo_id, raw_framework_id, "
		       "%s, pcore_idx::BIGINT, start_ts, end_ts, coalesce(hbm_read_bytes, 0), "
		       "coalesce(hbm_write_bytes, 0), coalesce(sbuf_read_bytes, 0), "
		       "coalesce(sbuf_write_bytes, 0), "
		       "coalesce(opcode = 'LDWEIGHTS', false)::BIGINT, "
		       "CASE lower(engine)", ids[level], levels[level].name_in);
	for (int e = 0; e < ENGINES; e++)
		nx_strbuf_addf(&q, " WHEN '%s' THEN %d", engines[e], e);
	nx_strbuf_addf(&q, " ELSE -1 END::BIGINT, coalesce(tensor_elements, 0), "
		       "coalesce(tensor_elements_transpose, 0) FROM Instruction WHERE "
		       "raw_bir_id IS NOT NULL AND raw_penguin_id IS NOT NULL AND "
		       "raw_hlo_id IS NOT NULL AND raw_framework_id IS NOT NULL "
		       "ORDER BY %s, start_ts, end_ts", ids[level]);
	rc = nx_colmap_init(&s.map, levels[level].table, names, err);
	if (!rc)
		rc = nx_duck_scan(d, q.buf, take_rows, &l, err);
	if (!rc && l.nn) {
		qsort(l.n, l.nn, sizeof(*l.n), node_cmp);
		struct nx_row_source src = { .table = s.map.table, .self = &s, .next = ir_next };
		rc = nx_ctx_copy(c, d, &src, path, NULL, "derived in C", &rows, err);
		if (!rc)
			rc = nx_db_create_table_view(d, dir, levels[level].table, err);
	} else if (!rc) {
		nx_ctx_table_done(c, levels[level].table, "derived in C", 0, 0);
	}
	if (rc)
		nx_err_wrap(err, "ir_rollup.c: %s", levels[level].table);
	if (level == L_FRAMEWORK)
		for (int e = 0; e < ENGINES; e++)
			free((char *)names[O_EXTRA + e]);
	free(l.n);
	free(l.iv);
	nx_strmap_release(&l.seen);
	nx_arena_free(&l.text);
	nx_strbuf_release(&l.scratch);
	free(s.list);
	nx_strbuf_release(&s.text);
	nx_strbuf_release(&q);
	free(path);
	return rc;
}

int nx_ir_rollup_write(struct nx_ingest_ctx *c, struct nx_duck *d, const char *dir,
		       struct nx_err *err)
{
	int rc = 0;

	if (c->isums.chain_n == 0) { /* no instruction carries the chain: no rows */
		for (int level = 0; level < L_COUNT; level++)
			nx_ctx_table_done(c, levels[level].table, "derived in C", 0, 0);
		return 0;
	}
	rc = nx_db_create_views(d, dir, err);
	for (int level = 0; !rc && level < L_COUNT; level++)
		rc = write_level(c, d, dir, level, err);
	return rc;
}
