/* SPDX-License-Identifier: MIT
 * listing_ops.c: the operands of a listing instruction and the `decision` lines
 * (docs/formats/listing.md, "Operands" and "Compiler decisions"). Each operand word
 * is a keyword; which keywords an opcode takes, which it needs, and which operand slot
 * (src1, src2, dst2, imm, imm1 ...) each fills are in the tables below, so a listing
 * cannot give an opcode an operand it ignores. */
#include "common/compat.h"
#include "common/xalloc.h"
#include "kernels/listing_int.h"

#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum kw {
	K_DST, K_SRC, K_SRC1, K_WAIT, K_SIG, K_BLOCK, K_ACT, K_ALU, K_OP1, K_IMM, K_OPERAND0,
	K_OPERAND1, K_REVERSE0, K_REVERSE1, K_SCALE, K_BIAS, K_REDUCE_OP, K_REDUCE_RES,
	K_REDUCE_CMD, K_INITIAL, K_AXES, K_NEGATE, K_KEEPDIMS, K_PATTERN, K_OFFSET, K_CMUL,
	K_CMP_OP, K_ON_FALSE, K_COMP_OP0, K_COMP_OP1, K_BOUND0, K_BOUND1, K_PREDICATE, K_VALS,
	K_INDEX, K_NPERIDX, K_PERF, K_TRANSPOSE, K_ACC, K_STAT_OZ, K_MOV_OZ, K_TILE_POS,
	K_TILE_SIZE, K_NAME, K_BIR, K_COUNT,
};

/* Keyword spellings; `flag` keywords are bare words, the others KEY=VALUE. */
static const struct {
	const char *name;
	int kw;
	bool flag;
} words[] = {
	{ "dst", K_DST, false }, { "src", K_SRC, false }, { "src0", K_SRC, false },
	{ "data", K_SRC, false }, { "src1", K_SRC1, false }, { "data1", K_SRC1, false },
	{ "wait", K_WAIT, false }, { "sig", K_SIG, false }, { "block", K_BLOCK, false },
	{ "act", K_ACT, false }, { "alu", K_ALU, false }, { "op", K_ALU, false },
	{ "op0", K_ALU, false }, { "op1", K_OP1, false }, { "imm", K_IMM, false },
	{ "operand0", K_OPERAND0, false }, { "operand1", K_OPERAND1, false },
	{ "reverse0", K_REVERSE0, true }, { "reverse1", K_REVERSE1, true },
	{ "scale", K_SCALE, false }, { "bias", K_BIAS, false },
	{ "reduce_op", K_REDUCE_OP, false }, { "reduce_res", K_REDUCE_RES, false },
	{ "reduce_cmd", K_REDUCE_CMD, false }, { "initial", K_INITIAL, false },
	{ "axes", K_AXES, false }, { "negate", K_NEGATE, true }, { "keepdims", K_KEEPDIMS, true },
	{ "pattern", K_PATTERN, false }, { "offset", K_OFFSET, false },
	{ "range_start", K_OFFSET, false }, { "channel_multiplier", K_CMUL, false },
	{ "cmp_op", K_CMP_OP, false }, { "on_false_value", K_ON_FALSE, false },
	{ "comp_op0", K_COMP_OP0, false }, { "comp_op1", K_COMP_OP1, false },
	{ "bound0", K_BOUND0, false }, { "bound1", K_BOUND1, false },
	{ "predicate", K_PREDICATE, false }, { "vals", K_VALS, false },
	{ "index", K_INDEX, false }, { "num_elem_per_idx", K_NPERIDX, false },
	{ "perf", K_PERF, false }, { "transpose", K_TRANSPOSE, true }, { "acc", K_ACC, true },
	{ "stationary_onezero", K_STAT_OZ, true }, { "moving_onezero", K_MOV_OZ, true },
	{ "tile_position", K_TILE_POS, false }, { "tile_size", K_TILE_SIZE, false },
	{ "name", K_NAME, false }, { "bir", K_BIR, false },
};

#define B(k) (1ull << (k))
/* Taken by every instruction. */
#define COMMON (B(K_WAIT) | B(K_SIG) | B(K_NAME) | B(K_BIR))
#define DATA (B(K_SRC) | B(K_DST))
#define REDUCE (B(K_REDUCE_OP) | B(K_REDUCE_RES) | B(K_REDUCE_CMD))
#define AFFINE (B(K_PATTERN) | B(K_OFFSET) | B(K_CMUL))
#define MM_TILE (B(K_TILE_POS) | B(K_TILE_SIZE))

/* What each opcode needs and what else it takes (besides COMMON). */
static const struct {
	uint64_t need, take;
} spec[NX_OP_COUNT] = {
	[NX_OP_NOP] = { 0, B(K_IMM) },
	[NX_OP_LDWEIGHTS] = { B(K_SRC), B(K_TRANSPOSE) | B(K_STAT_OZ) | MM_TILE },
	[NX_OP_MATMUL] = { DATA, B(K_ACC) | B(K_TRANSPOSE) | B(K_MOV_OZ) | B(K_PERF) | MM_TILE },
	[NX_OP_TENSOR_TENSOR] = { DATA | B(K_SRC1) | B(K_ALU), B(K_PERF) },
	[NX_OP_TENSOR_SCALAR] = { DATA | B(K_ALU), B(K_IMM) | B(K_OPERAND0) | B(K_REVERSE0) |
						   B(K_OP1) | B(K_OPERAND1) | B(K_REVERSE1) |
						   B(K_PERF) },
	[NX_OP_TENSOR_REDUCE] = { DATA | B(K_ALU), B(K_AXES) | B(K_NEGATE) | B(K_KEEPDIMS) |
						   B(K_PERF) },
	[NX_OP_ACTIVATE] = { DATA, B(K_ACT) | B(K_IMM) | B(K_SCALE) | B(K_BIAS) | REDUCE |
				   B(K_PERF) },
	[NX_OP_TENSOR_COPY] = { DATA, B(K_PERF) },
	[NX_OP_MEMSET] = { B(K_DST), B(K_IMM) | B(K_PERF) },
	[NX_OP_IOTA] = { B(K_DST), AFFINE | B(K_PERF) },
	[NX_OP_EVENT_SEMAPHORE] = { 0, 0 },
	[NX_OP_DMA_TRIGGER] = { B(K_BLOCK), 0 },
	[NX_OP_NOTIFY] = { 0, B(K_IMM) },
	[NX_OP_TENSOR_TENSOR_SCAN] = { DATA | B(K_SRC1) | B(K_ALU) | B(K_OP1),
				       B(K_INITIAL) | B(K_PERF) },
	[NX_OP_BN_STATS] = { DATA, B(K_PERF) },
	[NX_OP_BN_AGGR] = { DATA, B(K_PERF) },
	[NX_OP_RECIPROCAL] = { DATA, B(K_PERF) },
	[NX_OP_AFFINE_SELECT] = { DATA | B(K_CMP_OP), AFFINE | B(K_ON_FALSE) | B(K_PERF) },
	[NX_OP_SCALAR_TENSOR_TENSOR] = { DATA | B(K_SRC1) | B(K_ALU) | B(K_OPERAND0) | B(K_OP1),
					 B(K_REVERSE0) | B(K_PERF) },
	[NX_OP_TENSOR_SCALAR_REDUCE] = { DATA | B(K_ALU) | B(K_OPERAND0) | B(K_REDUCE_OP) |
					 B(K_REDUCE_RES), B(K_REVERSE0) | B(K_PERF) },
	[NX_OP_TRANSPOSE] = { DATA, B(K_PERF) },
	[NX_OP_TENSOR_COPY_PREDICATED] = { DATA | B(K_PREDICATE), B(K_REVERSE0) | B(K_PERF) },
	[NX_OP_SELECT] = { DATA | B(K_SRC1) | B(K_PREDICATE), B(K_PERF) },
	[NX_OP_RANGE_SELECT] = { DATA | B(K_COMP_OP0) | B(K_COMP_OP1) | B(K_BOUND0) | B(K_BOUND1),
				 B(K_OFFSET) | B(K_ON_FALSE) | REDUCE | B(K_PERF) },
	[NX_OP_MAX8] = { DATA, B(K_PERF) },
	[NX_OP_FIND_INDEX8] = { DATA | B(K_VALS), B(K_PERF) },
	[NX_OP_MATCH_REPLACE8] = { DATA | B(K_VALS), B(K_IMM) | B(K_PERF) },
	[NX_OP_LOCAL_GATHER] = { DATA | B(K_INDEX), B(K_NPERIDX) | B(K_PERF) },
};

/* The parsing state of one instruction line. */
struct ops {
	struct asm_state *st;
	struct nx_inst *in;
	const char *opname;
	uint64_t seen;
	char **block, **bname;
};

/* The index in words[] of the keyword of token t (its value in *val), or -1. */
static int find_word(const char *t, const char **val)
{
	const char *eq = strchr(t, '=');
	size_t n = eq ? (size_t)(eq - t) : strlen(t);

	*val = eq ? eq + 1 : NULL;
	for (size_t i = 0; i < NX_ARRAY_SIZE(words); i++)
		if (strlen(words[i].name) == n && !strncmp(words[i].name, t, n))
			return (int)i;
	return -1;
}

static int fail(struct ops *o, const char *fmt, ...) NX_PRINTF(2, 3);
static int fail(struct ops *o, const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	return nx__asm_fail(o->st, "%s", msg);
}

static bool is_ap(const char *v)
{
	return !strncmp(v, "sbuf[", 5) || !strncmp(v, "psum[", 5);
}

static int number(struct ops *o, const char *key, const char *v, float *out)
{
	char *end;

	errno = 0;
	*out = strtof(v, &end);
	if (end == v || *end)
		return fail(o, "bad %s '%s': expected a number%s", key, v,
			    !strcmp(key, "imm") ? "" : " or an access pattern");
	return 0;
}

static int integer(struct ops *o, const char *key, const char *v, int64_t lo, int64_t hi,
		   int64_t *out)
{
	char *end;

	errno = 0;
	*out = strtoll(v, &end, 0);
	if (end == v || *end || errno || *out < lo || *out > hi)
		return fail(o, "bad %s '%s': expected an integer %" PRId64 "..%" PRId64, key, v, lo,
			    hi);
	return 0;
}

static int alu(struct ops *o, const char *key, const char *v, uint8_t *out)
{
	int a = nx_alu_parse(v);

	if (a < 0)
		return fail(o, "unknown ALU operation '%s' in %s=", v, key);
	if ((!strcmp(key, "cmp_op") || !strncmp(key, "comp_op", 7)) && !nx_alu_is_compare(a))
		return fail(o, "%s=%s is not a comparison (is_equal, not_equal, is_gt, is_ge, "
			    "is_lt, is_le)", key, v);
	*out = (uint8_t)a;
	return 0;
}

/* The operand slot (src1, src2, dst2) whose role in this opcode is `key`, or NULL. */
static struct nx_ap *role_slot(struct nx_inst *in, const char *key)
{
	const struct nx_op_roles *r = nx_op_roles(in->opcode);

	if (r->src1 && !strcmp(r->src1, key))
		return &in->src1;
	if (r->src2 && !strcmp(r->src2, key))
		return &in->src2;
	if (r->dst2 && !strcmp(r->dst2, key))
		return &in->dst2;
	return NULL;
}

/* KEY=IMM|AP: an AP goes to the slot of that role, a number to *num. */
static int imm_or_ap(struct ops *o, const char *key, const char *v, float *num)
{
	struct nx_ap *slot = role_slot(o->in, key);

	if (!is_ap(v))
		return number(o, key, v, num);
	if (!slot)
		return fail(o, "%s takes a number for %s=, not an access pattern", o->opname, key);
	return nx__asm_ap(o->st, v, slot);
}

/* KEY=AP into the slot of that role. */
static int ap_role(struct ops *o, const char *key, const char *v)
{
	struct nx_ap *slot = role_slot(o->in, key);

	if (!slot)
		return fail(o, "%s takes no %s=", o->opname, key);
	return nx__asm_ap(o->st, v, slot);
}

/* "{s0,s1,...}": 1 to 4 signed element steps. */
static int pattern(struct ops *o, const char *v)
{
	const char *p = v;
	unsigned k = 0;

	if (*p++ != '{')
		return fail(o, "bad pattern '%s': expected {STEP0,...} (1 to 4 steps)", v);
	for (;;) {
		char *end;
		long long x;

		errno = 0;
		x = strtoll(p, &end, 10);
		if (end == p || errno || x < INT32_MIN || x > INT32_MAX || k == NX_AP_DIMS)
			return fail(o, "bad pattern '%s': expected {STEP0,...} (1 to 4 steps)", v);
		o->in->pattern[k++] = (int32_t)x;
		p = end;
		if (*p == '}' && !p[1])
			return 0;
		if (*p++ != ',')
			return fail(o, "bad pattern '%s': expected {STEP0,...} (1 to 4 steps)", v);
	}
}

/* "R,C" for tile_position / tile_size, each 0..128. */
static int tile(struct ops *o, const char *key, const char *v, uint8_t *out)
{
	unsigned a, b;
	char tail;

	if (sscanf(v, "%u,%u%c", &a, &b, &tail) != 2 || a > NX_NUM_PARTITIONS ||
	    b > NX_NUM_PARTITIONS)
		return fail(o, "bad %s '%s': expected ROW,COLUMN (0..128 each)", key, v);
	out[0] = (uint8_t)a;
	out[1] = (uint8_t)b;
	return 0;
}

static int perf(struct ops *o, const char *v)
{
	if (!strcmp(v, "1x"))
		o->in->perf_mode = 0;
	else if (!strcmp(v, "2x"))
		o->in->perf_mode = 1;
	else if (!strcmp(v, "4x"))
		o->in->perf_mode = 2;
	else
		return fail(o, "bad performance mode '%s' (1x, 2x, 4x)", v);
	return 0;
}

static int flag_word(struct ops *o, int kw)
{
	struct nx_inst *in = o->in;

	switch (kw) {
	case K_REVERSE0: in->flags2 |= NX_INST2_REVERSE0; break;
	case K_REVERSE1: in->flags2 |= NX_INST2_REVERSE1; break;
	case K_NEGATE: in->flags2 |= NX_INST2_NEGATE; break;
	case K_KEEPDIMS: in->flags2 |= NX_INST2_KEEPDIMS; break;
	case K_TRANSPOSE: in->flags |= NX_INST_TRANSPOSE; break;
	case K_ACC: in->flags |= NX_INST_ACCUMULATE; break;
	case K_STAT_OZ: in->flags2 |= NX_INST2_STAT_ONEZERO; break;
	case K_MOV_OZ: in->flags2 |= NX_INST2_MOV_ONEZERO; break;
	default: break;
	}
	return 0;
}

static int semantics(struct ops *o, int kw, const char *key, const char *v)
{
	struct nx_inst *in = o->in;
	int64_t x;
	int k, rc;

	switch (kw) {
	case K_DST: return nx__asm_ap(o->st, v, &in->dst);
	case K_SRC: return nx__asm_ap(o->st, v, &in->src0);
	case K_SRC1: return ap_role(o, "src1", v);
	case K_WAIT: return nx__asm_wait(o->st, v, in);
	case K_SIG: return nx__asm_sig(o->st, v, in);
	case K_BLOCK:
		free(*o->block);
		*o->block = nx_xstrdup(v);
		return 0;
	case K_ACT:
		if ((k = nx_act_fn_parse(v)) < 0)
			return fail(o, "unknown activation function '%s'", v);
		in->act_fn = (uint8_t)k;
		return 0;
	case K_ALU: return alu(o, key, v, &in->alu);
	case K_OP1:
		in->flags2 |= in->opcode == NX_OP_TENSOR_SCALAR ? NX_INST2_OP1 : 0;
		return alu(o, key, v, &in->alu1);
	case K_CMP_OP: case K_COMP_OP0: return alu(o, key, v, &in->alu);
	case K_COMP_OP1: return alu(o, key, v, &in->alu1);
	case K_REDUCE_OP: return alu(o, key, v, &in->reduce_op);
	case K_IMM: case K_SCALE:
		return imm_or_ap(o, key, v, &in->imm);
	case K_OPERAND0:
		return imm_or_ap(o, key, v, &in->imm);
	case K_OPERAND1: case K_BIAS: case K_INITIAL:
		return imm_or_ap(o, key, v, &in->imm1);
	case K_ON_FALSE: return number(o, key, v, &in->imm1);
	case K_REDUCE_RES: case K_BOUND0: case K_BOUND1: case K_PREDICATE: case K_VALS:
	case K_INDEX:
		return ap_role(o, key, v);
	case K_REDUCE_CMD:
		if ((k = nx_reduce_cmd_parse(v)) < 0)
			return fail(o, "bad reduce_cmd '%s' (idle, reset, reduce, reset_reduce)",
				    v);
		in->reduce_cmd = (uint8_t)k;
		return 0;
	case K_AXES:
		if ((rc = integer(o, key, v, 1, NX_AP_DIMS, &x)))
			return rc;
		in->axes = (uint8_t)x;
		return 0;
	case K_PATTERN: return pattern(o, v);
	case K_OFFSET: case K_CMUL:
		if ((rc = integer(o, key, v, INT32_MIN, INT32_MAX, &x)))
			return rc;
		in->param[kw == K_CMUL] = (int32_t)x;
		return 0;
	case K_NPERIDX:
		if ((rc = integer(o, key, v, 1, INT32_MAX, &x)))
			return rc;
		in->param[0] = (int32_t)x;
		return 0;
	case K_PERF: return perf(o, v);
	case K_TILE_POS: return tile(o, key, v, in->tile);
	case K_TILE_SIZE: return tile(o, key, v, in->tile + 2);
	case K_NAME:
		if (!v[0])
			return fail(o, "empty instruction name");
		free(*o->bname);
		*o->bname = nx_xstrdup(v);
		return 0;
	case K_BIR: {
		uint64_t u;

		if ((rc = nx__asm_u64(o->st, v, &u, "bir id")))
			return rc;
		if (u > UINT32_MAX - 1)
			return fail(o, "bad bir id '%s' (0..%u)", v, UINT32_MAX - 1);
		in->bir_id = (uint32_t)u;
		return 0;
	}
	default:
		return flag_word(o, kw);
	}
}

static int one(struct ops *o, const char *t)
{
	const char *v;
	int i = find_word(t, &v), kw;

	if (i < 0)
		return fail(o, "unknown operand '%s'", t);
	if (words[i].flag && v)
		return fail(o, "'%s' takes no value: write '%s'", t, words[i].name);
	if (!words[i].flag && !v)
		return fail(o, "operand '%s' needs a value: %s=...", t, words[i].name);
	kw = words[i].kw;
	if (!((COMMON | spec[o->in->opcode].need | spec[o->in->opcode].take) & B(kw)))
		return fail(o, "%s takes no '%s%s'", o->opname, words[i].name, v ? "=" : "");
	if (o->seen & B(kw))
		return fail(o, "'%s' is given twice", words[i].name);
	o->seen |= B(kw);
	return semantics(o, kw, words[i].name, v);
}

/* The keyword a missing required operand is spelled with. */
static const char *kw_name(int kw)
{
	for (size_t i = 0; i < NX_ARRAY_SIZE(words); i++)
		if (words[i].kw == kw)
			return words[i].name;
	return "?";
}

/* Defaults and the rules that involve several operands. */
static int finish(struct ops *o)
{
	struct nx_inst *in = o->in;
	uint64_t missing = spec[in->opcode].need & ~o->seen;

	if (missing) {
		int kw = 0;

		while (!(missing & B(kw)))
			kw++;
		if (kw == K_BLOCK)
			return fail(o, "DMA trigger without block=NAME");
		return fail(o, "%s needs %s=", o->opname, kw_name(kw));
	}
	if ((o->seen & B(K_IMM)) && (o->seen & (B(K_OPERAND0) | B(K_SCALE))))
		return fail(o, "imm= and %s= give the same value",
			    o->seen & B(K_SCALE) ? "scale" : "operand0");
	if (in->opcode == NX_OP_TENSOR_SCALAR &&
	    !(o->seen & B(K_OP1)) != !(o->seen & B(K_OPERAND1)))
		return fail(o, "op1= and operand1= go together");
	if ((o->seen & B(K_REVERSE1)) && !(o->seen & B(K_OP1)))
		return fail(o, "reverse1 needs op1=");
	if (!(o->seen & B(K_REDUCE_OP)) != !(o->seen & B(K_REDUCE_RES)))
		return fail(o, "reduce_op= and reduce_res= go together");
	if ((o->seen & B(K_REDUCE_RES)) && !(o->seen & B(K_REDUCE_CMD)) &&
	    in->opcode != NX_OP_TENSOR_SCALAR_REDUCE)
		in->reduce_cmd = NX_RCMD_RESET_REDUCE;
	if (in->opcode == NX_OP_ACTIVATE) {
		if (!(o->seen & B(K_ACT)))
			in->act_fn = NX_ACT_IDENTITY;
		if (!(o->seen & (B(K_IMM) | B(K_SCALE))))
			in->imm = 1.0f; /* scale */
	}
	if ((o->seen & B(K_AXES)) && in->axes > nx_ap_ndim(&in->src0))
		return fail(o, "axes=%u but src has %u free dimensions", in->axes,
			    nx_ap_ndim(&in->src0));
	if (o->seen & B(K_PATTERN)) {
		unsigned n = 0;

		for (unsigned k = 0; k < NX_AP_DIMS; k++)
			if (in->pattern[k])
				n = k + 1;
		if (n > nx_ap_ndim(&in->dst))
			return fail(o, "pattern= has %u steps but dst has %u free dimensions", n,
				    nx_ap_ndim(&in->dst));
	}
	return 0;
}

int nx__asm_operands(struct asm_state *st, struct nx_inst *in, char **tok, int n, char **block,
		     char **bname)
{
	struct ops o = { st, in, nx_opcode_name(in->opcode), 0, block, bname };
	int rc = 0;

	for (int i = 0; i < n && !rc; i++)
		rc = one(&o, tok[i]);
	return rc ? rc : finish(&o);
}

static bool identifier(const char *s, size_t n)
{
	if (!n || !(isalpha((unsigned char)s[0]) || s[0] == '_'))
		return false;
	for (size_t i = 1; i < n; i++)
		if (!(isalnum((unsigned char)s[i]) || s[i] == '_' || s[i] == '.'))
			return false;
	return true;
}

int nx__asm_decision(struct asm_state *st, const char *file, int64_t line, char **tok, int n)
{
	struct nx_debug_info *dbg = &st->neff->dbg;
	struct nx_dbg_decision d = { 0 };

	if (n < 1)
		return nx__asm_fail(st, "expected: decision KIND KEY=VALUE ...");
	if (!identifier(tok[0], strlen(tok[0])))
		return nx__asm_fail(st, "bad decision kind '%s': expected an identifier", tok[0]);
	d.keys = nx_xcalloc((size_t)n, sizeof(char *));
	d.values = nx_xcalloc((size_t)n, sizeof(char *));
	for (int i = 1; i < n; i++) {
		const char *eq = strchr(tok[i], '=');

		if (!eq || !identifier(tok[i], (size_t)(eq - tok[i]))) {
			nx_dbg_decision_release(&d);
			return nx__asm_fail(st, "bad decision argument '%s': expected KEY=VALUE",
					    tok[i]);
		}
		d.keys[d.nargs] = nx_xstrndup(tok[i], (size_t)(eq - tok[i]));
		d.values[d.nargs++] = nx_xstrdup(eq + 1);
	}
	d.kind = nx_xstrdup(tok[0]);
	d.file = file ? nx_xstrdup(file) : NULL;
	d.line = file ? line : -1;
	NX_GROW(dbg->decisions, dbg->ndecisions + 1, st->cap_decisions);
	dbg->decisions[dbg->ndecisions++] = d;
	return 0;
}
