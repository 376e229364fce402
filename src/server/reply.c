/* SPDX-License-Identifier: MIT
 * reply.c: response helpers. Every reply is JSON (except file downloads), carries
 * nosniff and no-store headers, and never any CORS header: browsers on other
 * origins must not be able to read what the server returns. */
#include "common/compat.h"
#include "server/http.h"
#include "common/json_writer.h"
#include "common/log.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

enum MHD_Result nx__reply_take(struct nx_req *rq, unsigned status, struct MHD_Response *resp,
			       uint64_t size)
{
	if (!resp)
		return MHD_NO;
	if (rq->resp) /* a handler replies once; the first reply stands */
		MHD_destroy_response(resp);
	else
		rq->resp = resp;
	rq->answered = true;
	if (!rq->status) {
		rq->status = status;
		rq->bytes = size;
	}
	return MHD_YES;
}

enum MHD_Result nx__reply_flush(struct nx_req *rq, enum MHD_Result ret)
{
	if (!rq->resp)
		return ret;
	ret = MHD_queue_response(rq->conn, rq->status, rq->resp);
	MHD_destroy_response(rq->resp);
	rq->resp = NULL;
	return ret;
}

static enum MHD_Result queue(struct nx_req *rq, unsigned status, struct MHD_Response *resp,
			     const char *ctype, uint64_t size)
{
	if (!resp)
		return MHD_NO;
	MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, ctype);
	MHD_add_response_header(resp, "X-Content-Type-Options", "nosniff");
	MHD_add_response_header(resp, MHD_HTTP_HEADER_CACHE_CONTROL, "no-store");
	if (rq->allow)
		MHD_add_response_header(resp, MHD_HTTP_HEADER_ALLOW, rq->allow);
	return nx__reply_take(rq, status, resp, size);
}

enum MHD_Result nx__reply(struct nx_req *rq, unsigned status, const char *ctype,
			  struct nx_strbuf *body)
{
	struct MHD_Response *resp;
	size_t len = 0;
	char *buf = nx_strbuf_detach(body, &len);

	if (!buf) {
		resp = MHD_create_response_from_buffer(0, (void *)"", MHD_RESPMEM_PERSISTENT);
	} else {
		resp = MHD_create_response_from_buffer(len, buf, MHD_RESPMEM_MUST_FREE);
		if (!resp)
			free(buf);
	}
	return queue(rq, status, resp, ctype, len);
}

enum MHD_Result nx__reply_json(struct nx_req *rq, unsigned status, struct nx_strbuf *body)
{
	nx_strbuf_addch(body, '\n');
	return nx__reply(rq, status, "application/json", body);
}

enum MHD_Result nx__reply_error(struct nx_req *rq, unsigned status, const char *code,
				const char *fmt, ...)
{
	struct nx_strbuf sb = NX_STRBUF_INIT;
	char msg[4096];
	struct nx_jw jw;
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	nx_jw_init(&jw, &sb, false);
	nx_jw_object_begin(&jw);
	nx_jw_key(&jw, "error");
	nx_jw_object_begin(&jw);
	nx_jw_key(&jw, "code");
	nx_jw_string(&jw, code);
	nx_jw_key(&jw, "status");
	nx_jw_int(&jw, status);
	nx_jw_key(&jw, "message");
	nx_jw_string(&jw, msg);
	nx_jw_object_end(&jw);
	nx_jw_object_end(&jw);
	if (status >= 500 && !rq->s->o.quiet) /* the server's fault or its data's: say why */
		nx_log(NX_LOG_ERROR, "neuron-explorer api: %u %s: %.*s", status, code,
		       (int)strcspn(msg, "\n"), msg);
	return nx__reply_json(rq, status, &sb);
}

enum MHD_Result nx__reply_nx_err(struct nx_req *rq, const struct nx_err *err)
{
	const char *msg = err->msg[0] ? err->msg : nx_strerror(err->code);

	switch (err->code) {
	case NX_EUSAGE:
		return nx__reply_error(rq, 400, "bad_request", "%s", msg);
	case NX_ENOTFOUND:
		return nx__reply_error(rq, 404, "not_found", "%s", msg);
	case -EACCES:
		return nx__reply_error(rq, 403, "forbidden", "%s", msg);
	case -ETIMEDOUT:
		return nx__reply_error(rq, 504, "query_timeout", "%s", msg);
	case -ENOMEM:
		return nx__reply_error(rq, 503, "memory_limit", "%s", msg);
	case NX_EDB:
		return nx__reply_error(rq, 500, "database_error", "%s", msg);
	case NX_ECORRUPT:
		return nx__reply_error(rq, 500, "table_unreadable", "%s", msg);
	default:
		return nx__reply_error(rq, 500, "internal_error", "%s", msg);
	}
}

enum MHD_Result nx__reply_stream(struct nx_req *rq, unsigned status, const char *ctype,
				 MHD_ContentReaderCallback reader, void *cls,
				 MHD_ContentReaderFreeCallback release)
{
	struct MHD_Response *resp = MHD_create_response_from_callback(MHD_SIZE_UNKNOWN, 64 * 1024,
								      reader, cls, release);

	if (!resp) {
		release(cls);
		return nx__reply_error(rq, 500, "internal_error", "cannot stream the reply");
	}
	return queue(rq, status, resp, ctype, 0);
}

enum MHD_Result nx__reply_fd(struct nx_req *rq, int fd, uint64_t size, const char *ctype,
			     const char *filename)
{
	struct MHD_Response *resp = MHD_create_response_from_fd64(size, fd);
	char disp[512], name[256];
	size_t i;

	if (!resp) {
		close(fd);
		return nx__reply_error(rq, 500, "internal_error", "cannot stream the file");
	}
	for (i = 0; filename[i] && i + 1 < sizeof(name); i++)
		name[i] = (filename[i] == '"' || filename[i] == '\\') ? '_' : filename[i];
	name[i] = '\0';
	snprintf(disp, sizeof(disp), "attachment; filename=\"%s\"", name);
	MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_DISPOSITION, disp);
	return queue(rq, 200, resp, ctype, size);
}
