/* SPDX-License-Identifier: MIT
 * src_staging.c: internal tables the derive SQL needs but the schema does not publish:
 *   nx_DmaBlock      one row per NEFF DMA block: queue, semaphore, source/destination
 *                    text, partitions, shapes, offsets, steps, transpose facts;
 *   nx_DmaTransfer   one row per executed transfer: its block and triggering
 *                    instruction (from the first packet record of each transfer);
 *   nx_StaticInst    one row per NEFF instruction: semaphore wait and signal, DMA block.
 * They are written under <tmp>/.staging/ and removed before the profile is published. */
#include "common/compat.h"
#include "ingest/context.h"
#include "common/strbuf.h"

#include <stdio.h>
#include <string.h>

#define F(n, t, fmt) { .name = n, .type = t, .format = fmt, .unit = "", .enum_name = "", \
		       .example = "", .description = "" }

static const struct nx_field block_fields[] = {
	F("block", "integer", "int64"), F("block_id", "integer", "int32"),
	F("queue_idx", "integer", "int64"), F("queue_name", "string", ""),
	F("queue_type", "string", ""), F("semaphore_id", "string", ""), F("op", "string", ""),
	F("variable", "string", ""), F("source", "string", ""), F("dest", "string", ""),
	F("read_sbuf_partitions", "string", ""), F("read_num_sbuf_partitions", "integer", "int32"),
	F("read_shape", "string", ""), F("read_offset", "string", ""), F("read_steps", "string", ""),
	F("write_sbuf_partitions", "string", ""), F("write_num_sbuf_partitions", "integer", "int32"),
	F("write_shape", "string", ""), F("write_offset", "string", ""), F("write_steps", "string", ""),
	F("is_transpose_mode", "boolean", ""), F("transpose_element_size", "string", ""),
	F("bytes", "integer", "int64"), F("engine", "string", ""),
};
static const struct nx_table block_table = { .name = "nx_DmaBlock", .modality = "", .profile_kind = "",
	.description = "", .written = false, .nfields = NX_ARRAY_SIZE(block_fields), .fields = block_fields };

static const struct nx_field transfer_fields[] = {
	F("transfer", "integer", "int64"), F("block", "integer", "int64"),
	F("trigger", "integer", "int64"), F("dma_engine", "integer", "int64"),
};
static const struct nx_table transfer_table = { .name = "nx_DmaTransfer", .modality = "",
	.profile_kind = "", .description = "", .written = false,
	.nfields = NX_ARRAY_SIZE(transfer_fields), .fields = transfer_fields };

static const struct nx_field static_fields[] = {
	F("engine", "string", ""), F("pc", "integer", "int64"), F("opcode", "string", ""),
	F("wait_sem", "integer", "int64"), F("wait_value", "integer", "int64"),
	F("sig_sem", "integer", "int64"), F("sig_op", "integer", "int64"),
	F("sig_value", "integer", "int64"), F("dma_block", "integer", "int64"),
};
static const struct nx_table static_table = { .name = "nx_StaticInst", .modality = "",
	.profile_kind = "", .description = "", .written = false,
	.nfields = NX_ARRAY_SIZE(static_fields), .fields = static_fields };
#undef F

/* Location text in the profiler's style: "[[INPUT]]" for an input read, "[SB]" ... */
static const char *loc_text(const struct nx_neff *n, int loc, int var, bool source)
{
	if (loc == NX_LOC_SBUF)
		return source ? "[[SB]]" : "[SB]";
	if (loc == NX_LOC_PSUM)
		return source ? "[[PSUM]]" : "[PSUM]";
	const struct nx_tensor *t = var >= 0 && (size_t)var < n->ntensors ? &n->tensors[var] : NULL;
	const char *k = !t ? "HBM" : t->kind == NX_TENSOR_IN ? "INPUT" : t->kind == NX_TENSOR_OUT ? "OUTPUT"
		      : t->kind == NX_TENSOR_WEIGHT ? "WEIGHT"
		      : (t->def_type && !strcmp(t->def_type, "virtual")) ? "VIRTUAL" : "HBM";
	static char buf[2][32];
	snprintf(buf[source], sizeof(buf[source]), source ? "[[%s]]" : "[%s]", k);
	return buf[source];
}

static void dims(struct nx_strbuf *sb, unsigned n, const uint64_t *v)
{
	nx_strbuf_addch(sb, '[');
	for (unsigned i = 0; i < n; i++)
		nx_strbuf_addf(sb, "%s%" PRIu64, i ? "," : "", v[i]);
	nx_strbuf_addch(sb, ']');
}

static void sdims(struct nx_strbuf *sb, unsigned n, const int64_t *v)
{
	nx_strbuf_addch(sb, '[');
	for (unsigned i = 0; i < n; i++)
		nx_strbuf_addf(sb, "%s%" PRId64, i ? "," : "", v[i]);
	nx_strbuf_addch(sb, ']');
}

struct block_src {
	struct nx_ingest_ctx *ctx;
	size_t pos;
};

static int block_next(void *self, struct nx_rowbuf *b, struct nx_err *err)
{
	struct block_src *s = self;
	const struct nx_neff *n = &s->ctx->neff;
	size_t cap = nx_rowbuf_capacity(b), row = 0;
	struct nx_strbuf t = NX_STRBUF_INIT;

	(void)err;
	for (; s->pos < n->nblocks && row < cap; s->pos++, row++) {
		const struct nx_dma_block *blk = &n->blocks[s->pos];
		const struct nx_dma_desc *d = blk->ndesc ? &blk->desc[0] : NULL;
		const struct nx_dma_queue *q = blk->queue >= 0 && (size_t)blk->queue < n->nqueues
						       ? &n->queues[blk->queue] : NULL;
		int sem = blk->semaphore >= 0 ? blk->semaphore : q ? q->semaphore : -1;
		unsigned rparts = 0, wparts = 0;

		nx_rowbuf_i64(b, 0, row, (int64_t)s->pos);
		nx_rowbuf_i64(b, 1, row, blk->id);
		if (q) {
			nx_rowbuf_i64(b, 2, row, q->queue_idx);
			nx_rowbuf_str(b, 3, row, q->name);
			nx_rowbuf_str(b, 4, row, nx_queue_type_name(q->queue_type));
		}
		if (sem >= 0) {
			char sid[16];
			snprintf(sid, sizeof(sid), "%d", sem);
			nx_rowbuf_str(b, 5, row, sid);
		}
		nx_rowbuf_str(b, 6, row, "copy");
		nx_rowbuf_i64(b, 22, row, (int64_t)blk->bytes);
		nx_rowbuf_str(b, 23, row, nx_engine_name(blk->engine));
		if (!d)
			continue;
		int var = d->from_loc == NX_LOC_HBM ? d->from_var : d->to_loc == NX_LOC_HBM ? d->to_var : -1;
		if (var >= 0 && (size_t)var < n->ntensors)
			nx_rowbuf_str(b, 7, row, n->tensors[var].name);
		nx_rowbuf_str(b, 8, row, loc_text(n, d->from_loc, d->from_var, true));
		nx_rowbuf_str(b, 9, row, loc_text(n, d->to_loc, d->to_var, false));
		/* Partitions are summed over the block's descriptors on each on-chip side. */
		for (size_t k = 0; k < blk->ndesc; k++) {
			if (blk->desc[k].from_loc != NX_LOC_HBM)
				rparts += (unsigned)blk->desc[k].from_sizes[0];
			if (blk->desc[k].to_loc != NX_LOC_HBM)
				wparts += (unsigned)blk->desc[k].to_sizes[0];
		}
		if (d->from_loc != NX_LOC_HBM) {
			nx_strbuf_reset(&t);
			nx_strbuf_addf(&t, "%u-%u", d->from_start_partition,
				       d->from_start_partition + (rparts ? rparts : 1) - 1);
			nx_rowbuf_str(b, 10, row, t.buf);
		}
		nx_rowbuf_i64(b, 11, row, rparts);
		nx_strbuf_reset(&t);
		dims(&t, d->from_ndim, d->from_sizes);
		nx_rowbuf_str(b, 12, row, t.buf);
		nx_strbuf_reset(&t);
		nx_strbuf_addf(&t, "%" PRIu64, d->from_off);
		nx_rowbuf_str(b, 13, row, t.buf);
		nx_strbuf_reset(&t);
		sdims(&t, d->from_ndim, d->from_steps);
		nx_rowbuf_str(b, 14, row, t.buf);
		if (d->to_loc != NX_LOC_HBM) {
			nx_strbuf_reset(&t);
			nx_strbuf_addf(&t, "%u-%u", d->to_start_partition,
				       d->to_start_partition + (wparts ? wparts : 1) - 1);
			nx_rowbuf_str(b, 15, row, t.buf);
		}
		nx_rowbuf_i64(b, 16, row, wparts);
		nx_strbuf_reset(&t);
		dims(&t, d->to_ndim, d->to_sizes);
		nx_rowbuf_str(b, 17, row, t.buf);
		nx_strbuf_reset(&t);
		nx_strbuf_addf(&t, "%" PRIu64, d->to_off);
		nx_rowbuf_str(b, 18, row, t.buf);
		nx_strbuf_reset(&t);
		sdims(&t, d->to_ndim, d->to_steps);
		nx_rowbuf_str(b, 19, row, t.buf);
		nx_rowbuf_bool(b, 20, row, d->transpose);
		if (d->transpose) {
			char es[8];
			snprintf(es, sizeof(es), "%u", nx_dtype_size(d->dtype));
			nx_rowbuf_str(b, 21, row, es);
		}
	}
	nx_strbuf_release(&t);
	return (int)row;
}

struct transfer_src {
	struct nx_ingest_ctx *ctx;
	bool done;
};

static int transfer_next(void *self, struct nx_rowbuf *b, struct nx_err *err)
{
	struct transfer_src *s = self;
	size_t cap = nx_rowbuf_capacity(b), row = 0;
	struct nx_rec rec;

	while (!s->done && row < cap) {
		int rc = nx_ntff_reader_next(s->ctx->ntff, NX_REC_MASK(NX_REC_DMA), &rec, err);
		if (rc < 0)
			return rc;
		if (rc == 0) {
			s->done = true;
			break;
		}
		const struct nx_rec_dma *r = &rec.u.dma;
		if (r->packet_idx != 0)
			continue;
		nx_rowbuf_i64(b, 0, row, (int64_t)r->transfer);
		if (r->block != NX_NONE32)
			nx_rowbuf_i64(b, 1, row, r->block);
		if (r->trigger != UINT64_MAX)
			nx_rowbuf_i64(b, 2, row, (int64_t)r->trigger);
		nx_rowbuf_i64(b, 3, row, r->dma_engine);
		row++;
	}
	return (int)row;
}

struct static_src {
	struct nx_ingest_ctx *ctx;
	int engine;
	size_t pos;
};

static int static_next(void *self, struct nx_rowbuf *b, struct nx_err *err)
{
	struct static_src *s = self;
	const struct nx_neff *n = &s->ctx->neff;
	size_t cap = nx_rowbuf_capacity(b), row = 0;

	(void)err;
	while (s->engine < NX_ENGINE_COUNT && row < cap) {
		if (s->pos >= n->ninst[s->engine]) {
			s->engine++;
			s->pos = 0;
			continue;
		}
		const struct nx_inst *in = &n->inst[s->engine][s->pos];
		nx_rowbuf_str(b, 0, row, nx_engine_name(s->engine));
		nx_rowbuf_i64(b, 1, row, (int64_t)s->pos);
		nx_rowbuf_str(b, 2, row, nx_opcode_name(in->opcode));
		if (in->wait_cond != NX_WAIT_NONE) {
			nx_rowbuf_i64(b, 3, row, in->wait_sem);
			nx_rowbuf_i64(b, 4, row, in->wait_value);
		}
		if (in->sig_op != NX_SEM_NONE) {
			nx_rowbuf_i64(b, 5, row, in->sig_sem);
			nx_rowbuf_i64(b, 6, row, in->sig_op);
			nx_rowbuf_i64(b, 7, row, in->sig_value);
		}
		if (in->dma_block != NX_NONE32)
			nx_rowbuf_i64(b, 8, row, in->dma_block);
		s->pos++;
		row++;
	}
	return (int)row;
}

int nx_write_staging(struct nx_ingest_ctx *c, struct nx_duck *d, const char *dir,
		     struct nx_err *err)
{
	struct block_src bs = { .ctx = c };
	struct transfer_src ts = { .ctx = c };
	struct static_src ss = { .ctx = c };
	struct nx_row_source src;
	char path[4096];
	uint64_t rows;
	int rc;

	src = (struct nx_row_source){ .table = &block_table, .self = &bs, .next = block_next };
	snprintf(path, sizeof(path), "%s/nx_DmaBlock.parquet", dir);
	if ((rc = nx_duck_copy_source(d, &src, path, &rows, err)))
		return rc;
	if ((rc = nx_ntff_reader_rewind(c->ntff, err)))
		return rc;
	src = (struct nx_row_source){ .table = &transfer_table, .self = &ts, .next = transfer_next };
	snprintf(path, sizeof(path), "%s/nx_DmaTransfer.parquet", dir);
	if ((rc = nx_duck_copy_source(d, &src, path, &rows, err)))
		return rc;
	src = (struct nx_row_source){ .table = &static_table, .self = &ss, .next = static_next };
	snprintf(path, sizeof(path), "%s/nx_StaticInst.parquet", dir);
	return nx_duck_copy_source(d, &src, path, &rows, err);
}
