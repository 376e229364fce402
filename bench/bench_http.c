/* SPDX-License-Identifier: MIT
 * bench_http.c: a minimal HTTP/1.1 client that times one request, repeated (not a test).
 *   bench_http PORT PATH BODY REPS ka|new [DIR SQL]
 * ka: REPS requests on one kept-alive connection after one untimed warm-up request;
 * new: each request on a connection of its own, timed from connect() to the reply's last
 * byte. A POST is sent when BODY is not empty. Prints the median seconds of the timed
 * requests. With DIR and SQL, each request is paired with one run of SQL by DuckDB
 * directly in this process (duckdb_query over views of the profile directory DIR,
 * parquet footers cached as the server's databases do; with BENCH_HTTP_RESIDENT=1 the
 * views SQL names, up to the server's row limit, are first copied into memory, as the
 * server copies small tables that are read often), the two alternating so that a
 * slow spell of the machine lands on both; it prints three figures then: the API's
 * median, DuckDB's median and the median of the per-pair ratios. The reply is read to its end by Content-Length or chunked encoding, with
 * TCP_NODELAY set, so the figure is the server's, not a client's own start-up (curl
 * parses its options and sets up TLS state per transfer; Python adds its interpreter). */
#include "common/compat.h"
#include "db/duck.h"
#include "db/duck_conn.h"
#include "db/profile_views.h"
#include "server/resident.h"
#include "common/strbuf.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

struct conn {
	int fd;
	char buf[1 << 16];
	size_t len, pos; /* bytes in buf, bytes consumed */
};

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* A failed system call: what, and errno's text. */
static void die(const char *what)
{
	fprintf(stderr, "bench_http: %s: %s\n", what, strerror(errno));
	exit(1);
}

/* A reply that is not what HTTP/1.1 says. */
static void bad_reply(const char *what)
{
	fprintf(stderr, "bench_http: bad reply: %s\n", what);
	exit(1);
}

static void dial(struct conn *c, int port)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons((unsigned short)port) };
	int one = 1;

	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	c->fd = socket(AF_INET, SOCK_STREAM, 0);
	if (c->fd < 0 || connect(c->fd, (struct sockaddr *)&a, sizeof(a)))
		die("connect");
	setsockopt(c->fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	c->len = c->pos = 0;
}

/* Makes at least one unread byte available; false at the end of the stream. */
static int more(struct conn *c)
{
	if (c->pos < c->len)
		return 1;
	ssize_t n = read(c->fd, c->buf, sizeof(c->buf));
	if (n < 0)
		die("read");
	c->len = (size_t)n;
	c->pos = 0;
	return n > 0;
}

/* Reads one line (up to CRLF) into out, without the CRLF. */
static void line(struct conn *c, char *out, size_t size)
{
	size_t n = 0;

	for (;;) {
		if (!more(c))
			bad_reply("reply ends inside a line");
		char ch = c->buf[c->pos++];
		if (ch == '\n')
			break;
		if (ch != '\r' && n + 1 < size)
			out[n++] = ch;
	}
	out[n] = '\0';
}

static void skip(struct conn *c, size_t n)
{
	while (n) {
		if (!more(c))
			bad_reply("reply ends inside its body");
		size_t k = c->len - c->pos < n ? c->len - c->pos : n;
		c->pos += k;
		n -= k;
	}
}

/* Reads one whole reply; exits unless its status is 200. */
static void reply(struct conn *c)
{
	char l[8192];
	long long length = -1;
	int chunked = 0;

	line(c, l, sizeof(l));
	if (strncmp(l, "HTTP/1.1 200", 12)) {
		fprintf(stderr, "bench_http: status line '%s'\n", l);
		exit(1);
	}
	for (;;) {
		line(c, l, sizeof(l));
		if (!l[0])
			break;
		if (!strncasecmp(l, "Content-Length:", 15))
			length = atoll(l + 15);
		else if (!strncasecmp(l, "Transfer-Encoding:", 18) && strstr(l, "chunked"))
			chunked = 1;
	}
	if (!chunked) {
		if (length < 0)
			bad_reply("reply has neither Content-Length nor chunks");
		skip(c, (size_t)length);
		return;
	}
	for (;;) {
		line(c, l, sizeof(l));
		size_t n = strtoul(l, NULL, 16);
		if (!n)
			break;
		skip(c, n);
		line(c, l, sizeof(l)); /* the CRLF after the chunk */
	}
	do /* trailers, then the empty line */
		line(c, l, sizeof(l));
	while (l[0]);
}

static void send_all(int fd, const char *p, size_t n)
{
	while (n) {
		ssize_t k = write(fd, p, n);
		if (k <= 0)
			die("write");
		p += k;
		n -= (size_t)k;
	}
}

static void no_cell(void *arg, size_t row, const char *column, int kind, const char *text)
{
	(void)arg;
	(void)row;
	(void)column;
	(void)kind;
	(void)text;
}

static void add_view(void *arg, size_t row, const char *column, int kind, const char *text)
{
	(void)row;
	(void)column;
	(void)kind;
	nx__resident_add(arg, text, 0);
}

/* BENCH_HTTP_RESIDENT=1: the views that sql names become in-memory tables, as the
 * server's copies of small tables (server/resident.h) are, so that the direct side
 * reads memory too and the ratio is the server's own cost. */
static int copy_views(struct nx_duck *d, const char *sql, struct nx_err *err)
{
	struct nx_resident r;
	uint64_t mask;
	int rc;

	nx__resident_init(&r, 0);
	rc = nx_duck_query_cells_plain(d, "SELECT view_name FROM duckdb_views() WHERE NOT internal",
				       add_view, &r, err);
	mask = rc ? 0 : nx__resident_mask(&r, sql);
	for (size_t i = 0; !rc && i < r.n; i++) {
		struct nx_strbuf q = NX_STRBUF_INIT, copy = NX_STRBUF_INIT, ddl = NX_STRBUF_INIT;

		int64_t rows = 0;

		if (!(mask >> i & 1))
			continue;
		nx_sql_quote_ident(&q, r.t[i].name);
		nx_strbuf_addf(&ddl, "SELECT count(*) FROM %s", q.buf);
		rc = nx_duck_query_i64(d, ddl.buf, &rows, err);
		nx_strbuf_reset(&ddl);
		if (rc || rows > NX_RESIDENT_ROWS) { /* as the server, which keeps it a view */
			nx_strbuf_release(&q);
			nx_strbuf_release(&ddl);
			continue;
		}
		nx_strbuf_addf(&copy, "%s copy", r.t[i].name);
		nx_strbuf_addstr(&ddl, "CREATE TABLE ");
		nx_sql_quote_ident(&ddl, copy.buf);
		nx_strbuf_addf(&ddl, " AS SELECT * FROM %s; DROP VIEW %s; ALTER TABLE ", q.buf, q.buf);
		nx_sql_quote_ident(&ddl, copy.buf);
		nx_strbuf_addf(&ddl, " RENAME TO %s", q.buf);
		rc = nx_duck_exec(d, ddl.buf, err);
		nx_strbuf_release(&q);
		nx_strbuf_release(&copy);
		nx_strbuf_release(&ddl);
	}
	nx__resident_release(&r);
	return rc;
}

/* DuckDB on dir's tables, as the server opens them, warmed with one run of sql. */
static struct nx_duck *direct_open(const char *dir, const char *sql)
{
	const char *resident = getenv("BENCH_HTTP_RESIDENT");
	struct nx_duck *d = NULL;
	struct nx_err err = { 0 };

	if (nx_duck_open(&d, 0, NULL, &err) ||
	    nx_duck_exec(d, NX_DUCK_FOOTER_CACHE_SQL, &err) ||
	    nx_db_create_views(d, dir, &err) ||
	    (resident && !strcmp(resident, "1") && copy_views(d, sql, &err)) ||
	    nx_duck_query_cells_plain(d, sql, no_cell, NULL, &err)) {
		fprintf(stderr, "bench_http: DuckDB on '%s': %s\n", dir, err.msg);
		exit(1);
	}
	return d;
}

static double direct_run(struct nx_duck *d, const char *sql)
{
	struct nx_err err = { 0 };
	double t0 = now();

	if (nx_duck_query_cells_plain(d, sql, no_cell, NULL, &err)) {
		fprintf(stderr, "bench_http: %s\n", err.msg);
		exit(1);
	}
	return now() - t0;
}

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
	static struct conn c;
	char req[1 << 16];
	int n;

	if ((argc != 6 && argc != 8) || (strcmp(argv[5], "ka") && strcmp(argv[5], "new"))) {
		fprintf(stderr, "usage: bench_http PORT PATH BODY REPS ka|new [DIR SQL]\n");
		return 2;
	}
	int port = atoi(argv[1]), reps = atoi(argv[4]), ka = !strcmp(argv[5], "ka");
	const char *path = argv[2], *body = argv[3];
	size_t blen = strlen(body);
	if (blen)
		n = snprintf(req, sizeof(req), "POST %s HTTP/1.1\r\nHost: 127.0.0.1\r\n"
			     "Content-Type: application/json\r\nContent-Length: %zu\r\n%s\r\n%s",
			     path, blen, ka ? "" : "Connection: close\r\n", body);
	else
		n = snprintf(req, sizeof(req), "GET %s HTTP/1.1\r\nHost: 127.0.0.1\r\n%s\r\n", path,
			     ka ? "" : "Connection: close\r\n");
	if (n < 0 || (size_t)n >= sizeof(req) || reps < 1) {
		fprintf(stderr, "bench_http: body too long or REPS < 1\n");
		return 2;
	}
	double *t = calloc((size_t)reps, sizeof(*t)), *td = calloc((size_t)reps, sizeof(*td));
	double *ratio = calloc((size_t)reps, sizeof(*ratio));
	struct nx_duck *d = argc == 8 ? direct_open(argv[6], argv[7]) : NULL;
	if (!t || !td || !ratio)
		die("calloc");
	if (ka) {
		dial(&c, port);
		send_all(c.fd, req, (size_t)n);
		reply(&c);
	}
	for (int i = 0; i < reps; i++) {
		double t0 = now();
		if (!ka)
			dial(&c, port);
		send_all(c.fd, req, (size_t)n);
		reply(&c);
		t[i] = now() - t0;
		if (!ka)
			close(c.fd);
		if (d) {
			td[i] = direct_run(d, argv[7]);
			ratio[i] = t[i] / td[i];
		}
	}
	if (ka)
		close(c.fd);
	qsort(t, (size_t)reps, sizeof(*t), cmp);
	if (d) {
		qsort(td, (size_t)reps, sizeof(*td), cmp);
		qsort(ratio, (size_t)reps, sizeof(*ratio), cmp);
		printf("%.6f %.6f %.3f\n", t[reps / 2], td[reps / 2], ratio[reps / 2]);
		nx_duck_close(d);
	} else {
		printf("%.6f\n", t[reps / 2]);
	}
	free(t);
	free(td);
	free(ratio);
	return 0;
}
