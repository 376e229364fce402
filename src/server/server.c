/* SPDX-License-Identifier: MIT
 * server.c: lifecycle of the API server (see server.h). We bind the socket
 * ourselves so a taken port gives a precise message, then hand it to MHD, which
 * serves each connection on its own thread (handlers block on DuckDB). Idle or
 * trickling clients are closed after the request timeout (see struct nx_conn). With
 * opts.ui a second daemon on the UI port shares all state and routes. */
#include "common/compat.h"
#include "server/server.h"
#include "server/slice_dir.h"
#include "server/dispatch.h"
#include "server/http.h"
#include "server/timeline.h"
#include "common/env_num.h"
#include "common/xalloc.h"
#include "common/log.h"
#include "common/strbuf.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#define MAX_CONNECTIONS 4096
/* Descriptors kept for other than connections: DuckDB's files, among them the first
 * parquet file of each kept prepared statement (at most NX_STMT_CACHE_TOTAL, stmt_cache.h). */
#define FD_RESERVE 512

void nx_server_opts_init(struct nx_server_opts *o, const char *data_path)
{
	memset(o, 0, sizeof(*o));
	o->data_path = data_path;
	o->host = "127.0.0.1";
	o->port = 3002;
	o->ui_port = 3001;
}

static void apply_defaults(struct nx_server_opts *o)
{
	if (!o->host)
		o->host = "127.0.0.1";
	if (!o->query_timeout_ms)
		o->query_timeout_ms = 30000;
	if (!o->max_result_rows)
		o->max_result_rows = 100000;
	if (!o->max_result_bytes)
		o->max_result_bytes = (uint64_t)64 << 20;
	if (!o->max_body_bytes)
		o->max_body_bytes = (size_t)1 << 20;
	if (!o->request_timeout_s)
		o->request_timeout_s = 10;
	if (!o->cache_retry_ms)
		o->cache_retry_ms = 60000;
}

/* How many connections MHD may hold at once. Each idle one costs a thread and a file
 * descriptor until its request deadline closes it, so the limit is as high as the
 * descriptor limit allows (raised to its hard maximum), keeping some for DuckDB's
 * parquet files. A flood of idle connections then cannot lock other clients out. */
static unsigned connection_limit(void)
{
	struct rlimit rl;
	rlim_t n;

	if (getrlimit(RLIMIT_NOFILE, &rl) != 0)
		return 512;
	if (rl.rlim_cur < rl.rlim_max && rl.rlim_cur < MAX_CONNECTIONS + FD_RESERVE) {
		rlim_t want = MAX_CONNECTIONS + FD_RESERVE;
		struct rlimit raised;

		if (want > rl.rlim_max)
			want = rl.rlim_max;
		raised.rlim_cur = want;
		raised.rlim_max = rl.rlim_max;
		if (setrlimit(RLIMIT_NOFILE, &raised) == 0)
			rl.rlim_cur = want;
	}
	n = rl.rlim_cur > 2 * FD_RESERVE ? rl.rlim_cur - FD_RESERVE : rl.rlim_cur / 2;
	return (unsigned)(n > MAX_CONNECTIONS ? MAX_CONNECTIONS : n);
}

/* Resolves the host to a loopback socket address; anything else is refused. */
static int loopback_addr(const char *host, struct sockaddr_storage *ss, socklen_t *len,
			 struct nx_err *err)
{
	struct sockaddr_in *v4 = (struct sockaddr_in *)ss;
	struct sockaddr_in6 *v6 = (struct sockaddr_in6 *)ss;

	memset(ss, 0, sizeof(*ss));
	if (!strcmp(host, "localhost"))
		host = "127.0.0.1";
	if (inet_pton(AF_INET, host, &v4->sin_addr) == 1) {
		if ((ntohl(v4->sin_addr.s_addr) >> 24) != 127)
			goto refuse;
		v4->sin_family = AF_INET;
		*len = sizeof(*v4);
		return 0;
	}
	if (inet_pton(AF_INET6, host, &v6->sin6_addr) == 1) {
		if (!IN6_IS_ADDR_LOOPBACK(&v6->sin6_addr))
			goto refuse;
		v6->sin6_family = AF_INET6;
		*len = sizeof(*v6);
		return 0;
	}
	return nx_errf(err, NX_EUSAGE, "'%s' is not an IP address", host);
refuse:
	return nx_errf(err, NX_EUSAGE,
		       "refusing to listen on %s: the API server binds to loopback addresses "
		       "only (127.0.0.1 or ::1)", host);
}

static int bind_socket(struct nx_server *s, unsigned port, const char *flag, int *out_fd,
		       unsigned *out_port, struct nx_err *err)
{
	struct sockaddr_storage ss;
	socklen_t len;
	int one = 1, fd, rc;

	rc = loopback_addr(s->host, &ss, &len, err);
	if (rc)
		return rc;
	((struct sockaddr_in *)&ss)->sin_port = htons((uint16_t)port); /* same offset in v6 */
	fd = socket(ss.ss_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0)
		return nx_errf(err, -errno, "cannot create a socket: %s", strerror(errno));
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(fd, (struct sockaddr *)&ss, len) != 0) {
		int e = errno;
		close(fd);
		if (e == EADDRINUSE)
			return nx_errf(err, -e,
				       "port %u on %s is already in use (is another neuron-explorer "
				       "serving it? choose another with %s)",
				       port, s->host, flag);
		return nx_errf(err, -e, "cannot bind %s:%u: %s", s->host, port, strerror(e));
	}
	if (listen(fd, SOMAXCONN) != 0) {
		int e = errno;
		close(fd);
		return nx_errf(err, -e, "cannot listen on %s:%u: %s", s->host, port, strerror(e));
	}
	len = sizeof(ss);
	getsockname(fd, (struct sockaddr *)&ss, &len);
	*out_port = ntohs(((struct sockaddr_in *)&ss)->sin_port);
	*out_fd = fd;
	return 0;
}

static void mhd_log(void *cls, const char *fmt, va_list ap)
{
	struct nx_server *s = cls;
	struct nx_strbuf line = NX_STRBUF_INIT;

	if (s->o.quiet || !nx_log_enabled(NX_LOG_WARN))
		return;
	nx_strbuf_vaddf(&line, fmt, ap);
	while (line.len && line.buf[line.len - 1] == '\n') /* libmicrohttpd ends its own */
		line.buf[--line.len] = '\0';
	nx_log(NX_LOG_WARN, "neuron-explorer api: %s", nx_strbuf_str(&line));
	nx_strbuf_release(&line);
}

/* Polling threads per daemon: one per core (at most 4). They only parse requests and
 * move bytes; no handler that waits runs on them. */
static unsigned polling_threads(void)
{
	long n = sysconf(_SC_NPROCESSORS_ONLN);

	return n < 1 ? 1u : n > 4 ? 4u : (unsigned)n;
}

static struct MHD_Daemon *start_daemon(struct nx_server *s, int fd)
{
	/* The daemon's polling threads (polling_threads()) share its connections, each
	 * connection served by one; handlers run on the workers with their connection
	 * suspended (dispatch.c). */
	unsigned flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_EPOLL |
			 MHD_ALLOW_SUSPEND_RESUME | MHD_USE_ERROR_LOG;

	if (strchr(s->host, ':'))
		flags |= MHD_USE_IPv6;
	return MHD_start_daemon(flags, 0, NULL, NULL, nx__on_request, s,
				MHD_OPTION_EXTERNAL_LOGGER, mhd_log, s,
				MHD_OPTION_LISTEN_SOCKET, fd,
				MHD_OPTION_NOTIFY_COMPLETED, nx__on_completed, s,
				MHD_OPTION_NOTIFY_CONNECTION, nx__on_connection, s,
				MHD_OPTION_UNESCAPE_CALLBACK, nx__unescape, s,
				MHD_OPTION_CONNECTION_TIMEOUT, s->o.request_timeout_s,
				MHD_OPTION_CONNECTION_LIMIT, connection_limit(),
				MHD_OPTION_CONNECTION_MEMORY_LIMIT, NX_MHD_MEMORY,
				MHD_OPTION_THREAD_POOL_SIZE, polling_threads(),
				MHD_OPTION_END);
}

/* What earlier servers left: in the timeline cache, the private build directories of
 * the dead ones, the caches of deleted profiles (lod.h); in the temporary folder, the
 * slices of the dead ones (slice_dir.h). */
static void clean_caches(struct nx_server *s)
{
	struct nx_strbuf log = NX_STRBUF_INIT;

	nx__lod_clean(s->reg.data_real, s->reg.global_dir, &log);
	nx__slice_dirs_sweep(&log);
	for (const char *l = log.buf; !s->o.quiet && l && *l; l = strchr(l, '\n') + 1)
		nx_log(NX_LOG_INFO, "neuron-explorer api: %.*s", (int)strcspn(l, "\n"), l);
	nx_strbuf_release(&log);
}

int nx_server_start(struct nx_server **out, const struct nx_server_opts *o, struct nx_err *err)
{
	struct nx_server *s;
	long long timeout_s = 0;
	int rc;

	*out = NULL;
	/* NX_SERVER_QUERY_TIMEOUT, when set, replaces the query timeout (a user's SQL on a
	 * large profile may need more than the default 30 s); a bad value starts nothing */
	if (nx_env_range("NX_SERVER_QUERY_TIMEOUT", 1, 86400, "seconds", &timeout_s, err))
		return err->code;
	s = nx_xcalloc(1, sizeof(*s));
	nx__lod_builds_init(&s->builds);
	s->listen_fd = -1;
	s->ui_listen_fd = -1;
	s->wake[0] = s->wake[1] = -1;
	s->o = *o;
	if (timeout_s)
		s->o.query_timeout_ms = (unsigned)(timeout_s * 1000);
	apply_defaults(&s->o);
	s->data_path = nx_xstrdup(o->data_path ? o->data_path : ".");
	s->host = nx_xstrdup(s->o.host);
	s->o.data_path = s->data_path;
	s->o.host = s->host;
	rc = nx__reg_init(&s->reg, s->data_path, s->o.threads, err);
	if (rc)
		goto fail;
	s->reg.quiet = s->o.quiet;
	clean_caches(s);
	if (pipe2(s->wake, O_CLOEXEC) != 0) {
		rc = nx_errf(err, -errno, "cannot create a pipe: %s", strerror(errno));
		goto fail;
	}
	long cores = sysconf(_SC_NPROCESSORS_ONLN);
	sem_init(&s->query_slots, 0, (unsigned)(cores > 2 ? cores : 2));
	s->have_slots = true;
	rc = bind_socket(s, s->o.port, "--api-server-port", &s->listen_fd, &s->port, err);
	if (rc)
		goto fail;
	if (s->o.ui) {
		rc = bind_socket(s, s->o.ui_port, "--port", &s->ui_listen_fd, &s->ui_port, err);
		if (rc)
			goto fail;
	}
	rc = nx__wd_start(&s->wd, err);
	if (!rc)
		rc = nx__workers_start(&s->workers, NX_WORKERS_MAX, err);
	if (rc)
		goto fail;
	s->daemon = start_daemon(s, s->listen_fd);
	if (!s->daemon) {
		rc = nx_errf(err, -EIO, "cannot start the HTTP server on %s:%u", s->host, s->port);
		goto fail;
	}
	s->listen_fd = -1; /* MHD closes it when stopped */
	if (s->o.ui) {
		s->ui_daemon = start_daemon(s, s->ui_listen_fd);
		if (!s->ui_daemon) {
			rc = nx_errf(err, -EIO, "cannot start the UI server on %s:%u", s->host,
				     s->ui_port);
			goto fail;
		}
		s->ui_listen_fd = -1;
	}
	*out = s;
	return 0;
fail:
	nx_server_stop(s);
	return rc;
}

unsigned nx_server_port(const struct nx_server *s)
{
	return s->port;
}

unsigned nx_server_ui_port(const struct nx_server *s)
{
	return s->ui_daemon ? s->ui_port : 0;
}

static volatile int wait_fd = -1;

static void on_signal(int sig)
{
	unsigned char b = (unsigned char)sig;
	int fd = wait_fd;

	if (fd >= 0 && write(fd, &b, 1) < 0) {
		/* nothing useful to do in a signal handler */
	}
}

int nx_server_wait(struct nx_server *s)
{
	struct sigaction sa, old_int, old_term;
	unsigned char b = 0;
	ssize_t n;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	wait_fd = s->wake[1];
	sigaction(SIGINT, &sa, &old_int);
	sigaction(SIGTERM, &sa, &old_term);
	do {
		n = read(s->wake[0], &b, 1);
	} while (n < 0 && errno == EINTR);
	sigaction(SIGINT, &old_int, NULL);
	sigaction(SIGTERM, &old_term, NULL);
	wait_fd = -1;
	return n == 1 ? b : 0;
}

void nx_server_shutdown(struct nx_server *s)
{
	unsigned char b = 0;

	if (s && s->wake[1] >= 0 && write(s->wake[1], &b, 1) < 0) {
		/* the waiter is gone already */
	}
}

static void *warm_main(void *arg)
{
	struct nx_server *s = arg;
	struct nx_profile *p;
	struct nx_err err = { 0 };

	if (nx__reg_get(&s->reg, s->warm_name, false, &p, &err) == 0) {
		/* a failure stays with the profile, as after a request */
		nx__tl_lod_put(p, nx__tl_lod_of(s, p));
		nx__reg_put(&s->reg, p);
	}
	return NULL;
}

int nx_server_warm_timeline(struct nx_server *s, const char *name, struct nx_err *err)
{
	int e;

	if (s->have_warm)
		return nx_errf(err, NX_EUSAGE, "a timeline warm-up already runs");
	s->warm_name = nx_xstrdup(name);
	if ((e = pthread_create(&s->warm, NULL, warm_main, s)) != 0) {
		free(s->warm_name);
		s->warm_name = NULL;
		return nx_errf(err, -e, "cannot start a thread: %s", strerror(e));
	}
	s->have_warm = true;
	return 0;
}

void nx_server_stop(struct nx_server *s)
{
	if (!s)
		return;
	nx__lod_builds_stop(&s->builds); /* a cache build in progress ends now */
	/* The workers first: every job they run resumes its connection, and MHD must not
	 * stop with a connection suspended. Requests after this run on MHD's thread. */
	nx__workers_stop(&s->workers);
	if (s->ui_daemon)
		MHD_stop_daemon(s->ui_daemon);
	if (s->daemon)
		MHD_stop_daemon(s->daemon);
	if (s->listen_fd >= 0)
		close(s->listen_fd);
	if (s->ui_listen_fd >= 0)
		close(s->ui_listen_fd);
	if (s->have_warm)
		pthread_join(s->warm, NULL);
	nx__workers_release(&s->workers); /* after the daemons: nothing can post any more */
	free(s->warm_name);
	nx__wd_stop(&s->wd);
	nx__reg_release(&s->reg);
	if (s->have_slots)
		sem_destroy(&s->query_slots);
	for (int i = 0; i < 2; i++)
		if (s->wake[i] >= 0)
			close(s->wake[i]);
	nx__lod_builds_release(&s->builds);
	free(s->data_path);
	free(s->host);
	free(s);
}
