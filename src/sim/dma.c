/* SPDX-License-Identifier: MIT
 * dma.c: the 16 DMA engines of a NeuronCore.
 *
 * A triggered block (a transfer) reaches the queues after a fixed latency. Its
 * descriptors are split over the engines by SBUF partition, about 8 partitions per
 * engine (§6.2). On a hardware-DGE queue the descriptors are generated while the
 * trigger runs (~600 ns), one engine's share after the other, so engine e's packets
 * reach its queues (e + 1) / 16 of the way through the trigger plus the latency. Such
 * a transfer waits in a stage, which stands for its 16 arrival events; the packets of
 * all engines are built once, when the first share arrives. Each engine gets one
 * packet per descriptor it takes part in, then a 4-byte semaphore write, so every one
 * of the 16 engines adds 1 to the block's semaphore and a finished transfer has added
 * 16. Each engine keeps one FIFO per NEFF queue and serves its non-empty FIFOs
 * round-robin, one packet at a time; its packet in flight completes at done_ps, and a
 * winner tree over the engines tells the driver which completes first. Packets that
 * touch HBM also reserve time on a shared HBM channel, which caps the sum of all
 * engines at the HBM bandwidth. Instruction fetches are transfers without a block:
 * one packet on the DMA engine of the engine's instruction queue.
 *
 * Static queues (in, out, data) read pre-built descriptors from rings in memory. The
 * engine takes each such descriptor (each run of a packet) in no less than the engine
 * gap, streaming meanwhile, and a queue of the engine starts its descriptors no faster
 * than one per queue gap: a packet occupies its engine for max(streaming time, runs x
 * engine gap) and holds its queue for runs x queue gap. The engine serves its other
 * queues in between; the packet's record lasts until its queue may start again, and
 * the queue's next packet (its semaphore write included) waits until then.
 * Descriptors made at run time (software or hardware DGE) are not held back. */
#include "common/compat.h"
#include "common/xalloc.h"
#include "sim/cost.h"
#include "sim/sim_int.h"

#include <stdlib.h>
#include <string.h>

void nx__sim_dma_init(struct sim *s)
{
	struct sim_dma *d = &s->dma;
	unsigned ne = s->m->hw->dma_engines;

	d->nq = s->neff->nqueues ? (unsigned)s->neff->nqueues : 1;
	d->fifo = nx_xcalloc((size_t)ne * d->nq, sizeof(*d->fifo));
	d->rr = nx_xcalloc(ne, sizeof(*d->rr));
	d->busy = nx_xcalloc(ne, sizeof(*d->busy));
	d->cur = nx_xcalloc(ne, sizeof(*d->cur));
	d->done_ps = nx_xcalloc(ne + 1, sizeof(*d->done_ps));
	d->done_seq = nx_xcalloc(ne + 1, sizeof(*d->done_seq));
	d->wake = nx_xcalloc(ne, sizeof(*d->wake));
	d->ring = nx_xcalloc(d->nq, sizeof(*d->ring));
	d->ring_free = nx_xcalloc((size_t)ne * d->nq, sizeof(*d->ring_free));
	d->ring_gap_ps = nx_cost_dma_ring_gap_ps(s->m, false);
	d->desc_gap_ps = nx_cost_dma_ring_gap_ps(s->m, true);
	for (unsigned q = 0; q < d->nq && q < s->neff->nqueues; q++) {
		int qt = s->neff->queues[q].queue_type;

		d->ring[q] = (d->ring_gap_ps || d->desc_gap_ps) &&
			     (qt == NX_QT_INPUT || qt == NX_QT_OUTPUT || qt == NX_QT_DATA);
	}
	for (d->win_p = 1; d->win_p < ne; d->win_p *= 2)
		;
	d->win = nx_xcalloc(2 * (size_t)d->win_p, sizeof(*d->win));
	d->stage_min = -1;
	for (unsigned i = 0; i < 2 * d->win_p; i++)
		d->win[i] = (int)ne;
	for (unsigned e = 0; e <= ne; e++) {
		d->done_ps[e] = d->done_seq[e] = UINT64_MAX;
		if (e < ne) {
			d->rr[e] = d->nq - 1;
			d->win[d->win_p + e] = (int)e;
		}
	}
}

void nx__sim_dma_release(struct sim *s)
{
	struct sim_dma *d = &s->dma;

	if (d->fifo)
		for (size_t i = 0; i < (size_t)s->m->hw->dma_engines * d->nq; i++)
			free(d->fifo[i].p);
	free(d->fifo);
	free(d->rr);
	free(d->busy);
	free(d->cur);
	free(d->done_ps);
	free(d->done_seq);
	free(d->win);
	free(d->wake);
	free(d->ring);
	free(d->ring_free);
	d->wake = d->ring = NULL;
	d->ring_free = NULL;
	d->done_ps = d->done_seq = NULL;
	d->win = NULL;
	free(d->xfer);
	free(d->scratch);
	for (size_t i = 0; i < d->nstage; i++)
		free(d->stage[i].p);
	free(d->stage);
	d->scratch = NULL;
	d->stage = NULL;
	d->nstage = d->capstage = d->nscratch = d->capscratch = 0;
	d->fifo = NULL;
	d->rr = NULL;
	d->busy = NULL;
	d->cur = NULL;
	d->xfer = NULL;
}

static inline void fifo_push(struct sim_fifo *f, const struct sim_pkt *p)
{
	if (f->head && f->head == f->len) {
		f->head = f->len = 0;
	} else if (f->head > 1024 && f->head * 2 > f->len) {
		for (size_t i = f->head; i < f->len; i++)
			f->p[i - f->head] = f->p[i];
		f->len -= f->head;
		f->head = 0;
	}
	NX_GROW(f->p, f->len + 1, f->cap);
	f->p[f->len++] = *p;
}

static void stage_min(struct sim_dma *d, unsigned ne);

void nx__sim_dma_trigger(struct sim *s, uint32_t block, uint64_t trigger_id)
{
	const struct nx_dma_block *b = &s->neff->blocks[block];
	struct sim_dma *d = &s->dma;
	struct sim_transfer *t;
	int sem = b->semaphore;

	if (sem < 0)
		sem = s->neff->queues[b->queue].semaphore;
	NX_GROW(d->xfer, d->nxfer + 1, d->capxfer);
	t = &d->xfer[d->nxfer];
	t->trigger = trigger_id;
	t->fetch_bytes = 0;
	t->fetch_engine = 0;
	t->block = block;
	t->sem = sem >= 0 && sem < (int)NX_NUM_SEMAPHORES ? sem : -1;
	t->queue = (uint16_t)b->queue;
	t->next_pkt = 0;
	if (s->m->hw_dge_ps && s->neff->queues[b->queue].queue_type == NX_QT_HARDWARE_DYNAMIC) {
		/* The trigger ran for hw_dge_ps and ended now. Engine e's share is an event
		 * due (e + 1) / ne of the way through it, plus the latency; the stage keeps
		 * the ne events (and their seqs, taken now as ne pushes would) itself. */
		unsigned ne = s->m->hw->dma_engines;
		struct sim_stage *st = NULL;

		for (size_t i = 0; i < d->nstage && !st; i++)
			if (!d->stage[i].used)
				st = &d->stage[i];
		if (!st) {
			NX_GROW(d->stage, d->nstage + 1, d->capstage);
			st = &d->stage[d->nstage++];
			memset(st, 0, sizeof(*st));
		}
		st->used = true;
		st->built = false;
		st->transfer = (uint32_t)d->nxfer;
		st->base_ps = s->now - s->m->hw_dge_ps + s->m->dma_latency_ps;
		st->step_ps = s->m->hw_dge_ps;
		st->part = 1;
		st->seq0 = nx_sim_heap_take_seq(&s->heap);
		for (unsigned e = 1; e < ne; e++)
			nx_sim_heap_take_seq(&s->heap);
		stage_min(d, ne);
	} else {
		nx_sim_heap_push(&s->heap, s->now + s->m->dma_latency_ps, EV_DMA_ENQUEUE,
				 (uint32_t)d->nxfer, 0);
	}
	d->nxfer++;
	s->st->dma_transfers++;
}

void nx__sim_dma_fetch(struct sim *s, int engine, size_t first, size_t count)
{
	struct sim_dma *d = &s->dma;
	int q = s->eng[engine].fetch_queue;
	struct sim_transfer *t;

	(void)first;
	NX_GROW(d->xfer, d->nxfer + 1, d->capxfer);
	t = &d->xfer[d->nxfer];
	t->trigger = UINT64_MAX;
	t->fetch_bytes = count * NX_INST_SIZE;
	t->fetch_engine = (unsigned)s->neff->queues[q].engine_idx % s->m->hw->dma_engines;
	t->block = NX_NONE32;
	t->sem = -1;
	t->queue = (uint16_t)q;
	t->next_pkt = 0;
	nx_sim_heap_push(&s->heap, s->now, EV_DMA_ENQUEUE, (uint32_t)d->nxfer, 0);
	d->nxfer++;
}

static int start_next(struct sim *s, unsigned e);

/* Finds the stage whose next share comes first (stage_min, -1 none). */
static void stage_min(struct sim_dma *d, unsigned ne)
{
	int best = -1;
	uint64_t bt = 0, bq = 0;

	for (size_t i = 0; i < d->nstage; i++) {
		const struct sim_stage *st = &d->stage[i];
		uint64_t t, q;

		if (!st->used)
			continue;
		t = st->base_ps + st->part * st->step_ps / ne;
		q = st->seq0 + st->part - 1;
		if (best < 0 || t < bt || (t == bt && q < bq)) {
			best = (int)i;
			bt = t;
			bq = q;
		}
	}
	d->stage_min = best;
	d->stage_ps = bt;
	d->stage_seq = bq;
}

/* Engine e's completion changed: replay its path to the root of the winner tree.
 * Leaves past the last engine hold the dummy engine ne, which never completes. */
static void win_update(struct sim_dma *d, unsigned e)
{
	const uint64_t *t = d->done_ps, *q = d->done_seq;
	int c = (int)e;

	for (unsigned i = d->win_p + e; i > 1; i /= 2) {
		int x = d->win[i ^ 1];

		c = t[x] < t[c] || (t[x] == t[c] && q[x] < q[c]) ? x : c;
		d->win[i / 2] = c;
	}
}

/* Appends the packets of a transfer's block to d->scratch: per descriptor, one packet
 * per engine taking part (engine order), then each engine's 4-byte semaphore write. */
static void build_packets(struct sim *s, uint32_t transfer)
{
	struct sim_dma *d = &s->dma;
	const struct sim_transfer *t = &d->xfer[transfer];
	const struct nx_dma_block *b = &s->neff->blocks[t->block];
	unsigned ne = s->m->hw->dma_engines, ppe = s->m->dma_partitions_per_engine;
	uint64_t rows_e[SIM_MAX_DMA_ENGINES];

	d->nscratch = 0;
	for (size_t k = 0; k < b->ndesc; k++) {
		const struct nx_dma_desc *dd = &b->desc[k];
		struct nx_dma_geom g;
		uint64_t left;

		nx_cost_dma_geom(dd, &g);
		if (!g.rows)
			continue;
		for (unsigned e = 0; e < ne; e++)
			rows_e[e] = 0;
		if (g.partitions) {
			/* partition p takes per rows, one more while p - first < extra; runs of
			 * ppe consecutive partitions share an engine */
			uint64_t per = g.rows / g.partitions, extra = g.rows % g.partitions;
			unsigned p0 = g.first_partition, pend = p0 + g.partitions;

			for (unsigned c = p0; c < pend;) {
				unsigned ce = (c / ppe + 1) * ppe, lo = c - p0, hi;

				if (ce > pend)
					ce = pend;
				hi = ce - p0;
				rows_e[(c / ppe) % ne] += per * (hi - lo) +
					(extra > lo ? (extra < hi ? extra : hi) - lo : 0);
				c = ce;
			}
		} else {
			for (unsigned e = 0; e < ne; e++)
				rows_e[e] = g.rows / ne + (e < g.rows % ne);
		}
		left = dd->bytes ? dd->bytes : g.rows * g.row_bytes;
		NX_GROW(d->scratch, d->nscratch + ne, d->capscratch);
		for (unsigned e = 0; e < ne; e++) {
			struct sim_pkt p = { transfer, (uint32_t)k, rows_e[e], g.row_bytes, 0,
					     g.hbm, dd->transpose, (uint8_t)e };

			if (!rows_e[e])
				continue;
			p.bytes = rows_e[e] * g.row_bytes;
			if (p.bytes > left)
				p.bytes = left;
			left -= p.bytes;
			/* rows of consecutive partitions that are contiguous in HBM: one run */
			if (g.hbm_run > g.row_bytes && p.bytes) {
				uint64_t run = g.hbm_run < p.bytes ? g.hbm_run : p.bytes;

				p.rows = (p.bytes + run - 1) / run;
				p.row_bytes = (p.bytes + p.rows - 1) / p.rows;
			}
			d->scratch[d->nscratch++] = p;
		}
	}
	if (t->sem >= 0) {
		NX_GROW(d->scratch, d->nscratch + ne, d->capscratch);
		for (unsigned e = 0; e < ne; e++) {
			struct sim_pkt p = { transfer, NX_NONE32, 1, 4, 4, false, false,
					     (uint8_t)e };

			d->scratch[d->nscratch++] = p;
		}
	}
}

/* Groups the packets of stage st's transfer by engine (a counting sort of
 * d->scratch): off[e] is where engine e's packets begin. */
static void stage_build(struct sim *s, struct sim_stage *st)
{
	struct sim_dma *d = &s->dma;
	unsigned ne = s->m->hw->dma_engines;
	uint32_t *off = st->off, pos[SIM_MAX_DMA_ENGINES];

	build_packets(s, st->transfer);
	NX_GROW(st->p, d->nscratch, st->cap);
	for (unsigned e = 0; e <= ne; e++)
		off[e] = 0;
	for (size_t i = 0; i < d->nscratch; i++)
		off[d->scratch[i].engine + 1]++;
	for (unsigned e = 0; e < ne; e++) {
		off[e + 1] += off[e];
		pos[e] = off[e];
	}
	for (size_t i = 0; i < d->nscratch; i++)
		st->p[pos[d->scratch[i].engine]++] = d->scratch[i];
	st->built = true;
}

int nx__sim_dma_enqueue(struct sim *s, uint32_t transfer, unsigned part)
{
	struct sim_dma *d = &s->dma;
	const struct sim_transfer *t = &d->xfer[transfer];
	unsigned ne = s->m->hw->dma_engines, e;
	struct sim_stage *st;
	int rc;

	if (t->block == NX_NONE32) {
		struct sim_pkt p = { transfer, 0, 1, t->fetch_bytes, t->fetch_bytes, true, false,
				     (uint8_t)t->fetch_engine };

		fifo_push(&d->fifo[(size_t)t->fetch_engine * d->nq + t->queue], &p);
		return d->busy[t->fetch_engine] ? 0 : start_next(s, t->fetch_engine);
	}
	if (!part) {
		build_packets(s, transfer);
		for (size_t i = 0; i < d->nscratch; i++)
			fifo_push(&d->fifo[(size_t)d->scratch[i].engine * d->nq + t->queue],
				  &d->scratch[i]);
		for (e = 0; e < ne; e++)
			if (!d->busy[e] && (rc = start_next(s, e)))
				return rc;
		return 0;
	}
	/* part e + 1 of a hardware-DGE transfer: engine e's share, from the stage that
	 * nx__sim_dma_next_stage returned */
	e = part - 1;
	st = &d->stage[d->stage_min];
	if (!st->used || st->transfer != transfer || st->part != part)
		return nx_errf(s->err, NX_ESIM, "internal error: DMA transfer %u part %u is not "
			       "staged", transfer, part);
	if (!st->built)
		stage_build(s, st);
	for (uint32_t i = st->off[e]; i < st->off[e + 1]; i++)
		fifo_push(&d->fifo[(size_t)e * d->nq + t->queue], &st->p[i]);
	if (++st->part > ne)
		st->used = false;
	stage_min(d, ne);
	return d->busy[e] ? 0 : start_next(s, e);
}

static int start_next(struct sim *s, unsigned e)
{
	struct sim_dma *d = &s->dma;
	struct sim_pkt *p = NULL;
	struct sim_transfer *t;
	struct sim_fifo *fifos = &d->fifo[(size_t)e * d->nq];
	uint64_t *ring_free = &d->ring_free[(size_t)e * d->nq];
	uint64_t dur, end, rec_end, held = UINT64_MAX;
	unsigned q = d->rr[e];

	d->wake[e] = false;
	for (unsigned k = 1; k <= d->nq; k++) {
		struct sim_fifo *f;

		if (++q == d->nq)
			q = 0;
		f = &fifos[q];
		if (f->head >= f->len)
			continue;
		/* a ring queue holds its next packet back while its window is full */
		if (d->ring[q] && ring_free[q] > s->now) {
			if (ring_free[q] < held)
				held = ring_free[q];
			continue;
		}
		p = &f->p[f->head++];
		break;
	}
	if (!p) {
		if (held != UINT64_MAX) {  /* idle until a held-back queue may start */
			if (d->done_ps[e] != held) {
				d->done_ps[e] = held;
				d->done_seq[e] = nx_sim_heap_take_seq(&s->heap);
				win_update(d, e);
			}
			d->wake[e] = true;
		} else if (d->done_ps[e] != UINT64_MAX) {  /* the engine goes idle */
			d->done_ps[e] = UINT64_MAX;
			win_update(d, e);
		}
		return 0;
	}
	d->rr[e] = q;
	d->cur[e] = *p;
	p = &d->cur[e];
	t = &d->xfer[p->transfer];
	dur = nx_cost_dma_packet_ps(s->m, p->rows, p->row_bytes, p->transpose);
	end = s->now + dur;
	if (p->hbm) {
		uint64_t hs = d->hbm_free_ps > s->now ? d->hbm_free_ps : s->now;

		d->hbm_free_ps = hs + p->bytes * s->m->hbm_fs_per_byte / 1000;
		if (d->hbm_free_ps > end)
			end = d->hbm_free_ps;
	}
	/* a ring packet occupies its engine for at least its descriptors' intake, and
	 * they stay in flight (its record lasts) until the queue may start the next */
	rec_end = end;
	if (d->ring[q] && p->desc != NX_NONE32) {
		uint64_t in = s->now + p->rows * d->desc_gap_ps;

		if (in > end)
			end = in;
		ring_free[q] = s->now + p->rows * d->ring_gap_ps;
		rec_end = ring_free[q] > end ? ring_free[q] : end;
		if (rec_end > s->end_ps)
			s->end_ps = rec_end;
	}
	d->busy[e] = true;
	s->st->dma_packets++;
	if (s->opts->dma_packets && s->recording) {
		struct nx_rec rec;
		uint64_t id = s->next_dma_id++;
		int rc;

		rec.kind = NX_REC_DMA;
		rec.u.dma = (struct nx_rec_dma){
			.id = id,
			.transfer = p->transfer,
			.trigger = t->trigger,
			.start = nx__sim_ticks(s->now),
			.end = nx__sim_ticks(rec_end),
			.block = t->block,
			.desc = p->desc,
			.packet_idx = t->next_pkt,
			.bytes = (uint32_t)p->bytes,
			.queue = t->queue,
			.crc = (uint16_t)((id * 2654435761u) >> 11),
			.dma_engine = (uint8_t)e,
		};
		if ((rc = nx__sim_emit(s, &rec)))
			return rc;
	}
	t->next_pkt++;
	d->done_ps[e] = end;
	d->done_seq[e] = nx_sim_heap_take_seq(&s->heap);
	win_update(d, e);
	return 0;
}

int nx__sim_dma_done(struct sim *s, unsigned e)
{
	struct sim_dma *d = &s->dma;
	const struct sim_pkt *p = &d->cur[e];  /* until start_next replaces it */
	int rc;

	if (d->wake[e])  /* no packet ended: a held-back queue may start now */
		return start_next(s, e);
	d->busy[e] = false;
	if (s->now > s->end_ps)
		s->end_ps = s->now;
	if (p->desc == NX_NONE32) {
		const struct sim_transfer *t = &d->xfer[p->transfer];

		rc = nx__sim_sem_update(s, (unsigned)t->sem, NX_SEM_INC, 1, NX_SEMSRC_AXI);
		if (rc)
			return rc;
	}
	return start_next(s, e);
}
