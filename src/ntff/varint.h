/* SPDX-License-Identifier: MIT
 * varint.h: the byte-level coding primitives of the NTFF layout (docs/formats/ntff.md):
 * LEB128 unsigned varints with a bounds-checked decoder, zigzag mapping of signed
 * values (the fixed-width little-endian helpers are common/le.h).
 *
 * The last section holds the few layout constants and checks that ntff_writer.c and
 * ntff_reader.c must agree on; it is internal to src/ntff and not part of ntff.h. */
#ifndef NX_NTFF_VARINT_H
#define NX_NTFF_VARINT_H

#include "common/compat.h"
#include "common/le.h"
#include "ntff/ntff.h"

#include <string.h>

/* A 64-bit value needs at most ten 7-bit groups; the tenth may only carry bit 63. */
#define NX_VARINT_MAX 10

/* Appends v as LEB128 to out, which must have NX_VARINT_MAX bytes of room. Returns the
 * number of bytes written (1..10). Always the shortest form, so output is canonical. */
static inline size_t nx_varint_put(uint8_t *out, uint64_t v)
{
	size_t n = 0;

	while (v >= 0x80) {
		out[n++] = (uint8_t)(v | 0x80);
		v >>= 7;
	}
	out[n++] = (uint8_t)v;
	return n;
}

/* Decodes one varint from the avail bytes at p. Returns the number of bytes consumed
 * (1..10), 0 when the buffer ends inside the varint, or -1 when the varint is longer
 * than ten bytes or does not fit in 64 bits. Never reads past p + avail. Non-minimal
 * encodings (e.g. 0x80 0x00) are accepted; writers never produce them. */
static inline int nx_varint_get(const uint8_t *p, size_t avail, uint64_t *v)
{
	uint64_t r = 0;
	size_t lim = avail < NX_VARINT_MAX ? avail : NX_VARINT_MAX;

	/* Fast path: one byte, the common case for deltas. */
	if (avail && p[0] < 0x80) {
		*v = p[0];
		return 1;
	}
	for (size_t i = 0; i < lim; i++) {
		uint64_t b = p[i];

		if (i == NX_VARINT_MAX - 1 && b > 1)
			return -1; /* bits beyond 63, or an eleventh byte announced */
		r |= (b & 0x7f) << (7 * i);
		if (b < 0x80) {
			*v = r;
			return (int)i + 1;
		}
	}
	return avail < NX_VARINT_MAX ? 0 : -1;
}

/* Number of bytes nx_varint_put() writes for v. */
static inline size_t nx_varint_len(uint64_t v)
{
	size_t n = 1;

	while (v >= 0x80) {
		v >>= 7;
		n++;
	}
	return n;
}

/* Zigzag maps signed values to unsigned ones so that small magnitudes of either sign
 * stay small: 0, -1, 1, -2, 2 ... become 0, 1, 2, 3, 4 ... */
static inline uint64_t nx_zigzag64(int64_t x)
{
	return ((uint64_t)x << 1) ^ (uint64_t)(x >> 63);
}

static inline int64_t nx_unzigzag64(uint64_t u)
{
	return (int64_t)((u >> 1) ^ (~(u & 1) + 1));
}

static inline uint32_t nx_zigzag32(int32_t x)
{
	return ((uint32_t)x << 1) ^ (uint32_t)(x >> 31);
}

static inline int32_t nx_unzigzag32(uint32_t u)
{
	return (int32_t)((u >> 1) ^ (~(u & 1) + 1));
}

/* Wrapping differences. Deltas are taken modulo 2^64 (or 2^32) and read back as
 * signed, so every pair of values has a delta, including UINT64_MAX "none" markers. */
static inline uint64_t nx_delta64(uint64_t v, uint64_t base)
{
	return nx_zigzag64((int64_t)(v - base));
}

static inline uint64_t nx_undelta64(uint64_t zz, uint64_t base)
{
	return base + (uint64_t)nx_unzigzag64(zz);
}

static inline uint32_t nx_delta32(uint32_t v, uint32_t base)
{
	return nx_zigzag32((int32_t)(v - base));
}

static inline uint32_t nx_undelta32(uint32_t zz, uint32_t base)
{
	return base + (uint32_t)nx_unzigzag32(zz);
}

/*
 * Internal to src/ntff: layout constants and checks shared by ntff_writer.c and
 * ntff_reader.c. docs/formats/ntff.md is the normative description.
 */

#define NX_NTFF_MAGIC "\x89NTFF\r\n\x1a" /* 8 bytes, no terminating NUL on disk */
#define NX_NTFF_MAGIC_LEN 8u
#define NX_NTFF_HEADER_SIZE 800u         /* version-1 header, CRC included */
#define NX_NTFF_HEADER_MAX 65536u        /* largest header_size a reader accepts */
#define NX_NTFF_CHUNK_HDR 16u
#define NX_NTFF_CHUNK_END 0x7f454e44u    /* bytes 44 4e 45 7f on disk */
#define NX_NTFF_PAYLOAD_MAX (1u << 20)   /* hard limit on any chunk payload */
#define NX_NTFF_STR_LEN 128u             /* fixed header string fields */
#define NX_NTFF_MAX_DMA_ENGINES 64u
#define NX_NTFF_MAX_CORES 1024u
#define NX_NTFF_MAX_DIM 65536u           /* te_rows, te_cols, *_channels */

/* Offsets of the version-1 header fields. */
enum nx_ntff_hdr_off {
	NX_NTFF_OFF_MAGIC = 0,
	NX_NTFF_OFF_VERSION = 8,
	NX_NTFF_OFF_HEADER_SIZE = 12,
	NX_NTFF_OFF_FLAGS = 16,
	NX_NTFF_OFF_RESERVED0 = 20,
	NX_NTFF_OFF_UUID = 24,
	NX_NTFF_OFF_TICKS_PER_NS = 40,
	NX_NTFF_OFF_CAPTURE_NS = 48,
	NX_NTFF_OFF_NUM_PCORES = 56,
	NX_NTFF_OFF_NUM_DMA = 60,
	NX_NTFF_OFF_PCORE_IDX = 64,
	NX_NTFF_OFF_NC_IDX = 68,
	NX_NTFF_OFF_DEV_IDX = 72,
	NX_NTFF_OFF_TE_ROWS = 76,
	NX_NTFF_OFF_TE_COLS = 80,
	NX_NTFF_OFF_VE_CH = 84,
	NX_NTFF_OFF_SE_CH = 88,
	NX_NTFF_OFF_GP_CH = 92,
	NX_NTFF_OFF_DMA_BW = 96,
	NX_NTFF_OFF_HBM_BW = 104,
	NX_NTFF_OFF_TE_CLK = 112,
	NX_NTFF_OFF_VE_CLK = 120,
	NX_NTFF_OFF_SE_CLK = 128,
	NX_NTFF_OFF_GP_CLK = 136,
	NX_NTFF_OFF_NC_CLK = 144,
	NX_NTFF_OFF_TARGET = 152,
	NX_NTFF_OFF_INSTANCE = 280,
	NX_NTFF_OFF_RUNTIME = 408,
	NX_NTFF_OFF_DRIVER = 536,
	NX_NTFF_OFF_NEFF_NAME = 664,
	NX_NTFF_OFF_RESERVED1 = 792,
	NX_NTFF_OFF_CRC = 796, /* in general header_size - 4 */
};

/* Flag bits this build knows; writers refuse others, readers ignore them. */
#define NX_NTFF_KNOWN_FLAGS (NX_NTFF_DGE_NOTIFICATIONS | NX_NTFF_SIMULATED)

/* Record tag bits (see ntff.md, "Records"). */
#define NX_INST_TAG_ENGINE 0x07u
#define NX_INST_TAG_WAIT 0x08u
#define NX_INST_TAG_EXEC 0x10u
#define NX_INST_TAG_INDEX 0x20u
#define NX_INST_TAG_ID 0x40u
#define NX_INST_TAG_RESERVED 0x80u

#define NX_DMA_TAG_ID 0x01u
#define NX_DMA_TAG_TRANSFER 0x02u
#define NX_DMA_TAG_TRIGGER 0x04u
#define NX_DMA_TAG_BLOCK 0x08u
#define NX_DMA_TAG_QUEUE 0x10u
#define NX_DMA_TAG_BYTES 0x20u
#define NX_DMA_TAG_PACKET 0x40u
#define NX_DMA_TAG_RESERVED 0x80u

#define NX_SEM_TAG_SOURCE 0x07u
#define NX_SEM_TAG_OP_SHIFT 3
#define NX_SEM_TAG_OP 0x38u
#define NX_SEM_TAG_DOUBLE 0x40u
#define NX_SEM_TAG_RESERVED 0x80u

/* Per-chunk delta state. Both sides reset it to all-zero at the start of every chunk
 * and update it after every record, in the same way. */
struct nx__ntff_delta {
	uint64_t ts;         /* start (INST, DMA) or ts of the previous record */
	uint64_t next_id;    /* INST, DMA: previous id + 1 */
	uint64_t transfer;   /* DMA */
	uint64_t trigger;    /* DMA */
	uint32_t exec;       /* INST: previous exec; EXEC: previous index */
	uint32_t block;      /* DMA */
	uint32_t desc;       /* DMA */
	uint32_t queue;      /* DMA */
	uint32_t bytes;      /* DMA */
	uint32_t next_packet;/* DMA: previous packet_idx + 1 */
	uint32_t next_index[8]; /* INST: per engine, previous index + 1 */
};

/* Timestamp that orders records of one kind: start for INST/DMA, ts for the others. */
uint64_t nx__ntff_rec_ts(const struct nx_rec *rec);
/* English name of a record kind for messages ("instruction", "DMA" ...), or NULL. */
const char *nx__ntff_kind_name(int kind);
/* The header's fields (ntff_header.c), in offset order, covering every byte of the
 * version-1 header. */
enum nx__ntff_fkind {
	NX_NTFF_F_MAGIC,    /* NX_NTFF_MAGIC */
	NX_NTFF_F_VERSION,  /* u32: NX_NTFF_VERSION on write, info.version on read */
	NX_NTFF_F_HSIZE,    /* u32: header_size */
	NX_NTFF_F_U32,
	NX_NTFF_F_U64,
	NX_NTFF_F_F64,
	NX_NTFF_F_BYTES,
	NX_NTFF_F_STR,      /* NUL-padded UTF-8, at least one NUL */
	NX_NTFF_F_RESERVED, /* zero on write, ignored on read */
	NX_NTFF_F_CRC,      /* CRC-32C of every byte before it */
};

struct nx__ntff_field {
	const char *name;     /* as in docs/formats/ntff.md */
	unsigned off, size;   /* bytes */
	enum nx__ntff_fkind kind;
	size_t member;        /* offset in struct nx_ntff_info (numbers, bytes, strings) */
	uint32_t max;         /* u32: largest valid value, 0 = no limit */
};

extern const struct nx__ntff_field nx__ntff_header[];
extern const size_t nx__ntff_header_nfields;

/* Length of s clipped to max bytes, backing off to a UTF-8 character boundary so that a
 * multi-byte character is never cut in half. s must have room for max + 1 bytes. */
size_t nx__ntff_clip_utf8(const char *s, size_t max);
/* Writes the NX_NTFF_HEADER_SIZE bytes of the header of info, CRC included. */
void nx__ntff_header_encode(const struct nx_ntff_info *info, uint8_t *h);
/* Reads the fields of a header whose magic, version, size and CRC were checked. False
 * when a string field has no NUL (*bad names it). */
bool nx__ntff_header_decode(const uint8_t *h, struct nx_ntff_info *info,
			    const struct nx__ntff_field **bad);
/* Checks the header fields a reader relies on. On failure returns false, stores the
 * header offset of the offending field in *off and a reason in why. */
bool nx__ntff_info_valid(const struct nx_ntff_info *info, unsigned *off, char *why,
			 size_t why_len);
/* Checks the value ranges of one record (engine numbers, enums, end >= start, DMA
 * engine below num_dma_engines, DMA only with NX_NTFF_DGE_NOTIFICATIONS). */
bool nx__ntff_rec_valid(const struct nx_rec *rec, const struct nx_ntff_info *info, char *why,
			size_t why_len);

#endif
