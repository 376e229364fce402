/* SPDX-License-Identifier: MIT
 * server_fixture.h: builds data paths with real parquet profiles for the API
 * server tests, using DuckDB itself to write the files. Profiles are assembled in
 * a hidden sibling directory and renamed into place, the way ingest publishes. */
#ifndef NX_TEST_SERVER_FIXTURE_H
#define NX_TEST_SERVER_FIXTURE_H

#include "server/server.h"
#include "helper/test_dirs.h"

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

/* A new empty directory $NX_TEST_TMP/server-<tag>-XXXXXX/<tag> (or under /tmp), made by
 * nx_test_fresh_dir and removed by nx_test_done when every test passed. NULL after
 * printing why; caller frees. */
char *nx_sfx_tmpdir(const char *tag);

/* Runs SQL statements (separated by ';') on a throwaway in-memory DuckDB.
 * Returns 0, or -1 after printing DuckDB's error. */
int nx_sfx_sql(const char *sql);
/* nx_sfx_sql of a formatted text. */
int nx_sfx_sqlf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Writes <data>/profiles/global/<name>@latest with Summary, Instruction (split
 * into Instruction_0/_1.parquet, n_instr rows in all), DmaPacket, SchemaFields
 * and a source_folder.tar.gz. Instruction.id of the row with index 7 is
 * 2^53 + 1 (9007199254740993). Returns 0 or -1. */
int nx_sfx_make_profile(const char *data, const char *name, unsigned n_instr);

/* Writes <data>/profiles/global/<name>@latest for the timeline: Instruction (parts
 * _0 and _1) with 3 tracks on core 0 plus one on core 1, events every ~13 ns with
 * durations 5..204 ns, a few long ones (to overlap windows from before), and a burst of
 * 3000 events in 300 ns at 200000 (about 0 to 400000 ns in all; rows in start order, or
 * shuffled when !ordered); DmaPacketAggregated on two queues; SbufUsage. Returns 0 or
 * -1. */
int nx_sfx_make_timeline_profile(const char *data, const char *name, bool ordered);

/* The server options of the tests: data path data, a free port, no access log. */
void nx_sfx_opts(struct nx_server_opts *o, const char *data);
/* Starts a server with o; *port gets its port. NULL after printing the error. */
struct nx_server *nx_sfx_start(const struct nx_server_opts *o, unsigned *port);

/* Starts a server on data as nx_sfx_opts does, but logging (not quiet) and trying a
 * failed timeline cache build again at once, with its stderr (this process's, while it
 * runs) going to the file log, truncated first; *port gets its port. NULL after printing
 * why. nx_sfx_stop_logged stops it and gives stderr back. One at a time. */
struct nx_server *nx_sfx_start_logged(const char *data, const char *log, unsigned *port);
void nx_sfx_stop_logged(struct nx_server *s);
/* Whether the file log holds text. */
bool nx_sfx_logged(const char *log, const char *text);

/* POSTs a databaseExplorerQuery of sql to the _search of profile on port; *status gets
 * the HTTP status. Returns the parsed reply (caller decrefs), or NULL after printing why
 * (no reply, or a body that is not JSON). */
json_t *nx_sfx_query(unsigned port, const char *profile, const char *sql, int *status);
/* POSTs body (JSON) to the _search of profile on port, as nx_sfx_query. */
json_t *nx_sfx_search(unsigned port, const char *profile, const char *body, int *status);

/* GETs path on port; *status gets the HTTP status. Returns the parsed reply (caller
 * decrefs), or NULL after printing why. */
json_t *nx_sfx_get(unsigned port, const char *path, int *status);

#endif
