/*
 * http.h: the head of an HTTP/1.x request, parsed for gitpack serve, and
 * the route Git's smart HTTP protocol gives its target.
 *
 * Self-contained (libc only), like ewah/: the listeners of server/ use it
 * on bytes from the network, so every bound is fixed here and checked
 * before anything is copied.
 *
 * The head is parsed from a buffer that holds what has arrived so far:
 * http_parse_head() says whether it is complete, needs more bytes, or is
 * refused with the status to answer. Parsing again from the start with
 * more bytes gives the same answer as parsing all of them at once (the
 * caller need not remember where it stopped). Line ends may be CRLF or a
 * bare LF (RFC 9112 lets a recipient accept either).
 */
#ifndef GP_SERVER_HTTP_H
#define GP_SERVER_HTTP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Bounds: a head larger than this is refused (431, or 414 for the target). */
#define HTTP_HEAD_MAX 16384
#define HTTP_TARGET_MAX 8192
#define HTTP_HEADERS_MAX 100

enum http_method {
	HTTP_GET,
	HTTP_HEAD,
	HTTP_POST,
	HTTP_OTHER,	/* a well-formed method the server does not serve (405) */
};

struct http_request {
	enum http_method method;
	int minor;			/* HTTP/1.<minor>: 0 or 1 */
	/* The target's path, percent-decoded, and its query, raw; NUL-terminated. */
	char path[HTTP_TARGET_MAX + 1];
	char query[HTTP_TARGET_MAX + 1];
	bool has_query;
	/* The body: a length, chunked, or none (a request without either has none). */
	bool has_length, chunked;
	uint64_t content_length;
	bool gzip;			/* Content-Encoding: gzip (or x-gzip) */
	bool keep_alive;		/* from the version and Connection */
	bool expect_continue;		/* Expect: 100-continue */
	/* Header values Git's protocol and the server use; empty when absent. */
	char host[256];
	char git_protocol[1024];
	char authorization[1024];
	char user_agent[256];
	char content_type[128];		/* cut when longer */
	size_t nr_headers;
};

enum http_parse_result {
	HTTP_PARSE_DONE = 1,		/* *head_len bytes are the head */
	HTTP_PARSE_MORE = 0,		/* the head is not complete yet */
	HTTP_PARSE_REFUSED = -1,	/* *status says why (400, 414, 415, 417, 431, 501, 505) */
};

/*
 * Parse the head at buf[0..len). On HTTP_PARSE_DONE, req is filled and
 * *head_len is where the body starts; on HTTP_PARSE_REFUSED, *status
 * is the status to answer and *reason a short static text for the log.
 */
enum http_parse_result http_parse_head(const char *buf, size_t len, struct http_request *req,
				       size_t *head_len, int *status, const char **reason);

enum http_route_kind {
	HTTP_ROUTE_NONE,		/* nothing gitpack serves: 404 */
	HTTP_ROUTE_INFO_REFS,		/* GET <repo>/info/refs?service=<service> */
	HTTP_ROUTE_SERVICE,		/* POST <repo>/<service> */
	HTTP_ROUTE_METRICS,		/* GET /metrics */
};

enum http_service {
	HTTP_SERVICE_NONE,
	HTTP_SERVICE_UPLOAD_PACK,	/* git-upload-pack */
	HTTP_SERVICE_RECEIVE_PACK,	/* git-receive-pack */
	HTTP_SERVICE_UPLOAD_ARCHIVE,	/* git-upload-archive */
};

struct http_route {
	enum http_route_kind kind;
	enum http_service service;
	/*
	 * The repository's path relative to the base path, without the
	 * leading '/': segments that are never empty, "." or "..", and hold
	 * no NUL; whether it names a repository is the server's to find.
	 */
	char repo[HTTP_TARGET_MAX + 1];
};

/*
 * The route of a parsed request. A target Git's protocol does not name,
 * or one whose path could leave the base path, is HTTP_ROUTE_NONE.
 * "GET <repo>/info/refs" without a service (the dumb protocol) is too.
 */
void http_route(const struct http_request *req, struct http_route *route);

/* The service's name as Git's protocol spells it ("git-upload-pack"). */
const char *http_service_name(enum http_service service);

/* A hex digit's value (either case), -1 for another byte: %-escapes, chunk sizes. */
int http_hex_value(int c);

/* The reason phrase of a status this server sends ("Not Found"). */
const char *http_status_text(int status);

#endif
