/* SPDX-License-Identifier: MIT
 * gen_matmul.c: generators of the three BF16 matmul kernels C = lhsT.T @ rhs
 * (kernels/matmul_v0.py, matmul_v1.py, matmul_v2.py), size S x S x S.
 *
 * Semaphores: S[1] lhsT loads (+16 per load), S[2] rhs loads (+16), S[3] matmuls
 * done, S[4] PSUM->SBUF copies done, S[5] output stores (+16). The Sync engine
 * triggers loads, the Tensor engine multiplies into PSUM banks used round-robin, the
 * Vector engine copies each finished tile to SBUF and triggers its store. */
#include "common/compat.h"
#include "hw/hw.h"
#include "kernels/library.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { TK = 128, TM = 128, TN = 512 };
/* PSUM: the output tiles take its 8 banks of 2 KiB per partition (512 fp32) in turn */
enum { PSUM_BANKS = 8, PSUM_BANK_BYTES = 2048 };
/* V0's SBUF layout per partition (byte offsets): R = 4 lhsT slots of TM bf16 from 0,
 * 4 rhs slots of TN bf16 from 4 KiB, the two output tiles of TN bf16 from 16 KiB */
enum { V0_LHST_AT = 0, V0_RHS_AT = 4096, V0_OUT_AT = 16384 };

static void header(struct nx_kgen *g, unsigned s)
{
	nx_kgen_line(g, "tensor lhsT input bf16 %ux%u", s, s);
	nx_kgen_line(g, "tensor rhs input bf16 %ux%u", s, s);
	nx_kgen_line(g, "tensor result output bf16 %ux%u", s, s);
	nx_kgen_line(g, "queue qSyncIO0 in Sync sem=1");
	nx_kgen_line(g, "queue qSyncIO1 in Sync sem=2");
	nx_kgen_line(g, "queue qVectorIO0 out Vector sem=5");
}

/* The Vector side of a finished output tile t (rows m0.., columns n0..) whose last
 * matmul is number mm_end, sitting in PSUM bank `bank`; `oslot` is its SBUF slot. */
static void tile_out(struct nx_kgen *g, int copy_line, int store_line, unsigned t,
		     unsigned mm_end, unsigned bank, unsigned obase, unsigned m0, unsigned n0)
{
	unsigned oof = obase + (t % 2) * TN * 2;
	char src[128], dst[128];

	if (t >= 2)
		nx_kgen_line(g, "@%d Vector event_semaphore wait=S[5]>=%u", copy_line, 16 * (t - 1));
	nx_kgen_line(g, "@%d Vector tensor_copy src=psum[0:128]+%u:fp32[%u] dst=sbuf[0:128]+%u:bf16[%u] "
		     "wait=S[3]>=%u sig=S[4]++", copy_line, bank * PSUM_BANK_BYTES, TN, oof, TN,
		     mm_end);
	snprintf(src, sizeof(src), "sbuf[0:128]+%u", oof);
	snprintf(dst, sizeof(dst), "result[%u:%u, %u:%u]", m0, m0 + TM, n0, n0 + TN);
	nx_kgen_dma(g, store_line, "Vector", "qVectorIO0", src, dst, "");
}

/* ---- V0 ---- */

static const struct nx_kline v0_lines[] = {
	{ 18, "def matmul_v0" }, { 27, "nl.load(lhsT" }, { 28, "nl.load(rhs" },
	{ 29, "nisa.nc_matmul" }, { 30, "nl.copy(acc" }, { 31, "nl.store(result" },
};

static int gen_v0(const struct nx_kopts *o, unsigned s, struct nx_strbuf *out, struct nx_err *err)
{
	const unsigned R = 4, mt = s / TM, nt = s / TN, kt = s / TK;
	const unsigned lbase = V0_LHST_AT, rbase = V0_RHS_AT, obase = V0_OUT_AT;
	struct nx_kgen g;
	unsigned i = 0, t = 0;
	char src[128], dst[128], extra[64];

	(void)err;
	nx_kgen_begin(&g, o, out, &nx_kernel_matmul_v0, v0_lines[0].line);
	header(&g, s);
	for (unsigned m = 0; m < mt; m++) {
		for (unsigned n = 0; n < nt; n++, t++) {
			unsigned bank = t % PSUM_BANKS;

			nx_kgen_line(&g, "iter m=%u@23 n=%u@24", m, n);
			for (unsigned k = 0; k < kt; k++, i++) {
				unsigned slot = i % R;

				extra[0] = '\0';
				if (i >= R)
					snprintf(extra, sizeof(extra), "wait=S[3]>=%u", i - R + 1);
				snprintf(src, sizeof(src), "lhsT[%u:%u, %u:%u]", k * TK, (k + 1) * TK,
					 m * TM, (m + 1) * TM);
				snprintf(dst, sizeof(dst), "sbuf[0:128]+%u", lbase + slot * TM * 2);
				nx_kgen_dma(&g, 27, "Sync", "qSyncIO0", src, dst, extra);
				snprintf(src, sizeof(src), "rhs[%u:%u, %u:%u]", k * TK, (k + 1) * TK,
					 n * TN, (n + 1) * TN);
				snprintf(dst, sizeof(dst), "sbuf[0:128]+%u", rbase + slot * TN * 2);
				nx_kgen_dma(&g, 28, "Sync", "qSyncIO1", src, dst, "");
				if (k == 0 && t >= PSUM_BANKS)
					nx_kgen_line(&g, "@29 Tensor event_semaphore wait=S[4]>=%u",
						     t - (PSUM_BANKS - 1));
				nx_kgen_line(&g, "@29 Tensor ldweights src=sbuf[0:128]+%u:bf16[%u] "
					     "wait=S[1]>=%u", lbase + slot * TM * 2, TM, 16 * (i + 1));
				nx_kgen_line(&g, "@29 Tensor matmul src=sbuf[0:128]+%u:bf16[%u] "
					     "dst=psum[0:128]+%u:fp32[%u] wait=S[2]>=%u sig=S[3]++%s",
					     rbase + slot * TN * 2, TN, bank * PSUM_BANK_BYTES, TN,
					     16 * (i + 1),
					     k ? " acc" : "");
			}
			tile_out(&g, 30, 31, t, i, bank, obase, m * TM, n * TN);
		}
	}
	return 0;
}

const struct nx_kernel_def nx_kernel_matmul_v0 = {
	.name = "matmul_v0",
	.summary = "naive BF16 matmul: one lhsT and one rhs tile load per matmul (DMA-bound)",
	.source = "kernels/matmul_v0.py",
	.default_size = 4096, .min_size = 512, .size_multiple = 512,
	.gen = gen_v0,
	.lines = v0_lines, .nlines = NX_ARRAY_SIZE(v0_lines),
};

/* ---- V1 and V2: 8 x 2 tile blocks ---- */

struct blk_lines {
	int func, load_l, load_r, mm, copy, store;
};

/* The function, the loads, the matmul, the copy and the store, then the M and N block
 * loops (for the `iter` lines). */
static const struct nx_kline v1_lines[] = {
	{ 21, "def matmul_v1" }, { 35, "nl.load(lhsT" }, { 40, "nl.load(rhs" },
	{ 45, "nisa.nc_matmul" }, { 48, "nl.copy(acc" }, { 49, "nl.store(result" },
	{ 31, "for mb in" }, { 36, "for nb in" },
};
static const struct nx_kline v2_lines[] = {
	{ 21, "def matmul_v2" }, { 30, "nl.load(lhsT" }, { 34, "nl.load(rhs" },
	{ 39, "nisa.nc_matmul" }, { 43, "nl.copy(acc" }, { 44, "nl.store(result" },
	{ 27, "for mb in" }, { 31, "for nb in" },
};

/* A Sync trigger's wait for the matmul count to reach n ("wait=S[3]>=n" in extra), left
 * out when an earlier trigger of the engine waited for as much (*known). */
static void wait_after(char *extra, size_t size, unsigned *known, unsigned n)
{
	if (n <= *known)
		return;
	snprintf(extra, size, "wait=S[3]>=%u", n);
	*known = n;
}

/* The largest divisor of n that is at most cap (block sizes must tile the matrix). */
static unsigned divisor_upto(unsigned n, unsigned cap)
{
	unsigned d = cap < n ? cap : n;

	while (n % d)
		d--;
	return d;
}

static int gen_blocked(const struct nx_kernel_def *def, const struct nx_kline *L, bool rows,
		       const struct nx_kopts *o, unsigned s, struct nx_strbuf *out,
		       struct nx_err *err)
{
	const unsigned mt = s / TM, nt = s / TN, kt = s / TK;
	const unsigned bm = divisor_upto(mt, 8), bn = divisor_upto(nt, 2);
	const unsigned nmb = mt / bm, nnb = nt / bn, per_block = bm * bn * kt;
	const unsigned lsize = kt * bm * TM * 2, rsize = kt * bn * TN * 2, osize = 2 * TN * 2;
	const unsigned sbuf = (unsigned)nx_hw_get(o->target)->sbuf_partition_bytes;
	unsigned nslots = rows && lsize + 2 * rsize + osize <= sbuf ? 2 : 1;
	unsigned nl = 0, nr = 0, nmm = 0, t = 0, b = 0, known = 0;
	struct nx_kgen g;
	char src[128], dst[128], extra[64];

	if (lsize + rsize + osize > sbuf)
		return nx_errf(err, NX_EUSAGE, "%s: size %u needs %u KiB of SBUF per partition "
			       "(%u KiB on %s)", def->name, s, (lsize + rsize + osize) / 1024,
			       sbuf / 1024, o->target ? o->target : "trn2");
	nx_kgen_begin(&g, o, out, def, L[0].line);
	header(&g, s);
	for (unsigned mb = 0; mb < nmb; mb++) {
		unsigned l0 = nl;

		nx_kgen_line(&g, "iter mb=%u@%d", mb, L[6].line);
		/* lhsT block, kept for all N blocks of this M block: a tile is overwritten
		 * once the previous M block's last matmul that reads it is done */
		for (unsigned k = 0; k < kt; k++) {
			for (unsigned i = 0; i < (rows ? 1 : bm); i++) {
				unsigned m0 = (mb * bm + i) * TM, w = rows ? bm * TM : TM;
				unsigned last = (rows ? bm - 1 : i) * bn + bn - 1;

				extra[0] = '\0';
				if (mb)
					wait_after(extra, sizeof(extra), &known,
						   (mb * nnb - 1) * per_block + last * kt + k + 1);
				snprintf(src, sizeof(src), "lhsT[%u:%u, %u:%u]", k * TK, (k + 1) * TK,
					 m0, m0 + w);
				snprintf(dst, sizeof(dst), "sbuf[0:128]+%u", k * bm * TM * 2 + i * TM * 2);
				nx_kgen_dma(&g, L[1].line, "Sync", "qSyncIO0", src, dst, extra);
				nl++;
			}
		}
		for (unsigned nb = 0; nb < nnb; nb++, b++) {
			unsigned slot = b % nslots, rb = lsize + slot * rsize, r0 = nr;

			nx_kgen_line(&g, "iter mb=%u@%d nb=%u@%d", mb, L[6].line, nb, L[7].line);
			/* the rhs block's slot: a tile is overwritten once the last matmul that
			 * read it in the block before in this slot is done */
			for (unsigned k = 0; k < kt; k++) {
				for (unsigned j = 0; j < (rows ? 1 : bn); j++) {
					unsigned n0 = (nb * bn + j) * TN, w = rows ? bn * TN : TN;
					unsigned last = (bm - 1) * bn + (rows ? bn - 1 : j);

					extra[0] = '\0';
					if (b >= nslots)
						wait_after(extra, sizeof(extra), &known,
							   (b - nslots) * per_block + last * kt + k + 1);
					snprintf(src, sizeof(src), "rhs[%u:%u, %u:%u]", k * TK,
						 (k + 1) * TK, n0, n0 + w);
					snprintf(dst, sizeof(dst), "sbuf[0:128]+%u",
						 rb + k * bn * TN * 2 + j * TN * 2);
					nx_kgen_dma(&g, L[2].line, "Sync", "qSyncIO1", src, dst, extra);
					nr++;
				}
			}
			for (unsigned i = 0; i < bm; i++) {
				for (unsigned j = 0; j < bn; j++, t++) {
					unsigned bank = t % PSUM_BANKS;

					if (t >= PSUM_BANKS)
						nx_kgen_line(&g, "@%d Tensor event_semaphore wait=S[4]>=%u",
							     L[3].line, t - (PSUM_BANKS - 1));
					for (unsigned k = 0; k < kt; k++) {
						unsigned lj = l0 + (rows ? k : k * bm + i);
						unsigned rj = r0 + (rows ? k : k * bn + j);

						nx_kgen_line(&g, "@%d Tensor ldweights src=sbuf[0:128]+%u:bf16[%u] "
							     "wait=S[1]>=%u", L[3].line,
							     k * bm * TM * 2 + i * TM * 2, TM, 16 * (lj + 1));
						nx_kgen_line(&g, "@%d Tensor matmul src=sbuf[0:128]+%u:bf16[%u] "
							     "dst=psum[0:128]+%u:fp32[%u] wait=S[2]>=%u "
							     "sig=S[3]++%s", L[3].line,
							     rb + k * bn * TN * 2 + j * TN * 2, TN,
							     bank * PSUM_BANK_BYTES,
							     TN, 16 * (rj + 1), k ? " acc" : "");
						nmm++;
					}
					tile_out(&g, L[4].line, L[5].line, t, nmm, bank,
						 lsize + nslots * rsize, (mb * bm + i) * TM,
						 (nb * bn + j) * TN);
				}
			}
		}
	}
	return 0;
}

static int gen_v1(const struct nx_kopts *o, unsigned s, struct nx_strbuf *out, struct nx_err *err)
{
	return gen_blocked(&nx_kernel_matmul_v1, v1_lines, false, o, s, out, err);
}

static int gen_v2(const struct nx_kopts *o, unsigned s, struct nx_strbuf *out, struct nx_err *err)
{
	return gen_blocked(&nx_kernel_matmul_v2, v2_lines, true, o, s, out, err);
}

const struct nx_kernel_def nx_kernel_matmul_v1 = {
	.name = "matmul_v1",
	.summary = "blocked BF16 matmul: 8x2 tile blocks reused from SBUF, one tile per DMA",
	.source = "kernels/matmul_v1.py",
	.default_size = 4096, .min_size = 512, .size_multiple = 512,
	.gen = gen_v1,
	.lines = v1_lines, .nlines = NX_ARRAY_SIZE(v1_lines),
};

const struct nx_kernel_def nx_kernel_matmul_v2 = {
	.name = "matmul_v2",
	.summary = "blocked BF16 matmul with 128x1024 row loads and a double-buffered rhs "
		   "(Tensor-bound)",
	.source = "kernels/matmul_v2.py",
	.default_size = 4096, .min_size = 512, .size_multiple = 512,
	.gen = gen_v2,
	.lines = v2_lines, .nlines = NX_ARRAY_SIZE(v2_lines),
};
