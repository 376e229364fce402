/* SPDX-License-Identifier: MIT
 * test_hash.c: SHA-256 and MD5 against the published test vectors (FIPS 180-4
 * examples, RFC 1321 appendix A.5), one-shot and fed in uneven pieces. */
#include "common/compat.h"
#include "common/md5.h"
#include "common/sha256.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

static void to_hex(const uint8_t *p, size_t n, char *out)
{
	for (size_t i = 0; i < n; i++)
		snprintf(out + 2 * i, 3, "%02x", p[i]);
}

static void check_sha(const char *msg, size_t len, const char *want)
{
	uint8_t d[NX_SHA256_SIZE];
	char hex[65];
	struct nx_sha256 c;

	nx_sha256(msg, len, d);
	to_hex(d, sizeof(d), hex);
	assert_string_equal(hex, want);
	/* Byte-by-byte and in 7/63-byte pieces must agree with one-shot. */
	nx_sha256_init(&c);
	for (size_t i = 0; i < len; i++)
		nx_sha256_update(&c, msg + i, 1);
	nx_sha256_final(&c, d);
	to_hex(d, sizeof(d), hex);
	assert_string_equal(hex, want);
	nx_sha256_init(&c);
	for (size_t i = 0; i < len; i += (i % 2) ? 63 : 7) {
		size_t step = (i % 2) ? 63 : 7;
		nx_sha256_update(&c, msg + i, len - i < step ? len - i : step);
	}
	nx_sha256_final(&c, d);
	to_hex(d, sizeof(d), hex);
	assert_string_equal(hex, want);
}

static void check_md5(const char *msg, const char *want)
{
	size_t len = strlen(msg);
	uint8_t d[NX_MD5_SIZE];
	char hex[33];
	struct nx_md5 c;

	nx_md5(msg, len, d);
	to_hex(d, sizeof(d), hex);
	assert_string_equal(hex, want);
	nx_md5_init(&c);
	for (size_t i = 0; i < len; i++)
		nx_md5_update(&c, msg + i, 1);
	nx_md5_final(&c, d);
	to_hex(d, sizeof(d), hex);
	assert_string_equal(hex, want);
}

static void test_sha256_vectors(void **state)
{
	(void)state;
	check_sha("", 0, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
	check_sha("abc", 3, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
	check_sha("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq", 56,
		  "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
	check_sha("abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmnhijklmnoijklmnopjklmnopq"
		  "klmnopqrlmnopqrsmnopqrstnopqrstu", 112,
		  "cf5b16a778af8380036ce59e7b0492370b249b11e8f07a51afac45037afee9d1");
}

static void test_sha256_million_a(void **state)
{
	char *buf = malloc(1000000);

	(void)state;
	memset(buf, 'a', 1000000);
	check_sha(buf, 1000000, "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
	free(buf);
}

/* Lengths around the 55/56/64-byte padding boundaries. */
static void test_sha256_padding_edges(void **state)
{
	static const struct {
		size_t len;
		const char *hex;
	} v[] = {
		{ 55, "9f4390f8d30c2dd92ec9f095b65e2b9ae9b0a925a5258e241c9f1e910f734318" },
		{ 56, "b35439a4ac6f0948b6d6f9e3c6af0f5f590ce20f1bde7090ef7970686ec6738a" },
		{ 64, "ffe054fe7ae0cb6dc65c3af9b61d5209f439851db43d0ba5997337df154668eb" },
	};
	char buf[64];

	(void)state;
	memset(buf, 'a', sizeof(buf));
	for (size_t i = 0; i < NX_ARRAY_SIZE(v); i++)
		check_sha(buf, v[i].len, v[i].hex);
}

static void test_md5_vectors(void **state)
{
	(void)state;
	check_md5("", "d41d8cd98f00b204e9800998ecf8427e");
	check_md5("a", "0cc175b9c0f1b6a831c399e269772661");
	check_md5("abc", "900150983cd24fb0d6963f7d28e17f72");
	check_md5("message digest", "f96b697d7cb7938d525a2f31aaf161d0");
	check_md5("abcdefghijklmnopqrstuvwxyz", "c3fcd3d76192e4007dfb496cca67e13b");
	check_md5("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789",
		  "d174ab98d277d9f5a5611c2c9f419d9f");
	check_md5("1234567890123456789012345678901234567890123456789012345678901234567890123456"
		  "7890", "57edf4a22be3c955ac49da2e2107b67a");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_sha256_vectors),
		cmocka_unit_test(test_sha256_million_a),
		cmocka_unit_test(test_sha256_padding_edges),
		cmocka_unit_test(test_md5_vectors),
	};
	return cmocka_run_group_tests_name("hash", tests, NULL, NULL);
}
