/*
 * git-request.c: see git-request.h.
 */
#include "git-request.h"
#include <string.h>

static bool copy_field(char *dst, size_t size, const char *src, size_t n)
{
	if (n >= size)
		return false;
	memcpy(dst, src, n);
	dst[n] = '\0';
	return true;
}

/* Printable ASCII only: these end up in logs and in GIT_PROTOCOL. */
static bool printable(const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if ((unsigned char)s[i] < 0x21 || (unsigned char)s[i] > 0x7e)
			return false;
	return true;
}

enum git_request_result git_request_parse(const char *payload, size_t len,
					  struct git_request *req, const char **reason)
{
	const char *end = payload + len, *nul, *sp, *p;
	struct http_request fake;
	struct http_route route;
	size_t n;

	memset(req, 0, sizeof(*req));
	*reason = NULL;
	nul = memchr(payload, '\0', len);
	if (!nul)
		nul = end;
	sp = memchr(payload, ' ', (size_t)(nul - payload));
	if (!sp || sp - payload < 4 || sp + 1 >= nul || memcmp(payload, "git-", 4) ||
	    !printable(payload, (size_t)(sp - payload))) {
		*reason = "bad request line";
		return GIT_REQUEST_BAD;
	}
	n = (size_t)(sp - payload);
	copy_field(req->service_name, sizeof(req->service_name), payload,
		   n < sizeof(req->service_name) ? n : sizeof(req->service_name) - 1);
	if (n == 15 && !memcmp(payload, "git-upload-pack", 15))
		req->service = HTTP_SERVICE_UPLOAD_PACK;
	else if (n == 16 && !memcmp(payload, "git-receive-pack", 16))
		req->service = HTTP_SERVICE_RECEIVE_PACK;
	else if (n == 18 && !memcmp(payload, "git-upload-archive", 18))
		req->service = HTTP_SERVICE_UPLOAD_ARCHIVE;
	/* a trailing LF after the path (old clients sent one) is no part of it */
	n = (size_t)(nul - sp - 1);
	if (n && sp[n] == '\n')
		n--;
	if (!n || !copy_field(req->path, sizeof(req->path), sp + 1, n) ||
	    memchr(req->path, '\n', n)) {
		*reason = "bad path";
		return GIT_REQUEST_BAD;
	}
	/* host=<host>[:port], then an empty field, then the extra parameters */
	p = nul < end ? nul + 1 : end;
	if (end - p >= 5 && !memcmp(p, "host=", 5)) {
		const char *e = memchr(p, '\0', (size_t)(end - p)), *colon;
		size_t hn;
		if (!e) {
			*reason = "unterminated host";
			return GIT_REQUEST_BAD;
		}
		hn = (size_t)(e - p - 5);
		/* the port goes: "host:port", "[v6]:port" */
		if (hn && p[5] == '[') {
			const char *close = memchr(p + 5, ']', hn);
			if (close)
				hn = (size_t)(close - p - 5) + 1;
		} else if ((colon = memchr(p + 5, ':', hn))) {
			hn = (size_t)(colon - p - 5);
		}
		if (!printable(p + 5, hn) || !copy_field(req->host, sizeof(req->host), p + 5, hn)) {
			*reason = "bad host";
			return GIT_REQUEST_BAD;
		}
		p = e + 1;
	}
	if (p < end) {
		if (*p) {
			*reason = "extra parameters must follow an empty field";
			return GIT_REQUEST_BAD;
		}
		p++;
	}
	while (p < end) {
		const char *e = memchr(p, '\0', (size_t)(end - p));
		size_t pn = e ? (size_t)(e - p) : (size_t)(end - p);
		size_t at = strlen(req->params);
		if (pn) {
			if (!printable(p, pn) || at + 1 + pn > GIT_REQUEST_PARAMS_MAX) {
				*reason = "bad extra parameter";
				return GIT_REQUEST_BAD;
			}
			if (at)
				req->params[at++] = ':';
			memcpy(req->params + at, p, pn);
			req->params[at + pn] = '\0';
		}
		p += pn + 1;
	}
	/* the same rules as an HTTP path: no way out of the base path */
	if (req->path[0] != '/' || strlen(req->path) + 10 > HTTP_TARGET_MAX) {
		*reason = "bad path";
		return GIT_REQUEST_NO_REPO;
	}
	memset(&fake, 0, sizeof(fake));
	fake.method = HTTP_GET;
	memcpy(fake.path, req->path, strlen(req->path));
	memcpy(fake.path + strlen(req->path), "/info/refs", 11);
	memcpy(fake.query, "service=git-upload-pack", 24);
	fake.has_query = true;
	http_route(&fake, &route);
	if (route.kind != HTTP_ROUTE_INFO_REFS) {
		*reason = "bad path";
		return GIT_REQUEST_NO_REPO;
	}
	memcpy(req->repo, route.repo, strlen(route.repo) + 1);
	return GIT_REQUEST_OK;
}
