/* SPDX-License-Identifier: MIT
 * summary_sums.c: Instruction and DmaPacket aggregates for Summary, accumulated while
 * streaming (see summary_sums.h). Each field mirrors an aggregate of the SQL it
 * replaced; the comments give that aggregate. */
#include "common/compat.h"
#include "ingest/summary_sums.h"
#include "common/strbuf.h"

#include <string.h>

static void add(struct nx_sum *s, int64_t v)
{
	s->v += v;
	s->any = true;
}

/* Opcodes that are set-up or bookkeeping, outside total_exec_time. */
static bool is_setup(const char *op)
{
	static const char *const setup[] = { "NOP", "SET_ORDERING_MODE", "EVENT_SEMAPHORE",
		"EVENT_SEMAPHORE_RANGE_CLEAR", "NOTIFY", "COMPARE_BRANCH", "DRAIN", "WRITE",
		"TENSOR_LOAD", "MODIFY_POOL_CONFIG" };
	for (size_t i = 0; i < NX_ARRAY_SIZE(setup); i++)
		if (!strcmp(op, setup[i]))
			return true;
	return false;
}

enum { OP_MATMUL = 1, OP_ACTIVATE = 2, OP_SETUP = 4 };

/* The index of an engine's name among eng_n's, -1 for none; kept by its pointer (a
 * direct-mapped table: a name whose slot another took is compared again). */
static int engine_of(struct nx_inst_sums *s, const char *name)
{
	static const char *const engines[5] = { "Tensor", "Vector", "Scalar", "Sync", "GpSimd" };
	struct nx_sums_name *m = &s->eng_seen[((uintptr_t)name >> 3) % NX_ARRAY_SIZE(s->eng_seen)];

	if (m->name != name) {
		m->name = name;
		m->what = -1;
		for (int e = 0; e < 5; e++)
			if (!strcmp(name, engines[e]))
				m->what = e;
	}
	return m->what;
}

/* The OP_* classes of an opcode's name, kept as engine_of keeps an engine's. */
static int opcode_of(struct nx_inst_sums *s, const char *name)
{
	struct nx_sums_name *m = &s->op_seen[((uintptr_t)name >> 3) % NX_ARRAY_SIZE(s->op_seen)];

	if (m->name != name) {
		m->name = name;
		m->what = (!strcmp(name, "MATMUL") ? OP_MATMUL : 0) |
			  (!strcmp(name, "ACTIVATE") ? OP_ACTIVATE : 0) |
			  (is_setup(name) ? OP_SETUP : 0);
	}
	return m->what;
}

void nx_inst_sums_add(struct nx_inst_sums *s, const struct nx_inst_row *r)
{
	int op = opcode_of(s, r->opcode), e = engine_of(s, r->engine);
	bool matmul = op & OP_MATMUL;
	int64_t dur = r->end - r->start;

	s->n++;
	if (r->known)
		for (int k = 0; k < NX_SUM_BYTES; k++)
			add(&s->bytes[k], r->bytes[k]);
	if (r->chain)
		s->chain_n++;
	if (r->known && r->bytes[NX_SUM_PS_SB] > 0)
		s->ps_sb_n++; /* count(*) FILTER (WHERE psum_read_sbuf_write_bytes > 0) */
	if (e >= 0) {
		s->eng_n[e]++;
		add(&s->eng_t[e], dur);
		/* sum(raw_flops) FILTER (WHERE engine = 'Tensor' AND opcode = 'MATMUL') ... */
		if (e == 0 && matmul && r->has_flops) {
			add(&s->hw_flops, r->raw_flops);
			add(&s->tp_flops, r->flops_tp);
			add(&s->adj_flops, r->adj_flops);
			add(&s->adj_tp_flops, r->adj_flops_tp);
		}
	}
	if (matmul)
		s->mm_n++;
	if (op & OP_ACTIVATE) {
		s->act_n++;
		add(&s->act_t, dur);
	}
	if (!(op & OP_SETUP)) {
		if (!s->has_x || r->start < s->x_first)
			s->x_first = r->start;
		if (!s->has_x || r->end > s->x_last)
			s->x_last = r->end;
		s->has_x = true;
	}
}

void nx_dma_sums_add(struct nx_dma_sums *s, const char *qt, int64_t start, int64_t end,
		     int64_t bytes)
{
	bool sw = !strcmp(qt, "software_dynamic"), hw = !strcmp(qt, "hardware_dynamic");

	if (!s->n || start < s->d_first)
		s->d_first = start;
	if (!s->n || end > s->d_last)
		s->d_last = end;
	s->n++;
	add(&s->t, end - start);
	add(&s->bytes, bytes);
	if (strcmp(qt, "instruction") && bytes > 4)
		add(&s->kbytes, bytes);
	if (sw) {
		s->sw_n++;
		add(&s->sw_b, bytes);
	} else if (hw) {
		s->hw_n++;
		add(&s->hw_b, bytes);
	} else {
		s->st_n++;
		add(&s->st_b, bytes);
	}
}

static void i128(struct nx_strbuf *sb, __int128 v)
{
	char buf[48];
	int n = 0;
	bool neg = v < 0;
	unsigned __int128 u = neg ? -(unsigned __int128)v : (unsigned __int128)v;

	do {
		buf[n++] = (char)('0' + (int)(u % 10));
		u /= 10;
	} while (u);
	if (neg)
		nx_strbuf_addch(sb, '-');
	while (n)
		nx_strbuf_addch(sb, buf[--n]);
}

/* sum(x) as HUGEINT, NULL when no row contributed. */
static void sum_col(struct nx_strbuf *sb, const struct nx_sum *s, const char *name)
{
	nx_strbuf_addstr(sb, ", CAST(");
	if (s->any) {
		nx_strbuf_addch(sb, '\'');
		i128(sb, s->v);
		nx_strbuf_addch(sb, '\'');
	} else {
		nx_strbuf_addstr(sb, "NULL");
	}
	nx_strbuf_addf(sb, " AS HUGEINT) AS %s", name);
}

/* coalesce(sum(x), 0) */
static void sum0_col(struct nx_strbuf *sb, const struct nx_sum *s, const char *name)
{
	struct nx_sum z = { .v = s->any ? s->v : 0, .any = true };
	sum_col(sb, &z, name);
}

static void i64_col(struct nx_strbuf *sb, bool valid, int64_t v, const char *name)
{
	if (valid)
		nx_strbuf_addf(sb, ", CAST(%" PRId64 " AS BIGINT) AS %s", v, name);
	else
		nx_strbuf_addf(sb, ", CAST(NULL AS BIGINT) AS %s", name);
}

int nx_sums_create_views(const struct nx_inst_sums *i, const struct nx_dma_sums *dm,
			 struct nx_duck *d, struct nx_err *err)
{
	static const char *const byte_names[NX_SUM_BYTES] = { "hbm_r", "hbm_w", "sb_r", "sb_w",
		"sp_s", "sp_r", "ps_r", "ps_w", "ps_sb", "in_q", "out_q", "w_q" };
	static const char *const eng[5] = { "te", "ve", "se", "sy", "gp" };
	struct nx_strbuf sb = NX_STRBUF_INIT;
	char name[16];
	int rc;

	nx_strbuf_addf(&sb, "CREATE OR REPLACE VIEW nx_InstSums AS SELECT CAST(%" PRIu64
		       " AS BIGINT) AS n", i->n);
	for (int k = 0; k < NX_SUM_BYTES; k++) {
		sum_col(&sb, &i->bytes[k], byte_names[k]);
		if (k == NX_SUM_PS_R + 1) /* after ps_w, as in the SQL */
			i64_col(&sb, true, (int64_t)i->ps_sb_n, "ps_sb_n");
	}
	sum0_col(&sb, &i->hw_flops, "hw_flops");
	sum0_col(&sb, &i->tp_flops, "tp_flops");
	sum0_col(&sb, &i->adj_flops, "adj_flops");
	sum0_col(&sb, &i->adj_tp_flops, "adj_tp_flops");
	i64_col(&sb, true, (int64_t)i->mm_n, "mm_n");
	sum0_col(&sb, &i->act_t, "act_t");
	i64_col(&sb, true, (int64_t)i->act_n, "act_n");
	for (int e = 0; e < 5; e++) {
		snprintf(name, sizeof(name), "%s_t", eng[e]);
		sum0_col(&sb, &i->eng_t[e], name);
		snprintf(name, sizeof(name), "%s_n", eng[e]);
		i64_col(&sb, true, (int64_t)i->eng_n[e], name);
	}
	i64_col(&sb, i->has_x, i->x_first, "x_first");
	i64_col(&sb, i->has_x, i->x_last, "x_last");
	i64_col(&sb, true, (int64_t)i->chain_n, "chain_n");
	if ((rc = nx_duck_exec(d, sb.buf, err)))
		goto out;
	nx_strbuf_reset(&sb);
	nx_strbuf_addf(&sb, "CREATE OR REPLACE VIEW nx_DmaSums AS SELECT CAST(%" PRIu64
		       " AS BIGINT) AS n", dm->n);
	sum_col(&sb, &dm->t, "t");
	sum_col(&sb, &dm->bytes, "bytes");
	sum_col(&sb, &dm->kbytes, "kbytes");
	i64_col(&sb, true, (int64_t)dm->st_n, "st_n");
	sum0_col(&sb, &dm->st_b, "st_b");
	i64_col(&sb, true, (int64_t)dm->sw_n, "sw_n");
	sum0_col(&sb, &dm->sw_b, "sw_b");
	i64_col(&sb, true, (int64_t)dm->hw_n, "hw_n");
	sum0_col(&sb, &dm->hw_b, "hw_b");
	i64_col(&sb, dm->n > 0, dm->d_first, "d_first");
	i64_col(&sb, dm->n > 0, dm->d_last, "d_last");
	rc = nx_duck_exec(d, sb.buf, err);
out:
	nx_strbuf_release(&sb);
	return rc;
}
