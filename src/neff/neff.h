/* SPDX-License-Identifier: MIT
 * neff.h: the NEFF container (compiled kernel) in memory, and its reader and writer.
 *
 * Layout (public, implemented faithfully; details in docs/formats/neff.md): a 1024-byte
 * little-endian header, then a gzip-compressed tar archive holding
 *   info.json                 compiler facts ("tool_version")
 *   sg00/def.json             variables ("var") and DMA queues ("dma_queue")
 *   sg00/<Engine>.json        per-engine DMA blocks and descriptors ("dma")
 *   sg00/<Engine>.bin         per-engine instruction stream in our encoding (isa.h)
 *   kernel_debug_info.json    NKI source locations, call stacks, loop variables
 *   kernel_source/<name>      the kernel's source file (ours, optional: neff_source.c)
 * Only subgraph sg00 (one physical core) is modelled. */
#ifndef NX_NEFF_NEFF_H
#define NX_NEFF_NEFF_H

#include "common/compat.h"
#include "common/err.h"
#include "common/outpath.h"
#include "neff/isa.h"

#define NX_NEFF_HEADER_SIZE 1024u
/* NEFF major versions: 2 is written unless the NEFF needs 3 (extended instruction
 * records, DMA casts); the reader takes 1 to NX_NEFF_MAJOR_MAX. */
#define NX_NEFF_MAJOR_DEFAULT 2u
#define NX_NEFF_MAJOR_MAX 3u

/* The 1024-byte header, field by field (offsets in neff.md). */
struct nx_neff_header {
	uint64_t pkg_version;      /* 1: tar.gz + SHA-256 hash; 2: tar.gz + MD5 hash */
	uint64_t header_size;      /* 1024 */
	uint64_t data_size;        /* bytes after the header */
	uint64_t major_version;    /* NEFF format version, major */
	uint64_t minor_version;
	char build_version[129];   /* 128 bytes on disk, NUL-terminated here */
	uint32_t num_tpb;          /* NeuronCores (TPBs) the NEFF was compiled for */
	uint8_t hash[32];          /* SHA-256 (or MD5 in the first 16 bytes) of the data */
	uint8_t uuid[16];
	char name[257];            /* 256 bytes on disk */
	uint32_t requested_tpb_count;
	uint8_t tpb_per_node[64];
	uint64_t feature_bits;
	uint32_t lnc_size;         /* physical cores per logical NeuronCore */
};

enum nx_tensor_kind { NX_TENSOR_IN = 0, NX_TENSOR_OUT = 1, NX_TENSOR_WEIGHT = 2,
		      NX_TENSOR_OTHER = 3 };
/* "IN", "OUT", "WEIGHT", "OTHER" (TensorInfo.type). */
const char *nx_tensor_kind_name(int kind);

/* One entry of def.json "var". */
struct nx_tensor {
	char *name;        /* variable name, e.g. "lhsT" */
	char *def_type;    /* def.json type: input, output, file, state-buffer, tmp-buf, virtual, ... */
	int kind;          /* enum nx_tensor_kind, derived from def_type */
	int64_t var_id;
	uint64_t size;     /* bytes */
	int dtype;         /* enum nx_dtype, -1 if not given */
	char *format;      /* layout letters, e.g. "NHWC"; may be NULL */
	unsigned rank;
	uint64_t shape[8];
	int64_t node;      /* NEFF node number, -1 if not given */
};

/* DmaQueueType values (schema enum). */
enum nx_queue_type { NX_QT_INSTRUCTION = 0, NX_QT_INPUT, NX_QT_OUTPUT, NX_QT_DATA,
		     NX_QT_SOFTWARE_DYNAMIC, NX_QT_HARDWARE_DYNAMIC, NX_QT_UNKNOWN,
		     NX_QT_COUNT };
const char *nx_queue_type_name(int qt);

/* One entry of def.json "dma_queue". */
struct nx_dma_queue {
	char *name;        /* e.g. "qSyncIO0" */
	char *def_type;    /* def.json type: in, out, data, embedding_update, dynamic, instruction */
	int queue_type;    /* enum nx_queue_type derived from def_type and owner */
	int owner;         /* enum nx_engine that triggers it */
	int semaphore;     /* semaphore incremented per completed block, -1 if none */
	int engine_idx;    /* DMA engine the queue is homed on (0..15) */
	int queue_idx;     /* queue index within its engine (0..15) */
	int axi_port;
	int dram_channel;
};

/* Where one side of a DMA descriptor lives. */
enum nx_loc { NX_LOC_HBM = 0, NX_LOC_SBUF = 1, NX_LOC_PSUM = 2 };

/* One descriptor: copies a [rows x row_elems] region. On the HBM side `var` names the
 * tensor and offset/steps are in elements of dtype (row-major, up to 4 dims, outermost
 * first). On the SBUF/PSUM side dimension 0 counts partitions (starting at
 * start_partition) and `offset` is the byte offset inside each partition. */
struct nx_dma_desc {
	int from_loc, to_loc;          /* enum nx_loc */
	int from_var, to_var;          /* index into nx_neff.tensors for HBM sides, else -1 */
	uint64_t from_off, to_off;
	unsigned from_ndim, to_ndim;   /* 1..4 */
	uint64_t from_sizes[4], to_sizes[4];
	int64_t from_steps[4], to_steps[4];
	unsigned from_start_partition, to_start_partition;
	int dtype;                     /* enum nx_dtype (of the source with a cast) */
	bool transpose;                /* DMA transpose (2-byte elements only) */
	bool cast;                     /* the destination holds to_dtype elements (major 3) */
	int to_dtype;                  /* enum nx_dtype written when cast */
	uint64_t bytes;                /* total bytes moved (computed on read) */
};

/* One DMA block (a "transfer"): started by one DMA_TRIGGER instruction. */
struct nx_dma_block {
	uint32_t id;        /* block id as written in <Engine>.json (DmaPacketAggregated.block_id) */
	int engine;         /* enum nx_engine whose <Engine>.json holds it */
	int queue;          /* index into nx_neff.queues */
	int semaphore;      /* semaphore the block increments on completion, -1 = queue default */
	size_t ndesc;
	struct nx_dma_desc *desc;
	uint64_t bytes;     /* sum of descriptor bytes */
};

/* kernel_debug_info.json, decoded (format in neff.md). All ids are the file's own. */
struct nx_dbg_inst {
	char *name;          /* KernelInstructions.kernel_instruction_name, e.g. "inst.72:0" */
	char *file;          /* NKI source file */
	int64_t line;
	int64_t stack_frame_id;      /* -1 when absent */
	int64_t iteration_vars_id;   /* -1 when absent */
	char *bir_location;  /* "file:line" recorded by the compiler (bir_debug_info_source_location) */
};
struct nx_dbg_frame {
	int64_t id, parent;  /* parent -1 = outermost */
	char *function, *file;
	int64_t line;
};
struct nx_dbg_itervar {
	int64_t id, parent;
	char *name, *file;
	int64_t value, line;
};
/* The name of a BIR instruction (Instruction.bir_instruction_name), by bir_id. */
struct nx_dbg_bir {
	int64_t bir_id;
	char *name;
};
/* A choice the front end made for the kernel (listing `decision` line): allocation,
 * spill, engine or queue pick ... shown as a "Compiler Decision" Warning row. */
struct nx_dbg_decision {
	char *kind;          /* e.g. "alloc" */
	char *file;          /* source location, NULL when absent */
	int64_t line;        /* -1 when absent */
	size_t nargs;
	char **keys, **values; /* nargs each, in listing order */
};
struct nx_strmap;
struct nx_debug_info {
	size_t ninsts, nframes, nitervars, nbirs, ndecisions;
	struct nx_dbg_inst *insts;
	struct nx_dbg_frame *frames;
	struct nx_dbg_itervar *itervars;
	struct nx_dbg_bir *birs;
	struct nx_dbg_decision *decisions;
	/* NULL, or one copy of each distinct path (a struct nx_strmap of char *): the reader's
	 * file and bir_location of insts, frames and itervars point into it, a real kernel's
	 * one or few paths instead of a copy per instruction, and go with it. A struct filled
	 * otherwise leaves it NULL: each of those strings is then its own allocation. */
	struct nx_strmap *paths;
};
/* Frees one decision's strings (not the struct). */
void nx_dbg_decision_release(struct nx_dbg_decision *d);
/* Frees the debug info and leaves it empty (nx_neff_release does it too; a reader done
 * with it before the rest of the NEFF, as the ingest, calls it earlier). */
void nx_debug_info_release(struct nx_debug_info *dbg);

/* The kernel's source files a NEFF may carry as its members kernel_source/<name> (ours: the
 * Neuron compiler writes none; `kernel asm --attach-source` does): the kernel's own file
 * first, then the files of its helpers, so that its profile shows the code wherever the
 * NEFF goes. The reader never fails on them: members it cannot take (a bad name, two of
 * one name, more than NX_NEFF_SOURCE_FILES_MAX, over NX_NEFF_SOURCE_MAX in all) are all
 * left out and `problem` says why. */
#define NX_NEFF_SOURCE_DIR "kernel_source/"
#define NX_NEFF_SOURCE_MAX ((size_t)1 << 20) /* their bytes in all */
#define NX_NEFF_SOURCE_MAX_TEXT "1 MiB"
#define NX_NEFF_SOURCE_FILES_MAX 64
/* The longest name: a member name of the writer's ustar headers is 99 bytes at most. */
#define NX_NEFF_SOURCE_NAME_MAX (99 - (sizeof(NX_NEFF_SOURCE_DIR) - 1))
struct nx_neff_source_file {
	char *name;     /* the file's name, without directories */
	uint8_t *text;
	size_t len;
};
struct nx_neff_source {
	size_t n;       /* files carried (0: none), the kernel's own first */
	struct nx_neff_source_file *files;
	char *problem;  /* why the kernel_source/ members were left out; NULL: none was */
};
/* Checks one kernel source's name and size as the writer and the reader require them
 * (NX_EUSAGE naming the fault). */
int nx_neff_source_check(const char *name, uint64_t len, struct nx_err *err);
/* Checks every file of src and the set: distinct names, their number, their bytes in all
 * (NX_EUSAGE naming the fault). */
int nx_neff_source_check_all(const struct nx_neff_source *src, struct nx_err *err);
/* Appends a file to src, which takes name and text (malloc'd). */
void nx_neff_source_add(struct nx_neff_source *src, char *name, uint8_t *text, size_t len);

struct nx_neff {
	struct nx_neff_header hdr;
	char *tool_version;               /* info.json tool_version, may be NULL */
	size_t ntensors, nqueues, nblocks;
	struct nx_tensor *tensors;
	struct nx_dma_queue *queues;
	struct nx_dma_block *blocks;      /* all engines' blocks, in engine order then file order */
	size_t ninst[NX_ENGINE_COUNT];
	struct nx_inst *inst[NX_ENGINE_COUNT];
	struct nx_debug_info dbg;
	struct nx_neff_source source;
};

/* Parses a NEFF file fully. Errors name the file and the place (header field, tar
 * member, JSON path, instruction index). On failure *neff is left released. */
int nx_neff_read(const char *path, struct nx_neff *neff, struct nx_err *err);
/* Same from memory (used by fuzzers and tests). */
int nx_neff_read_mem(const char *name, const uint8_t *data, size_t len, struct nx_neff *neff,
		     struct nx_err *err);
/* A NEFF, recognised by its header (the output rule's kind). */
extern const struct nx_out_kind nx_neff_out_kind;
/* Writes neff to path through the output-file writer (common/outpath.h: whole or not at
 * all; an existing file is replaced only if it is a NEFF, else NX_EUSAGE). header_size, data_size and hash are computed; the
 * other header fields are taken from neff->hdr (zeroed uuid is kept as is), except
 * that pkg_version 0 is written as 1 (SHA-256) and major_version 0 as 2 (3 when the NEFF
 * uses what version 3 added: extended instruction records, the newer opcodes, dtypes,
 * activation functions or ALU operations, DMA casts; whatever the header says), so a zeroed
 * header yields a readable file. Fails with NX_EUSAGE on structures that could not be
 * read back (dangling indices, bad instructions, unsupported versions). */
int nx_neff_write(const char *path, const struct nx_neff *neff, struct nx_err *err);
/* Same into a malloc'd buffer (*out, *out_len), for tests, fuzz seeds and servers. */
int nx_neff_write_mem(const struct nx_neff *neff, uint8_t **out, size_t *out_len,
		      struct nx_err *err);
void nx_neff_release(struct nx_neff *neff);

/* Header codec (neff_header.c), also usable without reading the payload.
 * nx_neff_header_encode writes all 1024 bytes; padding and unused hash bytes are zero.
 * nx_neff_header_decode checks a whole file image of file_len bytes: length,
 * header_size, pkg_version, major_version and data_size (not the hash). Errors start
 * with `name` and name the field and its byte offset. */
void nx_neff_header_encode(const struct nx_neff_header *h, uint8_t out[NX_NEFF_HEADER_SIZE]);
int nx_neff_header_decode(const char *name, const uint8_t *file, size_t file_len,
			  struct nx_neff_header *h, struct nx_err *err);
/* Hash of the payload as pkg_version selects (1 SHA-256, 2 MD5 in the first 16 bytes,
 * the rest zeroed). */
void nx_neff_payload_hash(uint64_t pkg_version, const uint8_t *data, size_t len,
			  uint8_t hash[32]);
/* Compares h->hash with the payload's hash; NX_ECORRUPT with both in hex on mismatch. */
int nx_neff_header_verify(const char *name, const struct nx_neff_header *h, const uint8_t *data,
			  size_t len, struct nx_err *err);

/* Lowercase hex of the uuid (32 chars) and hash (64 chars, 32 for MD5) into out. */
void nx_neff_uuid_hex(const struct nx_neff_header *h, char out[33]);
void nx_neff_hash_hex(const struct nx_neff_header *h, char out[65]);
/* Comma list of enabled feature names for NeffHeader.enabled_features. */
void nx_neff_features(uint64_t bits, struct nx_strbuf *out);

/* Lookups used by the simulator and ingester. */
int nx_neff_find_tensor(const struct nx_neff *neff, const char *name);
int nx_neff_find_queue(const struct nx_neff *neff, const char *name);

#endif
