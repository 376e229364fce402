/* SPDX-License-Identifier: MIT
 * parquet_rle.h: the RLE/bit-packed hybrid of parquet, as our writer (parquet_write.c)
 * puts it: a page's definition and repetition levels (a byte each) and a dictionary's
 * indices (parquet_dict.c, 32 bits each). One encoder for both: a run of 8 or more
 * equal values is an RLE run (its value in (bw + 7) / 8 bytes, little-endian); the
 * values between runs are bit-packed 8 to a group, the last group padded with zeros (a
 * reader stops at the page's value count). No DuckDB here. */
#ifndef NX_DB_PARQUET_RLE_H
#define NX_DB_PARQUET_RLE_H

#include "common/compat.h"
#include "common/strbuf.h"

/* Appends n values of bit width bw (1..8, each below 1 << bw) to out. */
void nx_pq_rle_put8(struct nx_strbuf *out, const uint8_t *v, size_t n, int bw);
/* Appends n values of bit width bw (1..32, each below 1 << bw, when bw < 32) to out. */
void nx_pq_rle_put32(struct nx_strbuf *out, const uint32_t *v, size_t n, int bw);

#endif
