/* SPDX-License-Identifier: MIT
 * gen_serial.c: generator of kernels/serial_sem.py, the planted single-buffered
 * matmul pipeline: each output tile loads its lhsT and rhs columns only after the
 * previous tile was stored (the result tile is staged in the lhsT strip's space),
 * multiplies only after every load landed, and copies only after the last matmul, so
 * the engines take turns and mostly wait.
 *
 * Semaphores: S[1] loads (+16 each), S[3] tiles multiplied, S[4] tiles copied,
 * S[5] stores (+16). */
#include "common/compat.h"
#include "kernels/library.h"

#include <stdio.h>

static const struct nx_kline lines[] = {
	{ 20, "def serial_sem" }, { 29, "nl.load(lhsT" }, { 30, "nl.load(rhs" },
	{ 33, "nisa.nc_matmul" }, { 34, "nl.copy(acc" }, { 35, "nl.store(result" },
};

static int gen(const struct nx_kopts *o, unsigned s, struct nx_strbuf *out, struct nx_err *err)
{
	const unsigned mt = s / 128, nt = s / 512, kt = s / 128;
	const unsigned LB = 0, RB = kt * 256, OB = LB; /* the result tile in the lhsT strip */
	unsigned loads = 0, t = 0;
	struct nx_kgen g;
	char src[96], dst[64], extra[64];

	if (RB + kt * 1024 > 180 * 1024)
		return nx_errf(err, NX_EUSAGE, "serial_sem: size %u needs %u KiB of SBUF per "
			       "partition (at most 180)", s, (RB + kt * 1024) / 1024);
	nx_kgen_begin(&g, o, out, &nx_kernel_serial_sem, lines[0].line);
	nx_kgen_line(&g, "tensor lhsT input bf16 %ux%u", s, s);
	nx_kgen_line(&g, "tensor rhs input bf16 %ux%u", s, s);
	nx_kgen_line(&g, "tensor result output bf16 %ux%u", s, s);
	nx_kgen_line(&g, "queue qSyncIO0 in Sync sem=1");
	nx_kgen_line(&g, "queue qSyncIO1 in Sync sem=1");
	nx_kgen_line(&g, "queue qVectorIO0 out Vector sem=5");
	for (unsigned m = 0; m < mt; m++) {
		for (unsigned n = 0; n < nt; n++, t++) {
			nx_kgen_line(&g, "iter m=%u@27 n=%u@28", m, n);
			for (unsigned k = 0; k < kt; k++, loads++) {
				extra[0] = '\0';
				if (t && k == 0)
					snprintf(extra, sizeof(extra), "wait=S[5]>=%u", 16 * t);
				snprintf(src, sizeof(src), "lhsT[%u:%u, %u:%u]", k * 128, k * 128 + 128,
					 m * 128, m * 128 + 128);
				snprintf(dst, sizeof(dst), "sbuf[0:128]+%u", LB + k * 256);
				nx_kgen_dma(&g, 29, "Sync", "qSyncIO0", src, dst, extra);
			}
			for (unsigned k = 0; k < kt; k++, loads++) {
				snprintf(src, sizeof(src), "rhs[%u:%u, %u:%u]", k * 128, k * 128 + 128,
					 n * 512, n * 512 + 512);
				snprintf(dst, sizeof(dst), "sbuf[0:128]+%u", RB + k * 1024);
				nx_kgen_dma(&g, 30, "Sync", "qSyncIO1", src, dst, "");
			}
			for (unsigned k = 0; k < kt; k++) {
				extra[0] = '\0';
				if (k == 0)
					snprintf(extra, sizeof(extra), " wait=S[1]>=%u", 16 * loads);
				nx_kgen_line(&g, "@33 Tensor ldweights src=sbuf[0:128]+%u:bf16[128]%s",
					     LB + k * 256, extra);
				nx_kgen_line(&g, "@33 Tensor matmul src=sbuf[0:128]+%u:bf16[512] "
					     "dst=psum[0:128]+0:fp32[512]%s%s", RB + k * 1024,
					     k ? " acc" : "", k + 1 == kt ? " sig=S[3]++" : "");
			}
			nx_kgen_line(&g, "@34 Vector tensor_copy src=psum[0:128]+0:fp32[512] "
				     "dst=sbuf[0:128]+%u:bf16[512] wait=S[3]>=%u sig=S[4]++", OB, t + 1);
			snprintf(src, sizeof(src), "sbuf[0:128]+%u", OB);
			snprintf(dst, sizeof(dst), "result[%u:%u, %u:%u]", m * 128, m * 128 + 128,
				 n * 512, n * 512 + 512);
			nx_kgen_dma(&g, 35, "Vector", "qVectorIO0", src, dst, "");
		}
	}
	return 0;
}

const struct nx_kernel_def nx_kernel_serial_sem = {
	.name = "serial_sem",
	.summary = "planted problem: single-buffered matmul pipeline serialised by semaphore waits",
	.source = "kernels/serial_sem.py",
	.default_size = 512, .min_size = 512, .size_multiple = 512,
	.gen = gen,
	.lines = lines, .nlines = NX_ARRAY_SIZE(lines),
};
