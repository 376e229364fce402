/* SPDX-License-Identifier: MIT
 * parquet_concat.c: one parquet file from parts of one schema (see parquet_concat.h).
 * Two passes over the parts' footers: the first checks every part and counts rows and
 * row groups, the second (after the data is copied) re-reads each footer and writes its
 * row groups with their offsets moved (both through db/parquet_footer.c). Field numbers
 * are those of parquet.thrift. */
#include "common/compat.h"
#include "db/parquet_concat.h"
#include "db/parquet_footer.h"
#include "db/table_files.h"
#include "db/thrift_compact.h"
#include "common/fsutil.h"
#include "common/strbuf.h"
#include "common/xalloc.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define PQ_MAGIC NX_PQ_MAGIC

/* The joined footer, flushed to fd after each part's row groups. */
static int write_footer(struct nx_pq_file *parts, size_t n, const struct nx_pq_head *h, int fd,
			const char *out, uint64_t *footer_len, struct nx_err *err)
{
	struct nx_strbuf b = NX_STRBUF_INIT;
	int64_t rows = 0;
	uint64_t groups = 0, ordinal = 0, pos = 4, len = 0;
	int rc = 0;

	for (size_t i = 0; i < n; i++) {
		rows += parts[i].rows;
		groups += parts[i].row_groups;
	}
	if (groups > UINT32_MAX)
		return nx_errf(err, NX_EUSAGE, "'%s': too many row groups to join", out);
	nx_tc_write_field(&b, 0, NX_TC_I32, 1);
	nx_tc_write_zigzag(&b, h->version);
	nx_tc_write_field(&b, 1, NX_TC_LIST, 2);
	nx_strbuf_add(&b, h->footer + h->schema[0], h->schema[1] - h->schema[0]);
	nx_tc_write_field(&b, 2, NX_TC_I64, 3);
	nx_tc_write_zigzag(&b, rows);
	nx_tc_write_field(&b, 3, NX_TC_LIST, 4);
	nx_tc_write_list(&b, (uint32_t)groups, NX_TC_STRUCT);
	for (size_t i = 0; !rc && i < n; i++) {
		struct nx_pq_move mv = { .file = parts[i].path, .lo = 4, .hi = parts[i].data_end,
					 .delta = (int64_t)pos - 4 };
		struct nx_tc_in in;
		uint8_t *footer;
		if ((rc = nx_pq_read_footer(&parts[i], &footer, err)))
			break;
		nx_tc_in_init(&in, footer, parts[i].footer_len, parts[i].path, parts[i].data_end);
		rc = nx_pq_seek_row_groups(&in, err);
		for (uint32_t g = 0; !rc && g < parts[i].row_groups; g++)
			rc = nx_pq_copy_row_group(&in, &mv, ordinal++, &b, err);
		free(footer);
		pos += parts[i].data_end - 4;
		if (!rc)
			rc = nx_pq_write_all(fd, out, b.buf, b.len, err);
		len += b.len;
		nx_strbuf_reset(&b);
	}
	nx_pq_put_last_fields(&b, h, NULL);
	len += b.len;
	if (!rc)
		rc = nx_pq_write_all(fd, out, b.buf, b.len, err);
	nx_strbuf_release(&b);
	*footer_len = len;
	return rc;
}

static bool same_range(const uint8_t *a, const size_t ra[2], const uint8_t *b,
		       const size_t rb[2])
{
	return ra[1] - ra[0] == rb[1] - rb[0] && !memcmp(a + ra[0], b + rb[0], ra[1] - ra[0]);
}

int nx_parquet_concat(const char *const *paths, size_t n, const char *out, struct nx_err *err)
{
	struct nx_pq_file *parts = nx_xcalloc(n ? n : 1, sizeof(*parts));
	struct nx_pq_head h = { 0 };
	uint64_t footer_len = 0;
	int fd = -1, rc = 0;

	for (size_t i = 0; i < n; i++)
		parts[i].fd = -1;
	if (n == 0)
		rc = nx_errf(err, NX_EUSAGE, "'%s': no parts to join", out);
	for (size_t i = 0; !rc && i < n; i++) {
		struct nx_pq_head hi;
		uint8_t *footer;
		if ((rc = nx_pq_open(&parts[i], paths[i], err)) ||
		    (rc = nx_pq_read_footer(&parts[i], &footer, err)))
			break;
		rc = nx_pq_scan(&parts[i], footer, &hi, err);
		if (!rc && i == 0) {
			h = hi;
			h.footer = footer;
			continue;
		}
		if (!rc && !same_range(h.footer, h.schema, footer, hi.schema))
			rc = nx_errf(err, NX_EMISMATCH, "'%s' has another schema than '%s'", paths[i],
				     paths[0]);
		free(footer);
	}
	if (!rc) {
		fd = open(out, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
		if (fd < 0)
			rc = nx_errf(err, -errno, "cannot create '%s': %s", out, strerror(errno));
	}
	if (!rc)
		rc = nx_pq_write_all(fd, out, PQ_MAGIC, 4, err);
	for (size_t i = 0; !rc && i < n; i++)
		rc = nx_pq_copy_out(&parts[i], 4, parts[i].data_end - 4, fd, out, err);
	if (!rc)
		rc = write_footer(parts, n, &h, fd, out, &footer_len, err);
	if (!rc && footer_len > UINT32_MAX)
		rc = nx_errf(err, NX_EUSAGE, "'%s': joined footer over 4 GiB", out);
	if (!rc)
		rc = nx_pq_write_tail(fd, out, footer_len, err);
	if (fd >= 0 && close(fd) && !rc)
		rc = nx_errf(err, -errno, "cannot write '%s': %s", out, strerror(errno));
	if (rc && fd >= 0)
		unlink(out);
	for (size_t i = 0; i < n; i++)
		nx_pq_close(&parts[i]);
	free(h.footer);
	free(parts);
	return rc;
}

/* Joins one table's parts f[0..n) of dir. */
static int join_table(const char *dir, const struct nx_table_file *f, size_t n,
		      uint64_t *bytes, struct nx_err *err)
{
	char *whole_name = nx_xasprintf("%s.parquet", f[0].table);
	char *tmp_name = nx_xasprintf(".%s.join.tmp", f[0].table);
	char *whole = nx_path_join(dir, whole_name);
	char *tmp = nx_path_join(dir, tmp_name);
	char **paths = nx_xcalloc(n, sizeof(*paths));
	int rc = 0;

	for (size_t i = 0; i < n; i++)
		paths[i] = nx_path_join(dir, f[i].file);
	if (n == 1) {
		if (rename(paths[0], whole))
			rc = nx_errf(err, -errno, "cannot rename '%s': %s", paths[0], strerror(errno));
	} else {
		remove(tmp);
		rc = nx_parquet_concat((const char *const *)paths, n, tmp, err);
		if (!rc && rename(tmp, whole))
			rc = nx_errf(err, -errno, "cannot rename '%s': %s", tmp, strerror(errno));
		if (rc)
			remove(tmp);
		for (size_t i = 0; !rc && i < n; i++) {
			struct stat st;
			if (bytes && !stat(paths[i], &st))
				*bytes += (uint64_t)st.st_size;
			remove(paths[i]);
		}
	}
	for (size_t i = 0; i < n; i++)
		free(paths[i]);
	free(paths);
	free(whole_name);
	free(tmp_name);
	free(whole);
	free(tmp);
	return rc;
}

int nx_parquet_join_split_tables(const char *dir, uint64_t *bytes, size_t *tables,
				 struct nx_err *err)
{
	struct nx_table_file *f;
	size_t n, run;
	int rc = nx_table_files_list(dir, NULL, NULL, &f, &n, err);

	if (bytes)
		*bytes = 0;
	if (tables)
		*tables = 0;
	for (size_t i = 0; !rc && i < n; i += run) {
		for (run = 1; i + run < n && !strcmp(f[i].table, f[i + run].table); run++)
			;
		/* a table that has its whole file is left as it is */
		if (f[i].index >= 0)
			rc = join_table(dir, &f[i], run, bytes, err);
		if (!rc && f[i].index >= 0 && run > 1 && tables)
			(*tables)++;
	}
	nx_table_files_free(f, n);
	return rc;
}
