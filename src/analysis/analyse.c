/* SPDX-License-Identifier: MIT
 * analyse.c: one profile through every step: views, data quality, window, bounds, the
 * investigations, and their ordering by relevance. Also the list of decisions taken where the
 * reference leaves a choice (docs/recommend.md, "Choices where the reference is ambiguous"); every
 * report prints it. */
#include "common/compat.h"
#include "analysis/rec.h"
#include "common/env_num.h"
#include "common/fsutil.h"
#include "common/xalloc.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

const char *const nx__rec_choices[][2] = {
	{ "memory_bound", "interval merge of all DmaPacket rows (no queue or size filter), as AWS" },
	{ "dma_transfer_bytes", "kernel packets only (queue_type <> 'instruction' and "
	  "transfer_bytes > 4), in the bounds and in DMA-efficiency Step 1 alike (AWS sums "
	  "unfiltered packets there), so the efficiency gap equals the DMA-inefficiency gap" },
	{ "flops", "bf16-equivalent adjusted flops everywhere (Summary.adjusted_hardware_flops "
	  "for the whole kernel, Instruction.adjusted_flops in a window), matching the bf16 TE peak" },
	{ "whole-kernel window", "bound inputs from Summary; the investigations then cover the whole "
	  "profile span so that their totals agree with the bounds" },
	{ "windowed runs", "every input recomputed from the raw tables over [T0, T1): durations "
	  "clipped and merged, bytes and flops counted by start_ts; DmaPacketAggregated rows are "
	  "windowed by start_ts too (also in the redundant-DMA decomposition)" },
	{ "source lines", "basename file:line of bir_debug_info_source_location in every "
	  "investigation (also TE inefficiency, which AWS groups by the full path)" },
	{ "ordering", "findings by the estimated reduction of the pipeline bound (or, for "
	  "serialisation, the exposed wait time), then by gap size; nothing-found and "
	  "not-computable investigations follow" },
	{ "thresholds", "DMA efficiency: gap >= 5% of memory_bound (AWS); excess traffic: > 1% of "
	  "the moved bytes; serialisation: exposed waits >= 1% of the total (ours)" },
};
const size_t nx__rec_nchoices = sizeof(nx__rec_choices) / sizeof(nx__rec_choices[0]);

static int rank_cmp(const struct nx_rec_result *r, int a, int b)
{
	const struct nx_rec_inv *x = &r->inv[a], *y = &r->inv[b];

	if (x->status != y->status)
		return x->status - y->status;
	if (x->relevance_ns != y->relevance_ns)
		return x->relevance_ns > y->relevance_ns ? -1 : 1;
	double gx = isnan(x->gap_ns) ? -1 : x->gap_ns, gy = isnan(y->gap_ns) ? -1 : y->gap_ns;
	if (gx != gy)
		return gx > gy ? -1 : 1;
	return a - b;
}

static void rank(struct nx_rec_result *r)
{
	for (int i = 0; i < NX_REC_NINV; i++)
		r->order[i] = i;
	/* insertion sort: six items */
	for (int i = 1; i < NX_REC_NINV; i++)
		for (int j = i; j > 0 && rank_cmp(r, r->order[j - 1], r->order[j]) > 0; j--) {
			int t = r->order[j];
			r->order[j] = r->order[j - 1];
			r->order[j - 1] = t;
		}
}

static char *profile_name(const char *dir)
{
	size_t len = strlen(dir);
	while (len > 1 && dir[len - 1] == '/')
		len--;
	size_t start = len;
	while (start > 0 && dir[start - 1] != '/')
		start--;
	size_t end = len;
	if (end - start > 7 && !strncmp(dir + end - 7, "@latest", 7))
		end -= 7;
	return nx_xstrndup(dir + start, end - start);
}

/* *limit gets DuckDB's memory limit for the analysis: the caller's, NX_REC_MEMORY_LIMIT
 * (a size, or a usage error naming it), or 128 MB. Beyond it DuckDB spills into the
 * analysis's own directory (docs/recommend.md, "Memory and time"). */
static int memory_limit(const struct nx_recommend_opts *o, const char **limit,
			struct nx_err *err)
{
	*limit = "128MB";
	if (o->memory_limit) {
		*limit = o->memory_limit;
		return 0;
	}
	return nx_env_size("NX_REC_MEMORY_LIMIT", limit, err);
}

/* The steps, on a database sandboxed to dir that spills into spill. */
static int steps(struct nx_duck *d, const struct nx_recommend_opts *o, const char *dir,
		 struct nx_rec_result *r, struct nx_err *err)
{
	int rc = nx_duck_sandbox(d, &dir, 1, r->scan->spill, err);

	if (!rc)
		rc = nx__rec_views(d, dir, err);
	if (!rc)
		rc = nx__rec_window_plan(d, r, o, err);
	/* the bounds alone (the web UI's profile list) need only the tables' extents, and
	 * the passes only should Summary lack a field (bounds.c runs them then) */
	if (!rc && r->bounds_only) {
		struct nx_err ignored = { 0 };
		/* a table without those columns: the passes read it (as NULLs) */
		if (nx__rec_scan_extents(d, r->scan, &ignored))
			rc = nx__rec_scan_passes(d, r->scan, err);
	} else if (!rc) {
		rc = nx__rec_scan_passes(d, r->scan, err);
	}
	if (!rc)
		rc = nx__rec_quality(d, r, err);
	if (!rc)
		rc = nx__rec_window(d, r, o, err);
	if (!rc)
		rc = nx__rec_bounds(d, r, err);
	if (!rc && !r->bounds_only)
		rc = nx__rec_investigate(d, r, err);
	return rc;
}

int nx__rec_analyse(const struct nx_recommend_opts *o, const char *dir, struct nx_rec_result *r,
		    struct nx_err *err)
{
	struct nx_duck *d = NULL;
	struct nx_rec_scan sc;
	const char *limit = NULL;
	int rc;

	memset(r, 0, sizeof(*r));
	memset(&sc, 0, sizeof(sc));
	r->dir = nx_xstrdup(dir);
	r->name = profile_name(dir);
	r->bottleneck = -1;
	r->bounds_only = o->bounds_only;
	if (!nx_is_dir(dir))
		return nx_errf(err, NX_ENOTFOUND, "no profile directory '%s'", dir);
	r->scan = &sc;
	sc.dir = dir;
	/* the private directory DuckDB and the waits' sort spill into, removed at the end;
	 * queries still read only dir (the same sandbox as the server's) */
	rc = memory_limit(o, &limit, err);
	if (!rc)
		rc = nx_make_temp_dir("recommend-spill", &sc.spill, err);
	if (!rc)
		rc = nx_duck_open(&d, o->threads, limit, err);
	if (!rc)
		rc = steps(d, o, dir, r, err);
	if (!rc)
		rank(r);
	nx__rec_scan_release(&sc);
	nx_duck_close(d);
	nx_temp_dir_release(sc.spill);
	r->scan = NULL;
	if (rc)
		return nx_err_wrap(err, "analysing '%s'", dir);
	return 0;
}
