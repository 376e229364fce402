/* SPDX-License-Identifier: MIT
 * listing.h: the kernel listing format (docs/formats/listing.md) and its assembler.
 *
 * A listing is a text file with one declaration or instruction per line: tensors,
 * DMA queues and DMA blocks with their descriptors, then per-engine instructions with
 * operands, semaphore waits and signals, DMA triggers and the source file:line each
 * came from. The assembler packs it into an in-memory NEFF, including the
 * kernel_debug_info (one kernel instruction per source line, bir locations
 * "file:line"), ready for nx_neff_write or the simulator. */
#ifndef NX_KERNELS_LISTING_H
#define NX_KERNELS_LISTING_H

#include "common/compat.h"
#include "common/err.h"
#include "neff/neff.h"

/* Assembles text (len bytes, need not be NUL-terminated) into *out, which the caller
 * releases with nx_neff_release. `name` labels errors: "name:LINE: problem". On
 * failure *out is left released. */
int nx_listing_assemble(const char *name, const char *text, size_t len, struct nx_neff *out,
			struct nx_err *err);

/* Reads and assembles a listing file. */
int nx_listing_assemble_file(const char *path, struct nx_neff *out, struct nx_err *err);

#endif
