/* SPDX-License-Identifier: MIT
 * h_ui.c: serves the embedded web UI (src/ui/) on the UI port. "/<file>" with an
 * extension is that asset; every other path ("/", "/profile/<name>", "/sql/<name>") is a
 * page of the single-page app and gets index.html, whose script routes on the URL. */
#include "common/compat.h"
#include "server/http.h"
#include "ui/ui_assets.h"

#include <string.h>

static const char *content_type(const char *name)
{
	const char *dot = strrchr(name, '.');

	if (dot && !strcmp(dot, ".html"))
		return "text/html; charset=utf-8";
	if (dot && !strcmp(dot, ".js"))
		return "text/javascript; charset=utf-8";
	if (dot && !strcmp(dot, ".css"))
		return "text/css; charset=utf-8";
	if (dot && !strcmp(dot, ".svg"))
		return "image/svg+xml";
	return "application/octet-stream";
}

enum MHD_Result nx__h_ui(struct nx_req *rq, const char *path)
{
	const char *base = path[0] == '/' ? path + 1 : path;
	const struct nx_ui_asset *a = NULL;
	struct MHD_Response *resp;

	if (!strchr(base, '/') && strchr(base, '.'))
		a = nx_ui_asset_find(base);
	else
		a = nx_ui_asset_find("index.html");
	if (!a)
		return nx__reply_error(rq, 404, "not_found", "the UI has no file '%.200s'", path);
	resp = MHD_create_response_from_buffer(a->len, (void *)a->data, MHD_RESPMEM_PERSISTENT);
	if (!resp)
		return MHD_NO;
	MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, content_type(a->name));
	MHD_add_response_header(resp, "X-Content-Type-Options", "nosniff");
	MHD_add_response_header(resp, "X-Frame-Options", "DENY");
	MHD_add_response_header(resp, "Content-Security-Policy",
				"default-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; "
				"frame-ancestors 'none'");
	MHD_add_response_header(resp, MHD_HTTP_HEADER_CACHE_CONTROL, "no-cache");
	return nx__reply_take(rq, 200, resp, a->len);
}
