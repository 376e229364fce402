/* SPDX-License-Identifier: MIT
 * listing_int.h: the assembler's state and the operand parsers shared by
 * listing_parse.c, listing_ops.c and listing_asm.c. Not a public interface. */
#ifndef NX_KERNELS_LISTING_INT_H
#define NX_KERNELS_LISTING_INT_H

#include "common/compat.h"
#include "common/err.h"
#include "common/strmap.h"
#include "neff/neff.h"

#include <string.h>

#define NX_ASM_MAX_TOK 48

struct asm_ref {
	int engine;
	size_t index;
	int line;
	char *name;
};

/* The name tables: a name's index, or -1; adding a name that exists changes nothing
 * and returns false. */
static inline int asm_sym_get(const struct nx_strmap *m, const char *name)
{
	const int *v = nx_strmap_find(m, name, strlen(name));

	return v ? *v : -1;
}

static inline bool asm_sym_add(struct nx_strmap *m, const char *name, int val)
{
	bool added;
	int *v = nx_strmap_get(m, name, strlen(name), &added);

	if (added)
		*v = val;
	return added;
}

struct asm_state {
	const char *fname;
	int line;
	struct nx_err *err;
	struct nx_neff *neff;
	size_t cap_tensors, cap_queues, cap_blocks, cap_inst[NX_ENGINE_COUNT], cap_dbg, cap_desc;
	struct nx_strmap tensors, queues, blocks, dbg, iters; /* name -> int index */
	size_t cap_iters, cap_decisions;
	int64_t cur_iter;        /* innermost iteration variable in force, -1 none */
	char *source;            /* default file of "@LINE" */
	char *kernel;
	bool have_frame;
	int cur_block;           /* block that takes "desc" lines, -1 none */
	struct asm_ref *refs;
	size_t nrefs, cap_refs;
	uint32_t next_bir;
	uint32_t last_lw_bir;
	bool last_te_was_lw;
};

/* Reports "fname:line: <message>" (NX_EUSAGE) and returns the code. */
int nx__asm_fail(struct asm_state *st, const char *fmt, ...) NX_PRINTF(2, 3);

/* Numbers: accept decimal and 0x hex; fail on trailing garbage. */
int nx__asm_u64(struct asm_state *st, const char *s, uint64_t *v, const char *what);

/* "sbuf[0:128]+0x400:bf16[512]": 1 to 4 sizes, innermost first, and optional
 * "{ST0,...}" steps (one per size). */
int nx__asm_ap(struct asm_state *st, const char *s, struct nx_ap *ap);
/* "S[3]>=16" / "S[3]==2" into wait fields. */
int nx__asm_wait(struct asm_state *st, const char *s, struct nx_inst *in);
/* "S[3]++", "S[3]--", "S[3]+=N", "S[3]-=N", "S[3]=N" into signal fields. */
int nx__asm_sig(struct asm_state *st, const char *s, struct nx_inst *in);
/* One side of a descriptor: "tensor[a:b, c:d]" (HBM) or "sbuf[p0:p1]+off[:dtype[n]]". */
int nx__asm_desc(struct asm_state *st, const char *src, const char *dst, bool transpose,
		 struct nx_dma_desc *d);

/* The operand words tok[0..n-1] of an instruction whose opcode and engine are set:
 * fills *in and the block and BIR names it gives (listing_ops.c). */
int nx__asm_operands(struct asm_state *st, struct nx_inst *in, char **tok, int n, char **block,
		     char **bname);
/* "decision KIND KEY=VALUE ...": tok[0..n-1] are the words after "decision"; file is
 * NULL without a source location. */
int nx__asm_decision(struct asm_state *st, const char *file, int64_t line, char **tok, int n);

#endif
