/* SPDX-License-Identifier: MIT
 * occupancy.c: the on-chip occupancy pass. One streaming pass over the instruction and
 * DMA packet records infers which allocation holds each cell of SBUF and PSUM (the model
 * is described at "On-chip occupancy" below and in docs/derived-tables.md) and feeds
 * SbufAllocation, SbufUsage and PsumUsage; nx_OnchipAlloc, its rows, is a staging table
 * only when the staging is kept. The pass runs on a thread of its own beside the raw
 * stage (nx_onchip_start, context.h) and the ingest's thread takes it over when the raw
 * stage ends. */
#include "common/compat.h"
#include "ingest/context.h"
#include "common/xalloc.h"
#include "hw/hw.h"
#include "ingest/dma_block.h"
#include "ingest/internal_table.h"
#include "ingest/onchip_map.h"
#include "ingest/onchip_rows.h"
#include "ingest/onchip_usage.h"
#include "ingest/sbuf_allocation.h"

#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define F NX_INTERNAL_FIELD

/* ---- On-chip occupancy (nx_OnchipAlloc) ----
 *
 * One pass over the instruction and DMA packet records, in trace (start) order, keeps
 * an ownership map of SBUF and PSUM: every (partition group of 32, 64-byte column)
 * cell names the allocation whose data it holds. An access pattern covers the bounding
 * box of its partitions and bytes (strides are not followed).
 *  - A write (instruction dst at its start, DMA transfer into SBUF/PSUM at its start)
 *    creates an allocation per SBUF partition group, or per PSUM bank, it touches, and
 *    takes its cells from their previous owners. An in-place update (dst range equal to
 *    a src range, an accumulating MATMUL)
 *    continues the allocation holding exactly that range instead. A DMA transfer
 *    writes all its block's destination ranges at its first packet; later packets
 *    only extend the write end of what the transfer still holds.
 *  - A read (instruction src, DMA packet out of SBUF/PSUM) extends the read end of the
 *    owners of the cells it covers. An instruction's reads come before its write.
 *  - An allocation ends at max(write end, min(last read end, time its last cell was
 *    overwritten)), or at max(write end, last read end) when it lives to the trace end.
 * Rows with negative `bytes` are the parts of an allocation overwritten while the rest
 * stayed live: they cancel those bytes from the overwrite to the allocation's end, so
 * the usage sums count every byte once. The map and the allocations are onchip_map.c;
 * this file turns the records into its reads and writes. */
enum { OC_SBUF = NX_OC_SBUF, OC_PSUM = NX_OC_PSUM };

static const struct nx_field onchip_fields[] = {
	F("mem", "string", ""), F("unit", "integer", "int64"),
	F("start_ts", "integer", "int64"), F("end_ts", "integer", "int64"),
	F("start_address", "integer", "int64"), F("end_address", "integer", "int64"),
	F("start_partition", "integer", "int64"), F("partitions", "integer", "int64"),
	F("bytes", "integer", "int64"), F("capacity", "integer", "int64"),
	F("source", "string", ""), F("engine", "string", ""), F("pc", "integer", "int64"),
	F("block", "integer", "int64"), F("pcore_idx", "integer", "int64"),
};
static const struct nx_table onchip_table = NX_INTERNAL_TABLE("nx_OnchipAlloc", onchip_fields);

struct oc_row {
	struct nx_oc_range r;
	unsigned unit;
	int64_t start, end, bytes;
	bool dma;
	int engine;
	uint32_t pc, block;
};

/* What a static instruction reads and writes of SBUF/PSUM, the same at every execution:
 * its clipped ranges, computed once per slot of a direct-mapped cache indexed by the
 * instruction's number in the NEFF (all engines), of as many slots as the NEFF has
 * instructions up to INST_SLOTS (a larger NEFF shares slots). A range is held in 12 bytes
 * (a partition's bytes fit 32 bits on every target; onchip_init checks). */
#define INST_SLOTS 4096u
struct oc_crange {
	uint32_t lo, hi;
	uint8_t mem, p0, p1;
};
struct oc_inst {
	uint32_t index;                 /* key: the instruction's index ... */
	uint8_t engine;                 /* ... and engine; NX_ENGINE_COUNT: empty slot */
	uint8_t nsrc;                   /* src[0..nsrc) are read */
	uint8_t out;                    /* bit o: dst[o] is written */
	uint8_t flags;                  /* bit o: dst[o] is written in place; bit 2: an
					 * accumulating MATMUL, dst[0] is read first */
	struct oc_crange src[3], dst[2];
};

struct onchip_src {
	struct nx_ingest_ctx *ctx;
	struct nx_oc_map map;
	struct oc_inst *insts;          /* nslots, a power of two */
	size_t nslots;
	size_t base[NX_ENGINE_COUNT];   /* number in the NEFF of each engine's first instruction */
	struct oc_row *out;             /* finished rows not yet handed to DuckDB */
	size_t nout, out_cap, out_pos;
	/* Each record kind is in time order in the file, but the kinds are not merged:
	 * instructions and DMA packets come from two readers of the pass's own and the
	 * two streams are merged. */
	struct nx_ntff_reader *inst_reader, *dma_reader;
	struct nx_rec head[2];          /* next instruction, next DMA packet */
	bool have[2], primed, done;
	struct nx_onchip_rows *rows;    /* SbufUsage / PsumUsage's rows, every row */
	struct nx_sbuf_alloc *sa;       /* SbufAllocation, fed its rows */
	uint64_t records;               /* records passed, for progress */
	double t0, last;
	/* on a thread of its own (nx_onchip_start): records passed, published for the
	 * main thread's progress, its request to stop, and its request to hand the pass
	 * over (the next call returns 0 and a later one goes on) */
	atomic_uint_fast64_t *seen;
	const atomic_bool *stop, *handoff;
	uint64_t pause_at;              /* tests: behave as handed over after this many records */
};

/* Byte extent of a strided pattern: elements at sum(i_k * step_k), i_k < size_k. */
static void extent(uint64_t off, unsigned n, const uint64_t *size, const int64_t *step,
		   unsigned esz, uint64_t *lo, uint64_t *hi)
{
	int64_t neg = 0, pos = 0;

	for (unsigned k = 0; k < n; k++) {
		int64_t d = (int64_t)((size[k] ? size[k] : 1) - 1) * step[k];
		if (d < 0)
			neg += d;
		else
			pos += d;
	}
	int64_t a = (int64_t)off + neg * (int64_t)esz;
	*lo = a < 0 ? 0 : (uint64_t)a;
	*hi = off + (uint64_t)(pos + 1) * esz - 1;
}

static bool ap_range(const struct onchip_src *s, const struct nx_ap *ap, struct nx_oc_range *r)
{
	if (ap->mem != NX_MEM_SBUF && ap->mem != NX_MEM_PSUM)
		return false;
	uint64_t size[NX_AP_DIMS];
	int64_t step[NX_AP_DIMS];
	for (unsigned k = 0; k < NX_AP_DIMS; k++) {
		size[k] = ap->size[k];
		step[k] = ap->step[k];
	}
	r->mem = ap->mem == NX_MEM_SBUF ? OC_SBUF : OC_PSUM;
	r->p0 = ap->start_partition;
	r->p1 = r->p0 + nx_ap_partitions(ap) - 1;
	extent(ap->offset, NX_AP_DIMS, size, step, nx_dtype_size(ap->dtype), &r->lo, &r->hi);
	return nx_oc_clip(&s->map, r);
}

/* The SBUF/PSUM side of a DMA descriptor: dimension 0 counts partitions. */
static bool desc_range(const struct onchip_src *s, const struct nx_dma_desc *d, bool to,
		       struct nx_oc_range *r)
{
	int loc = to ? d->to_loc : d->from_loc;
	unsigned nd = to ? d->to_ndim : d->from_ndim;
	const uint64_t *size = to ? d->to_sizes : d->from_sizes;

	if (loc != NX_LOC_SBUF && loc != NX_LOC_PSUM)
		return false;
	r->mem = loc == NX_LOC_SBUF ? OC_SBUF : OC_PSUM;
	r->p0 = to ? d->to_start_partition : d->from_start_partition;
	r->p1 = r->p0 + (unsigned)(size[0] ? size[0] : 1) - 1;
	extent(to ? d->to_off : d->from_off, nd > 1 ? nd - 1 : 0, size + 1,
	       (to ? d->to_steps : d->from_steps) + 1,
	       nx_dtype_size(to && d->cast ? d->to_dtype : d->dtype), &r->lo, &r->hi);
	return nx_oc_clip(&s->map, r);
}

/* Every row feeds SbufUsage/PsumUsage; the SBUF allocations (not the PSUM ones nor the
 * negative corrections) feed SbufAllocation. Only when the staging tables are kept for
 * the reference tests (tests/unit/test_derive_ref.c) are the rows also written, all of
 * them, as nx_OnchipAlloc. */
static void emit(void *arg, const struct nx_oc_alloc *a, int64_t start, int64_t end,
		 int64_t bytes)
{
	struct onchip_src *s = arg;

	if (s->ctx->keep_staging) {
		NX_GROW(s->out, s->nout + 1, s->out_cap);
		s->out[s->nout++] = (struct oc_row){ .r = a->r, .unit = a->unit, .start = start,
			.end = end, .bytes = bytes, .dma = a->dma, .engine = a->engine,
			.pc = a->pc, .block = a->block };
	}
	if (s->sa && a->r.mem == OC_SBUF && bytes > 0)
		nx_sbuf_alloc_add(s->sa, start, end, a->r.lo, a->r.hi, a->unit, a->dma, a->engine,
				  a->pc, a->block);
	if (s->rows)
		nx_onchip_rows_add(s->rows, a->r.mem == OC_SBUF ? NX_USAGE_SBUF : NX_USAGE_PSUM,
				    a->unit, start, end, bytes,
				    nx_oc_unit_capacity(&s->map, a->r.mem));
}

static struct oc_crange crange(const struct nx_oc_range *r)
{
	return (struct oc_crange){ .lo = (uint32_t)r->lo, .hi = (uint32_t)r->hi,
				   .mem = (uint8_t)r->mem, .p0 = (uint8_t)r->p0,
				   .p1 = (uint8_t)r->p1 };
}

static struct nx_oc_range range_of(const struct oc_crange *c)
{
	return (struct nx_oc_range){ .mem = c->mem, .p0 = c->p0, .p1 = c->p1, .lo = c->lo,
				     .hi = c->hi };
}

/* The ranges of instruction `index` of `engine`, from the cache or computed into it. */
static const struct oc_inst *inst_ranges(struct onchip_src *s, int engine, uint32_t index)
{
	struct oc_inst *e = &s->insts[(s->base[engine] + index) & (s->nslots - 1)];

	if (e->engine == engine && e->index == index)
		return e;
	const struct nx_inst *in = &nx_ctx_neff(s->ctx)->inst[engine][index];
	const struct nx_ap *srcs[3] = { &in->src0, &in->src1, &in->src2 };
	const struct nx_ap *outs[2] = { &in->dst, &in->dst2 };
	struct nx_oc_range src[3], dst;
	bool has_src[3];

	*e = (struct oc_inst){ .index = index, .engine = (uint8_t)engine };
	for (int k = 0; k < 3; k++)
		if ((has_src[k] = ap_range(s, srcs[k], &src[k])))
			e->src[e->nsrc++] = crange(&src[k]);
	/* dst, then the second output (reduce_res) of the NKI operations */
	for (int o = 0; o < 2; o++) {
		if (!ap_range(s, outs[o], &dst))
			continue;
		bool in_place = !o && in->opcode == NX_OP_MATMUL && (in->flags & NX_INST_ACCUMULATE);
		if (in_place)
			e->flags |= 4u;
		for (int k = 0; k < 3; k++)
			in_place = in_place || (has_src[k] && nx_oc_range_eq(&dst, &src[k]));
		e->dst[o] = crange(&dst);
		e->out |= (uint8_t)(1u << o);
		e->flags |= (uint8_t)(in_place ? 1u << o : 0u);
	}
	return e;
}

static void onchip_inst(struct onchip_src *s, const struct nx_rec_inst *r)
{
	const struct nx_neff *n = nx_ctx_neff(s->ctx);
	if (r->engine >= NX_ENGINE_COUNT || r->index >= n->ninst[r->engine])
		return;
	const struct oc_inst *e = inst_ranges(s, r->engine, r->index);
	int64_t start = nx_ticks_to_ns(s->ctx, r->start), end = nx_ticks_to_ns(s->ctx, r->end);

	for (unsigned k = 0; k < e->nsrc; k++) {
		struct nx_oc_range rg = range_of(&e->src[k]);
		nx_oc_read(&s->map, &rg, end);
	}
	for (int o = 0; o < 2; o++) {
		if (!(e->out & (1u << o)))
			continue;
		struct nx_oc_range rg = range_of(&e->dst[o]);
		if (!o && (e->flags & 4u))
			nx_oc_read(&s->map, &rg, end);
		struct nx_oc_writer w = { .start = start, .end = end, .engine = r->engine,
			.pc = r->index, .in_place = e->flags & (1u << o) };
		nx_oc_write(&s->map, &rg, &w);
	}
}

static void onchip_dma(struct onchip_src *s, const struct nx_rec_dma *r)
{
	const struct nx_neff *n = nx_ctx_neff(s->ctx);
	if (r->block >= n->nblocks || r->desc >= n->blocks[r->block].ndesc)
		return;
	const struct nx_dma_desc *d = &n->blocks[r->block].desc[r->desc];
	int64_t start = nx_ticks_to_ns(s->ctx, r->start), end = nx_ticks_to_ns(s->ctx, r->end);
	const struct nx_dma_block *blk = &n->blocks[r->block];
	struct nx_oc_range rg;

	if (desc_range(s, d, false, &rg))
		nx_oc_read(&s->map, &rg, end);
	if (r->packet_idx == 0) {
		/* the transfer's first packet writes every destination range of its block */
		for (uint32_t k = 0; k < blk->ndesc; k++) {
			struct nx_oc_writer w = { .start = start, .end = end, .dma = true,
				.engine = -1, .block = r->block, .desc = k,
				.transfer = r->transfer };
			if (desc_range(s, &blk->desc[k], true, &rg))
				nx_oc_write(&s->map, &rg, &w);
		}
	} else if (desc_range(s, d, true, &rg)) {
		/* a later packet extends what its transfer wrote and still holds */
		nx_oc_extend(&s->map, &rg, r->transfer, end);
	}
}

/* Reads the next record of stream k (0 instructions, 1 DMA packets) into head[k]. */
static int pull(struct onchip_src *s, int k, struct nx_err *err)
{
	struct nx_ntff_reader *r = k ? s->dma_reader : s->inst_reader;
	int rc = nx_ntff_reader_next(r, NX_REC_MASK(k ? NX_REC_DMA : NX_REC_INST), &s->head[k], err);

	if (rc < 0)
		return rc;
	s->have[k] = rc == 1;
	return 0;
}

/* Progress of the pass when it writes no table (about every quarter second). */
static void report(struct onchip_src *s)
{
	double now;

	if (s->seen) {
		atomic_store_explicit(s->seen, s->records, memory_order_relaxed);
		return;
	}
	now = nx_now_s();
	if (s->ctx->keep_staging || now - s->last < 0.25)
		return;
	struct nx_progress_event ev = { .kind = NX_PROGRESS_ROWS, .stage = s->ctx->stage,
		.table = "nx_OnchipPass (records)", .rows = s->records,
		.seconds = now - s->t0 };
	s->last = now;
	nx_progress_emit(s->ctx->progress, &ev);
}

static int onchip_next(void *self, struct nx_rowbuf *b, struct nx_err *err)
{
	struct onchip_src *s = self;
	size_t cap = nx_rowbuf_capacity(b), row = 0;

	if (s->handoff && atomic_load(s->handoff))
		return 0;

	if (!s->primed) {
		int rc;
		if ((rc = pull(s, 0, err)) || (rc = pull(s, 1, err)))
			return rc;
		s->primed = true;
	}
	while (s->out_pos == s->nout && !s->done) {
		if (s->handoff && s->pause_at && s->records >= s->pause_at)
			return 0; /* tests: as if handed over here */
		s->nout = s->out_pos = 0;
		if (!s->have[0] && !s->have[1]) {
			/* what is still live ends with its last access */
			nx_oc_close_all(&s->map);
			s->done = true;
			break;
		}
		/* the earlier start first; an instruction before a packet starting with it */
		int k = !s->have[0] || (s->have[1] && s->head[1].u.dma.start < s->head[0].u.inst.start);
		if (k == 0)
			onchip_inst(s, &s->head[0].u.inst);
		else
			onchip_dma(s, &s->head[1].u.dma);
		int rc = pull(s, k, err);
		if (rc)
			return rc;
		if ((++s->records & 0xffff) == 0) {
			if (s->stop && atomic_load(s->stop))
				return nx_errf(err, NX_EUSAGE, "the occupancy pass was stopped");
			report(s);
		}
	}
	for (; s->out_pos < s->nout && row < cap; s->out_pos++, row++) {
		const struct oc_row *o = &s->out[s->out_pos];
		nx_rowbuf_str(b, 0, row, o->r.mem == OC_SBUF ? "SBUF" : "PSUM");
		nx_rowbuf_i64(b, 1, row, o->unit);
		nx_rowbuf_i64(b, 2, row, o->start);
		nx_rowbuf_i64(b, 3, row, o->end);
		nx_rowbuf_i64(b, 4, row, (int64_t)o->r.lo);
		nx_rowbuf_i64(b, 5, row, (int64_t)o->r.hi);
		nx_rowbuf_i64(b, 6, row, o->r.p0);
		nx_rowbuf_i64(b, 7, row, o->r.p1 - o->r.p0 + 1);
		nx_rowbuf_i64(b, 8, row, o->bytes);
		nx_rowbuf_i64(b, 9, row, nx_oc_unit_capacity(&s->map, o->r.mem));
		nx_rowbuf_str(b, 10, row, o->dma ? "dma" : "instruction");
		if (o->dma) {
			nx_rowbuf_i64(b, 13, row, o->block);
		} else {
			nx_rowbuf_str(b, 11, row, nx_engine_name(o->engine));
			nx_rowbuf_i64(b, 12, row, o->pc);
		}
		nx_rowbuf_i64(b, 14, row, s->ctx->info->pcore_idx);
	}
	return (int)row;
}

static int onchip_init(struct onchip_src *s, struct nx_ingest_ctx *c, struct nx_err *err)
{
	const struct nx_hw *m = nx_hw_get(c->info->target);

	if (!m)
		m = nx_hw_get(NULL);
	*s = (struct onchip_src){ .ctx = c };
	nx_oc_map_init(&s->map, m->sbuf_partition_bytes, m->psum_partition_bytes,
		       m->psum_bank_bytes, emit, s);
	if (m->sbuf_partition_bytes > UINT32_MAX || m->psum_partition_bytes > UINT32_MAX)
		return nx_errf(err, NX_EUSAGE, "occupancy.c: target %s: a partition of more "
			       "than 4 GiB", m->target);
	size_t total = 0;
	for (int e = 0; e < NX_ENGINE_COUNT; e++) {
		s->base[e] = total;
		total += nx_ctx_neff(c)->ninst[e];
	}
	for (s->nslots = 1; s->nslots < total && s->nslots < INST_SLOTS; s->nslots *= 2)
		;
	s->insts = nx_xmalloc(s->nslots * sizeof(*s->insts));
	for (size_t i = 0; i < s->nslots; i++)
		s->insts[i] = (struct oc_inst){ .engine = NX_ENGINE_COUNT };
	int rc = nx_ntff_reader_open(&s->inst_reader, c->ntff_path, err);
	return rc ? rc : nx_ntff_reader_open(&s->dma_reader, c->ntff_path, err);
}

static void onchip_release(struct onchip_src *s)
{
	nx_oc_map_release(&s->map);
	free(s->insts);
	free(s->out);
	if (s->inst_reader)
		nx_ntff_reader_close(s->inst_reader);
	if (s->dma_reader)
		nx_ntff_reader_close(s->dma_reader);
}

/* The occupancy pass and what it feeds. It runs on a thread of its own from the start of
 * the raw stage, in the time the raw stage leaves a core idle (SCHED_IDLE): it reads the
 * trace through readers of its own, the parsed NEFF and the context's fixed facts, and
 * writes only its own state. Its SbufUsage/PsumUsage grid needs the trace's time
 * bounds, which the raw stage collects as it goes (nx_ctx_see): the pass logs the rows
 * (onchip_rows.h) and they go into the grid once the raw stage has ended. When it
 * ends, the calling thread takes the pass over wherever it is (on a loaded machine an
 * idle-priority thread may have had little time): the rest of the pass, or all of it
 * should it not have started. With keep_staging it all runs then, on the calling
 * thread, because it writes nx_OnchipAlloc through DuckDB. */
struct nx_onchip_job {
	struct nx_ingest_ctx *c;
	char *staging_dir;
	struct onchip_src os;
	struct nx_sbuf_alloc sa;
	struct nx_onchip_rows ulog;     /* SbufUsage / PsumUsage's rows */
	struct nx_row_source src;
	bool prepared;          /* os, sa and rows are set up */
	bool threaded;
	pthread_t thread;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	bool done;              /* under mu */
	atomic_uint_fast64_t seen;
	atomic_bool stop, handoff;
	int rc;                 /* the pass's result, read once done */
	struct nx_err err;
	uint64_t rows;
	double t0, seconds;
};

static void onchip_unprepare(struct nx_onchip_job *j)
{
	if (!j->prepared)
		return;
	onchip_release(&j->os);
	nx_sbuf_alloc_release(&j->sa);
	nx_onchip_rows_release(&j->ulog);
	j->prepared = false;
}

/* Sets the pass up. */
static int onchip_prepare(struct nx_onchip_job *j, struct nx_err *err)
{
	struct nx_ingest_ctx *c = j->c;
	int rc;

	nx_onchip_rows_init(&j->ulog, j->staging_dir);
	nx_sbuf_alloc_init(&j->sa, j->staging_dir);
	j->src = (struct nx_row_source){ .table = &onchip_table, .self = &j->os,
					 .next = onchip_next };
	j->prepared = true;
	rc = onchip_init(&j->os, c, err);
	j->os.rows = &j->ulog;
	j->os.sa = &j->sa;
	j->os.t0 = j->os.last = nx_now_s();
	return rc;
}

static void *onchip_main(void *arg)
{
	struct nx_onchip_job *j = arg;
	struct sched_param idle = { 0 };
	/* tests: "bounds" hands the pass over before it starts (the name is from when the
	 * pass read the trace's bounds first), a number after that many records, as a
	 * starved thread would */
	const char *test = getenv("NX_TEST_ONCHIP_HANDOFF");
	bool at_once = test && !strcmp(test, "bounds");

	/* only the time the other threads leave: it must not slow the raw stage */
	(void)pthread_setschedparam(pthread_self(), SCHED_IDLE, &idle);
	if (!at_once && !atomic_load(&j->handoff))
		j->rc = onchip_prepare(j, &j->err);
	if (!j->rc && j->prepared) {
		j->os.seen = &j->seen;
		j->os.stop = &j->stop;
		j->os.handoff = &j->handoff;
		j->os.pause_at = test && !at_once ? strtoull(test, NULL, 10) : 0;
		j->rc = nx_duck_drain_source(&j->src, &j->rows, &j->err);
	}
	pthread_mutex_lock(&j->mu);
	j->seconds = nx_now_s() - j->t0;
	j->done = true;
	pthread_cond_signal(&j->cv);
	pthread_mutex_unlock(&j->mu);
	return NULL;
}

static void onchip_job_free(struct nx_onchip_job *j)
{
	onchip_unprepare(j);
	pthread_cond_destroy(&j->cv);
	pthread_mutex_destroy(&j->mu);
	free(j->staging_dir);
	free(j);
}

int nx_onchip_start(struct nx_ingest_ctx *c, const char *staging_dir,
		    struct nx_onchip_job **out, struct nx_err *err)
{
	struct nx_onchip_job *j;
	int e;

	*out = NULL;
	if (c->skip_buf_usage)
		return 0; /* -F ignore-nc-buf-usage=true: no SBUF/PSUM occupancy tables */
	j = nx_xcalloc(1, sizeof(*j));
	j->c = c;
	j->staging_dir = nx_xstrdup(staging_dir);
	pthread_mutex_init(&j->mu, NULL);
	pthread_cond_init(&j->cv, NULL);
	atomic_init(&j->seen, 0);
	atomic_init(&j->stop, false);
	atomic_init(&j->handoff, false);
	j->t0 = nx_now_s();
	if (!c->keep_staging) {
		e = pthread_create(&j->thread, NULL, onchip_main, j);
		if (e) {
			onchip_job_free(j);
			return nx_errf(err, -e, "cannot start the occupancy pass's thread: %s",
				       strerror(e));
		}
		j->threaded = true;
	}
	*out = j;
	return 0;
}

/* Waits for the pass's thread, reporting its records about every quarter second. */
static void onchip_wait(struct nx_onchip_job *j)
{
	if (!j->threaded)
		return;
	pthread_mutex_lock(&j->mu);
	while (!j->done) {
		struct timespec ts;
		clock_gettime(CLOCK_REALTIME, &ts);
		ts.tv_nsec += 250 * 1000 * 1000;
		if (ts.tv_nsec >= 1000000000L) {
			ts.tv_sec++;
			ts.tv_nsec -= 1000000000L;
		}
		if (pthread_cond_timedwait(&j->cv, &j->mu, &ts) == ETIMEDOUT && !j->done) {
			struct nx_progress_event ev = { .kind = NX_PROGRESS_ROWS,
				.stage = j->c->stage, .table = "nx_OnchipPass (records)",
				.rows = atomic_load_explicit(&j->seen, memory_order_relaxed),
				.seconds = nx_now_s() - j->t0 };
			pthread_mutex_unlock(&j->mu);
			nx_progress_emit(j->c->progress, &ev);
			pthread_mutex_lock(&j->mu);
		}
	}
	pthread_mutex_unlock(&j->mu);
	pthread_join(j->thread, NULL);
	j->threaded = false;
}

int nx_onchip_finish(struct nx_onchip_job *j, struct nx_duck *d, const char *profile_dir,
		     struct nx_err *err)
{
	struct nx_ingest_ctx *c;
	uint64_t rows, urows[NX_USAGE_NMEM];
	double t0;
	int rc;

	if (!j)
		return 0;
	c = j->c;
	atomic_store(&j->handoff, true);
	/* the ingest's thread now waits for the pass, which must not wait for idle time to
	 * see the handover: on a loaded machine an idle-priority thread runs for a slice
	 * now and then, and the ingest slept meanwhile (docs/memory.md) */
	if (j->threaded) {
		struct sched_param normal = { 0 };
		(void)pthread_setschedparam(j->thread, SCHED_OTHER, &normal);
	}
	onchip_wait(j);
	rc = j->rc;
	if (rc && err)
		*err = j->err;
	if (!rc && !j->prepared) {
		/* keep_staging, or a pass that had not started: the whole pass, here */
		char path[4096];
		j->t0 = nx_now_s();
		rc = onchip_prepare(j, err);
		snprintf(path, sizeof(path), "%s/nx_OnchipAlloc.parquet", j->staging_dir);
		if (!rc && c->keep_staging)
			rc = nx_ctx_copy(c, d, &j->src, path, NULL, "staging", &rows, err);
		else if (!rc)
			rc = nx_duck_drain_source(&j->src, &rows, err);
		j->seconds = nx_now_s() - j->t0;
	} else if (!rc && !j->os.done) {
		/* the rest of the pass, here, reporting progress itself */
		j->os.seen = NULL;
		j->os.stop = j->os.handoff = NULL;
		rc = nx_duck_drain_source(&j->src, &rows, err);
		j->seconds = nx_now_s() - j->t0;
	}
	if (!rc && !c->keep_staging) {
		char note[256];
		snprintf(note, sizeof(note), "staging: records read beside the raw stage, no "
			 "table; from its start to its end; %" PRIu64 " usage rows logged, %"
			 PRIu64 " bytes spilled", j->ulog.rows, j->ulog.spilled);
		nx_ctx_table_done(c, "nx_OnchipPass", note, j->os.records, j->seconds);
	}
	if (!rc)
		rc = nx_sbuf_alloc_write(&j->sa, c, d, profile_dir, &rows, err);
	t0 = nx_now_s();
	if (!rc) {
		/* the grid over the raw stage's bounds (first > last: nothing seen) */
		struct nx_onchip_usage usage;
		bool none = c->first_ns > c->last_ns;
		nx_onchip_usage_init(&usage, none ? 0 : c->first_ns, none ? 0 : c->last_ns,
				     (int64_t)c->info->pcore_idx);
		rc = nx_onchip_rows_replay(&j->ulog, &usage, err);
		if (!rc)
			rc = nx_onchip_usage_write(&usage, d, profile_dir, urows, err);
		nx_onchip_usage_release(&usage);
	}
	if (!rc) {
		/* the sampling is a by-product of the occupancy pass: its own time is tiny */
		double dt = (nx_now_s() - t0) / 2;
		nx_ctx_table_done(c, "SbufUsage", "derived in C", urows[NX_USAGE_SBUF], dt);
		nx_ctx_table_done(c, "PsumUsage", "derived in C", urows[NX_USAGE_PSUM], dt);
	}
	onchip_job_free(j);
	return rc;
}

void nx_onchip_abort(struct nx_onchip_job *j)
{
	if (!j)
		return;
	atomic_store(&j->stop, true);
	onchip_wait(j);
	onchip_job_free(j);
}
