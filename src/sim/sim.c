/* SPDX-License-Identifier: MIT
 * sim.c: the simulator's driver. Pops events in (time, seq) order and runs the five
 * in-order compute engines: each issues its next instruction once the previous one
 * allows it (Tensor lets LDWEIGHTS start under the previous MATMUL) and its semaphore
 * wait holds (on trn1, a VectorE read of bytes a DMA wrote last dve_landed_ps after:
 * landed.c), emits the INST record at issue, and applies the instruction's semaphore
 * update, DMA trigger or notification when it completes. Engines meet only through
 * semaphores. When no event is left while an engine still waits, the program is
 * deadlocked and the error names the waiting instructions. */
#include "common/compat.h"
#include "common/xalloc.h"
#include "sim/cost.h"
#include "sim/sim_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int issue(struct sim *s, int e);
static int start(struct sim *s, int e);

/* Instruction fetch: streams are read in chunks of 64 instructions (8 KiB), kept two
 * chunks ahead of execution, so fetches add DMA traffic but never stall an engine. */
enum { FETCH_CHUNK = 64, FETCH_AHEAD = 2 };

static void fetch(struct sim *s, int e, size_t chunk)
{
	size_t first = chunk * FETCH_CHUNK, n = s->neff->ninst[e];

	if (first < n)
		nx__sim_dma_fetch(s, e, first, n - first < FETCH_CHUNK ? n - first : FETCH_CHUNK);
}

/* The first instruction-type queue owned by engine e, or -1. */
static int fetch_queue(const struct nx_neff *neff, int e)
{
	for (size_t q = 0; q < neff->nqueues && q < UINT16_MAX; q++)
		if (neff->queues[q].queue_type == NX_QT_INSTRUCTION && neff->queues[q].owner == e)
			return (int)q;
	return -1;
}

int nx__sim_wake(struct sim *s, unsigned sem)
{
	unsigned waiting = s->waiters[sem];

	/* engines in order; starting one blocks or wakes no other */
	for (int e = 0; waiting; e++, waiting >>= 1) {
		struct sim_engine *g = &s->eng[e];
		int rc;

		if (!(waiting & 1) || !nx__sim_sem_ready(s, &s->neff->inst[e][g->pc]))
			continue;
		g->blocked = false;
		s->waiters[sem] &= (uint8_t)~(1u << e);
		if ((rc = start(s, e)))
			return rc;
	}
	return 0;
}

/* Engine e waits until its next instruction's semaphore holds (nx__sim_wake). */
static void block(struct sim *s, int e, const struct nx_inst *in)
{
	s->eng[e].blocked = true;
	s->waiters[in->wait_sem] |= (uint8_t)(1u << e);
}

/* When the instruction after `in` (issued at start, ending at end) may issue. */
static uint64_t next_ready(struct sim *s, int e, const struct nx_inst *in, uint64_t start,
			   uint64_t end)
{
	struct sim_engine *g = &s->eng[e];
	const struct nx_inst *next;

	if (e != NX_ENGINE_TENSOR || g->pc >= s->neff->ninst[e])
		return end;
	next = &s->neff->inst[e][g->pc];
	if (in->opcode == NX_OP_MATMUL && next->opcode == NX_OP_LDWEIGHTS)
		return start > g->lw_end_ps ? start : g->lw_end_ps;
	return end > g->mm_free_ps ? end : g->mm_free_ps;
}

static void progress(struct sim *s)
{
	if (!s->opts->progress || s->st->insts < s->next_progress)
		return;
	s->next_progress = s->st->insts + 65536;
	s->opts->progress(s->opts->progress_arg, s->st->insts, s->insts_total,
			  nx__sim_ticks(s->now));
}

static int issue(struct sim *s, int e)
{
	struct sim_engine *g = &s->eng[e];
	size_t pc = g->pc;
	const struct nx_inst *in = &s->neff->inst[e][pc];
	uint64_t start = s->now, dur, end, ready_at;
	int rc;

	if (in->opcode == NX_OP_MATMUL)
		dur = nx_cycles_ps(nx_cost_matmul_cycles(s->m, in, g->lw_cols), s->m->hw->te_mhz);
	else
		dur = nx_cost_inst_ps(s->m, in, in->wait_cond != NX_WAIT_NONE &&
				      s->sem_src[in->wait_sem] == NX_SEMSRC_ENGINE0 + e);
	/* a hardware-DGE trigger generates its descriptors on the issuing engine */
	if (in->opcode == NX_OP_DMA_TRIGGER && s->m->hw_dge_ps &&
	    s->neff->queues[s->neff->blocks[in->dma_block].queue].queue_type ==
	    NX_QT_HARDWARE_DYNAMIC)
		dur = s->m->hw_dge_ps;
	if (s->m->dve_landed_ps && e != NX_ENGINE_TENSOR)
		nx__sim_landed_write(s, in);
	if (e == NX_ENGINE_TENSOR && s->m->throttle && (rc = nx__sim_throttle(s, in, start, &dur)))
		return rc;
	end = start + dur;
	g->inst_ids[pc] = s->next_inst_id++;
	if (s->recording) {
		struct nx_rec rec;

		rec.kind = NX_REC_INST;
		rec.u.inst = (struct nx_rec_inst){
			.id = g->inst_ids[pc],
			.start = nx__sim_ticks(start),
			.end = nx__sim_ticks(end),
			.wait_ticks = nx__sim_ticks(start) - nx__sim_ticks(g->ready_ps),
			.index = (uint32_t)pc,
			.exec = s->opts->exec_index,
			.engine = (uint8_t)e,
		};
		if ((rc = nx__sim_emit(s, &rec)))
			return rc;
	}
	s->st->insts++;
	progress(s);
	if (g->fetch_queue >= 0 && pc % FETCH_CHUNK == 0)
		fetch(s, e, pc / FETCH_CHUNK + FETCH_AHEAD);
	if (in->opcode == NX_OP_MATMUL)
		g->mm_free_ps = end;
	if (in->opcode == NX_OP_LDWEIGHTS) {
		g->lw_end_ps = end;
		g->lw_cols = nx_ap_free_elems(&in->src0);
	}
	if (end > g->busy_end_ps)
		g->busy_end_ps = end;
	g->pc++;
	ready_at = next_ready(s, e, in, start, end);
	/* Completion matters only for a trigger, a notification or a semaphore update;
	 * otherwise it just extends the run. When the engine is ready again at the same
	 * time, one event does both: pushed back to back, the two would pop back to back.
	 * Either way every other event keeps its order. */
	if (in->opcode == NX_OP_DMA_TRIGGER || in->opcode == NX_OP_NOTIFY ||
	    in->sig_op != NX_SEM_NONE) {
		if (ready_at == end) {
			nx_sim_heap_push(&s->heap, end, EV_DONE_READY, (uint32_t)e, pc);
			return 0;
		}
		nx_sim_heap_push(&s->heap, end, EV_DONE, (uint32_t)e, pc);
	} else if (end > s->end_ps) {
		s->end_ps = end;
	}
	nx_sim_heap_push(&s->heap, ready_at, EV_READY, (uint32_t)e, 0);
	return 0;
}

static int ready(struct sim *s, int e)
{
	struct sim_engine *g = &s->eng[e];
	const struct nx_inst *in;

	g->ready_ps = s->now;
	if (g->pc >= s->neff->ninst[e]) {
		g->done = true;
		return 0;
	}
	in = &s->neff->inst[e][g->pc];
	if (!nx__sim_sem_ready(s, in)) {
		block(s, e, in);
		return 0;
	}
	return start(s, e);
}

/* Issues instruction pc of engine e, whose wait holds, unless it is a VectorE
 * instruction reading SBUF bytes a DMA wrote last (trn1, landed.c): that one issues
 * dve_landed_ps later (EV_STALLED), the time counted as its wait. */
static int start(struct sim *s, int e)
{
	struct sim_engine *g = &s->eng[e];

	if (s->m->dve_landed_ps && e == NX_ENGINE_VECTOR && g->stalled != g->pc + 1 &&
	    nx__sim_landed_read(s, &s->neff->inst[e][g->pc])) {
		g->stalled = g->pc + 1;
		nx_sim_heap_push(&s->heap, s->now + s->m->dve_landed_ps, EV_STALLED,
				 (uint32_t)e, 0);
		return 0;
	}
	return issue(s, e);
}

/* The stall of start() is over: issue, or block if the wait no longer holds. */
static int stalled(struct sim *s, int e)
{
	const struct nx_inst *in = &s->neff->inst[e][s->eng[e].pc];

	if (!nx__sim_sem_ready(s, in)) {
		block(s, e, in);
		return 0;
	}
	return issue(s, e);
}

static int notify(struct sim *s, int e, size_t pc, const struct nx_inst *in)
{
	struct nx_rec rec = { .kind = NX_REC_ERROR };

	rec.u.error.ts = nx__sim_ticks(s->now);
	rec.u.error.type = NX_ERRT_NOTIFICATION;
	rec.u.error.type_id = (int32_t)in->sig_value;
	snprintf(rec.u.error.description, sizeof(rec.u.error.description), "Custom Notification");
	snprintf(rec.u.error.metadata, sizeof(rec.u.error.metadata),
		 "engine=%s index=%zu value=%g", nx_engine_name(e), pc, (double)in->imm);
	return nx__sim_emit(s, &rec);
}

static int done(struct sim *s, int e, size_t pc)
{
	const struct nx_inst *in = &s->neff->inst[e][pc];
	int rc;

	if (s->now > s->end_ps)
		s->end_ps = s->now;
	if (in->opcode == NX_OP_DMA_TRIGGER) {
		if (s->m->dve_landed_ps)
			nx__sim_landed_block(s, in->dma_block);
		nx__sim_dma_trigger(s, in->dma_block, s->eng[e].inst_ids[pc]);
	}
	if (in->opcode == NX_OP_NOTIFY && (rc = notify(s, e, pc, in)))
		return rc;
	if (in->sig_op != NX_SEM_NONE)
		nx_sim_heap_push(&s->heap, s->now + s->m->sem_latency_ps, EV_SEM, (uint32_t)e, pc);
	return 0;
}

/* The semaphore update of instruction pc of engine e reaches the semaphore. */
static int sem_land(struct sim *s, int e, size_t pc)
{
	const struct nx_inst *in = &s->neff->inst[e][pc];

	if (s->now > s->end_ps)
		s->end_ps = s->now;
	return nx__sim_sem_update(s, in->sig_sem, in->sig_op, (int32_t)in->sig_value,
				  NX_SEMSRC_ENGINE0 + e);
}

static int deadlock(struct sim *s)
{
	char desc[512];
	struct nx_strbuf sb = NX_STRBUF_INIT;
	int n = 0;

	nx_strbuf_addstr(&sb, "deadlock: no engine can run and no DMA is in flight");
	for (int e = 0; e < NX_ENGINE_COUNT; e++) {
		const struct sim_engine *g = &s->eng[e];
		const struct nx_inst *in;

		if (!g->blocked)
			continue;
		in = &s->neff->inst[e][g->pc];
		nx_sim_describe_inst(s->neff, e, g->pc, desc, sizeof(desc));
		nx_strbuf_addf(&sb, "%s %s waits for S[%u] %s %u but S[%u] is %d", n ? ";" : ":",
			       desc, in->wait_sem, in->wait_cond == NX_WAIT_EQ ? "==" : ">=",
			       in->wait_value, in->wait_sem, s->sem[in->wait_sem]);
		n++;
	}
	nx_errf(s->err, NX_ESIM, "%s (at %" PRIu64 " ns)", nx_strbuf_str(&sb),
		nx__sim_ticks(s->now));
	nx_strbuf_release(&sb);
	return NX_ESIM;
}

static int exec_rec(struct sim *s, bool stop)
{
	struct nx_rec rec = { .kind = NX_REC_EXEC };

	rec.u.exec.ts = nx__sim_ticks(s->now);
	rec.u.exec.index = s->opts->exec_index;
	rec.u.exec.stop = stop;
	return nx__sim_emit(s, &rec);
}

/* The next event in (time, seq) order: the heap's earliest, the first DMA packet
 * completion or the first staged hardware-DGE share (those two are kept outside the
 * heap, with seqs taken as if pushed). Returns false when there is none. */
static bool next_event(struct sim *s, struct nx_sim_event *ev)
{
	const struct nx_sim_event *top = nx_sim_heap_top(&s->heap);
	struct nx_sim_event best = { 0 };
	uint64_t t, q;
	uint32_t xfer;
	unsigned part;
	int e = nx__sim_dma_next(s, &t, &q);
	bool any = false;

	if (e >= 0) {
		best = (struct nx_sim_event){ t, q, EV_DMA_DONE, (uint32_t)e, 0 };
		any = true;
	}
	if (nx__sim_dma_next_stage(s, &t, &q, &xfer, &part) &&
	    (!any || t < best.time || (t == best.time && q < best.seq))) {
		best = (struct nx_sim_event){ t, q, EV_DMA_ENQUEUE, xfer, part };
		any = true;
	}
	if (any && (!top || best.time < top->time ||
		    (best.time == top->time && best.seq < top->seq))) {
		*ev = best;
		return true;
	}
	return nx_sim_heap_pop(&s->heap, ev);
}

static int loop(struct sim *s)
{
	struct nx_sim_event ev;
	int rc = 0;

	while (!rc && next_event(s, &ev)) {
		s->now = ev.time;
		switch (ev.kind) {
		case EV_READY:
			rc = ready(s, (int)ev.a);
			break;
		case EV_DONE:
			rc = done(s, (int)ev.a, (size_t)ev.b);
			break;
		case EV_DONE_READY:
			if (!(rc = done(s, (int)ev.a, (size_t)ev.b)))
				rc = ready(s, (int)ev.a);
			break;
		case EV_DMA_ENQUEUE:
			rc = nx__sim_dma_enqueue(s, ev.a, (unsigned)ev.b);
			break;
		case EV_DMA_DONE:
			rc = nx__sim_dma_done(s, ev.a);
			break;
		case EV_SEM:
			rc = sem_land(s, (int)ev.a, (size_t)ev.b);
			break;
		case EV_STALLED:
			rc = stalled(s, (int)ev.a);
			break;
		default:
			rc = nx_errf(s->err, NX_ESIM, "internal error: event kind %u", ev.kind);
		}
	}
	return rc;
}

int nx_sim_run(const struct nx_neff *neff, const struct nx_sim_opts *opts,
	       const struct nx_sim_sink *sink, struct nx_sim_stats *stats, struct nx_err *err)
{
	struct nx_sim_stats dummy;
	struct sim s;
	int rc;

	memset(&s, 0, sizeof(s));
	memset(s.sem_src, SIM_SEMSRC_NONE, sizeof(s.sem_src));
	if (!stats)
		stats = &dummy;
	memset(stats, 0, sizeof(*stats));
	s.m = nx_machine_get(opts->target);
	if (!s.m)
		return nx_errf(err, NX_EUSAGE, "unknown target '%s' (expected trn2 or trn1)",
			       opts->target);
	if ((rc = nx_sim_validate(neff, opts->target, err)))
		return rc;
	s.neff = neff;
	s.opts = opts;
	s.sink = sink;
	s.recording = sink && sink->record;
	s.st = stats;
	s.err = err;
	nx_sim_heap_init(&s.heap);
	nx__sim_dma_init(&s);
	for (int e = 0; e < NX_ENGINE_COUNT; e++) {
		s.eng[e].inst_ids = nx_xcalloc(neff->ninst[e] + 1, sizeof(uint64_t));
		s.eng[e].fetch_queue = fetch_queue(neff, e);
		s.insts_total += neff->ninst[e];
		for (size_t c = 0; s.eng[e].fetch_queue >= 0 && c < FETCH_AHEAD; c++)
			fetch(&s, e, c);
		nx_sim_heap_push(&s.heap, 0, EV_READY, (uint32_t)e, 0);
	}
	if ((rc = exec_rec(&s, false)))
		goto out;
	if ((rc = loop(&s)))
		goto out;
	for (int e = 0; e < NX_ENGINE_COUNT; e++) {
		if (s.eng[e].blocked) {
			rc = deadlock(&s);
			goto out;
		}
	}
	s.now = s.end_ps;
	if ((rc = nx__sim_throttle_finish(&s)) || (rc = exec_rec(&s, true)))
		goto out;
	stats->end_ns = nx__sim_ticks(s.end_ps);
out:
	for (int e = 0; e < NX_ENGINE_COUNT; e++)
		free(s.eng[e].inst_ids);
	nx__sim_dma_release(&s);
	nx_sim_heap_release(&s.heap);
	return rc;
}
