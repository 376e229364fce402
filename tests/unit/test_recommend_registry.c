/* SPDX-License-Identifier: MIT
 * test_recommend_registry.c: the investigations of recommend are one list (rec.h,
 * NX_REC_INVESTIGATIONS), and nothing that names them drifts from it: the ids are unique and
 * are the "Finding ids" of docs/recommend.md, no more and no fewer; `recommend --help`
 * (the real binary) lists every id with its title. */
#include "common/compat.h"
#include "analysis/rec.h"
#include "analysis/recommend.h"
#include "common/fsutil.h"
#include "common/strbuf.h"
#include "common/xalloc.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

static void table_and_list_agree(void **state)
{
	(void)state;
	for (size_t i = 0; i < NX_REC_NINV; i++) {
		const char *title = NULL;
		assert_string_equal(nx_recommend_investigation(i, &title),
				    nx__rec_investigations[i]->id);
		assert_string_equal(title, nx__rec_investigations[i]->title);
		assert_ptr_equal(nx__rec_investigation(nx__rec_investigations[i]->id),
				 nx__rec_investigations[i]);
		for (size_t k = 0; k < i; k++)
			assert_string_not_equal(nx__rec_investigations[k]->id,
						nx__rec_investigations[i]->id);
	}
	assert_null(nx_recommend_investigation(NX_REC_NINV, NULL));
}

/* The ids after "Finding ids:" in docs/recommend.md, up to the sentence's end: each
 * `id` then a ',' or a '.'. */
static void doc_ids(const char *text, struct nx_strbuf *ids)
{
	const char *p = strstr(text, "Finding ids:");

	assert_non_null(p);
	for (p += strlen("Finding ids:"); *p && *p != '.'; p++) {
		if (*p != '`')
			continue;
		const char *e = strchr(p + 1, '`');
		assert_non_null(e);
		nx_strbuf_add(ids, p + 1, (size_t)(e - p - 1));
		nx_strbuf_addch(ids, '\n');
		p = e;
	}
}

static void docs_name_every_id(void **state)
{
	struct nx_strbuf want = NX_STRBUF_INIT, got = NX_STRBUF_INIT;
	struct nx_err err = { 0 };
	const char *src = getenv("NX_SOURCE_DIR");
	char *path, *text = NULL;

	(void)state;
	assert_non_null(src);
	path = nx_path_join(src, "docs/recommend.md");
	if (nx_read_file(path, &text, NULL, &err))
		fail_msg("%s", err.msg);
	doc_ids(text, &got);
	for (size_t i = 0; i < NX_REC_NINV; i++)
		nx_strbuf_addf(&want, "%s\n", nx__rec_investigations[i]->id);
	assert_string_equal(nx_strbuf_str(&got), nx_strbuf_str(&want));
	nx_strbuf_release(&want);
	nx_strbuf_release(&got);
	free(text);
	free(path);
}

static void help_lists_every_investigation(void **state)
{
	const char *bin = getenv("NX_BIN");
	struct nx_strbuf help = NX_STRBUF_INIT;
	char buf[4096], *cmd, line[256];
	size_t n;
	FILE *f;

	(void)state;
	assert_non_null(bin);
	cmd = nx_xasprintf("'%s' recommend --help", bin);
	f = popen(cmd, "r");
	assert_non_null(f);
	while ((n = fread(buf, 1, sizeof(buf), f)) > 0)
		nx_strbuf_add(&help, buf, n);
	assert_int_equal(pclose(f), 0);
	for (size_t i = 0; i < NX_REC_NINV; i++) {
		snprintf(line, sizeof(line), "\n  %-18s %s\n", nx__rec_investigations[i]->id,
			 nx__rec_investigations[i]->title);
		if (!strstr(nx_strbuf_str(&help), line))
			fail_msg("recommend --help lacks the line '%s'", line + 1);
	}
	nx_strbuf_release(&help);
	free(cmd);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(table_and_list_agree),
		cmocka_unit_test(docs_name_every_id),
		cmocka_unit_test(help_lists_every_investigation),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
