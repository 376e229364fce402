/* SPDX-License-Identifier: MIT
 * gen_transpose.c: generator of kernels/matmul_transpose.py, C = A @ B with A stored
 * row-major, so every 128x128 tile of A is transposed on the Tensor engine (an
 * identity matmul flagged TRANSPOSE) and copied back to SBUF by VectorE.
 *
 * Semaphores: S[1] A loads (+16), S[2] B loads (+16), S[3] matmuls, S[4] output
 * copies, S[5] stores (+16), S[6] identity ready, S[7] transposes, S[8] A^T copies.
 * PSUM banks 0-3 hold output tiles, banks 4-7 transposes. */
#include "common/compat.h"
#include "common/xalloc.h"
#include "kernels/library.h"

#include <stdio.h>
#include <stdlib.h>

static const struct nx_kline lines[] = {
	{ 16, "def matmul_transpose" }, { 25, "nl.load(a[" }, { 26, "nisa.nc_transpose" },
	{ 27, "nl.copy(aT_psum" }, { 31, "nl.load(b[" }, { 32, "nisa.nc_matmul" },
	{ 33, "nl.copy(acc" }, { 34, "nl.store(result" },
};

static int gen(const struct nx_kopts *o, unsigned s, struct nx_strbuf *out, struct nx_err *err)
{
	const unsigned mt = s / 128, nt = s / 512, kt = s / 128, R = 4;
	const unsigned id = 0, abase = 1024, atbase = abase + R * 256, bbase = atbase + kt * 256;
	const unsigned obase = bbase + R * 1024;
	unsigned ja = 0, jb = 0, nmm = 0, t = 0, *mm_end = nx_xcalloc(mt + 1, sizeof(unsigned));
	struct nx_kgen g;
	char src[96], dst[96], extra[64];

	if (obase + 2048 > 180 * 1024) {
		free(mm_end);
		return nx_errf(err, NX_EUSAGE, "matmul_transpose: size %u needs %u KiB of SBUF per "
			       "partition (at most 180)", s, (obase + 2048) / 1024);
	}
	nx_kgen_begin(&g, o, out, &nx_kernel_matmul_transpose, lines[0].line);
	nx_kgen_line(&g, "tensor a input bf16 %ux%u", s, s);
	nx_kgen_line(&g, "tensor b input bf16 %ux%u", s, s);
	nx_kgen_line(&g, "tensor result output bf16 %ux%u", s, s);
	nx_kgen_line(&g, "queue qSyncIO0 in Sync sem=1");
	nx_kgen_line(&g, "queue qSyncIO1 in Sync sem=2");
	nx_kgen_line(&g, "queue qVectorIO0 out Vector sem=5");
	nx_kgen_line(&g, "@26 GpSimd iota dst=sbuf[0:128]+%u:bf16[128] sig=S[6]=1", id);
	for (unsigned m = 0; m < mt; m++) {
		nx_kgen_line(&g, "iter m=%u@22", m);
		for (unsigned k = 0; k < kt; k++, ja++) {
			unsigned slot = abase + (ja % R) * 256, bank = 4 + ja % 4;

			extra[0] = '\0';
			if (ja >= R)
				snprintf(extra, sizeof(extra), "wait=S[7]>=%u", ja - R + 1);
			snprintf(src, sizeof(src), "a[%u:%u, %u:%u]", m * 128, m * 128 + 128, k * 128,
				 k * 128 + 128);
			snprintf(dst, sizeof(dst), "sbuf[0:128]+%u", slot);
			nx_kgen_dma(&g, 25, "Sync", "qSyncIO0", src, dst, extra);
			if (ja >= 4)
				nx_kgen_line(&g, "@26 Tensor event_semaphore wait=S[8]>=%u", ja - 3);
			nx_kgen_line(&g, "@26 Tensor ldweights src=sbuf[0:128]+%u:bf16[128] transpose%s", id,
				     ja ? "" : " wait=S[6]>=1");
			nx_kgen_line(&g, "@26 Tensor matmul src=sbuf[0:128]+%u:bf16[128] "
				     "dst=psum[0:128]+%u:fp32[128] transpose wait=S[1]>=%u sig=S[7]++",
				     slot, bank * 2048, 16 * (ja + 1));
			if (k == 0 && m > 0)
				nx_kgen_line(&g, "@27 Vector event_semaphore wait=S[3]>=%u", mm_end[m - 1]);
			nx_kgen_line(&g, "@27 Vector tensor_copy src=psum[0:128]+%u:fp32[128] "
				     "dst=sbuf[0:128]+%u:bf16[128] wait=S[7]>=%u sig=S[8]++",
				     bank * 2048, atbase + k * 256, ja + 1);
		}
		for (unsigned n = 0; n < nt; n++, t++) {
			unsigned bank = t % 4, oof = obase + (t % 2) * 1024;

			nx_kgen_line(&g, "iter m=%u@22 n=%u@28", m, n);
			for (unsigned k = 0; k < kt; k++, jb++) {
				unsigned slot = bbase + (jb % R) * 1024;

				extra[0] = '\0';
				if (jb >= R)
					snprintf(extra, sizeof(extra), "wait=S[3]>=%u", jb - R + 1);
				snprintf(src, sizeof(src), "b[%u:%u, %u:%u]", k * 128, k * 128 + 128,
					 n * 512, n * 512 + 512);
				snprintf(dst, sizeof(dst), "sbuf[0:128]+%u", slot);
				nx_kgen_dma(&g, 31, "Sync", "qSyncIO1", src, dst, extra);
				if (k == 0 && t >= 4)
					nx_kgen_line(&g, "@32 Tensor event_semaphore wait=S[4]>=%u", t - 3);
				nx_kgen_line(&g, "@32 Tensor ldweights src=sbuf[0:128]+%u:bf16[128] "
					     "wait=S[8]>=%u", atbase + k * 256, m * kt + k + 1);
				nx_kgen_line(&g, "@32 Tensor matmul src=sbuf[0:128]+%u:bf16[512] "
					     "dst=psum[0:128]+%u:fp32[512] wait=S[2]>=%u sig=S[3]++%s",
					     slot, bank * 2048, 16 * (jb + 1), k ? " acc" : "");
				nmm++;
			}
			if (t >= 2)
				nx_kgen_line(&g, "@33 Vector event_semaphore wait=S[5]>=%u", 16 * (t - 1));
			nx_kgen_line(&g, "@33 Vector tensor_copy src=psum[0:128]+%u:fp32[512] "
				     "dst=sbuf[0:128]+%u:bf16[512] wait=S[3]>=%u sig=S[4]++",
				     bank * 2048, oof, nmm);
			snprintf(src, sizeof(src), "sbuf[0:128]+%u", oof);
			snprintf(dst, sizeof(dst), "result[%u:%u, %u:%u]", m * 128, m * 128 + 128,
				 n * 512, n * 512 + 512);
			nx_kgen_dma(&g, 34, "Vector", "qVectorIO0", src, dst, "");
		}
		mm_end[m] = nmm;
	}
	free(mm_end);
	return 0;
}

const struct nx_kernel_def nx_kernel_matmul_transpose = {
	.name = "matmul_transpose",
	.summary = "BF16 matmul of a row-major A: 128x128 tiles transposed on the Tensor engine",
	.source = "kernels/matmul_transpose.py",
	.default_size = 2048, .min_size = 512, .size_multiple = 512,
	.gen = gen,
	.lines = lines, .nlines = NX_ARRAY_SIZE(lines),
};
