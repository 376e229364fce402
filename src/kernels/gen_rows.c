/* SPDX-License-Identifier: MIT
 * gen_rows.c: generators of the row-wise kernels over a BF16 matrix of R = S rows:
 * softmax and layernorm (D = S/2 columns), the planted VectorE-bound polynomial
 * (D = S/2) and the planted tiny-descriptor elementwise add (D = S/4). Each 128-row
 * tile is loaded by Sync, computed on VectorE/ScalarE and stored by a DMA that
 * VectorE triggers. Semaphore use is described above each generator. */
#include "common/compat.h"
#include "kernels/library.h"

#include <stdio.h>

static void io_header(struct nx_kgen *g, const char *in, unsigned r, unsigned d,
		      unsigned store_sem)
{
	nx_kgen_line(g, "tensor %s input bf16 %ux%u", in, r, d);
	nx_kgen_line(g, "tensor out output bf16 %ux%u", r, d);
	nx_kgen_line(g, "queue qSyncIO0 in Sync sem=1");
	nx_kgen_line(g, "queue qVectorIO0 out Vector sem=%u", store_sem);
}

static void load_tile(struct nx_kgen *g, int line, const char *t, const char *queue,
		      unsigned r, unsigned d, unsigned off, const char *extra)
{
	char src[96], dst[64];

	snprintf(src, sizeof(src), "%s[%u:%u, 0:%u]", t, r * 128, r * 128 + 128, d);
	snprintf(dst, sizeof(dst), "sbuf[0:128]+%u", off);
	nx_kgen_dma(g, line, "Sync", queue, src, dst, extra);
}

static void store_tile(struct nx_kgen *g, int line, unsigned r, unsigned d, unsigned off)
{
	char src[64], dst[96];

	snprintf(src, sizeof(src), "sbuf[0:128]+%u", off);
	snprintf(dst, sizeof(dst), "out[%u:%u, 0:%u]", r * 128, r * 128 + 128, d);
	nx_kgen_dma(g, line, "Vector", "qVectorIO0", src, dst, "");
}

static int too_big(struct nx_err *err, const char *name, unsigned s, unsigned bytes)
{
	if (bytes <= 180 * 1024)
		return 0;
	return nx_errf(err, NX_EUSAGE, "%s: size %u needs %u KiB of SBUF per partition (at most 180)",
		       name, s, bytes / 1024);
}

/* ---- softmax: S[1] loads (+16), S[2] row maxima, S[3] exps, S[4] outputs, S[5] stores ---- */

static const struct nx_kline sm_lines[] = {
	{ 15, "def softmax" }, { 20, "nl.load(x" }, { 21, "tensor_reduce(nl.max" },
	{ 22, "activation(nl.exp" }, { 23, "tensor_reduce(nl.add" }, { 24, "reciprocal" },
	{ 25, "tensor_scalar(e" }, { 26, "nl.store(out" },
};

static int gen_softmax(const struct nx_kopts *o, unsigned s, struct nx_strbuf *out,
		       struct nx_err *err)
{
	const unsigned d = s / 2, nr = s / 128;
	const unsigned X = 0, E = X + 3 * d * 2, Y = E + 2 * d * 4, ST = Y + 2 * d * 2;
	struct nx_kgen g;
	char extra[64];
	int rc;

	if ((rc = too_big(err, "softmax", s, ST + 64)))
		return rc;
	nx_kgen_begin(&g, o, out, &nx_kernel_softmax, sm_lines[0].line);
	io_header(&g, "x", s, d, 5);
	for (unsigned r = 0; r < nr; r++) {
		extra[0] = '\0';
		if (r >= 3)
			snprintf(extra, sizeof(extra), "wait=S[3]>=%u", r - 2);
		nx_kgen_line(&g, "iter r=%u@19", r);
		load_tile(&g, 20, "x", "qSyncIO0", r, d, X + (r % 3) * d * 2, extra);
	}
	for (unsigned r = 0; r <= nr; r++) {
		/* the row maximum of the next tile runs ahead of this tile's tail */
		if (r < nr) {
			unsigned mx = ST + (r % 2) * 4;

			nx_kgen_line(&g, "iter r=%u@19", r);
			nx_kgen_line(&g, "@21 Vector tensor_reduce alu=max src=sbuf[0:128]+%u:bf16[%u] "
				     "dst=sbuf[0:128]+%u:fp32[1] wait=S[1]>=%u", X + (r % 3) * d * 2, d,
				     mx, 16 * (r + 1));
			nx_kgen_line(&g, "@21 Vector tensor_scalar alu=mul imm=-1 src=sbuf[0:128]+%u:fp32[1] "
				     "dst=sbuf[0:128]+%u:fp32[1] sig=S[2]++", mx, mx);
			if (r >= 2)
				nx_kgen_line(&g, "@22 Scalar event_semaphore wait=S[4]>=%u", r - 1);
			nx_kgen_line(&g, "@22 Scalar activate act=exp src=sbuf[0:128]+%u:bf16[%u] "
				     "dst=sbuf[0:128]+%u:fp32[%u] wait=S[2]>=%u sig=S[3]++",
				     X + (r % 3) * d * 2, d, E + (r % 2) * d * 4, d, r + 1);
		}
		if (r == 0)
			continue;
		{
			unsigned p = r - 1, e = E + (p % 2) * d * 4, y = Y + (p % 2) * d * 2;

			nx_kgen_line(&g, "iter r=%u@19", p);
			nx_kgen_line(&g, "@23 Vector tensor_reduce alu=add src=sbuf[0:128]+%u:fp32[%u] "
				     "dst=sbuf[0:128]+%u:fp32[1] wait=S[3]>=%u", e, d, ST + 8, p + 1);
			nx_kgen_line(&g, "@24 Vector tensor_scalar alu=div imm=1 src=sbuf[0:128]+%u:fp32[1] "
				     "dst=sbuf[0:128]+%u:fp32[1]", ST + 8, ST + 12);
			if (p >= 2)
				nx_kgen_line(&g, "@25 Vector event_semaphore wait=S[5]>=%u", 16 * (p - 1));
			nx_kgen_line(&g, "@25 Vector tensor_scalar alu=mul src=sbuf[0:128]+%u:fp32[%u] "
				     "dst=sbuf[0:128]+%u:bf16[%u] sig=S[4]++", e, d, y, d);
			store_tile(&g, 26, p, d, y);
		}
	}
	return 0;
}

const struct nx_kernel_def nx_kernel_softmax = {
	.name = "softmax",
	.summary = "row softmax of an S x S/2 BF16 matrix (VectorE/ScalarE)",
	.source = "kernels/softmax.py",
	.default_size = 4096, .min_size = 256, .size_multiple = 256,
	.gen = gen_softmax,
	.lines = sm_lines, .nlines = NX_ARRAY_SIZE(sm_lines),
};

/* ---- layernorm: S[1] x loads, S[2] gamma/beta loads (+16 each), S[3] centred tiles,
 * S[4] squares, S[5] variances, S[6] rstd, S[7] outputs, S[8] stores (+16) ---- */

static const struct nx_kline ln_lines[] = {
	{ 17, "def layernorm" }, { 20, "nl.load(gamma" }, { 21, "nl.load(beta" },
	{ 24, "nl.load(x" }, { 25, "tensor_reduce(nl.add, xt" }, { 26, "tensor_scalar(xt" },
	{ 27, "activation(nl.square" }, { 28, "tensor_reduce(nl.add, sq" },
	{ 29, "activation(nl.rsqrt" }, { 30, "tensor_scalar(xc" }, { 31, "nl.multiply)" },
	{ 32, "nl.add, dtype" }, { 33, "nl.store(out" },
};

static int gen_layernorm(const struct nx_kopts *o, unsigned s, struct nx_strbuf *out,
			 struct nx_err *err)
{
	const unsigned d = s / 2, nr = s / 128;
	const unsigned G = 0, B = d * 2, X = 2 * d * 2, XC = X + 3 * d * 2, SQ = XC + 2 * d * 4;
	const unsigned Y = SQ + d * 4, ST = Y + 2 * d * 2;
	struct nx_kgen g;
	char src[96], dst[64], extra[64];
	int rc;

	if ((rc = too_big(err, "layernorm", s, ST + 64)))
		return rc;
	nx_kgen_begin(&g, o, out, &nx_kernel_layernorm, ln_lines[0].line);
	io_header(&g, "x", s, d, 8);
	nx_kgen_line(&g, "tensor gamma weight bf16 128x%u", d);
	nx_kgen_line(&g, "tensor beta weight bf16 128x%u", d);
	nx_kgen_line(&g, "queue qSyncIO1 in Sync sem=2");
	snprintf(src, sizeof(src), "gamma[0:128, 0:%u]", d);
	snprintf(dst, sizeof(dst), "sbuf[0:128]+%u", G);
	nx_kgen_dma(&g, 20, "Sync", "qSyncIO1", src, dst, "");
	snprintf(src, sizeof(src), "beta[0:128, 0:%u]", d);
	snprintf(dst, sizeof(dst), "sbuf[0:128]+%u", B);
	nx_kgen_dma(&g, 21, "Sync", "qSyncIO1", src, dst, "");
	for (unsigned r = 0; r < nr; r++) {
		unsigned x = X + (r % 3) * d * 2, xc = XC + (r % 2) * d * 4, y = Y + (r % 2) * d * 2;

		nx_kgen_line(&g, "iter r=%u@23", r);
		extra[0] = '\0';
		if (r >= 3)
			snprintf(extra, sizeof(extra), "wait=S[3]>=%u", r - 2);
		load_tile(&g, 24, "x", "qSyncIO0", r, d, x, extra);
		nx_kgen_line(&g, "@25 Vector tensor_reduce alu=add src=sbuf[0:128]+%u:bf16[%u] "
			     "dst=sbuf[0:128]+%u:fp32[1] wait=S[1]>=%u", x, d, ST, 16 * (r + 1));
		nx_kgen_line(&g, "@26 Vector tensor_scalar alu=sub src=sbuf[0:128]+%u:bf16[%u] "
			     "dst=sbuf[0:128]+%u:fp32[%u] sig=S[3]++", x, d, xc, d);
		if (r)
			nx_kgen_line(&g, "@27 Scalar event_semaphore wait=S[5]>=%u", r);
		nx_kgen_line(&g, "@27 Scalar activate act=square src=sbuf[0:128]+%u:fp32[%u] "
			     "dst=sbuf[0:128]+%u:fp32[%u] wait=S[3]>=%u sig=S[4]++", xc, d, SQ, d, r + 1);
		nx_kgen_line(&g, "@28 Vector tensor_reduce alu=add src=sbuf[0:128]+%u:fp32[%u] "
			     "dst=sbuf[0:128]+%u:fp32[1] wait=S[4]>=%u sig=S[5]++", SQ, d, ST + 4, r + 1);
		nx_kgen_line(&g, "@29 Scalar activate act=rsqrt src=sbuf[0:128]+%u:fp32[1] "
			     "dst=sbuf[0:128]+%u:fp32[1] wait=S[5]>=%u sig=S[6]++", ST + 4,
			     ST + 8 + (r % 2) * 4, r + 1);
		nx_kgen_line(&g, "@30 Vector tensor_scalar alu=mul src=sbuf[0:128]+%u:fp32[%u] "
			     "dst=sbuf[0:128]+%u:fp32[%u] wait=S[6]>=%u", xc, d, xc, d, r + 1);
		nx_kgen_line(&g, "@31 Vector tensor_tensor alu=mul src=sbuf[0:128]+%u:fp32[%u] "
			     "src1=sbuf[0:128]+%u:bf16[%u] dst=sbuf[0:128]+%u:fp32[%u]%s", xc, d, G, d,
			     xc, d, r ? "" : " wait=S[2]>=32");
		if (r >= 2)
			nx_kgen_line(&g, "@32 Vector event_semaphore wait=S[8]>=%u", 16 * (r - 1));
		nx_kgen_line(&g, "@32 Vector tensor_tensor alu=add src=sbuf[0:128]+%u:fp32[%u] "
			     "src1=sbuf[0:128]+%u:bf16[%u] dst=sbuf[0:128]+%u:bf16[%u] sig=S[7]++", xc,
			     d, B, d, y, d);
		store_tile(&g, 33, r, d, y);
	}
	return 0;
}

const struct nx_kernel_def nx_kernel_layernorm = {
	.name = "layernorm",
	.summary = "layer normalisation of an S x S/2 BF16 matrix with gamma and beta",
	.source = "kernels/layernorm.py",
	.default_size = 4096, .min_size = 256, .size_multiple = 256,
	.gen = gen_layernorm,
	.lines = ln_lines, .nlines = NX_ARRAY_SIZE(ln_lines),
};

/* ---- vector_bound: S[1] loads (+16), S[2] tiles computed, S[3] stores (+16) ---- */

static const struct nx_kline vb_lines[] = {
	{ 17, "def vector_bound" }, { 22, "nl.load(x" }, { 23, "tensor_scalar(xt" },
	{ 25, "nl.add)" }, { 26, "nl.multiply)" }, { 27, "tensor_copy(acc" },
	{ 28, "nl.store(out" },
};

static int gen_vector_bound(const struct nx_kopts *o, unsigned s, struct nx_strbuf *out,
			    struct nx_err *err)
{
	const unsigned d = s / 2, nr = s / 128;
	const unsigned X = 0, ACC = 2 * d * 2, Y = ACC + d * 4;
	struct nx_kgen g;
	char extra[64];
	int rc;

	if ((rc = too_big(err, "vector_bound", s, Y + 2 * d * 2)))
		return rc;
	nx_kgen_begin(&g, o, out, &nx_kernel_vector_bound, vb_lines[0].line);
	io_header(&g, "x", s, d, 3);
	for (unsigned r = 0; r < nr; r++) {
		unsigned x = X + (r % 2) * d * 2, y = Y + (r % 2) * d * 2;

		nx_kgen_line(&g, "iter r=%u@21", r);
		extra[0] = '\0';
		if (r >= 2)
			snprintf(extra, sizeof(extra), "wait=S[2]>=%u", r - 1);
		load_tile(&g, 22, "x", "qSyncIO0", r, d, x, extra);
		nx_kgen_line(&g, "@23 Vector tensor_scalar alu=mul imm=0.5 src=sbuf[0:128]+%u:bf16[%u] "
			     "dst=sbuf[0:128]+%u:fp32[%u] wait=S[1]>=%u", x, d, ACC, d, 16 * (r + 1));
		for (int c = 0; c < 4; c++) {
			nx_kgen_line(&g, "@25 Vector tensor_tensor alu=add src=sbuf[0:128]+%u:fp32[%u] "
				     "src1=sbuf[0:128]+%u:bf16[%u] dst=sbuf[0:128]+%u:fp32[%u]", ACC, d,
				     x, d, ACC, d);
			nx_kgen_line(&g, "@26 Vector tensor_tensor alu=mul src=sbuf[0:128]+%u:fp32[%u] "
				     "src1=sbuf[0:128]+%u:bf16[%u] dst=sbuf[0:128]+%u:fp32[%u]", ACC, d,
				     x, d, ACC, d);
		}
		if (r >= 2)
			nx_kgen_line(&g, "@27 Vector event_semaphore wait=S[3]>=%u", 16 * (r - 1));
		nx_kgen_line(&g, "@27 Vector tensor_copy src=sbuf[0:128]+%u:fp32[%u] "
			     "dst=sbuf[0:128]+%u:bf16[%u] sig=S[2]++", ACC, d, y, d);
		store_tile(&g, 28, r, d, y);
	}
	return 0;
}

const struct nx_kernel_def nx_kernel_vector_bound = {
	.name = "vector_bound",
	.summary = "planted problem: an FP32 polynomial that keeps VectorE busy (Vector-bound)",
	.source = "kernels/vector_bound.py",
	.default_size = 4096, .min_size = 256, .size_multiple = 256,
	.gen = gen_vector_bound,
	.lines = vb_lines, .nlines = NX_ARRAY_SIZE(vb_lines),
};

/* ---- dma_tiny: S[1] x strips, S[2] y strips (+16 each), S[3] sums, S[4] stores ---- */

static const struct nx_kline dt_lines[] = {
	{ 17, "def dma_tiny" }, { 25, "nl.load(x" }, { 26, "nl.load(y" },
	{ 27, "tensor_tensor(xt, yt" }, { 28, "nl.store(out" },
};

static int gen_dma_tiny(const struct nx_kopts *o, unsigned s, struct nx_strbuf *out,
			struct nx_err *err)
{
	const unsigned d = s / 4, nr = s / 128, strip = 32, ns = d / strip;
	const unsigned X = 0, YB = 2 * d * 2, Z = YB + 2 * d * 2;
	struct nx_kgen g;
	char src[96], dst[64], extra[64];
	int rc;

	if ((rc = too_big(err, "dma_tiny", s, Z + 2 * d * 2)))
		return rc;
	nx_kgen_begin(&g, o, out, &nx_kernel_dma_tiny, dt_lines[0].line);
	io_header(&g, "x", s, d, 4);
	nx_kgen_line(&g, "tensor y input bf16 %ux%u", s, d);
	nx_kgen_line(&g, "queue qActIO1 in Scalar sem=2");
	for (unsigned r = 0; r < nr; r++) {
		unsigned x = X + (r % 2) * d * 2, y = YB + (r % 2) * d * 2, z = Z + (r % 2) * d * 2;

		nx_kgen_line(&g, "iter r=%u@21", r);
		for (unsigned c = 0; c < ns; c++) {
			extra[0] = '\0';
			if (r >= 2 && c == 0)
				snprintf(extra, sizeof(extra), "wait=S[3]>=%u", r - 1);
			snprintf(src, sizeof(src), "x[%u:%u, %u:%u]", r * 128, r * 128 + 128, c * strip,
				 (c + 1) * strip);
			snprintf(dst, sizeof(dst), "sbuf[0:128]+%u", x + c * strip * 2);
			nx_kgen_dma(&g, 25, "Sync", "qSyncIO0", src, dst, extra);
			snprintf(src, sizeof(src), "y[%u:%u, %u:%u]", r * 128, r * 128 + 128, c * strip,
				 (c + 1) * strip);
			snprintf(dst, sizeof(dst), "sbuf[0:128]+%u", y + c * strip * 2);
			nx_kgen_dma(&g, 26, "Scalar", "qActIO1", src, dst, "");
		}
		nx_kgen_line(&g, "@27 Vector event_semaphore wait=S[1]>=%u", 16 * ns * (r + 1));
		if (r >= 2)
			nx_kgen_line(&g, "@27 Vector event_semaphore wait=S[4]>=%u", 16 * (r - 1));
		nx_kgen_line(&g, "@27 Vector tensor_tensor alu=add src=sbuf[0:128]+%u:bf16[%u] "
			     "src1=sbuf[0:128]+%u:bf16[%u] dst=sbuf[0:128]+%u:bf16[%u] wait=S[2]>=%u "
			     "sig=S[3]++", x, d, y, d, z, d, 16 * ns * (r + 1));
		store_tile(&g, 28, r, d, z);
	}
	return 0;
}

const struct nx_kernel_def nx_kernel_dma_tiny = {
	.name = "dma_tiny",
	.summary = "planted problem: elementwise add loaded in 64-byte descriptors (DMA-bound)",
	.source = "kernels/dma_tiny.py",
	.default_size = 4096, .min_size = 512, .size_multiple = 512,
	.gen = gen_dma_tiny,
	.lines = dt_lines, .nlines = NX_ARRAY_SIZE(dt_lines),
};
