/* SPDX-License-Identifier: MIT
 * test_server_routes.c: the route list (src/server/routes.h) and docs/api.md cannot
 * drift: every route has an endpoint heading in docs/api.md ("### `GET /api/v1/...`",
 * where ".../{name}/" abbreviates the profile prefix) and every heading a route; no
 * route is listed twice; only the health check is quick. */
#include "common/compat.h"
#include "common/fsutil.h"
#include "common/strbuf.h"
#include "server/http.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

/* How docs/api.md abbreviates the profile routes' prefix in a heading. */
#define DOC_ELLIPSIS ".../{name}/"
#define DOC_PREFIX "/api/v1/profiles/namespace/global/profile_name/{name}/"

/* A path with each variable segment ('*', '**', "{x}", and the namespace "global")
 * written as '*', followed by the method: "GET /api/v1/db/x/_search" style keys. */
static char *key_of(const char *method, const char *path, size_t len)
{
	struct nx_strbuf k = NX_STRBUF_INIT;
	const char *p = path, *end = path + len;

	nx_strbuf_addf(&k, "%s ", method);
	while (p < end) {
		const char *slash = memchr(p + 1, '/', (size_t)(end - p - 1));
		const char *seg_end = slash ? slash : end;
		size_t n = (size_t)(seg_end - p); /* with its leading '/' */
		if ((n >= 3 && p[1] == '{' && seg_end[-1] == '}') ||
		    (n == 2 && p[1] == '*') || (n == 3 && p[1] == '*' && p[2] == '*') ||
		    (n == 7 && !strncmp(p, "/global", 7)))
			nx_strbuf_addstr(&k, "/*");
		else
			nx_strbuf_add(&k, p, n);
		p = seg_end;
	}
	return nx_strbuf_detach(&k, NULL);
}

struct keys {
	char **k;
	size_t n;
};

static void add(struct keys *ks, char *k)
{
	ks->k = realloc(ks->k, (ks->n + 1) * sizeof(*ks->k));
	assert_non_null(ks->k);
	ks->k[ks->n++] = k;
}

static bool has(const struct keys *ks, const char *k)
{
	for (size_t i = 0; i < ks->n; i++)
		if (!strcmp(ks->k[i], k))
			return true;
	return false;
}

static void release(struct keys *ks)
{
	for (size_t i = 0; i < ks->n; i++)
		free(ks->k[i]);
	free(ks->k);
}

/* The endpoints docs/api.md has a heading for: "#... `METHOD PATH[?query]`". */
static void doc_keys(const char *text, struct keys *ks)
{
	for (const char *l = text; l && *l; l = strchr(l, '\n'), l = l ? l + 1 : NULL) {
		const char *p = l, *method;
		size_t mlen;

		if (*p != '#')
			continue;
		while (*p == '#')
			p++;
		if (strncmp(p, " `", 2))
			continue;
		method = p + 2;
		mlen = strspn(method, "ABCDEFGHIJKLMNOPQRSTUVWXYZ");
		if (!mlen || method[mlen] != ' ')
			continue;
		const char *path = method + mlen + 1;
		size_t plen = strcspn(path, "?[` \n");
		struct nx_strbuf full = NX_STRBUF_INIT;
		if (!strncmp(path, DOC_ELLIPSIS, strlen(DOC_ELLIPSIS))) {
			nx_strbuf_addstr(&full, DOC_PREFIX);
			nx_strbuf_add(&full, path + strlen(DOC_ELLIPSIS),
				      plen - strlen(DOC_ELLIPSIS));
		} else {
			nx_strbuf_add(&full, path, plen);
		}
		char m[16];
		snprintf(m, sizeof(m), "%.*s", (int)mlen, method);
		add(ks, key_of(m, full.buf, full.len));
		nx_strbuf_release(&full);
	}
}

static void routes_match_the_docs(void **state)
{
	struct nx_err err = { 0 };
	struct keys docs = { 0 }, routes = { 0 };
	const char *src = getenv("NX_SOURCE_DIR");
	char *path, *text = NULL;
	bool bad = false;

	(void)state;
	assert_non_null(src);
	path = nx_path_join(src, "docs/api.md");
	if (nx_read_file(path, &text, NULL, &err))
		fail_msg("%s", err.msg);
	doc_keys(text, &docs);
	assert_true(docs.n >= 10); /* the headings were found at all */
	for (size_t i = 0; i < nx__route_count; i++) {
		const struct nx_route *r = &nx__routes[i];
		char *k = key_of(r->method, r->pattern, strlen(r->pattern));
		if (has(&routes, k)) {
			print_error("route listed twice: %s\n", k);
			bad = true;
		}
		if (!has(&docs, k)) {
			print_error("route without a heading in docs/api.md: %s %s\n", r->method,
				    r->pattern);
			bad = true;
		}
		assert_non_null(r->fn);
		if (r->quick != !strcmp(r->pattern, "/api/v1/health")) {
			print_error("only the health check is quick: %s\n", r->pattern);
			bad = true;
		}
		add(&routes, k);
	}
	for (size_t i = 0; i < docs.n; i++) {
		if (!has(&routes, docs.k[i])) {
			print_error("docs/api.md documents an endpoint with no route: %s\n",
				    docs.k[i]);
			bad = true;
		}
	}
	assert_false(bad);
	release(&docs);
	release(&routes);
	free(text);
	free(path);
}

/* The comparison itself: a missing heading and an abbreviated one are told apart. */
static void keys(void **state)
{
	struct keys ks = { 0 };
	char *k;

	(void)state;
	doc_keys("# HTTP API\n### `GET /api/v1/health`\ntext `GET /x`\n"
		 "#### `GET .../{name}/timeline/tracks[?dma=packets]`\n"
		 "### `GET /api/v1/profiles/namespace/global/profile_name/{name}/fs/{path}`\n"
		 "#### `databaseExplorerQuery`\n", &ks);
	assert_int_equal(ks.n, 3);
	assert_string_equal(ks.k[0], "GET /api/v1/health");
	assert_string_equal(ks.k[1],
			    "GET /api/v1/profiles/namespace/*/profile_name/*/timeline/tracks");
	assert_string_equal(ks.k[2], "GET /api/v1/profiles/namespace/*/profile_name/*/fs/*");
	k = key_of("GET", NX_PROFILE_ROUTE "/fs/**", strlen(NX_PROFILE_ROUTE "/fs/**"));
	assert_string_equal(k, ks.k[2]);
	free(k);
	release(&ks);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(keys),
		cmocka_unit_test(routes_match_the_docs),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
