/* SPDX-License-Identifier: MIT
 * http_client.h: a minimal blocking HTTP/1.1 client for the server tests. One
 * request per TCP connection ("Connection: close"), so the reply ends at EOF. */
#ifndef NX_TEST_HTTP_CLIENT_H
#define NX_TEST_HTTP_CLIENT_H

#include <stdbool.h>
#include <stddef.h>

struct nx_http_resp {
	int status;      /* 0 when no status line was received */
	char *head;      /* status line and headers, NUL-terminated */
	char *body;      /* NUL-terminated (chunked bodies are decoded) */
	size_t body_len;
};

/* Sends method + path to 127.0.0.1:port. host NULL sends "Host: 127.0.0.1:<port>";
 * "" sends no Host header. extra is more header lines, each ending in "\r\n"
 * (or NULL). body may be NULL. Returns 0 when a reply was read, -1 otherwise. */
int nx_http_request(unsigned port, const char *method, const char *path, const char *host,
		    const char *extra, const char *body, size_t body_len,
		    struct nx_http_resp *out);

/* POST path with a JSON body and the usual headers. */
int nx_http_post_json(unsigned port, const char *path, const char *json,
		      struct nx_http_resp *out);
int nx_http_get(unsigned port, const char *path, struct nx_http_resp *out);

/* Bounds every send and receive of the calls below (default 120 s; 0 restores it).
 * A reply that does not come in time makes the call fail. */
void nx_http_set_timeout(unsigned seconds);

/* Sends raw bytes as they are and reads the reply. */
int nx_http_raw(unsigned port, const char *data, size_t len, struct nx_http_resp *out);

/* Value of a header (case-insensitive name) copied into buf; false if absent. */
bool nx_http_header(const struct nx_http_resp *r, const char *name, char *buf, size_t size);

void nx_http_resp_free(struct nx_http_resp *r);

#endif
