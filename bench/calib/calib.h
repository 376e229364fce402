/* SPDX-License-Identifier: MIT
 * calib.h: what the parts of bench_calib share: a simulated run's profile (busy
 * intervals per engine and for DMA, HBM bytes), the report's rows and per-family
 * summaries, and the overview that closes the report. */
#ifndef NX_BENCH_CALIB_H
#define NX_BENCH_CALIB_H

#include "common/compat.h"
#include "common/err.h"
#include "neff/neff.h"

/* Union of busy intervals, fed in start order. */
struct calib_busy {
	uint64_t s, e, total;
	bool any;
};

struct calib_prof {
	const struct nx_neff *neff;     /* for the HBM side of DMA packets */
	struct calib_busy eng[NX_ENGINE_COUNT], dma;
	uint64_t end, pkt_ns, dma_bytes, hbm_bytes, inst_ns[NX_ENGINE_COUNT];
	uint64_t ninst[NX_ENGINE_COUNT], pkt_first_ns;
	uint64_t starts[4][NX_ENGINE_COUNT], ends[4][NX_ENGINE_COUNT];
};

double calib_busy_ns(const struct calib_busy *b);

/* Simulates a NEFF (or a listing) on target with DMA packet records into p. */
int calib_run_neff(const struct nx_neff *neff, const char *target, struct calib_prof *p,
		   struct nx_err *err);
int calib_run_listing(const char *text, const char *target, struct calib_prof *p,
		      struct nx_err *err);

/* ---- the report ---- */

extern bool calib_md;   /* markdown tables (docs/simulator.md) instead of plain text */

/* Errors of one class of figures of a family, for its summary line. */
struct calib_errs {
	double v[64];
	size_t n;
};

void calib_head(const char *title);
/* One figure: measured, simulated, error in % (or points when `points`); the error
 * is added to errs when errs is not NULL. */
void calib_row(const char *name, const char *what, double meas, double sim, const char *unit,
	       bool points, struct calib_errs *errs);
/* "<what>: median |error| M, worst W (N figures[, K within ±T])"; target 0: none. The
 * line is also kept for the overview. */
void calib_summary(const char *family, const char *what, struct calib_errs *errs,
		   const char *unit, double target);
/* A note under a family (plain text, or a markdown list item). */
void calib_note(const char *fmt, ...) NX_PRINTF(1, 2);
/* The closing table: every summary line of the report, family by family. */
void calib_overview(void);

/* ---- families in their own files ---- */

/* Micro facts M1-M6 (calib_micro.c). */
int calib_micro(void);
/* Family D: the NKI calibration kernels measured on trn1, read from REF/nki-calibration
 * (measured.tsv); `results` is the TSV the NKI front-end run wrote (bench/
 * nki_calibration.py), or NULL when it could not run, with `why` saying why. Then the
 * DMA streams of its DMA-bound kernels on their own (calib_nki.c). */
int calib_nki(const char *ref, const char *results, const char *why);

#endif
