/* SPDX-License-Identifier: MIT
 * summary_print.c: summary-json / summary-text from the Summary.parquet of each device
 * profile (see summary_print.h), through DuckDB, in the schema's field order, made as
 * text (src/cli writes it out). */
#include "common/compat.h"
#include "export/summary_print.h"
#include "common/fsutil.h"
#include "common/json_writer.h"
#include "common/strbuf.h"
#include "common/xalloc.h"
#include "db/duck.h"
#include "db/profile_views.h"
#include "export/profile_set.h"

#include <stdlib.h>
#include <string.h>

struct printer {
	struct nx_jw jw;
	struct nx_strbuf text;
	bool json;
	size_t cells; /* of the current profile's first row */
};

static void cell(void *arg, size_t row, const char *column, int kind, const char *text)
{
	struct printer *p = arg;

	if (row > 0)
		return;
	if (!p->cells++ && p->json)
		nx_jw_object_begin(&p->jw);
	if (!p->json) {
		nx_strbuf_addf(&p->text, "%-44s %s\n", column,
			       kind == NX_CELL_NULL ? "null" : text);
		return;
	}
	nx_jw_key(&p->jw, column);
	switch (kind) {
	case NX_CELL_NULL: nx_jw_null(&p->jw); break;
	case NX_CELL_INT: case NX_CELL_FLOAT: case NX_CELL_BOOL: nx_jw_raw(&p->jw, text); break;
	default: nx_jw_string(&p->jw, text); break;
	}
}

/* SELECT <what> over the Summary table of dir (a table with a file: has_row), then tail. */
static int summary_sql(struct nx_strbuf *sql, const char *what, const char *dir,
		       const char *tail, struct nx_err *err)
{
	nx_strbuf_addf(sql, "SELECT %s FROM ", what);
	if (nx_db_add_table_scan(sql, dir, "Summary", err))
		return nx_err_wrap(err, "reading the Summary of '%s'", dir);
	nx_strbuf_addstr(sql, tail);
	return 0;
}

/* Appends one profile's entry; its Summary has a row (has_row). */
static int entry(struct nx_duck *d, struct printer *p, const struct nx_profile_ref *ref,
		 bool several, struct nx_err *err)
{
	struct nx_strbuf sql = NX_STRBUF_INIT;
	int rc = summary_sql(&sql, "*", ref->dir, " LIMIT 1", err);

	if (rc)
		goto out;
	if (p->json)
		nx_jw_key(&p->jw, ref->name);
	else if (several)
		nx_strbuf_addf(&p->text, "%s%-44s %s\n", p->text.len ? "\n" : "", "profile_name",
			       ref->name);
	p->cells = 0;
	if ((rc = nx_duck_query_cells(d, sql.buf, cell, p, err)))
		nx_err_wrap(err, "reading the Summary of '%s'", ref->dir);
	else if (!p->cells)
		rc = nx_errf(err, NX_ENOTFOUND, "the Summary of '%s' has no row", ref->dir);
	else if (p->json)
		nx_jw_object_end(&p->jw);
out:
	nx_strbuf_release(&sql);
	return rc;
}

/* Whether a profile's Summary has a row: the JSON writer cannot take a key back, so the
 * profiles without one are found first. */
static int has_row(struct nx_duck *d, const char *dir, bool *yes, struct nx_err *err)
{
	const char *dirs[] = { dir, NULL };
	struct nx_strbuf sql = NX_STRBUF_INIT;
	int64_t n = 0;
	int rc = 0;

	if (nx_db_table_has_file(dirs, "Summary") &&
	    !(rc = summary_sql(&sql, "count(*)", dir, "", err)) &&
	    (rc = nx_duck_query_i64(d, sql.buf, &n, err)))
		nx_err_wrap(err, "reading the Summary of '%s'", dir);
	*yes = !rc && n > 0;
	nx_strbuf_release(&sql);
	return rc;
}

int nx_summary_format(const char *dir, const char *name, bool json, struct nx_strbuf *out,
		      struct nx_err *err)
{
	struct nx_profile_set set;
	struct nx_duck *d = NULL;
	struct nx_strbuf jbuf = NX_STRBUF_INIT;
	struct printer p = { .json = json };
	size_t entries = 0;
	int rc;

	if (!nx_is_dir(dir))
		return nx_errf(err, NX_ENOTFOUND, "profile directory '%s' does not exist", dir);
	if ((rc = nx_profile_set_of(dir, name, &set, err)))
		return rc;
	if ((rc = nx_duck_open(&d, 1, NULL, err)))
		goto out;
	nx_jw_init(&p.jw, &jbuf, true);
	if (json)
		nx_jw_object_begin(&p.jw);
	for (size_t i = 0; i < set.n && !rc; i++) {
		bool yes;
		if ((rc = has_row(d, set.p[i].dir, &yes, err)) || !yes)
			continue;
		rc = entry(d, &p, &set.p[i], set.n > 1, err);
		entries++;
	}
	if (!rc && !entries && set.fleet)
		rc = nx_errf(err, NX_ENOTFOUND, "fleet run '%s' has no device Summary: none of "
			     "its members has a Summary row yet; %s describes device profiles",
			     name, json ? "summary-json" : "summary-text");
	else if (!rc && !entries)
		rc = nx_errf(err, NX_ENOTFOUND, "profile '%s' has no device Summary: it holds "
			     "framework traces only, no NEFF/NTFF pair; %s describes a device "
			     "profile (--output-format perfetto exports the trace's events)", name,
			     json ? "summary-json" : "summary-text");
	if (rc)
		goto out;
	if (json) {
		nx_jw_object_end(&p.jw);
		nx_strbuf_addstr(out, nx_strbuf_str(&jbuf));
		nx_strbuf_addch(out, '\n');
	} else {
		nx_strbuf_addstr(out, nx_strbuf_str(&p.text));
	}
out:
	nx_duck_close(d);
	nx_profile_set_release(&set);
	nx_strbuf_release(&jbuf);
	nx_strbuf_release(&p.text);
	return rc;
}

static bool starts(const uint8_t *h, size_t n, const char *prefix)
{
	size_t k = strlen(prefix);

	return n >= k && !memcmp(h, prefix, k);
}

static bool is_space(uint8_t c)
{
	return c == ' ' || c == '\t' || c == '\r' || c == '\n';
}

/* Whether the key at h[i] (a quote) is "total_time" followed by a colon. */
static bool total_time_key(const uint8_t *h, size_t n, size_t i)
{
	static const char key[] = "\"total_time\"";
	size_t j = i + sizeof(key) - 1;

	if (n < j || memcmp(h + i, key, sizeof(key) - 1))
		return false;
	while (j < n && is_space(h[j]))
		j++;
	return j < n && h[j] == ':';
}

static bool is_summary_json(const uint8_t *h, size_t n)
{
	size_t i = 0;
	int depth = 0;

	if (starts(h, n, "{\n  \"total_time\":"))
		return true;
	while (i < n && is_space(h[i]))
		i++;
	if (i == n || h[i] != '{')
		return false;
	for (; i < n; i++) {
		switch (h[i]) {
		case '{': case '[':
			depth++;
			break;
		case '}': case ']':
			if (--depth <= 0)
				return false;
			break;
		case '"':
			/* each member is a profile: its fields are keys at depth 2 */
			if (depth == 2 && total_time_key(h, n, i))
				return true;
			for (i++; i < n && h[i] != '"'; i++)
				if (h[i] == '\\')
					i++;
			break;
		}
	}
	return false;
}

static bool is_summary_text(const uint8_t *h, size_t n)
{
	return starts(h, n, "total_time ") ||
	       (starts(h, n, "profile_name ") && memmem(h, n, "\ntotal_time ", 12));
}

const struct nx_out_kind nx_summary_json_out_kind = { "a summary-json document",
						      is_summary_json };
const struct nx_out_kind nx_summary_text_out_kind = { "a summary-text document",
						      is_summary_text };
