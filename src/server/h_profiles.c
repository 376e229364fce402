/* SPDX-License-Identifier: MIT
 * h_profiles.c: health, the profile listing, one profile's summary and its
 * artifact list. None of these touch DuckDB: they read the directory only. */
#include "common/compat.h"
#include "server/http.h"
#include "common/json_writer.h"
#include "common/source_archive.h"
#include "common/xalloc.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

enum MHD_Result nx__h_health(struct nx_req *rq, char **cap)
{
	struct nx_strbuf sb = NX_STRBUF_INIT;
	struct nx_jw jw;

	(void)cap;
	nx_jw_init(&jw, &sb, false);
	nx_jw_object_begin(&jw);
	nx_jw_key(&jw, "status");
	nx_jw_string(&jw, "healthy");
	nx_jw_key(&jw, "service");
	nx_jw_string(&jw, "neuron-explorer");
	nx_jw_key(&jw, "version");
	nx_jw_string(&jw, NX_VERSION);
	nx_jw_object_end(&jw);
	return nx__reply_json(rq, 200, &sb);
}

static void iso_time(struct nx_jw *jw, const struct timespec *t)
{
	char buf[32];
	struct tm tm;

	gmtime_r(&t->tv_sec, &tm);
	strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%SZ", &tm);
	nx_jw_string(jw, buf);
}

/* The fields every profile object shares. */
static void profile_fields(struct nx_jw *jw, const struct nx_profile *p)
{
	nx_jw_key(jw, "name");
	nx_jw_string(jw, p->name);
	nx_jw_key(jw, "namespace");
	nx_jw_string(jw, "global");
	nx_jw_key(jw, "updated");
	iso_time(jw, &p->mtime);
	nx_jw_key(jw, "table_count");
	nx_jw_uint(jw, p->files.n);
	nx_jw_key(jw, "has_source_code");
	nx_jw_bool(jw, p->files.has_source);
}

enum MHD_Result nx__h_profiles(struct nx_req *rq, char **cap)
{
	struct nx_strbuf sb = NX_STRBUF_INIT;
	struct nx_err err = { 0 };
	char **names = NULL;
	size_t n = 0;
	struct nx_jw jw;

	(void)cap;
	if (nx__reg_names(&rq->s->reg, &names, &n, &err))
		return nx__reply_nx_err(rq, &err);
	nx_jw_init(&jw, &sb, false);
	nx_jw_object_begin(&jw);
	nx_jw_key(&jw, "namespace");
	nx_jw_string(&jw, "global");
	nx_jw_key(&jw, "profiles");
	nx_jw_array_begin(&jw);
	for (size_t i = 0; i < n; i++) {
		struct nx_profile *p = NULL;

		nx_err_clear(&err);
		if (nx__reg_get(&rq->s->reg, names[i], false, &p, &err))
			continue; /* vanished or unusable since the listing */
		nx_jw_object_begin(&jw);
		profile_fields(&jw, p);
		nx_jw_object_end(&jw);
		nx__reg_put(&rq->s->reg, p);
	}
	nx_jw_array_end(&jw);
	nx_jw_object_end(&jw);
	nx__reg_names_free(names, n);
	return nx__reply_json(rq, 200, &sb);
}

struct nx_profile *nx__lookup_profile(struct nx_req *rq, char **cap, bool open_db,
				       enum MHD_Result *ret)
{
	struct nx_err err = { 0 };
	struct nx_profile *p = NULL;

	if (strcmp(cap[0], "global")) {
		*ret = nx__reply_error(rq, 404, "not_found",
				       "unknown namespace '%.100s': profiles live in 'global'",
				       cap[0]);
		return NULL;
	}
	if (nx__reg_get(&rq->s->reg, cap[1], open_db, &p, &err)) {
		*ret = nx__reply_nx_err(rq, &err);
		return NULL;
	}
	return p;
}

enum MHD_Result nx__h_profile(struct nx_req *rq, char **cap)
{
	struct nx_strbuf sb = NX_STRBUF_INIT;
	enum MHD_Result ret = MHD_NO;
	struct nx_profile *p = nx__lookup_profile(rq, cap, false, &ret);
	struct nx_jw jw;

	if (!p)
		return ret;
	nx_jw_init(&jw, &sb, false);
	nx_jw_object_begin(&jw);
	profile_fields(&jw, p);
	nx_jw_key(&jw, "tables");
	nx_jw_array_begin(&jw);
	for (size_t i = 0; i < p->files.n; i++)
		nx_jw_string(&jw, p->files.t[i].name);
	nx_jw_array_end(&jw);
	nx_jw_object_end(&jw);
	nx__reg_put(&rq->s->reg, p);
	return nx__reply_json(rq, 200, &sb);
}

static void artifact(struct nx_jw *jw, const struct nx_profile *p, const char *type,
		     const char *file, uint64_t size)
{
	char *url = nx_xasprintf("/api/v1/profiles/namespace/global/profile_name/%s/fs/%s",
				 p->name, file);

	nx_jw_object_begin(jw);
	nx_jw_key(jw, "type");
	nx_jw_string(jw, type);
	nx_jw_key(jw, "name");
	nx_jw_string(jw, file);
	nx_jw_key(jw, "size");
	nx_jw_uint(jw, size);
	nx_jw_key(jw, "url");
	nx_jw_string(jw, url);
	if (!strcmp(type, "source-code")) {
		/* the one cap of an attached archive (`upload` refuses more): the UI's limit */
		nx_jw_key(jw, "unpacked_limit");
		nx_jw_uint(jw, NX_SOURCE_ARCHIVE_MAX);
	}
	nx_jw_object_end(jw);
	free(url);
}

/* Whether `type` is listed in the comma-separated `types` (NULL = all). */
static bool wanted(const char *types, const char *type)
{
	size_t n = strlen(type);

	for (const char *p = types; p && *p;) {
		size_t len = strcspn(p, ",");
		if (len == n && !strncmp(p, type, n))
			return true;
		p += len + (p[len] == ',');
	}
	return !types || !*types;
}

enum MHD_Result nx__h_artifacts(struct nx_req *rq, char **cap)
{
	const char *types =
		MHD_lookup_connection_value(rq->conn, MHD_GET_ARGUMENT_KIND, "types");
	struct nx_strbuf sb = NX_STRBUF_INIT;
	enum MHD_Result ret = MHD_NO;
	struct nx_profile *p;
	struct nx_jw jw;

	for (const char *t = types; t && *t;) {
		size_t len = strcspn(t, ",");
		if (!((len == 11 && !strncmp(t, "source-code", 11)) ||
		      (len == 7 && !strncmp(t, "parquet", 7))))
			return nx__reply_error(rq, 400, "bad_request",
					       "unknown artifact type '%.*s' in 'types': use "
					       "source-code and/or parquet", (int)len, t);
		t += len + (t[len] == ',');
	}
	p = nx__lookup_profile(rq, cap, false, &ret);
	if (!p)
		return ret;
	nx_jw_init(&jw, &sb, false);
	nx_jw_object_begin(&jw);
	nx_jw_key(&jw, "profile");
	nx_jw_string(&jw, p->name);
	nx_jw_key(&jw, "namespace");
	nx_jw_string(&jw, "global");
	nx_jw_key(&jw, "artifacts");
	nx_jw_array_begin(&jw);
	if (wanted(types, "source-code") && p->files.has_source)
		artifact(&jw, p, "source-code", NX_SOURCE_ARCHIVE, p->files.source_bytes);
	if (wanted(types, "parquet")) {
		for (size_t i = 0; i < p->files.n; i++) {
			const struct nx_ptable *t = &p->files.t[i];
			for (size_t j = 0; j < t->nfiles; j++) {
				char *file = nx__ptable_file(t, j);

				artifact(&jw, p, "parquet", file, t->sizes[j]);
				free(file);
			}
		}
	}
	nx_jw_array_end(&jw);
	nx_jw_object_end(&jw);
	nx__reg_put(&rq->s->reg, p);
	return nx__reply_json(rq, 200, &sb);
}
