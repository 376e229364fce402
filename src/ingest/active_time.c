/* SPDX-License-Identifier: MIT
 * active_time.c: streaming interval merge for ActiveTime and OpcodeSummary (see
 * active_time.h). */
#include "common/compat.h"
#include "ingest/active_time.h"
#include "common/xalloc.h"
#include "neff/neff.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

static double nx_active_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

struct spill_rec {
	int64_t s, e;
	int32_t engine;
	int32_t pad;
};

static int open_spill(const char *path, FILE **f, struct nx_err *err)
{
	*f = fopen(path, "w+b");
	if (!*f)
		return nx_errf(err, -errno, "cannot create '%s': %s", path, strerror(errno));
	return 0;
}

int nx_active_init(struct nx_active *a, const char *spill_path, int pcore, struct nx_err *err)
{
	int rc;

	memset(a, 0, sizeof(*a));
	a->pcore = pcore;
	a->spill_path = nx_xstrdup(spill_path);
	a->inst_path = nx_xasprintf("%s.inst", spill_path);
	a->dma_path = nx_xasprintf("%s.dma", spill_path);
	if ((rc = open_spill(a->spill_path, &a->spill, err)) ||
	    (rc = open_spill(a->inst_path, &a->any_inst.spill, err)) ||
	    (rc = open_spill(a->dma_path, &a->dma[NX_DMA_ALL].spill, err)))
		return rc;
	return 0;
}

/* Adds [s, e) to a run; returns true and the finished run in *done when it closed one. */
static bool extend(struct nx_run *r, int64_t s, int64_t e, struct nx_run *done)
{
	if (r->open && s <= r->e) {
		if (e > r->e)
			r->e = e;
		return false;
	}
	bool closed = r->open;
	if (closed)
		*done = *r;
	r->s = s;
	r->e = e;
	r->open = true;
	return closed;
}

/* Keeps the first write failure: the reason (ENOSPC, EFBIG, EIO ...) and the file. */
static void spill_failed(struct nx_active *a, const char *path)
{
	if (a->err)
		return;
	a->err = errno ? -errno : -EIO;
	a->err_path = path;
}

static void spill(struct nx_active *a, int engine, const struct nx_run *r)
{
	struct spill_rec rec = { .s = r->s, .e = r->e, .engine = engine };
	errno = 0;
	if (fwrite(&rec, sizeof(rec), 1, a->spill) != 1)
		spill_failed(a, a->spill_path);
	a->nruns++;
}

struct span {
	int64_t s, e;
};

/* Adds [s, e) to a union, writing the run it closes (if any) to its spill at path. */
static void union_add(struct nx_active *a, struct nx_union *u, const char *path, int64_t s,
		      int64_t e)
{
	struct nx_run done;

	if (e <= s)
		return;
	if (!extend(&u->run, s, e, &done))
		return;
	u->total += done.e - done.s;
	if (u->spill) {
		struct span sp = { done.s, done.e };
		errno = 0;
		if (fwrite(&sp, sizeof(sp), 1, u->spill) != 1)
			spill_failed(a, path);
	}
}

static void union_close(struct nx_active *a, struct nx_union *u, const char *path)
{
	if (!u->run.open)
		return;
	u->total += u->run.e - u->run.s;
	if (u->spill) {
		struct span sp = { u->run.s, u->run.e };
		errno = 0;
		if (fwrite(&sp, sizeof(sp), 1, u->spill) != 1 || fflush(u->spill) != 0)
			spill_failed(a, path);
	}
	u->run.open = false;
}

void nx_active_add_dma(struct nx_active *a, int qt, int64_t start, int64_t end)
{
	union_add(a, &a->dma[NX_DMA_ALL], a->dma_path, start, end);
	if (qt == NX_QT_SOFTWARE_DYNAMIC || qt == NX_QT_HARDWARE_DYNAMIC) {
		union_add(a, &a->dma[NX_DMA_DYNAMIC], NULL, start, end);
		union_add(a, &a->dma[qt == NX_QT_SOFTWARE_DYNAMIC ? NX_DMA_SOFTWARE : NX_DMA_HARDWARE],
			  NULL, start, end);
	} else {
		union_add(a, &a->dma[NX_DMA_STATIC], NULL, start, end);
	}
}

/* Reads the next span of a start-ordered spill; false at its end. */
static bool next_span(FILE *f, struct span *sp)
{
	return f && fread(sp, sizeof(*sp), 1, f) == 1;
}

int nx_active_finish_all(struct nx_active *a, struct nx_err *err)
{
	struct span x, y, cur = { 0, 0 };
	bool hx, hy, open = false;

	for (int k = 0; k < NX_DMA_CLASSES; k++)
		union_close(a, &a->dma[k], a->dma_path);
	if (a->err)
		return nx_errf(err, a->err, "cannot write the interval spill file '%s': %s",
			       a->err_path, strerror(-a->err));
	rewind(a->any_inst.spill);
	rewind(a->dma[NX_DMA_ALL].spill);
	hx = next_span(a->any_inst.spill, &x);
	hy = next_span(a->dma[NX_DMA_ALL].spill, &y);
	a->all_ns = 0;
	/* Two start-ordered streams of disjoint runs: merge them like one sorted list. */
	while (hx || hy) {
		struct span s;
		if (hx && (!hy || x.s <= y.s)) {
			s = x;
			hx = next_span(a->any_inst.spill, &x);
		} else {
			s = y;
			hy = next_span(a->dma[NX_DMA_ALL].spill, &y);
		}
		if (open && s.s <= cur.e) {
			if (s.e > cur.e)
				cur.e = s.e;
			continue;
		}
		if (open)
			a->all_ns += cur.e - cur.s;
		cur = s;
		open = true;
	}
	if (open)
		a->all_ns += cur.e - cur.s;
	return 0;
}

void nx_active_add(struct nx_active *a, int engine, int opcode, int64_t start, int64_t end)
{
	struct nx_run done;

	if (engine < 0 || engine >= NX_ENGINE_COUNT)
		return;
	if (opcode < 0 || opcode >= NX_OP_COUNT)
		opcode = NX_OP_COUNT;
	struct nx_op_acc *op = &a->op[engine][opcode];
	op->count++;
	op->time += end - start;
	if (end <= start)
		return; /* zero-length instructions add no busy time */
	union_add(a, &a->any_inst, a->inst_path, start, end);
	if (extend(&op->run, start, end, &done))
		op->active += done.e - done.s;
	if (extend(&a->engine[engine], start, end, &done))
		spill(a, engine, &done);
}

int nx_active_finish(struct nx_active *a, struct nx_err *err)
{
	union_close(a, &a->any_inst, a->inst_path);
	for (int e = 0; e < NX_ENGINE_COUNT; e++) {
		if (a->engine[e].open)
			spill(a, e, &a->engine[e]);
		a->engine[e].open = false;
		for (int o = 0; o <= NX_OP_COUNT; o++) {
			struct nx_op_acc *op = &a->op[e][o];
			if (op->run.open)
				op->active += op->run.e - op->run.s;
			op->run.open = false;
		}
	}
	errno = 0;
	if (!a->err && fflush(a->spill) != 0)
		spill_failed(a, a->spill_path);
	if (a->err)
		return nx_errf(err, a->err, "cannot write the interval spill file '%s': %s",
			       a->err_path, strerror(-a->err));
	return 0;
}

/* ---- ActiveTime rows from the spill file ----------------------------------------- */

struct at_src {
	struct nx_active *a;
	struct nx_colmap map;
};

static int at_next(void *self, struct nx_rowbuf *b, struct nx_err *err)
{
	struct at_src *s = self;
	size_t cap = nx_rowbuf_capacity(b), n = 0;
	struct spill_rec rec;
	const int *ix = s->map.idx;

	while (n < cap && fread(&rec, sizeof(rec), 1, s->a->spill) == 1) {
		nx_rowbuf_i64(b, ix[0], n, rec.s);
		nx_rowbuf_i64(b, ix[1], n, rec.e);
		nx_rowbuf_str(b, ix[2], n, nx_engine_lower(rec.engine));
		nx_rowbuf_i64(b, ix[3], n, s->a->pcore);
		nx_rowbuf_i64(b, ix[4], n, rec.e - rec.s);
		n++;
	}
	if (ferror(s->a->spill))
		return nx_errf(err, -EIO, "cannot read '%s'", s->a->spill_path);
	return (int)n;
}

/* ---- OpcodeSummary rows from the accumulators ------------------------------------ */

struct os_src {
	struct nx_active *a;
	struct nx_colmap map;
	int64_t total_ns;
	int e, o;
};

static int os_next(void *self, struct nx_rowbuf *b, struct nx_err *err)
{
	struct os_src *s = self;
	size_t cap = nx_rowbuf_capacity(b), n = 0;
	const int *ix = s->map.idx;

	(void)err;
	for (; s->e < NX_ENGINE_COUNT && n < cap; s->o = (s->o + 1) % (NX_OP_COUNT + 1),
						  s->e += s->o == 0) {
		const struct nx_op_acc *op = &s->a->op[s->e][s->o];
		if (!op->count)
			continue;
		nx_rowbuf_str(b, ix[0], n, nx_engine_lower(s->e));
		nx_rowbuf_str(b, ix[1], n, s->o < NX_OP_COUNT ? nx_opcode_name(s->o) : "UNKNOWN");
		nx_rowbuf_i64(b, ix[2], n, (int64_t)op->count);
		nx_rowbuf_i64(b, ix[3], n, op->time);
		nx_rowbuf_i64(b, ix[4], n, op->active);
		if (s->total_ns > 0)
			nx_rowbuf_f64(b, ix[5], n, (double)op->active / (double)s->total_ns);
		n++;
	}
	return (int)n;
}

static int write_one(struct nx_duck *d, struct nx_row_source *src, const char *dir,
		     const struct nx_progress *progress, struct nx_err *err)
{
	char *path = nx_xasprintf("%s/%s.parquet", dir, src->table->name);
	uint64_t rows = 0;
	double t0 = nx_active_now();
	int rc = nx_duck_write_source(d, src, path, &rows, err);

	if (!rc && rows == 0)
		remove(path);
	if (!rc) {
		struct nx_progress_event ev = { .kind = NX_PROGRESS_TABLE, .stage = "raw",
			.table = src->table->name, .how = "merged while streaming", .rows = rows,
			.seconds = nx_active_now() - t0 };
		nx_progress_emit(progress, &ev);
	}
	free(path);
	return rc;
}

int nx_active_write(struct nx_active *a, struct nx_duck *d, const char *dir, int64_t total_ns,
		    const struct nx_progress *progress, struct nx_err *err)
{
	static const char *const at_names[] = { "start_ts", "end_ts", "engine", "pcore_idx",
						"duration_ns", NULL };
	static const char *const os_names[] = { "engine", "opcode", "instruction_count",
						"instruction_time_ns", "active_time_ns",
						"active_time_percent", NULL };
	struct at_src at = { .a = a };
	struct os_src os = { .a = a, .total_ns = total_ns };
	struct nx_row_source src;
	int rc;

	if ((rc = nx_colmap_init(&at.map, "ActiveTime", at_names, err)) ||
	    (rc = nx_colmap_init(&os.map, "OpcodeSummary", os_names, err)))
		return rc;
	rewind(a->spill);
	src = (struct nx_row_source){ .table = at.map.table, .self = &at, .next = at_next };
	if ((rc = write_one(d, &src, dir, progress, err)))
		return rc;
	src = (struct nx_row_source){ .table = os.map.table, .self = &os, .next = os_next };
	return write_one(d, &src, dir, progress, err);
}

void nx_active_release(struct nx_active *a)
{
	if (a->spill)
		fclose(a->spill);
	if (a->any_inst.spill)
		fclose(a->any_inst.spill);
	if (a->dma[NX_DMA_ALL].spill)
		fclose(a->dma[NX_DMA_ALL].spill);
	if (a->spill_path)
		remove(a->spill_path);
	if (a->inst_path)
		remove(a->inst_path);
	if (a->dma_path)
		remove(a->dma_path);
	free(a->spill_path);
	free(a->inst_path);
	free(a->dma_path);
	memset(a, 0, sizeof(*a));
}
