/* SPDX-License-Identifier: MIT
 * ir_rollup.h: the IR hierarchy tables BirInstruction, PenguinInstruction,
 * HloInstruction and FrameworkInstruction (docs/derived-tables.md, "IR hierarchy"),
 * rolled up in C from the Instruction rows that carry the whole id chain.
 *
 * Per level, DuckDB streams those rows sorted by (node, start_ts, end_ts); each node's
 * totals and merged busy intervals (touching ones merge) are made in one pass and held,
 * a node and an interval a few dozen bytes each, until the nodes are written in the
 * tables' order (start_ts, id). The SQL this replaced (tests/unit/reference/84_ir_rollup.sql
 * and 85-88, compared row for row by tests/unit/test_derive_ref.c) filled DuckDB's
 * whole pool with its window and list aggregates (docs/memory.md). */
#ifndef NX_INGEST_IR_ROLLUP_H
#define NX_INGEST_IR_ROLLUP_H

#include "common/compat.h"
#include "common/err.h"

struct nx_ingest_ctx;
struct nx_duck;

/* Writes the four tables into dir from its Instruction table (a view of d, or made
 * here); a table without rows gets no file, as a derived table. */
int nx_ir_rollup_write(struct nx_ingest_ctx *c, struct nx_duck *d, const char *dir,
		       struct nx_err *err);

#endif
