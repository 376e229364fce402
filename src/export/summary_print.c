/* SPDX-License-Identifier: MIT
 * summary_print.c: summary-json / summary-text from Summary.parquet, through DuckDB,
 * in the schema's field order. */
#include "common/compat.h"
#include "export/summary_print.h"
#include "common/fsutil.h"
#include "common/json_writer.h"
#include "common/strbuf.h"
#include "common/xalloc.h"
#include "db/duck.h"

#include <stdlib.h>
#include <string.h>

struct printer {
	struct nx_jw jw;
	struct nx_strbuf text;
	bool json;
	bool any; /* the table has a row */
};

static void cell(void *arg, size_t row, const char *column, int kind, const char *text)
{
	struct printer *p = arg;

	if (row > 0)
		return;
	p->any = true;
	if (!p->json) {
		nx_strbuf_addf(&p->text, "%-44s %s\n", column, kind == NX_CELL_NULL ? "null" : text);
		return;
	}
	nx_jw_key(&p->jw, column);
	switch (kind) {
	case NX_CELL_NULL: nx_jw_null(&p->jw); break;
	case NX_CELL_INT: case NX_CELL_FLOAT: case NX_CELL_BOOL: nx_jw_raw(&p->jw, text); break;
	default: nx_jw_string(&p->jw, text); break;
	}
}

int nx_summary_print(const char *profile_dir, bool json, FILE *out, struct nx_err *err)
{
	char *path = nx_path_join(profile_dir, "Summary.parquet");
	struct nx_duck *d = NULL;
	struct nx_strbuf sql = NX_STRBUF_INIT, jbuf = NX_STRBUF_INIT;
	struct printer p = { .json = json };
	int rc = 0;

	if (!nx_is_file(path)) {
		rc = nx_errf(err, NX_ENOTFOUND, "profile '%s' has no Summary table", profile_dir);
		goto out;
	}
	if ((rc = nx_duck_open(&d, 1, NULL, err)))
		goto out;
	nx_strbuf_addstr(&sql, "SELECT * FROM read_parquet(");
	nx_sql_quote(&sql, path);
	nx_strbuf_addstr(&sql, ")");
	nx_jw_init(&p.jw, &jbuf, true);
	if (json)
		nx_jw_object_begin(&p.jw);
	rc = nx_duck_query_cells(d, sql.buf, cell, &p, err);
	if (rc)
		goto out;
	if (!p.any) {
		rc = nx_errf(err, NX_ENOTFOUND, "profile '%s' has no device Summary (its Summary "
			     "table has no row: the profile holds framework traces only, no "
			     "NEFF/NTFF pair); the summary formats describe a device profile, and "
			     "--output-format perfetto exports the trace's events", profile_dir);
		goto out;
	}
	if (json) {
		nx_jw_object_end(&p.jw);
		fprintf(out, "%s\n", nx_strbuf_str(&jbuf));
	} else {
		fputs(nx_strbuf_str(&p.text), out);
	}
out:
	nx_duck_close(d);
	nx_strbuf_release(&sql);
	nx_strbuf_release(&jbuf);
	nx_strbuf_release(&p.text);
	free(path);
	return rc;
}
