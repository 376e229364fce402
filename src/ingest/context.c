/* SPDX-License-Identifier: MIT
 * context.c: shared ingest state: warnings, execution windows, and the per static
 * instruction cache (operand text, source locations, byte and flop figures) that
 * every executed instance of an instruction reuses. */
#include "common/compat.h"
#include "ingest/context.h"
#include "common/strbuf.h"
#include "common/strmap.h"
#include "common/xalloc.h"

#include <malloc.h>
#include <stdarg.h>
#include <time.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void nx_ctx_warn(struct nx_ingest_ctx *c, const char *category, const char *fmt, ...)
{
	va_list ap;
	char *msg = NULL;

	va_start(ap, fmt);
	if (vasprintf(&msg, fmt, ap) < 0)
		msg = NULL;
	va_end(ap);
	if (!msg)
		return;
	NX_GROW(c->warn, c->nwarn + 1, c->warn_cap);
	c->warn[c->nwarn].category = nx_xstrdup(category);
	c->warn[c->nwarn].message = msg;
	c->nwarn++;
}

void nx_ctx_warning(void *ctx, const char *category, const char *msg)
{
	nx_ctx_warn(ctx, category, "%s", msg);
}

struct nx_exec_window *nx_ctx_exec(struct nx_ingest_ctx *c, uint32_t index)
{
	if (index >= 1u << 20)
		return NULL; /* absurd execution index: ignored, reported by the caller */
	if (index >= c->nexec) {
		c->exec = nx_xrealloc(c->exec, sizeof(*c->exec) * (index + 1));
		memset(c->exec + c->nexec, 0, sizeof(*c->exec) * (index + 1 - c->nexec));
		c->nexec = index + 1;
	}
	return &c->exec[index];
}

/* HBM-side byte figures of a DMA block, split by direction and queue class. */
static void block_bytes(const struct nx_neff *n, const struct nx_dma_block *b,
			struct nx_static_inst *s)
{
	int qt = b->queue >= 0 && (size_t)b->queue < n->nqueues ? n->queues[b->queue].queue_type
								   : NX_QT_UNKNOWN;

	for (size_t i = 0; i < b->ndesc; i++) {
		const struct nx_dma_desc *d = &b->desc[i];
		bool from_hbm = d->from_loc == NX_LOC_HBM, to_hbm = d->to_loc == NX_LOC_HBM;
		const struct nx_tensor *fv = from_hbm && d->from_var >= 0 ? &n->tensors[d->from_var] : NULL;
		const struct nx_tensor *tv = to_hbm && d->to_var >= 0 ? &n->tensors[d->to_var] : NULL;

		if (from_hbm)
			s->hbm_read += (int64_t)d->bytes;
		if (to_hbm)
			s->hbm_write += (int64_t)d->bytes;
		if (d->from_loc == NX_LOC_SBUF)
			s->work.sbuf_read_bytes += d->bytes;
		if (d->to_loc == NX_LOC_SBUF)
			s->work.sbuf_write_bytes += d->bytes;
		/* Compiler spill buffers are "virtual" variables in def.json. */
		if (tv && tv->def_type && !strcmp(tv->def_type, "virtual") && !from_hbm)
			s->spill_save += (int64_t)d->bytes;
		if (fv && fv->def_type && !strcmp(fv->def_type, "virtual") && !to_hbm)
			s->spill_reload += (int64_t)d->bytes;
		if (qt == NX_QT_INPUT)
			s->input_q += (int64_t)d->bytes;
		else if (qt == NX_QT_OUTPUT)
			s->output_q += (int64_t)d->bytes;
		else if (qt == NX_QT_DATA)
			s->weight_q += (int64_t)d->bytes;
	}
}

static int cmp_bir(const void *a, const void *b)
{
	const struct nx_dbg_bir *x = a, *y = b;
	return (x->bir_id > y->bir_id) - (x->bir_id < y->bir_id);
}

/* The outermost stack frame of a debug instruction: the NKI kernel itself. */
static const struct nx_dbg_frame *root_frame(const struct nx_debug_info *d, int64_t id)
{
	const struct nx_dbg_frame *f = NULL;

	for (size_t hops = 0; id >= 0 && hops <= d->nframes; hops++) {
		const struct nx_dbg_frame *next = NULL;
		for (size_t k = 0; k < d->nframes && !next; k++)
			if (d->frames[k].id == id)
				next = &d->frames[k];
		if (!next)
			break;
		f = next;
		id = f->parent;
	}
	return f;
}

/* The text in sb, kept in the context's arena a (NUL-terminated): one copy of each
 * distinct text, found by `seen` (text -> its copy), as many instructions share a
 * source location or the HLO attributes of their kernel. */
static const char *keep_text(struct nx_arena *a, struct nx_strmap *seen,
			     const struct nx_strbuf *sb)
{
	bool added;
	const char **copy = nx_strmap_get(seen, nx_strbuf_str(sb), sb->len, &added);

	if (added)
		*copy = nx_arena_copy(a, nx_strbuf_str(sb), sb->len + 1);
	return *copy;
}

/* Fills the IR hierarchy facts of one static instruction; sb is scratch, seen as for
 * keep_text. */
static void ir_facts(struct nx_ingest_ctx *c, const struct nx_inst *in,
		     const struct nx_dbg_bir *birs, struct nx_static_inst *s, struct nx_strbuf *sb,
		     struct nx_strmap *seen)
{
	const struct nx_neff *n = &c->neff;
	struct nx_dbg_bir key = { .bir_id = in->bir_id };
	const struct nx_dbg_bir *b = n->dbg.nbirs ? bsearch(&key, birs, n->dbg.nbirs, sizeof(*birs),
							     cmp_bir) : NULL;

	s->bir_name = b ? b->name : NULL; /* NULL: made from bir_id when written */
	s->raw_penguin = s->raw_hlo = s->raw_framework = -1;
	if (in->debug_id == NX_NONE32 || in->debug_id >= n->dbg.ninsts)
		return;
	const struct nx_dbg_inst *d = &n->dbg.insts[in->debug_id];
	s->raw_penguin = in->debug_id;
	for (size_t k = 0; k < n->dbg.nframes; k++)
		if (n->dbg.frames[k].id == d->stack_frame_id)
			s->stack_frame = (uint32_t)(k + 1);
	const struct nx_dbg_frame *f = root_frame(&n->dbg, d->stack_frame_id);
	if (!f || !f->function)
		return;
	s->raw_hlo = s->raw_framework = f->id;
	s->framework_name = f->function;
	nx_strbuf_reset(sb);
	if (f->file)
		nx_strbuf_addf(sb, "custom_call_target=\"%s\", source=\"%s:%" PRId64 "\"",
			       f->function, f->file, f->line);
	else
		nx_strbuf_addf(sb, "custom_call_target=\"%s\"", f->function);
	s->hlo_attrs = keep_text(&c->static_text, seen, sb);
}

static uint32_t len_of(const char *s)
{
	return s ? (uint32_t)strlen(s) : 0;
}

/* s's string lengths (struct nx_static_inst, len), operands those of its operand text. */
static void static_lengths(struct nx_static_inst *s, const char *operands)
{
	s->len.operands = len_of(operands);
	s->len.nki_loc = len_of(s->nki_loc);
	s->len.bir_loc = len_of(s->bir_loc);
	s->len.kernel_name = len_of(s->kernel_name);
	s->len.bir_name = len_of(s->bir_name);
	s->len.framework_name = len_of(s->framework_name);
	s->len.hlo_attrs = len_of(s->hlo_attrs);
}

void nx_ctx_prepare_statics(struct nx_ingest_ctx *c)
{
	const struct nx_neff *n = &c->neff;
	struct nx_strbuf sb = NX_STRBUF_INIT;
	struct nx_dbg_bir *birs = nx_xcalloc(n->dbg.nbirs + 1, sizeof(*birs));
	struct nx_strmap seen; /* the static texts kept so far (keep_text) */

	nx_strmap_init(&seen, sizeof(const char *));
	if (n->dbg.nbirs) {
		memcpy(birs, n->dbg.birs, n->dbg.nbirs * sizeof(*birs));
		qsort(birs, n->dbg.nbirs, sizeof(*birs), cmp_bir);
	}
	for (int e = 0; e < NX_ENGINE_COUNT; e++) {
		size_t count = n->ninst[e] ? n->ninst[e] : 1;

		c->statics[e] = nx_xcalloc(count, sizeof(struct nx_static_inst));
		c->operands[e] = nx_xcalloc(count, sizeof(*c->operands[e]));
		for (size_t i = 0; i < n->ninst[e]; i++) {
			const struct nx_inst *in = &n->inst[e][i];
			struct nx_static_inst *s = &c->statics[e][i];

			nx_strbuf_reset(&sb);
			nx_inst_format_operands(in, &sb);
			c->operands[e][i] = nx_arena_copy(&c->operand_text, nx_strbuf_str(&sb),
							  sb.len + 1);
			nx_inst_work(in, c->target_v3, &s->work);
			ir_facts(c, in, birs, s, &sb, &seen);
			if (in->debug_id != NX_NONE32 && in->debug_id < n->dbg.ninsts) {
				const struct nx_dbg_inst *d = &n->dbg.insts[in->debug_id];
				if (d->file) {
					nx_strbuf_reset(&sb);
					nx_strbuf_addf(&sb, "%s:%" PRId64, d->file, d->line);
					s->nki_loc = keep_text(&c->static_text, &seen, &sb);
				}
				s->bir_loc = d->bir_location ? d->bir_location : s->nki_loc;
				s->kernel_name = d->name;
			}
			if (in->opcode == NX_OP_DMA_TRIGGER && in->dma_block < n->nblocks)
				block_bytes(n, &n->blocks[in->dma_block], s);
			static_lengths(s, c->operands[e][i]);
		}
	}
	nx_strmap_release(&seen);
	nx_strbuf_release(&sb);
	free(birs);
}

int64_t nx_ctx_total_ns(const struct nx_ingest_ctx *c)
{
	int64_t first = c->first_ns <= c->last_ns ? c->first_ns : 0;
	int64_t last = c->first_ns <= c->last_ns ? c->last_ns : 0;
	int64_t total = 0;
	bool any = false;

	for (size_t i = 0; i < c->nexec; i++)
		if (c->exec[i].has_start && c->exec[i].has_stop && c->exec[i].stop >= c->exec[i].start) {
			total += c->exec[i].stop - c->exec[i].start;
			any = true;
		}
	return any ? total : last - first;
}

static void free_statics(struct nx_ingest_ctx *c)
{
	for (int e = 0; e < NX_ENGINE_COUNT; e++) {
		free(c->statics[e]);
		c->statics[e] = NULL;
	}
	nx_arena_free(&c->static_text);
	nx_debug_info_release(&c->neff.dbg); /* after the statics, which point into it */
}

static void free_neff(struct nx_ingest_ctx *c)
{
	free_statics(c);
	for (int e = 0; e < NX_ENGINE_COUNT; e++) {
		free(c->operands[e]);
		c->operands[e] = NULL;
	}
	nx_arena_free(&c->operand_text);
	nx_neff_release(&c->neff);
}

/* Both drops give the freed pages back at once (malloc_trim: glibc keeps the free pages
 * amid what stays in its arenas, and its mmap threshold has risen past some of these
 * blocks), for the stages that follow. */
void nx_ctx_drop_statics(struct nx_ingest_ctx *c)
{
	free_statics(c);
	c->statics_dropped = true;
	malloc_trim(0);
}

void nx_ctx_drop_neff(struct nx_ingest_ctx *c)
{
	free_neff(c);
	c->statics_dropped = c->neff_dropped = true;
	malloc_trim(0);
}

void nx_ctx_release(struct nx_ingest_ctx *c)
{
	nx_active_release(&c->active);
	nx_trig_release(&c->trig);
	free_neff(c);
	for (size_t i = 0; i < c->nwarn; i++) {
		free(c->warn[i].category);
		free(c->warn[i].message);
	}
	free(c->warn);
	free(c->exec);
	if (c->ntff)
		nx_ntff_reader_close(c->ntff);
	memset(c, 0, sizeof(*c));
}

double nx_now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

void nx_ctx_table_done(struct nx_ingest_ctx *c, const char *table, const char *how,
		       uint64_t rows, double seconds)
{
	struct nx_progress_event ev = { .kind = NX_PROGRESS_TABLE, .stage = c->stage,
		.table = table, .how = how, .rows = rows, .seconds = seconds };
	nx_progress_emit(c->progress, &ev);
}

/* A row source that reports progress about every quarter second. */
struct progress_src {
	struct nx_ingest_ctx *c;
	struct nx_row_source *inner;
	const char *name;
	uint64_t rows;
	double t0, last;
};

static int progress_next(void *self, struct nx_rowbuf *b, struct nx_err *err)
{
	struct progress_src *p = self;
	int n = p->inner->next(p->inner->self, b, err);

	if (n > 0) {
		p->rows += (uint64_t)n;
		double now = nx_now_s();
		if (now - p->last >= 0.25) {
			struct nx_progress_event ev = { .kind = NX_PROGRESS_ROWS, .stage = p->c->stage,
				.table = p->name, .rows = p->rows, .seconds = now - p->t0 };
			p->last = now;
			nx_progress_emit(p->c->progress, &ev);
		}
	}
	return n;
}

enum copy_how { COPY_INLINE, COPY_AHEAD, COPY_PARTS };

static int ctx_copy(struct nx_ingest_ctx *c, struct nx_duck *d, struct nx_row_source *src,
		    const char *path, enum copy_how mode, const char *name, const char *how,
		    uint64_t *rows, struct nx_err *err)
{
	struct progress_src p = { .c = c, .inner = src, .name = name ? name : src->table->name };
	struct nx_row_source wrap = { .table = src->table, .self = &p, .next = progress_next,
				       .keys = src->keys };
	struct nx_row_source *from = c->progress ? &wrap : src;
	int rc;

	p.t0 = p.last = nx_now_s();
	if (mode == COPY_PARTS)
		rc = nx_duck_copy_source_parts(d, from, path, rows, err);
	else if (mode == COPY_AHEAD)
		rc = nx_duck_write_ahead(d, from, path, rows, err);
	else
		rc = nx_duck_write_source(d, from, path, rows, err);
	if (!rc)
		nx_ctx_table_done(c, p.name, how, *rows, nx_now_s() - p.t0);
	return rc;
}

int nx_ctx_copy(struct nx_ingest_ctx *c, struct nx_duck *d, struct nx_row_source *src,
		const char *path, const char *name, const char *how, uint64_t *rows,
		struct nx_err *err)
{
	return ctx_copy(c, d, src, path, COPY_INLINE, name, how, rows, err);
}

int nx_ctx_copy_ahead(struct nx_ingest_ctx *c, struct nx_duck *d, struct nx_row_source *src,
		      const char *path, const char *name, const char *how, uint64_t *rows,
		      struct nx_err *err)
{
	return ctx_copy(c, d, src, path, COPY_AHEAD, name, how, rows, err);
}

int nx_ctx_copy_parts(struct nx_ingest_ctx *c, struct nx_duck *d, struct nx_row_source *src,
		      const char *dir, uint64_t *rows, struct nx_err *err)
{
	return ctx_copy(c, d, src, dir, COPY_PARTS, NULL, NULL, rows, err);
}
