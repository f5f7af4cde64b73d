/*
 * test-http.c: test-tool http, for server/http.h.
 *
 *   test-tool http parse [--chunk=<n>]
 *	Parse the request head on stdin. With --chunk, hand the parser
 *	the first n bytes, then 2n, ... as if they arrived so (each call
 *	parses from the start): every answer before the last must be
 *	"more", and the last the same as for all the bytes at once. Prints
 *	"refused <status> <reason>", "more", or the request: one
 *	"<field> <value>" line each (method, minor, path, query, length,
 *	chunked, gzip, keep-alive, expect-continue, host, git-protocol,
 *	authorization, user-agent, headers, head-length), then the route:
 *	"route <none|info-refs|service|metrics> <service> <repo>".
 *
 *   test-tool http body [--chunk=<n>] [--max=<n>] [--max-wire=<n>] [--out=<file>]
 *	Parse the request head on stdin (all of it at once; it must be
 *	done), then feed the bytes after it to server/body.h's reader, n
 *	at a time (default: all at once) until it answers done or refused.
 *	--max is max_decoded (default 1 MiB), --max-wire sets max_wire
 *	after init. Prints "done", "more" or "refused <status> <reason>";
 *	unless refused, "used <n>" (the body's bytes on the wire) and
 *	"rest <n>" (the bytes after it); then "length <n>", the decoded
 *	length. --out writes the decoded body to <file>.
 *
 *   test-tool http git-request
 *	Parse stdin as the payload of a git:// request line
 *	(server/git-request.h). Prints "bad <reason>", "no-repo <reason>",
 *	or "service <name> <kind>", "path", "host", "params", "repo" lines.
 */
#include "../../server/body.h"
#include "../../server/git-request.h"
#include "../../server/http.h"
#include "../../strbuf.h"
#include "test-tool.h"
#include <errno.h>
#include <inttypes.h>

static const char *method_name(enum http_method m)
{
	switch (m) {
	case HTTP_GET: return "GET";
	case HTTP_HEAD: return "HEAD";
	case HTTP_POST: return "POST";
	default: return "other";
	}
}

static const char *route_name(enum http_route_kind k)
{
	switch (k) {
	case HTTP_ROUTE_INFO_REFS: return "info-refs";
	case HTTP_ROUTE_SERVICE: return "service";
	case HTTP_ROUTE_METRICS: return "metrics";
	default: return "none";
	}
}

static void print_request(const struct http_request *req, size_t head_len)
{
	struct http_route route;
	const char *service;
	printf("method %s\nminor %d\npath %s\n", method_name(req->method), req->minor, req->path);
	if (req->has_query)
		printf("query %s\n", req->query);
	if (req->has_length)
		printf("length %" PRIu64 "\n", req->content_length);
	printf("chunked %d\ngzip %d\nkeep-alive %d\nexpect-continue %d\n", req->chunked, req->gzip,
	       req->keep_alive, req->expect_continue);
	printf("host %s\ngit-protocol %s\nauthorization %s\nuser-agent %s\n", req->host,
	       req->git_protocol, req->authorization, req->user_agent);
	printf("headers %zu\nhead-length %zu\n", req->nr_headers, head_len);
	http_route(req, &route);
	service = http_service_name(route.service);
	printf("route %s %s %s\n", route_name(route.kind), *service ? service : "-",
	       *route.repo ? route.repo : "-");
}

static int usage_body(void)
{
	fprintf(stderr, "usage: test-tool http body [--chunk=<n>] [--max=<n>] [--max-wire=<n>] [--out=<file>]\n");
	return 129;
}

static bool size_option(const char *arg, const char *name, uint64_t *out)
{
	size_t n = strlen(name);
	char *end;
	if (strncmp(arg, name, n) || arg[n] != '=' || !arg[n + 1])
		return false;
	errno = 0;
	*out = strtoull(arg + n + 1, &end, 10);
	return !*end && !errno;
}

static int cmd_body(int argc, const char **argv)
{
	struct strbuf in = STRBUF_INIT;
	struct http_request *req = xmalloc(sizeof(*req));
	struct http_body body;
	uint64_t chunk = 0, max = 1 << 20, max_wire = 0;
	const char *out = NULL, *reason = NULL;
	size_t head_len = 0, at;
	enum http_body_result res = HTTP_BODY_MORE;
	int status = 0, ret = 0;

	for (int i = 2; i < argc; i++) {
		if (!strncmp(argv[i], "--out=", 6))
			out = argv[i] + 6;
		else if (!size_option(argv[i], "--chunk", &chunk) && !size_option(argv[i], "--max", &max) &&
			 !size_option(argv[i], "--max-wire", &max_wire))
			return usage_body();
	}
	if (strbuf_read_fd(&in, 0, 4096) < 0) {
		perror("read");
		return 1;
	}
	if (http_parse_head(in.buf, in.len, req, &head_len, &status, &reason) != HTTP_PARSE_DONE) {
		printf("head not done\n");
		ret = 1;
		goto out;
	}
	http_body_init(&body, req, (size_t)max);
	if (max_wire)
		body.max_wire = max_wire;
	at = head_len;
	do {
		size_t n = in.len - at, used = 0;
		if (chunk && n > chunk)
			n = (size_t)chunk;
		res = http_body_feed(&body, in.buf + at, n, &used, &status, &reason);
		if (used > n || (res == HTTP_BODY_MORE && used != n)) {
			printf("fed %zu, used %zu, answer %d\n", n, used, (int)res);
			ret = 1;
			break;
		}
		at += used;
	} while (res == HTTP_BODY_MORE && at < in.len);
	if (res == HTTP_BODY_REFUSED)
		printf("refused %d %s\n", status, reason);
	else
		printf("%s\nused %zu\nrest %zu\n", res == HTTP_BODY_DONE ? "done" : "more",
		       at - head_len, in.len - at);
	printf("length %zu\n", body.len);
	if (out) {
		FILE *f = fopen(out, "wb");
		if (!f || (body.len && fwrite(body.data, 1, body.len, f) != body.len) || fclose(f)) {
			perror(out);
			ret = 1;
		}
	}
	http_body_release(&body);
out:
	free(req);
	strbuf_release(&in);
	return ret;
}

static int cmd_git_request(void)
{
	static const char *const kinds[] = { "none", "upload-pack", "receive-pack",
					     "upload-archive" };
	struct strbuf in = STRBUF_INIT;
	struct git_request *req = xmalloc(sizeof(*req));
	const char *reason;
	enum git_request_result r;

	if (strbuf_read_fd(&in, 0, 4096) < 0) {
		perror("read");
		return 1;
	}
	r = git_request_parse(in.buf, in.len, req, &reason);
	if (r == GIT_REQUEST_BAD)
		printf("bad %s\n", reason);
	else if (r == GIT_REQUEST_NO_REPO)
		printf("no-repo %s\n", reason);
	else
		printf("service %s %s\npath %s\nhost %s\nparams %s\nrepo %s\n", req->service_name,
		       kinds[req->service], req->path, req->host, req->params, req->repo);
	free(req);
	strbuf_release(&in);
	return 0;
}

int cmd__http(int argc, const char **argv)
{
	struct strbuf in = STRBUF_INIT;
	struct http_request *req = xmalloc(sizeof(*req));
	size_t chunk = 0, head_len = 0;
	enum http_parse_result res = HTTP_PARSE_MORE;
	const char *reason = NULL;
	int status = 0;

	if (argc == 2 && !strcmp(argv[1], "git-request")) {
		free(req);
		return cmd_git_request();
	}
	if (argc >= 2 && !strcmp(argv[1], "body")) {
		free(req);
		return cmd_body(argc, argv);
	}
	if (argc < 2 || strcmp(argv[1], "parse") || argc > 3 ||
	    (argc == 3 && (strncmp(argv[2], "--chunk=", 8) || !(chunk = strtoul(argv[2] + 8, NULL, 10))))) {
		fprintf(stderr, "usage: test-tool http parse [--chunk=<n>]\n"
				"   or: test-tool http body [<options>]\n");
		return 129;
	}
	if (strbuf_read_fd(&in, 0, 4096) < 0) {
		perror("read");
		return 1;
	}
	if (chunk) {
		for (size_t len = chunk; len < in.len; len += chunk) {
			res = http_parse_head(in.buf, len, req, &head_len, &status, &reason);
			if (res == HTTP_PARSE_DONE && head_len <= len && head_len < in.len)
				break;	/* a body follows: the head was whole before the end */
			if (res == HTTP_PARSE_REFUSED)
				break;
		}
		if (res == HTTP_PARSE_MORE || res == HTTP_PARSE_DONE) {
			enum http_parse_result whole;
			size_t whole_len = 0;
			whole = http_parse_head(in.buf, in.len, req, &whole_len, &status, &reason);
			if (res == HTTP_PARSE_DONE && (whole != res || whole_len != head_len)) {
				printf("incremental parse disagrees with the whole\n");
				return 1;
			}
			res = whole;
			head_len = whole_len;
		}
	} else {
		res = http_parse_head(in.buf, in.len, req, &head_len, &status, &reason);
	}
	if (res == HTTP_PARSE_REFUSED)
		printf("refused %d %s\n", status, reason);
	else if (res == HTTP_PARSE_MORE)
		printf("more\n");
	else
		print_request(req, head_len);
	free(req);
	strbuf_release(&in);
	return 0;
}
