/* SPDX-License-Identifier: MIT
 * dma_block.c: the text facts of a NEFF DMA block, alone or all of a NEFF's with their
 * strings kept once (see dma_block.h). */
#include "common/compat.h"
#include "ingest/dma_block.h"
#include "common/strbuf.h"
#include "common/xalloc.h"
#include "neff/isa.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Location text in the profiler's style: "[[INPUT]]" for an input read, "[SB]" ... */
static char *loc_text(const struct nx_neff *n, int loc, int var, bool source)
{
	if (loc == NX_LOC_SBUF)
		return nx_xstrdup(source ? "[[SB]]" : "[SB]");
	if (loc == NX_LOC_PSUM)
		return nx_xstrdup(source ? "[[PSUM]]" : "[PSUM]");
	const struct nx_tensor *t = var >= 0 && (size_t)var < n->ntensors ? &n->tensors[var] : NULL;
	const char *k = !t ? "HBM" : t->kind == NX_TENSOR_IN ? "INPUT" : t->kind == NX_TENSOR_OUT ? "OUTPUT"
		      : t->kind == NX_TENSOR_WEIGHT ? "WEIGHT"
		      : (t->def_type && !strcmp(t->def_type, "virtual")) ? "VIRTUAL" : "HBM";
	struct nx_strbuf sb = NX_STRBUF_INIT;
	nx_strbuf_addstr(&sb, source ? "[[" : "[");
	nx_strbuf_addstr(&sb, k);
	nx_strbuf_addstr(&sb, source ? "]]" : "]");
	return nx_strbuf_detach(&sb, NULL);
}

/* The numbers below are written by nx_strbuf_addi64 rather than printf (12 texts for
 * each of a real kernel's 66,048 blocks: a third of the staging table's time). A
 * uint64_t beyond INT64_MAX keeps printf's spelling. */
static void add_u64(struct nx_strbuf *sb, uint64_t v)
{
	if (v > INT64_MAX)
		nx_strbuf_addf(sb, "%" PRIu64, v);
	else
		nx_strbuf_addi64(sb, (int64_t)v);
}

static char *u64_text(uint64_t v)
{
	struct nx_strbuf sb = NX_STRBUF_INIT;
	add_u64(&sb, v);
	return nx_strbuf_detach(&sb, NULL);
}

/* "a-b" */
static char *range_text(uint64_t a, uint64_t b)
{
	struct nx_strbuf sb = NX_STRBUF_INIT;
	add_u64(&sb, a);
	nx_strbuf_addch(&sb, '-');
	add_u64(&sb, b);
	return nx_strbuf_detach(&sb, NULL);
}

static char *dims(unsigned n, const uint64_t *v)
{
	struct nx_strbuf sb = NX_STRBUF_INIT;
	nx_strbuf_addch(&sb, '[');
	for (unsigned i = 0; i < n; i++) {
		if (i)
			nx_strbuf_addch(&sb, ',');
		add_u64(&sb, v[i]);
	}
	nx_strbuf_addch(&sb, ']');
	return nx_strbuf_detach(&sb, NULL);
}

static char *sdims(unsigned n, const int64_t *v)
{
	struct nx_strbuf sb = NX_STRBUF_INIT;
	nx_strbuf_addch(&sb, '[');
	for (unsigned i = 0; i < n; i++) {
		if (i)
			nx_strbuf_addch(&sb, ',');
		nx_strbuf_addi64(&sb, v[i]);
	}
	nx_strbuf_addch(&sb, ']');
	return nx_strbuf_detach(&sb, NULL);
}

const char *nx_dma_desc_variable(const struct nx_neff *n, const struct nx_dma_block *blk,
				 uint32_t desc)
{
	if (desc >= blk->ndesc)
		return NULL;
	const struct nx_dma_desc *d = &blk->desc[desc];
	int v = d->from_loc == NX_LOC_HBM ? d->from_var : d->to_loc == NX_LOC_HBM ? d->to_var : -1;
	return v >= 0 && (size_t)v < n->ntensors ? n->tensors[v].name : NULL;
}

void nx_dma_block_text(const struct nx_neff *n, size_t block, struct nx_dma_block_text *t)
{
	const struct nx_dma_block *blk = &n->blocks[block];
	const struct nx_dma_desc *d = blk->ndesc ? &blk->desc[0] : NULL;
	const struct nx_dma_queue *q = blk->queue >= 0 && (size_t)blk->queue < n->nqueues
					       ? &n->queues[blk->queue] : NULL;
	int sem = blk->semaphore >= 0 ? blk->semaphore : q ? q->semaphore : -1;
	unsigned rparts = 0, wparts = 0;

	memset(t, 0, sizeof(*t));
	t->block_id = blk->id;
	t->queue = q;
	if (sem >= 0)
		t->semaphore_id = u64_text((uint64_t)sem);
	t->engine = nx_engine_name(blk->engine);
	t->bytes = (int64_t)blk->bytes;
	if (!d)
		return;
	t->has_desc = true;
	int var = d->from_loc == NX_LOC_HBM ? d->from_var : d->to_loc == NX_LOC_HBM ? d->to_var : -1;
	if (var >= 0 && (size_t)var < n->ntensors)
		t->variable = n->tensors[var].name;
	t->source = loc_text(n, d->from_loc, d->from_var, true);
	t->dest = loc_text(n, d->to_loc, d->to_var, false);
	/* Partitions are summed over the block's descriptors on each on-chip side. */
	for (size_t k = 0; k < blk->ndesc; k++) {
		if (blk->desc[k].from_loc != NX_LOC_HBM)
			rparts += (unsigned)blk->desc[k].from_sizes[0];
		if (blk->desc[k].to_loc != NX_LOC_HBM)
			wparts += (unsigned)blk->desc[k].to_sizes[0];
	}
	if (d->from_loc != NX_LOC_HBM)
		t->read_parts = range_text(d->from_start_partition,
					   d->from_start_partition + (rparts ? rparts : 1) - 1);
	t->read_nparts = rparts;
	t->read_shape = dims(d->from_ndim, d->from_sizes);
	t->read_offset = u64_text(d->from_off);
	t->read_steps = sdims(d->from_ndim, d->from_steps);
	if (d->to_loc != NX_LOC_HBM)
		t->write_parts = range_text(d->to_start_partition,
					    d->to_start_partition + (wparts ? wparts : 1) - 1);
	t->write_nparts = wparts;
	t->write_shape = dims(d->to_ndim, d->to_sizes);
	t->write_offset = u64_text(d->to_off);
	t->write_steps = sdims(d->to_ndim, d->to_steps);
	t->transpose = d->transpose;
	if (d->transpose)
		t->transpose_size = u64_text(nx_dtype_size(d->dtype));
}

/* The strings a text owns (its char * fields), as their places in t. */
#define OWNED 12
static void owned_strings(struct nx_dma_block_text *t, char **out[OWNED])
{
	char **owned[OWNED] = { &t->semaphore_id, &t->source, &t->dest, &t->read_parts,
				&t->read_shape, &t->read_offset, &t->read_steps,
				&t->write_parts, &t->write_shape, &t->write_offset,
				&t->write_steps, &t->transpose_size };
	memcpy(out, owned, sizeof(owned));
}

void nx_dma_block_text_release(struct nx_dma_block_text *t)
{
	char **owned[OWNED];

	owned_strings(t, owned);
	for (size_t i = 0; i < OWNED; i++)
		free(*owned[i]);
	memset(t, 0, sizeof(*t));
}

/* The one copy of s in all (a NULL s stays NULL); s is freed. */
static char *keep_once(struct nx_dma_block_texts *all, char *s)
{
	bool added;
	char **copy;

	if (!s)
		return NULL;
	size_t len = strlen(s);
	copy = nx_strmap_get(&all->seen, s, len, &added);
	if (added)
		*copy = nx_arena_copy(&all->text, s, len + 1);
	free(s);
	return *copy;
}

void nx_dma_block_texts_init(struct nx_dma_block_texts *all, const struct nx_neff *n)
{
	memset(all, 0, sizeof(*all));
	nx_strmap_init(&all->seen, sizeof(char *));
	all->n = n->nblocks;
	all->t = nx_xcalloc(n->nblocks ? n->nblocks : 1, sizeof(*all->t));
	for (size_t i = 0; i < n->nblocks; i++) {
		char **owned[OWNED];

		nx_dma_block_text(n, i, &all->t[i]);
		owned_strings(&all->t[i], owned);
		for (size_t k = 0; k < OWNED; k++)
			*owned[k] = keep_once(all, *owned[k]);
	}
}

void nx_dma_block_texts_release(struct nx_dma_block_texts *all)
{
	free(all->t);
	nx_strmap_release(&all->seen);
	nx_arena_free(&all->text);
	memset(all, 0, sizeof(*all));
}
