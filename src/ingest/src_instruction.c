/* SPDX-License-Identifier: MIT
 * src_instruction.c: the Instruction table. Streams INST records from the NTFF and
 * joins each with its static instruction in the NEFF (opcode, operands, source
 * location, byte and flop figures), and with the span of the DMA it triggered. The
 * columns of the static instruction are keyed by it for our parquet writer, with a fill
 * (struct nx_row_keys, db/duck.h): batches bound for that writer leave them out, and
 * the writer takes each instruction's from a row filled once (fill_key). */
#include "common/compat.h"
#include "ingest/context.h"

#include <string.h>

enum {
	C_START, C_END, C_DUR, C_ENGINE, C_TRACK, C_PCORE, C_OPCODE, C_OPERANDS, C_COPCODE,
	C_ID, C_PC, C_CPC, C_BIR_ID, C_RAW_BIR, C_KNAME, C_WAIT, C_NKI, C_BIRLOC, C_HBM_R,
	C_HBM_W, C_SB_R, C_SB_W, C_SPILL_S, C_SPILL_R, C_PS_R, C_PS_W, C_PS_SB, C_IN_Q,
	C_OUT_Q, C_W_Q, C_PERF, C_TTYPE, C_TELEM, C_RAW_FLOPS, C_ADJ_FLOPS, C_TELEM_T,
	C_FLOPS_T, C_ADJ_FLOPS_T, C_ACT, C_TRIG_S, C_TRIG_E, C_DMA_WAIT, C_BIR_NAME, C_PENGUIN,
	C_RAW_PENGUIN, C_RAW_HLO, C_RAW_FW, C_HLO_NAME, C_HLO_ATTRS, C_LAYER, C_FRAMES,
};
static const char *const names[] = {
	"start_ts", "end_ts", "duration_ns", "engine", "timeline_track", "pcore_idx", "opcode",
	"operands", "compiler_opcode", "id", "pc", "compiler_pc", "bir_id", "raw_bir_id",
	"kernel_instruction_name", "evt_wait_time_ns", "nki_source_location",
	"bir_debug_info_source_location", "hbm_read_bytes", "hbm_write_bytes", "sbuf_read_bytes",
	"sbuf_write_bytes", "spill_save_bytes", "spill_reload_bytes", "psum_read_bytes",
	"psum_write_bytes", "psum_read_sbuf_write_bytes", "input_queue_bytes",
	"output_queue_bytes", "weight_queue_bytes", "performance_mode",
	"tensor_instruction_type", "tensor_elements", "raw_flops", "adjusted_flops",
	"tensor_elements_transpose", "flops_transpose", "adjusted_flops_transpose",
	"scalar_activation_fn", "dma_trigger_start_ts", "dma_trigger_end_ts", "dma_wait_time_ns",
	"bir_instruction_name", "penguin_id", "raw_penguin_id", "raw_hlo_id", "raw_framework_id",
	"hlo_name", "hlo_attrs", "layer", "stack_frame_ids", NULL,
};

static const char *track_of(const struct nx_inst *in)
{
	if (in->engine == NX_ENGINE_TENSOR)
		return in->opcode == NX_OP_MATMUL ? "TensorMatrix" : "Tensor";
	return nx_engine_name(in->engine);
}

/* The text prefix, v in decimal, suffix into buf (room for NX_ID_TEXT bytes); its length.
 * The ids made per row (struct nx_static_inst): "sg0000:<id>", "I-<id>_sg0000", "[N]". */
#define NX_ID_TEXT 40
static size_t id_text(char *buf, const char *prefix, uint64_t v, const char *suffix)
{
	char digits[20];
	size_t n = 0, len = strlen(prefix);

	memcpy(buf, prefix, len);
	do {
		digits[n++] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	while (n)
		buf[len++] = digits[--n];
	for (; *suffix; suffix++)
		buf[len++] = *suffix;
	return len;
}

/* The cells of a row of a known instruction that depend on it alone (the columns
 * keyed_cols lists, below): engine e's instruction index in c. Every string cell but the
 * ids made here is a literal, the parsed NEFF's or the context's, which outlive the copy:
 * the cells point at them (nx_rowbuf_str_kept), the latter with their lengths made once
 * (struct nx_static_inst, len); the ids are copied. */
static void fill_static(const int *ix, const struct nx_ingest_ctx *c, int e, uint32_t index,
			struct nx_rowbuf *b, size_t row)
{
	const struct nx_inst *in = &nx_ctx_neff(c)->inst[e][index];
	const struct nx_static_inst *st = &nx_ctx_statics(c, e)[index];
	char id[NX_ID_TEXT];

	nx_rowbuf_str_kept(b, ix[C_ENGINE], row, nx_engine_name(e));
	nx_rowbuf_i64(b, ix[C_PC], row, index);
	nx_rowbuf_str_kept(b, ix[C_TRACK], row, track_of(in));
	nx_rowbuf_str_kept(b, ix[C_OPCODE], row, nx_opcode_name(in->opcode));
	nx_rowbuf_str_kept_len(b, ix[C_OPERANDS], row, nx_ctx_operands(c, e)[index],
			       st->len.operands);
	nx_rowbuf_str_kept(b, ix[C_COPCODE], row,
			   in->opcode == NX_OP_DMA_TRIGGER ? "PSEUDO_DMA_TRIGGER"
							   : nx_opcode_name(in->opcode));
	nx_rowbuf_i64(b, ix[C_CPC], row, index);
	nx_rowbuf_strn(b, ix[C_BIR_ID], row, id, id_text(id, "sg0000:", in->bir_id, ""));
	nx_rowbuf_i64(b, ix[C_RAW_BIR], row, (int64_t)in->bir_id);
	nx_rowbuf_str_kept_len(b, ix[C_KNAME], row, st->kernel_name, st->len.kernel_name);
	if (st->bir_name)
		nx_rowbuf_str_kept_len(b, ix[C_BIR_NAME], row, st->bir_name, st->len.bir_name);
	else
		nx_rowbuf_strn(b, ix[C_BIR_NAME], row, id,
			       id_text(id, "I-", in->bir_id, "_sg0000"));
	if (st->stack_frame)
		nx_rowbuf_strn(b, ix[C_FRAMES], row, id, id_text(id, "[", st->stack_frame, "]"));
	if (st->raw_penguin >= 0) {
		nx_rowbuf_strn(b, ix[C_PENGUIN], row, id,
			       id_text(id, "sg0000:", (uint64_t)st->raw_penguin, ""));
		nx_rowbuf_i64(b, ix[C_RAW_PENGUIN], row, st->raw_penguin);
	}
	if (st->raw_hlo >= 0) {
		nx_rowbuf_i64(b, ix[C_RAW_HLO], row, st->raw_hlo);
		nx_rowbuf_i64(b, ix[C_RAW_FW], row, st->raw_framework);
		nx_rowbuf_str_kept_len(b, ix[C_HLO_NAME], row, st->framework_name,
				       st->len.framework_name);
		nx_rowbuf_str_kept_len(b, ix[C_HLO_ATTRS], row, st->hlo_attrs, st->len.hlo_attrs);
		nx_rowbuf_str_kept_len(b, ix[C_LAYER], row, st->framework_name,
				       st->len.framework_name);
	}
	nx_rowbuf_str_kept_len(b, ix[C_NKI], row, st->nki_loc, st->len.nki_loc);
	nx_rowbuf_str_kept_len(b, ix[C_BIRLOC], row, st->bir_loc, st->len.bir_loc);
	nx_rowbuf_i64(b, ix[C_HBM_R], row, st->hbm_read);
	nx_rowbuf_i64(b, ix[C_HBM_W], row, st->hbm_write);
	nx_rowbuf_i64(b, ix[C_SB_R], row, (int64_t)st->work.sbuf_read_bytes);
	nx_rowbuf_i64(b, ix[C_SB_W], row, (int64_t)st->work.sbuf_write_bytes);
	nx_rowbuf_i64(b, ix[C_SPILL_S], row, st->spill_save);
	nx_rowbuf_i64(b, ix[C_SPILL_R], row, st->spill_reload);
	nx_rowbuf_i64(b, ix[C_PS_R], row, (int64_t)st->work.psum_read_bytes);
	nx_rowbuf_i64(b, ix[C_PS_W], row, (int64_t)st->work.psum_write_bytes);
	nx_rowbuf_i64(b, ix[C_PS_SB], row, (int64_t)st->work.psum_read_sbuf_write_bytes);
	nx_rowbuf_i64(b, ix[C_IN_Q], row, st->input_q);
	nx_rowbuf_i64(b, ix[C_OUT_Q], row, st->output_q);
	nx_rowbuf_i64(b, ix[C_W_Q], row, st->weight_q);
	if (in->perf_mode == 1)
		nx_rowbuf_str_kept(b, ix[C_PERF], row, "2x");
	else if (in->perf_mode == 2)
		nx_rowbuf_str_kept(b, ix[C_PERF], row, "4x");
	if (in->engine == NX_ENGINE_TENSOR &&
	    (in->opcode == NX_OP_MATMUL || in->opcode == NX_OP_LDWEIGHTS)) {
		bool tp = in->flags & NX_INST_TRANSPOSE;
		const struct nx_inst_work *w = &st->work;
		nx_rowbuf_str_kept(b, ix[C_TTYPE], row, tp ? "TRANSPOSE" : "REGULAR");
		nx_rowbuf_i64(b, ix[C_TELEM], row, (int64_t)w->tensor_elements);
		nx_rowbuf_i64(b, ix[C_RAW_FLOPS], row, (int64_t)w->raw_flops);
		nx_rowbuf_i64(b, ix[C_ADJ_FLOPS], row, (int64_t)w->adjusted_flops);
		nx_rowbuf_i64(b, ix[C_TELEM_T], row, tp ? (int64_t)w->tensor_elements : 0);
		nx_rowbuf_i64(b, ix[C_FLOPS_T], row, tp ? (int64_t)w->raw_flops : 0);
		nx_rowbuf_i64(b, ix[C_ADJ_FLOPS_T], row, tp ? (int64_t)w->adjusted_flops : 0);
	}
	if (in->opcode == NX_OP_ACTIVATE)
		nx_rowbuf_str_kept(b, ix[C_ACT], row, nx_act_fn_name(in->act_fn));
}

static void fill_row(struct nx_src_trace *s, struct nx_rowbuf *b, size_t row,
		     const struct nx_rec *rec)
{
	const struct nx_rec_inst *r = &rec->u.inst;
	struct nx_ingest_ctx *c = s->ctx;
	const int *ix = s->map.idx;
	int64_t start = nx_ticks_to_ns(c, r->start), end = nx_ticks_to_ns(c, r->end);
	const struct nx_inst *in = NULL;
	const struct nx_static_inst *st = NULL;

	if (r->engine < NX_ENGINE_COUNT && r->index < nx_ctx_neff(c)->ninst[r->engine]) {
		in = &nx_ctx_neff(c)->inst[r->engine][r->index];
		st = &nx_ctx_statics(c, r->engine)[r->index];
	} else {
		c->unknown_inst++;
	}
	if (s->row_keys)
		s->row_keys[row] = in ? s->key_base[r->engine] + r->index : NX_ROW_NOKEY;
	nx_ctx_see(c, start, end);
	nx_active_add(&c->active, r->engine, in ? in->opcode : -1, start, end);
	nx_rowbuf_i64(b, ix[C_START], row, start);
	nx_rowbuf_i64(b, ix[C_END], row, end);
	nx_rowbuf_i64(b, ix[C_DUR], row, end - start);
	nx_rowbuf_i64(b, ix[C_PCORE], row, c->info->pcore_idx);
	nx_rowbuf_i64(b, ix[C_ID], row, (int64_t)r->id);
	nx_rowbuf_i64(b, ix[C_WAIT], row, nx_ticks_to_ns(c, r->wait_ticks));
	/* The DMA this instruction triggered: first packet start, last packet end, and
	 * the delay from this instruction's end to that start. The span then takes this
	 * instruction's own times, for DmaPacketAggregated (a second record with the same
	 * id finds them taken and gets no span). */
	struct nx_trig_span *ts = nx_trig_find(&c->trig, r->id);
	if (ts && !nx_trig_is_inst(ts)) {
		nx_rowbuf_i64(b, ix[C_TRIG_S], row, ts->start);
		nx_rowbuf_i64(b, ix[C_TRIG_E], row, ts->end);
		nx_rowbuf_i64(b, ix[C_DMA_WAIT], row, ts->start - end);
	}
	if (ts)
		nx_trig_set_inst(&c->trig, ts, start, end); /* counts a repeated id */
	struct nx_inst_row sr = { .engine = r->engine < NX_ENGINE_COUNT ? nx_engine_name(r->engine)
									  : "Unknown",
				  .opcode = in ? nx_opcode_name(in->opcode) : "UNKNOWN",
				  .start = start, .end = end, .known = in != NULL };
	if (in) {
		const struct nx_inst_work *w = &st->work;
		bool tp = in->flags & NX_INST_TRANSPOSE;
		int64_t v[NX_SUM_BYTES] = { st->hbm_read, st->hbm_write, (int64_t)w->sbuf_read_bytes,
			(int64_t)w->sbuf_write_bytes, st->spill_save, st->spill_reload,
			(int64_t)w->psum_read_bytes, (int64_t)w->psum_write_bytes,
			(int64_t)w->psum_read_sbuf_write_bytes, st->input_q, st->output_q,
			st->weight_q };
		memcpy(sr.bytes, v, sizeof(v));
		/* the columns the hierarchy tables (85-88) need, as written below */
		sr.chain = st->raw_penguin >= 0 && st->raw_hlo >= 0;
		sr.has_flops = in->engine == NX_ENGINE_TENSOR &&
			       (in->opcode == NX_OP_MATMUL || in->opcode == NX_OP_LDWEIGHTS);
		sr.raw_flops = (int64_t)w->raw_flops;
		sr.adj_flops = (int64_t)w->adjusted_flops;
		sr.flops_tp = tp ? (int64_t)w->raw_flops : 0;
		sr.adj_flops_tp = tp ? (int64_t)w->adjusted_flops : 0;
	}
	nx_inst_sums_add(&c->isums, &sr);
	if (!in) {
		nx_rowbuf_str_kept(b, ix[C_ENGINE], row, r->engine < NX_ENGINE_COUNT
							 ? nx_engine_name(r->engine) : "Unknown");
		nx_rowbuf_i64(b, ix[C_PC], row, r->index);
		nx_rowbuf_str_kept(b, ix[C_OPCODE], row, "UNKNOWN");
		nx_rowbuf_str_kept(b, ix[C_OPERANDS], row, "");
		nx_rowbuf_str_kept(b, ix[C_BIR_ID], row, "");
		return;
	}
	/* our writer takes these from the key's row (fill_key) */
	if (!s->row_keys || !s->keys.fill)
		fill_static(ix, c, r->engine, r->index, b, row);
	struct nx_exec_window *x = nx_ctx_exec(c, r->exec);
	if (x)
		x->rows++;
}

/* The columns fill_row writes from the static instruction alone (its engine and index:
 * the row's key), NULL or not: every column but the times, the record's id, wait and
 * DMA span, and pcore_idx (the same on every row: the dictionary's run path has it). */
static const int keyed_cols[] = {
	C_ENGINE, C_TRACK, C_OPCODE, C_OPERANDS, C_COPCODE, C_PC, C_CPC, C_BIR_ID, C_RAW_BIR,
	C_KNAME, C_NKI, C_BIRLOC, C_HBM_R, C_HBM_W, C_SB_R, C_SB_W, C_SPILL_S, C_SPILL_R,
	C_PS_R, C_PS_W, C_PS_SB, C_IN_Q, C_OUT_Q, C_W_Q, C_PERF, C_TTYPE, C_TELEM, C_RAW_FLOPS,
	C_ADJ_FLOPS, C_TELEM_T, C_FLOPS_T, C_ADJ_FLOPS_T, C_ACT, C_BIR_NAME, C_PENGUIN,
	C_RAW_PENGUIN, C_RAW_HLO, C_RAW_FW, C_HLO_NAME, C_HLO_ATTRS, C_LAYER, C_FRAMES,
};

/* A key's row for our writer (struct nx_row_keys, fill): key k is engine e's
 * instruction k - key_base[e]. On the writer's thread: reads the NEFF and the statics. */
static void fill_key(void *arg, uint32_t key, struct nx_rowbuf *b, size_t row)
{
	const struct nx_src_trace *s = arg;
	const struct nx_ingest_ctx *c = s->ctx;
	int e = NX_ENGINE_COUNT - 1;

	while (e > 0 && key < s->key_base[e])
		e--;
	uint32_t i = key - s->key_base[e];
	fill_static(s->map.idx, c, e, i, b, row);
}

int nx_src_instruction_init(struct nx_src_trace *s, struct nx_ingest_ctx *c,
			    struct nx_row_source *src, struct nx_err *err)
{
	int rc = nx_src_trace_init(s, c, NX_REC_INST, "Instruction", names, fill_row, src, err);
	uint64_t n = 0;

	if (rc)
		return rc;
	for (int e = 0; e < NX_ENGINE_COUNT; e++) {
		s->key_base[e] = (uint32_t)n;
		n += nx_ctx_neff(c)->ninst[e];
	}
	if (n == 0 || n >= NX_ROW_NOKEY)
		return 0; /* no keys: every row the usual way */
	s->keys.n = (uint32_t)n;
	for (size_t i = 0; i < NX_ARRAY_SIZE(keyed_cols); i++) {
		int col = s->map.idx[keyed_cols[i]];
		s->keys.cols[col / 64] |= (uint64_t)1 << (col % 64);
	}
	if (n <= NX_ROW_KEYS_FILLED) { /* the rows skip these cells for our writer */
		s->keys.fill = fill_key;
		s->keys.arg = s;
	}
	src->keys = &s->keys;
	return 0;
}
