/* SPDX-License-Identifier: MIT
 * perfetto.h: `view --output-format perfetto`: writes a whole published profile as
 * Chrome Trace Event JSON, which the Perfetto UI (ui.perfetto.dev) and chrome://tracing
 * open directly. Device engines and DMA queues become threads of one process per
 * physical core, framework events keep their processes and threads, flows keep their
 * arrows. Tables are read through DuckDB chunk by chunk; a file is written through the
 * output-file writer (common/outpath.h), so a failed export leaves no half file. */
#ifndef NX_EXPORT_PERFETTO_H
#define NX_EXPORT_PERFETTO_H

#include "common/compat.h"
#include "common/err.h"
#include "common/outpath.h"

#include <stdio.h>

struct nx_export_stats {
	uint64_t events;       /* trace events written in total */
	uint64_t framework;    /* from SystemProfileEvents rows */
	uint64_t instructions; /* from Instruction rows */
	uint64_t dma;          /* from DmaPacket rows */
	uint64_t names;        /* process/thread name events for device tracks */
};

/* A Perfetto trace this export wrote, recognised by its first bytes (the output rule's
 * kind). */
extern const struct nx_out_kind nx_perfetto_out_kind;

/* Writes the trace to the file out_path (replaced only if it is a Perfetto trace). */
int nx_export_perfetto(const char *profile_dir, const char *out_path, struct nx_err *err);
/* Same, and fills *stats (may be NULL). */
int nx_export_perfetto_ex(const char *profile_dir, const char *out_path,
			  struct nx_export_stats *stats, struct nx_err *err);

/* Same, to an open stream (stdout); a failure may leave part of the document written. */
int nx_export_perfetto_stream(const char *profile_dir, FILE *out, struct nx_export_stats *stats,
			      struct nx_err *err);

/* Pid of the device process for physical core pcore in the export. */
#define NX_EXPORT_DEVICE_PID(pcore) (1000000000 + (int64_t)(pcore))

#endif
