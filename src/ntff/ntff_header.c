/* SPDX-License-Identifier: MIT
 * ntff_header.c: the NTFF file header described once (name, offset, size, kind and
 * struct member of every field, as in docs/formats/ntff.md "File header"), and the
 * encoder, decoder and value checks that the writer and the reader share. */
#include "common/compat.h"
#include "common/crc32c.h"
#include "common/le.h"
#include "ntff/ntff.h"
#include "ntff/varint.h"

#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#define M(f) offsetof(struct nx_ntff_info, f)
#define DIM NX_NTFF_MAX_DIM

const struct nx__ntff_field nx__ntff_header[] = {
	{ "magic", NX_NTFF_OFF_MAGIC, 8, NX_NTFF_F_MAGIC, 0, 0 },
	{ "version", NX_NTFF_OFF_VERSION, 4, NX_NTFF_F_VERSION, M(version), 0 },
	{ "header_size", NX_NTFF_OFF_HEADER_SIZE, 4, NX_NTFF_F_HSIZE, 0, 0 },
	{ "flags", NX_NTFF_OFF_FLAGS, 4, NX_NTFF_F_U32, M(flags), 0 },
	{ "reserved", NX_NTFF_OFF_RESERVED0, 4, NX_NTFF_F_RESERVED, 0, 0 },
	{ "neff_uuid", NX_NTFF_OFF_UUID, 16, NX_NTFF_F_BYTES, M(neff_uuid), 0 },
	{ "ticks_per_ns", NX_NTFF_OFF_TICKS_PER_NS, 8, NX_NTFF_F_U64, M(ticks_per_ns), 0 },
	{ "capture_unix_ns", NX_NTFF_OFF_CAPTURE_NS, 8, NX_NTFF_F_U64, M(capture_unix_ns), 0 },
	{ "num_physical_cores", NX_NTFF_OFF_NUM_PCORES, 4, NX_NTFF_F_U32, M(num_physical_cores),
	  NX_NTFF_MAX_CORES },
	{ "num_dma_engines", NX_NTFF_OFF_NUM_DMA, 4, NX_NTFF_F_U32, M(num_dma_engines),
	  NX_NTFF_MAX_DMA_ENGINES },
	{ "pcore_idx", NX_NTFF_OFF_PCORE_IDX, 4, NX_NTFF_F_U32, M(pcore_idx), 0 },
	{ "neuroncore_idx", NX_NTFF_OFF_NC_IDX, 4, NX_NTFF_F_U32, M(neuroncore_idx), 0 },
	{ "neuron_device_idx", NX_NTFF_OFF_DEV_IDX, 4, NX_NTFF_F_U32, M(neuron_device_idx), 0 },
	{ "te_rows", NX_NTFF_OFF_TE_ROWS, 4, NX_NTFF_F_U32, M(te_rows), DIM },
	{ "te_cols", NX_NTFF_OFF_TE_COLS, 4, NX_NTFF_F_U32, M(te_cols), DIM },
	{ "ve_channels", NX_NTFF_OFF_VE_CH, 4, NX_NTFF_F_U32, M(ve_channels), DIM },
	{ "se_channels", NX_NTFF_OFF_SE_CH, 4, NX_NTFF_F_U32, M(se_channels), DIM },
	{ "gp_channels", NX_NTFF_OFF_GP_CH, 4, NX_NTFF_F_U32, M(gp_channels), DIM },
	{ "dma_ddr_bandwidth", NX_NTFF_OFF_DMA_BW, 8, NX_NTFF_F_F64, M(dma_ddr_bandwidth), 0 },
	{ "hbm_ddr_bandwidth", NX_NTFF_OFF_HBM_BW, 8, NX_NTFF_F_F64, M(hbm_ddr_bandwidth), 0 },
	{ "te_clock_ghz", NX_NTFF_OFF_TE_CLK, 8, NX_NTFF_F_F64, M(te_clock_ghz), 0 },
	{ "ve_clock_ghz", NX_NTFF_OFF_VE_CLK, 8, NX_NTFF_F_F64, M(ve_clock_ghz), 0 },
	{ "se_clock_ghz", NX_NTFF_OFF_SE_CLK, 8, NX_NTFF_F_F64, M(se_clock_ghz), 0 },
	{ "gp_clock_ghz", NX_NTFF_OFF_GP_CLK, 8, NX_NTFF_F_F64, M(gp_clock_ghz), 0 },
	{ "nc_clock_ghz", NX_NTFF_OFF_NC_CLK, 8, NX_NTFF_F_F64, M(nc_clock_ghz), 0 },
	{ "target", NX_NTFF_OFF_TARGET, NX_NTFF_STR_LEN, NX_NTFF_F_STR, M(target), 0 },
	{ "instance_type", NX_NTFF_OFF_INSTANCE, NX_NTFF_STR_LEN, NX_NTFF_F_STR,
	  M(instance_type), 0 },
	{ "runtime_version", NX_NTFF_OFF_RUNTIME, NX_NTFF_STR_LEN, NX_NTFF_F_STR,
	  M(runtime_version), 0 },
	{ "driver_version", NX_NTFF_OFF_DRIVER, NX_NTFF_STR_LEN, NX_NTFF_F_STR,
	  M(driver_version), 0 },
	{ "neff_name", NX_NTFF_OFF_NEFF_NAME, NX_NTFF_STR_LEN, NX_NTFF_F_STR, M(neff_name), 0 },
	{ "reserved", NX_NTFF_OFF_RESERVED1, 4, NX_NTFF_F_RESERVED, 0, 0 },
	{ "header_crc", NX_NTFF_OFF_CRC, 4, NX_NTFF_F_CRC, 0, 0 },
};
const size_t nx__ntff_header_nfields = NX_ARRAY_SIZE(nx__ntff_header);

/* Each string member holds exactly one field. */
_Static_assert(sizeof(((struct nx_ntff_info *)0)->target) == NX_NTFF_STR_LEN, "target");
_Static_assert(sizeof(((struct nx_ntff_info *)0)->neff_name) == NX_NTFF_STR_LEN, "neff_name");
_Static_assert(NX_NTFF_OFF_CRC + 4 == NX_NTFF_HEADER_SIZE, "CRC ends the header");

size_t nx__ntff_clip_utf8(const char *s, size_t max)
{
	size_t n = strnlen(s, max);

	if (n == max && s[max] != '\0') {
		while (n > 0 && ((unsigned char)s[n] & 0xc0) == 0x80)
			n--;
	}
	return n;
}

void nx__ntff_header_encode(const struct nx_ntff_info *in, uint8_t *h)
{
	const char *base = (const char *)in;

	memset(h, 0, NX_NTFF_HEADER_SIZE);
	for (size_t i = 0; i < nx__ntff_header_nfields; i++) {
		const struct nx__ntff_field *f = &nx__ntff_header[i];
		uint8_t *p = h + f->off;
		uint32_t u32;
		uint64_t u64;
		double d;

		switch (f->kind) {
		case NX_NTFF_F_MAGIC:
			memcpy(p, NX_NTFF_MAGIC, NX_NTFF_MAGIC_LEN);
			break;
		case NX_NTFF_F_VERSION:
			nx_put_le32(p, NX_NTFF_VERSION);
			break;
		case NX_NTFF_F_HSIZE:
			nx_put_le32(p, NX_NTFF_HEADER_SIZE);
			break;
		case NX_NTFF_F_U32:
			memcpy(&u32, base + f->member, sizeof(u32));
			nx_put_le32(p, u32);
			break;
		case NX_NTFF_F_U64:
			memcpy(&u64, base + f->member, sizeof(u64));
			nx_put_le64(p, u64);
			break;
		case NX_NTFF_F_F64:
			memcpy(&d, base + f->member, sizeof(d));
			nx_put_ledouble(p, d);
			break;
		case NX_NTFF_F_BYTES:
			memcpy(p, base + f->member, f->size);
			break;
		case NX_NTFF_F_STR:
			/* the rest stays zero: NUL padding */
			memcpy(p, base + f->member, nx__ntff_clip_utf8(base + f->member, f->size - 1));
			break;
		case NX_NTFF_F_RESERVED:
			break;
		case NX_NTFF_F_CRC:
			nx_put_le32(p, nx_crc32c(0, h, f->off));
			break;
		}
	}
}

bool nx__ntff_header_decode(const uint8_t *h, struct nx_ntff_info *in,
			    const struct nx__ntff_field **bad)
{
	char *base = (char *)in;

	memset(in, 0, sizeof(*in));
	for (size_t i = 0; i < nx__ntff_header_nfields; i++) {
		const struct nx__ntff_field *f = &nx__ntff_header[i];
		const uint8_t *p = h + f->off;
		uint32_t u32;
		uint64_t u64;
		double d;

		switch (f->kind) {
		case NX_NTFF_F_VERSION:
		case NX_NTFF_F_U32:
			u32 = nx_get_le32(p);
			memcpy(base + f->member, &u32, sizeof(u32));
			break;
		case NX_NTFF_F_U64:
			u64 = nx_get_le64(p);
			memcpy(base + f->member, &u64, sizeof(u64));
			break;
		case NX_NTFF_F_F64:
			d = nx_get_ledouble(p);
			memcpy(base + f->member, &d, sizeof(d));
			break;
		case NX_NTFF_F_BYTES:
			memcpy(base + f->member, p, f->size);
			break;
		case NX_NTFF_F_STR:
			if (!memchr(p, '\0', f->size)) {
				*bad = f;
				return false;
			}
			memcpy(base + f->member, p, f->size);
			break;
		default: /* magic, header_size and CRC are checked by the reader first */
			break;
		}
	}
	return true;
}

static bool bad_double(double d)
{
	return !isfinite(d) || d < 0;
}

/* Field limits in table order, then the cross-field rule, then the doubles. */
bool nx__ntff_info_valid(const struct nx_ntff_info *info, unsigned *off, char *why,
			 size_t why_len)
{
	const char *base = (const char *)info;
	const struct nx__ntff_field *f;

	if (info->ticks_per_ns < 1) {
		*off = NX_NTFF_OFF_TICKS_PER_NS;
		snprintf(why, why_len, "ticks_per_ns is 0 (must be at least 1)");
		return false;
	}
	for (f = nx__ntff_header; f < nx__ntff_header + nx__ntff_header_nfields; f++) {
		uint32_t v;

		if (f->kind != NX_NTFF_F_U32 || !f->max)
			continue;
		memcpy(&v, base + f->member, sizeof(v));
		if (v > f->max) {
			*off = f->off;
			snprintf(why, why_len, "%s %" PRIu32 " exceeds %" PRIu32, f->name, v, f->max);
			return false;
		}
	}
	if (info->num_physical_cores && info->pcore_idx >= info->num_physical_cores) {
		*off = NX_NTFF_OFF_PCORE_IDX;
		snprintf(why, why_len,
			 "pcore_idx %" PRIu32 " is not below num_physical_cores %" PRIu32,
			 info->pcore_idx, info->num_physical_cores);
		return false;
	}
	for (f = nx__ntff_header; f < nx__ntff_header + nx__ntff_header_nfields; f++) {
		double d;

		if (f->kind != NX_NTFF_F_F64)
			continue;
		memcpy(&d, base + f->member, sizeof(d));
		if (bad_double(d)) {
			*off = f->off;
			snprintf(why, why_len, "%s is %g (must be finite and not negative)", f->name,
				 d);
			return false;
		}
	}
	return true;
}
