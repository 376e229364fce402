/* SPDX-License-Identifier: MIT
 * test_bytes_text.c: byte counts in the web UI Summary's units (common/bytes_text.h): set
 * values (bytes below 1024, each unit, halves rounded away from zero, negatives, NaN),
 * then 2,000 values written by nx_bytes_text and by the UI's own NX.fmtBytes (ui/api.js,
 * run by node): the same text, so recommend and the Summary write the same bytes alike. */
#include "common/compat.h"
#include "common/bytes_text.h"
#include "common/xalloc.h"
#include "helper/fixture.h"
#include "helper/test_dirs.h"

#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

static void expect(double bytes, const char *want)
{
	struct nx_strbuf sb = NX_STRBUF_INIT;

	nx_bytes_text(&sb, bytes);
	if (strcmp(sb.buf, want))
		fail_msg("%.17g bytes: '%s', not '%s'", bytes, sb.buf, want);
	nx_strbuf_release(&sb);
}

static void test_values(void **state)
{
	(void)state;
	expect(0, "0 B");
	expect(512, "512 B");
	expect(1023, "1023 B");
	expect(1024, "1.00 KiB");
	expect(1152, "1.13 KiB"); /* 1.125: the half rounded up, as toFixed */
	expect(1536, "1.50 KiB");
	expect(1048575, "1024.00 KiB");
	expect(1048576, "1.00 MiB");
	expect(5435817984.0, "5.06 GiB"); /* a real NKI kernel's 5435.818 MB */
	expect(3 * 1099511627776.0, "3.00 TiB");
	expect(2048 * 1099511627776.0, "2048.00 TiB");
	expect(-2048, "-2.00 KiB");
	expect(-1152, "-1.13 KiB");
	expect(-5, "-5 B");
	expect(NAN, "n/a");
	expect(INFINITY, "n/a");
}

/* The values of the comparison: each unit's edges and halves, and spread at random
 * over 1 B to 2^50 B (seeded). */
static size_t values(double *v, size_t cap)
{
	static const double fixed[] = { 0, 1, 1023, 1024, 1025, 1152, 1160, 10239, 10240,
					1048064, 1048575, 1048576, 1073741823, 1073741824 };
	unsigned seed = 41;
	size_t n = 0;

	for (size_t i = 0; i < NX_ARRAY_SIZE(fixed); i++)
		v[n++] = fixed[i];
	for (int u = 1; u <= 4; u++)
		for (int k = 1; k < 40 && n < cap; k += 2) /* 1.125, 1.375, ...: halves */
			v[n++] = ldexp(1, 10 * u) * (1 + k / 8.0);
	while (n < cap) {
		double x = ldexp((double)(rand_r(&seed) & 0xfffff), rand_r(&seed) % 31);

		v[n] = n % 7 ? x : -x;
		n++;
	}
	return n;
}

static void test_same_as_the_ui(void **state)
{
	double v[2000];
	size_t n = values(v, NX_ARRAY_SIZE(v));
	const char *src = getenv("NX_SOURCE_DIR");
	char *dir = nx_test_dir("bytes-text"), *in, *out, *line = NULL;
	size_t cap = 0, i = 0;
	FILE *f;

	(void)state;
	assert_non_null(src);
	in = nx_xasprintf("%s/values.txt", dir);
	out = nx_xasprintf("%s/ui.txt", dir);
	f = fopen(in, "w");
	assert_non_null(f);
	for (i = 0; i < n; i++)
		fprintf(f, "%.17g\n", v[i]);
	assert_int_equal(fclose(f), 0);
	/* api.js as the page runs it, its NX returned */
	assert_int_equal(nx_test_sh("node -e \"const fs = require('fs');"
				    "const NX = new Function("
				    "fs.readFileSync(process.argv[1], 'utf8') + ';return NX;')();"
				    "for (const l of fs.readFileSync(process.argv[2], 'utf8')"
				    ".trim().split('\\n')) console.log(NX.fmtBytes(Number(l)));\" "
				    "'%s/ui/api.js' '%s' > '%s'", src, in, out), 0);
	f = fopen(out, "r");
	assert_non_null(f);
	for (i = 0; getline(&line, &cap, f) > 0; i++) {
		struct nx_strbuf sb = NX_STRBUF_INIT;

		line[strcspn(line, "\n")] = '\0';
		assert_true(i < n);
		nx_bytes_text(&sb, v[i]);
		if (strcmp(sb.buf, line))
			fail_msg("%.17g bytes: '%s' here, '%s' in the UI", v[i], sb.buf, line);
		nx_strbuf_release(&sb);
	}
	assert_int_equal(i, n);
	fclose(f);
	free(line);
	free(in);
	free(out);
	free(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_values),
		cmocka_unit_test(test_same_as_the_ui),
	};

	return nx_test_done(cmocka_run_group_tests(tests, NULL, NULL));
}
