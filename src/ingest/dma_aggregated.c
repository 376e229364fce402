/* SPDX-License-Identifier: MIT
 * dma_aggregated.c: DmaPacketAggregated from one streaming pass over the DMA packet
 * records, in bounded memory (see dma_aggregated.h). The open transfers are found by id
 * through an index of their own rather than strmap: it points into the ring that keeps
 * them in arrival order, and a transfer leaves it when written (strmap never removes a
 * key), so the index stays as small as the open transfers. */
#include "common/compat.h"
#include "common/env_num.h"
#include "ingest/dma_aggregated.h"
#include "common/hash.h"
#include "common/xalloc.h"
#include "common/fsutil.h"
#include "db/profile_views.h"
#include "ingest/context.h"
#include "ingest/dma_block.h"
#include "ingest/dma_usage.h"
#include "ingest/flow_trigger.h"
#include "ingest/pending_dma.h"

#include <stdio.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#define BLOOM_BITS (1u << 23) /* 1 MB: ids of the transfers already written */

/* One transfer while its packets come: the SQL's GROUP BY packet_aggregation_id, and
 * the block and trigger of its first packet (packet_idx 0, as nx_DmaTransfer). */
struct xfer {
	uint64_t id;
	int64_t start, end, bytes;
	const char *variable;   /* max() of the packets' variables, or NULL */
	const struct nx_dma_queue *queue; /* first packet with a known queue, or NULL */
	uint64_t trigger;
	uint32_t block;
	bool has_first;         /* a packet_idx 0 was seen: block and trigger are set */
	bool hbm;               /* with has_first: the block has an HBM side (HbmUsage) */
	uint32_t nearly, early_cap;
	struct early { size_t bucket; int64_t bytes; } *early; /* packets before packet_idx 0 */
};

enum { A_START, A_END, A_DUR, A_ID, A_PCORE, A_BLOCK_ID, A_QIDX, A_QNAME, A_QTYPE, A_OP,
       A_VAR, A_RB, A_WB, A_TB, A_TPUT, A_SRC, A_DST, A_SEM, A_MFF, A_RPARTS, A_RNPARTS,
       A_RSHAPE, A_ROFF, A_RSTEPS, A_WPARTS, A_WNPARTS, A_WSHAPE, A_WOFF, A_WSTEPS,
       A_TRANSPOSE, A_TSIZE, A_TRIGGER, A_COMPLETION };
static const char *const agg_names[] = {
	"start_ts", "end_ts", "duration_ns", "id", "pcore_idx", "block_id", "queue_idx",
	"queue_name", "queue_type", "op", "variable", "read_bytes", "write_bytes",
	"transfer_bytes", "throughput", "source", "dest", "semaphore_id",
	"modular_flow_function", "read_sbuf_partitions", "read_num_sbuf_partitions",
	"read_shape", "read_offset", "read_steps", "write_sbuf_partitions",
	"write_num_sbuf_partitions", "write_shape", "write_offset", "write_steps",
	"is_transpose_mode", "transpose_element_size", "trigger", "completion", NULL,
};

struct agg_src {
	struct nx_ingest_ctx *ctx;
	struct nx_colmap map;
	struct nx_dma_block_texts blocks; /* one per NEFF block */
	size_t limit;            /* open transfers before the oldest is written; 0: no limit */
	/* open transfers: a FIFO of sequence numbers [head, tail) in ring[seq & rmask] */
	struct xfer *ring;
	size_t rmask;
	uint64_t head, tail;
	struct hent { uint64_t seq1, id; } *hslot; /* hash index: seq + 1 of an open
				  * transfer (0: free) and its id, so a probe reads no ring entry */
	size_t hmask;
	uint64_t last;           /* seq + 1 of the last packet's transfer (0: none): a
				  * transfer's packets mostly come one after another */
	/* transfers taken out of the FIFO, written in (start, id) order */
	struct xfer *ready;
	size_t nready, ready_cap, ready_pos;
	uint8_t *bloom;
	uint64_t max_id;
	int64_t last_start;
	bool any, eof;
	bool suspect;            /* the bounded pass may have split a transfer: run again */
	struct nx_pending_dma *pending; /* PendingDma, fed every written transfer */
	struct nx_flow_trig *flow;      /* Flow's DGE_TRIGGER edges, likewise */
	struct nx_dma_usage *usage;     /* DmaUsage and HbmUsage, fed every packet */
	uint64_t dup_first;      /* packet_idx 0 seen again in a transfer */
	unsigned __int128 dur_ns; /* the written rows' summed duration_ns (each >= 0) */
};

static void bloom_add(struct agg_src *s, uint64_t id)
{
	uint64_t h = nx_mix64(id);
	for (int k = 0; k < 3; k++, h = (h >> 21) | (h << 43))
		s->bloom[(h % BLOOM_BITS) / 8] |= (uint8_t)(1u << (h % 8));
}

static bool bloom_has(const struct agg_src *s, uint64_t id)
{
	uint64_t h = nx_mix64(id);
	for (int k = 0; k < 3; k++, h = (h >> 21) | (h << 43))
		if (!(s->bloom[(h % BLOOM_BITS) / 8] & (1u << (h % 8))))
			return false;
	return true;
}

static struct xfer *at(const struct agg_src *s, uint64_t seq)
{
	return &s->ring[seq & s->rmask];
}

/* The hash slot holding transfer id, or the free slot where it would go. */
static size_t find_slot(const struct agg_src *s, uint64_t id)
{
	size_t i = nx_mix64(id) & s->hmask;
	while (s->hslot[i].seq1 && s->hslot[i].id != id)
		i = (i + 1) & s->hmask;
	return i;
}

static void hash_rebuild(struct agg_src *s, size_t cap)
{
	free(s->hslot);
	s->hslot = nx_xcalloc(cap, sizeof(*s->hslot));
	s->hmask = cap - 1;
	for (uint64_t q = s->head; q < s->tail; q++)
		s->hslot[find_slot(s, at(s, q)->id)] = (struct hent){ q + 1, at(s, q)->id };
}

/* Removes slot i, moving later entries of its probe run back (linear probing). */
static void hash_delete(struct agg_src *s, size_t i)
{
	size_t j = i;

	for (;;) {
		j = (j + 1) & s->hmask;
		if (!s->hslot[j].seq1)
			break;
		size_t k = nx_mix64(s->hslot[j].id) & s->hmask;
		/* the entry at j may fill the hole at i unless its home lies in (i, j] */
		bool stays = i <= j ? (i < k && k <= j) : (i < k || k <= j);
		if (!stays) {
			s->hslot[i] = s->hslot[j];
			i = j;
		}
	}
	s->hslot[i] = (struct hent){ 0, 0 };
}

static struct xfer *open_new(struct agg_src *s, uint64_t id)
{
	size_t n = (size_t)(s->tail - s->head);

	if (n + 1 > s->rmask + 1) {
		size_t cap = 2 * (s->rmask + 1);
		struct xfer *r = nx_xmalloc(cap * sizeof(*r));
		for (uint64_t q = s->head; q < s->tail; q++)
			r[q & (cap - 1)] = *at(s, q);
		free(s->ring);
		s->ring = r;
		s->rmask = cap - 1;
	}
	if (2 * (n + 1) > s->hmask + 1)
		hash_rebuild(s, 2 * (s->hmask + 1));
	struct xfer *x = at(s, s->tail);
	memset(x, 0, sizeof(*x));
	x->id = id;
	s->hslot[find_slot(s, id)] = (struct hent){ ++s->tail, id };
	return x;
}

static int by_start_id(const void *a, const void *b)
{
	const struct xfer *x = a, *y = b;
	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	int64_t i = (int64_t)x->id, j = (int64_t)y->id; /* id is a BIGINT column */
	return i < j ? -1 : i > j;
}

/* Moves the oldest open transfers into the ready list: those that share the oldest
 * start (all of them when `all`), sorted by (start, id). */
static void take_oldest(struct agg_src *s, bool all)
{
	int64_t start = at(s, s->head)->start;

	s->nready = s->ready_pos = 0;
	while (s->head < s->tail && (all || at(s, s->head)->start == start)) {
		struct xfer *x = at(s, s->head);
		if (s->nready == s->ready_cap) {
			s->ready_cap = s->ready_cap ? 2 * s->ready_cap : 64;
			s->ready = nx_xrealloc(s->ready, s->ready_cap * sizeof(*s->ready));
		}
		s->ready[s->nready++] = *x;
		hash_delete(s, find_slot(s, x->id));
		if (s->limit)
			bloom_add(s, x->id);
		s->head++;
	}
	if (s->nready > 1)
		qsort(s->ready, s->nready, sizeof(*s->ready), by_start_id);
}

/* The transfer's source or destination is not on chip (HbmUsage's rule over
 * DmaPacketAggregated's source and dest, which are '' without a block). */
static bool hbm_side(const struct agg_src *s, const struct xfer *x)
{
	const struct nx_dma_block_text *bt =
		x->has_first && x->block < s->blocks.n ? &s->blocks.t[x->block] : NULL;
	const char *src = bt && bt->source ? bt->source : "";
	const char *dst = bt && bt->dest ? bt->dest : "";

	return (strcmp(src, "[[SB]]") && strcmp(src, "[[PSUM]]")) ||
	       (strcmp(dst, "[SB]") && strcmp(dst, "[PSUM]"));
}

/* Counts the packets that came before the transfer's packet_idx 0, once it is known
 * whether it has an HBM side. */
static void flush_early(struct agg_src *s, struct xfer *x)
{
	bool hbm = x->has_first ? x->hbm : hbm_side(s, x);

	for (uint32_t i = 0; hbm && i < x->nearly; i++)
		nx_dma_usage_add(s->usage, NX_USAGE_HBM, x->early[i].bucket, x->early[i].bytes);
	free(x->early);
	x->early = NULL;
	x->nearly = x->early_cap = 0;
}

static void add_packet(struct agg_src *s, const struct nx_rec_dma *r)
{
	struct nx_ingest_ctx *c = s->ctx;
	int64_t start = nx_ticks_to_ns(c, r->start), end = nx_ticks_to_ns(c, r->end);
	const struct nx_neff *n = nx_ctx_neff(c);
	const struct nx_dma_queue *q = r->queue < n->nqueues ? &n->queues[r->queue] : NULL;
	const char *var = r->block != NX_NONE32 && r->block < n->nblocks
				  ? nx_dma_desc_variable(n, &n->blocks[r->block], r->desc)
				  : NULL;
	struct xfer *x;
	bool open = s->last > s->head && s->last <= s->tail &&
		    at(s, s->last - 1)->id == r->transfer;

	if (!open) {
		size_t i = find_slot(s, r->transfer);
		open = s->hslot[i].seq1 != 0;
		if (open)
			s->last = s->hslot[i].seq1;
	}
	if (s->any && start < s->last_start)
		s->suspect = true; /* out of start order: the FIFO order is not the output's */
	s->any = true;
	s->last_start = start;
	if (open) {
		x = at(s, s->last - 1);
		if (start < x->start)
			x->start = start;
		if (end > x->end)
			x->end = end;
	} else {
		if (s->limit && r->transfer <= s->max_id && bloom_has(s, r->transfer))
			s->suspect = true; /* maybe a transfer already written */
		if (r->transfer > s->max_id)
			s->max_id = r->transfer;
		x = open_new(s, r->transfer);
		s->last = s->tail;
		x->start = start;
		x->end = end;
	}
	x->bytes += r->bytes;
	if (var && var != x->variable && (!x->variable || strcmp(var, x->variable) > 0))
		x->variable = var;
	if (q && !x->queue)
		x->queue = q;
	if (r->packet_idx == 0 && x->has_first)
		s->dup_first++;
	if (r->packet_idx == 0 && !x->has_first) {
		x->has_first = true;
		x->block = r->block;
		x->trigger = r->trigger;
		x->hbm = hbm_side(s, x);
		flush_early(s, x);
	}
	size_t k = nx_dma_usage_bucket(s->usage, start);
	nx_dma_usage_add(s->usage, NX_USAGE_DMA, k, r->bytes);
	if (x->has_first && x->hbm) {
		nx_dma_usage_add(s->usage, NX_USAGE_HBM, k, r->bytes);
	} else if (!x->has_first) {
		if (x->nearly == x->early_cap) {
			x->early_cap = x->early_cap ? 2 * x->early_cap : 4;
			x->early = nx_xrealloc(x->early, x->early_cap * sizeof(*x->early));
		}
		x->early[x->nearly++] = (struct early){ .bucket = k, .bytes = r->bytes };
	}
	/* enough open transfers: the oldest start is over (no new transfer can start
	 * before the current packet), so it is taken as finished */
	if (s->limit && s->tail - s->head > s->limit && at(s, s->head)->start < start)
		take_oldest(s, false);
}

static void write_row(struct agg_src *s, struct nx_rowbuf *b, size_t row, struct xfer *x)
{
	struct nx_ingest_ctx *c = s->ctx;
	const int *ix = s->map.idx;
	const struct nx_dma_block_text *bt =
		x->has_first && x->block < s->blocks.n ? &s->blocks.t[x->block] : NULL;
	const struct nx_dma_queue *bq = bt ? bt->queue : NULL;
	const struct nx_trig_span *tr = x->has_first ? nx_trig_find(&c->trig, x->trigger) : NULL;
	int64_t dur = x->end - x->start;

	nx_rowbuf_i64(b, ix[A_START], row, x->start);
	nx_rowbuf_i64(b, ix[A_END], row, x->end);
	nx_rowbuf_i64(b, ix[A_DUR], row, dur);
	s->dur_ns += (uint64_t)dur;
	nx_rowbuf_i64(b, ix[A_ID], row, (int64_t)x->id);
	nx_rowbuf_i64(b, ix[A_PCORE], row, c->info->pcore_idx);
	nx_rowbuf_i64(b, ix[A_BLOCK_ID], row, bt ? bt->block_id : -1);
	nx_rowbuf_i64(b, ix[A_QIDX], row, x->queue ? x->queue->queue_idx : bq ? bq->queue_idx : -1);
	nx_rowbuf_str(b, ix[A_QNAME], row, x->queue && x->queue->name ? x->queue->name
					   : bq && bq->name ? bq->name : "");
	nx_rowbuf_str(b, ix[A_QTYPE], row, x->queue ? nx_queue_type_name(x->queue->queue_type)
							: "unknown");
	nx_rowbuf_str(b, ix[A_OP], row, "copy");
	nx_rowbuf_str(b, ix[A_VAR], row, bt && bt->variable ? bt->variable
					 : x->variable ? x->variable : "");
	nx_rowbuf_i64(b, ix[A_RB], row, x->bytes);
	nx_rowbuf_i64(b, ix[A_WB], row, x->bytes);
	nx_rowbuf_i64(b, ix[A_TB], row, x->bytes);
	nx_rowbuf_f64(b, ix[A_TPUT], row, dur > 0 ? (double)x->bytes * 1e9 / (double)dur : 0.0);
	nx_rowbuf_str(b, ix[A_SRC], row, bt && bt->source ? bt->source : "");
	nx_rowbuf_str(b, ix[A_DST], row, bt && bt->dest ? bt->dest : "");
	nx_rowbuf_str(b, ix[A_SEM], row, bt && bt->semaphore_id ? bt->semaphore_id : "");
	nx_rowbuf_str(b, ix[A_MFF], row, "sg0000:0");
	nx_rowbuf_str(b, ix[A_RPARTS], row, bt && bt->read_parts ? bt->read_parts : "");
	nx_rowbuf_i64(b, ix[A_RNPARTS], row, bt ? bt->read_nparts : 0);
	nx_rowbuf_str(b, ix[A_RSHAPE], row, bt && bt->read_shape ? bt->read_shape : "");
	nx_rowbuf_str(b, ix[A_ROFF], row, bt && bt->read_offset ? bt->read_offset : "");
	nx_rowbuf_str(b, ix[A_RSTEPS], row, bt && bt->read_steps ? bt->read_steps : "");
	nx_rowbuf_str(b, ix[A_WPARTS], row, bt && bt->write_parts ? bt->write_parts : "");
	nx_rowbuf_i64(b, ix[A_WNPARTS], row, bt ? bt->write_nparts : 0);
	nx_rowbuf_str(b, ix[A_WSHAPE], row, bt && bt->write_shape ? bt->write_shape : "");
	nx_rowbuf_str(b, ix[A_WOFF], row, bt && bt->write_offset ? bt->write_offset : "");
	nx_rowbuf_str(b, ix[A_WSTEPS], row, bt && bt->write_steps ? bt->write_steps : "");
	if (bt && bt->has_desc)
		nx_rowbuf_bool(b, ix[A_TRANSPOSE], row, bt->transpose);
	if (bt)
		nx_rowbuf_str(b, ix[A_TSIZE], row, bt->transpose_size);
	bool inst = tr && nx_trig_is_inst(tr);
	if (inst) {
		nx_rowbuf_i64(b, ix[A_TRIGGER], row, tr->start);
		nx_rowbuf_i64(b, ix[A_COMPLETION], row, tr->end);
		nx_flow_trig_add(s->flow, x->trigger, x->id, x->start - tr->end);
	}
	/* queued at the trigger's completion when that comes before the first packet */
	nx_pending_dma_add(s->pending, inst && tr->end < x->start ? tr->end : x->start, x->end);
	if (x->nearly)
		flush_early(s, x);
}

static int agg_next(void *self, struct nx_rowbuf *b, struct nx_err *err)
{
	struct agg_src *s = self;
	size_t cap = nx_rowbuf_capacity(b), row = 0;
	struct nx_rec rec;

	while (row < cap) {
		if (s->ready_pos < s->nready) {
			write_row(s, b, row++, &s->ready[s->ready_pos++]);
			continue;
		}
		if (s->eof) {
			if (s->head == s->tail)
				break;
			take_oldest(s, true);
			continue;
		}
		int rc = nx_ntff_reader_next(s->ctx->ntff, NX_REC_MASK(NX_REC_DMA), &rec, err);
		if (rc < 0)
			return rc;
		if (rc == 0)
			s->eof = true;
		else
			add_packet(s, &rec.u.dma);
	}
	int rc = nx_trig_error(&s->ctx->trig, err);
	return rc ? rc : (int)row;
}

static void agg_release(struct agg_src *s)
{
	for (uint64_t q = s->head; s->ring && q < s->tail; q++)
		free(at(s, q)->early);
	for (size_t i = s->ready_pos; i < s->nready; i++)
		free(s->ready[i].early);
	nx_dma_block_texts_release(&s->blocks);
	free(s->ring);
	free(s->hslot);
	free(s->ready);
	free(s->bloom);
}

/* The open-transfer limit: NX_DMA_AGG_OPEN (for tests), else 65536. */
static size_t open_limit(void)
{
	long long n = nx_env_whole_or("NX_DMA_AGG_OPEN", LONG_MAX,
				      "open transfers (0: the default)", 0);
	return n > 0 ? (size_t)n : 65536;
}

static int run(struct nx_ingest_ctx *c, struct nx_duck *d, const char *path, size_t limit,
	       struct nx_pending_dma *pending, struct nx_flow_trig *flow,
	       struct nx_dma_usage *usage, bool *suspect, uint64_t *dup_first, uint64_t *rows,
	       struct nx_err *err)
{
	struct agg_src s = { .ctx = c, .limit = limit, .pending = pending, .flow = flow,
			     .usage = usage };
	struct nx_row_source src;
	int rc = nx_colmap_init(&s.map, "DmaPacketAggregated", agg_names, err);

	if (!rc)
		rc = nx_ntff_reader_rewind(c->ntff, err);
	if (rc)
		return rc;
	nx_dma_block_texts_init(&s.blocks, nx_ctx_neff(c));
	s.ring = nx_xmalloc(1024 * sizeof(*s.ring));
	s.rmask = 1023;
	s.hslot = nx_xcalloc(2048, sizeof(*s.hslot));
	s.hmask = 2047;
	if (limit)
		s.bloom = nx_xcalloc(BLOOM_BITS / 8, 1);
	src = (struct nx_row_source){ .table = s.map.table, .self = &s, .next = agg_next };
	/* the pass (decode, merge) on a thread of its own while this one encodes: both
	 * cost about as much, and the other core is idle between the raw stage and the
	 * timeline cache's events part, which waits for this table */
	rc = nx_ctx_copy_ahead(c, d, &src, path, NULL, "derived in C", rows, err);
	*suspect = s.suspect;
	*dup_first = s.dup_first;
	c->dpa_dur_ns = s.dur_ns;
	agg_release(&s);
	return rc;
}

int nx_write_dma_aggregated(struct nx_ingest_ctx *c, struct nx_duck *d, const char *dir,
			    const char *staging, struct nx_err *err)
{
	char *path = nx_xasprintf("%s/DmaPacketAggregated.parquet", dir);
	int64_t first = c->first_ns <= c->last_ns ? c->first_ns : 0;
	int64_t last = c->first_ns <= c->last_ns ? c->last_ns : 0;
	struct nx_pending_dma pending;
	struct nx_flow_trig flow;
	struct nx_dma_usage usage;
	uint64_t rows = 0, prows = 0, frows = 0, dup_first = 0, urows[NX_USAGE_N];
	bool suspect = false;
	int rc;

	nx_pending_dma_init(&pending, first, last, (int64_t)c->info->pcore_idx);
	nx_dma_usage_init(&usage, first, last, (int64_t)c->info->pcore_idx);
	rc = nx_flow_trig_open(&flow, staging, err);
	if (!rc)
		rc = run(c, d, path, open_limit(), &pending, &flow, &usage, &suspect, &dup_first,
			 &rows, err);
	if (!rc && suspect) {
		nx_pending_dma_clear(&pending);
		nx_flow_trig_reset(&flow);
		nx_dma_usage_clear(&usage);
		rc = run(c, d, path, 0, &pending, &flow, &usage, &suspect, &dup_first, &rows, err);
	}
	if (!rc && rows == 0)
		remove(path);
	c->dpa_rows = rc ? 0 : rows;
	if (!rc) {
		double t0 = nx_now_s();
		rc = nx_pending_dma_write(&pending, d, dir, &prows, err);
		if (!rc && prows)
			nx_ctx_table_done(c, "PendingDma", "derived in C", prows, nx_now_s() - t0);
	}
	if (!rc) {
		double t0 = nx_now_s();
		rc = nx_dma_usage_write(&usage, d, dir, urows, err);
		if (!rc && urows[NX_USAGE_DMA])
			nx_ctx_table_done(c, "DmaUsage", "derived in C", urows[NX_USAGE_DMA],
					  nx_now_s() - t0);
		if (!rc && urows[NX_USAGE_HBM])
			nx_ctx_table_done(c, "HbmUsage", "derived in C", urows[NX_USAGE_HBM], 0);
	}
	if (!rc) {
		/* NX_FLOW_TRIG=sql or =sort (tests) takes the paths of other traces */
		const char *force = getenv("NX_FLOW_TRIG");
		bool exact = c->trig.dup_inst == 0 && dup_first == 0;
		if (force && !strcmp(force, "sql"))
			exact = false;
		if (force && !strcmp(force, "sort"))
			flow.sorted = false;
		/* nx_DmaTransfer's one reader here is the SQL join (the tests keep it too):
		 * otherwise the DMA records are not read a third time for it */
		if (!exact || c->keep_staging)
			rc = nx_write_dma_transfers(c, d, staging, err);
		/* without SemaphoreUpdate rows, 39_flow_semaphore.sql is skipped and these
		 * edges are the whole of Flow: written as Flow, and 40_flow.sql (requires
		 * nx_FlowEdges) is skipped, rather than copied again by DuckDB */
		const char *const dirs[] = { dir, NULL };
		bool whole = !nx_db_table_has_file(dirs, "SemaphoreUpdate");
		char *fpath = whole ? nx_path_join(dir, "Flow.parquet")
				    : nx_path_join(staging, "nx_FlowEdges_0.parquet");
		double t0 = nx_now_s();
		if (!rc)
			rc = nx_flow_trig_write(&flow, d, dir, staging, fpath, exact, &frows, err);
		if (!rc && whole && frows == 0)
			remove(fpath); /* as the derive stage leaves a table without rows */
		if (!rc && whole)
			nx_ctx_table_done(c, "Flow", exact ? "derived in C" : "derived", frows,
					  nx_now_s() - t0);
		else if (!rc)
			nx_ctx_table_done(c, "nx_FlowEdges_0", exact ? "staging, C" : "staging, SQL",
					  frows, nx_now_s() - t0);
		free(fpath);
	}
	nx_flow_trig_release(&flow);
	nx_dma_usage_release(&usage);
	nx_pending_dma_release(&pending);
	free(path);
	return rc;
}
