/* SPDX-License-Identifier: MIT
 * ntff_reader.c: streams an NTFF trace (docs/formats/ntff.md) in bounded memory.
 *
 * The reader keeps one window of the file (at most NX_NTFF_PAYLOAD_MAX plus a chunk
 * header) filled with pread(2). Chunk headers are read one at a time; a chunk whose
 * kind the caller does not want is stepped over by offset arithmetic and never read,
 * nor checksummed. A wanted chunk is read whole, its CRC checked, and its records are
 * decoded one per call. Every check names the file and the byte offset, and any
 * failure is sticky until rewind, so a caller cannot read on past corrupt data. */
#include "common/compat.h"
#include "common/crc32c.h"
#include "common/xalloc.h"
#include "ntff/ntff.h"
#include "ntff/varint.h"

#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Window size: the largest legal chunk fits whole. */
#define WINDOW (NX_NTFF_PAYLOAD_MAX + NX_NTFF_CHUNK_HDR)
/* Bytes read at a time when the window must be refilled. Large enough to hold a
 * writer-sized chunk and the header after it, small enough that skipping a kind does
 * not drag the skipped chunks through memory. */
#define READAHEAD (128u << 10)

struct nx_ntff_reader {
	int fd;
	char *path;
	uint64_t size;        /* file size at open */
	uint32_t header_size;
	struct nx_ntff_info info;

	uint8_t *buf;         /* WINDOW bytes holding file bytes [win_off, win_off + win_len) */
	uint64_t win_off;
	size_t win_len;

	uint64_t pos;         /* offset of the next chunk header */
	bool at_end;          /* the END chunk was read and verified */
	int failed;           /* sticky error code, 0 if none */

	/* The chunk being decoded, when kind != 0. Its payload is inside the window. */
	int kind;
	uint64_t chunk_off;
	size_t cur, end;      /* cursor and end of the payload, as offsets into buf */
	size_t payload;       /* offset of the payload's first byte in buf */
	uint32_t count, done;
	struct nx__ntff_delta d;

	uint64_t chunk_counts[NX_REC_KIND_MAX + 1]; /* sums of chunk header counts */
	uint64_t last_ts[NX_REC_KIND_MAX + 1];      /* of the last record decoded */
	int64_t end_counts[NX_REC_KIND_MAX + 1];    /* from END; -1 until read */
};

/* Records a failure with the file path in front and makes it sticky. */
NX_PRINTF(4, 5)
static int fail(struct nx_ntff_reader *r, struct nx_err *err, int code, const char *fmt, ...)
{
	char msg[1536];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	r->failed = code;
	return nx_errf(err, code, "%s: %s", r->path, msg);
}

/* Makes file bytes [off, off + n) available in the window and points *out at them.
 * The caller has checked that they lie inside the file and that n <= WINDOW. */
static int ensure(struct nx_ntff_reader *r, uint64_t off, size_t n, const uint8_t **out,
		  struct nx_err *err)
{
	size_t keep = 0, want;

	if (off >= r->win_off && off + n <= r->win_off + r->win_len) {
		*out = r->buf + (off - r->win_off);
		return 0;
	}
	if (off >= r->win_off && off < r->win_off + r->win_len) {
		keep = (size_t)(r->win_off + r->win_len - off);
		memmove(r->buf, r->buf + (off - r->win_off), keep);
	}
	r->win_off = off;
	r->win_len = keep;
	want = n > READAHEAD ? n : READAHEAD;
	if (want > WINDOW)
		want = WINDOW;
	if (want > r->size - off)
		want = (size_t)(r->size - off);
	while (r->win_len < want) {
		ssize_t got = pread(r->fd, r->buf + r->win_len, want - r->win_len,
				    (off_t)(off + r->win_len));

		if (got < 0) {
			if (errno == EINTR)
				continue;
			return fail(r, err, -errno, "cannot read at byte %" PRIu64 ": %s",
				    off + r->win_len, strerror(errno));
		}
		if (got == 0) {
			if (r->win_len >= n)
				break;
			return fail(r, err, NX_ETRUNC,
				    "truncated at byte %" PRIu64 ": the file shrank while reading",
				    off + r->win_len);
		}
		r->win_len += (size_t)got;
	}
	*out = r->buf;
	return 0;
}

/* A NEFF starts with pkg_version 1 or 2 and header_size 1024, both u64 little-endian
 * (docs/formats/neff.md): the file most often given in place of an NTFF. */
static bool is_neff_header(const uint8_t *h)
{
	static const uint8_t v1[8] = { 1 }, v2[8] = { 2 }, size1024[8] = { 0x00, 0x04 };

	return (!memcmp(h, v1, 8) || !memcmp(h, v2, 8)) && !memcmp(h + 8, size1024, 8);
}

static int read_header(struct nx_ntff_reader *r, struct nx_err *err)
{
	struct nx_ntff_info *in = &r->info;
	const struct nx__ntff_field *bad;
	const uint8_t *h;
	uint32_t version, hsize, stored, crc;
	char why[256];
	unsigned off;
	int rc;

	if (r->size == 0)
		return fail(r, err, NX_ETRUNC,
			    "truncated at byte 0: the file is empty, not an NTFF trace");
	rc = ensure(r, 0, r->size < 16 ? (size_t)r->size : 16, &h, err);
	if (rc)
		return rc;
	if (memcmp(h, NX_NTFF_MAGIC,
		   r->size < NX_NTFF_MAGIC_LEN ? (size_t)r->size : NX_NTFF_MAGIC_LEN) != 0)
		return fail(r, err, NX_ECORRUPT, "%s", r->size >= 16 && is_neff_header(h)
			    ? "this is a NEFF (compiled kernel), not an NTFF (device trace); pass it "
			      "with -n" : "not an NTFF file (bad magic at byte 0)");
	if (r->size < 16)
		return fail(r, err, NX_ETRUNC,
			    "truncated header at byte %" PRIu64 ": the file has only %" PRIu64
			    " bytes",
			    r->size, r->size);
	version = nx_get_le32(h + NX_NTFF_OFF_VERSION);
	if (version != NX_NTFF_VERSION)
		return fail(r, err, NX_EVERSION,
			    "NTFF version %" PRIu32
			    " is not supported by this build (supported: %u; byte %u)",
			    version, NX_NTFF_VERSION, NX_NTFF_OFF_VERSION);
	hsize = nx_get_le32(h + NX_NTFF_OFF_HEADER_SIZE);
	if (hsize < NX_NTFF_HEADER_SIZE || hsize > NX_NTFF_HEADER_MAX || hsize % 4)
		return fail(r, err, NX_ECORRUPT,
			    "header size %" PRIu32 " at byte %u is invalid (expected a multiple "
			    "of 4 from %u to %u)",
			    hsize, NX_NTFF_OFF_HEADER_SIZE, NX_NTFF_HEADER_SIZE,
			    NX_NTFF_HEADER_MAX);
	if (r->size < hsize)
		return fail(r, err, NX_ETRUNC,
			    "truncated header at byte %" PRIu64 ": the header has %" PRIu32
			    " bytes",
			    r->size, hsize);
	rc = ensure(r, 0, hsize, &h, err);
	if (rc)
		return rc;
	stored = nx_get_le32(h + hsize - 4);
	crc = nx_crc32c(0, h, hsize - 4);
	if (stored != crc)
		return fail(r, err, NX_ECORRUPT,
			    "header CRC mismatch (stored 0x%08" PRIx32 " at byte %" PRIu32
			    ", computed 0x%08" PRIx32 ")",
			    stored, hsize - 4, crc);

	if (!nx__ntff_header_decode(h, in, &bad))
		return fail(r, err, NX_ECORRUPT, "header field %s at byte %u is not NUL-terminated",
			    bad->name, bad->off);
	if (!nx__ntff_info_valid(in, &off, why, sizeof(why)))
		return fail(r, err, NX_ECORRUPT, "invalid header field at byte %u: %s", off, why);
	r->header_size = hsize;
	return 0;
}

int nx_ntff_reader_open(struct nx_ntff_reader **rp, const char *path, struct nx_err *err)
{
	struct nx_ntff_reader *r;
	struct stat st;
	int rc;

	*rp = NULL;
	r = nx_xcalloc(1, sizeof(*r));
	r->path = nx_xstrdup(path);
	r->fd = open(path, O_RDONLY | O_CLOEXEC);
	if (r->fd < 0) {
		rc = nx_errf(err, -errno, "%s: cannot open: %s", path, strerror(errno));
		goto fail;
	}
	if (fstat(r->fd, &st) != 0) {
		rc = nx_errf(err, -errno, "%s: cannot stat: %s", path, strerror(errno));
		goto fail;
	}
	if (!S_ISREG(st.st_mode)) {
		rc = nx_errf(err, -EINVAL, "%s: not a regular file", path);
		goto fail;
	}
	r->size = (uint64_t)st.st_size;
	r->buf = nx_xmalloc(WINDOW);
	for (int k = 0; k <= NX_REC_KIND_MAX; k++)
		r->end_counts[k] = -1;
	rc = read_header(r, err);
	if (rc)
		goto fail;
	r->pos = r->header_size;
	*rp = r;
	return 0;
fail:
	nx_ntff_reader_close(r);
	return rc;
}

const struct nx_ntff_info *nx_ntff_reader_info(const struct nx_ntff_reader *r)
{
	return &r->info;
}

/* The END chunk at off: checks its CRC, that nothing follows it, and that its counts
 * match the record counts of the chunk headers seen (all kinds, read or skipped). */
static int read_end(struct nx_ntff_reader *r, uint64_t off, uint32_t len, uint32_t count,
		    uint32_t stored, struct nx_err *err)
{
	const uint8_t *p;
	uint64_t after = off + NX_NTFF_CHUNK_HDR + len;
	uint32_t crc;
	int rc;

	if (count < NX_REC_KIND_MAX || len != 8ull * count)
		return fail(r, err, NX_ECORRUPT,
			    "end-of-trace chunk at byte %" PRIu64 ": %" PRIu32
			    " counts in %" PRIu32 " bytes (expected at least %d, 8 bytes each)",
			    off, count, len, NX_REC_KIND_MAX);
	rc = ensure(r, off + NX_NTFF_CHUNK_HDR, len, &p, err);
	if (rc)
		return rc;
	crc = nx_crc32c(0, p, len);
	if (crc != stored)
		return fail(r, err, NX_ECORRUPT, "chunk at byte %" PRIu64 ": CRC mismatch "
			    "(stored 0x%08" PRIx32 ", computed 0x%08" PRIx32 ")", off, stored, crc);
	if (after != r->size)
		return fail(r, err, NX_ECORRUPT,
			    "%" PRIu64 " bytes of trailing data after the end-of-trace chunk at "
			    "byte %" PRIu64, r->size - after, off);
	/* Counts of kinds this build does not know (index >= NX_REC_KIND_MAX) are ignored. */
	for (int k = 1; k <= NX_REC_KIND_MAX; k++) {
		uint64_t n = nx_get_le64(p + 8 * (k - 1));

		if (n != r->chunk_counts[k])
			return fail(r, err, NX_ECORRUPT,
				    "end-of-trace chunk at byte %" PRIu64 ": it counts %" PRIu64
				    " %s records but the chunks hold %" PRIu64,
				    off, n, nx__ntff_kind_name(k), r->chunk_counts[k]);
	}
	for (int k = 1; k <= NX_REC_KIND_MAX; k++)
		r->end_counts[k] = (int64_t)r->chunk_counts[k];
	r->at_end = true;
	r->pos = after;
	return 0;
}

/* Reads the chunk header at r->pos. Loads and checks the chunk when its kind is in
 * mask (r->kind becomes non-zero); steps over it otherwise. */
static int next_chunk(struct nx_ntff_reader *r, unsigned mask, struct nx_err *err)
{
	uint64_t off = r->pos, remain;
	uint32_t type, len, count, stored, crc;
	const uint8_t *h;
	int rc;

	if (off == r->size)
		return fail(r, err, NX_ETRUNC,
			    "truncated: no end-of-trace chunk after byte %" PRIu64, off);
	if (r->size - off < NX_NTFF_CHUNK_HDR)
		return fail(r, err, NX_ETRUNC,
			    "truncated chunk header at byte %" PRIu64 ": %u bytes needed, %" PRIu64
			    " remain",
			    off, NX_NTFF_CHUNK_HDR, r->size - off);
	rc = ensure(r, off, NX_NTFF_CHUNK_HDR, &h, err);
	if (rc)
		return rc;
	type = nx_get_le32(h);
	len = nx_get_le32(h + 4);
	count = nx_get_le32(h + 8);
	stored = nx_get_le32(h + 12);
	if (type == 0)
		return fail(r, err, NX_ECORRUPT, "chunk at byte %" PRIu64 ": invalid type 0", off);
	if (len > NX_NTFF_PAYLOAD_MAX)
		return fail(r, err, NX_ECORRUPT,
			    "chunk at byte %" PRIu64 ": payload length %" PRIu32
			    " exceeds the limit of %u bytes",
			    off, len, NX_NTFF_PAYLOAD_MAX);
	remain = r->size - off - NX_NTFF_CHUNK_HDR;
	if (len > remain)
		return fail(r, err, NX_ETRUNC,
			    "truncated chunk at byte %" PRIu64 ": header says %" PRIu32
			    " bytes, %" PRIu64 " remain",
			    off, len, remain);
	if (type == NX_NTFF_CHUNK_END)
		return read_end(r, off, len, count, stored, err);
	r->pos = off + NX_NTFF_CHUNK_HDR + len;
	if (type > NX_REC_KIND_MAX)
		return 0; /* a chunk type from a later revision: skipped unread */
	if (type == NX_REC_DMA && !(r->info.flags & NX_NTFF_DGE_NOTIFICATIONS))
		return fail(r, err, NX_ECORRUPT,
			    "chunk at byte %" PRIu64 " holds DMA records, but the header says DGE "
			    "notifications were off",
			    off);
	r->chunk_counts[type] += count;
	if (!(mask & NX_REC_MASK(type)))
		return 0;
	rc = ensure(r, off + NX_NTFF_CHUNK_HDR, len, &h, err);
	if (rc)
		return rc;
	crc = nx_crc32c(0, h, len);
	if (crc != stored)
		return fail(r, err, NX_ECORRUPT, "chunk at byte %" PRIu64 ": CRC mismatch "
			    "(stored 0x%08" PRIx32 ", computed 0x%08" PRIx32 ")", off, stored, crc);
	if (count == 0 && len != 0)
		return fail(r, err, NX_ECORRUPT,
			    "chunk at byte %" PRIu64 ": %" PRIu32 " payload bytes but no records",
			    off, len);
	r->kind = (int)type;
	r->chunk_off = off;
	r->payload = (size_t)(h - r->buf);
	r->cur = r->payload;
	r->end = r->payload + len;
	r->count = count;
	r->done = 0;
	memset(&r->d, 0, sizeof(r->d));
	return 0;
}

/* Decoding cursor. Reads past the end or malformed varints record the first problem
 * and make every later read return 0, so a record decoder checks once at its end. */
enum { BAD_NONE, BAD_SHORT, BAD_VARINT, BAD_VALUE };

struct cur {
	const uint8_t *p, *end;
	int bad;
	const uint8_t *bad_at;
	const char *why; /* BAD_VALUE */
};

static void set_bad(struct cur *c, int bad, const char *why)
{
	if (!c->bad) {
		c->bad = bad;
		c->bad_at = c->p;
		c->why = why;
	}
	c->p = c->end;
}

static inline uint64_t rd_var(struct cur *c)
{
	uint64_t v;
	int n = nx_varint_get(c->p, (size_t)(c->end - c->p), &v);

	if (n > 0) {
		c->p += n;
		return v;
	}
	set_bad(c, n == 0 ? BAD_SHORT : BAD_VARINT, NULL);
	return 0;
}

static inline uint32_t rd_var32(struct cur *c)
{
	const uint8_t *at = c->p;
	uint64_t v = rd_var(c);

	if (v > UINT32_MAX) {
		c->p = at;
		set_bad(c, BAD_VALUE, "value does not fit in 32 bits");
		return 0;
	}
	return (uint32_t)v;
}

static inline uint16_t rd_var16(struct cur *c)
{
	const uint8_t *at = c->p;
	uint64_t v = rd_var(c);

	if (v > UINT16_MAX) {
		c->p = at;
		set_bad(c, BAD_VALUE, "value does not fit in 16 bits");
		return 0;
	}
	return (uint16_t)v;
}

static inline uint8_t rd_u8(struct cur *c)
{
	if (c->p < c->end)
		return *c->p++;
	set_bad(c, BAD_SHORT, NULL);
	return 0;
}

/* Adds an unsigned delta to a timestamp, flagging wrap-around. */
static inline uint64_t rd_after(struct cur *c, uint64_t base)
{
	const uint8_t *at = c->p;
	uint64_t v = base + rd_var(c);

	if (v < base) {
		c->p = at;
		set_bad(c, BAD_VALUE, "timestamp overflows 64 bits");
		return 0;
	}
	return v;
}

/* Length-prefixed string into dst (size bytes, NUL-terminated). */
static void rd_str(struct cur *c, char *dst, size_t size, const char *too_long,
		   const char *has_nul)
{
	const uint8_t *at = c->p;
	uint64_t n = rd_var(c);

	if (c->bad)
		return;
	if (n > size - 1) {
		c->p = at;
		set_bad(c, BAD_VALUE, too_long);
		return;
	}
	if (n > (uint64_t)(c->end - c->p)) {
		set_bad(c, BAD_SHORT, NULL);
		return;
	}
	if (memchr(c->p, '\0', (size_t)n)) {
		c->p = at;
		set_bad(c, BAD_VALUE, has_nul);
		return;
	}
	memcpy(dst, c->p, (size_t)n);
	dst[n] = '\0';
	c->p += n;
}

static void dec_inst(struct cur *c, struct nx_rec_inst *o, struct nx__ntff_delta *d)
{
	unsigned tag = rd_u8(c);
	unsigned e = tag & NX_INST_TAG_ENGINE;

	if (tag & NX_INST_TAG_RESERVED)
		set_bad(c, BAD_VALUE, "reserved tag bit set");
	o->engine = (uint8_t)e;
	o->start = rd_after(c, d->ts);
	o->end = rd_after(c, o->start);
	o->wait_ticks = tag & NX_INST_TAG_WAIT ? rd_var(c) : 0;
	o->exec = tag & NX_INST_TAG_EXEC ? nx_undelta32(rd_var32(c), d->exec) : d->exec;
	o->index = tag & NX_INST_TAG_INDEX ? nx_undelta32(rd_var32(c), d->next_index[e])
					   : d->next_index[e];
	o->id = tag & NX_INST_TAG_ID ? nx_undelta64(rd_var(c), d->next_id) : d->next_id;
	d->ts = o->start;
	d->exec = o->exec;
	d->next_index[e] = o->index + 1;
	d->next_id = o->id + 1;
}

static void dec_dma(struct cur *c, struct nx_rec_dma *o, struct nx__ntff_delta *d)
{
	unsigned tag = rd_u8(c);

	if (tag & NX_DMA_TAG_RESERVED)
		set_bad(c, BAD_VALUE, "reserved tag bit set");
	o->start = rd_after(c, d->ts);
	o->end = rd_after(c, o->start);
	o->dma_engine = rd_u8(c);
	o->crc = rd_u8(c);
	o->crc |= (uint16_t)(rd_u8(c) << 8);
	o->desc = nx_undelta32(rd_var32(c), d->desc);
	o->id = tag & NX_DMA_TAG_ID ? nx_undelta64(rd_var(c), d->next_id) : d->next_id;
	o->transfer = tag & NX_DMA_TAG_TRANSFER ? nx_undelta64(rd_var(c), d->transfer)
						: d->transfer;
	o->trigger = tag & NX_DMA_TAG_TRIGGER ? nx_undelta64(rd_var(c), d->trigger) : d->trigger;
	o->block = tag & NX_DMA_TAG_BLOCK ? nx_undelta32(rd_var32(c), d->block) : d->block;
	o->queue = tag & NX_DMA_TAG_QUEUE ? rd_var16(c) : (uint16_t)d->queue;
	o->bytes = tag & NX_DMA_TAG_BYTES ? rd_var32(c) : d->bytes;
	o->packet_idx = tag & NX_DMA_TAG_PACKET ? nx_undelta32(rd_var32(c), d->next_packet)
						: d->next_packet;
	d->ts = o->start;
	d->desc = o->desc;
	d->next_id = o->id + 1;
	d->transfer = o->transfer;
	d->trigger = o->trigger;
	d->block = o->block;
	d->queue = o->queue;
	d->bytes = o->bytes;
	d->next_packet = o->packet_idx + 1;
}

static void dec_sem(struct cur *c, struct nx_rec_sem *o, struct nx__ntff_delta *d)
{
	unsigned tag;

	o->ts = rd_after(c, d->ts);
	tag = rd_u8(c);
	if (tag & NX_SEM_TAG_RESERVED)
		set_bad(c, BAD_VALUE, "reserved tag bit set");
	o->source = (uint8_t)(tag & NX_SEM_TAG_SOURCE);
	o->op = (uint8_t)((tag & NX_SEM_TAG_OP) >> NX_SEM_TAG_OP_SHIFT);
	o->double_set = (tag & NX_SEM_TAG_DOUBLE) ? 1 : 0;
	o->sem = rd_u8(c);
	o->timing = rd_u8(c);
	o->value = nx_unzigzag32(rd_var32(c));
	d->ts = o->ts;
}

static void dec_throttle(struct cur *c, struct nx_rec_throttle *o, struct nx__ntff_delta *d)
{
	o->ts = rd_after(c, d->ts);
	o->duration = rd_var(c);
	o->type = rd_u8(c);
	o->k = rd_var16(c);
	o->n = rd_var16(c);
	d->ts = o->ts;
}

static void dec_error(struct cur *c, struct nx_rec_error *o, struct nx__ntff_delta *d)
{
	o->ts = rd_after(c, d->ts);
	o->type = rd_u8(c);
	o->type_id = nx_unzigzag32(rd_var32(c));
	rd_str(c, o->description, sizeof(o->description), "description longer than 63 bytes",
	       "NUL byte inside the description");
	rd_str(c, o->metadata, sizeof(o->metadata), "metadata longer than 191 bytes",
	       "NUL byte inside the metadata");
	d->ts = o->ts;
}

static void dec_exec(struct cur *c, struct nx_rec_exec *o, struct nx__ntff_delta *d)
{
	o->ts = rd_after(c, d->ts);
	o->stop = rd_u8(c);
	o->index = rd_var32(c);
	d->ts = o->ts;
}

/* Decodes the next record of the current chunk into rec. */
static int decode_one(struct nx_ntff_reader *r, struct nx_rec *rec, struct nx_err *err)
{
	struct cur c = { r->buf + r->cur, r->buf + r->end, BAD_NONE, NULL, NULL };
	const char *kname = nx__ntff_kind_name(r->kind);
	uint32_t n = r->done + 1;
	uint64_t ts;
	char why[256];

	rec->kind = r->kind;
	switch (r->kind) {
	case NX_REC_INST:
		memset(&rec->u.inst, 0, sizeof(rec->u.inst));
		dec_inst(&c, &rec->u.inst, &r->d);
		break;
	case NX_REC_DMA:
		memset(&rec->u.dma, 0, sizeof(rec->u.dma));
		dec_dma(&c, &rec->u.dma, &r->d);
		break;
	case NX_REC_SEM:
		memset(&rec->u.sem, 0, sizeof(rec->u.sem));
		dec_sem(&c, &rec->u.sem, &r->d);
		break;
	case NX_REC_THROTTLE:
		memset(&rec->u.throttle, 0, sizeof(rec->u.throttle));
		dec_throttle(&c, &rec->u.throttle, &r->d);
		break;
	case NX_REC_ERROR:
		memset(&rec->u.error, 0, sizeof(rec->u.error));
		dec_error(&c, &rec->u.error, &r->d);
		break;
	case NX_REC_EXEC:
		memset(&rec->u.exec, 0, sizeof(rec->u.exec));
		dec_exec(&c, &rec->u.exec, &r->d);
		break;
	}
	if (c.bad) {
		uint64_t at = r->chunk_off + NX_NTFF_CHUNK_HDR + (uint64_t)(c.bad_at - r->buf) -
			      r->payload;

		if (c.bad == BAD_SHORT)
			return fail(r, err, NX_ECORRUPT,
				    "chunk at byte %" PRIu64 ": %s record %" PRIu32 " of %" PRIu32
				    " runs past the end of the payload (byte %" PRIu64 ")",
				    r->chunk_off, kname, n, r->count, at);
		return fail(r, err, NX_ECORRUPT,
			    "chunk at byte %" PRIu64 ": %s record %" PRIu32 " of %" PRIu32
			    ": %s at byte %" PRIu64,
			    r->chunk_off, kname, n, r->count,
			    c.bad == BAD_VARINT ? "malformed varint" : c.why, at);
	}
	if (!nx__ntff_rec_valid(rec, &r->info, why, sizeof(why)))
		return fail(r, err, NX_ECORRUPT,
			    "chunk at byte %" PRIu64 ": %s record %" PRIu32 " of %" PRIu32
			    " (byte %" PRIu64 "): %s",
			    r->chunk_off, kname, n, r->count,
			    r->chunk_off + NX_NTFF_CHUNK_HDR + (r->cur - r->payload), why);
	ts = nx__ntff_rec_ts(rec);
	if (ts < r->last_ts[r->kind])
		return fail(r, err, NX_ECORRUPT,
			    "chunk at byte %" PRIu64 ": %s record %" PRIu32 " of %" PRIu32
			    " is at tick %" PRIu64 ", before the previous one (tick %" PRIu64 ")",
			    r->chunk_off, kname, n, r->count, ts, r->last_ts[r->kind]);
	r->last_ts[r->kind] = ts;
	r->cur = (size_t)(c.p - r->buf);
	r->done = n;
	if (n == r->count && r->cur != r->end)
		return fail(r, err, NX_ECORRUPT,
			    "chunk at byte %" PRIu64 ": %zu trailing bytes after the last of %"
			    PRIu32 " %s records",
			    r->chunk_off, r->end - r->cur, r->count, kname);
	return 1;
}

int nx_ntff_reader_next(struct nx_ntff_reader *r, unsigned kind_mask, struct nx_rec *rec,
			struct nx_err *err)
{
	int rc;

	if (r->failed)
		return nx_errf(err, r->failed, "%s: reader stopped after an earlier error",
			       r->path);
	for (;;) {
		if (r->kind) {
			if (r->done < r->count && (kind_mask & NX_REC_MASK(r->kind)))
				return decode_one(r, rec, err);
			/* Done, or the caller no longer wants this kind: the rest of the
			 * chunk is dropped like a skipped chunk. */
			r->kind = 0;
		}
		if (r->at_end)
			return 0;
		rc = next_chunk(r, kind_mask, err);
		if (rc)
			return rc;
	}
}

int nx_ntff_reader_rewind(struct nx_ntff_reader *r, struct nx_err *err)
{
	(void)err;
	r->pos = r->header_size;
	r->at_end = false;
	r->failed = 0;
	r->kind = 0;
	memset(r->chunk_counts, 0, sizeof(r->chunk_counts));
	memset(r->last_ts, 0, sizeof(r->last_ts));
	return 0;
}

int64_t nx_ntff_reader_count(const struct nx_ntff_reader *r, int kind)
{
	if (kind < 1 || kind > NX_REC_KIND_MAX)
		return -1;
	return r->end_counts[kind];
}

void nx_ntff_reader_close(struct nx_ntff_reader *r)
{
	if (!r)
		return;
	if (r->fd >= 0)
		close(r->fd);
	free(r->buf);
	free(r->path);
	free(r);
}
