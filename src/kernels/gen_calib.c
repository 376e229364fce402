/* SPDX-License-Identifier: MIT
 * gen_calib.c: the calibration kernels, rebuilt from published hardware measurements
 * (docs/simulator.md, "Calibration"): the NKI matmul tutorial's four BF16 versions on
 * trn1, the kernel-optimization guide's four FP32 versions (v2-v5) on trn2, and the
 * LayerNorm tutorial's two FP32 versions on trn1. Each follows its published loop nest
 * at the measured shape ([4096,8192] @ [8192,8192]; LayerNorm 4096 x 8192 by default).
 * The size S scales them for tests: matmul M = S/2, K = N = S; LayerNorm R = S/2, N = S.
 *
 * What the sources leave open (buffer counts, engines of copies) is fixed here and
 * written into the listing's header comment: loads go through rings of SBUF slots
 * (every load stream double-buffered when it fits, single-buffered otherwise, shrunk
 * to fit SBUF if even that does not), and a load waits for the last matmul reading its
 * slot's previous tile. PSUM evictions and SBUF accumulation run on VectorE.
 *
 * Matmul semaphores: S[1] lhsT loads, S[2] rhs loads (+16 each), S[3] matmuls, S[4]
 * PSUM banks released, S[5] stores (+16), S[6] output tiles ready (stores from ScalarE).
 * trn1 kernels use static DMA queues (loads triggered by SyncE, stores by VectorE);
 * trn2 kernels use nisa.dma_copy, hardware-DGE queues driven by SyncE (loads) and
 * ScalarE (stores). */
#include "common/compat.h"
#include "hw/hw.h"
#include "kernels/library.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { TK = 128, TM = 128, TN = 512, NBANK = 8 };
enum ver { V_TILED, V_HOIST, V_BLOCK, V_OPT };

/* Source lines of one matmul kernel; it1/it2 name the loop variables of the `iter`
 * nest the generator writes (outer two loops). */
struct mm_src {
	int func, load_a, load_b, mm, copy, store, memset, add;
	const char *it1, *it2;
	int it1_line, it2_line;
};

struct mm_def {
	const struct nx_kernel_def *def;
	enum ver v;
	bool fp32;      /* family B: FP32 in and out, hardware DGE, trn2 */
	bool quirk;     /* family A Opt 1: the lhsT strip is declared 512 wide */
	struct mm_src s;
};

/* A ring of SBUF slots that a stream of loads cycles through. */
struct ring {
	unsigned base, slot, n;    /* offset, bytes per slot, slots */
	unsigned *last;            /* per slot: matmul count after its last reader */
	unsigned seq;              /* loads issued */
};

static unsigned ring_take(struct ring *r, unsigned *wait)
{
	unsigned s = r->seq++ % r->n;

	*wait = r->last[s];
	return s;
}

struct mm_gen {
	struct nx_kgen g;
	const struct mm_def *d;
	unsigned esz;
	const char *dt;
	struct ring a, b;
	unsigned nload_a, nload_b, nmm, ntile, nstore;
	unsigned obase, oslot, nout;     /* output (or pack) slots */
	unsigned rbase;                  /* V_OPT: SBUF accumulators */
};

/* Loads one tile [rows k0.., cols c0..c0+w) of `t` into the next slot of ring r;
 * returns the slot. `line` is its source line. */
static unsigned load(struct mm_gen *m, struct ring *r, bool lhs, unsigned k0, unsigned c0,
		     unsigned w)
{
	unsigned wait, s = ring_take(r, &wait);
	char src[96], dst[64], extra[48];

	extra[0] = '\0';
	if (wait)
		snprintf(extra, sizeof(extra), "wait=S[3]>=%u", wait);
	snprintf(src, sizeof(src), "%s[%u:%u, %u:%u]", lhs ? "lhsT" : "rhs", k0, k0 + TK, c0,
		 c0 + w);
	snprintf(dst, sizeof(dst), "sbuf[0:128]+%u", r->base + s * r->slot);
	nx_kgen_dma(&m->g, lhs ? m->d->s.load_a : m->d->s.load_b, "Sync",
		    lhs ? "qSyncIO0" : "qSyncIO1", src, dst, extra);
	if (lhs)
		m->nload_a++;
	else
		m->nload_b++;
	return s;
}

/* One nc_matmul: stationary at A slot sa + aoff bytes (load number la), moving at B
 * slot sb + boff (load number lb), accumulating into PSUM bank of tile m->ntile. */
static void matmul(struct mm_gen *m, unsigned sa, unsigned aoff, unsigned la, unsigned sb,
		   unsigned boff, unsigned lb, bool first)
{
	unsigned bank = m->ntile % NBANK;

	if (first && m->ntile >= NBANK)
		nx_kgen_line(&m->g, "@%d Tensor event_semaphore wait=S[4]>=%u", m->d->s.mm,
			     m->ntile - NBANK + 1);
	nx_kgen_line(&m->g, "@%d Tensor ldweights src=sbuf[0:128]+%u:%s[%u] wait=S[1]>=%u",
		     m->d->s.mm, m->a.base + sa * m->a.slot + aoff, m->dt, TM, 16 * (la + 1));
	nx_kgen_line(&m->g, "@%d Tensor matmul src=sbuf[0:128]+%u:%s[%u] dst=psum[0:128]+%u:fp32[%u] "
		     "wait=S[2]>=%u sig=S[3]++%s", m->d->s.mm, m->b.base + sb * m->b.slot + boff,
		     m->dt, TN, bank * 2048, TN, 16 * (lb + 1), first ? "" : " acc");
	m->nmm++;
	m->a.last[sa] = m->nmm;
	m->b.last[sb] = m->nmm;
}

/* Stores output slot `os` (w columns) to result rows m0.., columns n0..; the data is
 * ready once S[ready_sem] >= ready (ScalarE stores only). */
static void store(struct mm_gen *m, unsigned os, unsigned m0, unsigned n0, unsigned w,
		  unsigned ready_sem, unsigned ready)
{
	char src[64], dst[96], extra[48];

	snprintf(src, sizeof(src), "sbuf[0:128]+%u", m->obase + os * m->oslot);
	snprintf(dst, sizeof(dst), "result[%u:%u, %u:%u]", m0, m0 + TM, n0, n0 + w);
	if (m->d->fp32) {
		snprintf(extra, sizeof(extra), "wait=S[%u]>=%u", ready_sem, ready);
		nx_kgen_dma(&m->g, m->d->s.store, "Scalar", "qScalarIO0", src, dst, extra);
	} else {
		nx_kgen_dma(&m->g, m->d->s.store, "Vector", "qVectorIO0", src, dst, "");
	}
	m->nstore++;
}

/* Waits (on VectorE) until output slot of store number `next` is free again. */
static void out_slot_wait(struct mm_gen *m, int line)
{
	if (m->nstore >= m->nout)
		nx_kgen_line(&m->g, "@%d Vector event_semaphore wait=S[5]>=%u", line,
			     16 * (m->nstore - m->nout + 1));
}

/* Copies the finished PSUM tile of m->ntile to an output slot and stores it. */
static void evict(struct mm_gen *m, unsigned m0, unsigned n0)
{
	unsigned bank = m->ntile % NBANK, os = m->nstore % m->nout;

	out_slot_wait(m, m->d->s.copy);
	nx_kgen_line(&m->g, "@%d Vector tensor_copy src=psum[0:128]+%u:fp32[%u] "
		     "dst=sbuf[0:128]+%u:%s[%u] wait=S[3]>=%u sig=S[4]++", m->d->s.copy,
		     bank * 2048, TN, m->obase + os * m->oslot, m->dt, TN, m->nmm);
	m->ntile++;
	store(m, os, m0, n0, TN, 4, m->ntile);
}

static bool fits(unsigned total, unsigned sbuf)
{
	return total <= sbuf;
}

static int gen_mm(const struct mm_def *d, const struct nx_kopts *o, unsigned s,
		  struct nx_strbuf *out, struct nx_err *err)
{
	const unsigned M = s / 2, N = s, K = s, mt = M / TM, nt = N / TN, kt = K / TK;
	const char *tgt = d->fp32 ? "trn2" : "trn1";
	const unsigned sbuf = (unsigned)nx_hw_get(tgt)->sbuf_partition_bytes;
	struct mm_gen m;
	unsigned bm = 1, bn = 1, bk = 1, fixed, total, acc, bmin;
	bool alias = false;

	(void)o;
	memset(&m, 0, sizeof(m));
	m.d = d;
	m.esz = d->fp32 ? 4 : 2;
	m.dt = d->fp32 ? "fp32" : "bf16";
	m.nout = 2;
	m.oslot = TN * m.esz;
	/* ring geometry: slot bytes and the tiles one declared buffer holds */
	switch (d->v) {
	case V_TILED:
		m.a.slot = TM * m.esz, m.a.n = 4;
		m.b.slot = TN * m.esz, m.b.n = 4;
		break;
	case V_HOIST:
		m.a.slot = (d->quirk ? TN : TM) * m.esz, m.a.n = kt;
		m.b.slot = TN * m.esz, m.b.n = kt;
		break;
	case V_BLOCK:
		bm = mt % 2 ? 1 : 2, bn = nt % 2 ? 1 : 2;
		m.a.slot = TM * m.esz, m.a.n = bm * kt;
		m.b.slot = TN * m.esz, m.b.n = bn * kt;
		break;
	case V_OPT:
		bm = mt < 16 ? mt : 16, bn = nt < 2 ? nt : 2, bk = kt < 8 ? kt : 8;
		while (mt % bm)
			bm--;
		while (nt % bn)
			bn--;
		while (kt % bk)
			bk--;
		m.a.slot = bm * TM * m.esz, m.a.n = bk;
		m.b.slot = bn * TN * m.esz, m.b.n = bk;
		m.oslot = bn * TN * m.esz;
		break;
	}
	acc = d->v == V_OPT ? (M / TM) * bn * TN * m.esz : 0;
	fixed = m.nout * m.oslot + acc;
	/* double-buffer both load streams if that fits (V_TILED keeps its four slots) */
	if (d->v != V_TILED &&
	    fits(fixed + 2 * (m.a.n * m.a.slot + m.b.n * m.b.slot), sbuf)) {
		m.a.n *= 2;
		m.b.n *= 2;
	}
	/* V_OPT: the pack tiles live only after the K loop, so they may share the lhsT
	 * ring's space; V_BLOCK reads each rhs tile in the k step that loads it, so its
	 * ring may shrink to two steps. No other ring shrinks below what one group needs. */
	if (d->v == V_OPT && !fits(fixed + m.a.n * m.a.slot + m.b.n * m.b.slot, sbuf) &&
	    m.nout * m.oslot <= m.a.n * m.a.slot) {
		alias = true;
		fixed = acc;
	}
	bmin = d->v == V_BLOCK ? 2 * bn : m.b.n;
	while (!fits(total = fixed + m.a.n * m.a.slot + m.b.n * m.b.slot, sbuf)) {
		if (m.b.n <= bmin)
			return nx_errf(err, NX_EUSAGE, "%s: size %u needs %u KiB of SBUF per "
				       "partition (%u KiB on %s)", d->def->name, s, total / 1024,
				       sbuf / 1024, tgt);
		m.b.n--;
	}
	m.a.base = 0;
	m.b.base = m.a.n * m.a.slot;
	m.obase = alias ? 0 : m.b.base + m.b.n * m.b.slot;
	m.rbase = alias ? m.b.base + m.b.n * m.b.slot : m.obase + m.nout * m.oslot;
	m.a.last = calloc(m.a.n, sizeof(unsigned));
	m.b.last = calloc(m.b.n, sizeof(unsigned));
	if (!m.a.last || !m.b.last)
		abort();

	nx_kgen_begin(&m.g, o, out, d->def, d->s.func);
	nx_kgen_line(&m.g, "# target %s; buffers: lhsT ring %u x %u B, rhs ring %u x %u B, "
		     "%u output slots of %u B%s%s; SBUF %u of %u KiB per partition", tgt, m.a.n,
		     m.a.slot, m.b.n, m.b.slot, m.nout, m.oslot,
		     alias ? " (in the lhsT ring after the K loop)" : "",
		     d->v == V_OPT ? ", SBUF accumulators" : "", total / 1024, sbuf / 1024);
	nx_kgen_line(&m.g, "# engines: loads SyncE, matmuls TensorE, PSUM evictions and SBUF "
		     "accumulation VectorE, stores %s", d->fp32 ? "ScalarE" : "VectorE");
	nx_kgen_line(&m.g, "tensor lhsT input %s %ux%u", m.dt, K, M);
	nx_kgen_line(&m.g, "tensor rhs input %s %ux%u", m.dt, K, N);
	nx_kgen_line(&m.g, "tensor result output %s %ux%u", m.dt, M, N);
	if (d->fp32) {
		nx_kgen_line(&m.g, "queue qSyncIO0 dynamic_hw Sync sem=1");
		nx_kgen_line(&m.g, "queue qSyncIO1 dynamic_hw Sync sem=2");
		nx_kgen_line(&m.g, "queue qScalarIO0 dynamic_hw Scalar sem=5");
	} else {
		nx_kgen_line(&m.g, "queue qSyncIO0 in Sync sem=1");
		nx_kgen_line(&m.g, "queue qSyncIO1 in Sync sem=2");
		nx_kgen_line(&m.g, "queue qVectorIO0 out Vector sem=5");
	}

	switch (d->v) {
	case V_TILED:
		for (unsigned i = 0; i < mt; i++) {
			for (unsigned j = 0; j < nt; j++) {
				nx_kgen_line(&m.g, "iter %s=%u@%d %s=%u@%d", d->s.it1, i, d->s.it1_line,
					     d->s.it2, j, d->s.it2_line);
				for (unsigned k = 0; k < kt; k++) {
					unsigned la = m.nload_a, lb = m.nload_b;
					unsigned sa = load(&m, &m.a, true, k * TK, i * TM, TM);
					unsigned sb = load(&m, &m.b, false, k * TK, j * TN, TN);

					matmul(&m, sa, 0, la, sb, 0, lb, k == 0);
				}
				evict(&m, i * TM, j * TN);
			}
		}
		break;
	case V_HOIST:
	case V_BLOCK: {
		unsigned *sa = calloc((size_t)bm * kt, sizeof(unsigned));
		unsigned *la = calloc((size_t)bm * kt, sizeof(unsigned));
		unsigned *sb = calloc((size_t)bn * kt, sizeof(unsigned));
		unsigned *lb = calloc((size_t)bn * kt, sizeof(unsigned));

		if (!sa || !la || !sb || !lb)
			abort();
		for (unsigned i = 0; i < mt / bm; i++) {
			nx_kgen_line(&m.g, "iter %s=%u@%d", d->s.it1, i, d->s.it1_line);
			for (unsigned x = 0; x < bm; x++)
				for (unsigned k = 0; k < kt; k++) {
					la[x * kt + k] = m.nload_a;
					sa[x * kt + k] = load(&m, &m.a, true, k * TK, (i * bm + x) * TM, TM);
				}
			for (unsigned j = 0; j < nt / bn; j++) {
				unsigned t0 = m.ntile;

				nx_kgen_line(&m.g, "iter %s=%u@%d %s=%u@%d", d->s.it1, i, d->s.it1_line,
					     d->s.it2, j, d->s.it2_line);
				if (d->v == V_HOIST) {
					for (unsigned k = 0; k < kt; k++) {
						lb[k] = m.nload_b;
						sb[k] = load(&m, &m.b, false, k * TK, j * TN, TN);
					}
					for (unsigned k = 0; k < kt; k++)
						matmul(&m, sa[k], 0, la[k], sb[k], 0, lb[k], k == 0);
					evict(&m, i * TM, j * TN);
					continue;
				}
				/* the block's bm x bn PSUM tiles accumulate side by side while
				 * the k loop streams the rhs tiles (affine loops: the compiler's
				 * order) */
				for (unsigned k = 0; k < kt; k++) {
					for (unsigned y = 0; y < bn; y++) {
						lb[y] = m.nload_b;
						sb[y] = load(&m, &m.b, false, k * TK, (j * bn + y) * TN, TN);
					}
					for (unsigned x = 0; x < bm; x++)
						for (unsigned y = 0; y < bn; y++) {
							m.ntile = t0 + x * bn + y;
							matmul(&m, sa[x * kt + k], 0, la[x * kt + k], sb[y], 0,
							       lb[y], k == 0);
						}
				}
				for (unsigned x = 0; x < bm; x++)
					for (unsigned y = 0; y < bn; y++) {
						m.ntile = t0 + x * bn + y;
						evict(&m, (i * bm + x) * TM, (j * bn + y) * TN);
					}
			}
		}
		free(sa);
		free(la);
		free(sb);
		free(lb);
		break;
	}
	case V_OPT: {
		const unsigned nmb = mt / bm, BN = bn * TN, rtile = TN * m.esz;
		unsigned sa[8], la[8], sb[8], lb[8], adds = 0;

		for (unsigned j = 0; j < nt / bn; j++) {
			nx_kgen_line(&m.g, "iter %s=%u@%d", d->s.it1, j, d->s.it1_line);
			for (unsigned r = 0; r < nmb * bm * bn; r++)
				nx_kgen_line(&m.g, "@%d Vector memset dst=sbuf[0:128]+%u:%s[%u] imm=0",
					     d->s.memset, m.rbase + r * rtile, m.dt, TN);
			for (unsigned kb = 0; kb < kt / bk; kb++) {
				nx_kgen_line(&m.g, "iter %s=%u@%d %s=%u@%d", d->s.it1, j, d->s.it1_line,
					     d->s.it2, kb, d->s.it2_line);
				for (unsigned k = 0; k < bk; k++) {
					lb[k] = m.nload_b;
					sb[k] = load(&m, &m.b, false, (kb * bk + k) * TK, j * BN, BN);
				}
				for (unsigned mb = 0; mb < nmb; mb++) {
					if (alias && j && !kb && !mb)
						nx_kgen_line(&m.g, "@%d Sync event_semaphore wait=S[5]>=%u",
							     d->s.load_a, 16 * m.nstore);
					for (unsigned k = 0; k < bk; k++) {
						la[k] = m.nload_a;
						sa[k] = load(&m, &m.a, true, (kb * bk + k) * TK,
							     mb * bm * TM, bm * TM);
					}
					for (unsigned y = 0; y < bn; y++)
						for (unsigned x = 0; x < bm; x++) {
							unsigned r = (mb * bm + x) * bn + y;

							for (unsigned k = 0; k < bk; k++)
								matmul(&m, sa[k], x * TM * m.esz, la[k], sb[k],
								       y * TN * m.esz, lb[k], k == 0);
							nx_kgen_line(&m.g, "@%d Vector tensor_tensor alu=add "
								     "src=sbuf[0:128]+%u:%s[%u] "
								     "src1=psum[0:128]+%u:fp32[%u] "
								     "dst=sbuf[0:128]+%u:%s[%u] wait=S[3]>=%u "
								     "sig=S[4]++", d->s.add,
								     m.rbase + r * rtile, m.dt, TN,
								     (m.ntile % NBANK) * 2048, TN,
								     m.rbase + r * rtile, m.dt, TN, m.nmm);
							m.ntile++;
							adds++;
						}
				}
			}
			for (unsigned mb = 0; mb < nmb; mb++)
				for (unsigned x = 0; x < bm; x++) {
					unsigned os = m.nstore % m.nout;

					out_slot_wait(&m, d->s.copy);
					for (unsigned y = 0; y < bn; y++)
						nx_kgen_line(&m.g, "@%d Vector tensor_copy "
							     "src=sbuf[0:128]+%u:%s[%u] "
							     "dst=sbuf[0:128]+%u:%s[%u]%s", d->s.copy,
							     m.rbase + ((mb * bm + x) * bn + y) * rtile,
							     m.dt, TN, m.obase + os * m.oslot + y * rtile,
							     m.dt, TN, y + 1 == bn ? " sig=S[6]++" : "");
					store(&m, os, (mb * bm + x) * TM, j * BN, BN, 6, m.nstore + 1);
				}
		}
		(void)adds;
		break;
	}
	}
	free(m.a.last);
	free(m.b.last);
	return 0;
}

/* ---- the eight matmul kernels ---- */

#define MM_KLINES(...) static const struct nx_kline __VA_ARGS__

MM_KLINES(a_tiled_lines[]) = {
	{ 17, "def calib_trn1_matmul_tiled" }, { 26, "nl.load(lhsT" }, { 27, "nl.load(rhs" },
	{ 28, "nisa.nc_matmul" }, { 29, "nl.copy(acc" }, { 30, "nl.store(result" },
};
MM_KLINES(a_hoist_lines[]) = {
	{ 18, "def calib_trn1_matmul_hoist" }, { 27, "nl.load(lhsT" }, { 31, "nl.load(rhs" },
	{ 34, "nisa.nc_matmul" }, { 35, "nl.copy(acc" }, { 36, "nl.store(result" },
};
MM_KLINES(a_block_lines[]) = {
	{ 18, "def calib_trn1_matmul_block" }, { 30, "nl.load(lhsT" }, { 35, "nl.load(rhs" },
	{ 40, "nisa.nc_matmul" }, { 41, "nl.copy(acc" }, { 44, "nl.store(result" },
};
MM_KLINES(a_opt_lines[]) = {
	{ 20, "def calib_trn1_matmul_opt" }, { 33, "nl.load(rhs" }, { 37, "nl.load(lhsT" },
	{ 42, "nisa.nc_matmul" }, { 43, "nl.add(res" }, { 48, "nl.copy(res" },
	{ 50, "nl.store(result" }, { 29, "nl.zeros((M // BM" },
};
MM_KLINES(b_v2_lines[]) = {
	{ 17, "def calib_trn2_matmul_v2" }, { 28, "dma_copy(dst=a" }, { 29, "dma_copy(dst=b" },
	{ 30, "nisa.nc_matmul" }, { 32, "tensor_copy(dst=s" }, { 33, "dma_copy(dst=result" },
};
MM_KLINES(b_v3_lines[]) = {
	{ 17, "def calib_trn2_matmul_v3" }, { 26, "dma_copy(dst=a[k]" }, { 30, "dma_copy(dst=b[k]" },
	{ 33, "nisa.nc_matmul" }, { 35, "tensor_copy(dst=s" }, { 36, "dma_copy(dst=result" },
};
MM_KLINES(b_v4_lines[]) = {
	{ 16, "def calib_trn2_matmul_v4" }, { 28, "dma_copy(dst=a[bm, k]" },
	{ 33, "dma_copy(dst=b[bn, k]" }, { 38, "nisa.nc_matmul" }, { 40, "tensor_copy(dst=s" },
	{ 43, "dma_copy(dst=result" },
};
MM_KLINES(b_v5_lines[]) = {
	{ 21, "def calib_trn2_matmul_v5" }, { 36, "dma_copy(dst=b[bk]" },
	{ 40, "dma_copy(dst=a[bk]" }, { 45, "nisa.nc_matmul" }, { 46, "nisa.tensor_tensor" },
	{ 51, "tensor_copy(dst=pack" }, { 53, "dma_copy(dst=result" }, { 32, "nisa.memset" },
};

/* func, load_a, load_b, mm, copy, store, memset, add; loop variables */
static const struct mm_def mm_defs[] = {
	{ &nx_kernel_calib_trn1_matmul_tiled, V_TILED, false, false,
	  { 17, 26, 27, 28, 29, 30, 0, 0, "m", "n", 22, 23 } },
	{ &nx_kernel_calib_trn1_matmul_hoist, V_HOIST, false, true,
	  { 18, 27, 31, 34, 35, 36, 0, 0, "m", "n", 24, 28 } },
	{ &nx_kernel_calib_trn1_matmul_block, V_BLOCK, false, false,
	  { 18, 30, 35, 40, 41, 44, 0, 0, "mb", "nb", 26, 31 } },
	{ &nx_kernel_calib_trn1_matmul_opt, V_OPT, false, false,
	  { 20, 37, 33, 42, 48, 50, 29, 43, "nb", "kb", 28, 30 } },
	{ &nx_kernel_calib_trn2_matmul_v2, V_TILED, true, false,
	  { 17, 28, 29, 30, 32, 33, 0, 0, "m", "n", 22, 23 } },
	{ &nx_kernel_calib_trn2_matmul_v3, V_HOIST, true, false,
	  { 17, 26, 30, 33, 35, 36, 0, 0, "m", "n", 23, 27 } },
	{ &nx_kernel_calib_trn2_matmul_v4, V_BLOCK, true, false,
	  { 16, 28, 33, 38, 40, 43, 0, 0, "mb", "nb", 24, 29 } },
	{ &nx_kernel_calib_trn2_matmul_v5, V_OPT, true, false,
	  { 21, 40, 36, 45, 51, 53, 32, 46, "nb", "kb", 29, 33 } },
};

static int gen_mm_named(const struct nx_kernel_def *k, const struct nx_kopts *o, unsigned s,
			struct nx_strbuf *out, struct nx_err *err)
{
	for (size_t i = 0; i < NX_ARRAY_SIZE(mm_defs); i++)
		if (mm_defs[i].def == k)
			return gen_mm(&mm_defs[i], o, s, out, err);
	return nx_errf(err, NX_EUSAGE, "%s: no calibration generator", k->name);
}

#define MM_GEN(fn, kdef)                                                                  \
	static int fn(const struct nx_kopts *o, unsigned s, struct nx_strbuf *out,          \
		      struct nx_err *err)                                                    \
	{                                                                                    \
		return gen_mm_named(&kdef, o, s, out, err);                                  \
	}

MM_GEN(gen_a_tiled, nx_kernel_calib_trn1_matmul_tiled)
MM_GEN(gen_a_hoist, nx_kernel_calib_trn1_matmul_hoist)
MM_GEN(gen_a_block, nx_kernel_calib_trn1_matmul_block)
MM_GEN(gen_a_opt, nx_kernel_calib_trn1_matmul_opt)
MM_GEN(gen_b_v2, nx_kernel_calib_trn2_matmul_v2)
MM_GEN(gen_b_v3, nx_kernel_calib_trn2_matmul_v3)
MM_GEN(gen_b_v4, nx_kernel_calib_trn2_matmul_v4)
MM_GEN(gen_b_v5, nx_kernel_calib_trn2_matmul_v5)

#define MM_KERNEL(var, nm, sum, fn, ln)                                              \
	const struct nx_kernel_def var = {                                                   \
		.name = nm, .summary = sum, .source = "kernels/" nm ".py",                   \
		.default_size = 8192, .min_size = 1024, .size_multiple = 1024, .gen = fn,    \
		.lines = ln, .nlines = NX_ARRAY_SIZE(ln),                                    \
	}

MM_KERNEL(nx_kernel_calib_trn1_matmul_tiled, "calib_trn1_matmul_tiled",
	  "calibration: NKI matmul tutorial 'Tiled', BF16 [4096,8192]@[8192,8192] on trn1 "
	  "(measured 51.80 ms)", gen_a_tiled, a_tiled_lines);
MM_KERNEL(nx_kernel_calib_trn1_matmul_hoist, "calib_trn1_matmul_hoist",
	  "calibration: NKI matmul tutorial 'Opt 1' hoisted loads, BF16 on trn1 (measured "
	  "42.96 ms)", gen_a_hoist, a_hoist_lines);
MM_KERNEL(nx_kernel_calib_trn1_matmul_block, "calib_trn1_matmul_block",
	  "calibration: NKI matmul tutorial 'Opt 2' 2x2 blocking, BF16 on trn1 (measured "
	  "22.07 ms)", gen_a_block, a_block_lines);
MM_KERNEL(nx_kernel_calib_trn1_matmul_opt, "calib_trn1_matmul_opt",
	  "calibration: NKI matmul tutorial 'Opt 3' fully optimised, BF16 on trn1 (measured "
	  "6.97 ms)", gen_a_opt, a_opt_lines);
MM_KERNEL(nx_kernel_calib_trn2_matmul_v2, "calib_trn2_matmul_v2",
	  "calibration: NKI kernel-optimization guide v2 (tiled), FP32 [4096,8192]@[8192,8192] "
	  "on trn2 (measured 39.89 ms)", gen_b_v2, b_v2_lines);
MM_KERNEL(nx_kernel_calib_trn2_matmul_v3, "calib_trn2_matmul_v3",
	  "calibration: kernel-optimization guide v3 hoisted loads, FP32 on trn2 (measured "
	  "28.20 ms)", gen_b_v3, b_v3_lines);
MM_KERNEL(nx_kernel_calib_trn2_matmul_v4, "calib_trn2_matmul_v4",
	  "calibration: kernel-optimization guide v4 2x2 blocking, FP32 on trn2 (measured "
	  "28.41 ms)", gen_b_v4, b_v4_lines);
MM_KERNEL(nx_kernel_calib_trn2_matmul_v5, "calib_trn2_matmul_v5",
	  "calibration: kernel-optimization guide v5 fully optimised, FP32 on trn2 (measured "
	  "28.30 ms)", gen_b_v5, b_v5_lines);

/* ---- LayerNorm, trn1 FP32: R = S/2 rows of N = S. Semaphores: S[1] x loads, S[2]
 * squares (v1, VectorE), S[3] their sums (v1, ScalarE), S[4] variances, S[5] rstd, S[6] gamma/beta
 * loads, S[8] stores (+16). x tiles sit in a ring of two 128 x N slots; y is computed
 * in place and stored from that slot. ---- */

static const struct nx_kline ln1_lines[] = {
	{ 16, "def calib_trn1_layernorm_v1" }, { 19, "nl.load(gamma" }, { 20, "nl.load(beta" },
	{ 23, "nl.load(x" }, { 24, "nl.mean(xt" }, { 25, "nl.square(xt)" }, { 26, "nl.mean(sq" },
	{ 27, "nl.rsqrt" }, { 28, "nl.subtract(xt" }, { 29, "nl.multiply(y, rstd)" },
	{ 30, "nl.multiply(y, g)" }, { 31, "nl.add(y, b)" }, { 32, "nl.store(out" },
};
static const struct nx_kline ln2_lines[] = {
	{ 17, "def calib_trn1_layernorm_v2" }, { 20, "nl.load(gamma" }, { 21, "nl.load(beta" },
	{ 24, "nl.load(x" }, { 27, "nisa.bn_stats" }, { 28, "nisa.bn_aggr" }, { 29, "nl.rsqrt" },
	{ 30, "nisa.tensor_scalar(xt" }, { 31, "nl.multiply(y, g)" }, { 32, "nl.add(y, b)" },
	{ 33, "nl.store(out" },
};

static int gen_ln(const struct nx_kernel_def *def, bool v2, const struct nx_kopts *o,
		  unsigned s, struct nx_strbuf *out, struct nx_err *err)
{
	const unsigned R = s / 2, N = s, nr = R / 128, row = N * 4, nch = N / 512;
	const unsigned G = 0, B = row, X = 2 * row, SQ = X + 2 * row, ST = SQ + (v2 ? 0 : row);
	const unsigned total = ST + 6 * nch * 4 + 64;
	const int L_x = v2 ? 24 : 23, L_st = v2 ? 33 : 32, L_g = v2 ? 31 : 30, L_b = v2 ? 32 : 31;
	struct nx_kgen g;
	char src[96], dst[64], extra[48];

	if (total > nx_hw_trn1.sbuf_partition_bytes)
		return nx_errf(err, NX_EUSAGE, "%s: size %u needs %u KiB of SBUF per partition "
			       "(192 KiB on trn1)", def->name, s, total / 1024);
	nx_kgen_begin(&g, o, out, def, v2 ? 17 : 16);
	nx_kgen_line(&g, "# target trn1; buffers: x ring 2 x %u B (y in place), gamma and beta "
		     "%u B each%s; SBUF %u of 192 KiB per partition", row, row,
		     v2 ? "" : ", one squares tile", total / 1024);
	nx_kgen_line(&g, "# engines: loads SyncE, elementwise work and stores VectorE, "
		     "%s ScalarE", v2 ? "rsqrt" : "mean of squares and rsqrt");
	nx_kgen_line(&g, "tensor x input fp32 %ux%u", R, N);
	nx_kgen_line(&g, "tensor gamma input fp32 128x%u", N);
	nx_kgen_line(&g, "tensor beta input fp32 128x%u", N);
	nx_kgen_line(&g, "tensor out output fp32 %ux%u", R, N);
	nx_kgen_line(&g, "queue qSyncIO0 in Sync sem=1");
	nx_kgen_line(&g, "queue qSyncIO1 in Sync sem=6");
	nx_kgen_line(&g, "queue qVectorIO0 out Vector sem=8");
	/* gamma and beta arrive broadcast to the 128 partitions: 128 rows of N each */
	snprintf(src, sizeof(src), "gamma[0:128, 0:%u]", N);
	snprintf(dst, sizeof(dst), "sbuf[0:128]+%u", G);
	nx_kgen_dma(&g, v2 ? 20 : 19, "Sync", "qSyncIO1", src, dst, "");
	snprintf(src, sizeof(src), "beta[0:128, 0:%u]", N);
	snprintf(dst, sizeof(dst), "sbuf[0:128]+%u", B);
	nx_kgen_dma(&g, v2 ? 21 : 20, "Sync", "qSyncIO1", src, dst, "");
	for (unsigned i = 0; i < nr; i++) {
		unsigned x = X + (i % 2) * row;

		nx_kgen_line(&g, "iter i=%u@%d", i, v2 ? 23 : 22);
		extra[0] = '\0';
		if (i >= 2)
			snprintf(extra, sizeof(extra), "wait=S[8]>=%u", 16 * (i - 1));
		snprintf(src, sizeof(src), "x[%u:%u, 0:%u]", i * 128, i * 128 + 128, N);
		snprintf(dst, sizeof(dst), "sbuf[0:128]+%u", x);
		nx_kgen_dma(&g, L_x, "Sync", "qSyncIO0", src, dst, extra);
		snprintf(extra, sizeof(extra), " wait=S[1]>=%u", 16 * (i + 1));
		if (!v2) {
			/* the tutorial's per-tile costs: mean N VectorE cycles; variance N
			 * ScalarE + 2N VectorE (x*x on VectorE, its mean on ScalarE) */
			nx_kgen_line(&g, "@24 Vector tensor_reduce alu=add src=sbuf[0:128]+%u:fp32[%u] "
				     "dst=sbuf[0:128]+%u:fp32[1]%s", x, N, ST, extra);
			if (i)
				nx_kgen_line(&g, "@25 Vector event_semaphore wait=S[3]>=%u", i);
			nx_kgen_line(&g, "@25 Vector tensor_tensor alu=mul src=sbuf[0:128]+%u:fp32[%u] "
				     "src1=sbuf[0:128]+%u:fp32[%u] dst=sbuf[0:128]+%u:fp32[%u] sig=S[2]++",
				     x, N, x, N, SQ, N);
			nx_kgen_line(&g, "@26 Scalar activate act=identity src=sbuf[0:128]+%u:fp32[%u] "
				     "dst=sbuf[0:128]+%u:fp32[%u] reduce_op=add "
				     "reduce_res=sbuf[0:128]+%u:fp32[1] wait=S[2]>=%u sig=S[3]++", SQ, N,
				     SQ, N, ST + 4, i + 1);
			nx_kgen_line(&g, "@26 Vector tensor_tensor alu=mul src=sbuf[0:128]+%u:fp32[1] "
				     "src1=sbuf[0:128]+%u:fp32[1] dst=sbuf[0:128]+%u:fp32[1]", ST, ST,
				     ST + 8);
			nx_kgen_line(&g, "@26 Vector tensor_tensor alu=sub src=sbuf[0:128]+%u:fp32[1] "
				     "src1=sbuf[0:128]+%u:fp32[1] dst=sbuf[0:128]+%u:fp32[1] "
				     "wait=S[3]>=%u sig=S[4]++", ST + 4, ST + 8, ST + 12, i + 1);
			nx_kgen_line(&g, "@27 Scalar activate act=rsqrt src=sbuf[0:128]+%u:fp32[1] "
				     "dst=sbuf[0:128]+%u:fp32[1] wait=S[4]>=%u sig=S[5]++", ST + 12,
				     ST + 16, i + 1);
			nx_kgen_line(&g, "@28 Vector tensor_scalar alu=sub src=sbuf[0:128]+%u:fp32[%u] "
				     "dst=sbuf[0:128]+%u:fp32[%u]", x, N, x, N);
			nx_kgen_line(&g, "@29 Vector tensor_scalar alu=mul src=sbuf[0:128]+%u:fp32[%u] "
				     "dst=sbuf[0:128]+%u:fp32[%u] wait=S[5]>=%u", x, N, x, N, i + 1);
		} else {
			for (unsigned j = 0; j < nch; j++)
				nx_kgen_line(&g, "@27 Vector bn_stats src=sbuf[0:128]+%u:fp32[512] "
					     "dst=sbuf[0:128]+%u:fp32[6]%s", x + j * 2048,
					     ST + 64 + j * 24, j ? "" : extra);
			nx_kgen_line(&g, "@28 Vector bn_aggr src=sbuf[0:128]+%u:fp32[%u] "
				     "dst=sbuf[0:128]+%u:fp32[2] sig=S[4]++", ST + 64, 6 * nch, ST);
			nx_kgen_line(&g, "@29 Scalar activate act=rsqrt src=sbuf[0:128]+%u:fp32[1] "
				     "dst=sbuf[0:128]+%u:fp32[1] wait=S[4]>=%u sig=S[5]++", ST + 4,
				     ST + 8, i + 1);
			/* (x - mean) * rstd: one tensor_scalar with two operations */
			nx_kgen_line(&g, "@30 Vector tensor_scalar alu=sub operand0=sbuf[0:128]+%u:fp32[1] "
				     "op1=mul operand1=sbuf[0:128]+%u:fp32[1] src=sbuf[0:128]+%u:fp32[%u] "
				     "dst=sbuf[0:128]+%u:fp32[%u] wait=S[5]>=%u", ST, ST + 8, x, N, x, N,
				     i + 1);
		}
		nx_kgen_line(&g, "@%d Vector tensor_tensor alu=mul src=sbuf[0:128]+%u:fp32[%u] "
			     "src1=sbuf[0:128]+%u:fp32[%u] dst=sbuf[0:128]+%u:fp32[%u]%s", L_g, x, N, G,
			     N, x, N, i ? "" : " wait=S[6]>=32");
		nx_kgen_line(&g, "@%d Vector tensor_tensor alu=add src=sbuf[0:128]+%u:fp32[%u] "
			     "src1=sbuf[0:128]+%u:fp32[%u] dst=sbuf[0:128]+%u:fp32[%u]", L_b, x, N, B,
			     N, x, N);
		snprintf(src, sizeof(src), "sbuf[0:128]+%u", x);
		snprintf(dst, sizeof(dst), "out[%u:%u, 0:%u]", i * 128, i * 128 + 128, N);
		nx_kgen_dma(&g, L_st, "Vector", "qVectorIO0", src, dst, "");
	}
	return 0;
}

static int gen_ln1(const struct nx_kopts *o, unsigned s, struct nx_strbuf *out,
		   struct nx_err *err)
{
	return gen_ln(&nx_kernel_calib_trn1_layernorm_v1, false, o, s, out, err);
}

static int gen_ln2(const struct nx_kopts *o, unsigned s, struct nx_strbuf *out,
		   struct nx_err *err)
{
	return gen_ln(&nx_kernel_calib_trn1_layernorm_v2, true, o, s, out, err);
}

const struct nx_kernel_def nx_kernel_calib_trn1_layernorm_v1 = {
	.name = "calib_trn1_layernorm_v1",
	.summary = "calibration: NKI LayerNorm tutorial v1, FP32 4096 x 8192 on trn1 "
		   "(measured p50 2311 us)",
	.source = "kernels/calib_trn1_layernorm_v1.py",
	.default_size = 8192, .min_size = 1024, .size_multiple = 1024,
	.gen = gen_ln1,
	.lines = ln1_lines, .nlines = NX_ARRAY_SIZE(ln1_lines),
};

const struct nx_kernel_def nx_kernel_calib_trn1_layernorm_v2 = {
	.name = "calib_trn1_layernorm_v2",
	.summary = "calibration: NKI LayerNorm tutorial v2 (bn_stats/bn_aggr), FP32 4096 x 8192 "
		   "on trn1 (measured p50 1969 us)",
	.source = "kernels/calib_trn1_layernorm_v2.py",
	.default_size = 8192, .min_size = 1024, .size_multiple = 1024,
	.gen = gen_ln2,
	.lines = ln2_lines, .nlines = NX_ARRAY_SIZE(ln2_lines),
};
