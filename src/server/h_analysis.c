/* SPDX-License-Identifier: MIT
 * h_analysis.c: GET .../profile_name/<name>/analysis: the `recommend` analysis of a
 * profile (bounds, gaps, investigations with source lines) as JSON, or Markdown with
 * format=markdown. Query parameters: window=T0:T1|kernel|dpa|whole (default whole),
 * compare=<other profile> for the before/after report (this profile is "before"),
 * part=bounds for the bounds, gaps, engines and bottleneck alone (no investigations: what
 * the web UI's profile list shows, so the bottleneck has one definition); that reply is
 * kept with the profile version, which never changes.
 * Only our own SQL runs here; the parameters are parsed, never pasted into SQL. */
#include "common/compat.h"
#include "server/http.h"
#include "analysis/recommend.h"
#include "common/xalloc.h"
#include "server/registry.h"

#include <string.h>

enum MHD_Result nx__h_analysis(struct nx_req *rq, char **cap)
{
	const char *window = MHD_lookup_connection_value(rq->conn, MHD_GET_ARGUMENT_KIND, "window");
	const char *format = MHD_lookup_connection_value(rq->conn, MHD_GET_ARGUMENT_KIND, "format");
	const char *compare =
		MHD_lookup_connection_value(rq->conn, MHD_GET_ARGUMENT_KIND, "compare");
	const char *part = MHD_lookup_connection_value(rq->conn, MHD_GET_ARGUMENT_KIND, "part");
	struct nx_recommend_opts o;
	struct nx_strbuf sb = NX_STRBUF_INIT;
	struct nx_err err = { 0 };
	struct nx_profile *p, *q = NULL;
	enum MHD_Result ret = MHD_NO;
	bool markdown = false;
	int rc;

	nx_recommend_opts_init(&o);
	if (format && !strcmp(format, "markdown"))
		markdown = true;
	else if (format && strcmp(format, "json"))
		return nx__reply_error(rq, 400, "bad_request",
				       "unknown format '%.40s': use json or markdown", format);
	if (part && strcmp(part, "bounds") && strcmp(part, "all"))
		return nx__reply_error(rq, 400, "bad_request",
				       "unknown part '%.40s': use bounds or all", part);
	o.bounds_only = part && !strcmp(part, "bounds");
	if (o.bounds_only && (markdown || compare))
		return nx__reply_error(rq, 400, "bad_request",
				       "part=bounds is JSON of one profile: no format=markdown, "
				       "no compare");
	if (window && strcmp(window, "whole") && nx_recommend_parse_window(&o, window, &err))
		return nx__reply_error(rq, 400, "bad_request", "window: %s", err.msg);
	p = nx__lookup_profile(rq, cap, false, &ret);
	if (!p)
		return ret;
	if (compare && nx__reg_get(&rq->s->reg, compare, false, &q, &err)) {
		nx__reg_put(&rq->s->reg, p);
		return nx__reply_nx_err(rq, &err);
	}
	if (o.bounds_only && !window) { /* made once per profile version */
		pthread_mutex_lock(&p->bounds_lock);
		if (p->bounds_json)
			nx_strbuf_addstr(&sb, p->bounds_json);
		pthread_mutex_unlock(&p->bounds_lock);
		if (sb.len) {
			nx__reg_put(&rq->s->reg, p);
			return nx__reply_json(rq, 200, &sb);
		}
	}
	o.profile_dir = p->dir;
	o.compare_dir = q ? q->dir : NULL;
	o.format = markdown ? NX_REC_MARKDOWN : NX_REC_JSON;
	o.threads = rq->s->o.threads;
	nx__query_slot_take(rq->s);
	rc = nx_recommend_run(&o, &sb, &err);
	nx__query_slot_give(rq->s);
	if (!rc && o.bounds_only && !window) {
		pthread_mutex_lock(&p->bounds_lock);
		if (!p->bounds_json)
			p->bounds_json = nx_xstrdup(nx_strbuf_str(&sb));
		pthread_mutex_unlock(&p->bounds_lock);
	}
	if (q)
		nx__reg_put(&rq->s->reg, q);
	nx__reg_put(&rq->s->reg, p);
	if (rc) {
		nx_strbuf_release(&sb);
		return nx__reply_error(rq, 500, "analysis_failed", "%s", err.msg);
	}
	if (markdown)
		return nx__reply(rq, 200, "text/markdown; charset=utf-8", &sb);
	return nx__reply_json(rq, 200, &sb);
}
