/* SPDX-License-Identifier: MIT
 * ntff_writer.c: writes an NTFF trace (docs/formats/ntff.md).
 *
 * The header goes out first. Records are then encoded into one buffer per kind; a
 * buffer becomes a chunk when it fills and at close, so each chunk holds one kind and
 * its records are delta coded against the previous record of the same chunk. Close
 * writes the END chunk with the per-kind totals and puts the file in place: it is written
 * through the output-file writer (common/outpath.h: a temporary sibling of a name no other
 * writer shares, renamed to <path>; an existing file is replaced only if it is an NTFF).
 * Output depends only on the header and the record sequence, never on time or memory
 * addresses. Also home of the header and record checks the reader shares (varint.h). */
#include "common/compat.h"
#include "common/crc32c.h"
#include "common/outpath.h"
#include "common/xalloc.h"
#include "neff/isa.h"
#include "ntff/ntff.h"
#include "ntff/varint.h"

#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Payload size at which a kind's buffer is flushed. Chunks of this size keep the
 * reader's buffer small while making the per-chunk overhead (16 bytes) negligible. */
#define CHUNK_PAYLOAD (64u << 10)
/* Upper bound of one encoded record: an ERROR record with both strings at full length
 * is 10 + 1 + 5 + 1 + 63 + 2 + 191 = 273 bytes; DMA needs at most 77. */
#define REC_MAX 320u

struct kind_buf {
	uint8_t *buf;    /* NX_NTFF_CHUNK_HDR bytes of chunk header, then the payload */
	size_t len;      /* payload bytes */
	uint32_t count;  /* records in the payload */
	struct nx__ntff_delta d;
};

struct nx_ntff_writer {
	struct nx_out_file out;
	char *path;
	struct nx_ntff_info info;
	struct kind_buf kinds[NX_REC_KIND_MAX + 1];
	uint64_t totals[NX_REC_KIND_MAX + 1];
	uint64_t last_ts[NX_REC_KIND_MAX + 1];
	int failed; /* sticky I/O error; the file can no longer be completed */
};

static const char *const kind_names[NX_REC_KIND_MAX + 1] = {
	[NX_REC_INST] = "instruction", [NX_REC_DMA] = "DMA",
	[NX_REC_SEM] = "semaphore",    [NX_REC_THROTTLE] = "throttle",
	[NX_REC_ERROR] = "error",      [NX_REC_EXEC] = "execution",
};

const char *nx__ntff_kind_name(int kind)
{
	if (kind < 1 || kind > NX_REC_KIND_MAX)
		return NULL;
	return kind_names[kind];
}

uint64_t nx__ntff_rec_ts(const struct nx_rec *rec)
{
	switch (rec->kind) {
	case NX_REC_INST: return rec->u.inst.start;
	case NX_REC_DMA: return rec->u.dma.start;
	case NX_REC_SEM: return rec->u.sem.ts;
	case NX_REC_THROTTLE: return rec->u.throttle.ts;
	case NX_REC_ERROR: return rec->u.error.ts;
	case NX_REC_EXEC: return rec->u.exec.ts;
	default: return 0;
	}
}

bool nx__ntff_rec_valid(const struct nx_rec *rec, const struct nx_ntff_info *info, char *why,
			size_t why_len)
{
	switch (rec->kind) {
	case NX_REC_INST: {
		const struct nx_rec_inst *r = &rec->u.inst;

		if (r->engine >= NX_ENGINE_COUNT) {
			snprintf(why, why_len, "engine %u is not a compute engine (0..%d)",
				 r->engine, NX_ENGINE_COUNT - 1);
			return false;
		}
		if (r->end < r->start) {
			snprintf(why, why_len, "end tick %" PRIu64 " is before start tick %" PRIu64,
				 r->end, r->start);
			return false;
		}
		return true;
	}
	case NX_REC_DMA: {
		const struct nx_rec_dma *r = &rec->u.dma;

		if (!(info->flags & NX_NTFF_DGE_NOTIFICATIONS)) {
			snprintf(why, why_len,
				 "DMA records need the DGE-notifications header flag");
			return false;
		}
		if (r->dma_engine >= info->num_dma_engines) {
			snprintf(why, why_len,
				 "dma_engine %u is not below num_dma_engines %" PRIu32,
				 r->dma_engine, info->num_dma_engines);
			return false;
		}
		if (r->end < r->start) {
			snprintf(why, why_len, "end tick %" PRIu64 " is before start tick %" PRIu64,
				 r->end, r->start);
			return false;
		}
		return true;
	}
	case NX_REC_SEM: {
		const struct nx_rec_sem *r = &rec->u.sem;

		if (r->sem >= NX_NUM_SEMAPHORES || r->source > NX_SEMSRC_AXI ||
		    r->op > NX_SEM_SET || r->timing > NX_SEMT_COMPLETE || r->double_set > 1) {
			snprintf(why, why_len,
				 "field out of range (sem %u, source %u, op %u, timing %u, "
				 "double_set %u)",
				 r->sem, r->source, r->op, r->timing, r->double_set);
			return false;
		}
		return true;
	}
	case NX_REC_THROTTLE:
		if (rec->u.throttle.type > NX_THROTTLE_UNKNOWN) {
			snprintf(why, why_len, "throttle type %u is unknown", rec->u.throttle.type);
			return false;
		}
		return true;
	case NX_REC_ERROR:
		if (rec->u.error.type > NX_ERRT_NOTIFICATION) {
			snprintf(why, why_len, "error type %u is unknown", rec->u.error.type);
			return false;
		}
		return true;
	case NX_REC_EXEC:
		if (rec->u.exec.stop > 1) {
			snprintf(why, why_len, "stop is %u (must be 0 or 1)", rec->u.exec.stop);
			return false;
		}
		return true;
	default:
		snprintf(why, why_len, "record kind %d is unknown", rec->kind);
		return false;
	}
}

static int write_all(struct nx_ntff_writer *w, const uint8_t *p, size_t n, struct nx_err *err)
{
	while (n) {
		ssize_t got = write(w->out.fd, p, n);

		if (got < 0) {
			if (errno == EINTR)
				continue;
			w->failed = -errno;
			return nx_errf(err, w->failed, "%s: cannot write: %s", w->out.tmp,
				       strerror(errno));
		}
		p += got;
		n -= (size_t)got;
	}
	return 0;
}

/* Writes the buffered records of one kind as a chunk and starts a new one. */
static int flush_kind(struct nx_ntff_writer *w, int kind, struct nx_err *err)
{
	struct kind_buf *kb = &w->kinds[kind];
	uint8_t *h = kb->buf;
	int rc;

	if (!kb->count)
		return 0;
	nx_put_le32(h, (uint32_t)kind);
	nx_put_le32(h + 4, (uint32_t)kb->len);
	nx_put_le32(h + 8, kb->count);
	nx_put_le32(h + 12, nx_crc32c(0, h + NX_NTFF_CHUNK_HDR, kb->len));
	rc = write_all(w, h, NX_NTFF_CHUNK_HDR + kb->len, err);
	kb->len = 0;
	kb->count = 0;
	memset(&kb->d, 0, sizeof(kb->d));
	return rc;
}

/* The encoders below append one record at p and return the bytes written. The
 * layout of each is documented in ntff.md, "Records"; field order matters. */

static size_t enc_inst(uint8_t *p, const struct nx_rec_inst *r, struct nx__ntff_delta *d)
{
	uint8_t *q = p + 1;
	uint8_t tag = r->engine;
	uint32_t exp_index = d->next_index[r->engine];

	q += nx_varint_put(q, r->start - d->ts);
	q += nx_varint_put(q, r->end - r->start);
	if (r->wait_ticks) {
		tag |= NX_INST_TAG_WAIT;
		q += nx_varint_put(q, r->wait_ticks);
	}
	if (r->exec != d->exec) {
		tag |= NX_INST_TAG_EXEC;
		q += nx_varint_put(q, nx_delta32(r->exec, d->exec));
	}
	if (r->index != exp_index) {
		tag |= NX_INST_TAG_INDEX;
		q += nx_varint_put(q, nx_delta32(r->index, exp_index));
	}
	if (r->id != d->next_id) {
		tag |= NX_INST_TAG_ID;
		q += nx_varint_put(q, nx_delta64(r->id, d->next_id));
	}
	p[0] = tag;
	d->ts = r->start;
	d->exec = r->exec;
	d->next_index[r->engine] = r->index + 1;
	d->next_id = r->id + 1;
	return (size_t)(q - p);
}

static size_t enc_dma(uint8_t *p, const struct nx_rec_dma *r, struct nx__ntff_delta *d)
{
	uint8_t *q = p + 1;
	uint8_t tag = 0;

	q += nx_varint_put(q, r->start - d->ts);
	q += nx_varint_put(q, r->end - r->start);
	*q++ = r->dma_engine;
	nx_put_le16(q, r->crc);
	q += 2;
	q += nx_varint_put(q, nx_delta32(r->desc, d->desc));
	if (r->id != d->next_id) {
		tag |= NX_DMA_TAG_ID;
		q += nx_varint_put(q, nx_delta64(r->id, d->next_id));
	}
	if (r->transfer != d->transfer) {
		tag |= NX_DMA_TAG_TRANSFER;
		q += nx_varint_put(q, nx_delta64(r->transfer, d->transfer));
	}
	if (r->trigger != d->trigger) {
		tag |= NX_DMA_TAG_TRIGGER;
		q += nx_varint_put(q, nx_delta64(r->trigger, d->trigger));
	}
	if (r->block != d->block) {
		tag |= NX_DMA_TAG_BLOCK;
		q += nx_varint_put(q, nx_delta32(r->block, d->block));
	}
	if (r->queue != d->queue) {
		tag |= NX_DMA_TAG_QUEUE;
		q += nx_varint_put(q, r->queue);
	}
	if (r->bytes != d->bytes) {
		tag |= NX_DMA_TAG_BYTES;
		q += nx_varint_put(q, r->bytes);
	}
	if (r->packet_idx != d->next_packet) {
		tag |= NX_DMA_TAG_PACKET;
		q += nx_varint_put(q, nx_delta32(r->packet_idx, d->next_packet));
	}
	p[0] = tag;
	d->ts = r->start;
	d->desc = r->desc;
	d->next_id = r->id + 1;
	d->transfer = r->transfer;
	d->trigger = r->trigger;
	d->block = r->block;
	d->queue = r->queue;
	d->bytes = r->bytes;
	d->next_packet = r->packet_idx + 1;
	return (size_t)(q - p);
}

static size_t enc_sem(uint8_t *p, const struct nx_rec_sem *r, struct nx__ntff_delta *d)
{
	uint8_t *q = p;

	q += nx_varint_put(q, r->ts - d->ts);
	*q++ = (uint8_t)(r->source | r->op << NX_SEM_TAG_OP_SHIFT |
			 (r->double_set ? NX_SEM_TAG_DOUBLE : 0));
	*q++ = (uint8_t)r->sem;
	*q++ = r->timing;
	q += nx_varint_put(q, nx_zigzag32(r->value));
	d->ts = r->ts;
	return (size_t)(q - p);
}

static size_t enc_throttle(uint8_t *p, const struct nx_rec_throttle *r,
			   struct nx__ntff_delta *d)
{
	uint8_t *q = p;

	q += nx_varint_put(q, r->ts - d->ts);
	q += nx_varint_put(q, r->duration);
	*q++ = r->type;
	q += nx_varint_put(q, r->k);
	q += nx_varint_put(q, r->n);
	d->ts = r->ts;
	return (size_t)(q - p);
}

static size_t enc_error(uint8_t *p, const struct nx_rec_error *r, struct nx__ntff_delta *d)
{
	uint8_t *q = p;
	size_t dl = nx__ntff_clip_utf8(r->description, sizeof(r->description) - 1);
	size_t ml = nx__ntff_clip_utf8(r->metadata, sizeof(r->metadata) - 1);

	q += nx_varint_put(q, r->ts - d->ts);
	*q++ = r->type;
	q += nx_varint_put(q, nx_zigzag32(r->type_id));
	q += nx_varint_put(q, dl);
	memcpy(q, r->description, dl);
	q += dl;
	q += nx_varint_put(q, ml);
	memcpy(q, r->metadata, ml);
	q += ml;
	d->ts = r->ts;
	return (size_t)(q - p);
}

static size_t enc_exec(uint8_t *p, const struct nx_rec_exec *r, struct nx__ntff_delta *d)
{
	uint8_t *q = p;

	q += nx_varint_put(q, r->ts - d->ts);
	*q++ = r->stop;
	q += nx_varint_put(q, r->index);
	d->ts = r->ts;
	return (size_t)(q - p);
}

int nx_ntff_writer_open(struct nx_ntff_writer **wp, const char *path,
			const struct nx_ntff_info *info, struct nx_err *err)
{
	struct nx_ntff_writer *w = NULL;
	uint8_t hdr[NX_NTFF_HEADER_SIZE];
	char why[256];
	unsigned off;
	int rc;

	*wp = NULL;
	if (!nx__ntff_info_valid(info, &off, why, sizeof(why)))
		return nx_errf(err, NX_EUSAGE, "%s: invalid trace header: %s", path, why);
	if (info->flags & ~NX_NTFF_KNOWN_FLAGS)
		return nx_errf(err, NX_EUSAGE, "%s: invalid trace header: unknown flags 0x%" PRIx32,
			       path, info->flags & ~NX_NTFF_KNOWN_FLAGS);

	w = nx_xcalloc(1, sizeof(*w));
	w->path = nx_xstrdup(path);
	w->info = *info;
	w->info.version = NX_NTFF_VERSION;
	for (int k = 1; k <= NX_REC_KIND_MAX; k++)
		w->kinds[k].buf = nx_xmalloc(NX_NTFF_CHUNK_HDR + CHUNK_PAYLOAD);
	if ((rc = nx_out_file_open(&w->out, path, &nx_ntff_out_kind, 0, err)))
		goto fail;
	nx__ntff_header_encode(&w->info, hdr);
	rc = write_all(w, hdr, sizeof(hdr), err);
	if (rc)
		goto fail;
	*wp = w;
	return 0;
fail:
	nx_ntff_writer_abort(w);
	return rc;
}

int nx_ntff_write(struct nx_ntff_writer *w, const struct nx_rec *rec, struct nx_err *err)
{
	struct kind_buf *kb;
	char why[256];
	uint64_t ts;
	uint8_t *p;
	int rc;

	if (w->failed)
		return nx_errf(err, w->failed, "%s: writer stopped after an earlier write error",
			       w->out.tmp);
	if (!nx__ntff_kind_name(rec->kind))
		return nx_errf(err, NX_EUSAGE, "%s: record kind %d is unknown", w->path,
			       rec->kind);
	if (!nx__ntff_rec_valid(rec, &w->info, why, sizeof(why)))
		return nx_errf(err, NX_EUSAGE, "%s: %s record %" PRIu64 ": %s", w->path,
			       nx__ntff_kind_name(rec->kind), w->totals[rec->kind], why);
	ts = nx__ntff_rec_ts(rec);
	if (ts < w->last_ts[rec->kind])
		return nx_errf(err, NX_EUSAGE,
			       "%s: %s record %" PRIu64 " is at tick %" PRIu64
			       ", before the previous one (tick %" PRIu64
			       "); records of one kind must be written in time order",
			       w->path, nx__ntff_kind_name(rec->kind), w->totals[rec->kind], ts,
			       w->last_ts[rec->kind]);
	if (w->totals[rec->kind] == UINT64_MAX)
		return nx_errf(err, NX_EUSAGE, "%s: too many %s records", w->path,
			       nx__ntff_kind_name(rec->kind));

	kb = &w->kinds[rec->kind];
	if (kb->len + REC_MAX > CHUNK_PAYLOAD) {
		rc = flush_kind(w, rec->kind, err);
		if (rc)
			return rc;
	}
	p = kb->buf + NX_NTFF_CHUNK_HDR + kb->len;
	switch (rec->kind) {
	case NX_REC_INST: kb->len += enc_inst(p, &rec->u.inst, &kb->d); break;
	case NX_REC_DMA: kb->len += enc_dma(p, &rec->u.dma, &kb->d); break;
	case NX_REC_SEM: kb->len += enc_sem(p, &rec->u.sem, &kb->d); break;
	case NX_REC_THROTTLE: kb->len += enc_throttle(p, &rec->u.throttle, &kb->d); break;
	case NX_REC_ERROR: kb->len += enc_error(p, &rec->u.error, &kb->d); break;
	case NX_REC_EXEC: kb->len += enc_exec(p, &rec->u.exec, &kb->d); break;
	}
	kb->count++;
	w->totals[rec->kind]++;
	w->last_ts[rec->kind] = ts;
	return 0;
}

int nx_ntff_writer_close(struct nx_ntff_writer *w, struct nx_err *err)
{
	uint8_t end[NX_NTFF_CHUNK_HDR + 8 * NX_REC_KIND_MAX];
	uint8_t *payload = end + NX_NTFF_CHUNK_HDR;
	int rc = 0;

	if (!w)
		return nx_errf(err, NX_EUSAGE, "no NTFF writer to close");
	if (w->failed) {
		rc = nx_errf(err, w->failed, "%s: writer stopped after an earlier write error",
			     w->out.tmp);
		goto fail;
	}
	/* Remaining records, in kind order so that the output is deterministic. */
	for (int k = 1; k <= NX_REC_KIND_MAX; k++) {
		rc = flush_kind(w, k, err);
		if (rc)
			goto fail;
	}
	for (int k = 1; k <= NX_REC_KIND_MAX; k++)
		nx_put_le64(payload + 8 * (k - 1), w->totals[k]);
	nx_put_le32(end, NX_NTFF_CHUNK_END);
	nx_put_le32(end + 4, 8 * NX_REC_KIND_MAX);
	nx_put_le32(end + 8, NX_REC_KIND_MAX);
	nx_put_le32(end + 12, nx_crc32c(0, payload, 8 * NX_REC_KIND_MAX));
	rc = write_all(w, end, sizeof(end), err);
	if (rc)
		goto fail;
	/* The data must be on disk before the name says the file is complete. */
	if (fsync(w->out.fd) != 0) {
		rc = nx_errf(err, -errno, "%s: cannot sync: %s", w->out.tmp, strerror(errno));
		goto fail;
	}
	rc = nx_out_file_commit(&w->out, err); /* published, or nothing left to remove */
fail:
	nx_ntff_writer_abort(w);
	return rc;
}

void nx_ntff_writer_abort(struct nx_ntff_writer *w)
{
	if (!w)
		return;
	if (w->out.path)
		nx_out_file_abort(&w->out);
	for (int k = 1; k <= NX_REC_KIND_MAX; k++)
		free(w->kinds[k].buf);
	free(w->path);
	free(w);
}

static bool is_ntff(const uint8_t *head, size_t n)
{
	return n >= NX_NTFF_MAGIC_LEN && !memcmp(head, NX_NTFF_MAGIC, NX_NTFF_MAGIC_LEN);
}

const struct nx_out_kind nx_ntff_out_kind = { "an NTFF", is_ntff };
