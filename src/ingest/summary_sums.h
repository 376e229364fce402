/* SPDX-License-Identifier: MIT
 * summary_sums.h: the whole-table aggregates Summary needs from Instruction and
 * DmaPacket (counts, sums, first/last times by engine, opcode and queue class),
 * accumulated while those tables stream and handed to 80_summary.sql as the one-row
 * views nx_InstSums and nx_DmaSums. Same values and types as the SQL aggregates they
 * replaced (sums of BIGINT are HUGEINT, NULL when no row contributes), without a second
 * scan of the two largest tables. */
#ifndef NX_INGEST_SUMMARY_SUMS_H
#define NX_INGEST_SUMMARY_SUMS_H

#include "common/compat.h"
#include "common/err.h"
#include "db/duck.h"

/* A sum over rows some of which may be NULL: NULL when none contributed. */
struct nx_sum {
	__int128 v;
	bool any;
};

enum { NX_SUM_HBM_R, NX_SUM_HBM_W, NX_SUM_SB_R, NX_SUM_SB_W, NX_SUM_SP_S, NX_SUM_SP_R,
       NX_SUM_PS_R, NX_SUM_PS_W, NX_SUM_PS_SB, NX_SUM_IN_Q, NX_SUM_OUT_Q, NX_SUM_W_Q,
       NX_SUM_BYTES };

/* What nx_inst_sums_add found of an engine or opcode name, kept by its pointer. */
struct nx_sums_name {
	const char *name;
	int what; /* engine: its index in eng_n, -1 none; opcode: NX__SUMS_* bits */
};

struct nx_inst_sums {
	uint64_t n, ps_sb_n, mm_n, act_n, eng_n[5];
	uint64_t chain_n; /* rows that carry the whole IR id chain (the hierarchy tables') */
	struct nx_sums_name eng_seen[8], op_seen[64]; /* by pointer: the names' strcmp()s */
	struct nx_sum bytes[NX_SUM_BYTES];
	struct nx_sum hw_flops, tp_flops, adj_flops, adj_tp_flops, act_t, eng_t[5];
	int64_t x_first, x_last;
	bool has_x;
};

struct nx_dma_sums {
	uint64_t n, st_n, sw_n, hw_n;
	struct nx_sum t, bytes, kbytes, st_b, sw_b, hw_b;
	int64_t d_first, d_last;
};

/* Per-instruction figures of one Instruction row (byte columns are NULL when !known).
 * engine and opcode are names that stay the same for the sums' life (the ISA's, or
 * literals): their classes are kept by pointer, each name compared once. */
struct nx_inst_row {
	/* names that live, unchanged, as long as the sums: their classes are kept by
	 * pointer (the ISA's names and literals) */
	const char *engine, *opcode;
	int64_t start, end;
	bool known;
	bool chain; /* raw_bir_id, raw_penguin_id, raw_hlo_id and raw_framework_id all set */
	int64_t bytes[NX_SUM_BYTES];
	bool has_flops;
	int64_t raw_flops, adj_flops, flops_tp, adj_flops_tp;
};

void nx_inst_sums_add(struct nx_inst_sums *s, const struct nx_inst_row *r);
void nx_dma_sums_add(struct nx_dma_sums *s, const char *queue_type, int64_t start, int64_t end,
		     int64_t bytes);
/* CREATE OR REPLACE VIEW nx_InstSums / nx_DmaSums, one row each. */
int nx_sums_create_views(const struct nx_inst_sums *i, const struct nx_dma_sums *dm,
			 struct nx_duck *d, struct nx_err *err);

#endif
