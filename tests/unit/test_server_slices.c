/* SPDX-License-Identifier: MIT
 * test_server_slices.c: the server reads a table file of more than 64 row groups as
 * slices of its row groups (server/profile_db.c), on a real server over real parquet
 * written by DuckDB. Profile "big" has an Instruction.parquet of 100 row groups, "one"
 * the same rows in one row group (read whole); through _search both answer alike: a
 * count, a narrow WHERE on start_ts, a page of SELECT * at an offset (rows in file
 * order), the bounds of the analysis, and tableSchema lists the same columns. A query
 * naming a missing table gets DuckDB's message as before. The slices live in a private
 * folder under $TMPDIR while the server runs and are removed when it stops; the
 * profile's folder is left as it was; a file is cut only when a query first names its
 * table (or may ask the catalog); a server that cannot make that folder reads the file
 * whole, with the same answers. Files are cut only past a footer size (2 MiB by
 * default, NX_SERVER_SLICE_FOOTER bytes here: 0); a bad value gets an error naming it. A large file with a damaged footer: the reply
 * names the table and the file, and the other tables still answer. The bounds' extents
 * (analysis/scan_extent.c, read by the C reader) on odd tables: NULL starts and ends, no
 * DmaPacket, an Instruction without end_ts, a footer whose statistic of the least start
 * is damaged: part=bounds gives the bounds and engines of the whole analysis, or its
 * error. */
#include "common/compat.h"
#include "server/server.h"
#include "common/fsutil.h"
#include "helper/asserts.h"
#include "helper/server_fixture.h"

#include <dirent.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include <jansson.h>

#define GROUP_ROWS 2048
#define GROUPS 100
#define API "/api/v1/profiles/namespace/global/profile_name/"

static char *data_dir, *tmp_dir;
static struct nx_server *srv;
static unsigned port;

/* Profile name with Instruction of GROUPS * GROUP_ROWS rows in row groups of rg_rows,
 * and a Summary. */
static int make_profile(const char *name, unsigned rg_rows)
{
	return nx_sfx_sqlf(
		"COPY (SELECT i AS id, 0::BIGINT AS pcore_idx, "
		"(['Tensor','Vector','Scalar'])[1 + (i %% 3)::INT] AS timeline_track, "
		"(['MATMUL','ACTIVATE','IOTA'])[1 + (i %% 3)::INT] AS opcode, "
		"(i * 10)::BIGINT AS start_ts, (i * 10 + 7)::BIGINT AS end_ts, "
		"7::BIGINT AS duration_ns FROM range(%u) r(i)) "
		"TO '%s/profiles/global/%s@latest/Instruction.parquet' "
		"(FORMAT parquet, ROW_GROUP_SIZE %u);"
		"COPY (SELECT 1.5::DOUBLE AS total_time, 1::BIGINT AS event_count) "
		"TO '%s/profiles/global/%s@latest/Summary.parquet' (FORMAT parquet)",
		GROUPS * GROUP_ROWS, data_dir, name, rg_rows, data_dir, name);
}

static int make_dirs(void)
{
	const char *names[] = { "big", "one", "dmg", "nulls", "noend", "badstat" };
	struct nx_err err = { 0 };

	for (size_t i = 0; i < 6; i++) {
		char *p = NULL;
		int rc = asprintf(&p, "%s/profiles/global/%s@latest", data_dir, names[i]) < 0 ||
			 nx_mkdirs(p, &err);

		free(p);
		if (rc)
			return -1;
	}
	return 0;
}

/* Damages the footer of dmg's Instruction.parquet in its middle. */
static int damage_footer(void)
{
	char *p = NULL;
	struct stat st;
	unsigned char tail[8], junk[64];
	uint32_t len;
	int fd, rc = -1;

	if (asprintf(&p, "%s/profiles/global/dmg@latest/Instruction.parquet", data_dir) < 0)
		return -1;
	fd = open(p, O_RDWR);
	free(p);
	if (fd < 0)
		return -1;
	memset(junk, 0xff, sizeof(junk));
	if (!fstat(fd, &st) && pread(fd, tail, 8, st.st_size - 8) == 8) {
		len = (uint32_t)tail[0] | (uint32_t)tail[1] << 8 | (uint32_t)tail[2] << 16 |
		      (uint32_t)tail[3] << 24;
		if (pwrite(fd, junk, sizeof(junk), st.st_size - 8 - len / 2) == sizeof(junk))
			rc = 0;
	}
	close(fd);
	/* and a table file that is no parquet at all */
	if (!rc && asprintf(&p, "%s/profiles/global/dmg@latest/Flow.parquet", data_dir) > 0) {
		FILE *f = fopen(p, "w");

		rc = !f || fputs("not a parquet file", f) < 0 || fclose(f);
		free(p);
	}
	return rc;
}

/* "badstat": starts from 0x0123456789ABCDEF, some NULL; the least start's statistic in
 * the footer of its Instruction.parquet made larger than any start (a damaged value the
 * bounds must not trust: they read the rows instead). */
static int make_bad_stats(void)
{
	static const unsigned char least[] = { 0xf9, 0xcd, 0xab, 0x89, 0x67, 0x45, 0x23, 0x01 };
	unsigned char *buf = NULL, tail[8];
	char *p = NULL;
	struct stat st;
	uint32_t len;
	int fd, patched = 0;

	if (nx_sfx_sqlf("COPY (SELECT i AS id, 0::BIGINT AS pcore_idx, 'Tensor' AS "
			"timeline_track, 'MATMUL' AS opcode, CASE WHEN i %% 7 = 0 THEN NULL ELSE "
			"81985529216486895 + i * 10 END AS start_ts, CASE WHEN i %% 7 = 0 THEN NULL "
			"ELSE 81985529216486902 + i * 10 END AS end_ts, 7::BIGINT AS duration_ns "
			"FROM range(5000) r(i)) "
			"TO '%s/profiles/global/badstat@latest/Instruction.parquet' (FORMAT parquet);"
			"COPY (SELECT 1.5::DOUBLE AS total_time, 1::BIGINT AS event_count) "
			"TO '%s/profiles/global/badstat@latest/Summary.parquet' (FORMAT parquet)",
			data_dir, data_dir) ||
	    asprintf(&p, "%s/profiles/global/badstat@latest/Instruction.parquet", data_dir) < 0)
		return -1;
	fd = open(p, O_RDWR);
	free(p);
	if (fd < 0)
		return -1;
	if (!fstat(fd, &st) && pread(fd, tail, 8, st.st_size - 8) == 8) {
		len = (uint32_t)tail[0] | (uint32_t)tail[1] << 8 | (uint32_t)tail[2] << 16 |
		      (uint32_t)tail[3] << 24;
		buf = malloc(len);
		if (buf && pread(fd, buf, len, st.st_size - 8 - len) == (ssize_t)len) {
			for (uint32_t i = 0; i + 8 <= len; i++)
				if (!memcmp(buf + i, least, 8)) {
					memset(buf + i, 0x7f, 8);
					patched++;
				}
			if (patched && pwrite(fd, buf, len, st.st_size - 8 - len) != (ssize_t)len)
				patched = 0;
		}
	}
	free(buf);
	close(fd);
	return patched ? 0 : -1;
}

/* "nulls": some starts and ends NULL (the first start and the last end among them);
 * "noend": Instruction without end_ts. Both without DmaPacket. */
static int make_odd_profiles(void)
{
	return nx_sfx_sqlf(
		"COPY (SELECT i AS id, 0::BIGINT AS pcore_idx, 'Tensor' AS timeline_track, "
		"'MATMUL' AS opcode, CASE WHEN i %% 7 = 0 THEN NULL ELSE i * 10 END AS start_ts, "
		"CASE WHEN i %% 5 = 4 THEN NULL ELSE i * 10 + 7 END AS end_ts, 7::BIGINT AS "
		"duration_ns FROM range(5000) r(i)) "
		"TO '%s/profiles/global/nulls@latest/Instruction.parquet' (FORMAT parquet);"
		"COPY (SELECT 1.5::DOUBLE AS total_time, 1::BIGINT AS event_count) "
		"TO '%s/profiles/global/nulls@latest/Summary.parquet' (FORMAT parquet);"
		"COPY (SELECT i AS id, 0::BIGINT AS pcore_idx, 'Tensor' AS timeline_track, "
		"'MATMUL' AS opcode, i * 10 AS start_ts, 7::BIGINT AS duration_ns FROM range(50) r(i)) "
		"TO '%s/profiles/global/noend@latest/Instruction.parquet' (FORMAT parquet);"
		"COPY (SELECT 1.5::DOUBLE AS total_time, 1::BIGINT AS event_count) "
		"TO '%s/profiles/global/noend@latest/Summary.parquet' (FORMAT parquet)",
		data_dir, data_dir, data_dir, data_dir);
}

static int setup(void **state)
{
	struct nx_server_opts o;

	(void)state;
	data_dir = nx_sfx_tmpdir("slices");
	if (!data_dir || asprintf(&tmp_dir, "%s/tmp", data_dir) < 0 || mkdir(tmp_dir, 0755) ||
	    make_dirs() || make_profile("big", GROUP_ROWS) ||
	    make_profile("one", GROUPS * GROUP_ROWS) || make_profile("dmg", GROUP_ROWS) ||
	    damage_footer() || make_odd_profiles() || make_bad_stats())
		return -1;
	/* the server's temporary folders go here, to be looked at; a file is cut whatever the
	 * size of its footer (by default only past 2 MiB) */
	setenv("TMPDIR", tmp_dir, 1);
	setenv("NX_SERVER_SLICE_FOOTER", "0", 1);
	nx_sfx_opts(&o, data_dir);
	if (!(srv = nx_sfx_start(&o, &port)))
		return -1;
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	nx_server_stop(srv);
	free(tmp_dir);
	free(data_dir);
	return 0;
}

/* The rows of sql's reply from profile, as JSON text (caller frees). */
static char *rows_of(const char *profile, const char *sql)
{
	int status = 0;
	json_t *j = nx_sfx_query(port, profile, sql, &status);
	char *s;

	assert_non_null(j);
	if (status != 200)
		fail_msg("%s on %s: %d %s", sql, profile, status, json_dumps(j, 0));
	s = json_dumps(json_object_get(j, "rows"), 0);
	json_decref(j);
	return s;
}

/* sql answers the same on both profiles, and not with no rows. */
static void assert_same(const char *sql)
{
	char *a = rows_of("big", sql), *b = rows_of("one", sql);

	assert_string_equal(a, b);
	assert_string_not_equal(a, "[]");
	free(a);
	free(b);
}

/* How many entries dir holds (not . and ..), -1 when it cannot be read; with suffix, only
 * those whose name ends so. */
static int entries_ending(const char *dir, const char *suffix)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	int n = 0;

	if (!d)
		return -1;
	while ((e = readdir(d))) {
		size_t len = strlen(e->d_name), sl = suffix ? strlen(suffix) : 0;

		n += strcmp(e->d_name, ".") && strcmp(e->d_name, "..") &&
		     (!suffix || (len >= sl && !strcmp(e->d_name + len - sl, suffix)));
	}
	closedir(d);
	return n;
}

static int entries(const char *dir)
{
	return entries_ending(dir, NULL);
}

/* The slice folders of the server in tmp_dir, and the parquet files they hold. */
static void count_slices(int *folders, int *files)
{
	DIR *d = opendir(tmp_dir);
	struct dirent *e;

	*folders = *files = 0;
	assert_non_null(d);
	while ((e = readdir(d))) {
		char *p = NULL;

		if (strncmp(e->d_name, "nx-serve-slices-", 16))
			continue;
		(*folders)++;
		NX_ASSERT_CMP(asprintf(&p, "%s/%s", tmp_dir, e->d_name), >, 0);
		*files += entries_ending(p, ".parquet");
		free(p);
	}
	closedir(d);
}

static void test_same_answers(void **state)
{
	char *path = NULL;
	int folders, files;

	(void)state;
	/* a query that does not name Instruction cuts nothing */
	free(rows_of("big", "SELECT * FROM Summary"));
	count_slices(&folders, &files);
	assert_int_equal(folders, 1);
	assert_int_equal(files, 0);
	assert_same("SELECT count(*), sum(id), min(start_ts), max(end_ts) FROM Instruction");
	assert_same("SELECT count(*), sum(duration_ns) FROM Instruction WHERE start_ts BETWEEN "
		    "1000000 AND 1100000");
	assert_same("SELECT * FROM (SELECT * FROM Instruction) AS nx_page LIMIT 7 OFFSET 150000");
	assert_same("SELECT id, opcode FROM Instruction WHERE id % 20000 = 3");
	assert_same("SELECT * FROM Summary");
	/* "big" is read as slices: 100 row groups in slices of 16; each profile opened has its
	 * private folder (where its database spills), only big's holds slices */
	count_slices(&folders, &files);
	assert_int_equal(folders, 2);
	assert_int_equal(files, 7);
	/* the profile's folder is as it was: its two files */
	NX_ASSERT_CMP(asprintf(&path, "%s/profiles/global/big@latest", data_dir), >, 0);
	assert_int_equal(entries(path), 2);
	free(path);
}

static void test_schema_and_bounds(void **state)
{
	int status = 0;
	json_t *a, *b;
	char *sa, *sb;

	(void)state;
	a = nx_sfx_get(port, API "big/analysis?part=bounds", &status);
	assert_int_equal(status, 200);
	b = nx_sfx_get(port, API "one/analysis?part=bounds", &status);
	assert_int_equal(status, 200);
	/* the profiles' names aside, the same report */
	json_object_del(json_object_get(a, "report"), "profile");
	json_object_del(json_object_get(b, "report"), "profile");
	sa = json_dumps(a, JSON_SORT_KEYS);
	sb = json_dumps(b, JSON_SORT_KEYS);
	assert_non_null(strstr(sa, "\"bottleneck\""));
	assert_string_equal(sa, sb);
	json_decref(a);
	json_decref(b);
	free(sa);
	free(sb);

	sa = rows_of("big", "SELECT column_name, data_type FROM information_schema.columns "
			    "WHERE table_name = 'Instruction' ORDER BY ordinal_position");
	sb = rows_of("one", "SELECT column_name, data_type FROM information_schema.columns "
			    "WHERE table_name = 'Instruction' ORDER BY ordinal_position");
	assert_string_equal(sa, sb);
	assert_non_null(strstr(sa, "start_ts"));
	free(sa);
	free(sb);
}

static void test_missing_table(void **state)
{
	int status = 0;
	json_t *j = nx_sfx_query(port, "big", "SELECT * FROM Nope", &status);
	const char *msg;

	(void)state;
	assert_non_null(j);
	assert_int_equal(status, 400);
	msg = json_string_value(json_object_get(json_object_get(j, "error"), "message"));
	assert_non_null(msg);
	assert_non_null(strstr(msg, "Table with name Nope does not exist"));
	json_decref(j);
}

static void test_damaged_large_file(void **state)
{
	int status = 0;
	json_t *j = nx_sfx_query(port, "dmg", "SELECT count(*) FROM Instruction", &status);
	const char *msg;
	char *s;

	(void)state;
	assert_non_null(j);
	assert_int_equal(status, 500);
	msg = json_string_value(json_object_get(json_object_get(j, "error"), "message"));
	assert_non_null(msg);
	assert_non_null(strstr(msg, "table Instruction cannot be read"));
	assert_non_null(strstr(msg, "Instruction.parquet"));
	json_decref(j);
	s = rows_of("dmg", "SELECT total_time FROM Summary");
	assert_string_equal(s, "[[1.5]]");
	free(s);
	/* listDbFiles: the rows of each table from its footers, null for a file that is no
	 * parquet; a large table's rows without cutting it */
	j = nx_sfx_search(port, "dmg", "{\"type\":\"listDbFiles\"}", &status);
	assert_int_equal(status, 200);
	s = json_dumps(json_object_get(j, "tables"), JSON_SORT_KEYS);
	assert_non_null(strstr(s, "\"name\": \"Flow\", \"rows\": null"));
	assert_non_null(strstr(s, "\"name\": \"Summary\", \"rows\": 1,"));
	free(s);
	json_decref(j);
	j = nx_sfx_search(port, "big", "{\"type\":\"listDbFiles\"}", &status);
	s = json_dumps(json_object_get(j, "tables"), JSON_SORT_KEYS);
	assert_non_null(strstr(s, "\"name\": \"Instruction\", \"rows\": 204800,"));
	free(s);
	json_decref(j);
}

/* part=bounds of profile against its whole analysis: the same span, bounds and engines, or the
 * same error. */
static void assert_bounds_as_whole(const char *profile)
{
	char path[256];
	int sa = 0, sb = 0;
	json_t *all, *b;

	snprintf(path, sizeof(path), API "%s/analysis", profile);
	all = nx_sfx_get(port, path, &sa);
	snprintf(path, sizeof(path), API "%s/analysis?part=bounds", profile);
	b = nx_sfx_get(port, path, &sb);
	assert_non_null(all);
	assert_non_null(b);
	assert_int_equal(sa, sb);
	if (sa == 200) {
		assert_true(json_equal(json_object_get(json_object_get(all, "report"), "bounds"),
				       json_object_get(json_object_get(b, "report"), "bounds")));
		assert_true(json_equal(json_object_get(json_object_get(all, "report"), "engines"),
				       json_object_get(json_object_get(b, "report"), "engines")));
		/* the span: the least start and the greatest end */
		assert_true(json_equal(json_object_get(json_object_get(all, "report"), "profile"),
				       json_object_get(json_object_get(b, "report"), "profile")));
	} else {
		assert_true(json_equal(all, b));
	}
	json_decref(all);
	json_decref(b);
}

static void test_bounds_odd_tables(void **state)
{
	(void)state;
	assert_bounds_as_whole("nulls");
	/* the analysis needs end_ts: both refuse the profile alike */
	assert_bounds_as_whole("noend");
	assert_bounds_as_whole("big");
	/* a damaged statistic: the rows are read, the same bounds as the whole analysis */
	assert_bounds_as_whole("badstat");
}

/* Stops the server and looks for its slices. */
static void test_slices_removed(void **state)
{
	int folders, files;

	(void)state;
	nx_server_stop(srv);
	srv = NULL;
	count_slices(&folders, &files);
	assert_int_equal(folders, 0);
	assert_int_equal(entries(tmp_dir), 0);
}

/* Last: a server whose temporary folder cannot be made reads the large file whole, with
 * the same answers. */
static void test_cut_fails_read_whole(void **state)
{
	struct nx_server_opts o;
	char *missing = NULL;

	(void)state;
	NX_ASSERT_CMP(asprintf(&missing, "%s/no/such/folder", data_dir), >, 0);
	setenv("TMPDIR", missing, 1);
	nx_sfx_opts(&o, data_dir);
	srv = nx_sfx_start(&o, &port);
	assert_non_null(srv);
	assert_same("SELECT count(*), sum(id), min(start_ts), max(end_ts) FROM Instruction");
	assert_same("SELECT * FROM (SELECT * FROM Instruction) AS nx_page LIMIT 7 OFFSET 150000");
	setenv("TMPDIR", tmp_dir, 1);
	free(missing);
}

/* Last: NX_SERVER_SLICE_FOOTER that is no number of bytes: queries get an error naming it;
 * by default (2 MiB) the test's small footers are read whole. */
static void test_slice_footer_setting(void **state)
{
	struct nx_server_opts o;
	int status = 0, folders, files;
	json_t *j;
	const char *msg;

	(void)state;
	nx_server_stop(srv);
	setenv("NX_SERVER_SLICE_FOOTER", "2MB", 1);
	nx_sfx_opts(&o, data_dir);
	srv = nx_sfx_start(&o, &port);
	assert_non_null(srv);
	j = nx_sfx_query(port, "big", "SELECT count(*) FROM Instruction", &status);
	assert_non_null(j);
	NX_ASSERT_CMP(status, >=, 400);
	msg = json_string_value(json_object_get(json_object_get(j, "error"), "message"));
	assert_non_null(msg);
	assert_non_null(strstr(msg, "NX_SERVER_SLICE_FOOTER is '2MB'"));
	json_decref(j);
	nx_server_stop(srv);
	unsetenv("NX_SERVER_SLICE_FOOTER");
	srv = nx_sfx_start(&o, &port);
	assert_non_null(srv);
	assert_same("SELECT count(*), sum(id), min(start_ts), max(end_ts) FROM Instruction");
	count_slices(&folders, &files);
	assert_int_equal(folders, 2); /* big's and one's, for what they spill */
	assert_int_equal(files, 0);
}

/* Last: a statement that may ask the catalog (information_schema) without naming the large
 * table sees its columns: its view is made, the file cut, for it. */
static void test_catalog_makes_large_views(void **state)
{
	struct nx_server_opts o;
	int folders, files;
	char *s;

	(void)state;
	nx_server_stop(srv);
	setenv("NX_SERVER_SLICE_FOOTER", "0", 1);
	nx_sfx_opts(&o, data_dir);
	srv = nx_sfx_start(&o, &port);
	assert_non_null(srv);
	s = rows_of("big", "SELECT count(*) FROM information_schema.columns WHERE table_name = "
			   "'Instr' || 'uction'");
	assert_string_equal(s, "[[7]]");
	free(s);
	count_slices(&folders, &files);
	assert_int_equal(folders, 1);
	assert_int_equal(files, 7);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_same_answers),
		cmocka_unit_test(test_schema_and_bounds),
		cmocka_unit_test(test_missing_table),
		cmocka_unit_test(test_damaged_large_file),
		cmocka_unit_test(test_bounds_odd_tables),
		cmocka_unit_test(test_slices_removed),
		cmocka_unit_test(test_cut_fails_read_whole),
		cmocka_unit_test(test_slice_footer_setting),
		cmocka_unit_test(test_catalog_makes_large_views),
	};

	return nx_test_done(cmocka_run_group_tests_name("server_slices", tests, setup, teardown));
}
