/* SPDX-License-Identifier: MIT
 * gen_attention.c: generator of kernels/attention.py, one attention head with
 * d = 128 and seq = S (512..2048): scores Q K^T in PSUM banks 0-3, softmax on
 * VectorE/ScalarE, probabilities transposed on the Tensor engine (banks 4-5, copied
 * back by ScalarE: GpSimd cannot read PSUM), then P V accumulated in banks 6-7.
 * The tiles the source makes inside its query loop are multi-buffered as a compiler
 * buffers them: the probabilities, the accumulator and the outputs in two slots, the
 * transposed probabilities in four, each overwritten once its last reader is done.
 *
 * Semaphores: S[1] q loads, S[2] k loads, S[3] v loads (+16 each), S[4] score tiles,
 * S[5] row maxima, S[6] exps, S[7] transposes, S[8] transpose copies, S[9] P V
 * matmuls, S[10] outputs scaled, S[11] stores (+16), S[12] identity ready. */
#include "common/compat.h"
#include "kernels/library.h"

#include <stdio.h>

static const struct nx_kline lines[] = {
	{ 17, "def attention" }, { 22, "nl.load(kT" }, { 25, "nl.load(v[" },
	{ 28, "nl.load(qT" }, { 31, "nisa.nc_matmul(q_tile" }, { 32, "tensor_reduce(nl.max" },
	{ 33, "activation(nl.exp" }, { 34, "tensor_reduce(nl.add" }, { 35, "reciprocal" },
	{ 38, "nc_transpose" }, { 39, "nl.copy(pT" }, { 40, "nisa.nc_matmul(pT_sb" },
	{ 41, "tensor_scalar(acc" }, { 42, "nl.store(out" },
};

enum { PT_SLOTS = 4 }; /* slots of the transposed probabilities */

struct lay {
	unsigned id, kt, v, q, p, pt, mx, sum, inv, o;
};

static void final_out(struct nx_kgen *g, const struct lay *L, unsigned q, unsigned nj)
{
	char src[96], dst[96];

	nx_kgen_line(g, "iter qi=%u@27", q);
	if (q >= 2)
		nx_kgen_line(g, "@41 Vector event_semaphore wait=S[11]>=%u", 16 * (q - 1));
	nx_kgen_line(g, "@41 Vector tensor_scalar alu=mul src=psum[0:128]+%u:fp32[128] "
		     "dst=sbuf[0:128]+%u:bf16[128] wait=S[9]>=%u sig=S[10]++", (6 + q % 2) * 2048,
		     L->o + (q % 2) * 256, (q + 1) * nj);
	snprintf(src, sizeof(src), "sbuf[0:128]+%u", L->o + (q % 2) * 256);
	snprintf(dst, sizeof(dst), "out[%u:%u, 0:128]", q * 128, q * 128 + 128);
	nx_kgen_dma(g, 42, "Vector", "qVectorIO0", src, dst, "");
}

/* Transpose j of query tile qi on the Tensor engine and its copy back by ScalarE. The
 * transpose waits for its PSUM bank (the copy of two transposes ago); the copy needs
 * no wait for its SBUF slot: the P V matmul that last read it precedes the transpose
 * it copies on the Tensor engine. */
static void transpose(struct nx_kgen *g, const struct lay *L, unsigned qi, unsigned j,
		      unsigned nj, unsigned s)
{
	unsigned tj = qi * nj + j, bank = 4 + tj % 2;
	char wait[32] = "";

	if (tj == 0)
		snprintf(wait, sizeof(wait), " wait=S[12]>=1");
	else if (tj >= 2)
		snprintf(wait, sizeof(wait), " wait=S[8]>=%u", tj - 1);
	nx_kgen_line(g, "@38 Tensor ldweights src=sbuf[0:128]+%u:bf16[128] transpose%s", L->id,
		     wait);
	nx_kgen_line(g, "@38 Tensor matmul src=sbuf[0:128]+%u:bf16[128] "
		     "dst=psum[0:128]+%u:fp32[128] transpose wait=S[6]>=%u sig=S[7]++",
		     L->p + (qi % 2) * s * 2 + j * 256, bank * 2048, qi + 1);
	nx_kgen_line(g, "@39 Scalar tensor_copy src=psum[0:128]+%u:fp32[128] "
		     "dst=sbuf[0:128]+%u:bf16[128] wait=S[7]>=%u sig=S[8]++", bank * 2048,
		     L->pt + (tj % PT_SLOTS) * 256, tj + 1);
}

/* P V matmul j of query tile qi into the tile's accumulator slot (banks 6-7). */
static void pv(struct nx_kgen *g, const struct lay *L, unsigned qi, unsigned j, unsigned nj)
{
	unsigned tj = qi * nj + j;

	if (j == 0 && qi >= 2)
		nx_kgen_line(g, "@40 Tensor event_semaphore wait=S[10]>=%u", qi - 1);
	nx_kgen_line(g, "@40 Tensor ldweights src=sbuf[0:128]+%u:bf16[128] wait=S[8]>=%u",
		     L->pt + (tj % PT_SLOTS) * 256, tj + 1);
	nx_kgen_line(g, "@40 Tensor matmul src=sbuf[0:128]+%u:bf16[128] "
		     "dst=psum[0:128]+%u:fp32[128] wait=S[3]>=%u%s sig=S[9]++", L->v + j * 256,
		     (6 + qi % 2) * 2048, 16 * (j + 1), j ? " acc" : "");
}

static int gen(const struct nx_kopts *o, unsigned s, struct nx_strbuf *out, struct nx_err *err)
{
	const unsigned nq = s / 128, nc = s / 512, nj = s / 128;
	struct lay L;
	struct nx_kgen g;
	char src[96], dst[96], extra[64];

	if (s > 2048)
		return nx_errf(err, NX_EUSAGE, "attention: seq %u does not fit the PSUM score banks "
			       "(at most 2048)", s);
	L.id = 0;
	L.kt = 1024;
	L.v = L.kt + s * 2;
	L.q = L.v + nj * 256;
	L.p = L.q + 2 * 256;
	L.pt = L.p + 2 * s * 2;
	L.mx = L.pt + PT_SLOTS * 256;
	L.sum = L.mx + 16;
	L.inv = L.sum + 16;
	L.o = L.inv + 16;
	nx_kgen_begin(&g, o, out, &nx_kernel_attention, lines[0].line);
	nx_kgen_line(&g, "tensor qT input bf16 128x%u", s);
	nx_kgen_line(&g, "tensor kT input bf16 128x%u", s);
	nx_kgen_line(&g, "tensor v input bf16 %ux128", s);
	nx_kgen_line(&g, "tensor out output bf16 %ux128", s);
	nx_kgen_line(&g, "queue qSyncIO0 in Sync sem=1");
	nx_kgen_line(&g, "queue qSyncIO1 in Sync sem=2");
	nx_kgen_line(&g, "queue qSyncIO2 in Sync sem=3");
	nx_kgen_line(&g, "queue qVectorIO0 out Vector sem=11");
	nx_kgen_line(&g, "@38 GpSimd iota dst=sbuf[0:128]+%u:bf16[128] sig=S[12]=1", L.id);
	for (unsigned c = 0; c < nc; c++) {
		snprintf(src, sizeof(src), "kT[0:128, %u:%u]", c * 512, c * 512 + 512);
		snprintf(dst, sizeof(dst), "sbuf[0:128]+%u", L.kt + c * 1024);
		nx_kgen_dma(&g, 22, "Sync", "qSyncIO1", src, dst, "");
	}
	for (unsigned j = 0; j < nj; j++) {
		snprintf(src, sizeof(src), "v[%u:%u, 0:128]", j * 128, j * 128 + 128);
		snprintf(dst, sizeof(dst), "sbuf[0:128]+%u", L.v + j * 256);
		nx_kgen_dma(&g, 25, "Sync", "qSyncIO2", src, dst, "");
	}
	for (unsigned qi = 0; qi < nq; qi++) {
		nx_kgen_line(&g, "iter qi=%u@27", qi);
		extra[0] = '\0';
		if (qi >= 2)
			snprintf(extra, sizeof(extra), "wait=S[4]>=%u", qi - 1);
		snprintf(src, sizeof(src), "qT[0:128, %u:%u]", qi * 128, qi * 128 + 128);
		snprintf(dst, sizeof(dst), "sbuf[0:128]+%u", L.q + (qi % 2) * 256);
		nx_kgen_dma(&g, 28, "Sync", "qSyncIO0", src, dst, extra);
		/* scores */
		if (qi)
			nx_kgen_line(&g, "@31 Tensor event_semaphore wait=S[6]>=%u", qi);
		nx_kgen_line(&g, "@31 Tensor ldweights src=sbuf[0:128]+%u:bf16[128] wait=S[1]>=%u",
			     L.q + (qi % 2) * 256, 16 * (qi + 1));
		for (unsigned c = 0; c < nc; c++)
			nx_kgen_line(&g, "@31 Tensor matmul src=sbuf[0:128]+%u:bf16[512] "
				     "dst=psum[0:128]+%u:fp32[512] wait=S[2]>=%u%s", L.kt + c * 1024,
				     c * 2048, 16 * (c + 1), c + 1 == nc ? " sig=S[4]++" : "");
		/* softmax */
		nx_kgen_line(&g, "@32 Vector tensor_reduce alu=max src=psum[0:128]+0:fp32[%u] "
			     "dst=sbuf[0:128]+%u:fp32[1] wait=S[4]>=%u", s, L.mx + (qi % 2) * 4, qi + 1);
		nx_kgen_line(&g, "@32 Vector tensor_scalar alu=mul imm=-1 src=sbuf[0:128]+%u:fp32[1] "
			     "dst=sbuf[0:128]+%u:fp32[1] sig=S[5]++", L.mx + (qi % 2) * 4,
			     L.mx + (qi % 2) * 4);
		/* the probabilities' slot: free once the transposes of two tiles ago are done */
		if (qi >= 2)
			nx_kgen_line(&g, "@33 Scalar event_semaphore wait=S[7]>=%u", (qi - 1) * nj);
		nx_kgen_line(&g, "@33 Scalar activate act=exp src=psum[0:128]+0:fp32[%u] "
			     "dst=sbuf[0:128]+%u:bf16[%u] wait=S[5]>=%u sig=S[6]++", s,
			     L.p + (qi % 2) * s * 2, s, qi + 1);
		nx_kgen_line(&g, "@34 Vector tensor_reduce alu=add src=sbuf[0:128]+%u:bf16[%u] "
			     "dst=sbuf[0:128]+%u:fp32[1] wait=S[6]>=%u", L.p + (qi % 2) * s * 2, s,
			     L.sum, qi + 1);
		nx_kgen_line(&g, "@35 Vector tensor_scalar alu=div imm=1 src=sbuf[0:128]+%u:fp32[1] "
			     "dst=sbuf[0:128]+%u:fp32[1]", L.sum, L.inv + (qi % 2) * 4);
		if (qi) {
			final_out(&g, &L, qi - 1, nj);
			nx_kgen_line(&g, "iter qi=%u@27", qi);
		}
		/* transposes of the probabilities, copied back by ScalarE, and the P V
		 * matmuls, the Tensor engine one transpose ahead: a copy's slot is free once
		 * the P V matmul of PT_SLOTS copies ago has read it, the accumulator's once
		 * the output of two tiles ago was scaled */
		for (unsigned j = 0; j <= nj; j++) {
			if (j < nj)
				transpose(&g, &L, qi, j, nj, s);
			if (j >= 1)
				pv(&g, &L, qi, j - 1, nj);
		}
	}
	final_out(&g, &L, nq - 1, nj);
	return 0;
}

const struct nx_kernel_def nx_kernel_attention = {
	.name = "attention",
	.summary = "one attention head (d=128): QK^T, softmax, TE transposes of P, PV",
	.source = "kernels/attention.py",
	.default_size = 2048, .min_size = 512, .size_multiple = 512,
	.gen = gen,
	.lines = lines, .nlines = NX_ARRAY_SIZE(lines),
};
