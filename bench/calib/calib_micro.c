/* SPDX-License-Identifier: MIT
 * calib_micro.c: the micro facts M1-M6 of the calibration notes, each from a small
 * listing simulated in process: single DMA engine transfers (M1, M2), DMA bandwidth
 * against bytes per partition (M3), Tensor engine throughput (M4), a 2048^3 matmul with
 * and without per-tile transposes (M5) and dependent ScalarE instructions (M6). M2
 * comes from GpSimd's software-DGE queue (its source says so), M3 mixes DGE modes and
 * M5 does not say: both run on software-DGE queues here (docs/simulator.md,
 * "Calibration"). */
#include "common/compat.h"
#include "bench/calib/calib.h"
#include "common/strbuf.h"
#include "common/xalloc.h"

#include <stdio.h>
#include <stdlib.h>

static char *mm_listing(unsigned n, const char *const *shapes, size_t nshapes)
{
	struct nx_strbuf sb = NX_STRBUF_INIT;

	nx_strbuf_addstr(&sb, "kernel micro_te\n");
	for (unsigned i = 0; i < n; i++) {
		const char *sh = shapes[(i / (n / nshapes)) % nshapes];

		nx_strbuf_addf(&sb, "%s\n", sh);
		(void)i;
	}
	return nx_strbuf_detach(&sb, NULL);
}

/* M5: a 2048^3 BF16 matmul, loops m 0..15, n 0..3, k 0..15; each iteration loads an
 * A tile and transposes it on TensorE (copy PSUM -> SBUF on VectorE) or, fast, loads
 * the lhsT tile directly; then loads the rhs tile and multiplies. Rings of 4 slots.
 * S[1] A loads, S[2] rhs loads, S[3] matmuls, S[4] output evictions, S[5] stores,
 * S[6] identity, S[7] transposes, S[8] transposed copies. */
static char *m5_listing(bool transpose)
{
	struct nx_strbuf sb = NX_STRBUF_INIT;
	unsigned j = 0, t = 0;
	const unsigned A = 0, AT = 1024, B = 2048, O = 6144, ID = 8192;

	nx_strbuf_addstr(&sb, "kernel m5\ntensor a input bf16 2048x2048\n"
			 "tensor b input bf16 2048x2048\ntensor c output bf16 2048x2048\n"
			 "queue qa dynamic Sync sem=1\nqueue qb dynamic Sync sem=2\nqueue qo dynamic Vector sem=5\n");
	if (transpose)
		nx_strbuf_addf(&sb, "GpSimd iota dst=sbuf[0:128]+%u:bf16[128] sig=S[6]=1\n", ID);
	for (unsigned m = 0; m < 16; m++) {
		for (unsigned n = 0; n < 4; n++, t++) {
			for (unsigned k = 0; k < 16; k++, j++) {
				unsigned r = j % 4;

				nx_strbuf_addf(&sb, "block a%u qa\n  desc a[%u:%u, %u:%u] -> sbuf[0:128]+%u\n"
					       "Sync dma_trigger block=a%u", j,
					       transpose ? m * 128 : k * 128, (transpose ? m : k) * 128 + 128,
					       transpose ? k * 128 : m * 128, (transpose ? k : m) * 128 + 128,
					       A + r * 256, j);
				if (j >= 4)
					nx_strbuf_addf(&sb, " wait=S[%d]>=%u", transpose ? 7 : 3, j - 3);
				nx_strbuf_addf(&sb, "\nblock b%u qb\n  desc b[%u:%u, %u:%u] -> sbuf[0:128]+%u\n"
					       "Sync dma_trigger block=b%u%s\n", j, k * 128, k * 128 + 128,
					       n * 512, n * 512 + 512, B + r * 1024, j,
					       j >= 4 ? "" : "");
				if (j >= 4)
					nx_strbuf_addf(&sb, "Sync event_semaphore wait=S[3]>=%u\n", j - 3);
				if (transpose) {
					if (j >= 4)
						nx_strbuf_addf(&sb, "Tensor event_semaphore wait=S[8]>=%u\n",
							       j - 3);
					nx_strbuf_addf(&sb, "Tensor ldweights src=sbuf[0:128]+%u:bf16[128] "
						       "transpose%s\n", ID, j ? "" : " wait=S[6]>=1");
					nx_strbuf_addf(&sb, "Tensor matmul src=sbuf[0:128]+%u:bf16[128] "
						       "dst=psum[0:128]+%u:fp32[128] transpose wait=S[1]>=%u "
						       "sig=S[7]++\n", A + r * 256, (4 + r) * 2048, 16 * (j + 1));
					if (j >= 4)
						nx_strbuf_addf(&sb, "Vector event_semaphore wait=S[3]>=%u\n",
							       j - 3);
					nx_strbuf_addf(&sb, "Vector tensor_copy src=psum[0:128]+%u:fp32[128] "
						       "dst=sbuf[0:128]+%u:bf16[128] wait=S[7]>=%u sig=S[8]++\n",
						       (4 + r) * 2048, AT + r * 256, j + 1);
				}
				if (k == 0 && t >= 4)
					nx_strbuf_addf(&sb, "Tensor event_semaphore wait=S[4]>=%u\n", t - 3);
				nx_strbuf_addf(&sb, "Tensor ldweights src=sbuf[0:128]+%u:bf16[128] "
					       "wait=S[%d]>=%u\n", (transpose ? AT : A) + r * 256,
					       transpose ? 8 : 1, transpose ? j + 1 : 16 * (j + 1));
				nx_strbuf_addf(&sb, "Tensor matmul src=sbuf[0:128]+%u:bf16[512] "
					       "dst=psum[0:128]+%u:fp32[512] wait=S[2]>=%u sig=S[3]++%s\n",
					       B + r * 1024, (t % 4) * 2048, 16 * (j + 1), k ? " acc" : "");
			}
			if (t >= 2)
				nx_strbuf_addf(&sb, "Vector event_semaphore wait=S[5]>=%u\n", 16 * (t - 1));
			nx_strbuf_addf(&sb, "Vector tensor_copy src=psum[0:128]+%u:fp32[512] "
				       "dst=sbuf[0:128]+%u:bf16[512] wait=S[3]>=%u sig=S[4]++\n"
				       "block o%u qo\n  desc sbuf[0:128]+%u -> c[%u:%u, %u:%u]\n"
				       "Vector dma_trigger block=o%u\n", (t % 4) * 2048, O + (t % 2) * 1024,
				       j, t, O + (t % 2) * 1024, m * 128, m * 128 + 128, n * 512,
				       n * 512 + 512, t);
		}
	}
	nx_strbuf_addf(&sb, "Sync event_semaphore wait=S[5]>=%u\n", 16 * t);
	return nx_strbuf_detach(&sb, NULL);
}

int calib_micro(void)
{
	struct nx_err err = { 0 };
	struct calib_prof *p = nx_xcalloc(1, sizeof(*p));
	struct calib_errs errs = { .n = 0 };
	int rc = 0;

	calib_head("Micro facts");
	/* M1: one engine moves 32 KiB HBM -> SBUF: A[4, 4096] bf16 on 4 partitions */
	rc |= calib_run_listing("kernel m1\ntensor A input bf16 4x4096\nqueue q in Sync sem=1\n"
			  "block b q\n  desc A[0:4, 0:4096] -> sbuf[0:4]+0\n"
			  "Sync dma_trigger block=b\nSync event_semaphore wait=S[1]>=16\n",
			  "trn2", p, &err);
	calib_row("M1 one DMA engine", "32 KiB transfer", 1416, (double)p->pkt_first_ns, "ns", false, &errs);
	/* M2: a 128 x 128 bf16 load, 16 engines x 2 KiB (8 partitions x 256 B) */
	rc |= calib_run_listing("kernel m2\ntensor A input bf16 128x128\nqueue q dynamic GpSimd sem=1\n"
			  "block b q\n  desc A[0:128, 0:128] -> sbuf[0:128]+0\n"
			  "GpSimd dma_trigger block=b\nGpSimd event_semaphore wait=S[1]>=16\n",
			  "trn2", p, &err);
	calib_row("M2 one DMA engine", "2 KiB transfer", 97, (double)p->pkt_first_ns, "ns", false, &errs);
	/* M3: a 128 x 8192 bf16 input loaded in 128 x 512 (1 KiB/partition) or 128 x 2048
	 * (4 KiB/partition) tiles; achieved GB/s = bytes / merged DMA-active time */
	for (int v = 0; v < 2; v++) {
		unsigned w = v ? 2048 : 512;
		struct nx_strbuf sb = NX_STRBUF_INIT;

		nx_strbuf_addstr(&sb, "kernel m3\ntensor A input bf16 128x8192\n"
				 "tensor B output bf16 128x8192\nqueue q dynamic Sync sem=1\n");
		for (unsigned c = 0; c < 8192 / w; c++)
			nx_strbuf_addf(&sb, "block b%u q\n  desc A[0:128, %u:%u] -> sbuf[0:128]+%u\n"
				       "Sync dma_trigger block=b%u\n", c, c * w, c * w + w, c * w * 2, c);
		nx_strbuf_addf(&sb, "Sync event_semaphore wait=S[1]>=%u\n", 16 * (8192 / w));
		rc |= calib_run_listing(nx_strbuf_str(&sb), "trn2", p, &err);
		nx_strbuf_release(&sb);
		calib_row("M3 DMA bandwidth", v ? "4 KiB/partition" : "1 KiB/partition", v ? 354 : 259,
		    p->dma_bytes / calib_busy_ns(&p->dma), "GB/s", false, &errs);
	}
	/* M4: 2048 back-to-back nc_matmul, full 128/128/512 tiles, then the mixed kernel */
	{
		static const char *const full[] = {
			"Tensor ldweights src=sbuf[0:128]+0:bf16[128]\n"
			"Tensor matmul src=sbuf[0:128]+256:bf16[512] dst=psum[0:128]+0:fp32[512]",
		};
		static const char *const mixed[] = {
			"Tensor ldweights src=sbuf[0:128]+0:bf16[32]\n"
			"Tensor matmul src=sbuf[0:128]+256:bf16[512] dst=psum[0:32]+0:fp32[512]",
			"Tensor ldweights src=sbuf[0:128]+0:bf16[128]\n"
			"Tensor matmul src=sbuf[0:128]+256:bf16[64] dst=psum[0:128]+0:fp32[64]",
			"Tensor ldweights src=sbuf[0:32]+0:bf16[128]\n"
			"Tensor matmul src=sbuf[0:32]+256:bf16[512] dst=psum[0:128]+0:fp32[512]",
			"Tensor ldweights src=sbuf[0:128]+0:bf16[128]\n"
			"Tensor matmul src=sbuf[0:128]+256:bf16[512] dst=psum[0:128]+0:fp32[512]",
		};
		/* BF16-equivalent FLOPs: 2 K M N per matmul */
		const double f_full = 2.0 * 128 * 128 * 512;
		const double f_mixed = 512 * 2.0 * (128.0 * 32 * 512 + 128.0 * 128 * 64 +
						    32.0 * 128 * 512 + 128.0 * 128 * 512);
		char *t = mm_listing(2048, full, 1);

		rc |= calib_run_listing(t, "trn2", p, &err);
		free(t);
		calib_row("M4 TE throughput", "full tiles", 77.2,
		    2048 * f_full / calib_busy_ns(&p->eng[NX_ENGINE_TENSOR]) / 1e3, "TF/s", false, &errs);
		t = mm_listing(2048, mixed, 4);
		rc |= calib_run_listing(t, "trn2", p, &err);
		free(t);
		calib_row("M4 TE throughput", "mixed small tiles", 30.8,
		    f_mixed / calib_busy_ns(&p->eng[NX_ENGINE_TENSOR]) / 1e3, "TF/s", false, &errs);
	}
	/* M5 (hardware and dtype not stated: simulated as BF16 on trn2, static queues) */
	for (int v = 0; v < 2; v++) {
		char *t = m5_listing(v == 0);

		rc |= calib_run_listing(t, "trn2", p, &err);
		free(t);
		calib_row("M5 2048^3 matmul", v ? "lhsT loaded: total" : "TE transposes: total",
		    v ? 608 : 802, p->end / 1e3, "us", false, &errs);
		calib_row("M5 2048^3 matmul", v ? "lhsT loaded: TE act." : "TE transposes: TE act.",
		    v ? 420 : 503, calib_busy_ns(&p->eng[NX_ENGINE_TENSOR]) / 1e3, "us", false, &errs);
	}
	/* M6: dependent 1-element ACTIVATEs on trn1, each reading the previous output */
	{
		struct nx_strbuf sb = NX_STRBUF_INIT;

		nx_strbuf_addstr(&sb, "kernel m6\n");
		for (int i = 0; i < 4; i++)
			nx_strbuf_addf(&sb, "Scalar activate act=identity imm=2 "
				       "src=sbuf[0:128]+%d:fp32[1] dst=sbuf[0:128]+%d:fp32[1] "
				       "sig=S[7]++%s\n", 4 * i, 4 * i + 4,
				       i ? (i == 1 ? " wait=S[7]>=1" : i == 2 ? " wait=S[7]>=2"
								      : " wait=S[7]>=3") : "");
		rc |= calib_run_listing(nx_strbuf_str(&sb), "trn1", p, &err);
		nx_strbuf_release(&sb);
		calib_row("M6 dependent ScalarE op", "start to start", 189,
		    (double)(p->starts[2][NX_ENGINE_SCALAR] - p->starts[1][NX_ENGINE_SCALAR]), "ns",
		    false, &errs);
		calib_row("M6 dependent ScalarE op", "duration", 159,
		    (double)(p->ends[2][NX_ENGINE_SCALAR] - p->starts[2][NX_ENGINE_SCALAR]), "ns",
		    false, &errs);
	}
	if (err.msg[0])
		fprintf(stderr, "bench_calib: micro: %s\n", err.msg);
	if (calib_md)
		printf("\n");
	calib_summary("M (micro facts)", "micro facts", &errs, "%", 10);
	free(p);
	return rc;
}
