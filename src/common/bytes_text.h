/* SPDX-License-Identifier: MIT
 * bytes_text.h: a byte count as the reader sees it everywhere, in the units of the web UI's
 * Summary (ui/api.js, NX.fmtBytes): 512 B, 1.50 KiB, 5.06 GiB. */
#ifndef NX_COMMON_BYTES_TEXT_H
#define NX_COMMON_BYTES_TEXT_H

#include "common/compat.h"
#include "common/strbuf.h"

/* Appends bytes as NX.fmtBytes writes it: divided by 1024 while at least 1024 (up to
 * TiB) with two decimals, halves rounded away from zero as JavaScript's toFixed does
 * (1152 bytes: 1.13 KiB); below 1024, the number of bytes itself ("512 B"). NaN and
 * infinities: "n/a". */
void nx_bytes_text(struct nx_strbuf *sb, double bytes);

#endif
