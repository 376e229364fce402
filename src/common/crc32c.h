/* SPDX-License-Identifier: MIT
 * crc32c.h: CRC-32C (Castagnoli), the checksum of NTFF chunks. */
#ifndef NX_COMMON_CRC32C_H
#define NX_COMMON_CRC32C_H

#include "common/compat.h"

/* Continues a CRC: pass 0 to start. */
uint32_t nx_crc32c(uint32_t crc, const void *data, size_t len);

#endif
