/* SPDX-License-Identifier: MIT
 * server.h: the HTTP API server that `neuron-explorer view` starts. It serves every
 * profile below <data-path>/profiles/global/ on a loopback address: health, a
 * profile listing, sandboxed read-only SQL over each profile's parquet tables
 * (one in-memory DuckDB per profile), table schemas, and raw artifact downloads.
 * Profiles that appear or are replaced while the server runs are picked up on the
 * next request. docs/api.md describes the requests and replies. */
#ifndef NX_SERVER_SERVER_H
#define NX_SERVER_SERVER_H

#include "common/compat.h"
#include "common/err.h"

struct nx_server;

struct nx_server_opts {
	const char *data_path;       /* root holding profiles/global/<name>@latest/ */
	const char *host;            /* loopback address to bind; NULL = "127.0.0.1" */
	unsigned port;               /* 3002 by default; 0 = any free port */
	unsigned query_timeout_ms;   /* 0 = 30000 */
	uint64_t max_result_rows;    /* 0 = 100000 */
	uint64_t max_result_bytes;   /* 0 = 64 MiB of JSON */
	size_t max_body_bytes;       /* 0 = 1 MiB */
	unsigned threads;            /* DuckDB worker threads per profile; 0 = one per core */
	unsigned request_timeout_s;  /* seconds a client has to send a whole request; 0 = 10 */
	bool quiet;                  /* no access log (nor the cache's notes) on stderr */
	unsigned cache_retry_ms;     /* a failed timeline cache build is tried again at the
				      * first request this long after; 0 = 60000 */
	bool ui;                     /* also serve the web UI (docs/ui.md) on ui_port */
	unsigned ui_port;            /* 3001 by default; 0 = any free port */
};

/* Fills *o with the defaults above (port 3002 on 127.0.0.1; no UI, UI port 3001). */
void nx_server_opts_init(struct nx_server_opts *o, const char *data_path);

/* Binds the listening socket and starts serving on background threads (one per
 * connection; the soft open-file limit is raised toward the hard one so that up to
 * 4096 connections fit). Fails
 * (without side effects) when the host is not a loopback address, when the port
 * is taken ("port N on 127.0.0.1 is already in use") or when the data path is not
 * a directory. The options are copied; *out is owned by the caller and released
 * with nx_server_stop(). */
int nx_server_start(struct nx_server **out, const struct nx_server_opts *o, struct nx_err *err);

/* The bound port: useful after starting with port 0. */
unsigned nx_server_port(const struct nx_server *s);

/* The bound port of the web UI, 0 when the UI is not served. The UI port answers the
 * same /api/ routes as the API port (same checks), and the UI's pages elsewhere. */
unsigned nx_server_ui_port(const struct nx_server *s);

/* Starts building the timeline cache of profile name (docs/ui.md, "Level of detail") on
 * a background thread, so that the UI's first timeline view finds it ready or under
 * way; a timeline request that comes meanwhile waits for the same build, and an error
 * stays with the profile as if a request had met it (tried again cache_retry_ms later).
 * nx_server_stop() interrupts a build still running. One warm-up per server. */
int nx_server_warm_timeline(struct nx_server *s, const char *name, struct nx_err *err);

/* Blocks until SIGINT or SIGTERM arrives (or nx_server_shutdown() is called from
 * another thread). Signal handlers are installed only for the duration of the call.
 * Returns the signal number, or 0 for a programmatic shutdown. */
int nx_server_wait(struct nx_server *s);

/* Wakes nx_server_wait() from another thread; async-signal-safe. */
void nx_server_shutdown(struct nx_server *s);

/* Stops accepting, interrupts timeline cache builds, waits for in-flight requests,
 * closes every profile database and frees s. Accepts NULL. */
void nx_server_stop(struct nx_server *s);

#endif
