/* SPDX-License-Identifier: MIT
 * timeline_cache.c: a profile's timeline cache (lod.h) as the endpoints use it
 * (timeline.h). The cache is opened, or built, on first use and shared by the
 * profile's requests, each holding a reference. A build that fails is tried again at
 * the first request cache_retry_ms later (the profile's own tables serve meanwhile).
 * When the cache's file changed under the server (truncated, replaced: one stat before
 * each request), or a query on it fails with DuckDB's I/O error (a block that no longer
 * matches its checksum), the cache is dropped and removed, the reason logged, and the
 * request made (again) with a cache built anew, or without one; a cache the ingest left
 * in the profile is not removed but no longer used (one is built under the data path's
 * .cache instead). Notes are logged (common/log.h, level info) unless the server is quiet. */
#include "common/compat.h"
#include "server/http.h"
#include "server/timeline.h"
#include "common/xalloc.h"
#include "common/log.h"
#include "common/strbuf.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void note(struct nx_server *s, const struct nx_profile *p, const char *fmt, ...)
{
	struct nx_strbuf line = NX_STRBUF_INIT;
	va_list ap;

	if (s->o.quiet || !nx_log_enabled(NX_LOG_INFO))
		return;
	va_start(ap, fmt);
	nx_strbuf_vaddf(&line, fmt, ap);
	va_end(ap);
	nx_log(NX_LOG_INFO, "neuron-explorer api: the timeline cache of profile '%s' %s", p->name,
	       nx_strbuf_str(&line));
	nx_strbuf_release(&line);
}

struct nx_lod *nx__tl_lod_of(struct nx_server *s, struct nx_profile *p)
{
	struct nx_lod *lod;

	pthread_mutex_lock(&p->lod_lock);
	if (!p->lod && (!p->lod_error ||
			now_s() - p->lod_failed_at >= s->o.cache_retry_ms / 1000.0)) {
		struct stat st = { .st_dev = p->dev, .st_ino = p->ino, .st_mtim = p->mtime };
		struct nx_err err = { 0 };
		char *why = NULL;

		if (nx__lod_open(s->reg.data_real, p->name, p->dir, &st, &p->files,
				 !p->lod_no_carried, &s->builds, &p->lod, &why, &err)) {
			free(p->lod_error);
			p->lod_error = nx_xstrdup(err.msg[0] ? err.msg : "unknown error");
			p->lod_failed_at = now_s();
			note(s, p, "%s%s%scannot be built: %s; the profile's tables serve the "
				   "timeline, and the build is tried again after %u s",
			     why ? "was not used (" : "", why ? why : "", why ? ") and " : "",
			     p->lod_error, (s->o.cache_retry_ms + 999) / 1000);
		} else {
			free(p->lod_error);
			p->lod_error = NULL;
			p->lod->refs = 1; /* the profile's own */
			if (why && p->lod->build_s > 0)
				note(s, p, "was not used (%s): built again in %s in %.1f s", why,
				     p->lod->dir, p->lod->build_s);
			else if (why)
				note(s, p, "was not used (%s): the one in %s serves", why,
				     p->lod->dir);
		}
		free(why);
	}
	lod = p->lod;
	if (lod)
		lod->refs++;
	pthread_mutex_unlock(&p->lod_lock);
	return lod;
}

struct nx_lod *nx__tl_lod(struct nx_req *rq, struct nx_profile *p)
{
	return nx__tl_lod_of(rq->s, p);
}

void nx__tl_lod_put(struct nx_profile *p, struct nx_lod *lod)
{
	bool last;

	if (!lod)
		return;
	pthread_mutex_lock(&p->lod_lock);
	last = --lod->refs == 0;
	pthread_mutex_unlock(&p->lod_lock);
	if (last)
		nx__lod_free(lod);
}

/* After a failed query on lod: when the cache was damaged, it leaves the profile (the
 * requests still holding it let go of it later) and its directory is removed. */
static bool drop_damaged(struct nx_server *s, struct nx_profile *p, struct nx_lod *lod,
			 const struct nx_err *qerr)
{
	char *why = NULL;
	bool mine = false;

	if (!nx__lod_damaged(lod, qerr, &why))
		return false;
	pthread_mutex_lock(&p->lod_lock);
	if (p->lod == lod) {
		p->lod = NULL;
		lod->refs--; /* the profile's; the caller still holds one */
		mine = true;
	}
	if (lod->carried) /* not removed (the profile is not ours): not used again */
		p->lod_no_carried = true;
	pthread_mutex_unlock(&p->lod_lock);
	if (mine) { /* the first request to find it: the others find the new one */
		nx__lod_discard(lod);
		note(s, p, "is damaged: %s; it is built again", why);
	}
	free(why);
	return true;
}

int nx__tl_run(struct nx_req *rq, struct nx_profile *p, bool want_lod, nx__tl_body body,
	       void *arg, struct nx_strbuf *out, struct nx_err *err)
{
	size_t start = out->len;

	for (int attempt = 0;; attempt++) {
		struct nx_lod *lod = want_lod ? nx__tl_lod(rq, p) : NULL;
		int rc;

		/* a file changed under the server (one stat): DuckDB might still answer
		 * from the blocks it holds, but not for long */
		if (lod && drop_damaged(rq->s, p, lod, NULL)) {
			nx__tl_lod_put(p, lod);
			lod = nx__tl_lod(rq, p);
		}
		rc = body(rq, p, lod, arg, out, err);
		bool again = rc && lod && !attempt && drop_damaged(rq->s, p, lod, err);

		nx__tl_lod_put(p, lod);
		if (!again)
			return rc;
		out->len = start;
		if (out->buf)
			out->buf[start] = '\0';
		memset(err, 0, sizeof(*err));
	}
}

enum MHD_Result nx__tl_serve(struct nx_req *rq, struct nx_profile *p, bool want_lod,
			     nx__tl_body body, void *arg)
{
	struct nx_strbuf sb = NX_STRBUF_INIT;
	struct nx_err err = { 0 };
	enum MHD_Result ret;

	if (nx__tl_run(rq, p, want_lod, body, arg, &sb, &err))
		ret = nx__tl_query_failed(rq, &err);
	else
		ret = nx__reply_json(rq, 200, &sb);
	nx_strbuf_release(&sb);
	nx__reg_put(&rq->s->reg, p);
	return ret;
}

enum MHD_Result nx__tl_serve_window(struct nx_req *rq, char **cap, bool want_lod,
				    nx__tl_body body)
{
	struct nx__tl_window w;
	struct nx_profile *p;
	enum MHD_Result ret;

	if (!nx__tl_window_arg(rq, true, &w, &ret))
		return ret;
	p = nx__lookup_profile(rq, cap, true, &ret);
	if (!p)
		return ret;
	return nx__tl_serve(rq, p, want_lod, body, &w);
}
