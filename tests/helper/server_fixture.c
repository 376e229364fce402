/* SPDX-License-Identifier: MIT
 * server_fixture.c: parquet profile fixtures for the API server tests. */
#define _GNU_SOURCE
#include "helper/server_fixture.h"
#include "helper/http_client.h"
#include "helper/test_dirs.h"

#include <duckdb.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

char *nx_sfx_tmpdir(const char *tag)
{
	return nx_test_fresh_dir("server-", tag);
}

int nx_sfx_sql(const char *sql)
{
	duckdb_database db = NULL;
	duckdb_connection c = NULL;
	duckdb_result res;
	int rc = -1;

	if (duckdb_open(NULL, &db) == DuckDBError || duckdb_connect(db, &c) == DuckDBError)
		goto out;
	if (duckdb_query(c, sql, &res) == DuckDBError)
		fprintf(stderr, "fixture SQL failed: %s\n", duckdb_result_error(&res));
	else
		rc = 0;
	duckdb_destroy_result(&res);
out:
	duckdb_disconnect(&c);
	duckdb_close(&db);
	return rc;
}

int nx_sfx_sqlf(const char *fmt, ...)
{
	va_list ap;
	char *sql = NULL;
	int n, rc;

	va_start(ap, fmt);
	n = vasprintf(&sql, fmt, ap);
	va_end(ap);
	if (n < 0)
		return -1;
	rc = nx_sfx_sql(sql);
	free(sql);
	return rc;
}

int nx_sfx_make_profile(const char *data, const char *name, unsigned n)
{
	char *tmp = NULL, *fin = NULL, *sql = NULL, *cmd = NULL;
	unsigned half = n / 2;
	int rc = -1;

	if (asprintf(&tmp, "%s/profiles/global/.%s.tmp", data, name) < 0 ||
	    asprintf(&fin, "%s/profiles/global/%s@latest", data, name) < 0 ||
	    asprintf(&cmd, "rm -rf '%s' && mkdir -p '%s'", tmp, tmp) < 0 || system(cmd) != 0)
		goto out;
	if (asprintf(&sql,
		     "CREATE TABLE inst AS SELECT i AS id_src,"
		     " CASE WHEN i = 7 THEN 9007199254740993 ELSE i END::BIGINT AS id,"
		     " (['Tensor','Vector','Scalar','GpSimd','Sync'])[i %% 5 + 1] AS engine,"
		     " (['MATMUL','LDWEIGHTS','ACTIVATE','TENSOR_TENSOR','DMA'])[(i // 5) %% 5 + 1]"
		     "   AS opcode,"
		     " (i * 1000)::BIGINT AS start_ts, (i * 1000 + 100 + i %% 50)::BIGINT AS end_ts,"
		     " (100 + i %% 50)::BIGINT AS duration_ns, (i %% 13)::BIGINT AS evt_wait_time_ns,"
		     " CASE WHEN i %% 4 = 0 THEN NULL ELSE '/home/u/kernel.py:' || (10 + i %% 7) END"
		     "   AS bir_debug_info_source_location,"
		     " [i, i + 1]::BIGINT[] AS stack_frame_ids"
		     " FROM range(%u) t(i);"
		     "COPY (SELECT * EXCLUDE (id_src) FROM inst WHERE id_src < %u ORDER BY id_src)"
		     " TO '%s/Instruction_0.parquet' (FORMAT parquet);"
		     "COPY (SELECT * EXCLUDE (id_src) FROM inst WHERE id_src >= %u ORDER BY id_src)"
		     " TO '%s/Instruction_1.parquet' (FORMAT parquet);"
		     "COPY (SELECT 1234.5::DOUBLE AS total_time, 0.42::DOUBLE AS mfu_estimated_percent,"
		     " 0.61::DOUBLE AS tensor_engine_active_time_percent,"
		     " 0.33::DOUBLE AS vector_engine_active_time_percent,"
		     " 0.25::DOUBLE AS dma_active_time_percent, 1048576::BIGINT AS hbm_read_bytes,"
		     " 524288::BIGINT AS hbm_write_bytes, 'NaN'::DOUBLE AS odd_value)"
		     " TO '%s/Summary.parquet' (FORMAT parquet);"
		     "COPY (SELECT i::BIGINT AS id, (i * 64)::BIGINT AS size_bytes FROM range(25) t(i))"
		     " TO '%s/DmaPacket.parquet' (FORMAT parquet);"
		     "COPY (SELECT * FROM (VALUES"
		     " ('Instruction', 'duration_ns', 'Time the instruction ran', 'ns'),"
		     " ('Summary', 'hardware_flops', 'FLOPs counted by MATMUL hardware', NULL),"
		     " ('Summary', 'mfu_estimated_percent', 'Model FLOPs utilization of matmul', '%%'))"
		     " t(table_name, field_name, field_description, field_unit))"
		     " TO '%s/SchemaFields.parquet' (FORMAT parquet);",
		     n, half, tmp, half, tmp, tmp, tmp, tmp) < 0)
		goto out;
	if (nx_sfx_sql(sql))
		goto out;
	free(cmd);
	cmd = NULL;
	/* Any bytes do for the archive: the server streams it without looking inside. */
	if (asprintf(&cmd, "printf 'fake-tar-gz' > '%s/source_folder.tar.gz'", tmp) < 0 ||
	    system(cmd) != 0)
		goto out;
	/* Publish like ingest: a plain rename, or an atomic swap with the old version,
	 * which is then removed. */
	if (rename(tmp, fin) != 0) {
		if (renameat2(AT_FDCWD, tmp, AT_FDCWD, fin, RENAME_EXCHANGE) != 0)
			goto out;
		free(cmd);
		if (asprintf(&cmd, "rm -rf '%s'", tmp) < 0 || system(cmd) != 0)
			goto out;
	}
	rc = 0;
out:
	free(tmp);
	free(fin);
	free(sql);
	free(cmd);
	return rc;
}

int nx_sfx_make_timeline_profile(const char *data, const char *name, bool ordered)
{
	char *sql = NULL, *cmd = NULL;
	int rc;

	if (asprintf(&sql,
		     "CREATE TABLE i AS SELECT i AS id, CASE WHEN i %% 17 = 0 THEN 1 ELSE 0 END::BIGINT"
		     " AS pcore_idx, (['Tensor','Vector','Sync'])[i %% 3 + 1] AS timeline_track,"
		     " (['MATMUL','LDWEIGHTS','ACTIVATE','IOTA'])[(i // 3) %% 4 + 1] AS opcode,"
		     " CASE WHEN i < 30000 THEN i * 13 ELSE 200000 + (i - 30000) // 10 END::BIGINT"
		     "   AS start_ts,"
		     " NULL::VARCHAR AS nki_source_location,"
		     " CASE WHEN i %% 5 = 0 THEN 'k.py:' || (i %% 7) END AS bir_debug_info_source_location"
		     " FROM range(33000) t(i);"
		     "ALTER TABLE i ADD COLUMN end_ts BIGINT;"
		     "UPDATE i SET end_ts = start_ts + CASE WHEN id %% 997 = 0 THEN 20000"
		     " ELSE 5 + hash(id) %% 200 END;"
		     "ALTER TABLE i ADD COLUMN duration_ns BIGINT;"
		     "UPDATE i SET duration_ns = end_ts - start_ts;"
		     "CREATE TABLE d AS SELECT i AS id, 0::BIGINT AS pcore_idx,"
		     " 'q' || (i %% 2) AS queue_name, 'copy' AS op, 'in' AS queue_type,"
		     " (i * 400)::BIGINT AS start_ts, (i * 400 + 300)::BIGINT AS end_ts FROM range(1000) t(i);"
		     "CREATE TABLE s AS SELECT 0::BIGINT AS pcore_idx, (i * 1000)::BIGINT AS timestamp,"
		     " (i %% 10) / 10.0 AS avg_util_percent FROM range(400) t(i);"
		     "COPY (SELECT * FROM i WHERE id < 20000 ORDER BY %s) TO"
		     " '%s/profiles/global/%s@latest/Instruction_0.parquet' (FORMAT parquet,"
		     " ROW_GROUP_SIZE 4096);"
		     "COPY (SELECT * FROM i WHERE id >= 20000 ORDER BY %s) TO"
		     " '%s/profiles/global/%s@latest/Instruction_1.parquet' (FORMAT parquet,"
		     " ROW_GROUP_SIZE 4096);"
		     "COPY d TO '%s/profiles/global/%s@latest/DmaPacketAggregated.parquet' (FORMAT parquet);"
		     "COPY s TO '%s/profiles/global/%s@latest/SbufUsage.parquet' (FORMAT parquet)",
		     ordered ? "start_ts, id" : "hash(id)", data, name,
		     ordered ? "start_ts, id" : "hash(id)", data, name, data, name, data,
		     name) < 0)
		return -1;
	if (asprintf(&cmd, "mkdir -p '%s/profiles/global/%s@latest'", data, name) < 0 ||
	    system(cmd) != 0)
		rc = -1;
	else
		rc = nx_sfx_sql(sql);
	free(cmd);
	free(sql);
	return rc;
}

void nx_sfx_opts(struct nx_server_opts *o, const char *data)
{
	nx_server_opts_init(o, data);
	o->port = 0;
	o->quiet = true;
}

struct nx_server *nx_sfx_start(const struct nx_server_opts *o, unsigned *port)
{
	struct nx_server *s = NULL;
	struct nx_err err = { 0 };

	if (nx_server_start(&s, o, &err)) {
		fprintf(stderr, "%s\n", err.msg);
		return NULL;
	}
	*port = nx_server_port(s);
	return s;
}

json_t *nx_sfx_query(unsigned port, const char *profile, const char *sql, int *status)
{
	json_t *req = json_pack("{s:s, s:s}", "type", "databaseExplorerQuery", "query", sql);
	char *body = json_dumps(req, 0);
	json_t *j = nx_sfx_search(port, profile, body, status);

	free(body);
	json_decref(req);
	return j;
}

json_t *nx_sfx_search(unsigned port, const char *profile, const char *body, int *status)
{
	char path[512];
	struct nx_http_resp r;
	json_t *j = NULL;

	snprintf(path, sizeof(path), "/api/v1/db/%s/_search", profile);
	if (nx_http_post_json(port, path, body, &r) != 0) {
		fprintf(stderr, "no reply from port %u to %s\n", port, path);
	} else {
		*status = r.status;
		if (!(j = json_loads(r.body, 0, NULL)))
			fprintf(stderr, "not JSON: %.300s\n", r.body);
		nx_http_resp_free(&r);
	}
	return j;
}

json_t *nx_sfx_get(unsigned port, const char *path, int *status)
{
	struct nx_http_resp r;
	json_t *j = NULL;

	if (nx_http_get(port, path, &r) != 0) {
		fprintf(stderr, "no reply from port %u to %s\n", port, path);
		return NULL;
	}
	*status = r.status;
	if (!(j = json_loads(r.body, 0, NULL)))
		fprintf(stderr, "GET %s: not JSON: %.300s\n", path, r.body);
	nx_http_resp_free(&r);
	return j;
}

static int logged_stderr = -1;

struct nx_server *nx_sfx_start_logged(const char *data, const char *log, unsigned *port)
{
	struct nx_server_opts o;
	struct nx_server *s;
	int fd;

	fflush(stderr);
	logged_stderr = dup(2);
	fd = open(log, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (logged_stderr < 0 || fd < 0) {
		fprintf(stderr, "cannot log to %s\n", log);
		return NULL;
	}
	dup2(fd, 2);
	close(fd);
	nx_sfx_opts(&o, data);
	o.quiet = false;
	o.cache_retry_ms = 1;
	s = nx_sfx_start(&o, port);
	if (!s)
		nx_sfx_stop_logged(NULL);
	return s;
}

void nx_sfx_stop_logged(struct nx_server *s)
{
	if (s)
		nx_server_stop(s);
	fflush(stderr);
	dup2(logged_stderr, 2);
	close(logged_stderr);
	logged_stderr = -1;
}

bool nx_sfx_logged(const char *log, const char *text)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = fopen(log, "r");
	bool found;

	fflush(stderr);
	if (!f)
		return false;
	found = getdelim(&buf, &len, '\0', f) > 0 && strstr(buf, text);
	fclose(f);
	free(buf);
	return found;
}
