/* SPDX-License-Identifier: MIT
 * recommend.c: the public entry of the analysis (recommend.h): option parsing
 * helpers, one or two profiles analysed, the report rendered. */
#include "common/compat.h"
#include "analysis/recommend.h"
#include "analysis/rec.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

void nx_recommend_opts_init(struct nx_recommend_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->window = NX_REC_WIN_WHOLE;
	o->format = NX_REC_MARKDOWN;
}

static int parse_ts(const char *s, const char *end, int64_t *out)
{
	char buf[32];
	char *stop;
	size_t len = (size_t)(end - s);

	if (!len || len >= sizeof(buf))
		return -1;
	memcpy(buf, s, len);
	buf[len] = '\0';
	errno = 0;
	long long v = strtoll(buf, &stop, 10);
	if (errno || *stop)
		return -1;
	*out = v;
	return 0;
}

int nx_recommend_parse_window(struct nx_recommend_opts *o, const char *text, struct nx_err *err)
{
	const char *colon = strchr(text, ':');

	if (!strcmp(text, "kernel")) {
		o->window = NX_REC_WIN_KERNEL;
		return 0;
	}
	if (!strcmp(text, "dpa")) {
		o->window = NX_REC_WIN_DPA;
		return 0;
	}
	if (!strcmp(text, "whole")) {
		o->window = NX_REC_WIN_WHOLE;
		return 0;
	}
	if (!colon || parse_ts(text, colon, &o->t0_ns) ||
	    parse_ts(colon + 1, text + strlen(text), &o->t1_ns))
		return nx_errf(err, NX_EUSAGE, "bad window '%s' (want T0:T1 in ns, 'kernel', "
			       "'dpa' or 'whole')", text);
	if (o->t0_ns < 0 || o->t1_ns < 0)
		return nx_errf(err, NX_EUSAGE, "bad window '%s': T0 and T1 are profile timestamps "
			       "in ns, 0 or more", text);
	if (o->t1_ns <= o->t0_ns)
		return nx_errf(err, NX_EUSAGE, "empty window '%s': T1 must be above T0", text);
	o->window = NX_REC_WIN_RANGE;
	return 0;
}

int nx_recommend_run(const struct nx_recommend_opts *o, struct nx_strbuf *out,
		     struct nx_err *err)
{
	struct nx_rec_result *a = calloc(1, sizeof(*a)), *b = NULL;
	int rc;

	if (!a)
		return nx_errf(err, -ENOMEM, "out of memory");
	if (!o->profile_dir) {
		rc = nx_errf(err, NX_EUSAGE, "no profile directory given");
		goto out;
	}
	rc = nx__rec_analyse(o, o->profile_dir, a, err);
	if (rc)
		goto out;
	a->source_root = o->source_root;
	a->details = o->details;
	if (o->compare_dir) {
		b = calloc(1, sizeof(*b));
		if (!b) {
			rc = nx_errf(err, -ENOMEM, "out of memory");
			goto out;
		}
		rc = nx__rec_analyse(o, o->compare_dir, b, err);
		if (rc)
			goto out;
		b->source_root = o->source_root;
		b->details = o->details;
		if (o->format == NX_REC_JSON)
			nx__rec_compare_json(a, b, out);
		else
			nx__rec_compare_md(a, b, out);
	} else if (o->format == NX_REC_JSON) {
		nx__rec_report_json(a, out);
	} else {
		nx__rec_report_md(a, out);
	}
out:
	if (a)
		nx__rec_result_release(a);
	if (b)
		nx__rec_result_release(b);
	free(a);
	free(b);
	return rc;
}
