/* SPDX-License-Identifier: MIT
 * recommend.h: the `recommend` analysis of one ingested profile (or two, compared):
 * performance bounds, gaps, investigations localised to source lines, rendered as
 * Markdown or JSON. Every number is computed by DuckDB over the profile's parquet
 * tables; nothing is loaded whole into C memory. docs/recommend.md has the method. */
#ifndef NX_ANALYSIS_RECOMMEND_H
#define NX_ANALYSIS_RECOMMEND_H

#include "common/compat.h"
#include "common/err.h"
#include "common/strbuf.h"

enum nx_recommend_format { NX_REC_MARKDOWN, NX_REC_JSON };

/* Where the analysed time window comes from. */
enum nx_recommend_window {
	NX_REC_WIN_WHOLE,   /* whole kernel: bound inputs read from Summary (default) */
	NX_REC_WIN_RANGE,   /* [t0_ns, t1_ns) given by the caller, recomputed from raw tables */
	NX_REC_WIN_KERNEL,  /* extent of the kernel DMA packets (AWS investigation convention) */
	NX_REC_WIN_DPA,     /* extent of DmaPacketAggregated (AWS bounds convention) */
};

struct nx_recommend_opts {
	const char *profile_dir;  /* <data-path>/profiles/global/<name>@latest or any parquet dir */
	const char *compare_dir;  /* NULL, or the "after" profile: profile_dir is then "before" */
	enum nx_recommend_window window;
	int64_t t0_ns, t1_ns;     /* NX_REC_WIN_RANGE only; profile timestamps, half-open */
	enum nx_recommend_format format;
	unsigned threads;         /* DuckDB threads, 0 = DuckDB's choice */
	const char *memory_limit; /* DuckDB memory limit (e.g. "2GB"), NULL = default */
	const char *source_root;  /* kernel sources: Markdown findings quote their lines */
	bool details;             /* Markdown: add the method's choices and Step 1 tables */
	bool bounds_only;         /* JSON only: the bounds, gaps, engines and bottleneck, without
				   * the investigations and the data-quality counts that read
				   * whole columns (what the web UI's lists show) */
};

void nx_recommend_opts_init(struct nx_recommend_opts *o);

/* The i-th investigation in report order: its id ("dma_efficiency"), and its title in
 * *title (may be NULL); NULL past the last. */
const char *nx_recommend_investigation(size_t i, const char **title);

/* Parses "T0:T1" (ns), "kernel" or "dpa" into o->window (and t0/t1). */
int nx_recommend_parse_window(struct nx_recommend_opts *o, const char *text, struct nx_err *err);

/* Runs the analysis and appends the report (Markdown or JSON, per o->format) to out.
 * With compare_dir set the report is the before/after comparison. */
int nx_recommend_run(const struct nx_recommend_opts *o, struct nx_strbuf *out,
		     struct nx_err *err);

/* A member of a run: its name and its profile directory. */
struct nx_recommend_member {
	const char *name;
	const char *dir;
};

/* Analyses the n members of a run in order (each as nx_recommend_run would, with o's
 * window, format and details; o's profile and compare directories are not used) and
 * appends the run's report: the run-wide part (every member's total, bottleneck and
 * top finding; each investigation over the run), then every member's report. One
 * member's analysis is in memory at a time. docs/recommend.md, "Runs". */
int nx_recommend_members(const struct nx_recommend_opts *o, const char *run,
			 const struct nx_recommend_member *mem, size_t n, struct nx_strbuf *out,
			 struct nx_err *err);

#endif
