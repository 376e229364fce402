/* SPDX-License-Identifier: MIT
 * dispatch.c: the MHD request callbacks. The first callback of a request checks
 * the Host and Origin headers (DNS-rebinding defence) and the announced body size;
 * the following ones collect the body up to the limit; the last one matches the
 * route table. A quick route's handler runs there and then; any other is posted to a
 * worker (workers.h) with the connection suspended, because MHD's few polling
 * threads serve every connection and must not wait for DuckDB. The worker resumes
 * the connection, and MHD's next callback queues the reply the handler left. The
 * completion callback writes the access log line and frees the request state. The
 * connection callback gives every connection a deadline for sending its request
 * (struct nx_conn). */
#include "common/compat.h"
#include "server/dispatch.h"
#include "server/http.h"
#include "common/xalloc.h"
#include "common/log.h"
#include "common/strbuf.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <netinet/in.h>
#include <arpa/inet.h>

/* "localhost", "127.0.0.1" or "[::1]", each with an optional ":port". */
static bool loopback_authority(const char *h, size_t len)
{
	static const char *const names[] = { "localhost", "127.0.0.1", "[::1]" };

	for (size_t i = 0; i < NX_ARRAY_SIZE(names); i++) {
		size_t n = strlen(names[i]);
		const char *p;

		if (len < n || strncasecmp(h, names[i], n))
			continue;
		if (len == n)
			return true;
		if (h[n] != ':' || len == n + 1 || len > n + 6)
			continue;
		for (p = h + n + 1; p < h + len && *p >= '0' && *p <= '9'; p++)
			;
		if (p == h + len)
			return true;
	}
	return false;
}

static bool origin_ok(const char *o)
{
	if (!strncasecmp(o, "http://", 7))
		o += 7;
	else if (!strncasecmp(o, "https://", 8))
		o += 8;
	else
		return false;
	return loopback_authority(o, strlen(o));
}

static enum MHD_Result add_arg_len(void *cls, enum MHD_ValueKind kind, const char *key,
				   const char *value)
{
	size_t *n = cls;

	(void)kind;
	*n += strlen(key) + (value ? strlen(value) + 1 : 0) + 1;
	return MHD_YES;
}

/* Rejections decided from the headers alone; returns false after replying. MHD's own
 * buffer (NX_MHD_MEMORY in http.h) is larger than the limits checked here, so an
 * oversized URI or header block up to about 100 kB reaches us and gets a JSON reply,
 * not MHD's HTML. */
static bool headers_ok(struct nx_req *rq)
{
	const char *host = MHD_lookup_connection_value(rq->conn, MHD_HEADER_KIND, "Host");
	const char *origin = MHD_lookup_connection_value(rq->conn, MHD_HEADER_KIND, "Origin");
	const char *clen =
		MHD_lookup_connection_value(rq->conn, MHD_HEADER_KIND, "Content-Length");
	const union MHD_ConnectionInfo *ci =
		MHD_get_connection_info(rq->conn, MHD_CONNECTION_INFO_REQUEST_HEADER_SIZE);
	size_t uri = strlen(rq->url);

	MHD_get_connection_values(rq->conn, MHD_GET_ARGUMENT_KIND, add_arg_len, &uri);
	if (uri > NX_MAX_URI) {
		nx__reply_error(rq, 414, "uri_too_long",
				"the request URI is about %zu bytes; the limit is %u", uri,
				NX_MAX_URI);
		return false;
	}
	if (ci && ci->header_size > NX_MAX_HEADERS) {
		nx__reply_error(rq, 431, "headers_too_large",
				"the request headers take %zu bytes; the limit is %u",
				ci->header_size, NX_MAX_HEADERS);
		return false;
	}
	if (host && !loopback_authority(host, strlen(host))) {
		nx__reply_error(rq, 403, "forbidden_host",
				"Host '%.100s' is not a loopback name: this server only answers "
				"requests addressed to localhost, 127.0.0.1 or [::1]", host);
		return false;
	}
	if (origin && !origin_ok(origin)) {
		nx__reply_error(rq, 403, "forbidden_origin",
				"requests from origin '%.100s' are refused: only pages served from "
				"localhost may call this API", origin);
		return false;
	}
	if (clen && strtoull(clen, NULL, 10) > rq->s->o.max_body_bytes) {
		nx__reply_error(rq, 413, "payload_too_large",
				"the request body (%s bytes) exceeds the %zu-byte limit", clen,
				rq->s->o.max_body_bytes);
		return false;
	}
	return true;
}

/* Matches url against a pattern of literal text, '*' (one non-empty segment) and
 * a final '**' (the non-empty rest). Captures are malloc'd. */
static bool match(const char *pat, const char *url, char **cap, size_t *ncap)
{
	*ncap = 0;
	while (*pat) {
		if (pat[0] == '*' && pat[1] == '*') {
			if (!*url)
				return false;
			cap[(*ncap)++] = nx_xstrdup(url);
			return true;
		}
		if (*pat == '*') {
			size_t len = strcspn(url, "/");
			if (!len || *ncap == NX_MAX_CAPTURES - 1)
				return false;
			cap[(*ncap)++] = nx_xstrndup(url, len);
			url += len;
			pat++;
			continue;
		}
		if (*pat != *url)
			return false;
		pat++;
		url++;
	}
	return !*url;
}

static void free_caps(char **cap, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(cap[i]);
		cap[i] = NULL;
	}
}

/* Whether the connection came in on the UI port (its local port; ui_port is set
 * before the UI daemon starts, so no thread reads it while it is written). */
static bool on_ui_port(const struct nx_server *s, struct MHD_Connection *conn)
{
	const union MHD_ConnectionInfo *ci =
		MHD_get_connection_info(conn, MHD_CONNECTION_INFO_CONNECTION_FD);
	struct sockaddr_storage ss;
	socklen_t len = sizeof(ss);

	if (!s->o.ui || !ci || getsockname(ci->connect_fd, (struct sockaddr *)&ss, &len) != 0)
		return false;
	return ntohs(((struct sockaddr_in *)&ss)->sin_port) == s->ui_port; /* same offset in v6 */
}

/* On a worker, with the connection suspended: the handler, then the connection goes
 * back to MHD, whose next callback for it queues the reply (nx__on_request). */
static void handler_job(void *arg)
{
	struct nx_req *rq = arg;

	rq->ret = rq->route->fn(rq, rq->cap);
	MHD_resume_connection(rq->conn);
}

static enum MHD_Result route(struct nx_req *rq)
{
	char path[4096], allow[64] = "";
	char *cap[NX_MAX_CAPTURES] = { 0 };
	size_t ncap, len = strlen(rq->url);
	bool head = !strcmp(rq->method, "HEAD");

	if (len >= sizeof(path))
		return nx__reply_error(rq, 414, "uri_too_long",
				       "the URL path is %zu bytes; the limit is %zu", len,
				       sizeof(path) - 1);
	memcpy(path, rq->url, len + 1);
	if (len > 1 && path[len - 1] == '/')
		path[len - 1] = '\0';
	for (size_t i = 0; i < nx__route_count; i++) {
		const struct nx_route *r = &nx__routes[i];
		enum MHD_Result ret;

		if (!match(r->pattern, path, cap, &ncap)) {
			free_caps(cap, ncap);
			continue;
		}
		if (strcmp(r->method, rq->method) && !(head && !strcmp(r->method, "GET"))) {
			if (!strstr(allow, r->method))
				snprintf(allow + strlen(allow), sizeof(allow) - strlen(allow), "%s%s",
					 allow[0] ? ", " : "", r->method);
			free_caps(cap, ncap);
			continue;
		}
		if (r->quick) {
			ret = r->fn(rq, cap);
			free_caps(cap, ncap);
			return ret;
		}
		/* From here the worker owns rq until it resumes the connection. */
		rq->route = r;
		memcpy(rq->cap, cap, sizeof(cap));
		rq->on_worker = true;
		MHD_suspend_connection(rq->conn);
		nx__workers_post(&rq->s->workers, &rq->job, handler_job, rq);
		return MHD_YES;
	}
	if (rq->ui && strncmp(path, "/api/", 5) && (!strcmp(rq->method, "GET") || head))
		return nx__h_ui(rq, path);
	if (allow[0]) {
		rq->allow = nx_xstrdup(allow);
		return nx__reply_error(rq, 405, "method_not_allowed",
				       "%s is not supported here; use %s", rq->method, allow);
	}
	return nx__reply_error(rq, 404, "not_found",
			       "no endpoint at '%.200s'; docs/api.md lists the endpoints, which "
			       "all start with /api/v1/", rq->url);
}

/* A response may wait for a query slot and then run a query: the inactivity timeout
 * while a request is served is longer than the one for sending it. */
#define RESPONSE_TIMEOUT_S 120

static void on_request_deadline(void *arg)
{
	struct nx_conn *c = arg;

	/* MHD's thread then sees EOF and closes the connection; the fd stays open until
	 * the CLOSED notice, which disarms first, so it cannot be another socket. */
	shutdown(c->fd, SHUT_RDWR);
}

static void conn_arm(struct nx_conn *c, struct MHD_Connection *conn)
{
	if (c->armed)
		return;
	MHD_set_connection_option(conn, MHD_CONNECTION_OPTION_TIMEOUT,
				  c->s->o.request_timeout_s);
	nx__wd_arm(&c->s->wd, &c->wd, c->s->o.request_timeout_s * 1000u, on_request_deadline, c);
	c->armed = true;
}

static void conn_disarm(struct nx_conn *c)
{
	if (!c->armed)
		return;
	nx__wd_disarm(&c->s->wd, &c->wd);
	c->armed = false;
}

static struct nx_conn *conn_of(struct MHD_Connection *conn)
{
	const union MHD_ConnectionInfo *ci =
		MHD_get_connection_info(conn, MHD_CONNECTION_INFO_SOCKET_CONTEXT);

	return ci ? ci->socket_context : NULL;
}

/* The whole request is in (or has been answered early): the deadline is lifted. */
static void request_received(struct nx_req *rq)
{
	struct nx_conn *c = conn_of(rq->conn);

	if (!c || !c->armed)
		return;
	conn_disarm(c);
	MHD_set_connection_option(rq->conn, MHD_CONNECTION_OPTION_TIMEOUT,
				  (unsigned)RESPONSE_TIMEOUT_S);
}

void nx__on_connection(void *cls, struct MHD_Connection *conn, void **socket_context,
		       enum MHD_ConnectionNotificationCode code)
{
	struct nx_conn *c = *socket_context;

	if (code == MHD_CONNECTION_NOTIFY_STARTED) {
		const union MHD_ConnectionInfo *ci =
			MHD_get_connection_info(conn, MHD_CONNECTION_INFO_CONNECTION_FD);

		c = nx_xcalloc(1, sizeof(*c));
		c->s = cls;
		c->fd = ci ? ci->connect_fd : -1;
		*socket_context = c;
		if (c->fd >= 0)
			conn_arm(c, conn);
		return;
	}
	if (c) {
		conn_disarm(c);
		free(c);
		*socket_context = NULL;
	}
}

size_t nx__unescape(void *cls, struct MHD_Connection *conn, char *s)
{
	size_t n = MHD_http_unescape(s);
	struct nx_conn *c;

	(void)cls;
	if (strlen(s) != n && (c = conn_of(conn)))
		c->nul_in_url = true;
	return n;
}

/* A %00 in the URL or its arguments (nx__unescape) is refused before anything reads
 * them; returns false after replying. */
static bool url_ok(struct nx_req *rq)
{
	struct nx_conn *c = conn_of(rq->conn);

	if (!c || !c->nul_in_url)
		return true;
	c->nul_in_url = false;
	nx__reply_error(rq, 400, "bad_request",
			"the URL holds an encoded NUL byte (%%00), which no path or query "
			"parameter may contain");
	return false;
}

enum MHD_Result nx__on_request(void *cls, struct MHD_Connection *conn, const char *url,
			       const char *method, const char *version, const char *upload_data,
			       size_t *upload_data_size, void **con_cls)
{
	struct nx_req *rq = *con_cls;

	(void)version;
	if (rq && rq->on_worker) { /* resumed: the handler is done */
		rq->on_worker = false;
		free_caps(rq->cap, NX_MAX_CAPTURES);
		return nx__reply_flush(rq, rq->ret);
	}
	if (!rq) {
		rq = nx_xcalloc(1, sizeof(*rq));
		rq->s = cls;
		rq->conn = conn;
		rq->method = method;
		rq->url = nx_xstrdup(url);
		clock_gettime(CLOCK_MONOTONIC, &rq->t0);
		rq->ui = on_ui_port(rq->s, conn);
		*con_cls = rq;
		if (!url_ok(rq) || !headers_ok(rq)) /* they reply by themselves when they refuse */
			request_received(rq);
		return nx__reply_flush(rq, MHD_YES);
	}
	if (*upload_data_size) {
		if (!rq->answered && !rq->body_too_large) {
			if (rq->body.len + *upload_data_size > rq->s->o.max_body_bytes)
				rq->body_too_large = true;
			else
				nx_strbuf_add(&rq->body, upload_data, *upload_data_size);
		}
		*upload_data_size = 0;
		return MHD_YES;
	}
	request_received(rq);
	if (rq->answered)
		return MHD_YES;
	if (rq->body_too_large)
		return nx__reply_flush(rq, nx__reply_error(rq, 413, "payload_too_large",
							   "the request body exceeds the %zu-byte "
							   "limit", rq->s->o.max_body_bytes));
	enum MHD_Result ret = route(rq);
	if (rq->on_worker) /* rq is the worker's now; the reply comes after the resume */
		return MHD_YES;
	return nx__reply_flush(rq, ret);
}

void nx__on_completed(void *cls, struct MHD_Connection *conn, void **con_cls,
		      enum MHD_RequestTerminationCode toe)
{
	struct nx_server *s = cls;
	struct nx_req *rq = *con_cls;
	struct nx_conn *c = conn_of(conn);
	struct timespec t1;

	if (c) /* a kept-alive connection gets the same deadline for its next request */
		conn_arm(c, conn);
	if (!rq)
		return;
	if (!s->o.quiet && nx_log_enabled(NX_LOG_INFO)) { /* the access log */
		struct nx_strbuf line = NX_STRBUF_INIT;
		clock_gettime(CLOCK_MONOTONIC, &t1);
		double ms = (double)(t1.tv_sec - rq->t0.tv_sec) * 1e3 +
			    (double)(t1.tv_nsec - rq->t0.tv_nsec) / 1e6;
		nx_strbuf_addf(&line, "%s \"", rq->method);
		nx_log_escaped(&line, rq->url); /* a URL cannot forge log lines */
		if (rq->status)
			nx_strbuf_addf(&line, "\" %u %" PRIu64 "B %.1fms%s", rq->status, rq->bytes,
				       ms, toe == MHD_REQUEST_TERMINATED_COMPLETED_OK ? ""
										: " (aborted)");
		else
			nx_strbuf_addf(&line, "\" - %.1fms (client went away)", ms);
		nx_log(NX_LOG_INFO, "neuron-explorer api: %s", line.buf);
		nx_strbuf_release(&line);
	}
	if (rq->resp) /* never queued */
		MHD_destroy_response(rq->resp);
	free_caps(rq->cap, NX_MAX_CAPTURES);
	nx_strbuf_release(&rq->body);
	free(rq->url);
	free(rq->allow);
	free(rq);
	*con_cls = NULL;
}
