/* SPDX-License-Identifier: MIT
 * dma_trigger.c: per triggering instruction, the span of the DMA packets it started,
 * collected in sorted runs on disk and read back through a block cache (see
 * dma_trigger.h). The ids are collected in a table of its own rather than in strmap: its
 * slots are fixed-size spans keyed by a 64-bit id, and when a run is full the same array
 * is compacted and sorted in place and written out, with no allocation per key. */
#include "common/compat.h"
#include "common/env_num.h"
#include "ingest/dma_trigger.h"
#include "common/hash.h"
#include "common/xalloc.h"

#include <fcntl.h>
#include <stdio.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define FAN_IN 16          /* runs merged into one */
#define READ_BUF 2048      /* spans per run read buffer and in the write buffer */
#define CACHE_BLOCKS 4
#define SPAN ((off_t)sizeof(struct nx_trig_span))

struct nx_trig_run {
	int fd;
	uint64_t count;
	unsigned level;      /* merged from FAN_IN^level runs of the hash table */
};

struct nx_trig_block {
	uint64_t no;         /* block number in the table */
	uint64_t lo, next;   /* its first id, and the first id of the next block */
	size_t n;
	uint64_t used;       /* for LRU */
	bool valid, dirty;
	struct nx_trig_span *e;
};

/* Sizes from the environment, for tests: NX_TRIG_RUN spans per run, NX_TRIG_BLOCK
 * spans per cached block. */
/* A size from the environment (0, unset or bad: dflt). */
static size_t or_default(long long n, size_t dflt)
{
	return n > 0 ? (size_t)n : dflt;
}

static size_t block_spans(void)
{
	return or_default(nx_env_whole_or("NX_TRIG_BLOCK", LONG_MAX, "spans (0: the default)", 0),
			  4096);
}

static int fail(struct nx_trig_map *m, int code, const char *what)
{
	if (!m->rc)
		m->rc = nx_errf(&m->err, code, "DMA trigger spans: %s in '%s': %s", what, m->dir,
				strerror(-code));
	return m->rc;
}

void nx_trig_init(struct nx_trig_map *m, const char *dir)
{
	memset(m, 0, sizeof(*m));
	m->dir = nx_xstrdup(dir);
	m->fd = -1;
	m->run_cap = or_default(nx_env_whole_or("NX_TRIG_RUN", LONG_MAX,
						"trigger ids (0: the default)", 0), 65536);
	m->cap = 16;
	while (m->cap < 2 * m->run_cap)
		m->cap *= 2;
}

/* ---- collecting -------------------------------------------------------------------- */

static size_t hash(uint64_t id, size_t cap)
{
	return (size_t)nx_mix64(id) & (cap - 1);
}

/* A new file in m->dir, already unlinked. */
static int temp_file(struct nx_trig_map *m)
{
	char *path = nx_xasprintf("%s/trig-XXXXXX", m->dir);
	int fd = mkstemp(path);

	if (fd < 0)
		fail(m, -errno, "cannot create a file");
	else
		unlink(path);
	free(path);
	return fd;
}

static int write_all(struct nx_trig_map *m, int fd, const void *buf, size_t len)
{
	const char *p = buf;

	while (len) {
		ssize_t w = write(fd, p, len);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return fail(m, w < 0 ? -errno : -ENOSPC, "cannot write");
		p += w;
		len -= (size_t)w;
	}
	return 0;
}

static int read_at(struct nx_trig_map *m, int fd, void *buf, size_t len, off_t off)
{
	char *p = buf;

	while (len) {
		ssize_t r = pread(fd, p, len, off);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return fail(m, r < 0 ? -errno : -EIO, "cannot read");
		p += r;
		len -= (size_t)r;
		off += r;
	}
	return 0;
}

static int by_id(const void *a, const void *b)
{
	uint64_t x = ((const struct nx_trig_span *)a)->id, y = ((const struct nx_trig_span *)b)->id;
	return (x > y) - (x < y);
}

/* Buffered output of a merge: spans in increasing id order, equal ids joined. */
struct writer {
	int fd;
	struct nx_trig_span *buf;
	size_t n;
	uint64_t count;    /* spans written or buffered */
};

static int put(struct nx_trig_map *m, struct writer *w, const struct nx_trig_span *s)
{
	struct nx_trig_span *last = w->n ? &w->buf[w->n - 1] : NULL;

	if (last && last->id == s->id) {
		if (s->start < last->start)
			last->start = s->start;
		if (s->end > last->end)
			last->end = s->end;
		return 0;
	}
	if (w->n == READ_BUF) {
		/* spans come in increasing id order: the buffered ones are complete */
		if (write_all(m, w->fd, w->buf, w->n * sizeof(*w->buf)))
			return m->rc;
		w->n = 0;
	}
	w->buf[w->n++] = *s;
	w->count++;
	return 0;
}

static int flush_writer(struct nx_trig_map *m, struct writer *w)
{
	return write_all(m, w->fd, w->buf, w->n * sizeof(*w->buf));
}

struct reader {
	const struct nx_trig_run *run;
	uint64_t pos;      /* spans read from the file */
	size_t i, n;
	struct nx_trig_span *buf;
};

static const struct nx_trig_span *peek(struct nx_trig_map *m, struct reader *r)
{
	if (r->i == r->n) {
		uint64_t left = r->run->count - r->pos;
		if (!left)
			return NULL;
		r->n = left < READ_BUF ? (size_t)left : READ_BUF;
		r->i = 0;
		if (read_at(m, r->run->fd, r->buf, r->n * sizeof(*r->buf), (off_t)r->pos * SPAN))
			return NULL;
		r->pos += r->n;
	}
	return &r->buf[r->i];
}

/* Merges the k runs on top of the stack into one run of the given level. */
static int merge_top(struct nx_trig_map *m, size_t k, unsigned level)
{
	struct nx_trig_run *in = &m->runs[m->nruns - k];
	struct reader *rd = nx_xcalloc(k, sizeof(*rd));
	struct writer w = { .fd = temp_file(m) };

	w.buf = nx_xmalloc(READ_BUF * sizeof(*w.buf));
	for (size_t i = 0; i < k; i++) {
		rd[i].run = &in[i];
		rd[i].buf = nx_xmalloc(READ_BUF * sizeof(*rd[i].buf));
	}
	while (!m->rc) {
		const struct nx_trig_span *best = NULL;
		size_t bi = 0;
		for (size_t i = 0; i < k; i++) {
			const struct nx_trig_span *s = peek(m, &rd[i]);
			if (s && (!best || s->id < best->id)) {
				best = s;
				bi = i;
			}
		}
		if (!best)
			break;
		put(m, &w, best);
		rd[bi].i++;
	}
	if (!m->rc)
		flush_writer(m, &w);
	for (size_t i = 0; i < k; i++) {
		free(rd[i].buf);
		close(in[i].fd);
	}
	free(rd);
	free(w.buf);
	m->nruns -= k;
	if (w.fd >= 0)
		m->runs[m->nruns++] = (struct nx_trig_run){ .fd = w.fd, .count = w.count,
							    .level = level };
	return m->rc;
}

/* Writes the hash table's spans as a run sorted by id, then merges runs while FAN_IN
 * of the same level are on top. */
static int flush_hash(struct nx_trig_map *m)
{
	size_t cap = m->cap, n = 0;
	int fd;

	for (size_t i = 0; i < cap; i++)
		if (m->slot[i].id != UINT64_MAX)
			m->slot[n++] = m->slot[i];
	qsort(m->slot, n, sizeof(*m->slot), by_id);
	fd = temp_file(m);
	if (fd >= 0 && !write_all(m, fd, m->slot, n * sizeof(*m->slot))) {
		m->runs = nx_xrealloc(m->runs, (m->nruns + 1) * sizeof(*m->runs));
		m->runs[m->nruns++] = (struct nx_trig_run){ .fd = fd, .count = n, .level = 0 };
	} else if (fd >= 0) {
		close(fd);
	}
	memset(m->slot, 0xff, cap * sizeof(*m->slot));
	m->n = 0;
	while (!m->rc && m->nruns >= FAN_IN &&
	       m->runs[m->nruns - FAN_IN].level == m->runs[m->nruns - 1].level)
		merge_top(m, FAN_IN, m->runs[m->nruns - 1].level + 1);
	return m->rc;
}

void nx_trig_add(struct nx_trig_map *m, uint64_t id, int64_t start, int64_t end)
{
	size_t cap;

	if (id == UINT64_MAX || m->rc || m->sealed)
		return;
	cap = m->cap;
	if (!m->slot) {
		m->slot = nx_xmalloc(cap * sizeof(*m->slot));
		memset(m->slot, 0xff, cap * sizeof(*m->slot));
	}
	size_t i = hash(id, cap);
	while (m->slot[i].id != UINT64_MAX && m->slot[i].id != id)
		i = (i + 1) & (cap - 1);
	struct nx_trig_span *s = &m->slot[i];
	if (s->id == id) {
		if (start < s->start)
			s->start = start;
		if (end > s->end)
			s->end = end;
		return;
	}
	*s = (struct nx_trig_span){ .id = id, .start = start, .end = end };
	if (++m->n == m->run_cap)
		flush_hash(m);
}

int nx_trig_seal(struct nx_trig_map *m, struct nx_err *err)
{
	if (m->sealed)
		return 0;
	m->sealed = true;
	if (!m->rc && m->slot && m->n)
		flush_hash(m);
	free(m->slot);
	m->slot = NULL;
	while (!m->rc && m->nruns > FAN_IN)
		merge_top(m, FAN_IN, m->runs[m->nruns - FAN_IN].level);
	if (!m->rc && m->nruns > 1)
		merge_top(m, m->nruns, 0);
	if (!m->rc && m->nruns == 1) {
		struct nx_trig_span first;
		m->fd = m->runs[0].fd;
		m->count = m->runs[0].count;
		m->nruns = 0;
		if (m->count && !read_at(m, m->fd, &first, sizeof(first), 0))
			m->first_id = first.id;
		m->nblocks = (m->count + block_spans() - 1) / block_spans();
		m->cache = nx_xcalloc(CACHE_BLOCKS, sizeof(*m->cache));
	}
	return nx_trig_error(m, err);
}

/* ---- reading the sealed table -------------------------------------------------------- */

static uint64_t block_first_id(struct nx_trig_map *m, uint64_t no)
{
	uint64_t id = UINT64_MAX;

	read_at(m, m->fd, &id, sizeof(id), (off_t)(no * block_spans()) * SPAN);
	return id;
}

static int write_back(struct nx_trig_map *m, struct nx_trig_block *b)
{
	if (!b->valid || !b->dirty)
		return 0;
	off_t off = (off_t)(b->no * block_spans()) * SPAN;
	while (!m->rc) {
		ssize_t w = pwrite(m->fd, b->e, b->n * sizeof(*b->e), off);
		if (w < 0 && errno == EINTR)
			continue;
		if (w != (ssize_t)(b->n * sizeof(*b->e)))
			return fail(m, w < 0 ? -errno : -ENOSPC, "cannot write");
		break;
	}
	b->dirty = false;
	return m->rc;
}

/* The cached block holding id's place, loading it when no cached block does. */
static struct nx_trig_block *block_for(struct nx_trig_map *m, uint64_t id)
{
	struct nx_trig_block *victim = &m->cache[0];
	uint64_t lo = 0, hi = m->nblocks - 1;

	for (int i = 0; i < CACHE_BLOCKS; i++) {
		struct nx_trig_block *b = &m->cache[i];
		if (b->valid && id >= b->lo && id < b->next)
			return b;
		if (!b->valid || (victim->valid && b->used < victim->used))
			victim = b;
	}
	/* the last block whose first id is <= id (block 0's is, id >= first_id) */
	while (lo < hi && !m->rc) {
		uint64_t mid = lo + (hi - lo + 1) / 2;
		if (block_first_id(m, mid) <= id)
			lo = mid;
		else
			hi = mid - 1;
	}
	if (m->rc || write_back(m, victim))
		return NULL;
	size_t per = block_spans();
	victim->valid = false;
	if (!victim->e)
		victim->e = nx_xmalloc(per * sizeof(*victim->e));
	victim->no = lo;
	victim->n = lo + 1 < m->nblocks ? per : (size_t)(m->count - lo * per);
	if (read_at(m, m->fd, victim->e, victim->n * sizeof(*victim->e), (off_t)(lo * per) * SPAN))
		return NULL;
	victim->lo = victim->e[0].id;
	victim->next = lo + 1 < m->nblocks ? block_first_id(m, lo + 1) : UINT64_MAX;
	victim->valid = !m->rc;
	victim->dirty = false;
	return victim->valid ? victim : NULL;
}

struct nx_trig_span *nx_trig_find(struct nx_trig_map *m, uint64_t id)
{
	struct nx_trig_block *b;
	size_t lo = 0, hi;

	if (m->rc || !m->count || id == UINT64_MAX || id < m->first_id)
		return NULL;
	b = block_for(m, id);
	if (!b)
		return NULL;
	b->used = ++m->tick;
	hi = b->n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (b->e[mid].id < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < b->n && b->e[lo].id == id ? &b->e[lo] : NULL;
}

void nx_trig_set_inst(struct nx_trig_map *m, struct nx_trig_span *s, int64_t start,
		      int64_t end)
{
	if (s->inst) {
		m->dup_inst++;
		return;
	}
	s->start = start;
	s->end = end;
	s->inst = 1;
	for (int i = 0; i < CACHE_BLOCKS; i++)
		if (m->cache[i].valid && s >= m->cache[i].e && s < m->cache[i].e + m->cache[i].n)
			m->cache[i].dirty = true;
}

int nx_trig_error(const struct nx_trig_map *m, struct nx_err *err)
{
	if (m->rc && err)
		*err = m->err;
	return m->rc;
}

void nx_trig_release(struct nx_trig_map *m)
{
	free(m->dir);
	free(m->slot);
	for (size_t i = 0; i < m->nruns; i++)
		close(m->runs[i].fd);
	free(m->runs);
	if (m->fd >= 0 && m->sealed)
		close(m->fd);
	for (int i = 0; m->cache && i < CACHE_BLOCKS; i++)
		free(m->cache[i].e);
	free(m->cache);
	memset(m, 0, sizeof(*m));
	m->fd = -1;
}
