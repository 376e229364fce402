/* SPDX-License-Identifier: MIT
 * src_staging.c: internal tables the derive SQL needs but the schema does not publish:
 *   nx_DmaBlock      one row per NEFF DMA block: queue, semaphore, source/destination
 *                    text, partitions, shapes, offsets, steps, transpose facts;
 *   nx_DmaTransfer   one row per executed transfer: its block and triggering
 *                    instruction (from the first packet record of each transfer); a
 *                    pass over the DMA records of its own, so it is written only when
 *                    read (nx_write_dma_transfers: Flow's trigger edges by SQL, the
 *                    tests' staging);
 *   nx_StaticInst    one row per NEFF instruction: semaphore wait and signal, DMA block,
 *                    operand text.
 * They are written under <tmp>/.staging/ and removed before the profile is published.
 * (nx_OnchipAlloc, the rows of the on-chip occupancy pass, is occupancy.c's.) */
#include "common/compat.h"
#include "ingest/context.h"
#include "common/strbuf.h"
#include "common/xalloc.h"
#include "ingest/dma_block.h"
#include "ingest/internal_table.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define F NX_INTERNAL_FIELD

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
static const struct nx_table block_table = NX_INTERNAL_TABLE("nx_DmaBlock", block_fields);

static const struct nx_field transfer_fields[] = {
	F("transfer", "integer", "int64"), F("block", "integer", "int64"),
	F("trigger", "integer", "int64"), F("dma_engine", "integer", "int64"),
};
static const struct nx_table transfer_table = NX_INTERNAL_TABLE("nx_DmaTransfer", transfer_fields);

static const struct nx_field static_fields[] = {
	F("engine", "string", ""), F("pc", "integer", "int64"), F("opcode", "string", ""),
	F("wait_sem", "integer", "int64"), F("wait_value", "integer", "int64"),
	F("sig_sem", "integer", "int64"), F("sig_op", "integer", "int64"),
	F("sig_value", "integer", "int64"), F("dma_block", "integer", "int64"),
	F("operands", "string", ""),
};
static const struct nx_table static_table = NX_INTERNAL_TABLE("nx_StaticInst", static_fields);

struct block_src {
	struct nx_ingest_ctx *ctx;
	size_t pos;
};

static int block_next(void *self, struct nx_rowbuf *b, struct nx_err *err)
{
	struct block_src *s = self;
	const struct nx_neff *n = nx_ctx_neff(s->ctx);
	size_t cap = nx_rowbuf_capacity(b), row = 0;

	(void)err;
	for (; s->pos < n->nblocks && row < cap; s->pos++, row++) {
		struct nx_dma_block_text t;

		nx_dma_block_text(n, s->pos, &t);
		nx_rowbuf_i64(b, 0, row, (int64_t)s->pos);
		nx_rowbuf_i64(b, 1, row, t.block_id);
		if (t.queue) {
			nx_rowbuf_i64(b, 2, row, t.queue->queue_idx);
			nx_rowbuf_str(b, 3, row, t.queue->name);
			nx_rowbuf_str(b, 4, row, nx_queue_type_name(t.queue->queue_type));
		}
		nx_rowbuf_str(b, 5, row, t.semaphore_id);
		nx_rowbuf_str(b, 6, row, "copy");
		nx_rowbuf_i64(b, 22, row, t.bytes);
		nx_rowbuf_str(b, 23, row, t.engine);
		if (t.has_desc) {
			nx_rowbuf_str(b, 7, row, t.variable);
			nx_rowbuf_str(b, 8, row, t.source);
			nx_rowbuf_str(b, 9, row, t.dest);
			nx_rowbuf_str(b, 10, row, t.read_parts);
			nx_rowbuf_i64(b, 11, row, t.read_nparts);
			nx_rowbuf_str(b, 12, row, t.read_shape);
			nx_rowbuf_str(b, 13, row, t.read_offset);
			nx_rowbuf_str(b, 14, row, t.read_steps);
			nx_rowbuf_str(b, 15, row, t.write_parts);
			nx_rowbuf_i64(b, 16, row, t.write_nparts);
			nx_rowbuf_str(b, 17, row, t.write_shape);
			nx_rowbuf_str(b, 18, row, t.write_offset);
			nx_rowbuf_str(b, 19, row, t.write_steps);
			nx_rowbuf_bool(b, 20, row, t.transpose);
			nx_rowbuf_str(b, 21, row, t.transpose_size);
		}
		nx_dma_block_text_release(&t);
	}
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
	const struct nx_neff *n = nx_ctx_neff(s->ctx);
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
		if (nx_ctx_operands(s->ctx, s->engine))
			nx_rowbuf_str(b, 9, row, nx_ctx_operands(s->ctx, s->engine)[s->pos]);
		s->pos++;
		row++;
	}
	return (int)row;
}

#undef F

int nx_write_staging(struct nx_ingest_ctx *c, struct nx_duck *d, const char *dir,
		     struct nx_err *err)
{
	struct block_src bs = { .ctx = c };
	struct static_src ss = { .ctx = c };
	struct nx_row_source src;
	char path[4096];
	uint64_t rows;
	int rc;

	src = (struct nx_row_source){ .table = &block_table, .self = &bs, .next = block_next };
	snprintf(path, sizeof(path), "%s/nx_DmaBlock.parquet", dir);
	if ((rc = nx_ctx_copy(c, d, &src, path, NULL, "staging", &rows, err)))
		return rc;
	src = (struct nx_row_source){ .table = &static_table, .self = &ss, .next = static_next };
	snprintf(path, sizeof(path), "%s/nx_StaticInst.parquet", dir);
	return nx_ctx_copy(c, d, &src, path, NULL, "staging", &rows, err);
}

int nx_write_dma_transfers(struct nx_ingest_ctx *c, struct nx_duck *d, const char *dir,
			   struct nx_err *err)
{
	struct transfer_src ts = { .ctx = c };
	struct nx_row_source src = { .table = &transfer_table, .self = &ts,
				     .next = transfer_next };
	char path[4096];
	uint64_t rows;
	int rc = nx_ntff_reader_rewind(c->ntff, err);

	snprintf(path, sizeof(path), "%s/nx_DmaTransfer.parquet", dir);
	return rc ? rc : nx_ctx_copy(c, d, &src, path, NULL, "staging", &rows, err);
}
