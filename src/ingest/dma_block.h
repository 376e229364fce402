/* SPDX-License-Identifier: MIT
 * dma_block.h: the text facts of one NEFF DMA block (queue, semaphore, source and
 * destination, partitions, shapes, offsets, steps, transpose), computed once per block
 * for the staging table nx_DmaBlock and for DmaPacketAggregated. */
#ifndef NX_INGEST_DMA_BLOCK_H
#define NX_INGEST_DMA_BLOCK_H

#include "common/compat.h"
#include "common/arena.h"
#include "common/strmap.h"
#include "neff/neff.h"

struct nx_dma_block_text {
	int64_t block_id;
	const struct nx_dma_queue *queue;  /* NULL when the block names no known queue */
	char *semaphore_id;                /* NULL when none */
	const char *engine;
	int64_t bytes;
	bool has_desc;                     /* the fields below are NULL/0 without a descriptor */
	const char *variable;              /* the HBM tensor of the first descriptor, or NULL */
	char *source, *dest;
	char *read_parts, *read_shape, *read_offset, *read_steps;
	char *write_parts, *write_shape, *write_offset, *write_steps;
	int64_t read_nparts, write_nparts;
	bool transpose;
	char *transpose_size;              /* NULL unless transpose */
};

/* The HBM-side tensor name descriptor `desc` of blk moves, or NULL. */
const char *nx_dma_desc_variable(const struct nx_neff *n, const struct nx_dma_block *blk,
				 uint32_t desc);
void nx_dma_block_text(const struct nx_neff *n, size_t block, struct nx_dma_block_text *t);
void nx_dma_block_text_release(struct nx_dma_block_text *t);

/* The texts of all of a NEFF's blocks at once, for a pass that looks them up by block:
 * their strings are one copy of each distinct text (a kernel's thousands of blocks
 * repeat a few shapes, steps, partitions and locations), not each block's own. */
struct nx_dma_block_texts {
	size_t n;
	struct nx_dma_block_text *t; /* n of them, by block; t[i] is not released alone */
	struct nx_strmap seen;       /* text -> its copy in `text` */
	struct nx_arena text;
};
void nx_dma_block_texts_init(struct nx_dma_block_texts *all, const struct nx_neff *n);
void nx_dma_block_texts_release(struct nx_dma_block_texts *all);

#endif
