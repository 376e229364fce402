/* SPDX-License-Identifier: MIT
 * input.h: a byte stream over a trace file that is either plain JSON or gzip. The
 * kind is decided by the magic bytes (1f 8b), not by the name; gzip is inflated on
 * the fly with zlib, one window at a time, and concatenated gzip members are read
 * as one stream (what `cat a.gz b.gz` and parallel compressors produce). The inflating
 * runs on a thread of its own, a few windows ahead of the reader: on a gzip trace it
 * is a third of the reader's work, and the parser and the parquet writer have the
 * other cores. */
#ifndef NX_TRACE_INPUT_H
#define NX_TRACE_INPUT_H

#include "common/compat.h"
#include "common/err.h"

#include <stdio.h>

struct nx_tin {
	FILE *fp;
	const char *path;        /* borrowed, for messages */
	bool gz;
	void *z;                 /* z_stream when gz */
	unsigned char *raw;      /* compressed input window */
	size_t raw_len, raw_pos;
	bool raw_eof;
	bool member_open;        /* a gzip member has started but not ended */
	uint64_t raw_read;       /* compressed bytes consumed from the file */
	struct nx_tin_ahead *ahead; /* the inflating thread of a gzip stream, when it runs */
	/* Only when reading from memory (tests): */
	const unsigned char *mem;
	size_t mem_len, mem_pos;
};

/* Opens path and sniffs its first bytes. */
int nx_tin_open(struct nx_tin *in, const char *path, struct nx_err *err);
/* Reads from a memory buffer (plain or gzip, sniffed the same way); buf is borrowed. */
int nx_tin_open_mem(struct nx_tin *in, const void *buf, size_t len, const char *name,
		    struct nx_err *err);
/* Fills up to cap bytes of decompressed text; returns the count, 0 at the end, or a
 * negative code (corrupt gzip, I/O error) with err naming the file. */
long nx_tin_read(struct nx_tin *in, unsigned char *buf, size_t cap, struct nx_err *err);
void nx_tin_close(struct nx_tin *in);

#endif
