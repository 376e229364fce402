/* SPDX-License-Identifier: MIT
 * ntff.h: our open NTFF device-trace layout (docs/formats/ntff.md), its records, and a
 * streaming writer and reader.
 *
 * A file is a fixed header (magic, version, the paired NEFF uuid, ticks_per_nanosec
 * and the hardware constants Metadata needs) followed by chunks. Every chunk has a
 * 16-byte header (type, payload length, record count, CRC-32C of the payload) and holds
 * records of one kind, varint/delta encoded. An END chunk closes the file with the
 * per-kind record counts, so truncation at a chunk boundary is detected too. Readers
 * skip chunk types they do not know. Timestamps are device ticks. */
#ifndef NX_NTFF_NTFF_H
#define NX_NTFF_NTFF_H

#include "common/compat.h"
#include "common/err.h"
#include "common/outpath.h"

#define NX_NTFF_VERSION 1u

enum nx_rec_kind {
	NX_REC_INST = 1,     /* an instruction executed on a compute engine */
	NX_REC_DMA = 2,      /* a DMA packet moved by one DMA engine */
	NX_REC_SEM = 3,      /* a semaphore changed value */
	NX_REC_THROTTLE = 4, /* the Tensor engine ran throttled for a while */
	NX_REC_ERROR = 5,    /* a hardware error, warning or custom notification */
	NX_REC_EXEC = 6,     /* an execution started or stopped */
	NX_REC_KIND_MAX = 6,
};
#define NX_REC_MASK(kind) (1u << (kind))
#define NX_REC_MASK_ALL 0xffffffffu

enum nx_ntff_flags {
	NX_NTFF_DGE_NOTIFICATIONS = 1u << 0, /* DMA packet records were captured */
	NX_NTFF_SIMULATED = 1u << 1,         /* written by our simulator, not hardware */
};

/* Header contents. Strings are at most 127 bytes. */
struct nx_ntff_info {
	uint32_t version;          /* NX_NTFF_VERSION on write; as found on read */
	uint32_t flags;            /* enum nx_ntff_flags */
	uint8_t neff_uuid[16];     /* uuid of the NEFF that was executed */
	uint64_t ticks_per_ns;     /* >= 1 */
	uint64_t capture_unix_ns;  /* wall-clock of tick 0, 0 if unknown */
	uint32_t num_physical_cores;
	uint32_t num_dma_engines;
	uint32_t pcore_idx;
	uint32_t neuroncore_idx, neuron_device_idx;
	uint32_t te_rows, te_cols;
	uint32_t ve_channels, se_channels, gp_channels;
	double dma_ddr_bandwidth;  /* bytes/s per physical core */
	double hbm_ddr_bandwidth;  /* bytes/s per HBM stack */
	double te_clock_ghz, ve_clock_ghz, se_clock_ghz, gp_clock_ghz, nc_clock_ghz;
	char target[128];          /* "trn2", "trn1" */
	char instance_type[128];
	char runtime_version[128];
	char driver_version[128];
	char neff_name[128];
};

struct nx_rec_inst {
	uint64_t id;          /* unique per file; Instruction.id */
	uint64_t start, end;  /* ticks: issue after any semaphore wait, and completion */
	uint64_t wait_ticks;  /* ticks spent waiting on the semaphore before start */
	uint32_t index;       /* instruction index in the engine stream (pc / NX_INST_SIZE) */
	uint32_t exec;        /* execution index */
	uint8_t engine;       /* enum nx_engine */
};

struct nx_rec_dma {
	uint64_t id;          /* unique per file; DmaPacket.id */
	uint64_t transfer;    /* unique per executed block; DmaPacket.packet_aggregation_id */
	uint64_t trigger;     /* nx_rec_inst.id of the triggering instruction, UINT64_MAX if none */
	uint64_t start, end;  /* ticks */
	uint32_t block;       /* index into nx_neff.blocks, NX_NONE32 for non-kernel traffic */
	uint32_t desc;        /* descriptor index within the block */
	uint32_t packet_idx;  /* position of the packet within its transfer */
	uint32_t bytes;
	uint16_t queue;       /* index into nx_neff.queues */
	uint16_t crc;
	uint8_t dma_engine;   /* 0..num_dma_engines-1 */
};

enum nx_sem_source { NX_SEMSRC_ENGINE0 = 0 /* + enum nx_engine */, NX_SEMSRC_AXI = 5 };
enum nx_sem_timing { NX_SEMT_NONE = 0, NX_SEMT_READ = 1, NX_SEMT_COMPLETE = 2 };

struct nx_rec_sem {
	uint64_t ts;
	int32_t value;       /* value after the update */
	uint16_t sem;        /* 0..255 */
	uint8_t source;      /* enum nx_sem_source */
	uint8_t op;          /* enum nx_sem_op (isa.h) */
	uint8_t timing;      /* enum nx_sem_timing */
	uint8_t double_set;  /* 1 when a set/clear found the semaphore already in that state */
};

enum nx_throttle_type { NX_THROTTLE_ACTIVITY_0 = 0, NX_THROTTLE_ACTIVITY_1 = 1,
			NX_THROTTLE_UNKNOWN = 2 };

struct nx_rec_throttle {
	uint64_t ts, duration;
	uint16_t k, n;       /* utilisation limit k/n */
	uint8_t type;        /* enum nx_throttle_type */
};

enum nx_error_type { NX_ERRT_ERRORS = 0, NX_ERRT_WARNINGS = 1, NX_ERRT_NOTIFICATION = 2 };

struct nx_rec_error {
	uint64_t ts;
	int32_t type_id;     /* numeric error code */
	uint8_t type;        /* enum nx_error_type */
	char description[64];
	char metadata[192];
};

struct nx_rec_exec {
	uint64_t ts;
	uint32_t index;      /* execution index */
	uint8_t stop;        /* 0 start, 1 stop */
};

struct nx_rec {
	int kind; /* enum nx_rec_kind */
	union {
		struct nx_rec_inst inst;
		struct nx_rec_dma dma;
		struct nx_rec_sem sem;
		struct nx_rec_throttle throttle;
		struct nx_rec_error error;
		struct nx_rec_exec exec;
	} u;
};

/* Writer. Records of each kind must be appended with non-decreasing start timestamps
 * per kind (ts for SEM/THROTTLE/ERROR/EXEC); ids need not be dense. The file goes through
 * the output-file writer (common/outpath.h): a unique temporary sibling renamed into place
 * on close, so a crashed capture never leaves a file that looks complete; an existing
 * file at path is replaced only if it is an NTFF (nx_ntff_out_kind), else open fails
 * with NX_EUSAGE. */
struct nx_ntff_writer;
/* An NTFF, recognised by its magic (the output rule's kind). */
extern const struct nx_out_kind nx_ntff_out_kind;
int nx_ntff_writer_open(struct nx_ntff_writer **w, const char *path,
			const struct nx_ntff_info *info, struct nx_err *err);
int nx_ntff_write(struct nx_ntff_writer *w, const struct nx_rec *rec, struct nx_err *err);
/* Flushes, writes the END chunk and publishes the file. Frees w in all cases. */
int nx_ntff_writer_close(struct nx_ntff_writer *w, struct nx_err *err);
/* Discards the temporary file. Frees w. */
void nx_ntff_writer_abort(struct nx_ntff_writer *w);

/* Reader. Streams a file in bounded memory; errors name the file and byte offset. */
struct nx_ntff_reader;
int nx_ntff_reader_open(struct nx_ntff_reader **r, const char *path, struct nx_err *err);
const struct nx_ntff_info *nx_ntff_reader_info(const struct nx_ntff_reader *r);
/* Returns 1 with *rec filled, 0 at the end of the file, or a negative error. Only
 * records whose kind is in kind_mask are decoded; other chunks are skipped unread.
 * Reaching the end verifies the END chunk (its counts for the kinds read). */
int nx_ntff_reader_next(struct nx_ntff_reader *r, unsigned kind_mask, struct nx_rec *rec,
			struct nx_err *err);
/* Starts over from the first chunk. */
int nx_ntff_reader_rewind(struct nx_ntff_reader *r, struct nx_err *err);
/* Total records per kind from the END chunk, once the end was reached (else -1). */
int64_t nx_ntff_reader_count(const struct nx_ntff_reader *r, int kind);
void nx_ntff_reader_close(struct nx_ntff_reader *r);

#endif
