/* SPDX-License-Identifier: MIT
 * http.h: internals shared by the server's files: the server object, the
 * per-request state that MHD carries between callbacks, the route table entry
 * type, and the JSON reply helpers. Not part of the public API (see server.h). */
#ifndef NX_SERVER_HTTP_H
#define NX_SERVER_HTTP_H

#include "common/compat.h"
#include "common/err.h"
#include "common/strbuf.h"
#include "server/lod.h"
#include "server/registry.h"
#include "server/routes.h"
#include "server/server.h"
#include "server/watchdog.h"
#include "server/workers.h"

#include <microhttpd.h>
#include <pthread.h>
#include <semaphore.h>
#include <time.h>

struct nx_server {
	struct nx_server_opts o;
	char *data_path;
	char *host;
	int listen_fd;
	unsigned port;
	struct MHD_Daemon *daemon;
	int ui_listen_fd;
	unsigned ui_port;
	struct MHD_Daemon *ui_daemon; /* the web UI's port, or NULL */
	struct nx_registry reg;
	struct nx_watchdog wd;
	int wake[2]; /* self-pipe: signal handlers and nx_server_shutdown write here */
	/* Admission control: at most one running query per core (at least two). More
	 * would only make DuckDB's threads fight for the same cores, so extra
	 * requests wait their turn instead. */
	sem_t query_slots;
	bool have_slots;
	struct nx_lod_builds builds; /* timeline caches being built (lod.h) */
	char *warm_name;             /* the profile nx_server_warm_timeline builds, or NULL */
	pthread_t warm;
	bool have_warm;
	struct nx_workers workers; /* run the handlers (workers.h) */
};

/* Lives as long as one TCP connection. A client gets request_timeout_s from the moment
 * it connects (or its previous request finished) to send a whole request, headers and
 * body; when the deadline passes first, the watchdog shuts the socket down. MHD's own
 * inactivity timeout only catches clients that stop sending, not ones that trickle. */
struct nx_conn {
	struct nx_server *s;
	int fd;
	struct nx_wd_entry wd;
	bool armed;
	bool received; /* the current request is complete: the deadline no longer applies */
	bool nul_in_url; /* the current request's URL decoded to a NUL byte (%00) */
};

/* Lives from the first callback of a request to MHD's completion notice. */
#define NX_MAX_CAPTURES 4

struct nx_req {
	struct nx_server *s;
	struct MHD_Connection *conn;
	struct timespec t0;
	const char *method;
	char *url;
	struct nx_strbuf body;
	bool body_too_large;
	bool answered;
	bool ui; /* arrived on the UI port */
	char *allow; /* Allow header of a 405 reply */
	unsigned status;
	uint64_t bytes;
	struct MHD_Response *resp; /* the reply, queued on MHD's thread (nx__reply_flush) */
	/* A handler run on a worker while the connection is suspended (dispatch.c): */
	bool on_worker;            /* set on MHD's thread; its next callback queues the reply */
	const struct nx_route *route;
	char *cap[NX_MAX_CAPTURES];
	enum MHD_Result ret;       /* the handler's answer */
	struct nx_job job;
};

/* Our limits on a request's URI (path and query) and header block, answered with JSON
 * 414 and 431 (16 KiB of headers is Node.js's default limit too). MHD's per-connection
 * buffer is larger (requests up to about 30 kB get our JSON; MHD itself, whose replies
 * are HTML, refuses what does not fit it) and no larger: MHD takes a buffer above 32 KiB
 * from mmap, clears it after each request and unmaps it with the connection, and on a
 * new connection those fresh pages and that unmap cost 1.5 ms of a 2.1 ms /health reply
 * at 128 KiB (docs/api.md). 32 KiB comes from malloc, whose pages are reused. */
#define NX_MAX_URI 8192u
#define NX_MAX_HEADERS 16384u
#define NX_MHD_MEMORY ((size_t)32 << 10)

/* Captures: the '*' segments of the route pattern, in order; a trailing '**'
 * captures the rest of the path (possibly with slashes). */
typedef enum MHD_Result (*nx_route_fn)(struct nx_req *rq, char **cap);

struct nx_route {
	const char *method;
	const char *pattern;
	nx_route_fn fn;
	bool quick; /* answered on MHD's polling thread: no DuckDB, no waiting */
};

extern const struct nx_route nx__routes[];
extern const size_t nx__route_count;

/* Replies; each keeps the response in rq->resp, for nx__reply_flush to queue on the
 * MHD thread that serves the connection (MHD accepts it from no other), and records
 * status and size for the access log. The strbuf body is taken (released). */
enum MHD_Result nx__reply(struct nx_req *rq, unsigned status, const char *ctype,
			  struct nx_strbuf *body);
enum MHD_Result nx__reply_json(struct nx_req *rq, unsigned status, struct nx_strbuf *body);
/* Takes resp (NULL: MHD_NO) as the reply, with size for the access log. */
enum MHD_Result nx__reply_take(struct nx_req *rq, unsigned status, struct MHD_Response *resp,
			       uint64_t size);
/* On MHD's thread: queues the reply kept in rq->resp, if any, and returns
 * MHD's answer; else returns ret. */
enum MHD_Result nx__reply_flush(struct nx_req *rq, enum MHD_Result ret);
/* {"error":{"code":code,"message":...}} */
enum MHD_Result nx__reply_error(struct nx_req *rq, unsigned status, const char *code,
				const char *fmt, ...) NX_PRINTF(4, 5);
/* Chooses status and code from err->code (see profile_db.h and registry.h). */
enum MHD_Result nx__reply_nx_err(struct nx_req *rq, const struct nx_err *err);
/* A reply of unknown length (chunked): MHD calls reader for the body as the client
 * takes it, and release(cls) once the reply is done with (also when this fails). The
 * reader adds what it hands out to rq->bytes. */
enum MHD_Result nx__reply_stream(struct nx_req *rq, unsigned status, const char *ctype,
				 MHD_ContentReaderCallback reader, void *cls,
				 MHD_ContentReaderFreeCallback release);
/* Streams a file that has already been opened and checked. */
enum MHD_Result nx__reply_fd(struct nx_req *rq, int fd, uint64_t size, const char *ctype,
			     const char *filename);

/* The limits of one API query (timeout, rows, bytes, the watchdog) from the server's
 * options, and the query slots every query holds while DuckDB runs it (h_search.c). */
struct nx_query_limits nx__query_limits(struct nx_req *rq);
void nx__query_slot_take(struct nx_server *s);
void nx__query_slot_give(struct nx_server *s);

/* Runs sql on db (a profile's or its cache's) under the server's limits (timeout, result
 * size) and its bound on concurrent queries; the JSON result goes to out. */
int nx__query_db_limited(struct nx_req *rq, struct nx_pdb *db, const char *sql,
			 struct nx_strbuf *out, struct nx_err *err);
/* The same on p's open database. */
int nx__query_limited(struct nx_req *rq, struct nx_profile *p, const char *sql,
		      struct nx_strbuf *out, struct nx_err *err);

/* Runs sql on db (a profile's or its cache's) under the same limits and bound, handing
 * each result chunk to fn (profile_db.h, nx__pdb_query_chunks): for handlers that read
 * the values themselves. */
int nx__query_chunks_limited(struct nx_req *rq, struct nx_pdb *db, const char *sql,
			     nx__pdb_chunk_fn fn, void *arg, struct nx_err *err);

/* Resolves the {namespace, name} captures of the /profiles/namespace/ routes;
 * replies by itself (and sets *ret) on failure. open_db: with the profile's database
 * open. Release with nx__reg_put. */
struct nx_profile *nx__lookup_profile(struct nx_req *rq, char **cap, bool open_db,
				       enum MHD_Result *ret);

/* The handlers of the routes (routes.h). */
#define NX_ROUTE_PROTOTYPE(m, p, fn, q) enum MHD_Result fn(struct nx_req *rq, char **cap);
NX_ROUTES(NX_ROUTE_PROTOTYPE)
#undef NX_ROUTE_PROTOTYPE

/* The UI's pages and assets (src/ui/ui_assets.c), for paths outside /api/ on the UI port. */
enum MHD_Result nx__h_ui(struct nx_req *rq, const char *path);

/* The body of a _search request, parsed and checked (h_search.c; standalone so that
 * it can be fuzzed). type is one of the three request types; table and sql may be
 * NULL unless the type needs them. All three point into root. */
struct nx_search_body {
	struct json_t *root; /* jansson */
	const char *type, *table, *sql;
	const char *error; /* on failure: the reply's error code, e.g. "invalid_json" */
};
/* Parses len bytes (need not be NUL-terminated). On failure returns NX_EUSAGE with the
 * message in err and b->error set; release b in both cases. */
int nx_search_body_parse(const char *buf, size_t len, struct nx_search_body *b,
			 struct nx_err *err);
void nx_search_body_release(struct nx_search_body *b);

/* The tableSchema answer (table_schema.c). */
enum MHD_Result nx__search_table_schema(struct nx_req *rq, struct nx_profile *p,
					const char *table);

#endif
