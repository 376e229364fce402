/* SPDX-License-Identifier: MIT
 * dispatch.h: the MHD callbacks that drive every connection and request (dispatch.c). */
#ifndef NX_SERVER_DISPATCH_H
#define NX_SERVER_DISPATCH_H

#include "common/compat.h"

#include <microhttpd.h>

/* MHD_AccessHandlerCallback; cls is the struct nx_server. */
enum MHD_Result nx__on_request(void *cls, struct MHD_Connection *conn, const char *url,
			       const char *method, const char *version, const char *upload_data,
			       size_t *upload_data_size, void **con_cls);
/* MHD_RequestCompletedCallback: access log and cleanup. */
void nx__on_completed(void *cls, struct MHD_Connection *conn, void **con_cls,
		      enum MHD_RequestTerminationCode toe);
/* MHD_NotifyConnectionCallback: arms and disarms the request deadline of each
 * connection (see struct nx_conn in http.h). */
void nx__on_connection(void *cls, struct MHD_Connection *conn, void **socket_context,
		       enum MHD_ConnectionNotificationCode code);

/* MHD_OPTION_UNESCAPE_CALLBACK: MHD's own decoding of %HH in the URL and its
 * arguments, remembering a %00 for nx__on_request to refuse: C strings would end there
 * (".../fs/Summary.parquet%00.txt" would name Summary.parquet). */
size_t nx__unescape(void *cls, struct MHD_Connection *conn, char *s);

#endif
