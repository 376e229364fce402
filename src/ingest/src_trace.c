/* SPDX-License-Identifier: MIT
 * src_trace.c: the device-event tables other than Instruction: DmaPacket,
 * SemaphoreUpdate, Throttle and Error, each streamed from its NTFF record kind, plus
 * the execution windows read from EXEC records. */
#include "common/compat.h"
#include "ingest/context.h"
#include "ingest/dma_block.h"

#include <stdio.h>
#include <string.h>

/* ---- DmaPacket ------------------------------------------------------------------- */

enum { D_START, D_END, D_DUR, D_PCORE, D_ID, D_PIDX, D_AGG, D_ENG, D_RB, D_WB, D_TB, D_TPUT,
       D_QTYPE, D_VAR, D_QNAME, D_QIDX, D_CRC };
static const char *const dma_names[] = {
	"start_ts", "end_ts", "duration_ns", "pcore_idx", "id", "packet_idx",
	"packet_aggregation_id", "engine_idx", "read_bytes", "write_bytes", "transfer_bytes",
	"throughput", "queue_type", "variable", "queue_name", "queue_idx", "crc", NULL,
};

static void fill_dma(struct nx_src_trace *s, struct nx_rowbuf *b, size_t row,
		     const struct nx_rec *rec)
{
	struct nx_ingest_ctx *c = s->ctx;
	const struct nx_rec_dma *r = &rec->u.dma;
	const int *ix = s->map.idx;
	int64_t start = nx_ticks_to_ns(c, r->start), end = nx_ticks_to_ns(c, r->end);
	int64_t dur = end - start;
	const struct nx_neff *n = nx_ctx_neff(c);
	const struct nx_dma_queue *q = r->queue < n->nqueues ? &n->queues[r->queue] : NULL;

	nx_ctx_see(c, start, end);
	nx_active_add_dma(&c->active, q ? q->queue_type : NX_QT_UNKNOWN, start, end);
	nx_trig_add(&c->trig, r->trigger, start, end);
	nx_rowbuf_i64(b, ix[D_START], row, start);
	nx_rowbuf_i64(b, ix[D_END], row, end);
	nx_rowbuf_i64(b, ix[D_DUR], row, dur);
	nx_rowbuf_i64(b, ix[D_PCORE], row, c->info->pcore_idx);
	nx_rowbuf_i64(b, ix[D_ID], row, (int64_t)r->id);
	nx_rowbuf_i64(b, ix[D_PIDX], row, r->packet_idx);
	nx_rowbuf_i64(b, ix[D_AGG], row, (int64_t)r->transfer);
	nx_rowbuf_i64(b, ix[D_ENG], row, r->dma_engine);
	nx_rowbuf_i64(b, ix[D_RB], row, r->bytes);
	nx_rowbuf_i64(b, ix[D_WB], row, r->bytes);
	nx_rowbuf_i64(b, ix[D_TB], row, r->bytes);
	/* A zero-length packet has no meaningful rate: report 0 rather than infinity. */
	nx_rowbuf_f64(b, ix[D_TPUT], row, dur > 0 ? (double)r->bytes * 1e9 / (double)dur : 0.0);
	nx_dma_sums_add(&c->dsums, q ? nx_queue_type_name(q->queue_type) : "unknown", start, end,
			(int64_t)r->bytes);
	if (q) {
		nx_rowbuf_str_kept(b, ix[D_QTYPE], row, nx_queue_type_name(q->queue_type));
		nx_rowbuf_str_kept(b, ix[D_QNAME], row, q->name);
		nx_rowbuf_i64(b, ix[D_QIDX], row, q->queue_idx);
	} else {
		c->unknown_queue++;
		nx_rowbuf_str_kept(b, ix[D_QTYPE], row, "unknown");
	}
	if (r->block != NX_NONE32 && r->block < n->nblocks)
		nx_rowbuf_str_kept(b, ix[D_VAR], row,
				   nx_dma_desc_variable(n, &n->blocks[r->block], r->desc));
	else if (r->block != NX_NONE32)
		c->unknown_block++;
	nx_rowbuf_i64(b, ix[D_CRC], row, r->crc);
}

/* ---- SemaphoreUpdate ------------------------------------------------------------- */

enum { S_TS, S_ID, S_VALUE, S_SRC, S_DOUBLE, S_MODE, S_OPTYPE, S_TIMING, S_PCORE };
static const char *const sem_names[] = {
	"timestamp", "id", "value", "update_source", "double_set_or_clear", "update_mode",
	"update_operation_type", "update_trigger_timing", "pcore_idx", NULL,
};

static const char *sem_op_name(int op)
{
	static const char *const n[] = { "none", "sem_inc", "sem_dec", "sem_add_imm",
					 "sem_sub_imm", "sem_wr_imm" };
	return op >= 0 && op < (int)NX_ARRAY_SIZE(n) ? n[op] : "unknown";
}

static void fill_sem(struct nx_src_trace *s, struct nx_rowbuf *b, size_t row,
		     const struct nx_rec *rec)
{
	const struct nx_rec_sem *r = &rec->u.sem;
	const int *ix = s->map.idx;
	int64_t ts = nx_ticks_to_ns(s->ctx, r->ts);
	char id[16];

	nx_ctx_see(s->ctx, ts, ts);
	snprintf(id, sizeof(id), "%u", (unsigned)r->sem);
	nx_rowbuf_i64(b, ix[S_TS], row, ts);
	nx_rowbuf_str(b, ix[S_ID], row, id);
	nx_rowbuf_i64(b, ix[S_VALUE], row, r->value);
	nx_rowbuf_str(b, ix[S_SRC], row, r->source == NX_SEMSRC_AXI ? "AXI"
				       : r->source < NX_ENGINE_COUNT ? nx_engine_name(r->source)
								     : "unknown");
	nx_rowbuf_bool(b, ix[S_DOUBLE], row, r->double_set);
	nx_rowbuf_i64(b, ix[S_MODE], row, r->op);
	nx_rowbuf_str(b, ix[S_OPTYPE], row, sem_op_name(r->op));
	nx_rowbuf_str(b, ix[S_TIMING], row, r->timing == NX_SEMT_READ ? "read"
				       : r->timing == NX_SEMT_COMPLETE ? "complete" : "");
	nx_rowbuf_i64(b, ix[S_PCORE], row, s->ctx->info->pcore_idx);
}

/* ---- Throttle -------------------------------------------------------------------- */

enum { T_DUR, T_K, T_N, T_TS, T_TYPE, T_PCORE };
static const char *const throttle_names[] = {
	"duration", "k", "n", "timestamp", "type", "pcore_idx", NULL,
};

static void fill_throttle(struct nx_src_trace *s, struct nx_rowbuf *b, size_t row,
			  const struct nx_rec *rec)
{
	const struct nx_rec_throttle *r = &rec->u.throttle;
	const int *ix = s->map.idx;
	int64_t ts = nx_ticks_to_ns(s->ctx, r->ts), dur = nx_ticks_to_ns(s->ctx, r->duration);
	static const char *const types[] = { "activity_0", "activity_1", "unknown" };

	nx_ctx_see(s->ctx, ts, ts + dur);
	nx_rowbuf_i64(b, ix[T_DUR], row, dur);
	nx_rowbuf_i64(b, ix[T_K], row, r->k);
	nx_rowbuf_i64(b, ix[T_N], row, r->n);
	nx_rowbuf_i64(b, ix[T_TS], row, ts);
	nx_rowbuf_str(b, ix[T_TYPE], row, r->type < 3 ? types[r->type] : "unknown");
	nx_rowbuf_i64(b, ix[T_PCORE], row, s->ctx->info->pcore_idx);
}

/* ---- Error ----------------------------------------------------------------------- */

enum { E_DESC, E_TYPEID, E_META, E_HEX, E_PCORE, E_TS, E_TYPE };
static const char *const error_names[] = {
	"description", "error_type_id", "metadata", "metadata_hex", "pcore_idx", "timestamp",
	"type", NULL,
};

static void fill_error(struct nx_src_trace *s, struct nx_rowbuf *b, size_t row,
		       const struct nx_rec *rec)
{
	const struct nx_rec_error *r = &rec->u.error;
	const int *ix = s->map.idx;
	int64_t ts = nx_ticks_to_ns(s->ctx, r->ts);
	static const char *const types[] = { "Errors", "Warnings", "Custom Notification" };
	char hex[2 * sizeof(r->metadata) + 3] = "0x";
	size_t mlen = strnlen(r->metadata, sizeof(r->metadata));

	for (size_t i = 0; i < mlen; i++)
		snprintf(hex + 2 + 2 * i, 3, "%02x", (unsigned char)r->metadata[i]);
	nx_ctx_see(s->ctx, ts, ts);
	nx_rowbuf_strn(b, ix[E_DESC], row, r->description,
		       strnlen(r->description, sizeof(r->description)));
	nx_rowbuf_i64(b, ix[E_TYPEID], row, r->type_id);
	nx_rowbuf_strn(b, ix[E_META], row, r->metadata, mlen);
	nx_rowbuf_str(b, ix[E_HEX], row, mlen ? hex : "");
	nx_rowbuf_i64(b, ix[E_PCORE], row, s->ctx->info->pcore_idx);
	nx_rowbuf_i64(b, ix[E_TS], row, ts);
	nx_rowbuf_str(b, ix[E_TYPE], row, r->type < 3 ? types[r->type] : "Errors");
}

/* ---- shared streaming ------------------------------------------------------------ */

static int next(void *self, struct nx_rowbuf *b, struct nx_err *err)
{
	struct nx_src_trace *s = self;
	size_t cap = nx_rowbuf_capacity(b), n = 0;
	struct nx_rec rec;

	s->row_keys = s->keys.n ? nx_rowbuf_keys(b) : NULL;
	while (!s->done && n < cap) {
		int rc = nx_ntff_reader_next(s->ctx->ntff, NX_REC_MASK(s->kind), &rec, err);
		if (rc < 0)
			return rc;
		if (rc == 0) {
			s->done = true;
			break;
		}
		s->fill(s, b, n++, &rec);
	}
	/* the DMA trigger spans live partly on disk: their I/O errors surface here */
	int rc = nx_trig_error(&s->ctx->trig, err);
	return rc ? rc : (int)n;
}

int nx_src_trace_init(struct nx_src_trace *s, struct nx_ingest_ctx *c, int kind,
		      const char *table, const char *const *names, nx_trace_fill_fn fill,
		      struct nx_row_source *src, struct nx_err *err)
{
	int rc;

	memset(s, 0, sizeof(*s));
	s->ctx = c;
	s->kind = kind;
	s->fill = fill;
	rc = nx_colmap_init(&s->map, table, names, err);
	if (!rc)
		rc = nx_ntff_reader_rewind(c->ntff, err);
	if (rc)
		return rc;
	src->table = s->map.table;
	src->self = s;
	src->next = next;
	src->keys = NULL;
	return 0;
}

int nx_src_dma_init(struct nx_src_trace *s, struct nx_ingest_ctx *c, struct nx_row_source *src,
		    struct nx_err *err)
{
	return nx_src_trace_init(s, c, NX_REC_DMA, "DmaPacket", dma_names, fill_dma, src, err);
}

int nx_src_sem_init(struct nx_src_trace *s, struct nx_ingest_ctx *c, struct nx_row_source *src,
		    struct nx_err *err)
{
	return nx_src_trace_init(s, c, NX_REC_SEM, "SemaphoreUpdate", sem_names, fill_sem, src, err);
}

int nx_src_throttle_init(struct nx_src_trace *s, struct nx_ingest_ctx *c,
			 struct nx_row_source *src, struct nx_err *err)
{
	return nx_src_trace_init(s, c, NX_REC_THROTTLE, "Throttle", throttle_names, fill_throttle,
				 src, err);
}

int nx_src_error_init(struct nx_src_trace *s, struct nx_ingest_ctx *c, struct nx_row_source *src,
		      struct nx_err *err)
{
	return nx_src_trace_init(s, c, NX_REC_ERROR, "Error", error_names, fill_error, src, err);
}

int nx_read_exec_records(struct nx_ingest_ctx *c, struct nx_err *err)
{
	struct nx_rec rec;
	int rc = nx_ntff_reader_rewind(c->ntff, err);

	while (!rc && (rc = nx_ntff_reader_next(c->ntff, NX_REC_MASK(NX_REC_EXEC), &rec, err)) > 0) {
		struct nx_exec_window *x = nx_ctx_exec(c, rec.u.exec.index);
		int64_t ts = nx_ticks_to_ns(c, rec.u.exec.ts);
		rc = 0;
		if (!x) {
			nx_ctx_warn(c, "Invalid Data", "execution record with index %u ignored",
				    rec.u.exec.index);
			continue;
		}
		nx_ctx_see(c, ts, ts);
		if (rec.u.exec.stop) {
			x->stop = ts;
			x->has_stop = true;
		} else {
			x->start = ts;
			x->has_start = true;
		}
	}
	return rc < 0 ? rc : 0;
}
