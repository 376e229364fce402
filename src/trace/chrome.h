/* SPDX-License-Identifier: MIT
 * chrome.h: reads Chrome Trace Event files (the format of PyTorch/Kineto, JAX and
 * Chrome itself) one event at a time over the streaming tokenizer. Both forms are
 * accepted: an object whose "traceEvents" member is the event array, and a bare
 * array. The other top-level members (deviceProperties, distributedInfo,
 * schemaVersion, ...) are kept as one JSON object text.
 *
 * Malformed input: a grammar error is fatal (the caller gets the file and byte
 * offset). Input that simply stops inside the event array is accepted as the trace
 * format allows (a writer that is killed leaves no closing bracket): the complete
 * events are delivered and `truncated` tells the caller why the rest is missing. */
#ifndef NX_TRACE_CHROME_H
#define NX_TRACE_CHROME_H

#include "common/compat.h"
#include "common/err.h"
#include "common/strbuf.h"
#include "trace/input.h"
#include "trace/jtok.h"

/* How an id-like member (pid, tid) was written. */
enum nx_idkind { NX_ID_NONE, NX_ID_INT, NX_ID_TEXT };

/* One event as read. Text members are NUL-terminated strbufs reused between events. */
struct nx_cev {
	struct nx_strbuf name, ph, cat, id, extra;
	bool has_ts, has_dur, ts_exact;
	int64_t ts_ns, dur_ns;
	struct nx_strbuf ts_text, dur_text; /* the lexemes, kept for inexact values */
	enum nx_idkind pid_kind, tid_kind;
	int64_t pid, tid;
	struct nx_strbuf pid_text, tid_text; /* original text of non-integer ids */
	bool has_id;
	/* Flow version 2 on a slice: bind_id (string text or number lexeme), flow_in and
	 * flow_out (true when written as true). The members also stay in extra. */
	struct nx_strbuf bind;
	bool has_bind, flow_in, flow_out;
	uint64_t offset; /* byte offset of the event's '{' in the decompressed text */
};

struct nx_chrome {
	struct nx_tin in;
	struct nx_jtok tok;
	int mode;                  /* see chrome.c */
	bool bare_array;
	struct nx_strbuf meta;     /* other top-level members: "{...}" or empty */
	size_t meta_ok_len;        /* meta's length after the last complete member */
	bool truncated;            /* the input stopped early; trunc_msg says where */
	char trunc_msg[600];
	uint64_t events;           /* objects read from the event array ({} excluded) */
	uint64_t empty;            /* empty objects {} in the event array, skipped */
	uint64_t skipped;          /* non-object elements of the event array */
	uint64_t first_skip_off;
};

void nx_cev_init(struct nx_cev *ev);
void nx_cev_release(struct nx_cev *ev);

int nx_chrome_open(struct nx_chrome *c, const char *path, struct nx_err *err);
/* Same, over a memory buffer (tests); buf is borrowed. */
int nx_chrome_open_mem(struct nx_chrome *c, const void *buf, size_t len, const char *name,
		       struct nx_err *err);
/* Reads the next event: 1 with ev filled, 0 after the last event (meta is complete
 * then), negative on a fatal error (not a trace, grammar error, I/O). An empty object
 * {} is no event (JAX ends its array with one) and is skipped. The tokenizer's
 * tolerated slips are in c->tok.slips. */
int nx_chrome_next(struct nx_chrome *c, struct nx_cev *ev, struct nx_err *err);
void nx_chrome_close(struct nx_chrome *c);

#endif
