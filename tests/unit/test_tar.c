/* SPDX-License-Identifier: MIT
 * test_tar.c: the gzip + ustar layer of NEFF payloads: round trips, deterministic
 * output, GNU/pax long names, and every corruption the reader must name (checksum,
 * truncation, oversized members, unterminated names, bad or truncated gzip); the
 * streamed writer, and its gzip comment that marks a source archive made from a NEFF. */
#include "common/compat.h"
#include "neff/tar.h"
#include "common/fsutil.h"
#include "common/source_archive.h"
#include "common/strbuf.h"
#include "helper/fixture.h"

#include <fcntl.h>
#include <unistd.h>

#include <setjmp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#define assert_contains(hay, needle)                                                        \
	do {                                                                               \
		if (!strstr((hay), (needle)))                                              \
			fail_msg("\"%s\" does not contain \"%s\"", (hay), (needle));      \
	} while (0)

/* Two members: a 3-byte text and a 1000-byte binary. */
static void sample_tar(struct nx_strbuf *sb)
{
	uint8_t bin[1000];
	struct nx_err err = { 0 };

	for (size_t i = 0; i < sizeof(bin); i++)
		bin[i] = (uint8_t)(i * 7);
	assert_int_equal(nx_tar_add(sb, "info.json", "{}\n", 3, &err), 0);
	assert_int_equal(nx_tar_add(sb, "sg00/Tensor.bin", bin, sizeof(bin), &err), 0);
	nx_tar_finish(sb);
}

static void test_roundtrip(void **state)
{
	struct nx_strbuf sb = NX_STRBUF_INIT;
	struct nx_err err = { 0 };
	struct nx_tar tar;
	uint8_t *gz;
	size_t gzlen;

	(void)state;
	sample_tar(&sb);
	/* 512 header + 512 data, 512 header + 1024 data, 1024 end marker. */
	assert_int_equal(sb.len, 3584);
	assert_int_equal(nx_gzip((uint8_t *)sb.buf, sb.len, &gz, &gzlen, &err), 0);
	assert_int_equal(nx_tar_read_gz("t", gz, gzlen, &tar, &err), 0);
	assert_int_equal(tar.n, 2);
	assert_string_equal(tar.ents[0].name, "info.json");
	assert_int_equal(tar.ents[0].size, 3);
	assert_memory_equal(tar.ents[0].data, "{}\n", 3);
	assert_int_equal(tar.ents[0].offset, 0);
	const struct nx_tar_entry *e = nx_tar_find(&tar, "sg00/Tensor.bin");
	assert_non_null(e);
	assert_int_equal(e->size, 1000);
	assert_int_equal(e->offset, 1024);
	assert_int_equal(e->data[999], (uint8_t)(999 * 7));
	assert_null(nx_tar_find(&tar, "missing"));
	nx_tar_release(&tar);
	free(gz);
	nx_strbuf_release(&sb);
}

static void test_deterministic(void **state)
{
	struct nx_strbuf a = NX_STRBUF_INIT, b = NX_STRBUF_INIT;
	struct nx_err err = { 0 };
	uint8_t *ga, *gb;
	size_t la, lb;

	(void)state;
	sample_tar(&a);
	sample_tar(&b);
	assert_int_equal(a.len, b.len);
	assert_memory_equal(a.buf, b.buf, a.len);
	/* Header: mode 0644, uid/gid 0, mtime 0, ustar magic. */
	assert_memory_equal(a.buf + 100, "0000644", 8);
	assert_memory_equal(a.buf + 108, "0000000", 8);
	assert_memory_equal(a.buf + 136, "00000000000", 12);
	assert_memory_equal(a.buf + 257, "ustar\0" "00", 8);
	assert_int_equal(nx_gzip((uint8_t *)a.buf, a.len, &ga, &la, &err), 0);
	assert_int_equal(nx_gzip((uint8_t *)b.buf, b.len, &gb, &lb, &err), 0);
	assert_int_equal(la, lb);
	assert_memory_equal(ga, gb, la);
	/* gzip header: magic, deflate, no flags, mtime 0, OS 255. */
	assert_int_equal(ga[0], 0x1f);
	assert_int_equal(ga[1], 0x8b);
	assert_int_equal(ga[2], 8);
	assert_int_equal(ga[4] | ga[5] | ga[6] | ga[7], 0);
	assert_int_equal(ga[9], 255);
	free(ga);
	free(gb);
	nx_strbuf_release(&a);
	nx_strbuf_release(&b);
}

/* Rewrites a header's checksum after a test edits it. */
static void fix_checksum(uint8_t *h)
{
	unsigned sum = 0;

	memset(h + 148, ' ', 8);
	for (int i = 0; i < 512; i++)
		sum += h[i];
	snprintf((char *)h + 148, 8, "%06o", sum);
}

static void test_long_names(void **state)
{
	struct nx_strbuf sb = NX_STRBUF_INIT;
	struct nx_err err = { 0 };
	struct nx_tar tar;
	const char *longname = "sg00/a-directory-name-that-is-quite-long/and-a-file-name-that-"
			       "pushes-it-past-one-hundred-bytes.json";
	const char *pax = "31 path=sg00/from-pax-path.bin\n";

	(void)state;
	/* GNU 'L' long name, then the member it names. */
	assert_int_equal(nx_tar_add(&sb, "././@LongLink", longname, strlen(longname) + 1, &err),
			 0);
	sb.buf[156] = 'L';
	fix_checksum((uint8_t *)sb.buf);
	assert_int_equal(nx_tar_add(&sb, "short", "x", 1, &err), 0);
	/* pax 'x' header with a path record. */
	size_t at = sb.len;
	assert_int_equal(nx_tar_add(&sb, "PaxHeader", pax, strlen(pax), &err), 0);
	sb.buf[at + 156] = 'x';
	fix_checksum((uint8_t *)sb.buf + at);
	assert_int_equal(nx_tar_add(&sb, "short2", "yy", 2, &err), 0);
	/* A directory entry is skipped. */
	at = sb.len;
	assert_int_equal(nx_tar_add(&sb, "sg00/", "", 0, &err), 0);
	sb.buf[at + 156] = '5';
	fix_checksum((uint8_t *)sb.buf + at);
	nx_tar_finish(&sb);

	assert_int_equal(nx_tar_parse("t", (uint8_t *)sb.buf, sb.len, &tar, &err), 0);
	assert_int_equal(tar.n, 2);
	assert_string_equal(tar.ents[0].name, longname);
	assert_int_equal(tar.ents[0].size, 1);
	assert_string_equal(tar.ents[1].name, "sg00/from-pax-path.bin");
	assert_int_equal(tar.ents[1].size, 2);
	nx_tar_release(&tar);
	nx_strbuf_release(&sb);
}

static void test_bad_checksum(void **state)
{
	struct nx_strbuf sb = NX_STRBUF_INIT;
	struct nx_err err = { 0 };
	struct nx_tar tar;

	(void)state;
	sample_tar(&sb);
	sb.buf[1024 + 130] ^= 1; /* a size digit of the second member */
	assert_int_equal(nx_tar_parse("x.neff", (uint8_t *)sb.buf, sb.len, &tar, &err),
			 NX_ECORRUPT);
	assert_contains(err.msg, "x.neff: tar member 'sg00/Tensor.bin' at byte 1024");
	assert_contains(err.msg, "header checksum mismatch");
	assert_int_equal(tar.n, 0);
	nx_strbuf_release(&sb);
}

static void test_truncations(void **state)
{
	struct nx_strbuf sb = NX_STRBUF_INIT;
	struct nx_err err = { 0 };
	struct nx_tar tar;

	(void)state;
	sample_tar(&sb);
	/* Inside the second header block. */
	assert_int_equal(nx_tar_parse("t", (uint8_t *)sb.buf, 1300, &tar, &err), NX_ETRUNC);
	assert_contains(err.msg, "tar stream byte 1024: header block cut short (276 of 512");
	/* Inside the second member's data. */
	assert_int_equal(nx_tar_parse("t", (uint8_t *)sb.buf, 2000, &tar, &err), NX_ETRUNC);
	assert_contains(err.msg, "tar member 'sg00/Tensor.bin' at byte 1024: size 1000 exceeds "
				 "the 464 bytes left");
	/* A header claiming a huge member. */
	memcpy(sb.buf + 1024 + 124, "77777777777", 11);
	fix_checksum((uint8_t *)sb.buf + 1024);
	assert_int_equal(nx_tar_parse("t", (uint8_t *)sb.buf, sb.len, &tar, &err), NX_ETRUNC);
	assert_contains(err.msg, "size 8589934591 exceeds");
	/* The archive may end right after a member without its end marker. */
	sb.len = 1024;
	assert_int_equal(nx_tar_parse("t", (uint8_t *)sb.buf, sb.len, &tar, &err), 0);
	assert_int_equal(tar.n, 1);
	nx_tar_release(&tar);
	nx_strbuf_release(&sb);
}

static void test_bad_fields(void **state)
{
	struct nx_strbuf sb = NX_STRBUF_INIT;
	struct nx_err err = { 0 };
	struct nx_tar tar;

	(void)state;
	sample_tar(&sb);
	memset(sb.buf, 'n', 100); /* name fills its field: no NUL */
	fix_checksum((uint8_t *)sb.buf);
	assert_int_equal(nx_tar_parse("t", (uint8_t *)sb.buf, sb.len, &tar, &err), NX_ECORRUPT);
	assert_contains(err.msg, "at byte 0: name is not NUL-terminated");
	nx_strbuf_release(&sb);

	sample_tar(&sb);
	memcpy(sb.buf + 124, "00000000z03", 11); /* size is not octal */
	fix_checksum((uint8_t *)sb.buf);
	assert_int_equal(nx_tar_parse("t", (uint8_t *)sb.buf, sb.len, &tar, &err), NX_ECORRUPT);
	assert_contains(err.msg, "tar member 'info.json' at byte 0: size field is not a number");
	nx_strbuf_release(&sb);

	sample_tar(&sb);
	memset(sb.buf + 148, 'q', 8);
	assert_int_equal(nx_tar_parse("t", (uint8_t *)sb.buf, sb.len, &tar, &err), NX_ECORRUPT);
	assert_contains(err.msg, "checksum field is not a number");
	nx_strbuf_release(&sb);

	sample_tar(&sb);
	memset(sb.buf, 0, 100); /* empty name */
	fix_checksum((uint8_t *)sb.buf);
	assert_int_equal(nx_tar_parse("t", (uint8_t *)sb.buf, sb.len, &tar, &err), NX_ECORRUPT);
	assert_contains(err.msg, "tar member at byte 0: empty name");
	nx_strbuf_release(&sb);
}

static void test_name_limits(void **state)
{
	struct nx_strbuf sb = NX_STRBUF_INIT;
	struct nx_err err = { 0 };
	char name[101];

	(void)state;
	memset(name, 'a', 100);
	name[100] = '\0';
	assert_int_equal(nx_tar_add(&sb, name, "", 0, &err), NX_EUSAGE);
	assert_contains(err.msg, "must be 1..99 bytes");
	assert_int_equal(nx_tar_add(&sb, "", "", 0, &err), NX_EUSAGE);
	assert_int_equal(sb.len, 0);
	nx_strbuf_release(&sb);
}

static void test_gzip_errors(void **state)
{
	struct nx_strbuf sb = NX_STRBUF_INIT;
	struct nx_err err = { 0 };
	struct nx_tar tar;
	uint8_t *gz, *out, *bigger;
	size_t gzlen, outlen;

	(void)state;
	sample_tar(&sb);
	assert_int_equal(nx_gzip((uint8_t *)sb.buf, sb.len, &gz, &gzlen, &err), 0);
	/* Cut at several points: all are truncations, never crashes. */
	for (size_t cut = 0; cut < gzlen; cut += (cut < 20 ? 1 : 17)) {
		assert_int_equal(nx_tar_read_gz("x.neff", gz, cut, &tar, &err), NX_ETRUNC);
		assert_contains(err.msg, "x.neff: gzip stream is truncated");
	}
	/* Trailing data after the stream. */
	bigger = malloc(gzlen + 3);
	memcpy(bigger, gz, gzlen);
	memcpy(bigger + gzlen, "abc", 3);
	assert_int_equal(nx_gunzip("x", bigger, gzlen + 3, 1 << 20, &out, &outlen, &err),
			 NX_ECORRUPT);
	assert_contains(err.msg, "3 bytes of unexpected data follow the gzip stream");
	/* A flipped byte in the deflate data or the CRC. */
	memcpy(bigger, gz, gzlen);
	bigger[gzlen - 6] ^= 0xff;
	assert_int_equal(nx_gunzip("x", bigger, gzlen, 1 << 20, &out, &outlen, &err),
			 NX_ECORRUPT);
	assert_contains(err.msg, "x: gzip data is corrupt at compressed byte");
	/* Not gzip at all. */
	assert_int_equal(nx_gunzip("x", (const uint8_t *)"plain text here", 15, 1 << 20, &out,
				   &outlen, &err), NX_ECORRUPT);
	/* The inflate limit. */
	assert_int_equal(nx_gunzip("x", gz, gzlen, 1000, &out, &outlen, &err), NX_ECORRUPT);
	assert_contains(err.msg, "inflates to more than 1000 bytes");
	assert_null(out);
	free(bigger);
	free(gz);
	nx_strbuf_release(&sb);
}

/* The streamed writer: members read from files, a name past 99 bytes as a GNU long name,
 * the archive read back by nx_tar_read_gz; a file shorter than announced is an error
 * naming it. */
static void test_stream_writer(void **state)
{
	char *dir = nx_test_dir("tar-stream"), *in = nx_path_join(dir, "in.bin");
	char *out = nx_path_join(dir, "out.tgz"), long_name[160];
	static const char text[] = "hello, stream";
	struct nx_err err = { 0 };
	struct nx_targz *w = NULL;
	struct nx_tar tar;
	char *gz = NULL;
	size_t gzlen = 0;
	uint64_t gzb = 0;
	int fd, src;

	(void)state;
	memset(long_name, 'n', sizeof(long_name) - 1);
	long_name[sizeof(long_name) - 1] = '\0';
	assert_int_equal(nx_write_file_atomic(in, text, sizeof(text) - 1, &err), 0);
	fd = open(out, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	assert_true(fd >= 0);
	assert_int_equal(nx_targz_open(&w, fd, out, &err), 0);
	for (int k = 0; k < 2; k++) {
		src = open(in, O_RDONLY);
		assert_int_equal(nx_targz_add_fd(w, k ? long_name : "short.txt", src, in,
						 sizeof(text) - 1, &err), 0);
		close(src);
	}
	assert_int_equal(nx_targz_tar_bytes(w), nx_targz_member_bytes(9, sizeof(text) - 1) +
						 nx_targz_member_bytes(159, sizeof(text) - 1));
	assert_int_equal(nx_targz_close(w, &gzb, &err), 0);
	close(fd);
	assert_int_equal(nx_read_file(out, &gz, &gzlen, &err), 0);
	assert_int_equal(gzb, gzlen);
	assert_int_equal(nx_tar_read_gz("out.tgz", (uint8_t *)gz, gzlen, &tar, &err), 0);
	assert_int_equal(tar.n, 2);
	assert_non_null(nx_tar_find(&tar, long_name));
	assert_memory_equal(nx_tar_find(&tar, "short.txt")->data, text, sizeof(text) - 1);
	nx_tar_release(&tar);
	free(gz);

	/* announced longer than the file */
	fd = open(out, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	assert_int_equal(nx_targz_open(&w, fd, out, &err), 0);
	src = open(in, O_RDONLY);
	assert_int_equal(nx_targz_add_fd(w, "x", src, in, 1000, &err), NX_ETRUNC);
	assert_non_null(strstr(err.msg, "in.bin' ended at byte 13 of 1000"));
	close(src);
	nx_targz_abort(w);
	close(fd);
	free(in);
	free(out);
	free(dir);
}

/* A tar.gz with a gzip comment, members from memory: read back, and the comment is what
 * tells a source archive made from a NEFF (common/source_archive.h) from any other,
 * behind an extra field and a file name too; short, foreign or missing files are not. */
static void test_comment(void **state)
{
	static const char text[] = "print(1)\n";
	char *dir = nx_test_dir("tar-comment"), *out = nx_path_join(dir, "s.tgz");
	char *hand = nx_path_join(dir, "hand.gz");
	struct nx_err err = { 0 };
	struct nx_targz *w = NULL;
	struct nx_tar tar;
	char *gz = NULL;
	size_t gzlen = 0;
	uint8_t h[96] = { 0x1f, 0x8b, 8, 4 | 8 | 16, 0, 0, 0, 0, 0, 255, 3, 0, 'a', 'b', 'c' };
	size_t at = 15;
	int fd;

	(void)state;
	for (int k = 0; k < 2; k++) {
		fd = open(out, O_WRONLY | O_CREAT | O_TRUNC, 0644);
		assert_true(fd >= 0);
		assert_int_equal(nx_targz_open_comment(&w, fd, out, k ? NULL : NX_SOURCE_FROM_NEFF,
						       &err), 0);
		assert_int_equal(nx_targz_add_mem(w, "k.py", text, sizeof(text) - 1, &err), 0);
		assert_int_equal(nx_targz_close(w, NULL, &err), 0);
		close(fd);
		assert_int_equal(nx_source_archive_from_neff(out), !k);
		assert_int_equal(nx_read_file(out, &gz, &gzlen, &err), 0);
		assert_int_equal(nx_tar_read_gz("s.tgz", (uint8_t *)gz, gzlen, &tar, &err), 0);
		assert_int_equal(tar.n, 1);
		assert_memory_equal(nx_tar_find(&tar, "k.py")->data, text, sizeof(text) - 1);
		nx_tar_release(&tar);
		free(gz);
	}
	memcpy(h + at, "name", 5); /* FEXTRA "abc", FNAME "name", FCOMMENT */
	at += 5;
	memcpy(h + at, NX_SOURCE_FROM_NEFF, sizeof(NX_SOURCE_FROM_NEFF));
	at += sizeof(NX_SOURCE_FROM_NEFF);
	assert_int_equal(nx_write_file_atomic(hand, h, at, &err), 0);
	assert_true(nx_source_archive_from_neff(hand));
	h[at - 1] = 'x'; /* the marker and more */
	h[at] = 0;
	assert_int_equal(nx_write_file_atomic(hand, h, at + 1, &err), 0);
	assert_false(nx_source_archive_from_neff(hand));
	h[at - 1] = 0;
	h[at - 2] ^= 1; /* another comment */
	assert_int_equal(nx_write_file_atomic(hand, h, at, &err), 0);
	assert_false(nx_source_archive_from_neff(hand));
	assert_int_equal(nx_write_file_atomic(hand, h, 11, &err), 0); /* cut in FEXTRA */
	assert_false(nx_source_archive_from_neff(hand));
	assert_int_equal(nx_write_file_atomic(hand, h, at - 3, &err), 0); /* cut in FCOMMENT */
	assert_false(nx_source_archive_from_neff(hand));
	assert_int_equal(nx_write_file_atomic(hand, "not gzip", 8, &err), 0);
	assert_false(nx_source_archive_from_neff(hand));
	assert_false(nx_source_archive_from_neff(dir)); /* a directory */
	unlink(hand);
	assert_false(nx_source_archive_from_neff(hand));
	free(out);
	free(hand);
	free(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_roundtrip),
		cmocka_unit_test(test_deterministic),
		cmocka_unit_test(test_long_names),
		cmocka_unit_test(test_bad_checksum),
		cmocka_unit_test(test_truncations),
		cmocka_unit_test(test_bad_fields),
		cmocka_unit_test(test_name_limits),
		cmocka_unit_test(test_gzip_errors),
		cmocka_unit_test(test_stream_writer),
		cmocka_unit_test(test_comment),
	};
	return nx_test_done(cmocka_run_group_tests_name("tar", tests, NULL, NULL));
}
