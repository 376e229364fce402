/* SPDX-License-Identifier: MIT
 * events.h: the SystemProfileEvents row source over a list of Chrome trace files.
 * It reads the files one after another with the streaming reader and shapes events
 * into rows:
 *   X, i/I, C, M, s/t/f, n and every other phase  -> one row each,
 *   B + E (innermost open B of the same pid/tid)   -> one row,
 *   b + e (same pid, cat, id and name)             -> one row,
 *   the file's other top-level members             -> one "trace_metadata" row (ph M).
 * Ids are unique int64 over the profile; flows get profile-wide numbers per (file,
 * cat, id) for s/t/f events and per (file, bind_id) for slices (X, B) that carry
 * flow_in/flow_out (flow version 2). An event whose ts cannot be read is dropped, so
 * no row and no time bound is ever invented at time 0. Anomalies and the tolerated
 * grammar slips are counted per file and handed to a warning callback (the ingest makes
 * them Warning rows). Memory is bounded by the reader's window plus what is open at once
 * (B and b events without their end yet, and one entry per flow id of the file). */
#ifndef NX_TRACE_EVENTS_H
#define NX_TRACE_EVENTS_H

#include "common/compat.h"
#include "common/err.h"
#include "db/duck.h"
#include "trace/chrome.h"
#include "trace/tstate.h"

/* Receives one warning: its category ("Invalid Data", "Missing Data") and message. */
typedef void (*nx_tev_warn_fn)(void *arg, const char *category, const char *msg);

struct nx_tev_file {
	const char *path;
	const char *instance; /* instance_id of its rows */
	int64_t shift_ns;      /* added to the times of every row of the file (clock alignment) */
	uint64_t events, rows; /* counted while reading */
	/* Learned while reading: the file's timed bounds in its own clock (first > last: no
	 * timed event), and its top-level baseTimeNanoseconds (Kineto: its ts plus that is
	 * the Unix-epoch time), when it has one. */
	int64_t first_ns, last_ns;
	bool has_base;
	int64_t base_ns;
};

struct nx_tev_src {
	struct nx_tev_file *files;
	size_t nfiles, cur;
	nx_tev_warn_fn warn;
	void *warn_arg;
	struct nx_colmap map;
	bool open;
	struct nx_chrome rd;
	struct nx_cev ev;
	struct nx_strmap threads, async, flows;
	/* Flow numbers of open B events that carry a version-2 flow, by the B's offset. */
	struct nx_bflow { uint64_t off; int64_t num; } *bflow;
	size_t nbflow, bflow_cap;
	int64_t next_id, next_flow;
	/* Rows produced at the end of a file (open begins, metadata), emitted in order. */
	struct nx_prow { char *name, *extra, *stream; int64_t start, end, pid, tid, flow; } *pend;
	size_t npend, pend_pos, pend_cap;
	/* Per-file anomaly counts and the offset of the first of each. */
	struct nx_tev_counts {
		struct nx_tev_count { uint64_t n, first; } e_no_b, b_no_e, mismatch, neg, no_ts,
			no_dur, ae_no_b, ab_no_e, unknown;
		char unknown_ph[64];
	} k;
	int64_t file_first, file_last; /* in the file's own clock, before shift_ns */
	/* Bounds over the profile's timed rows (M rows excluded, shifts applied); first >
	 * last: none. */
	int64_t first_ns, last_ns;
	/* The largest device memory the files' deviceProperties[0].totalGlobalMem states (an
	 * integer, a number or a string holding an integer); 0 when none does. */
	int64_t hbm_capacity;
	bool has_capacity;
	struct nx_strbuf sb, sb2;
	/* sb holds the stream key of these integer ids in file key_file (key_ok) */
	bool key_ok;
	size_t key_file;
	int64_t key_pid, key_tid;
};

/* Prepares the source over files (borrowed; they must outlive the source); warnings go to
 * warn(warn_arg, ...), which may be NULL. */
int nx_tev_init(struct nx_tev_src *s, struct nx_tev_file *files, size_t nfiles,
		nx_tev_warn_fn warn, void *warn_arg, struct nx_row_source *src, struct nx_err *err);
void nx_tev_release(struct nx_tev_src *s);

#endif
