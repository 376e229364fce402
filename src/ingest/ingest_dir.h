/* SPDX-License-Identifier: MIT
 * ingest_dir.h: directory mode of `view` (-d DIR): ingests every framework trace (Chrome
 * Trace Event JSON from PyTorch, JAX, vLLM, ...) found under a directory, or a single
 * trace file, into one profile, together with the device profiles of the NEFF/NTFF
 * pairs found next to them. See docs/framework-traces.md for the mapping. */
#ifndef NX_INGEST_INGEST_DIR_H
#define NX_INGEST_INGEST_DIR_H

#include "common/compat.h"
#include "common/err.h"
#include "common/progress.h"
#include "ingest/ingest.h" /* struct nx_publish_hook */

struct nx_trace_opts {
	const char *input;        /* a directory, or one trace file */
	const char *data_path;    /* --data-path */
	const char *display_name; /* --display-name */
	const char *output_dir;   /* when set: publish exactly this directory instead */
	/* per-table events, notes and warnings (the library never prints), or NULL */
	const struct nx_progress *progress;
	const struct nx_publish_hook *before_publish; /* or NULL (ingest.h) */
};

/* Writes SystemProfileEvents (trace_event_source 'framework'), SystemProfileMetadata,
 * DeviceProfileList and the device tables when NEFF/NTFF pairs are present, Metadata,
 * Warning and SchemaFields into a temporary directory and publishes it as
 * <data>/profiles/global/<name>@latest in one rename. On success *published (if
 * non-NULL) receives the directory (caller frees). On a fatal error (no input found,
 * a file that is not a trace, a JSON grammar error, a device ingest failure) nothing
 * is published and err names the file and the byte offset where it applies. */
int nx_trace_ingest_dir(const struct nx_trace_opts *o, char **published, struct nx_err *err);

#endif
