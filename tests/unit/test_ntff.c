/* SPDX-License-Identifier: MIT
 * test_ntff.c: the NTFF writer and reader (src/ntff): varint coding, round trips of
 * every record kind, chunking, kind filtering, rewind, forward compatibility,
 * determinism, size per record, and rejection of damaged files: every truncation
 * point, flipped bytes in every chunk, bad headers, huge lengths and wrong counts.
 * Files go to a fresh directory under $NX_TEST_TMP. */
#include "common/compat.h"
#include "common/crc32c.h"
#include "common/fsutil.h"
#include "common/xalloc.h"
#include "neff/isa.h"
#include "ntff/ntff.h"
#include "ntff/varint.h"

#include <stdarg.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "helper/asserts.h"
#include "helper/test_dirs.h"

static char *tmp_dir;
static unsigned file_seq;

/* A fresh path inside the test directory. The caller frees it. */
static char *tmp_path(const char *what)
{
	return nx_xasprintf("%s/%s-%u.ntff", tmp_dir, what, file_seq++);
}

/* The writer's first temporary name for path (nx_tmp_create): ".<base>.tmp-<pid>-0" in
 * the same directory. */
static char *writer_tmp(const char *path)
{
	const char *base = strrchr(path, '/') + 1;

	return nx_xasprintf("%.*s.%s.tmp-%d-0", (int)(base - path), path, base, (int)getpid());
}

static int group_setup(void **state)
{
	(void)state;
	tmp_dir = nx_test_fresh_dir("", "test_ntff");
	return tmp_dir ? 0 : -1;
}

static int group_teardown(void **state)
{
	(void)state;
	free(tmp_dir);
	return 0;
}

/* Deterministic generator (xorshift64*), so failures reproduce. */
static uint64_t rng_state = 0x9e3779b97f4a7c15ull;

static uint64_t rnd(void)
{
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return rng_state * 0x2545f4914f6cdd1dull;
}

static uint64_t rnd_below(uint64_t n)
{
	return rnd() % n;
}

static void test_info(struct nx_ntff_info *info)
{
	memset(info, 0, sizeof(*info));
	info->flags = NX_NTFF_DGE_NOTIFICATIONS | NX_NTFF_SIMULATED;
	for (int i = 0; i < 16; i++)
		info->neff_uuid[i] = (uint8_t)(0xa0 + i);
	info->ticks_per_ns = 1;
	info->capture_unix_ns = 1700000000123456789ull;
	info->num_physical_cores = 8;
	info->num_dma_engines = 16;
	info->pcore_idx = 3;
	info->neuroncore_idx = 3;
	info->neuron_device_idx = 0;
	info->te_rows = 128;
	info->te_cols = 128;
	info->ve_channels = 128;
	info->se_channels = 128;
	info->gp_channels = 8;
	info->dma_ddr_bandwidth = 2.9e12;
	info->hbm_ddr_bandwidth = 7.25e11;
	info->te_clock_ghz = 2.8;
	info->ve_clock_ghz = 0.96;
	info->se_clock_ghz = 1.4;
	info->gp_clock_ghz = 1.4;
	info->nc_clock_ghz = 1.4;
	snprintf(info->target, sizeof(info->target), "trn2");
	snprintf(info->instance_type, sizeof(info->instance_type), "trn2.48xlarge");
	snprintf(info->runtime_version, sizeof(info->runtime_version), "2.99.0");
	snprintf(info->driver_version, sizeof(info->driver_version), "2.19.64");
	snprintf(info->neff_name, sizeof(info->neff_name), "file.neff");
}

/* A growable record list, the expected contents of a file. */
struct recs {
	struct nx_rec *v;
	size_t n, cap;
};

static struct nx_rec *recs_add(struct recs *l, int kind)
{
	struct nx_rec *r;

	NX_GROW(l->v, l->n + 1, l->cap);
	r = &l->v[l->n++];
	memset(r, 0, sizeof(*r));
	r->kind = kind;
	return r;
}

static void recs_free(struct recs *l)
{
	free(l->v);
	memset(l, 0, sizeof(*l));
}

/* Appends a plausible instruction stream: five engines interleaved in time order,
 * consecutive ids and per-engine indexes, occasional semaphore waits. */
static void gen_insts(struct recs *l, size_t n, uint64_t *t, uint64_t *id)
{
	static uint32_t idx[NX_ENGINE_COUNT];

	for (size_t i = 0; i < n; i++) {
		struct nx_rec_inst *r = &recs_add(l, NX_REC_INST)->u.inst;

		*t += rnd_below(120);
		r->id = (*id)++;
		r->engine = (uint8_t)rnd_below(NX_ENGINE_COUNT);
		r->start = *t;
		r->end = *t + 30 + rnd_below(900);
		r->wait_ticks = rnd_below(8) == 0 ? rnd_below(5000) : 0;
		r->index = idx[r->engine]++;
		r->exec = 0;
	}
}

static void gen_dmas(struct recs *l, size_t n, uint64_t *t, uint64_t *id)
{
	for (size_t i = 0; i < n; i++) {
		struct nx_rec_dma *r = &recs_add(l, NX_REC_DMA)->u.dma;

		*t += rnd_below(60);
		r->id = (*id)++;
		r->transfer = i / 32;
		r->trigger = (i / 32) % 3 == 0 ? UINT64_MAX : i / 32 * 7;
		r->start = *t;
		r->end = *t + 100 + rnd_below(400);
		r->block = (uint32_t)(i / 32 % 5);
		r->desc = (uint32_t)(i % 32);
		r->packet_idx = (uint32_t)(i % 32);
		r->bytes = 2048;
		r->queue = (uint16_t)(i / 32 % 4);
		r->crc = (uint16_t)rnd();
		r->dma_engine = (uint8_t)rnd_below(16);
	}
}

static void gen_sems(struct recs *l, size_t n, uint64_t *t)
{
	for (size_t i = 0; i < n; i++) {
		struct nx_rec_sem *r = &recs_add(l, NX_REC_SEM)->u.sem;

		*t += rnd_below(200);
		r->ts = *t;
		r->value = (int32_t)rnd_below(40) - 5;
		r->sem = (uint16_t)rnd_below(NX_NUM_SEMAPHORES);
		r->source = (uint8_t)rnd_below(NX_SEMSRC_AXI + 1);
		r->op = (uint8_t)rnd_below(NX_SEM_SET + 1);
		r->timing = (uint8_t)rnd_below(3);
		r->double_set = (uint8_t)rnd_below(2);
	}
}

static void gen_misc(struct recs *l, size_t n, uint64_t *t)
{
	for (size_t i = 0; i < n; i++) {
		struct nx_rec *g = recs_add(l, NX_REC_THROTTLE + (int)(i % 3));

		*t += rnd_below(5000);
		switch (g->kind) {
		case NX_REC_THROTTLE:
			g->u.throttle.ts = *t;
			g->u.throttle.duration = rnd_below(100000);
			g->u.throttle.k = 3;
			g->u.throttle.n = 4;
			g->u.throttle.type = (uint8_t)rnd_below(3);
			break;
		case NX_REC_ERROR:
			g->u.error.ts = *t;
			g->u.error.type_id = (int32_t)rnd_below(1000) - 500;
			g->u.error.type = (uint8_t)rnd_below(3);
			snprintf(g->u.error.description, sizeof(g->u.error.description),
				 "event %zu", i);
			snprintf(g->u.error.metadata, sizeof(g->u.error.metadata),
				 "{\"n\":%zu}", i);
			break;
		case NX_REC_EXEC:
			g->u.exec.ts = *t;
			g->u.exec.index = (uint32_t)(i / 6);
			g->u.exec.stop = (uint8_t)(i / 3 % 2);
			break;
		}
	}
}

static void write_file(const char *path, const struct nx_ntff_info *info, const struct recs *l)
{
	struct nx_ntff_writer *w = NULL;
	struct nx_err err = { 0 };

	if (nx_ntff_writer_open(&w, path, info, &err))
		fail_msg("%s", err.msg);
	for (size_t i = 0; i < l->n; i++) {
		if (nx_ntff_write(w, &l->v[i], &err))
			fail_msg("record %zu: %s", i, err.msg);
	}
	if (nx_ntff_writer_close(w, &err))
		fail_msg("%s", err.msg);
}

static void assert_rec_equal(const struct nx_rec *a, const struct nx_rec *b, size_t i)
{
	if (a->kind != b->kind)
		fail_msg("record %zu: kind %d, expected %d", i, b->kind, a->kind);
	switch (a->kind) {
	case NX_REC_INST: {
		const struct nx_rec_inst *x = &a->u.inst, *y = &b->u.inst;

		if (x->id != y->id || x->start != y->start || x->end != y->end ||
		    x->wait_ticks != y->wait_ticks || x->index != y->index ||
		    x->exec != y->exec || x->engine != y->engine)
			fail_msg("instruction %zu differs (id %" PRIu64 "/%" PRIu64 ")", i,
				 x->id, y->id);
		break;
	}
	case NX_REC_DMA: {
		const struct nx_rec_dma *x = &a->u.dma, *y = &b->u.dma;

		if (x->id != y->id || x->transfer != y->transfer || x->trigger != y->trigger ||
		    x->start != y->start || x->end != y->end || x->block != y->block ||
		    x->desc != y->desc || x->packet_idx != y->packet_idx ||
		    x->bytes != y->bytes || x->queue != y->queue || x->crc != y->crc ||
		    x->dma_engine != y->dma_engine)
			fail_msg("DMA record %zu differs", i);
		break;
	}
	case NX_REC_SEM: {
		const struct nx_rec_sem *x = &a->u.sem, *y = &b->u.sem;

		if (x->ts != y->ts || x->value != y->value || x->sem != y->sem ||
		    x->source != y->source || x->op != y->op || x->timing != y->timing ||
		    x->double_set != y->double_set)
			fail_msg("semaphore record %zu differs", i);
		break;
	}
	case NX_REC_THROTTLE: {
		const struct nx_rec_throttle *x = &a->u.throttle, *y = &b->u.throttle;

		if (x->ts != y->ts || x->duration != y->duration || x->k != y->k ||
		    x->n != y->n || x->type != y->type)
			fail_msg("throttle record %zu differs", i);
		break;
	}
	case NX_REC_ERROR: {
		const struct nx_rec_error *x = &a->u.error, *y = &b->u.error;

		if (x->ts != y->ts || x->type_id != y->type_id || x->type != y->type ||
		    strcmp(x->description, y->description) || strcmp(x->metadata, y->metadata))
			fail_msg("error record %zu differs ('%s' vs '%s')", i, x->description,
				 y->description);
		break;
	}
	case NX_REC_EXEC: {
		const struct nx_rec_exec *x = &a->u.exec, *y = &b->u.exec;

		if (x->ts != y->ts || x->index != y->index || x->stop != y->stop)
			fail_msg("execution record %zu differs", i);
		break;
	}
	default:
		fail_msg("record %zu: bad kind %d", i, a->kind);
	}
}

/* Reads path with mask and checks that, kind by kind, the records are exactly those of
 * l whose kind is in mask, in the order written. Returns the number read. */
static size_t check_file(const char *path, unsigned mask, const struct recs *l)
{
	struct nx_ntff_reader *r = NULL;
	struct nx_err err = { 0 };
	size_t next[NX_REC_KIND_MAX + 1] = { 0 }, total = 0;
	struct nx_rec rec;
	int rc;

	if (nx_ntff_reader_open(&r, path, &err))
		fail_msg("%s", err.msg);
	while ((rc = nx_ntff_reader_next(r, mask, &rec, &err)) == 1) {
		size_t *k;

		assert_true(rec.kind >= 1 && rec.kind <= NX_REC_KIND_MAX);
		assert_true(mask & NX_REC_MASK(rec.kind));
		k = &next[rec.kind];
		while (*k < l->n && l->v[*k].kind != rec.kind)
			(*k)++;
		if (*k >= l->n)
			fail_msg("extra %d record after %zu", rec.kind, total);
		assert_rec_equal(&l->v[*k], &rec, *k);
		(*k)++;
		total++;
	}
	if (rc != 0)
		fail_msg("%s", err.msg);
	for (int kind = 1; kind <= NX_REC_KIND_MAX; kind++) {
		size_t want = 0;

		for (size_t i = 0; i < l->n; i++)
			want += l->v[i].kind == kind;
		assert_int_equal(nx_ntff_reader_count(r, kind), (int64_t)want);
		if (mask & NX_REC_MASK(kind)) {
			size_t *k = &next[kind];

			while (*k < l->n && l->v[*k].kind != kind)
				(*k)++;
			if (*k != l->n)
				fail_msg("kind %d: record %zu missing", kind, *k);
		}
	}
	/* At the end, next keeps returning 0. */
	assert_int_equal(nx_ntff_reader_next(r, mask, &rec, &err), 0);
	nx_ntff_reader_close(r);
	return total;
}

/* Reads the whole file into memory. */
static uint8_t *slurp(const char *path, size_t *len)
{
	struct nx_err err = { 0 };
	char *data = NULL;

	if (nx_read_file(path, &data, len, &err))
		fail_msg("%s", err.msg);
	return (uint8_t *)data;
}

static void spit(const char *path, const uint8_t *data, size_t len)
{
	FILE *f = fopen(path, "wb");

	assert_non_null(f);
	assert_int_equal(fwrite(data, 1, len, f), len);
	assert_int_equal(fclose(f), 0);
}

/* Opens path and reads everything with mask; returns the first error (or 0) and leaves
 * the message in err. */
static int read_everything(const char *path, unsigned mask, struct nx_err *err)
{
	struct nx_ntff_reader *r = NULL;
	struct nx_rec rec;
	int rc;

	nx_err_clear(err);
	rc = nx_ntff_reader_open(&r, path, err);
	if (rc)
		return rc;
	while ((rc = nx_ntff_reader_next(r, mask, &rec, err)) == 1)
		;
	nx_ntff_reader_close(r);
	return rc;
}

/* Offsets of the chunks of a file (the END chunk last). Returns the count. */
static size_t chunk_offsets(const uint8_t *data, size_t len, size_t *offs, size_t max)
{
	size_t n = 0, off = nx_get_le32(data + NX_NTFF_OFF_HEADER_SIZE);

	while (off + NX_NTFF_CHUNK_HDR <= len && n < max) {
		offs[n++] = off;
		off += NX_NTFF_CHUNK_HDR + nx_get_le32(data + off + 4);
	}
	assert_int_equal(off, len);
	return n;
}

/* The error must be a corruption or truncation report naming the file and a byte. */
static void assert_bad(int rc, const struct nx_err *err, const char *path, const char *what)
{
	if (rc != NX_ETRUNC && rc != NX_ECORRUPT)
		fail_msg("%s: expected NX_ETRUNC or NX_ECORRUPT, got %d (%s)", what, rc, err->msg);
	if (strncmp(err->msg, path, strlen(path)) != 0 || !strstr(err->msg, "byte"))
		fail_msg("%s: message does not name file and offset: %s", what, err->msg);
}

static void test_varint(void **state)
{
	static const uint64_t vals[] = {
		0, 1, 127, 128, 255, 16383, 16384, UINT32_MAX, (uint64_t)1 << 56,
		((uint64_t)1 << 63) - 1, (uint64_t)1 << 63, UINT64_MAX,
	};
	uint8_t buf[16];
	uint64_t v = 0;

	(void)state;
	for (size_t i = 0; i < NX_ARRAY_SIZE(vals); i++) {
		size_t n = nx_varint_put(buf, vals[i]);

		assert_int_equal(n, nx_varint_len(vals[i]));
		assert_int_equal(nx_varint_get(buf, n, &v), (int)n);
		NX_ASSERT_CMP(v, ==, vals[i]);
		/* Every shorter buffer is reported as truncated, never over-read. */
		for (size_t k = 0; k < n; k++)
			assert_int_equal(nx_varint_get(buf, k, &v), 0);
	}
	assert_int_equal(nx_varint_put(buf, UINT64_MAX), 10);
	/* Eleven bytes, or a tenth byte carrying more than bit 63, are malformed. */
	memset(buf, 0x80, sizeof(buf));
	buf[10] = 0;
	assert_int_equal(nx_varint_get(buf, 11, &v), -1);
	assert_int_equal(nx_varint_get(buf, 10, &v), -1);
	assert_int_equal(nx_varint_get(buf, 9, &v), 0);
	memset(buf, 0xff, 9);
	buf[9] = 0x02;
	assert_int_equal(nx_varint_get(buf, 10, &v), -1);
	buf[9] = 0x01;
	assert_int_equal(nx_varint_get(buf, 10, &v), 10);
	NX_ASSERT_CMP(v, ==, UINT64_MAX);
	/* Non-minimal but bounded encodings decode. */
	buf[0] = 0x80;
	buf[1] = 0x00;
	assert_int_equal(nx_varint_get(buf, 2, &v), 2);
	NX_ASSERT_CMP(v, ==, 0);

	for (int64_t x = -300; x <= 300; x++)
		NX_ASSERT_CMP(nx_unzigzag64(nx_zigzag64(x)), ==, x);
	assert_true(nx_zigzag64(-1) == 1 && nx_zigzag64(1) == 2);
	NX_ASSERT_CMP(nx_unzigzag64(nx_zigzag64(INT64_MIN)), ==, INT64_MIN);
	NX_ASSERT_CMP(nx_unzigzag64(nx_zigzag64(INT64_MAX)), ==, INT64_MAX);
	NX_ASSERT_CMP(nx_unzigzag32(nx_zigzag32(INT32_MIN)), ==, INT32_MIN);
	NX_ASSERT_CMP(nx_unzigzag32(nx_zigzag32(INT32_MAX)), ==, INT32_MAX);
	NX_ASSERT_CMP(nx_undelta64(nx_delta64(UINT64_MAX, 5), 5), ==, UINT64_MAX);
	NX_ASSERT_CMP(nx_delta64(UINT64_MAX, 0), ==, 1);
	NX_ASSERT_CMP(nx_undelta32(nx_delta32(0, UINT32_MAX), UINT32_MAX), ==, 0);
}

/* Every kind with boundary values: zeros, the largest ids and timestamps, empty,
 * full-length, over-long and multi-byte strings. */
static void test_roundtrip_edges(void **state)
{
	struct nx_ntff_info info, got;
	struct recs l = { 0 };
	struct nx_ntff_reader *r = NULL;
	struct nx_err err = { 0 };
	struct nx_rec *g;
	char *path = tmp_path("edges");
	const uint64_t big = UINT64_MAX - 10;

	(void)state;
	test_info(&info);
	info.ticks_per_ns = 3;
	/* Header strings: empty, and 127 bytes exactly (the longest that fits). */
	info.runtime_version[0] = '\0';
	memset(info.neff_name, 'n', 127);
	info.neff_name[127] = '\0';

	g = recs_add(&l, NX_REC_INST); /* all zero */
	g = recs_add(&l, NX_REC_INST);
	g->u.inst = (struct nx_rec_inst){ .id = UINT64_MAX, .start = 0, .end = UINT64_MAX,
					  .wait_ticks = UINT64_MAX, .index = UINT32_MAX,
					  .exec = UINT32_MAX, .engine = NX_ENGINE_SYNC };
	g = recs_add(&l, NX_REC_INST);
	g->u.inst = (struct nx_rec_inst){ .id = 0, .start = big, .end = UINT64_MAX,
					  .index = 0, .exec = 0, .engine = NX_ENGINE_TENSOR };
	g = recs_add(&l, NX_REC_INST);
	g->u.inst = (struct nx_rec_inst){ .id = 1u << 31, .start = UINT64_MAX,
					  .end = UINT64_MAX, .index = 7, .exec = 1,
					  .engine = NX_ENGINE_GPSIMD };

	g = recs_add(&l, NX_REC_DMA); /* all zero */
	g = recs_add(&l, NX_REC_DMA);
	g->u.dma = (struct nx_rec_dma){ .id = UINT64_MAX, .transfer = UINT64_MAX,
					.trigger = UINT64_MAX, .start = 5, .end = UINT64_MAX,
					.block = NX_NONE32, .desc = UINT32_MAX,
					.packet_idx = UINT32_MAX, .bytes = UINT32_MAX,
					.queue = UINT16_MAX, .crc = UINT16_MAX, .dma_engine = 15 };
	g = recs_add(&l, NX_REC_DMA);
	g->u.dma = (struct nx_rec_dma){ .id = 3, .transfer = 0, .trigger = 0, .start = big,
					.end = big, .block = 0, .desc = 0, .packet_idx = 0,
					.bytes = 1, .queue = 0, .crc = 0, .dma_engine = 0 };

	g = recs_add(&l, NX_REC_SEM);
	g->u.sem = (struct nx_rec_sem){ .ts = 0, .value = INT32_MIN, .sem = 0 };
	g = recs_add(&l, NX_REC_SEM);
	g->u.sem = (struct nx_rec_sem){ .ts = UINT64_MAX, .value = INT32_MAX, .sem = 255,
					.source = NX_SEMSRC_AXI, .op = NX_SEM_SET,
					.timing = NX_SEMT_COMPLETE, .double_set = 1 };

	g = recs_add(&l, NX_REC_THROTTLE);
	g->u.throttle = (struct nx_rec_throttle){ .ts = 0, .duration = 0 };
	g = recs_add(&l, NX_REC_THROTTLE);
	g->u.throttle = (struct nx_rec_throttle){ .ts = UINT64_MAX, .duration = UINT64_MAX,
						  .k = UINT16_MAX, .n = UINT16_MAX,
						  .type = NX_THROTTLE_UNKNOWN };

	g = recs_add(&l, NX_REC_ERROR); /* empty strings */
	g = recs_add(&l, NX_REC_ERROR);
	g->u.error.ts = 1;
	g->u.error.type_id = INT32_MIN;
	g->u.error.type = NX_ERRT_NOTIFICATION;
	memset(g->u.error.description, 'd', 63);
	memset(g->u.error.metadata, 'm', 191);
	g = recs_add(&l, NX_REC_ERROR);
	g->u.error.ts = UINT64_MAX;
	g->u.error.type_id = INT32_MAX;
	snprintf(g->u.error.description, sizeof(g->u.error.description), "DMA queue \xc3\xa9rror");

	g = recs_add(&l, NX_REC_EXEC);
	g->u.exec = (struct nx_rec_exec){ .ts = 0, .index = 0, .stop = 0 };
	g = recs_add(&l, NX_REC_EXEC);
	g->u.exec = (struct nx_rec_exec){ .ts = UINT64_MAX, .index = UINT32_MAX, .stop = 1 };

	write_file(path, &info, &l);
	assert_int_equal(check_file(path, NX_REC_MASK_ALL, &l), l.n);

	assert_int_equal(nx_ntff_reader_open(&r, path, &err), 0);
	got = *nx_ntff_reader_info(r);
	assert_int_equal(got.version, NX_NTFF_VERSION);
	assert_int_equal(got.flags, info.flags);
	assert_memory_equal(got.neff_uuid, info.neff_uuid, 16);
	assert_true(got.ticks_per_ns == 3 && got.capture_unix_ns == info.capture_unix_ns);
	assert_int_equal(got.num_physical_cores, 8);
	assert_int_equal(got.num_dma_engines, 16);
	assert_int_equal(got.pcore_idx, 3);
	assert_int_equal(got.te_rows, 128);
	assert_int_equal(got.gp_channels, 8);
	assert_true(got.dma_ddr_bandwidth == 2.9e12 && got.te_clock_ghz == 2.8 &&
		    got.ve_clock_ghz == 0.96 && got.nc_clock_ghz == 1.4);
	assert_string_equal(got.target, "trn2");
	assert_string_equal(got.instance_type, "trn2.48xlarge");
	assert_string_equal(got.runtime_version, "");
	assert_string_equal(got.neff_name, info.neff_name);
	/* Counts are unknown until the end is reached. */
	assert_int_equal(nx_ntff_reader_count(r, NX_REC_INST), -1);
	assert_int_equal(nx_ntff_reader_count(r, 0), -1);
	assert_int_equal(nx_ntff_reader_count(r, NX_REC_KIND_MAX + 1), -1);
	nx_ntff_reader_close(r);
	recs_free(&l);
	free(path);
}

/* Strings longer than their field are clipped, never overflowed, and never in the
 * middle of a UTF-8 character. */
static void test_long_strings(void **state)
{
	struct nx_ntff_info info;
	struct recs l = { 0 }, want = { 0 };
	struct nx_ntff_reader *r = NULL;
	struct nx_err err = { 0 };
	struct nx_rec *g, rec;
	char *path = tmp_path("strings");

	(void)state;
	test_info(&info);
	memset(info.target, 't', sizeof(info.target)); /* no NUL at all */
	/* 126 ASCII bytes, then a 2-byte character straddling the 127-byte limit. */
	memset(info.driver_version, 'v', 126);
	info.driver_version[126] = (char)0xc3;
	info.driver_version[127] = (char)0xa9;

	g = recs_add(&l, NX_REC_ERROR);
	memset(g->u.error.description, 'x', sizeof(g->u.error.description));
	memset(g->u.error.metadata, 'y', sizeof(g->u.error.metadata));
	g = recs_add(&l, NX_REC_ERROR);
	/* 62 ASCII bytes then a 3-byte character: only the ASCII part fits. */
	memset(g->u.error.description, 'a', 62);
	memcpy(g->u.error.description + 62, "\xe2\x82", 2); /* no NUL, cut mid-character */
	g = recs_add(&want, NX_REC_ERROR);
	memset(g->u.error.description, 'x', 63);
	memset(g->u.error.metadata, 'y', 191);
	g = recs_add(&want, NX_REC_ERROR);
	memset(g->u.error.description, 'a', 62);

	write_file(path, &info, &l);
	check_file(path, NX_REC_MASK_ALL, &want);
	assert_int_equal(nx_ntff_reader_open(&r, path, &err), 0);
	assert_int_equal(strlen(nx_ntff_reader_info(r)->target), 127);
	assert_int_equal(strlen(nx_ntff_reader_info(r)->driver_version), 126);
	assert_int_equal(nx_ntff_reader_next(r, NX_REC_MASK_ALL, &rec, &err), 1);
	assert_int_equal(strlen(rec.u.error.description), 63);
	nx_ntff_reader_close(r);
	recs_free(&l);
	recs_free(&want);
	free(path);
}

/* A realistic mix big enough for many chunks of each main kind, written interleaved. */
static void gen_mix(struct recs *l, size_t scale)
{
	uint64_t ti = 0, td = 0, ts = 0, tm = 0, ii = 0, id = 1u << 20;
	struct recs parts[4] = { { 0 } };
	size_t pos[4] = { 0 };

	gen_insts(&parts[0], 3 * scale, &ti, &ii);
	gen_dmas(&parts[1], scale, &td, &id);
	gen_sems(&parts[2], scale, &ts);
	gen_misc(&parts[3], scale / 10 + 3, &tm);
	/* Interleave the four time-ordered streams by picking one at random. */
	for (;;) {
		size_t live = 0, pick;

		for (int k = 0; k < 4; k++)
			live += pos[k] < parts[k].n;
		if (!live)
			break;
		do
			pick = rnd_below(4);
		while (pos[pick] >= parts[pick].n);
		*recs_add(l, parts[pick].v[pos[pick]].kind) = parts[pick].v[pos[pick]];
		pos[pick]++;
	}
	for (int k = 0; k < 4; k++)
		recs_free(&parts[k]);
}

static void test_many_chunks(void **state)
{
	struct nx_ntff_info info;
	struct recs l = { 0 };
	char *path = tmp_path("many");
	size_t len, offs[4096], n, kinds[NX_REC_KIND_MAX + 1] = { 0 };
	uint8_t *data;

	(void)state;
	test_info(&info);
	gen_mix(&l, 100000);
	write_file(path, &info, &l);
	assert_int_equal(check_file(path, NX_REC_MASK_ALL, &l), l.n);

	/* Several chunks per main kind, each kind alone in its chunks, and no chunk over
	 * the writer's 64 KiB. */
	data = slurp(path, &len);
	n = chunk_offsets(data, len, offs, NX_ARRAY_SIZE(offs));
	for (size_t i = 0; i < n; i++) {
		uint32_t type = nx_get_le32(data + offs[i]);

		NX_ASSERT_CMP(nx_get_le32(data + offs[i] + 4), <=, 64u << 10);
		if (i + 1 == n)
			assert_int_equal(type, NX_NTFF_CHUNK_END);
		else
			kinds[type]++;
	}
	assert_true(kinds[NX_REC_INST] >= 3 && kinds[NX_REC_DMA] >= 2 && kinds[NX_REC_SEM] >= 2);
	free(data);
	recs_free(&l);
	free(path);
}


static size_t count_kind(const struct recs *l, int kind)
{
	size_t n = 0;

	for (size_t i = 0; i < l->n; i++)
		n += l->v[i].kind == kind;
	return n;
}

static void test_kind_mask(void **state)
{
	struct nx_ntff_info info;
	struct recs l = { 0 };
	struct nx_ntff_reader *r = NULL;
	struct nx_err err = { 0 };
	struct nx_rec rec;
	char *path = tmp_path("mask");
	int rc, got = 0;

	(void)state;
	test_info(&info);
	gen_mix(&l, 30000);
	write_file(path, &info, &l);
	assert_int_equal(check_file(path, NX_REC_MASK(NX_REC_INST), &l),
			 count_kind(&l, NX_REC_INST));
	assert_int_equal(check_file(path, NX_REC_MASK(NX_REC_DMA) | NX_REC_MASK(NX_REC_EXEC), &l),
			 count_kind(&l, NX_REC_DMA) + count_kind(&l, NX_REC_EXEC));
	assert_int_equal(check_file(path, NX_REC_MASK(NX_REC_ERROR), &l),
			 count_kind(&l, NX_REC_ERROR));
	/* An empty mask reads nothing but still verifies the END chunk. */
	assert_int_equal(check_file(path, 0, &l), 0);

	/* The mask may change between calls; the reader only moves forward. */
	assert_int_equal(nx_ntff_reader_open(&r, path, &err), 0);
	for (int i = 0; i < 10; i++) {
		assert_int_equal(nx_ntff_reader_next(r, NX_REC_MASK(NX_REC_SEM), &rec, &err), 1);
		assert_int_equal(rec.kind, NX_REC_SEM);
	}
	while ((rc = nx_ntff_reader_next(r, NX_REC_MASK(NX_REC_INST), &rec, &err)) == 1) {
		assert_int_equal(rec.kind, NX_REC_INST);
		got++;
	}
	assert_int_equal(rc, 0);
	NX_ASSERT_CMP(got, >, 0);
	assert_int_equal(nx_ntff_reader_count(r, NX_REC_SEM), (int64_t)count_kind(&l, NX_REC_SEM));
	nx_ntff_reader_close(r);
	recs_free(&l);
	free(path);
}

static void test_rewind(void **state)
{
	struct nx_ntff_info info;
	struct recs l = { 0 };
	struct nx_ntff_reader *r = NULL;
	struct nx_err err = { 0 };
	struct nx_rec rec;
	char *path = tmp_path("rewind");
	size_t n_inst;

	(void)state;
	test_info(&info);
	gen_mix(&l, 20000);
	n_inst = count_kind(&l, NX_REC_INST);
	write_file(path, &info, &l);
	assert_int_equal(nx_ntff_reader_open(&r, path, &err), 0);
	for (int pass = 0; pass < 3; pass++) {
		size_t seen = 0, want = pass == 0 ? n_inst / 2 : n_inst;
		size_t k = 0;
		int rc = 1;

		while (seen < want &&
		       (rc = nx_ntff_reader_next(r, NX_REC_MASK(NX_REC_INST), &rec, &err)) == 1) {
			while (l.v[k].kind != NX_REC_INST)
				k++;
			assert_rec_equal(&l.v[k++], &rec, seen);
			seen++;
		}
		assert_int_equal(seen, want);
		if (pass > 0) {
			assert_int_equal(nx_ntff_reader_next(r, NX_REC_MASK(NX_REC_INST), &rec,
							     &err), 0);
			assert_int_equal(nx_ntff_reader_count(r, NX_REC_INST), (int64_t)n_inst);
		}
		assert_int_equal(nx_ntff_reader_rewind(r, &err), 0);
	}
	nx_ntff_reader_close(r);
	recs_free(&l);
	free(path);
}

/* Builds a chunk at out and returns its size. */
static size_t put_chunk(uint8_t *out, uint32_t type, const void *payload, uint32_t len,
			uint32_t count)
{
	nx_put_le32(out, type);
	nx_put_le32(out + 4, len);
	nx_put_le32(out + 8, count);
	nx_put_le32(out + 12, nx_crc32c(0, payload, len));
	memcpy(out + NX_NTFF_CHUNK_HDR, payload, len);
	return NX_NTFF_CHUNK_HDR + len;
}

/* Chunks of a type this build does not know are skipped, wherever they are, and their
 * payload is not even checksummed. */
static void test_unknown_chunk(void **state)
{
	struct nx_ntff_info info;
	struct recs l = { 0 };
	char *path = tmp_path("foreign"), *path2 = tmp_path("foreign");
	uint8_t foreign[NX_NTFF_CHUNK_HDR + 100], junk[100];
	size_t len, offs[256], n, flen, pos = 0;
	uint8_t *data, *out;

	(void)state;
	for (size_t i = 0; i < sizeof(junk); i++)
		junk[i] = (uint8_t)rnd();
	flen = put_chunk(foreign, 0x4e585a5au, junk, sizeof(junk), 7);
	test_info(&info);
	gen_mix(&l, 20000);
	write_file(path, &info, &l);
	data = slurp(path, &len);
	n = chunk_offsets(data, len, offs, NX_ARRAY_SIZE(offs));
	NX_ASSERT_CMP(n, >=, 3);
	/* Before every chunk, END included. */
	out = nx_xmalloc(len + n * flen);
	memcpy(out, data, offs[0]);
	pos = offs[0];
	for (size_t i = 0; i < n; i++) {
		size_t end = i + 1 < n ? offs[i + 1] : len;

		memcpy(out + pos, foreign, flen);
		pos += flen;
		memcpy(out + pos, data + offs[i], end - offs[i]);
		pos += end - offs[i];
	}
	spit(path2, out, pos);
	assert_int_equal(check_file(path2, NX_REC_MASK_ALL, &l), l.n);
	/* A broken CRC in a foreign chunk does not matter: it is never read. */
	out[offs[0] + 12] ^= 0xff;
	spit(path2, out, pos);
	assert_int_equal(check_file(path2, NX_REC_MASK_ALL, &l), l.n);
	free(out);
	free(data);
	recs_free(&l);
	free(path);
	free(path2);
}

static void test_determinism(void **state)
{
	struct nx_ntff_info info;
	struct recs l = { 0 };
	char *a = tmp_path("det"), *b = tmp_path("det");
	uint8_t *da, *db;
	size_t la, lb;

	(void)state;
	test_info(&info);
	gen_mix(&l, 20000);
	write_file(a, &info, &l);
	write_file(b, &info, &l);
	da = slurp(a, &la);
	db = slurp(b, &lb);
	assert_int_equal(la, lb);
	assert_memory_equal(da, db, la);
	/* Reserved header bytes are zero. */
	assert_int_equal(nx_get_le32(da + NX_NTFF_OFF_RESERVED0), 0);
	assert_int_equal(nx_get_le32(da + NX_NTFF_OFF_RESERVED1), 0);
	assert_memory_equal(da, NX_NTFF_MAGIC, NX_NTFF_MAGIC_LEN);
	free(da);
	free(db);
	recs_free(&l);
	free(a);
	free(b);
}

/* Average encoded size per record (chunk headers included) of a single-kind file. */
static double bytes_per_record(struct recs *l, const char *what)
{
	struct nx_ntff_info info;
	char *path = tmp_path(what);
	uint8_t *data;
	size_t len;
	double avg;

	test_info(&info);
	write_file(path, &info, l);
	data = slurp(path, &len);
	avg = (double)(len - NX_NTFF_HEADER_SIZE - NX_NTFF_CHUNK_HDR - 8 * NX_REC_KIND_MAX) /
	      (double)l->n;
	check_file(path, NX_REC_MASK_ALL, l);
	print_message("%s: %zu records, %.2f bytes per record\n", what, l->n, avg);
	free(data);
	free(path);
	return avg;
}

static void test_record_size(void **state)
{
	struct recs l = { 0 };
	uint64_t t = 0, id = 0;
	double inst;

	(void)state;
	gen_insts(&l, 200000, &t, &id);
	inst = bytes_per_record(&l, "instruction");
	NX_ASSERT_CMP(inst, <=, 32.0);
	NX_ASSERT_CMP(inst, <=, 12.0); /* the design target for typical streams */
	recs_free(&l);
	t = 0;
	gen_dmas(&l, 100000, &t, &id);
	NX_ASSERT_CMP(bytes_per_record(&l, "dma"), <=, 32.0);
	recs_free(&l);
	t = 0;
	gen_sems(&l, 100000, &t);
	NX_ASSERT_CMP(bytes_per_record(&l, "semaphore"), <=, 32.0);
	recs_free(&l);
}

static void expect_usage(int rc, const struct nx_err *err, const char *path, const char *needle)
{
	if (rc != NX_EUSAGE)
		fail_msg("expected NX_EUSAGE, got %d (%s)", rc, err->msg);
	if (strncmp(err->msg, path, strlen(path)) || !strstr(err->msg, needle))
		fail_msg("message lacks '%s': %s", needle, err->msg);
}

static void test_writer_rules(void **state)
{
	struct nx_ntff_info info, bad;
	struct nx_ntff_writer *w = NULL;
	struct nx_err err = { 0 };
	struct recs ok = { 0 };
	struct nx_rec rec;
	char *path = tmp_path("rules"), *tmp = writer_tmp(path);

	(void)state;
	test_info(&info);

	/* Header values a reader would reject are refused up front; nothing is created. */
	bad = info;
	bad.ticks_per_ns = 0;
	expect_usage(nx_ntff_writer_open(&w, path, &bad, &err), &err, path, "ticks_per_ns");
	assert_null(w);
	bad = info;
	bad.num_dma_engines = 65;
	expect_usage(nx_ntff_writer_open(&w, path, &bad, &err), &err, path, "num_dma_engines");
	bad = info;
	bad.te_clock_ghz = 0.0 / 0.0;
	expect_usage(nx_ntff_writer_open(&w, path, &bad, &err), &err, path, "te_clock_ghz");
	bad = info;
	bad.pcore_idx = 8;
	expect_usage(nx_ntff_writer_open(&w, path, &bad, &err), &err, path, "pcore_idx");
	bad = info;
	bad.flags |= 1u << 7;
	expect_usage(nx_ntff_writer_open(&w, path, &bad, &err), &err, path, "flags");
	assert_false(nx_is_file(path) || nx_is_file(tmp));

	assert_int_equal(nx_ntff_writer_open(&w, path, &info, &err), 0);
	assert_true(nx_is_file(tmp));
	assert_false(nx_is_file(path));

	memset(&rec, 0, sizeof(rec));
	rec.kind = NX_REC_INST;
	rec.u.inst.start = 1000;
	rec.u.inst.end = 1010;
	assert_int_equal(nx_ntff_write(w, &rec, &err), 0);
	*recs_add(&ok, NX_REC_INST) = rec;
	/* Per kind, time order. */
	rec.u.inst.start = 999;
	expect_usage(nx_ntff_write(w, &rec, &err), &err, path, "time order");
	/* A record that ends before it starts. */
	rec.u.inst.start = 1000;
	rec.u.inst.end = 999;
	expect_usage(nx_ntff_write(w, &rec, &err), &err, path, "before start");
	rec.u.inst.end = 1000;
	rec.u.inst.engine = NX_ENGINE_COUNT;
	expect_usage(nx_ntff_write(w, &rec, &err), &err, path, "engine");
	rec.kind = 0;
	expect_usage(nx_ntff_write(w, &rec, &err), &err, path, "kind 0");
	rec.kind = NX_REC_KIND_MAX + 1;
	expect_usage(nx_ntff_write(w, &rec, &err), &err, path, "unknown");

	/* Other kinds keep their own clock. */
	memset(&rec, 0, sizeof(rec));
	rec.kind = NX_REC_SEM;
	rec.u.sem.sem = NX_NUM_SEMAPHORES;
	expect_usage(nx_ntff_write(w, &rec, &err), &err, path, "sem 256");
	rec.u.sem.sem = 3;
	assert_int_equal(nx_ntff_write(w, &rec, &err), 0);
	*recs_add(&ok, NX_REC_SEM) = rec;
	memset(&rec, 0, sizeof(rec));
	rec.kind = NX_REC_DMA;
	rec.u.dma.dma_engine = 16;
	expect_usage(nx_ntff_write(w, &rec, &err), &err, path, "dma_engine");
	memset(&rec, 0, sizeof(rec));
	rec.kind = NX_REC_EXEC;
	rec.u.exec.stop = 2;
	expect_usage(nx_ntff_write(w, &rec, &err), &err, path, "stop");

	/* Rejected records leave the writer usable. */
	assert_int_equal(nx_ntff_writer_close(w, &err), 0);
	assert_true(nx_is_file(path));
	assert_false(nx_is_file(tmp));
	check_file(path, NX_REC_MASK_ALL, &ok);

	/* DMA records require the DGE-notifications flag. */
	info.flags = NX_NTFF_SIMULATED;
	assert_int_equal(nx_ntff_writer_open(&w, path, &info, &err), 0);
	memset(&rec, 0, sizeof(rec));
	rec.kind = NX_REC_DMA;
	expect_usage(nx_ntff_write(w, &rec, &err), &err, path, "DGE");
	nx_ntff_writer_abort(w);
	/* Abort removes the temporary file and leaves the published one alone. */
	assert_false(nx_is_file(tmp));
	assert_true(nx_is_file(path));

	recs_free(&ok);
	free(tmp);
	free(path);
}

static void test_writer_abort_and_io(void **state)
{
	struct nx_ntff_info info;
	struct nx_ntff_writer *w = NULL;
	struct nx_err err = { 0 };
	struct recs l = { 0 };
	char *path = tmp_path("abort"), *tmp = writer_tmp(path);
	char *nodir = nx_xasprintf("%s/no/such/dir/x.ntff", tmp_dir);
	uint64_t t = 0, id = 0;

	(void)state;
	test_info(&info);
	gen_insts(&l, 50000, &t, &id);
	assert_int_equal(nx_ntff_writer_open(&w, path, &info, &err), 0);
	for (size_t i = 0; i < l.n; i++)
		assert_int_equal(nx_ntff_write(w, &l.v[i], &err), 0);
	assert_true(nx_is_file(tmp));
	nx_ntff_writer_abort(w);
	assert_false(nx_is_file(tmp));
	assert_false(nx_is_file(path));
	nx_ntff_writer_abort(NULL);
	assert_int_equal(nx_ntff_writer_close(NULL, &err), NX_EUSAGE);

	assert_int_equal(nx_ntff_writer_open(&w, nodir, &info, &err), -ENOENT);
	assert_null(w);
	assert_non_null(strstr(err.msg, "x.ntff"));
	assert_non_null(strstr(err.msg, "does not exist"));
	/* the writer follows the output rule: a file that is not an NTFF is kept */
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	fputs("a user's notes\n", f);
	assert_int_equal(fclose(f), 0);
	assert_int_equal(nx_ntff_writer_open(&w, path, &info, &err), NX_EUSAGE);
	assert_null(w);
	assert_non_null(strstr(err.msg, "is not an NTFF that neuron-explorer wrote"));
	assert_true(nx_is_file(path) && !nx_is_file(tmp));
	unlink(path);

	recs_free(&l);
	free(nodir);
	free(tmp);
	free(path);
}

/* A valid small file for the damage tests: every kind, several INST chunks. */
static uint8_t *good_file(const char *path, size_t *len, struct recs *l)
{
	struct nx_ntff_info info;

	test_info(&info);
	gen_mix(l, 10000);
	write_file(path, &info, l);
	return slurp(path, len);
}

static void fix_header_crc(uint8_t *data)
{
	nx_put_le32(data + NX_NTFF_OFF_CRC, nx_crc32c(0, data, NX_NTFF_OFF_CRC));
}

static void test_bad_header(void **state)
{
	struct recs l = { 0 };
	struct nx_ntff_reader *r = NULL;
	struct nx_err err = { 0 };
	char *path = tmp_path("hdr-good"), *bad = tmp_path("hdr-bad");
	char *missing = tmp_path("missing");
	uint8_t *data, *copy;
	size_t len;
	int rc;

	(void)state;
	data = good_file(path, &len, &l);
	copy = nx_xmalloc(len + 64);

	rc = nx_ntff_reader_open(&r, missing, &err);
	assert_int_equal(rc, -ENOENT);
	assert_null(r);
	NX_ASSERT_CMP(strncmp(err.msg, missing, strlen(missing)), ==, 0);

	assert_int_equal(nx_ntff_reader_open(&r, tmp_dir, &err), -EINVAL);

	spit(bad, data, 0);
	rc = nx_ntff_reader_open(&r, bad, &err);
	assert_bad(rc, &err, bad, "empty file");
	assert_int_equal(rc, NX_ETRUNC);

	spit(bad, data, 3); /* a prefix of the magic: truncated, not foreign */
	assert_int_equal(read_everything(bad, NX_REC_MASK_ALL, &err), NX_ETRUNC);

	memcpy(copy, data, len);
	memcpy(copy, "GIF89a\0\0", 8);
	spit(bad, copy, len);
	rc = read_everything(bad, NX_REC_MASK_ALL, &err);
	assert_bad(rc, &err, bad, "magic");
	assert_int_equal(rc, NX_ECORRUPT);
	assert_non_null(strstr(err.msg, "not an NTFF file"));

	/* A newer major version is refused by name, whatever follows. */
	memcpy(copy, data, len);
	nx_put_le32(copy + NX_NTFF_OFF_VERSION, 2);
	fix_header_crc(copy);
	spit(bad, copy, len);
	assert_int_equal(read_everything(bad, NX_REC_MASK_ALL, &err), NX_EVERSION);
	NX_ASSERT_CMP(strncmp(err.msg, bad, strlen(bad)), ==, 0);
	assert_non_null(strstr(err.msg,
			       "NTFF version 2 is not supported by this build (supported: 1"));

	memcpy(copy, data, len);
	copy[NX_NTFF_OFF_NEFF_NAME] ^= 0x20;
	spit(bad, copy, len);
	rc = read_everything(bad, NX_REC_MASK_ALL, &err);
	assert_bad(rc, &err, bad, "header CRC");
	assert_non_null(strstr(err.msg, "header CRC mismatch"));

	/* Fields that pass the CRC but make no sense. */
	memcpy(copy, data, len);
	nx_put_le32(copy + NX_NTFF_OFF_NUM_DMA, 65);
	fix_header_crc(copy);
	spit(bad, copy, len);
	rc = read_everything(bad, NX_REC_MASK_ALL, &err);
	assert_bad(rc, &err, bad, "num_dma_engines");
	assert_non_null(strstr(err.msg, "num_dma_engines 65 exceeds 64"));

	memcpy(copy, data, len);
	nx_put_le64(copy + NX_NTFF_OFF_TICKS_PER_NS, 0);
	fix_header_crc(copy);
	spit(bad, copy, len);
	rc = read_everything(bad, NX_REC_MASK_ALL, &err);
	assert_bad(rc, &err, bad, "ticks_per_ns");

	memcpy(copy, data, len);
	nx_put_ledouble(copy + NX_NTFF_OFF_HBM_BW, -1.0);
	fix_header_crc(copy);
	spit(bad, copy, len);
	rc = read_everything(bad, NX_REC_MASK_ALL, &err);
	assert_bad(rc, &err, bad, "hbm_ddr_bandwidth");

	memcpy(copy, data, len);
	memset(copy + NX_NTFF_OFF_TARGET, 'x', NX_NTFF_STR_LEN);
	fix_header_crc(copy);
	spit(bad, copy, len);
	rc = read_everything(bad, NX_REC_MASK_ALL, &err);
	assert_bad(rc, &err, bad, "target");
	assert_non_null(strstr(err.msg, "NUL"));

	memcpy(copy, data, len);
	nx_put_le32(copy + NX_NTFF_OFF_HEADER_SIZE, 802);
	spit(bad, copy, len);
	assert_bad(read_everything(bad, NX_REC_MASK_ALL, &err), &err, bad, "header size");

	/* A longer header (a later compatible revision) is accepted, extra bytes unread. */
	memcpy(copy, data, NX_NTFF_OFF_CRC);
	memset(copy + NX_NTFF_OFF_CRC, 0x5a, 32);
	nx_put_le32(copy + NX_NTFF_OFF_HEADER_SIZE, NX_NTFF_HEADER_SIZE + 32);
	nx_put_le32(copy + NX_NTFF_HEADER_SIZE + 28,
		    nx_crc32c(0, copy, NX_NTFF_HEADER_SIZE + 28));
	memcpy(copy + NX_NTFF_HEADER_SIZE + 32, data + NX_NTFF_HEADER_SIZE,
	       len - NX_NTFF_HEADER_SIZE);
	spit(bad, copy, len + 32);
	check_file(bad, NX_REC_MASK_ALL, &l);

	/* Any single flipped header byte is caught. */
	for (size_t i = 0; i < NX_NTFF_HEADER_SIZE; i++) {
		memcpy(copy, data, len);
		copy[i] ^= 0x10;
		spit(bad, copy, len);
		rc = read_everything(bad, NX_REC_MASK_ALL, &err);
		if (rc != NX_EVERSION)
			assert_bad(rc, &err, bad, "flipped header byte");
	}

	free(copy);
	free(data);
	recs_free(&l);
	free(missing);
	free(bad);
	free(path);
}

static int cmp_size_desc(const void *a, const void *b)
{
	size_t x = *(const size_t *)a, y = *(const size_t *)b;

	return x < y ? 1 : x > y ? -1 : 0;
}

/* Cutting the file anywhere (inside the header, on every chunk boundary, around and
 * inside every chunk) must fail cleanly, whatever kinds are read. */
static void test_truncation(void **state)
{
	struct recs l = { 0 };
	struct nx_err err = { 0 };
	char *path = tmp_path("trunc-good"), *bad = tmp_path("trunc");
	size_t len, offs[256], n, ncut = 0, cap = 1 << 16;
	size_t *cuts = nx_xmalloc(cap * sizeof(*cuts));
	uint8_t *data;

	(void)state;
	data = good_file(path, &len, &l);
	n = chunk_offsets(data, len, offs, NX_ARRAY_SIZE(offs));
	NX_ASSERT_CMP(n, >=, 6);
	for (size_t c = 0; c <= NX_NTFF_HEADER_SIZE + 40; c++)
		cuts[ncut++] = c;
	for (size_t i = 0; i < n; i++) {
		uint32_t plen = nx_get_le32(data + offs[i] + 4);

		for (size_t d = 0; d <= 40; d++) {
			if (offs[i] + d < len)
				cuts[ncut++] = offs[i] + d;
			if (offs[i] >= d)
				cuts[ncut++] = offs[i] - d;
		}
		for (size_t k = 1; k < 16; k++)
			cuts[ncut++] = offs[i] + NX_NTFF_CHUNK_HDR + plen * k / 16;
	}
	for (size_t c = len - 80; c < len; c++)
		cuts[ncut++] = c;
	for (size_t c = 0; c < len; c += 4099)
		cuts[ncut++] = c;
	NX_ASSERT_CMP(ncut, <=, cap);
	qsort(cuts, ncut, sizeof(*cuts), cmp_size_desc);

	spit(bad, data, len);
	for (size_t i = 0; i < ncut; i++) {
		static const unsigned masks[] = { NX_REC_MASK_ALL, NX_REC_MASK(NX_REC_INST), 0 };
		char what[64];

		if (i && cuts[i] == cuts[i - 1])
			continue;
		assert_int_equal(truncate(bad, (off_t)cuts[i]), 0);
		for (size_t m = 0; m < NX_ARRAY_SIZE(masks); m++) {
			int rc = read_everything(bad, masks[m], &err);

			snprintf(what, sizeof(what), "cut at %zu, mask %#x", cuts[i], masks[m]);
			assert_bad(rc, &err, bad, what);
		}
	}
	/* A cut exactly on a chunk boundary says so. */
	spit(bad, data, offs[n - 1]);
	assert_int_equal(read_everything(bad, NX_REC_MASK_ALL, &err), NX_ETRUNC);
	assert_non_null(strstr(err.msg, "no end-of-trace chunk after byte"));
	spit(bad, data, offs[1] + 100);
	assert_int_equal(read_everything(bad, NX_REC_MASK_ALL, &err), NX_ETRUNC);
	assert_non_null(strstr(err.msg, "truncated chunk at byte"));
	assert_non_null(strstr(err.msg, "remain"));

	free(cuts);
	free(data);
	recs_free(&l);
	free(bad);
	free(path);
}

/* A flipped payload byte in any chunk is a CRC error naming that chunk; a flipped byte
 * in any chunk header is caught one way or another. */
static void test_flipped_bytes(void **state)
{
	struct recs l = { 0 };
	struct nx_err err = { 0 };
	char *path = tmp_path("flip-good"), *bad = tmp_path("flip");
	size_t len, offs[256], n;
	uint8_t *data;

	(void)state;
	data = good_file(path, &len, &l);
	n = chunk_offsets(data, len, offs, NX_ARRAY_SIZE(offs));
	for (size_t i = 0; i < n; i++) {
		size_t plen = nx_get_le32(data + offs[i] + 4);
		size_t at[3] = { 0, plen / 2, plen - 1 };
		char where[64];

		snprintf(where, sizeof(where), "chunk at byte %zu: CRC mismatch", offs[i]);
		for (int k = 0; k < 3; k++) {
			uint8_t *b = data + offs[i] + NX_NTFF_CHUNK_HDR + at[k];

			*b ^= 0x04;
			spit(bad, data, len);
			*b ^= 0x04;
			assert_int_equal(read_everything(bad, NX_REC_MASK_ALL, &err), NX_ECORRUPT);
			if (!strstr(err.msg, where))
				fail_msg("expected '%s': %s", where, err.msg);
		}
		for (size_t h = 0; h < NX_NTFF_CHUNK_HDR; h++) {
			static const uint8_t flips[] = { 0x01, 0x80, 0xff };

			for (size_t f = 0; f < sizeof(flips); f++) {
				char what[64];

				data[offs[i] + h] ^= flips[f];
				spit(bad, data, len);
				data[offs[i] + h] ^= flips[f];
				snprintf(what, sizeof(what), "chunk %zu header byte %zu ^ %#x",
					 i, h, flips[f]);
				assert_bad(read_everything(bad, NX_REC_MASK_ALL, &err), &err, bad,
					   what);
			}
		}
	}
	free(data);
	recs_free(&l);
	free(bad);
	free(path);
}

static void test_bad_lengths_and_counts(void **state)
{
	struct recs l = { 0 };
	struct nx_err err = { 0 };
	char *path = tmp_path("len-good"), *bad = tmp_path("len");
	size_t len, offs[256], n, end;
	uint8_t *data, *copy;
	int rc;

	(void)state;
	data = good_file(path, &len, &l);
	n = chunk_offsets(data, len, offs, NX_ARRAY_SIZE(offs));
	end = offs[n - 1];
	copy = nx_xmalloc(len + 1);

	/* Huge lengths are refused before anything is allocated or read. */
	memcpy(copy, data, len);
	nx_put_le32(copy + offs[0] + 4, 0xfffffff0u);
	spit(bad, copy, len);
	rc = read_everything(bad, NX_REC_MASK_ALL, &err);
	assert_int_equal(rc, NX_ECORRUPT);
	assert_non_null(strstr(err.msg, "exceeds the limit"));
	nx_put_le32(copy + offs[0] + 4, NX_NTFF_PAYLOAD_MAX + 1);
	spit(bad, copy, len);
	assert_int_equal(read_everything(bad, 0, &err), NX_ECORRUPT);
	/* A length just past the end of the file. */
	nx_put_le32(copy + offs[0] + 4, (uint32_t)(len - offs[0] - NX_NTFF_CHUNK_HDR + 1));
	spit(bad, copy, len);
	assert_int_equal(read_everything(bad, 0, &err), NX_ETRUNC);
	assert_non_null(strstr(err.msg, "header says"));

	/* END counts that disagree with the chunks, re-checksummed so only the count is
	 * wrong; detected even when that kind is not read. */
	memcpy(copy, data, len);
	nx_put_le64(copy + end + NX_NTFF_CHUNK_HDR + 8 * (NX_REC_DMA - 1),
		    count_kind(&l, NX_REC_DMA) + 1);
	nx_put_le32(copy + end + 12,
		    nx_crc32c(0, copy + end + NX_NTFF_CHUNK_HDR, 8 * NX_REC_KIND_MAX));
	spit(bad, copy, len);
	rc = read_everything(bad, NX_REC_MASK(NX_REC_INST), &err);
	assert_bad(rc, &err, bad, "END counts");
	assert_non_null(strstr(err.msg, "end-of-trace chunk at byte"));
	assert_non_null(strstr(err.msg, "DMA records"));

	/* A chunk header whose record count disagrees with its payload. */
	memcpy(copy, data, len);
	nx_put_le32(copy + offs[0] + 8, nx_get_le32(copy + offs[0] + 8) + 1);
	spit(bad, copy, len);
	rc = read_everything(bad, NX_REC_MASK_ALL, &err);
	assert_bad(rc, &err, bad, "count + 1");
	assert_non_null(strstr(err.msg, "runs past the end"));
	nx_put_le32(copy + offs[0] + 8, nx_get_le32(copy + offs[0] + 8) - 2);
	spit(bad, copy, len);
	rc = read_everything(bad, NX_REC_MASK_ALL, &err);
	assert_bad(rc, &err, bad, "count - 1");
	assert_non_null(strstr(err.msg, "trailing bytes"));

	/* Anything after END. */
	memcpy(copy, data, len);
	copy[len] = 0;
	spit(bad, copy, len + 1);
	rc = read_everything(bad, NX_REC_MASK_ALL, &err);
	assert_bad(rc, &err, bad, "trailing data");
	assert_non_null(strstr(err.msg, "trailing data after the end-of-trace chunk"));

	free(copy);
	free(data);
	recs_free(&l);
	free(bad);
	free(path);
}

/* Builds header + the given chunks + an END chunk with the given counts. */
static void craft(const char *path, uint32_t flags, const uint8_t *body, size_t body_len,
		  const uint64_t counts[NX_REC_KIND_MAX + 1])
{
	struct nx_ntff_info info;
	struct recs none = { 0 };
	uint8_t *data, end[8 * NX_REC_KIND_MAX], *out;
	size_t len, pos;

	test_info(&info);
	info.flags = flags;
	write_file(path, &info, &none);
	data = slurp(path, &len);
	out = nx_xmalloc(NX_NTFF_HEADER_SIZE + body_len + sizeof(end) + NX_NTFF_CHUNK_HDR);
	memcpy(out, data, NX_NTFF_HEADER_SIZE);
	pos = NX_NTFF_HEADER_SIZE;
	memcpy(out + pos, body, body_len);
	pos += body_len;
	for (int k = 1; k <= NX_REC_KIND_MAX; k++)
		nx_put_le64(end + 8 * (k - 1), counts[k]);
	pos += put_chunk(out + pos, NX_NTFF_CHUNK_END, end, sizeof(end), NX_REC_KIND_MAX);
	spit(path, out, pos);
	free(out);
	free(data);
}

/* Hand-made chunks with a valid CRC but malformed records. */
static void test_malformed_records(void **state)
{
	static const struct {
		int kind;
		uint32_t count;
		uint8_t payload[24];
		size_t len;
		const char *needle;
	} cases[] = {
		{ NX_REC_INST, 1, { 0, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80,
				     0x80, 0x00 }, 12, "malformed varint" },
		{ NX_REC_INST, 1, { 0, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
				     0x02, 0x00 }, 12, "malformed varint" },
		{ NX_REC_INST, 2, { 0, 0, 0 }, 3, "record 2 of 2 runs past the end" },
		{ NX_REC_INST, 1, { 0, 0, 0, 0 }, 4, "1 trailing bytes" },
		{ NX_REC_INST, 1, { 0x80, 0, 0 }, 3, "reserved tag bit" },
		{ NX_REC_INST, 1, { 0x05, 0, 0 }, 3, "engine 5" },
		{ NX_REC_INST, 2, { 0, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01,
				     0, 0, 1, 0 }, 15, "timestamp overflows" },
		{ NX_REC_INST, 1, { 0x20, 0, 0, 0xff, 0xff, 0xff, 0xff, 0x7f }, 8,
		  "does not fit in 32 bits" },
		{ NX_REC_INST, 0, { 0, 0, 0 }, 3, "no records" },
		{ NX_REC_SEM, 1, { 0, 0x06, 0, 0, 0 }, 5, "source 6" },
		{ NX_REC_THROTTLE, 1, { 0, 0, 0, 0x80, 0x80, 0x04, 1 }, 7, "16 bits" },
		{ NX_REC_ERROR, 1, { 0, 0, 0, 64 }, 4, "longer than 63" },
		{ NX_REC_ERROR, 1, { 0, 0, 0, 2, 'a', 0, 0 }, 7, "NUL byte" },
		{ NX_REC_ERROR, 1, { 0, 0, 0, 9, 'a' }, 5, "runs past the end" },
		{ NX_REC_EXEC, 1, { 0, 2, 0 }, 3, "stop is 2" },
		{ NX_REC_DMA, 1, { 0, 0, 0, 16, 0, 0, 0 }, 7, "dma_engine 16" },
		{ 0, 1, { 0 }, 1, "invalid type 0" },
	};
	struct nx_err err = { 0 };
	char *path = tmp_path("craft");
	uint8_t body[128];

	(void)state;
	for (size_t i = 0; i < NX_ARRAY_SIZE(cases); i++) {
		uint64_t counts[NX_REC_KIND_MAX + 1] = { 0 };
		size_t blen;
		int rc;

		if (cases[i].kind)
			counts[cases[i].kind] = cases[i].count;
		blen = put_chunk(body, (uint32_t)cases[i].kind, cases[i].payload,
				 (uint32_t)cases[i].len, cases[i].count);
		craft(path, NX_NTFF_DGE_NOTIFICATIONS, body, blen, counts);
		rc = read_everything(path, NX_REC_MASK_ALL, &err);
		if (rc != NX_ECORRUPT || !strstr(err.msg, cases[i].needle) ||
		    strncmp(err.msg, path, strlen(path)) || !strstr(err.msg, "byte"))
			fail_msg("case %zu: rc %d, expected '%s': %s", i, rc, cases[i].needle,
				 err.msg);
	}

	/* Time order is checked across chunks of one kind too. */
	{
		uint64_t counts[NX_REC_KIND_MAX + 1] = { 0 };
		const uint8_t late[] = { 0, 100, 0 }, early[] = { 0, 50, 0 };
		size_t blen = put_chunk(body, NX_REC_INST, late, 3, 1);

		blen += put_chunk(body + blen, NX_REC_INST, early, 3, 1);
		counts[NX_REC_INST] = 2;
		craft(path, NX_NTFF_DGE_NOTIFICATIONS, body, blen, counts);
		assert_int_equal(read_everything(path, NX_REC_MASK_ALL, &err), NX_ECORRUPT);
		assert_non_null(strstr(err.msg, "before the previous one"));
	}
	/* DMA chunks in a file captured without DGE notifications. */
	{
		uint64_t counts[NX_REC_KIND_MAX + 1] = { 0 };
		const uint8_t dma[] = { 0, 0, 0, 0, 0, 0, 0 };
		size_t blen = put_chunk(body, NX_REC_DMA, dma, sizeof(dma), 1);

		counts[NX_REC_DMA] = 1;
		craft(path, NX_NTFF_SIMULATED, body, blen, counts);
		assert_int_equal(read_everything(path, 0, &err), NX_ECORRUPT);
		assert_non_null(strstr(err.msg, "DGE"));
	}
	/* After an error the reader refuses to go on; rewind starts over. */
	{
		struct nx_ntff_reader *r = NULL;
		struct nx_rec rec;

		assert_int_equal(nx_ntff_reader_open(&r, path, &err), 0);
		assert_int_equal(nx_ntff_reader_next(r, NX_REC_MASK_ALL, &rec, &err), NX_ECORRUPT);
		assert_int_equal(nx_ntff_reader_next(r, NX_REC_MASK_ALL, &rec, &err), NX_ECORRUPT);
		assert_non_null(strstr(err.msg, "earlier error"));
		assert_int_equal(nx_ntff_reader_rewind(r, &err), 0);
		assert_int_equal(nx_ntff_reader_next(r, NX_REC_MASK_ALL, &rec, &err), NX_ECORRUPT);
		nx_ntff_reader_close(r);
	}
	free(path);
}

/* The header table of ntff_header.c covers every byte of the header once, in order, and
 * matches the table of docs/formats/ntff.md (offset, size, field name). */
static void test_header_table(void **state)
{
	const char *src = getenv("NX_SOURCE_DIR");
	unsigned at = 0;
	size_t row = 0;
	char *path, line[1024];
	FILE *f;

	(void)state;
	for (size_t i = 0; i < nx__ntff_header_nfields; i++) {
		if (nx__ntff_header[i].off != at)
			fail_msg("field %s at %u, expected %u", nx__ntff_header[i].name,
				 nx__ntff_header[i].off, at);
		at += nx__ntff_header[i].size;
	}
	assert_int_equal(at, NX_NTFF_HEADER_SIZE);

	assert_non_null(src);
	path = nx_xasprintf("%s/docs/formats/ntff.md", src);
	f = fopen(path, "r");
	assert_non_null(f);
	bool in_section = false;
	while (fgets(line, sizeof(line), f)) {
		unsigned off, size;
		char type[32], name[64];

		if (!strncmp(line, "## ", 3))
			in_section = !strcmp(line, "## File header\n");
		if (!in_section || sscanf(line, "| %u | %u | %31s | %63s |", &off, &size, type, name) != 4)
			continue;
		if (row >= nx__ntff_header_nfields)
			fail_msg("docs list more header fields than the code (%s)", name);
		const struct nx__ntff_field *fd = &nx__ntff_header[row++];
		const char *want = strcmp(name, "*reserved*") ? name : "reserved";
		if (fd->off != off || fd->size != size || strcmp(fd->name, want))
			fail_msg("docs: %s at %u size %u; code: %s at %u size %u", want, off, size,
				 fd->name, fd->off, fd->size);
	}
	fclose(f);
	free(path);
	assert_int_equal(row, nx__ntff_header_nfields);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_varint),
		cmocka_unit_test(test_header_table),
		cmocka_unit_test(test_roundtrip_edges),
		cmocka_unit_test(test_long_strings),
		cmocka_unit_test(test_many_chunks),
		cmocka_unit_test(test_kind_mask),
		cmocka_unit_test(test_rewind),
		cmocka_unit_test(test_unknown_chunk),
		cmocka_unit_test(test_determinism),
		cmocka_unit_test(test_record_size),
		cmocka_unit_test(test_writer_rules),
		cmocka_unit_test(test_writer_abort_and_io),
		cmocka_unit_test(test_bad_header),
		cmocka_unit_test(test_truncation),
		cmocka_unit_test(test_flipped_bytes),
		cmocka_unit_test(test_bad_lengths_and_counts),
		cmocka_unit_test(test_malformed_records),
	};

	return nx_test_done(cmocka_run_group_tests_name("ntff", tests, group_setup, group_teardown));
}
