/* SPDX-License-Identifier: MIT
 * dma.c: the 16 DMA engines of a NeuronCore.
 *
 * A triggered block (a transfer) reaches the queues after a fixed latency. Its
 * descriptors are split over the engines by SBUF partition, about 8 partitions per
 * engine (§6.2). On a hardware-DGE queue the descriptors are generated while the
 * trigger runs (~600 ns), one engine's share after the other, so engine e's packets
 * reach its queues (e + 1) / 16 of the way through the trigger plus the latency; the
 * packets of all engines are built once, when the first engine's share arrives, and
 * wait in a stage until their engine's turn. Each engine gets one packet per
 * descriptor it takes part in, then a
 * 4-byte semaphore write, so every one of the 16 engines adds 1 to the block's
 * semaphore and a finished transfer has added 16. Each engine keeps one FIFO per NEFF
 * queue and serves its non-empty FIFOs round-robin, one packet at a time. Packets
 * that touch HBM also reserve time on a shared HBM channel, which caps the sum of all
 * engines at the HBM bandwidth. Instruction fetches are transfers without a block:
 * one packet on the DMA engine of the engine's instruction queue. */
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
	for (unsigned e = 0; e < ne; e++)
		d->rr[e] = d->nq - 1;
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

static void fifo_push(struct sim_fifo *f, const struct sim_pkt *p)
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
		/* the trigger ran for hw_dge_ps and ended now */
		unsigned ne = s->m->hw->dma_engines;
		uint64_t t0 = s->now - s->m->hw_dge_ps + s->m->dma_latency_ps;

		for (unsigned e = 0; e < ne; e++)
			nx_sim_heap_push(&s->heap, t0 + (e + 1) * s->m->hw_dge_ps / ne,
					 EV_DMA_ENQUEUE, (uint32_t)d->nxfer, e + 1);
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
			uint64_t per = g.rows / g.partitions, extra = g.rows % g.partitions;

			for (unsigned p = 0; p < g.partitions; p++)
				rows_e[((g.first_partition + p) / ppe) % ne] += per + (p < extra);
		} else {
			for (unsigned e = 0; e < ne; e++)
				rows_e[e] = g.rows / ne + (e < g.rows % ne);
		}
		left = dd->bytes ? dd->bytes : g.rows * g.row_bytes;
		for (unsigned e = 0; e < ne; e++) {
			struct sim_pkt p = { transfer, (uint32_t)k, rows_e[e], g.row_bytes, 0, g.hbm,
					     dd->transpose, (uint8_t)e };

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
			NX_GROW(d->scratch, d->nscratch + 1, d->capscratch);
			d->scratch[d->nscratch++] = p;
		}
	}
	if (t->sem >= 0) {
		for (unsigned e = 0; e < ne; e++) {
			struct sim_pkt p = { transfer, NX_NONE32, 1, 4, 4, false, false, (uint8_t)e };

			NX_GROW(d->scratch, d->nscratch + 1, d->capscratch);
			d->scratch[d->nscratch++] = p;
		}
	}
}

/* The stage of a hardware-DGE transfer: its packets grouped by engine, built when the
 * first engine's share arrives (part 1) and released after the last. */
static struct sim_stage *stage_of(struct sim *s, uint32_t transfer, unsigned part)
{
	struct sim_dma *d = &s->dma;
	unsigned ne = s->m->hw->dma_engines;
	struct sim_stage *st = NULL;
	uint32_t cnt[SIM_MAX_DMA_ENGINES + 1] = { 0 };

	for (size_t i = 0; i < d->nstage; i++) {
		if (d->stage[i].used && d->stage[i].transfer == transfer)
			return &d->stage[i];
		if (!d->stage[i].used && !st)
			st = &d->stage[i];
	}
	if (part != 1)
		return NULL;
	if (!st) {
		NX_GROW(d->stage, d->nstage + 1, d->capstage);
		st = &d->stage[d->nstage++];
		memset(st, 0, sizeof(*st));
	}
	st->used = true;
	st->transfer = transfer;
	build_packets(s, transfer);
	NX_GROW(st->p, d->nscratch, st->cap);
	for (size_t i = 0; i < d->nscratch; i++)
		cnt[d->scratch[i].engine + 1]++;
	for (unsigned e = 0; e < ne; e++)
		cnt[e + 1] += cnt[e];
	memcpy(st->off, cnt, sizeof(st->off));
	for (size_t i = 0; i < d->nscratch; i++)
		st->p[cnt[d->scratch[i].engine]++] = d->scratch[i];
	return st;
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
	/* part e + 1 of a hardware-DGE transfer: engine e's share */
	e = part - 1;
	st = stage_of(s, transfer, part);
	if (!st)
		return nx_errf(s->err, NX_ESIM, "internal error: DMA transfer %u has no stage",
			       transfer);
	for (uint32_t i = st->off[e]; i < st->off[e + 1]; i++)
		fifo_push(&d->fifo[(size_t)e * d->nq + t->queue], &st->p[i]);
	if (part == ne)
		st->used = false;
	return d->busy[e] ? 0 : start_next(s, e);
}

static int start_next(struct sim *s, unsigned e)
{
	struct sim_dma *d = &s->dma;
	struct sim_pkt *p = NULL;
	struct sim_transfer *t;
	uint64_t dur, end;
	unsigned q = d->rr[e];

	for (unsigned k = 1; k <= d->nq; k++) {
		struct sim_fifo *f;

		q = (d->rr[e] + k) % d->nq;
		f = &d->fifo[(size_t)e * d->nq + q];
		if (f->head < f->len) {
			p = &f->p[f->head++];
			break;
		}
	}
	if (!p)
		return 0;
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
	d->busy[e] = true;
	s->st->dma_packets++;
	if (s->opts->dma_packets) {
		struct nx_rec rec = { .kind = NX_REC_DMA };
		uint64_t id = s->next_dma_id++;
		int rc;

		rec.u.dma.id = id;
		rec.u.dma.transfer = p->transfer;
		rec.u.dma.trigger = t->trigger;
		rec.u.dma.start = nx__sim_ticks(s->now);
		rec.u.dma.end = nx__sim_ticks(end);
		rec.u.dma.block = t->block;
		rec.u.dma.desc = p->desc;
		rec.u.dma.packet_idx = t->next_pkt;
		rec.u.dma.bytes = (uint32_t)p->bytes;
		rec.u.dma.queue = t->queue;
		rec.u.dma.crc = (uint16_t)((id * 2654435761u) >> 11);
		rec.u.dma.dma_engine = (uint8_t)e;
		if ((rc = nx__sim_emit(s, &rec)))
			return rc;
	}
	t->next_pkt++;
	nx_sim_heap_push(&s->heap, end, EV_DMA_DONE, e, 0);
	return 0;
}

int nx__sim_dma_done(struct sim *s, unsigned e)
{
	struct sim_dma *d = &s->dma;
	struct sim_pkt p = d->cur[e];
	int rc;

	d->busy[e] = false;
	if (s->now > s->end_ps)
		s->end_ps = s->now;
	if (p.desc == NX_NONE32) {
		const struct sim_transfer *t = &d->xfer[p.transfer];

		rc = nx__sim_sem_update(s, (unsigned)t->sem, NX_SEM_INC, 1, NX_SEMSRC_AXI);
		if (rc)
			return rc;
	}
	return start_next(s, e);
}
