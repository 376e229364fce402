/* SPDX-License-Identifier: MIT
 * neff_header.c: the 1024-byte NEFF header (SDK layout, little-endian), its checks
 * against the file it heads, the payload hash, and the text forms the NeffHeader
 * table shows (uuid and hash hex, feature names). */
#include "common/compat.h"
#include "neff/neff.h"
#include "common/le.h"
#include "common/md5.h"
#include "common/sha256.h"

#include <string.h>

/* Field offsets (docs/formats/neff.md, "Header"). */
enum {
	H_PKG_VERSION = 0,   /* u64 */
	H_HEADER_SIZE = 8,   /* u64 */
	H_DATA_SIZE = 16,    /* u64 */
	H_MAJOR = 24,        /* u64 */
	H_MINOR = 32,        /* u64 */
	H_BUILD = 40,        /* u8[128] */
	H_NUM_TPB = 168,     /* u32 */
	H_HASH = 172,        /* u8[32] */
	H_UUID = 204,        /* u8[16] */
	H_NAME = 220,        /* char[256] */
	H_REQ_TPB = 476,     /* u32 */
	H_TPB_PER_NODE = 480,/* u8[64] */
	H_FEATURES = 544,    /* u64 */
	H_LNC_SIZE = 552,    /* u32 */
	H_PAD = 556,         /* zero up to 1024 */
};

/* Names of feature_bits (NeffHeader.enabled_features). Bits not listed print "bit<N>". */
static const char *const feature_names[] = {
	"coalesced-cc",        /* bit 0: collectives coalesced into one operation */
	"queue-set-instances", /* bit 1: DMA queue sets with per-instance queues */
	"on-chip-functions",   /* bit 2: functions resident in on-chip memory */
};

/* Copies a C string into a fixed on-disk field, NUL-padded (not necessarily terminated). */
static void put_str(uint8_t *p, const char *s, size_t field)
{
	size_t n = strnlen(s, field);

	memcpy(p, s, n);
}

static unsigned hash_len(uint64_t pkg_version)
{
	return pkg_version == 2 ? NX_MD5_SIZE : NX_SHA256_SIZE;
}

void nx_neff_header_encode(const struct nx_neff_header *h, uint8_t out[NX_NEFF_HEADER_SIZE])
{
	memset(out, 0, NX_NEFF_HEADER_SIZE);
	nx_put_le(out + H_PKG_VERSION, h->pkg_version, 8);
	nx_put_le(out + H_HEADER_SIZE, h->header_size, 8);
	nx_put_le(out + H_DATA_SIZE, h->data_size, 8);
	nx_put_le(out + H_MAJOR, h->major_version, 8);
	nx_put_le(out + H_MINOR, h->minor_version, 8);
	put_str(out + H_BUILD, h->build_version, 128);
	nx_put_le(out + H_NUM_TPB, h->num_tpb, 4);
	memcpy(out + H_HASH, h->hash, hash_len(h->pkg_version));
	memcpy(out + H_UUID, h->uuid, 16);
	put_str(out + H_NAME, h->name, 256);
	nx_put_le(out + H_REQ_TPB, h->requested_tpb_count, 4);
	memcpy(out + H_TPB_PER_NODE, h->tpb_per_node, 64);
	nx_put_le(out + H_FEATURES, h->feature_bits, 8);
	nx_put_le(out + H_LNC_SIZE, h->lnc_size, 4);
}

int nx_neff_header_decode(const char *name, const uint8_t *file, size_t file_len,
			  struct nx_neff_header *h, struct nx_err *err)
{
	memset(h, 0, sizeof(*h));
	/* the first bytes of an NTFF (docs/formats/ntff.md), the file most often given in
	 * place of a NEFF */
	if (file_len >= 8 && !memcmp(file, "\x89NTFF\r\n\x1a", 8))
		return nx_errf(err, NX_ECORRUPT, "%s: this is an NTFF (device trace), not a NEFF "
			       "(compiled kernel); traces go with -s (view, recommend)", name);
	if (file_len < NX_NEFF_HEADER_SIZE)
		return nx_errf(err, NX_ETRUNC,
			       "%s: truncated header: the file has %zu bytes, the header alone "
			       "needs %u: it is not a NEFF, or one cut short (kernel gen, kernel "
			       "asm and the compiler write whole ones)", name, file_len,
			       NX_NEFF_HEADER_SIZE);
	h->pkg_version = nx_get_le(file + H_PKG_VERSION, 8);
	h->header_size = nx_get_le(file + H_HEADER_SIZE, 8);
	h->data_size = nx_get_le(file + H_DATA_SIZE, 8);
	h->major_version = nx_get_le(file + H_MAJOR, 8);
	h->minor_version = nx_get_le(file + H_MINOR, 8);
	memcpy(h->build_version, file + H_BUILD, 128);
	h->num_tpb = (uint32_t)nx_get_le(file + H_NUM_TPB, 4);
	memcpy(h->uuid, file + H_UUID, 16);
	memcpy(h->name, file + H_NAME, 256);
	h->requested_tpb_count = (uint32_t)nx_get_le(file + H_REQ_TPB, 4);
	memcpy(h->tpb_per_node, file + H_TPB_PER_NODE, 64);
	h->feature_bits = nx_get_le(file + H_FEATURES, 8);
	h->lnc_size = (uint32_t)nx_get_le(file + H_LNC_SIZE, 4);

	if (h->header_size != NX_NEFF_HEADER_SIZE)
		return nx_errf(err, NX_ECORRUPT,
			       "%s: header: header_size (byte %d) is %" PRIu64 ", expected %u",
			       name, H_HEADER_SIZE, h->header_size, NX_NEFF_HEADER_SIZE);
	if (h->pkg_version != 1 && h->pkg_version != 2)
		return nx_errf(err, NX_EVERSION,
			       "%s: header: pkg_version (byte %d) is %" PRIu64 "; supported are 1 "
			       "(tar.gz + SHA-256) and 2 (tar.gz + MD5)", name, H_PKG_VERSION,
			       h->pkg_version);
	if (h->major_version < 1 || h->major_version > NX_NEFF_MAJOR_MAX)
		return nx_errf(err, NX_EVERSION,
			       "%s: header: NEFF major version (byte %d) is %" PRIu64 "; this "
			       "build reads major versions 1 to 3", name, H_MAJOR,
			       h->major_version);
	size_t follow = file_len - NX_NEFF_HEADER_SIZE;
	if (h->data_size != follow)
		return nx_errf(err, h->data_size > follow ? NX_ETRUNC : NX_ECORRUPT,
			       "%s: header: data_size (byte %d) is %" PRIu64 " but %zu bytes "
			       "follow the %u-byte header", name, H_DATA_SIZE, h->data_size, follow,
			       NX_NEFF_HEADER_SIZE);
	/* Bytes of the hash field the package version does not use are ignored. */
	memcpy(h->hash, file + H_HASH, hash_len(h->pkg_version));
	return 0;
}

void nx_neff_payload_hash(uint64_t pkg_version, const uint8_t *data, size_t len,
			  uint8_t hash[32])
{
	memset(hash, 0, 32);
	if (pkg_version == 2)
		nx_md5(data, len, hash);
	else
		nx_sha256(data, len, hash);
}

static void hex(const uint8_t *p, unsigned n, char *out)
{
	static const char digits[] = "0123456789abcdef";

	for (unsigned i = 0; i < n; i++) {
		out[2 * i] = digits[p[i] >> 4];
		out[2 * i + 1] = digits[p[i] & 15];
	}
	out[2 * n] = '\0';
}

int nx_neff_header_verify(const char *name, const struct nx_neff_header *h, const uint8_t *data,
			  size_t len, struct nx_err *err)
{
	uint8_t got[32];
	unsigned n = hash_len(h->pkg_version);
	char want_hex[65], got_hex[65];

	nx_neff_payload_hash(h->pkg_version, data, len, got);
	if (!memcmp(got, h->hash, n))
		return 0;
	hex(h->hash, n, want_hex);
	hex(got, n, got_hex);
	return nx_errf(err, NX_ECORRUPT,
		       "%s: header: hash mismatch: the header (byte %d) records %s %s but the %zu "
		       "data bytes hash to %s", name, H_HASH, n == NX_MD5_SIZE ? "MD5" : "SHA-256",
		       want_hex, len, got_hex);
}

void nx_neff_uuid_hex(const struct nx_neff_header *h, char out[33])
{
	hex(h->uuid, 16, out);
}

void nx_neff_hash_hex(const struct nx_neff_header *h, char out[65])
{
	hex(h->hash, hash_len(h->pkg_version), out);
}

void nx_neff_features(uint64_t bits, struct nx_strbuf *out)
{
	bool first = true;

	for (unsigned b = 0; b < 64; b++) {
		if (!(bits >> b & 1))
			continue;
		if (!first)
			nx_strbuf_addstr(out, ", ");
		first = false;
		if (b < NX_ARRAY_SIZE(feature_names))
			nx_strbuf_addstr(out, feature_names[b]);
		else
			nx_strbuf_addf(out, "bit%u", b);
	}
}
