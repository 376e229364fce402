/* SPDX-License-Identifier: MIT
 * http_client.c: test-only HTTP/1.1 client over a loopback TCP socket. */
#define _GNU_SOURCE
#include "helper/http_client.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

static unsigned io_timeout_s = 120;

void nx_http_set_timeout(unsigned seconds)
{
	io_timeout_s = seconds ? seconds : 120;
}

static int connect_port(unsigned port)
{
	struct sockaddr_in a;
	struct timeval tv = { (time_t)io_timeout_s, 0 };
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	if (fd < 0)
		return -1;
	memset(&a, 0, sizeof(a));
	a.sin_family = AF_INET;
	a.sin_port = htons((unsigned short)port);
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	if (connect(fd, (struct sockaddr *)&a, sizeof(a)) != 0) {
		close(fd);
		return -1;
	}
	return fd;
}

static int send_all(int fd, const char *p, size_t n)
{
	while (n) {
		ssize_t w = send(fd, p, n, MSG_NOSIGNAL);
		if (w <= 0)
			return -1;
		p += w;
		n -= (size_t)w;
	}
	return 0;
}

/* Decodes a chunked body in place; returns the decoded length. */
static size_t dechunk(char *b, size_t n)
{
	size_t in = 0, out = 0;

	while (in < n) {
		char *end;
		unsigned long len = strtoul(b + in, &end, 16);
		char *crlf = strstr(end, "\r\n");

		if (!crlf || len == 0)
			break;
		in = (size_t)(crlf - b) + 2;
		if (in + len > n)
			len = n - in;
		memmove(b + out, b + in, len);
		out += len;
		in += len + 2;
	}
	b[out] = '\0';
	return out;
}

static int parse(char *buf, size_t n, struct nx_http_resp *out)
{
	char *sep = strstr(buf, "\r\n\r\n");
	char te[64];

	if (!sep || sscanf(buf, "HTTP/1.%*d %d", &out->status) != 1)
		return -1;
	out->head = strndup(buf, (size_t)(sep - buf) + 2);
	out->body_len = n - (size_t)(sep + 4 - buf);
	out->body = malloc(out->body_len + 1);
	memcpy(out->body, sep + 4, out->body_len);
	out->body[out->body_len] = '\0';
	if (nx_http_header(out, "Transfer-Encoding", te, sizeof(te)) && !strcasecmp(te, "chunked"))
		out->body_len = dechunk(out->body, out->body_len);
	return 0;
}

int nx_http_raw(unsigned port, const char *data, size_t len, struct nx_http_resp *out)
{
	size_t n = 0, cap = 65536;
	char *buf;
	int fd, rc = -1;

	memset(out, 0, sizeof(*out));
	fd = connect_port(port);
	if (fd < 0)
		return -1;
	buf = malloc(cap + 1);
	/* A failed send is not fatal: the server may answer (413) before reading the
	 * whole upload, and that answer is what the caller wants. */
	(void)send_all(fd, data, len);
	for (;;) {
		ssize_t r;
		if (cap - n < 65536) {
			cap *= 2;
			buf = realloc(buf, cap + 1);
		}
		r = recv(fd, buf + n, cap - n, 0);
		if (r <= 0)
			break;
		n += (size_t)r;
	}
	buf[n] = '\0';
	rc = parse(buf, n, out);
	free(buf);
	close(fd);
	return rc;
}

int nx_http_request(unsigned port, const char *method, const char *path, const char *host,
		    const char *extra, const char *body, size_t body_len,
		    struct nx_http_resp *out)
{
	char *req = NULL, hosthdr[300];
	int rc, len;

	if (!host)
		snprintf(hosthdr, sizeof(hosthdr), "Host: 127.0.0.1:%u\r\n", port);
	else if (!*host)
		hosthdr[0] = '\0';
	else
		snprintf(hosthdr, sizeof(hosthdr), "Host: %s\r\n", host);
	len = asprintf(&req, "%s %s HTTP/1.1\r\n%sConnection: close\r\n%sContent-Length: %zu\r\n\r\n",
		       method, path, hosthdr, extra ? extra : "", body ? body_len : 0);
	if (len < 0)
		return -1;
	if (body && body_len) {
		req = realloc(req, (size_t)len + body_len);
		memcpy(req + len, body, body_len);
		len += (int)body_len;
	}
	rc = nx_http_raw(port, req, (size_t)len, out);
	free(req);
	return rc;
}

int nx_http_post_json(unsigned port, const char *path, const char *json,
		      struct nx_http_resp *out)
{
	return nx_http_request(port, "POST", path, NULL, "Content-Type: application/json\r\n",
			       json, strlen(json), out);
}

int nx_http_get(unsigned port, const char *path, struct nx_http_resp *out)
{
	return nx_http_request(port, "GET", path, NULL, NULL, NULL, 0, out);
}

bool nx_http_header(const struct nx_http_resp *r, const char *name, char *buf, size_t size)
{
	size_t n = strlen(name);
	const char *p = r->head ? strstr(r->head, "\r\n") : NULL;

	while (p && p[2]) {
		const char *line = p + 2, *eol = strstr(line, "\r\n");
		if (!eol)
			break;
		if ((size_t)(eol - line) > n && line[n] == ':' && !strncasecmp(line, name, n)) {
			const char *v = line + n + 1;
			size_t len;
			while (*v == ' ')
				v++;
			len = (size_t)(eol - v);
			if (len >= size)
				len = size - 1;
			memcpy(buf, v, len);
			buf[len] = '\0';
			return true;
		}
		p = eol;
	}
	return false;
}

void nx_http_resp_free(struct nx_http_resp *r)
{
	free(r->head);
	free(r->body);
	memset(r, 0, sizeof(*r));
}
