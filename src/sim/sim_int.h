/* SPDX-License-Identifier: MIT
 * sim_int.h: state shared by the simulator's files (sim.c drives, semaphores.c,
 * dma.c, throttle.c and emit.c model one part each). Not a public interface. */
#ifndef NX_SIM_SIM_INT_H
#define NX_SIM_SIM_INT_H

#include "common/compat.h"
#include "sim/heap.h"
#include "sim/machine.h"
#include "sim/sim.h"

enum sim_ev {
	EV_READY = 1,       /* a = engine: try to issue the next instruction */
	EV_DONE = 2,        /* a = engine, b = (index << 32) | nothing: instruction completed */
	EV_DMA_ENQUEUE = 3, /* a = transfer, b = part: its packets reach the DMA queues */
	EV_DMA_DONE = 4,    /* a = DMA engine: its current packet finished (kept per engine in
			     * sim_dma.done_ps/done_seq, not in the heap) */
	EV_SEM = 5,         /* a = engine, b = index: the instruction's semaphore update lands */
	EV_DONE_READY = 6,  /* EV_DONE, then EV_READY for the same engine */
	EV_STALLED = 7,     /* a = engine: its VectorE read of DMA-written bytes may issue */
};

#define SIM_SEMSRC_NONE 0xff   /* a semaphore nothing has updated yet */
#define SIM_LANDED_WORDS 64    /* landed.c: 4,096 granules of 64 bytes, 256 KiB a partition */

struct sim_engine {
	size_t pc;              /* next instruction */
	bool blocked;           /* waiting on a semaphore */
	bool done;
	uint64_t ready_ps;      /* when instruction pc could have issued but for its wait */
	uint64_t mm_free_ps;    /* Tensor: moving array free */
	uint64_t lw_end_ps;     /* Tensor: last LDWEIGHTS done */
	uint64_t lw_cols;       /* Tensor: stationary columns of the last LDWEIGHTS (0 none) */
	uint64_t busy_end_ps;   /* latest end of an issued instruction */
	uint64_t *inst_ids;     /* record id of each issued instruction (for DONE/DMA) */
	int fetch_queue;        /* instruction queue this engine fetches through, -1 none */
	size_t stalled;         /* pc + 1 of the instruction whose landed.c stall is taken */
};

struct sim_pkt {
	uint32_t transfer;
	uint32_t desc;          /* NX_NONE32 for the 4-byte semaphore write */
	uint64_t rows, row_bytes, bytes;
	bool hbm, transpose;
	uint8_t engine;         /* DMA engine */
};

#define SIM_MAX_DMA_ENGINES 64

/* A hardware-DGE transfer whose shares reach the engines one by one: share `part`
 * (engine part - 1) is due at base_ps + part * step_ps / engines with seq
 * seq0 + part - 1. Once built, p[off[e] .. off[e + 1]) are engine e's packets. */
struct sim_stage {
	bool used, built;
	uint32_t transfer;
	unsigned part;          /* next share, 1..engines */
	uint64_t base_ps, step_ps, seq0;
	struct sim_pkt *p;
	size_t cap;
	uint32_t off[SIM_MAX_DMA_ENGINES + 1];
};

struct sim_fifo {
	struct sim_pkt *p;
	size_t head, len, cap;
};

struct sim_transfer {
	uint64_t trigger;       /* instruction record id, UINT64_MAX for instruction fetch */
	uint64_t fetch_bytes;   /* instruction fetch: bytes (block is NX_NONE32) */
	unsigned fetch_engine;  /* instruction fetch: the DMA engine of its queue */
	uint32_t block;
	int sem;                /* semaphore incremented by each engine's write, -1 none */
	uint16_t queue;
	uint32_t next_pkt;
};

struct sim_dma {
	unsigned nq;
	struct sim_fifo *fifo;  /* [engine * nq + queue] */
	unsigned *rr;           /* last queue served, per engine */
	bool *busy;
	/* descriptor rings: ring[q] when queue q is static (in, out, data: its descriptors
	 * are read from a ring); such a FIFO starts its next packet no earlier than
	 * ring_free[engine * nq + queue], which a packet of n descriptors moves on to
	 * n * ring_gap_ps from its start, and it occupies its engine for at least
	 * n * desc_gap_ps. wake[e]: engine e is idle, its done_ps is the moment its first
	 * held-back FIFO may start */
	bool *ring, *wake;
	uint64_t *ring_free;
	uint64_t ring_gap_ps, desc_gap_ps;
	struct sim_pkt *cur;    /* packet in flight, per engine */
	uint64_t *done_ps, *done_seq; /* its completion (time, heap seq), UINT64_MAX none */
	/* winner tree over the engines' completions: node i holds the earlier of nodes 2i
	 * and 2i + 1, leaf win_p + e is engine e, so win[1] completes first; engine index
	 * dma_engines is a dummy that never completes (unused leaves, and no engine busy) */
	int *win;
	unsigned win_p;
	uint64_t hbm_free_ps;
	struct sim_transfer *xfer;
	size_t nxfer, capxfer;
	struct sim_pkt *scratch;   /* packets of the transfer being enqueued */
	size_t nscratch, capscratch;
	struct sim_stage *stage;   /* hardware-DGE transfers in generation */
	size_t nstage, capstage;
	int stage_min;             /* the stage whose share comes first, -1 none */
	uint64_t stage_ps, stage_seq;
};

#define SIM_THR_RING 256

struct sim_throttle {
	bool armed;             /* a ramp window exists */
	uint64_t arm_ps;
	uint64_t te_busy_end_ps;
	bool te_seen;
	uint64_t first_ps;      /* first Tensor instruction */
	/* MATMUL work of the last utilisation window as intervals [start, start + work)
	 * (work = unthrottled duration x share of the PE array), oldest first */
	uint64_t iv_s[SIM_THR_RING], iv_e[SIM_THR_RING];
	unsigned iv_head, iv_n;
	uint64_t iv_sum;        /* total length of the intervals in the ring */
};

struct sim {
	const struct nx_neff *neff;
	const struct nx_machine *m;
	const struct nx_sim_opts *opts;
	const struct nx_sim_sink *sink;
	bool recording;         /* the sink takes records (else none are built) */
	struct nx_sim_stats *st;
	struct nx_err *err;
	struct nx_sim_heap heap;
	uint64_t now;           /* ps */
	uint64_t end_ps;        /* latest activity */
	struct sim_engine eng[NX_ENGINE_COUNT];
	int32_t sem[NX_NUM_SEMAPHORES];
	uint8_t sem_src[NX_NUM_SEMAPHORES]; /* source of the last update, SIM_SEMSRC_NONE */
	uint8_t waiters[NX_NUM_SEMAPHORES]; /* bit e: engine e is blocked on the semaphore */
	struct sim_dma dma;
	struct sim_throttle thr;
	uint64_t landed[SIM_LANDED_WORDS]; /* landed.c (trn1): granules a DMA wrote last */
	uint64_t next_inst_id, next_dma_id;
	uint64_t insts_total, next_progress;
};

/* emit.c: record helpers (ps converted to ticks, 1 tick = 1 ns). */
int nx__sim_emit(struct sim *s, const struct nx_rec *rec);
static inline uint64_t nx__sim_ticks(uint64_t ps)
{
	return ps / 1000;
}

/* semaphores.c (the wait check is inline: every instruction makes it) */
static inline bool nx__sim_sem_ready(const struct sim *s, const struct nx_inst *in)
{
	int64_t v = s->sem[in->wait_sem];

	switch (in->wait_cond) {
	case NX_WAIT_GE:
		return v >= (int64_t)in->wait_value;
	case NX_WAIT_EQ:
		return v == (int64_t)in->wait_value;
	default:
		return true;
	}
}
int nx__sim_sem_update(struct sim *s, unsigned sem, int op, int32_t value, int source);

/* landed.c: SBUF granules whose last writer was a DMA (used when dve_landed_ps) */
void nx__sim_landed_block(struct sim *s, uint32_t block);        /* a block is triggered */
void nx__sim_landed_write(struct sim *s, const struct nx_inst *in); /* an engine writes */
bool nx__sim_landed_read(const struct sim *s, const struct nx_inst *in);

/* dma.c */
void nx__sim_dma_init(struct sim *s);
void nx__sim_dma_release(struct sim *s);
/* Records a triggered block; its packets reach the queues after the DMA latency. */
void nx__sim_dma_trigger(struct sim *s, uint32_t block, uint64_t trigger_id);
/* part 0: all of the transfer's packets reach the queues; part e + 1: only DMA engine
 * e's (a hardware-DGE transfer, whose descriptors reach the engines one by one). */
int nx__sim_dma_enqueue(struct sim *s, uint32_t transfer, unsigned part);
/* Queues the fetch of instructions [first, first + count) of an engine's stream on
 * its instruction queue (NX_INST_SIZE bytes each, one packet, no semaphore). */
void nx__sim_dma_fetch(struct sim *s, int engine, size_t first, size_t count);
int nx__sim_dma_done(struct sim *s, unsigned engine);
/* The staged hardware-DGE share due first, as (time, seq) and its event; false if
 * none. */
static inline bool nx__sim_dma_next_stage(const struct sim *s, uint64_t *time, uint64_t *seq,
					  uint32_t *transfer, unsigned *part)
{
	const struct sim_dma *d = &s->dma;

	if (d->stage_min < 0)
		return false;
	*time = d->stage_ps;
	*seq = d->stage_seq;
	*transfer = d->stage[d->stage_min].transfer;
	*part = d->stage[d->stage_min].part;
	return true;
}

/* The DMA engine whose packet completes first, with its (time, seq); -1 if none. */
static inline int nx__sim_dma_next(const struct sim *s, uint64_t *time, uint64_t *seq)
{
	int e = s->dma.win[1];

	if (s->dma.done_ps[e] != UINT64_MAX) {
		*time = s->dma.done_ps[e];
		*seq = s->dma.done_seq[e];
		return e;
	}
	return -1;
}

/* throttle.c: stretches a Tensor instruction starting at start_ps; returns the
 * throttled duration. Closes the last window (emitting its records) at the end. */
int nx__sim_throttle(struct sim *s, const struct nx_inst *in, uint64_t start_ps, uint64_t *dur_ps);
int nx__sim_throttle_finish(struct sim *s);

/* sim.c: re-checks engines blocked on sem after it changed. */
int nx__sim_wake(struct sim *s, unsigned sem);

#endif
