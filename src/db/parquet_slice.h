/* SPDX-License-Identifier: MIT
 * parquet_slice.h: a large parquet file read as slices of whole row groups, each written
 * as a small parquet file of its own.
 *
 * Why: DuckDB loads a file's whole footer to read any of it, about 1.7 KB per column
 * chunk in memory: a query over the 70M-row Instruction.parquet of a 100M-record profile
 * holds some 200 MB for that alone, and the figure grows with the table. A reader that
 * must run in bounded memory whatever the table's size (the json export) reads the file
 * slice by slice instead, each slice's footer holding only its row groups.
 *
 * How: the footer is read through a window of a few MB (never whole); for each row group
 * the slicer keeps where its footer bytes and its data lie (32 bytes per row group). A
 * slice file is "PAR1", the bytes of its row groups' column chunks (copied by the
 * kernel), and a footer with the source's schema and metadata and those row groups, every
 * offset moved; page indexes and bloom filters are left out (a full scan needs neither).
 * No DuckDB here. */
#ifndef NX_DB_PARQUET_SLICE_H
#define NX_DB_PARQUET_SLICE_H

#include "common/compat.h"
#include "common/err.h"

struct nx_pq_slicer;

/* Opens path and reads where its row groups lie. Errors name the file and the byte. */
int nx_pq_slicer_open(struct nx_pq_slicer **s, const char *path, struct nx_err *err);
void nx_pq_slicer_close(struct nx_pq_slicer *s);

uint32_t nx_pq_slicer_row_groups(const struct nx_pq_slicer *s);

/* Writes row groups [first, first + n) of the file as the parquet file out, which must
 * not exist (it is created with O_EXCL; removed again on failure). */
int nx_pq_slice_write(struct nx_pq_slicer *s, uint32_t first, uint32_t n, const char *out,
		      struct nx_err *err);

/* Called with each piece of a file read slice by slice (nx_pq_each_slice): its path and
 * its index (0, 1, ...). A non-zero return stops the walk and is returned. */
typedef int (*nx_pq_slice_fn)(void *arg, const char *path, uint32_t index,
			      struct nx_err *err);

/* Reads path as slices of at most per row groups: when it has more, writes each slice
 * in turn to dir/<stem>-<index>.parquet (O_EXCL) and calls fn with it, then removes it
 * unless keep (the caller then removes the slices); a file of at most per row groups is
 * passed to fn whole, as path, and nothing is written. On failure no slice of this call
 * is left behind, kept or not. *pieces (may be NULL) gets the count passed to fn. */
int nx_pq_each_slice(const char *path, uint32_t per, const char *dir, const char *stem,
		     bool keep, nx_pq_slice_fn fn, void *arg, uint32_t *pieces,
		     struct nx_err *err);

#endif
