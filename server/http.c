/*
 * http.c: see http.h. RFC 9112 (message syntax) and RFC 9110 (semantics)
 * are the reference for the head; Git's gitprotocol-http for the routes.
 */
#include "http.h"
#include <string.h>
#include <strings.h>

struct refusal {
	int status;
	const char *reason;
};

#define REFUSE(st, why) ((struct refusal){ (st), (why) })
#define ACCEPTED REFUSE(0, NULL)

/* RFC 9110's tchar: the characters of a token (a method, a field name). */
static bool is_tchar(unsigned char c)
{
	if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9'))
		return true;
	return c && strchr("!#$%&'*+-.^_`|~", c);
}

static bool is_ows(unsigned char c)
{
	return c == ' ' || c == '\t';
}

int http_hex_value(int c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* A line of buf from at: its length without the CR LF or LF; false if incomplete. */
static bool next_line(const char *buf, size_t len, size_t at, size_t *line_len, size_t *next)
{
	const char *nl = memchr(buf + at, '\n', len - at);
	size_t n;
	if (!nl)
		return false;
	n = (size_t)(nl - (buf + at));
	*next = at + n + 1;
	if (n && buf[at + n - 1] == '\r')
		n--;
	*line_len = n;
	return true;
}

/* Copy a header value into a fixed field; false when it does not fit. */
static bool copy_value(char *dst, size_t size, const char *val, size_t n)
{
	if (n >= size)
		return false;
	memcpy(dst, val, n);
	dst[n] = '\0';
	return true;
}

static bool token_is(const char *s, size_t n, const char *word)
{
	return n == strlen(word) && !strncasecmp(s, word, n);
}

/* The origin-form or absolute-form target into req->path (decoded) and query. */
static struct refusal parse_target(const char *t, size_t n, struct http_request *req)
{
	size_t at = 0, out = 0, path_end;
	const char *q;

	if (n == 1 && t[0] == '*') {
		strcpy(req->path, "*");
		return ACCEPTED;
	}
	if (n > 7 && !strncasecmp(t, "http://", 7))
		at = 7;
	else if (n > 8 && !strncasecmp(t, "https://", 8))
		at = 8;
	if (at) {
		/* the authority is the Host header's business: skip it */
		const char *slash = memchr(t + at, '/', n - at);
		if (!slash) {
			strcpy(req->path, "/");
			return ACCEPTED;
		}
		at = (size_t)(slash - t);
	}
	if (t[at] != '/')
		return REFUSE(400, "request target is not a path");
	q = memchr(t + at, '?', n - at);
	path_end = q ? (size_t)(q - t) : n;
	for (size_t i = at; i < path_end; i++) {
		unsigned char c = (unsigned char)t[i];
		if (c == '%') {
			int hi, lo;
			if (path_end - i < 3)
				return REFUSE(400, "bad percent-encoding in the path");
			hi = http_hex_value((unsigned char)t[i + 1]);
			lo = http_hex_value((unsigned char)t[i + 2]);
			if (hi < 0 || lo < 0 || (!hi && !lo))
				return REFUSE(400, "bad percent-encoding in the path");
			c = (unsigned char)(hi << 4 | lo);
			i += 2;
		}
		req->path[out++] = (char)c;
	}
	req->path[out] = '\0';
	if (q) {
		size_t qn = n - path_end - 1;
		memcpy(req->query, q + 1, qn);
		req->query[qn] = '\0';
		req->has_query = true;
	}
	return ACCEPTED;
}

static struct refusal parse_request_line(const char *line, size_t n, struct http_request *req)
{
	const char *sp1 = memchr(line, ' ', n), *sp2, *version;
	size_t mlen, tlen, vlen;

	if (!sp1)
		return REFUSE(400, "malformed request line");
	mlen = (size_t)(sp1 - line);
	if (!mlen || mlen > 15)
		return REFUSE(mlen ? 501 : 400, "malformed method");
	for (size_t i = 0; i < mlen; i++)
		if (!is_tchar((unsigned char)line[i]))
			return REFUSE(400, "malformed method");
	sp2 = memchr(sp1 + 1, ' ', n - mlen - 1);
	if (!sp2)
		return REFUSE(400, "malformed request line");
	tlen = (size_t)(sp2 - (sp1 + 1));
	if (!tlen)
		return REFUSE(400, "empty request target");
	if (tlen > HTTP_TARGET_MAX)
		return REFUSE(414, "request target too long");
	for (size_t i = 0; i < tlen; i++) {
		unsigned char c = (unsigned char)sp1[1 + i];
		if (c <= 0x20 || c >= 0x7f)
			return REFUSE(400, "malformed request target");
	}
	version = sp2 + 1;
	vlen = n - (size_t)(version - line);
	if (vlen != 8 || strncmp(version, "HTTP/", 5) || version[6] != '.' ||
	    version[5] < '0' || version[5] > '9' || version[7] < '0' || version[7] > '9')
		return REFUSE(400, "malformed HTTP version");
	if (version[5] != '1')
		return REFUSE(505, "HTTP version not supported");
	req->minor = version[7] == '0' ? 0 : 1;
	if (token_is(line, mlen, "GET"))
		req->method = HTTP_GET;
	else if (token_is(line, mlen, "HEAD"))
		req->method = HTTP_HEAD;
	else if (token_is(line, mlen, "POST"))
		req->method = HTTP_POST;
	else
		req->method = HTTP_OTHER;
	/* methods are case-sensitive: "get" is another method */
	if (req->method != HTTP_OTHER && memcmp(line, req->method == HTTP_GET ? "GET" :
					       req->method == HTTP_HEAD ? "HEAD" : "POST", mlen))
		req->method = HTTP_OTHER;
	return parse_target(sp1 + 1, tlen, req);
}

static struct refusal parse_connection(const char *v, size_t n, struct http_request *req)
{
	size_t at = 0;
	while (at < n) {
		size_t end = at, s, e;
		while (end < n && v[end] != ',')
			end++;
		s = at;
		e = end;
		while (s < e && is_ows((unsigned char)v[s]))
			s++;
		while (e > s && is_ows((unsigned char)v[e - 1]))
			e--;
		if (token_is(v + s, e - s, "close"))
			req->keep_alive = false;
		else if (token_is(v + s, e - s, "keep-alive"))
			req->keep_alive = true;
		at = end + 1;
	}
	return ACCEPTED;
}

struct seen_headers {
	bool host, length, encoding, te;
};

static struct refusal parse_header(const char *line, size_t n, struct http_request *req,
				   struct seen_headers *seen)
{
	const char *colon = memchr(line, ':', n), *v;
	size_t name_len, vn;

	if (is_ows((unsigned char)line[0]))
		return REFUSE(400, "folded header line");
	if (!colon || colon == line)
		return REFUSE(400, "malformed header line");
	name_len = (size_t)(colon - line);
	for (size_t i = 0; i < name_len; i++)
		if (!is_tchar((unsigned char)line[i]))
			return REFUSE(400, "malformed header name");
	v = colon + 1;
	vn = n - name_len - 1;
	while (vn && is_ows((unsigned char)v[0])) {
		v++;
		vn--;
	}
	while (vn && is_ows((unsigned char)v[vn - 1]))
		vn--;
	for (size_t i = 0; i < vn; i++) {
		unsigned char c = (unsigned char)v[i];
		if ((c < 0x20 && c != '\t') || c == 0x7f)
			return REFUSE(400, "control character in a header value");
	}

	if (token_is(line, name_len, "Host")) {
		if (seen->host)
			return REFUSE(400, "more than one Host header");
		seen->host = true;
		if (!copy_value(req->host, sizeof(req->host), v, vn))
			return REFUSE(400, "Host header too long");
	} else if (token_is(line, name_len, "Content-Length")) {
		uint64_t val = 0;
		if (!vn || vn > 18)
			return REFUSE(400, "malformed Content-Length");
		for (size_t i = 0; i < vn; i++) {
			if (v[i] < '0' || v[i] > '9')
				return REFUSE(400, "malformed Content-Length");
			val = val * 10 + (uint64_t)(v[i] - '0');
		}
		if (seen->length && val != req->content_length)
			return REFUSE(400, "conflicting Content-Length headers");
		seen->length = true;
		req->has_length = true;
		req->content_length = val;
	} else if (token_is(line, name_len, "Transfer-Encoding")) {
		if (seen->te)
			return REFUSE(400, "more than one Transfer-Encoding header");
		seen->te = true;
		if (!token_is(v, vn, "chunked"))
			return REFUSE(501, "transfer coding not implemented");
		req->chunked = true;
	} else if (token_is(line, name_len, "Content-Encoding")) {
		if (seen->encoding)
			return REFUSE(400, "more than one Content-Encoding header");
		seen->encoding = true;
		if (token_is(v, vn, "gzip") || token_is(v, vn, "x-gzip"))
			req->gzip = true;
		else if (!token_is(v, vn, "identity"))
			return REFUSE(415, "content coding not supported");
	} else if (token_is(line, name_len, "Connection")) {
		return parse_connection(v, vn, req);
	} else if (token_is(line, name_len, "Expect")) {
		if (!token_is(v, vn, "100-continue"))
			return REFUSE(417, "expectation not supported");
		req->expect_continue = true;
	} else if (token_is(line, name_len, "Git-Protocol")) {
		if (!copy_value(req->git_protocol, sizeof(req->git_protocol), v, vn))
			return REFUSE(431, "Git-Protocol header too long");
	} else if (token_is(line, name_len, "Authorization")) {
		if (!copy_value(req->authorization, sizeof(req->authorization), v, vn))
			return REFUSE(431, "Authorization header too long");
	} else if (token_is(line, name_len, "Content-Type")) {
		/* compared whole with the type a service takes: a cut one never matches */
		size_t keep = vn < sizeof(req->content_type) ? vn : sizeof(req->content_type) - 1;
		copy_value(req->content_type, sizeof(req->content_type), v, keep);
	} else if (token_is(line, name_len, "User-Agent")) {
		/* only logged: a long one is cut, not refused */
		size_t keep = vn < sizeof(req->user_agent) ? vn : sizeof(req->user_agent) - 1;
		copy_value(req->user_agent, sizeof(req->user_agent), v, keep);
	}
	return ACCEPTED;
}

enum http_parse_result http_parse_head(const char *buf, size_t len, struct http_request *req,
				       size_t *head_len, int *status, const char **reason)
{
	struct seen_headers seen = { 0 };
	struct refusal r;
	size_t at = 0, line_len, next, scan = len < HTTP_HEAD_MAX ? len : HTTP_HEAD_MAX;
	bool have_request_line = false;

	memset(req, 0, sizeof(*req));
	*status = 0;
	*reason = NULL;
	/* empty lines before the request line are ignored (RFC 9112, 2.2) */
	for (;;) {
		if (!next_line(buf, scan, at, &line_len, &next))
			goto incomplete;
		if (line_len)
			break;
		at = next;
	}
	r = parse_request_line(buf + at, line_len, req);
	if (r.status)
		goto refused;
	have_request_line = true;
	req->keep_alive = req->minor >= 1;
	at = next;
	for (;;) {
		if (!next_line(buf, scan, at, &line_len, &next))
			goto incomplete;
		if (!line_len)
			break;
		if (++req->nr_headers > HTTP_HEADERS_MAX) {
			r = REFUSE(431, "too many header lines");
			goto refused;
		}
		r = parse_header(buf + at, line_len, req, &seen);
		if (r.status)
			goto refused;
		at = next;
	}
	if (req->chunked && req->has_length) {
		r = REFUSE(400, "both Content-Length and Transfer-Encoding");
		goto refused;
	}
	if (req->minor >= 1 && !seen.host) {
		r = REFUSE(400, "no Host header");
		goto refused;
	}
	*head_len = next;
	return HTTP_PARSE_DONE;

incomplete:
	if (len < HTTP_HEAD_MAX)
		return HTTP_PARSE_MORE;
	/* a request line that does not end within the bound is a long target */
	r = have_request_line ? REFUSE(431, "request head too large")
			      : REFUSE(414, "request target too long");
refused:
	*status = r.status;
	*reason = r.reason;
	return HTTP_PARSE_REFUSED;
}

static const struct {
	const char *name;
	enum http_service service;
} services[] = {
	{ "git-upload-pack", HTTP_SERVICE_UPLOAD_PACK },
	{ "git-receive-pack", HTTP_SERVICE_RECEIVE_PACK },
	{ "git-upload-archive", HTTP_SERVICE_UPLOAD_ARCHIVE },
};

const char *http_service_name(enum http_service service)
{
	for (size_t i = 0; i < sizeof(services) / sizeof(services[0]); i++)
		if (services[i].service == service)
			return services[i].name;
	return "";
}

static enum http_service service_named(const char *s, size_t n)
{
	for (size_t i = 0; i < sizeof(services) / sizeof(services[0]); i++)
		if (strlen(services[i].name) == n && !memcmp(services[i].name, s, n))
			return services[i].service;
	return HTTP_SERVICE_NONE;
}

/* The value of "service=" in a query; HTTP_SERVICE_NONE when absent or unknown. */
static enum http_service query_service(const char *q)
{
	while (*q) {
		const char *amp = strchr(q, '&');
		size_t n = amp ? (size_t)(amp - q) : strlen(q);
		if (n > 8 && !memcmp(q, "service=", 8))
			return service_named(q + 8, n - 8);
		if (!amp)
			break;
		q = amp + 1;
	}
	return HTTP_SERVICE_NONE;
}

/* Whether path[0..n) is "/seg/seg..." with no empty, "." or ".." segment. */
static bool safe_repo_path(const char *path, size_t n)
{
	size_t at = 0;
	if (!n || path[0] != '/')
		return false;
	while (at < n) {
		size_t start = at + 1, end = start;
		while (end < n && path[end] != '/')
			end++;
		if (end == start || (end - start == 1 && path[start] == '.') ||
		    (end - start == 2 && path[start] == '.' && path[start + 1] == '.'))
			return false;
		for (size_t i = start; i < end; i++)
			if (!path[i] || path[i] == '\\')
				return false;
		at = end;
	}
	return true;
}

static bool strip_suffix(const char *path, const char *suffix, size_t *repo_len)
{
	size_t n = strlen(path), s = strlen(suffix);
	if (n <= s || strcmp(path + n - s, suffix))
		return false;
	*repo_len = n - s;
	return true;
}

void http_route(const struct http_request *req, struct http_route *route)
{
	size_t repo_len;
	bool get = req->method == HTTP_GET || req->method == HTTP_HEAD;

	memset(route, 0, sizeof(*route));
	if (get && !strcmp(req->path, "/metrics")) {
		route->kind = HTTP_ROUTE_METRICS;
		return;
	}
	if (get && strip_suffix(req->path, "/info/refs", &repo_len)) {
		route->service = req->has_query ? query_service(req->query) : HTTP_SERVICE_NONE;
		if (route->service == HTTP_SERVICE_NONE)
			return;
		route->kind = HTTP_ROUTE_INFO_REFS;
	} else if (req->method == HTTP_POST) {
		const char *slash = strrchr(req->path, '/');
		if (!slash || (route->service = service_named(slash + 1, strlen(slash + 1))) ==
			      HTTP_SERVICE_NONE)
			return;
		repo_len = (size_t)(slash - req->path);
		route->kind = HTTP_ROUTE_SERVICE;
	} else {
		return;
	}
	if (!safe_repo_path(req->path, repo_len)) {
		route->kind = HTTP_ROUTE_NONE;
		route->service = HTTP_SERVICE_NONE;
		return;
	}
	memcpy(route->repo, req->path + 1, repo_len - 1);
	route->repo[repo_len - 1] = '\0';
}

const char *http_status_text(int status)
{
	switch (status) {
	case 100: return "Continue";
	case 200: return "OK";
	case 400: return "Bad Request";
	case 401: return "Unauthorized";
	case 403: return "Forbidden";
	case 404: return "Not Found";
	case 405: return "Method Not Allowed";
	case 408: return "Request Timeout";
	case 411: return "Length Required";
	case 413: return "Content Too Large";
	case 414: return "URI Too Long";
	case 415: return "Unsupported Media Type";
	case 417: return "Expectation Failed";
	case 429: return "Too Many Requests";
	case 431: return "Request Header Fields Too Large";
	case 500: return "Internal Server Error";
	case 501: return "Not Implemented";
	case 503: return "Service Unavailable";
	case 505: return "HTTP Version Not Supported";
	default: return "Unknown";
	}
}
