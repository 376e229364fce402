/* SPDX-License-Identifier: MIT
 * library.h: the library of generated kernels behind `neuron-explorer kernel gen`.
 *
 * Each generator writes a kernel listing (listing.h) for a given size; the listing is
 * then assembled into a NEFF. Every library kernel has an NKI-style Python source
 * under kernels/<name>.py in the repository, and the listing's source locations are
 * real lines of that file (the `lines` table names them; a unit test checks that
 * each line still holds the expected code). */
#ifndef NX_KERNELS_LIBRARY_H
#define NX_KERNELS_LIBRARY_H

#include "common/compat.h"
#include "common/err.h"
#include "common/strbuf.h"
#include "neff/neff.h"

/* A source line a generator cites, and a piece of code that must be on it. */
struct nx_kline {
	int line;
	const char *needle;
};

struct nx_kopts {
	unsigned size;        /* main problem size; 0 = the kernel's default */
	const char *target;   /* "trn2" (default) or "trn1": only sizes SBUF budgets */
	bool instr_fetch;     /* declare instruction queues: the simulator then models
			       * instruction-fetch DMA traffic (off by default) */
};

struct nx_kernel_def {
	const char *name;
	const char *summary;
	const char *source;        /* "kernels/<name>.py" */
	unsigned default_size;
	unsigned min_size, size_multiple;
	int (*gen)(const struct nx_kopts *o, unsigned size, struct nx_strbuf *out,
		   struct nx_err *err);
	const struct nx_kline *lines;
	size_t nlines;
};

/* All library kernels, in listing order. */
const struct nx_kernel_def *const *nx_kernels(size_t *count);
const struct nx_kernel_def *nx_kernel_find(const char *name);

/* Writes the kernel's listing for the options into out (appended). Checks the size. */
int nx_kernel_listing(const struct nx_kernel_def *k, const struct nx_kopts *o,
		      struct nx_strbuf *out, struct nx_err *err);
/* Generates and assembles the kernel into *neff (caller releases it). */
int nx_kernel_build(const struct nx_kernel_def *k, const struct nx_kopts *o,
		    struct nx_neff *neff, struct nx_err *err);

/* Helpers for generators (kgen.c). */
struct nx_kgen {
	struct nx_strbuf *out;
	const char *source;   /* kernels/<name>.py */
	unsigned nblocks;
	bool fetch;           /* nx_kopts.instr_fetch */
};
void nx_kgen_begin(struct nx_kgen *g, const struct nx_kopts *o, struct nx_strbuf *out,
		   const struct nx_kernel_def *k, int func_line);
/* Appends one line (printf format, newline added). */
void nx_kgen_line(struct nx_kgen *g, const char *fmt, ...) NX_PRINTF(2, 3);
/* Declares a one-descriptor block on queue and triggers it from engine at source line
 * `line`; `extra` holds more operands (e.g. "wait=S[3]>=4") or "". */
void nx_kgen_dma(struct nx_kgen *g, int line, const char *engine, const char *queue,
		 const char *src, const char *dst, const char *extra);

/* Generators (gen_*.c). */
extern const struct nx_kernel_def nx_kernel_matmul_v0, nx_kernel_matmul_v1, nx_kernel_matmul_v2,
	nx_kernel_matmul_transpose, nx_kernel_softmax, nx_kernel_layernorm, nx_kernel_attention,
	nx_kernel_dma_tiny, nx_kernel_vector_bound, nx_kernel_serial_sem;
/* Calibration kernels (gen_calib.c), rebuilt from published hardware measurements. */
extern const struct nx_kernel_def nx_kernel_calib_trn1_matmul_tiled,
	nx_kernel_calib_trn1_matmul_hoist, nx_kernel_calib_trn1_matmul_block,
	nx_kernel_calib_trn1_matmul_opt, nx_kernel_calib_trn2_matmul_v2,
	nx_kernel_calib_trn2_matmul_v3, nx_kernel_calib_trn2_matmul_v4,
	nx_kernel_calib_trn2_matmul_v5, nx_kernel_calib_trn1_layernorm_v1,
	nx_kernel_calib_trn1_layernorm_v2;

#endif
