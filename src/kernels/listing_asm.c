/* SPDX-License-Identifier: MIT
 * listing_asm.c: assembles a kernel listing (docs/formats/listing.md) into an
 * in-memory NEFF: declarations become def.json tensors and queues and per-engine DMA
 * blocks, instruction lines become encoded-ready struct nx_inst in their engine's
 * stream, and source locations become kernel_debug_info entries. */
#include "common/compat.h"
#include "common/fsutil.h"
#include "common/hash.h"
#include "common/strbuf.h"
#include "common/xalloc.h"
#include "kernels/listing.h"
#include "kernels/listing_int.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Splits a line into tokens on blanks outside brackets; '#' starts a comment. */
static int tokenize(struct asm_state *st, char *s, char **tok, int *ntok)
{
	int n = 0, depth = 0;

	*ntok = 0;
	while (*s) {
		while (*s == ' ' || *s == '\t' || *s == '\r')
			s++;
		if (!*s || *s == '#')
			break;
		if (n == NX_ASM_MAX_TOK)
			return nx__asm_fail(st, "too many words on one line (max %d)", NX_ASM_MAX_TOK);
		tok[n++] = s;
		for (; *s; s++) {
			if (*s == '[' || *s == '{')
				depth++;
			else if ((*s == ']' || *s == '}') && depth > 0)
				depth--;
			else if (!depth && (*s == ' ' || *s == '\t' || *s == '\r' || *s == '#'))
				break;
		}
		if (*s == '#') {
			*s = '\0';
			break;
		}
		if (*s)
			*s++ = '\0';
	}
	*ntok = n;
	return 0;
}

static int kv(const char *tok, const char *key, const char **val)
{
	size_t n = strlen(key);

	if (strncmp(tok, key, n) || tok[n] != '=')
		return 0;
	*val = tok + n + 1;
	return 1;
}

static int d_tensor(struct asm_state *st, char **tok, int n)
{
	static const struct { const char *kind, *def; int k; } kinds[] = {
		{ "input", "input", NX_TENSOR_IN }, { "output", "output", NX_TENSOR_OUT },
		{ "weight", "file", NX_TENSOR_WEIGHT }, { "internal", "tmp-buf", NX_TENSOR_OTHER },
		{ "spill", "virtual", NX_TENSOR_OTHER }, /* a compiler's SBUF spill space */
	};
	struct nx_neff *neff = st->neff;
	struct nx_tensor *t;
	uint64_t elems = 1;
	char *p;
	int kind = -1, dt;

	if (n != 5)
		return nx__asm_fail(st, "expected: tensor NAME input|output|weight|internal|spill DTYPE "
				    "D0xD1...");
	for (size_t i = 0; i < NX_ARRAY_SIZE(kinds); i++)
		if (!strcmp(tok[2], kinds[i].kind))
			kind = (int)i;
	if (kind < 0)
		return nx__asm_fail(st, "unknown tensor kind '%s'", tok[2]);
	if ((dt = nx_dtype_parse(tok[3])) < 0)
		return nx__asm_fail(st, "unknown dtype '%s'", tok[3]);
	if (!asm_sym_add(&st->tensors, tok[1], (int)neff->ntensors))
		return nx__asm_fail(st, "tensor '%s' is declared twice", tok[1]);
	NX_GROW(neff->tensors, neff->ntensors + 1, st->cap_tensors);
	t = &neff->tensors[neff->ntensors++];
	memset(t, 0, sizeof(*t));
	t->name = nx_xstrdup(tok[1]);
	t->def_type = nx_xstrdup(kinds[kind].def);
	t->kind = kinds[kind].k;
	t->var_id = (int64_t)neff->ntensors - 1;
	t->dtype = dt;
	t->node = -1;
	for (p = tok[4]; *p;) {
		uint64_t v;
		char *end;

		if (t->rank == 8 || !isdigit((unsigned char)*p))
			return nx__asm_fail(st, "bad shape '%s'", tok[4]);
		v = strtoull(p, &end, 10);
		if (!v || (*end && *end != 'x'))
			return nx__asm_fail(st, "bad shape '%s'", tok[4]);
		t->shape[t->rank++] = v;
		elems *= v;
		p = *end ? end + 1 : end;
	}
	if (!t->rank)
		return nx__asm_fail(st, "bad shape '%s'", tok[4]);
	t->size = elems * nx_dtype_size(dt);
	return 0;
}

static int d_queue(struct asm_state *st, char **tok, int n)
{
	static const struct { const char *name; int qt; } types[] = {
		{ "in", NX_QT_INPUT }, { "out", NX_QT_OUTPUT }, { "data", NX_QT_DATA },
		{ "dynamic", NX_QT_SOFTWARE_DYNAMIC }, { "dynamic_hw", NX_QT_HARDWARE_DYNAMIC },
		{ "instruction", NX_QT_INSTRUCTION },
	};
	struct nx_neff *neff = st->neff;
	struct nx_dma_queue *q;
	int type = -1, owner, rc;

	if (n < 4)
		return nx__asm_fail(st, "expected: queue NAME TYPE OWNER [sem=N] [engine=E] [idx=I]");
	for (size_t i = 0; i < NX_ARRAY_SIZE(types); i++)
		if (!strcmp(tok[2], types[i].name))
			type = (int)i;
	if (type < 0)
		return nx__asm_fail(st, "unknown queue type '%s' (in, out, data, dynamic, "
				    "dynamic_hw, instruction)", tok[2]);
	if ((owner = nx_engine_parse(tok[3])) < 0)
		return nx__asm_fail(st, "unknown engine '%s'", tok[3]);
	if (!asm_sym_add(&st->queues, tok[1], (int)neff->nqueues))
		return nx__asm_fail(st, "queue '%s' is declared twice", tok[1]);
	NX_GROW(neff->queues, neff->nqueues + 1, st->cap_queues);
	q = &neff->queues[neff->nqueues++];
	memset(q, 0, sizeof(*q));
	q->name = nx_xstrdup(tok[1]);
	q->def_type = nx_xstrdup(tok[2]);
	q->queue_type = types[type].qt;
	q->owner = owner;
	q->semaphore = -1;
	q->engine_idx = (int)((neff->nqueues - 1) % 16);
	q->queue_idx = (int)((neff->nqueues - 1) / 16);
	for (int i = 4; i < n; i++) {
		const char *v;
		uint64_t x;

		if (kv(tok[i], "sem", &v)) {
			if ((rc = nx__asm_u64(st, v, &x, "semaphore")))
				return rc;
			if (x >= NX_NUM_SEMAPHORES)
				return nx__asm_fail(st, "semaphore %" PRIu64 " is out of range", x);
			q->semaphore = (int)x;
		} else if (kv(tok[i], "engine", &v)) {
			if ((rc = nx__asm_u64(st, v, &x, "DMA engine")))
				return rc;
			q->engine_idx = (int)(x % 16);
		} else if (kv(tok[i], "idx", &v)) {
			if ((rc = nx__asm_u64(st, v, &x, "queue index")))
				return rc;
			q->queue_idx = (int)(x % 16);
		} else {
			return nx__asm_fail(st, "unknown queue attribute '%s'", tok[i]);
		}
	}
	return 0;
}

static int d_block(struct asm_state *st, char **tok, int n)
{
	struct nx_neff *neff = st->neff;
	struct nx_dma_block *b;
	int q, rc;

	if (n < 3 || n > 4)
		return nx__asm_fail(st, "expected: block NAME QUEUE [sem=N]");
	if ((q = asm_sym_get(&st->queues, tok[2])) < 0)
		return nx__asm_fail(st, "block '%s' names unknown queue '%s'", tok[1], tok[2]);
	if (!asm_sym_add(&st->blocks, tok[1], (int)neff->nblocks))
		return nx__asm_fail(st, "block '%s' is declared twice", tok[1]);
	NX_GROW(neff->blocks, neff->nblocks + 1, st->cap_blocks);
	b = &neff->blocks[neff->nblocks++];
	memset(b, 0, sizeof(*b));
	b->queue = q;
	b->semaphore = -1;
	b->engine = neff->queues[q].owner;
	if (n == 4) {
		const char *v;
		uint64_t x;

		if (!kv(tok[3], "sem", &v))
			return nx__asm_fail(st, "unknown block attribute '%s'", tok[3]);
		if ((rc = nx__asm_u64(st, v, &x, "semaphore")))
			return rc;
		if (x >= NX_NUM_SEMAPHORES)
			return nx__asm_fail(st, "semaphore %" PRIu64 " is out of range", x);
		b->semaphore = (int)x;
	}
	st->cur_block = (int)neff->nblocks - 1;
	st->cap_desc = 0;
	return 0;
}

static int d_desc(struct asm_state *st, char **tok, int n)
{
	struct nx_dma_block *b;
	struct nx_dma_desc d;
	bool tr = false;
	int rc;

	if (st->cur_block < 0)
		return nx__asm_fail(st, "'desc' outside a block");
	if (n == 5 && !strcmp(tok[4], "transpose"))
		tr = true;
	else if (n != 4)
		return nx__asm_fail(st, "expected: desc SRC -> DST [transpose]");
	if (strcmp(tok[2], "->"))
		return nx__asm_fail(st, "expected '->' between descriptor sides, got '%s'", tok[2]);
	if ((rc = nx__asm_desc(st, tok[1], tok[3], tr, &d)))
		return rc;
	b = &st->neff->blocks[st->cur_block];
	NX_GROW(b->desc, b->ndesc + 1, st->cap_desc);
	b->desc[b->ndesc++] = d;
	b->bytes += d.bytes;
	return 0;
}

/* Returns the debug entry for file:line in the current loop nest, adding it on first
 * use: one kernel instruction per source line and iteration. */
static uint32_t dbg_entry(struct asm_state *st, const char *file, int64_t line)
{
	struct nx_debug_info *dbg = &st->neff->dbg;
	struct nx_dbg_inst *d;
	char *key = nx_xasprintf("%s:%" PRId64 "#%" PRId64, file, line, st->cur_iter);
	int idx = asm_sym_get(&st->dbg, key);

	if (idx >= 0) {
		free(key);
		return (uint32_t)idx;
	}
	asm_sym_add(&st->dbg, key, (int)dbg->ninsts);
	free(key);
	NX_GROW(dbg->insts, dbg->ninsts + 1, st->cap_dbg);
	d = &dbg->insts[dbg->ninsts];
	memset(d, 0, sizeof(*d));
	d->name = nx_xasprintf("inst.%zu:0", dbg->ninsts);
	d->file = nx_xstrdup(file);
	d->line = line;
	d->stack_frame_id = st->have_frame ? 0 : -1;
	d->iteration_vars_id = st->cur_iter;
	d->bir_location = nx_xasprintf("%s:%" PRId64, file, line);
	return (uint32_t)dbg->ninsts++;
}

/* "iter m=3@24 n=1@25": the loop nest (outermost first) of the instructions that
 * follow, each variable with its value and the line of its loop; "iter" alone ends
 * it. Nests share their common prefix in the debug info. */
static int d_iter(struct asm_state *st, char **tok, int n)
{
	struct nx_debug_info *dbg = &st->neff->dbg;
	struct nx_strbuf key = NX_STRBUF_INIT;
	int64_t parent = -1;
	int rc = 0;

	if (n > 1 && !st->source)
		return nx__asm_fail(st, "'iter' needs a 'source FILE' line first");
	for (int i = 1; i < n && !rc; i++) {
		const char *eq = strchr(tok[i], '='), *at = strchr(tok[i], '@');
		char *name, *end;
		long long value;
		uint64_t line = 0;
		int id;

		if (!eq || eq == tok[i] || (at && at < eq))
			rc = nx__asm_fail(st, "bad iteration variable '%s': expected NAME=VALUE[@LINE]",
					  tok[i]);
		if (rc)
			break;
		value = strtoll(eq + 1, &end, 10);
		if (end == eq + 1 || (*end && *end != '@')) {
			rc = nx__asm_fail(st, "bad iteration variable '%s': expected NAME=VALUE[@LINE]",
					  tok[i]);
			break;
		}
		if (at && (rc = nx__asm_u64(st, at + 1, &line, "loop line")))
			break;
		nx_strbuf_addf(&key, "/%s", tok[i]);
		id = asm_sym_get(&st->iters, nx_strbuf_str(&key));
		if (id < 0) {
			struct nx_dbg_itervar *v;

			id = (int)dbg->nitervars;
			asm_sym_add(&st->iters, nx_strbuf_str(&key), id);
			NX_GROW(dbg->itervars, dbg->nitervars + 1, st->cap_iters);
			v = &dbg->itervars[dbg->nitervars++];
			name = nx_xstrndup(tok[i], (size_t)(eq - tok[i]));
			v->id = id;
			v->parent = parent;
			v->name = name;
			v->file = nx_xstrdup(st->source);
			v->value = value;
			v->line = (int64_t)line;
		}
		parent = id;
	}
	nx_strbuf_release(&key);
	if (!rc)
		st->cur_iter = parent;
	return rc;
}

/* "@LINE" (of the source file) or "@FILE:LINE" into a new *file and *line. */
static int where(struct asm_state *st, const char *s, char **file, int64_t *line)
{
	const char *colon = strrchr(s, ':');
	uint64_t l;
	int rc;

	if (!colon && !st->source)
		return nx__asm_fail(st, "'@%s' needs a 'source FILE' line first (or @FILE:LINE)",
				    s);
	if ((rc = nx__asm_u64(st, colon ? colon + 1 : s, &l, "source line")))
		return rc;
	if (l > INT32_MAX)
		return nx__asm_fail(st, "bad source line '%s'", colon ? colon + 1 : s);
	*file = colon ? nx_xstrndup(s, (size_t)(colon - s)) : nx_xstrdup(st->source);
	*line = (int64_t)l;
	return 0;
}

static int location(struct asm_state *st, const char *s, uint32_t *debug_id)
{
	char *file;
	int64_t line;
	int rc = where(st, s, &file, &line);

	if (rc)
		return rc;
	*debug_id = dbg_entry(st, file, line);
	free(file);
	return 0;
}

/* "[@LOC] decision KIND KEY=VALUE ..." */
static int decision(struct asm_state *st, char **tok, int n)
{
	char *file = NULL;
	int64_t line = -1;
	int i = 0, rc = 0;

	if (tok[0][0] == '@') {
		if ((rc = where(st, tok[0] + 1, &file, &line)))
			return rc;
		i = 1;
	}
	rc = nx__asm_decision(st, file, line, tok + i + 1, n - i - 1);
	free(file);
	return rc;
}

/* Names BIR instruction bir_id (the NEFF's debug info carries it); takes name. Two
 * instructions of one BIR instruction may repeat its name but not rename it. */
static int bir_name(struct asm_state *st, uint32_t bir_id, char *name)
{
	struct nx_debug_info *dbg = &st->neff->dbg;

	for (size_t i = 0; i < dbg->nbirs; i++) {
		if (dbg->birs[i].bir_id != bir_id)
			continue;
		int same = !strcmp(dbg->birs[i].name, name);
		int rc = same ? 0 : nx__asm_fail(st, "BIR instruction %u is already named '%s'",
						bir_id, dbg->birs[i].name);
		free(name);
		return rc;
	}
	dbg->birs = nx_xrealloc(dbg->birs, (dbg->nbirs + 1) * sizeof(*dbg->birs));
	dbg->birs[dbg->nbirs++] = (struct nx_dbg_bir){ .bir_id = bir_id, .name = name };
	return 0;
}

static int instruction(struct asm_state *st, char **tok, int n)
{
	struct nx_neff *neff = st->neff;
	struct nx_inst in;
	char *block = NULL, *bname = NULL;
	int i = 0, e, op, rc = 0;
	uint32_t dbg = NX_NONE32;

	memset(&in, 0, sizeof(in));
	if (tok[0][0] == '@') {
		if ((rc = location(st, tok[0] + 1, &dbg)))
			return rc;
		i++;
	}
	if (n - i < 2)
		return nx__asm_fail(st, "expected: [@LINE] ENGINE OPCODE operands...");
	if ((e = nx_engine_parse(tok[i])) < 0)
		return nx__asm_fail(st, "unknown engine or directive '%s'", tok[i]);
	if ((op = nx_opcode_parse(tok[i + 1])) < 0)
		return nx__asm_fail(st, "unknown opcode '%s'", tok[i + 1]);
	in.opcode = (uint16_t)op;
	in.engine = (uint8_t)e;
	in.dma_block = NX_NONE32;
	in.debug_id = dbg;
	in.bir_id = NX_NONE32;
	rc = nx__asm_operands(st, &in, tok + i + 2, n - i - 2, &block, &bname);
	if (rc) {
		free(block);
		free(bname);
		return rc;
	}
	if (in.bir_id == NX_NONE32) {
		if (e == NX_ENGINE_TENSOR && op == NX_OP_MATMUL && st->last_te_was_lw)
			in.bir_id = st->last_lw_bir;
		else
			in.bir_id = st->next_bir++;
	}
	if (bname && (rc = bir_name(st, in.bir_id, bname)))
		return rc;
	if (e == NX_ENGINE_TENSOR) {
		st->last_te_was_lw = op == NX_OP_LDWEIGHTS;
		st->last_lw_bir = in.bir_id;
	}
	if (block) {
		NX_GROW(st->refs, st->nrefs + 1, st->cap_refs);
		st->refs[st->nrefs++] = (struct asm_ref){ e, neff->ninst[e], st->line, block };
	}
	NX_GROW(neff->inst[e], neff->ninst[e] + 1, st->cap_inst[e]);
	neff->inst[e][neff->ninst[e]++] = in;
	return 0;
}

/* A block's descriptors end at the first line that is not a `desc`: its array, grown by
 * doubling from 16, is cut to its length (most blocks have one descriptor; at 16 each, a
 * kernel's 66k blocks held 211 MB where 13 MB is used). */
static void end_block(struct asm_state *st)
{
	struct nx_dma_block *b;

	if (st->cur_block < 0)
		return;
	b = &st->neff->blocks[st->cur_block];
	if (b->ndesc)
		b->desc = nx_xrealloc(b->desc, b->ndesc * sizeof(*b->desc));
	st->cur_block = -1;
}

static int line(struct asm_state *st, char *text)
{
	char *tok[NX_ASM_MAX_TOK];
	int n, rc;

	if ((rc = tokenize(st, text, tok, &n)) || !n)
		return rc;
	if (strcmp(tok[0], "desc"))
		end_block(st);
	if (!strcmp(tok[0], "kernel")) {
		if (n != 2)
			return nx__asm_fail(st, "expected: kernel NAME");
		free(st->kernel);
		st->kernel = nx_xstrdup(tok[1]);
		return 0;
	}
	if (!strcmp(tok[0], "source")) {
		if (n != 2)
			return nx__asm_fail(st, "expected: source FILE");
		free(st->source);
		st->source = nx_xstrdup(tok[1]);
		return 0;
	}
	if (!strcmp(tok[0], "frame")) {
		struct nx_dbg_frame *f;
		const char *colon = n == 3 ? strrchr(tok[2], ':') : NULL;
		uint64_t l;

		if (!colon || st->have_frame)
			return nx__asm_fail(st, st->have_frame ? "only one 'frame' line is allowed"
							       : "expected: frame FUNCTION FILE:LINE");
		if ((rc = nx__asm_u64(st, colon + 1, &l, "line")))
			return rc;
		f = nx_xcalloc(1, sizeof(*f));
		f->id = 0;
		f->parent = -1;
		f->function = nx_xstrdup(tok[1]);
		f->file = nx_xstrndup(tok[2], (size_t)(colon - tok[2]));
		f->line = (int64_t)l;
		st->neff->dbg.frames = f;
		st->neff->dbg.nframes = 1;
		st->have_frame = true;
		return 0;
	}
	if (!strcmp(tok[0], "iter"))
		return d_iter(st, tok, n);
	if (!strcmp(tok[0], "decision") || (n > 1 && tok[0][0] == '@' &&
					     !strcmp(tok[1], "decision")))
		return decision(st, tok, n);
	if (!strcmp(tok[0], "tensor"))
		return d_tensor(st, tok, n);
	if (!strcmp(tok[0], "queue"))
		return d_queue(st, tok, n);
	if (!strcmp(tok[0], "block"))
		return d_block(st, tok, n);
	if (!strcmp(tok[0], "desc"))
		return d_desc(st, tok, n);
	return instruction(st, tok, n);
}

/* Orders blocks by the engine that triggers them (the NEFF keeps them per engine),
 * then points each DMA trigger at its block. */
static int resolve(struct asm_state *st)
{
	struct nx_neff *neff = st->neff;
	size_t nb = neff->nblocks, k = 0;
	uint32_t *map = nx_xcalloc(nb + 1, sizeof(*map));
	struct nx_dma_block *nbk = nx_xcalloc(nb + 1, sizeof(*nbk));
	unsigned char *seen = nx_xcalloc(nb + 1, 1);
	int rc = 0;

	for (size_t r = 0; r < st->nrefs && !rc; r++) {
		int b = asm_sym_get(&st->blocks, st->refs[r].name);

		if (b < 0) {
			st->line = st->refs[r].line;
			rc = nx__asm_fail(st, "DMA trigger names missing block '%s'", st->refs[r].name);
			break;
		}
		if (!seen[b]) {
			seen[b] = 1;
			neff->blocks[b].engine = st->refs[r].engine;
		}
		neff->inst[st->refs[r].engine][st->refs[r].index].dma_block = (uint32_t)b;
	}
	if (rc)
		goto out;
	for (int e = 0; e < NX_ENGINE_COUNT; e++)
		for (size_t b = 0; b < nb; b++)
			if (neff->blocks[b].engine == e) {
				map[b] = (uint32_t)k;
				nbk[k] = neff->blocks[b];
				nbk[k].id = (uint32_t)k;
				k++;
			}
	if (nb)
		memcpy(neff->blocks, nbk, nb * sizeof(*nbk));
	for (int e = 0; e < NX_ENGINE_COUNT; e++)
		for (size_t i = 0; i < neff->ninst[e]; i++)
			if (neff->inst[e][i].dma_block != NX_NONE32)
				neff->inst[e][i].dma_block = map[neff->inst[e][i].dma_block];
out:
	free(map);
	free(nbk);
	free(seen);
	return rc;
}

static void header(struct asm_state *st, const char *text, size_t len)
{
	struct nx_neff_header *h = &st->neff->hdr;
	uint64_t id[2];

	nx_hash128(text, len, id);
	h->pkg_version = 1;
	h->major_version = 2;
	h->minor_version = 0;
	snprintf(h->build_version, sizeof(h->build_version), "neuron-explorer kernel asm %s",
		 NX_VERSION);
	h->num_tpb = 1;
	h->requested_tpb_count = 1;
	h->lnc_size = 1;
	for (int i = 0; i < 8; i++) {
		h->uuid[i] = (uint8_t)(id[0] >> (8 * i));
		h->uuid[8 + i] = (uint8_t)(id[1] >> (8 * i));
	}
	h->uuid[6] = (uint8_t)((h->uuid[6] & 0x0f) | 0x40);
	h->uuid[8] = (uint8_t)((h->uuid[8] & 0x3f) | 0x80);
	snprintf(h->name, sizeof(h->name), "%s", st->kernel ? st->kernel : "kernel");
	st->neff->tool_version = nx_xasprintf("neuron-explorer kernel asm %s", NX_VERSION);
}

int nx_listing_assemble(const char *name, const char *text, size_t len, struct nx_neff *out,
			struct nx_err *err)
{
	struct asm_state st;
	size_t pos = 0;
	char *buf = NULL;
	size_t cap = 0;
	int rc = 0;

	memset(out, 0, sizeof(*out));
	memset(&st, 0, sizeof(st));
	st.fname = name;
	st.err = err;
	st.neff = out;
	st.cur_block = -1;
	st.cur_iter = -1;
	nx_strmap_init(&st.iters, sizeof(int));
	nx_strmap_init(&st.tensors, sizeof(int));
	nx_strmap_init(&st.queues, sizeof(int));
	nx_strmap_init(&st.blocks, sizeof(int));
	nx_strmap_init(&st.dbg, sizeof(int));
	while (pos < len && !rc) {
		const char *nl = memchr(text + pos, '\n', len - pos);
		size_t n = nl ? (size_t)(nl - (text + pos)) : len - pos;

		st.line++;
		NX_GROW(buf, n + 1, cap);
		memcpy(buf, text + pos, n);
		buf[n] = '\0';
		if (memchr(buf, '\0', n))
			rc = nx__asm_fail(&st, "NUL byte in listing");
		else
			rc = line(&st, buf);
		pos += n + 1;
	}
	end_block(&st);
	if (!rc)
		rc = resolve(&st);
	if (!rc)
		header(&st, text, len);
	free(buf);
	free(st.source);
	free(st.kernel);
	for (size_t r = 0; r < st.nrefs; r++)
		free(st.refs[r].name);
	free(st.refs);
	nx_strmap_release(&st.tensors);
	nx_strmap_release(&st.queues);
	nx_strmap_release(&st.blocks);
	nx_strmap_release(&st.dbg);
	nx_strmap_release(&st.iters);
	if (rc)
		nx_neff_release(out);
	return rc;
}

int nx_listing_assemble_file(const char *path, struct nx_neff *out, struct nx_err *err)
{
	char *data = NULL;
	size_t len = 0;
	int rc;

	memset(out, 0, sizeof(*out));
	if ((rc = nx_read_file(path, &data, &len, err)))
		return rc;
	rc = nx_listing_assemble(path, data, len, out, err);
	free(data);
	return rc;
}
