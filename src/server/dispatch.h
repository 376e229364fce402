/* SPDX-License-Identifier: MIT
 * dispatch.h: the two MHD callbacks that drive every request (dispatch.c). */
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

#endif
