/*
 * git-request.h: the one request line a git:// connection opens with
 * (gitprotocol-pack "Git Transport"):
 *
 *   <service> SP <path> NUL [host=<host>[:<port>] NUL [NUL (<param> NUL)*]]
 *
 * in a single pkt-line, whose payload this parses. Self-contained like
 * http.h, whose route rules it applies to the path, so that a git://
 * path can reach nothing an HTTP one cannot.
 */
#ifndef GP_SERVER_GIT_REQUEST_H
#define GP_SERVER_GIT_REQUEST_H

#include "http.h"

/* The extra parameters, joined with ':' as GIT_PROTOCOL joins them. */
#define GIT_REQUEST_PARAMS_MAX 1024

struct git_request {
	enum http_service service;         /* HTTP_SERVICE_NONE: one Git does not name */
	char service_name[32];             /* as sent, cut */
	char path[HTTP_TARGET_MAX + 1];    /* as sent: "/project.git" */
	char host[256];                    /* host=, without the port; "" when absent */
	char params[GIT_REQUEST_PARAMS_MAX + 1];
	/* The repository, relative, as http_route() gives it: safe segments. */
	char repo[HTTP_TARGET_MAX + 1];
};

enum git_request_result {
	GIT_REQUEST_OK = 0,
	GIT_REQUEST_BAD = -1,     /* malformed: no service word, no path, a bad host or parameter */
	GIT_REQUEST_NO_REPO = -2, /* well-formed, but the path can name no repository */
};

/*
 * Parse payload[0..len) (the pkt-line's payload, its length header
 * taken off). On GIT_REQUEST_OK every field is set; otherwise *reason is
 * a short static text. A service Git does not name parses (the caller
 * answers "service not enabled"). Never reads past len.
 */
enum git_request_result git_request_parse(const char *payload, size_t len,
					  struct git_request *req, const char **reason);

#endif
